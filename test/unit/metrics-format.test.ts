import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { createMetricsRegistry } from '../../src/shared/metrics.js';

/** A small checker of the text exposition format 0.0.4: returns samples, throws on a malformed line. */
function parseExposition(text: string): { types: Map<string, string>; samples: Array<{ name: string; labels: Record<string, string>; value: number }> } {
  assert.ok(text.endsWith('\n'), 'ends with a newline');
  const types = new Map<string, string>();
  const samples: Array<{ name: string; labels: Record<string, string>; value: number }> = [];
  for (const line of text.slice(0, -1).split('\n')) {
    let m = /^# (HELP|TYPE) ([a-zA-Z_:][a-zA-Z0-9_:]*) (.*)$/.exec(line);
    if (m) {
      if (m[1] === 'TYPE') {
        assert.match(m[3]!, /^(counter|gauge|histogram|summary|untyped)$/);
        assert.ok(!types.has(m[2]!), `one TYPE per metric: ${m[2]}`);
        types.set(m[2]!, m[3]!);
      }
      continue;
    }
    m = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{(.*)\})? (\S+)$/.exec(line);
    assert.ok(m, `malformed line: ${JSON.stringify(line)}`);
    const labels: Record<string, string> = {};
    if (m[3]) {
      const re = /([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\\n]|\\[\\"n])*)"(,|$)/gy;
      let lm: RegExpExecArray | null;
      let consumed = 0;
      while ((lm = re.exec(m[3])) !== null) {
        labels[lm[1]!] = lm[2]!.replace(/\\(["\\n])/g, (_, c: string) => (c === 'n' ? '\n' : c));
        consumed = re.lastIndex;
        if (lm[3] === '') break;
      }
      assert.equal(consumed, m[3].length, `label set parsed fully: ${m[3]}`);
    }
    const v = m[4] === '+Inf' ? Infinity : m[4] === '-Inf' ? -Infinity : Number(m[4]);
    assert.ok(!Number.isNaN(v) || m[4] === 'NaN', `value ${m[4]}`);
    samples.push({ name: m[1]!, labels, value: v });
  }
  return { types, samples };
}

describe('metrics', () => {
  test('counters, gauges, label escaping', async () => {
    const r = createMetricsRegistry();
    const c = r.counter('wmsbridge_records_total', 'Records settled\nby outcome \\ target', ['outcome', 'target']);
    c.inc({ outcome: 'created', target: 'Product' }, 3);
    c.inc({ outcome: 'rejected', target: 'a "quoted"\\ \nname' });
    const g = r.gauge('wmsbridge_queue_depth', 'Records waiting');
    g.set(5);
    g.dec(undefined, 2);
    const text = await r.render();
    const { types, samples } = parseExposition(text);
    assert.equal(types.get('wmsbridge_records_total'), 'counter');
    assert.equal(types.get('wmsbridge_queue_depth'), 'gauge');
    assert.ok(text.includes('# HELP wmsbridge_records_total Records settled\\nby outcome \\\\ target\n'));
    assert.deepEqual(samples.find((s) => s.labels.outcome === 'rejected')?.labels.target, 'a "quoted"\\ \nname');
    assert.equal(samples.find((s) => s.labels.outcome === 'created')?.value, 3);
    assert.equal(samples.find((s) => s.name === 'wmsbridge_queue_depth')?.value, 3);
    assert.throws(() => c.inc({ outcome: 'x', target: 'y' }, -1));
    assert.throws(() => c.inc({ bogus: 'x' }));
    assert.throws(() => r.counter('wmsbridge_records_total', 'dup'));
    assert.throws(() => r.counter('bad-name', 'x'));
  });

  test('histogram buckets are cumulative, with +Inf, _sum and _count', async () => {
    const r = createMetricsRegistry();
    const h = r.histogram('wmsbridge_request_seconds', 'WMS request duration', [0.1, 0.5, 1], ['method']);
    for (const v of [0.05, 0.2, 0.3, 0.7, 3]) h.observe(v, { method: 'POST' });
    const { types, samples } = parseExposition(await r.render());
    assert.equal(types.get('wmsbridge_request_seconds'), 'histogram');
    const buckets = samples.filter((s) => s.name === 'wmsbridge_request_seconds_bucket').map((s) => [s.labels.le, s.value]);
    assert.deepEqual(buckets, [
      ['0.1', 1],
      ['0.5', 3],
      ['1', 4],
      ['+Inf', 5],
    ]);
    assert.equal(samples.find((s) => s.name === 'wmsbridge_request_seconds_count')?.value, 5);
    assert.ok(Math.abs(samples.find((s) => s.name === 'wmsbridge_request_seconds_sum')!.value - 4.25) < 1e-9);
  });

  test('an unlabelled metric with no observations still renders', async () => {
    const r = createMetricsRegistry();
    r.counter('a_total', 'a');
    r.histogram('b_seconds', 'b', [1]);
    const { samples } = parseExposition(await r.render());
    assert.deepEqual(
      samples.map((s) => `${s.name}${s.labels.le ?? ''}=${s.value}`),
      ['a_total=0', 'b_seconds_bucket1=0', 'b_seconds_bucket+Inf=0', 'b_seconds_sum=0', 'b_seconds_count=0'],
    );
  });
});

test('watch metrics: inbox entries not taken are counted by kind', async () => {
  const { createRunMetrics } = await import('../../src/app/metrics.js');
  const m = createRunMetrics();
  m.recordRefused('symlink');
  m.recordRefused('symlink');
  m.recordRefused('name-encoding');
  const client = { requests: 0, retries: 0, refreshes: 0, authorizations: 0, failures: 0, latencyBucketsMs: [10], latencyCounts: [0, 0], latencySumMs: 0 };
  const text = await m.render({
    recordsByStatus: { pending: 0, sending: 0, sent: 0, rejected: 0, failed: 0, held: 0, in_doubt: 0 },
    filesByStatus: { claimed: 0, mapped: 0, done: 0, error: 0, duplicate: 0 },
    client,
    queued: 0,
  });
  assert.match(text, /^wmsbridge_intake_refused_total\{kind="symlink"\} 2$/m);
  assert.match(text, /^wmsbridge_intake_refused_total\{kind="name-encoding"\} 1$/m);
});
