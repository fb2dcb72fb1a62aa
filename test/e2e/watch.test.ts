/**
 * `wmsbridge watch` as a child process: a file written slowly is taken only once complete; a marker
 * channel waits for its .done file; /healthz and /metrics answer; a second process on the same state
 * folder is refused; SIGTERM in the middle of a large file leaves nothing half-done, and the next run
 * delivers the rest exactly once.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { appendFile, mkdir, readdir, readFile, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { ChildProcess } from 'node:child_process';
import { request } from 'undici';
import { makeTempDir } from '../helpers/tmp.js';
import { runCli, spawnCli } from '../helpers/cli.js';
import { startSandbox, sandboxCall, type Sandbox } from '../helpers/sandbox.js';
import type { RunSummary } from '../../src/outbox/types.js';
import { waitFor, watchLog, type LogLine, type LogWatch } from '../helpers/wait.js';

let sb: Sandbox;
let tmp: { dir: string; cleanup: () => Promise<void> };
let watch: ChildProcess | null = null;
let log: LogWatch;
/** the metrics URL watch printed when it started */
let metricsBase = '';
const stderrTail = (): string => log.tail().slice(-2000);

async function creations(prefix: string): Promise<Record<string, number>> {
  const c = (await sandboxCall(sb, 'GET', '/__sandbox/counts')).json;
  return Object.fromEntries(Object.entries((c.creations.Category ?? {}) as Record<string, number>).filter(([k]) => k.startsWith(prefix)));
}

const until = <T>(what: string, fn: () => Promise<T | undefined | false>, timeoutMs = 30_000): Promise<T> =>
  waitFor(what, fn, { timeoutMs, everyMs: 100, detail: stderrTail });

/** The intake's look at `name` that held it back (trace line 'not ready yet'), optionally at a given size. */
const heldBack =
  (name: string, o: { size?: number; reason?: RegExp } = {}) =>
  (l: LogLine): boolean =>
    l.msg === 'not ready yet' &&
    typeof l['file'] === 'string' &&
    l['file'].endsWith(`/${name}`) &&
    (o.size === undefined || l['size'] === o.size) &&
    (o.reason === undefined || o.reason.test(String(l['reason'])));

function rows(prefix: string, from: number, to: number): string {
  let s = '';
  for (let i = from; i < to; i++) s += `${prefix}${i};Categoria ${prefix} ${i}\n`;
  return s;
}

// trace: the intake logs each look that holds a file back ('not ready yet'), the events these tests wait on
const env = () => ({ WMS_SECRET_KEY: sb.secretKey, WMSBRIDGE_LOG_LEVEL: 'trace' });
const cfg = () => ['--config', join(tmp.dir, 'wmsbridge.config.json')];

before(async () => {
  sb = await startSandbox();
  tmp = await makeTempDir('wmsbridge-watch-');
  for (const ch of ['lento', 'marcador']) await mkdir(join(tmp.dir, 'inbox', ch), { recursive: true });
  await mkdir(join(tmp.dir, 'mappings'));
  for (const ch of ['lento', 'marcador']) {
    await writeFile(
      join(tmp.dir, 'mappings', `${ch}.yaml`),
      `name: ${ch}\nmatch: { channel: ${ch}, files: "CAT_*.csv" }\nsource: { format: delimited, delimiter: ';', header: false, columns: [codigo, nome] }\ntarget: Category\nfields:\n  codeERP: { col: codigo }\n  name: { col: nome }\n`,
    );
  }
  await writeFile(
    join(tmp.dir, 'wmsbridge.config.json'),
    JSON.stringify({
      channels: [
        { name: 'lento', readiness: { mode: 'stable', checks: 3, intervalMs: 400 } },
        { name: 'marcador', readiness: { mode: 'marker', suffixes: ['.done'], intervalMs: 200 } },
      ],
      wms: { url: sb.url, accessKeyId: sb.accessKeyID },
      sending: { concurrency: 4 },
      watch: { batchDelayMs: 200, rescanIntervalMs: 2000, metricsPort: 0 },
    }),
  );
  watch = spawnCli(['watch', ...cfg()], { env: env() });
  log = watchLog(watch.stderr!);
  const started = await log.waitFor('watch to start', (l) => /wmsbridge watch: watching/.test(l.msg ?? ''));
  metricsBase = /metrics (http:\/\/[^/\s]+)\/metrics/.exec(started.msg ?? '')?.[1] ?? '';
});

after(async () => {
  if (watch && watch.exitCode === null) {
    watch.kill('SIGKILL');
    await new Promise((r) => watch!.once('exit', r));
  }
  await sb?.close();
  await tmp?.cleanup();
});

test('a file written slowly in chunks is taken only when complete', { timeout: 60_000 }, async () => {
  const file = join(tmp.dir, 'inbox', 'lento', 'CAT_slow.csv');
  await writeFile(file, rows('S', 0, 40));
  for (let chunk = 1; chunk < 6; chunk++) {
    // the ERP writes its next chunk once the watcher has looked at this one and held the file back (a look at this
    // size that did not take it): each look finds a new size, so on any machine the file is never stable until complete
    const { size } = await stat(file);
    await log.waitFor(`a look at CAT_slow.csv (${size} bytes) that holds it back`, heldBack('CAT_slow.csv', { size }));
    assert.equal(Object.keys(await creations('S')).length, 0, `nothing sent while the file is still being written (chunk ${chunk})`);
    await appendFile(file, rows('S', chunk * 40, chunk * 40 + 40));
  }
  const done = await until('240 categories', async () => {
    const c = await creations('S');
    return Object.keys(c).length >= 240 ? c : undefined;
  });
  assert.equal(Object.keys(done).length, 240);
  assert.ok(
    Object.values(done).every((n) => n === 1),
    'each row sent once',
  );
});

test('a marker channel waits for the .done file', { timeout: 60_000 }, async () => {
  const file = join(tmp.dir, 'inbox', 'marcador', 'CAT_m.csv');
  const from = log.mark();
  await writeFile(file, rows('M', 0, 10));
  // three looks at the complete file that held it back for want of its marker: then nothing of it was sent
  await log.waitFor('three looks at CAT_m.csv waiting for its marker', heldBack('CAT_m.csv', { reason: /waiting for marker/ }), { from, n: 3 });
  assert.equal(Object.keys(await creations('M')).length, 0, 'not taken without its marker');
  await writeFile(`${file}.done`, '');
  await until('10 categories', async () => Object.keys(await creations('M')).length === 10);
});

test('/healthz and /metrics answer', { timeout: 30_000 }, async () => {
  const url = metricsBase;
  assert.ok(url, `metrics URL printed: ${stderrTail()}`);
  const h = await request(`${url}/healthz`);
  assert.equal(h.statusCode, 200);
  assert.equal(((await h.body.json()) as { ok: boolean }).ok, true);
  // the marker file's last records are created before its batch finishes it (archive, done): scraped once it has
  const text = await until('CAT_slow.csv and CAT_m.csv done', async () => {
    const m = await request(`${url}/metrics`);
    assert.equal(m.statusCode, 200);
    const t = await m.body.text();
    return Number(/^wmsbridge_files\{status="done"\} (\d+)$/m.exec(t)?.[1]) >= 2 ? t : undefined;
  });
  assert.match(text, /# TYPE wmsbridge_records gauge/);
  // the journal's files counted by status (Journal.countFiles), every status present: at least the two files sent above
  for (const status of ['claimed', 'mapped', 'done', 'error', 'duplicate'])
    assert.match(text, new RegExp(`^wmsbridge_files\\{status="${status}"\\} \\d+$`, 'm'));
  // the categories exist before their file's finish marks it done: wait for that, scrape by scrape
  await until('CAT_slow.csv and CAT_m.csv are done', async () => {
    const again = await (await request(`${url}/metrics`)).body.text();
    return Number(/^wmsbridge_files\{status="done"\} (\d+)$/m.exec(again)?.[1]) >= 2;
  });
  assert.match(text, /wmsbridge_records_settled_total\{target="Category",outcome="created"\} \d+/);
  assert.match(text, /wmsbridge_wms_request_duration_seconds_bucket\{le="\+Inf"\} \d+/);
  // the journal's group commits: categories were sent, so marks and settles were committed in batches
  const batches = Number(/^wmsbridge_journal_write_batches_total (\d+)$/m.exec(text)?.[1]);
  const writes = Number(/^wmsbridge_journal_writes_total (\d+)$/m.exec(text)?.[1]);
  assert.ok(batches > 0 && writes >= batches, `journal batches ${batches}, writes ${writes}`);
  assert.match(text, new RegExp(`^wmsbridge_journal_commit_duration_seconds_count ${batches}$`, 'm'));
});

/** The scrape as families: name -> TYPE, and every sample's name. */
function families(text: string): { types: Map<string, string>; samples: string[] } {
  const types = new Map<string, string>();
  const samples: string[] = [];
  for (const line of text.split('\n')) {
    const t = /^# TYPE (\S+) (\S+)$/.exec(line);
    if (t) types.set(t[1]!, t[2]!);
    else if (line && !line.startsWith('#')) samples.push(/^[^{ ]+/.exec(line)![0]);
  }
  return { types, samples };
}

test(
  '/metrics follows the Prometheus naming rules: counters end in _total, gauges do not, base units; process metrics and build_info',
  { timeout: 30_000 },
  async () => {
    const url = metricsBase;
    const m = await request(`${url}/metrics`);
    assert.match(String(m.headers['content-type']), /^text\/plain; version=0\.0\.4/);
    const text = await m.body.text();
    const { types, samples } = families(text);
    assert.ok(types.size > 20, `families: ${[...types.keys()].join(', ')}`);
    for (const [name, type] of types) {
      if (type === 'counter') assert.match(name, /_total$/, `counter ${name} ends in _total`);
      else assert.doesNotMatch(name, /_total$/, `${type} ${name} does not end in _total`);
      assert.doesNotMatch(name, /_(ms|milliseconds|kb|mb|minutes|hours)(_|$)/, `${name}: base units`);
    }
    const expected: Record<string, string> = {
      wmsbridge_records_settled_total: 'counter',
      wmsbridge_wms_requests_total: 'counter',
      wmsbridge_wms_retries_total: 'counter',
      wmsbridge_wms_token_refreshes_total: 'counter',
      wmsbridge_wms_failures_total: 'counter',
      wmsbridge_journal_write_batches_total: 'counter',
      wmsbridge_journal_writes_total: 'counter',
      wmsbridge_runs_total: 'counter',
      wmsbridge_records: 'gauge',
      wmsbridge_files: 'gauge',
      wmsbridge_files_queued: 'gauge',
      wmsbridge_inbox_available: 'gauge',
      wmsbridge_last_run_timestamp_seconds: 'gauge',
      wmsbridge_wms_request_duration_seconds: 'histogram',
      wmsbridge_journal_commit_duration_seconds: 'histogram',
      wmsbridge_build_info: 'gauge',
      process_cpu_seconds_total: 'counter',
      process_resident_memory_bytes: 'gauge',
      nodejs_eventloop_lag_seconds: 'gauge',
    };
    for (const [name, type] of Object.entries(expected)) assert.equal(types.get(name), type, `${name} is a ${type}`);
    assert.match(text, /^wmsbridge_build_info\{version="\d+\.\d+\.\d+[^"]*",node="[\d.]+"\} 1$/m);
    assert.ok(Number(/^wmsbridge_wms_requests_total (\d+)$/m.exec(text)?.[1]) > 0, 'the WMS requests of this process are counted');
    // histogram buckets in seconds: the WMS answered in well under a minute, so most requests are in the small buckets
    const le = [...text.matchAll(/^wmsbridge_wms_request_duration_seconds_bucket\{le="([^"]+)"\}/gm)].map((x) => x[1]);
    assert.ok(le.length > 3 && le.slice(0, -1).every((v) => Number(v) < 120), `buckets in seconds: ${le.join(', ')}`);
    for (const s of samples) assert.ok(types.has(s) || types.has(s.replace(/_(bucket|sum|count)$/, '')), `sample ${s} belongs to a declared family`);
  },
);

test('promtool check metrics passes on a real scrape', { timeout: 30_000 }, async (t) => {
  const { spawnSync } = await import('node:child_process');
  const probe = spawnSync('promtool', ['--version'], { encoding: 'utf8' });
  if (probe.error || probe.status !== 0) {
    t.skip(
      `promtool is not installed on this machine (${probe.error ? probe.error.message : `exit ${probe.status}`}): apt-get install prometheus provides it; the naming test above still checks names and types`,
    );
    return;
  }
  const url = metricsBase;
  const text = await (await request(`${url}/metrics`)).body.text();
  const r = spawnSync('promtool', ['check', 'metrics'], { input: text, encoding: 'utf8' });
  assert.equal(r.status, 0, `promtool check metrics: ${r.stdout}${r.stderr}`);
  assert.equal(`${r.stdout}${r.stderr}`.trim(), '', 'no lint problem reported');
});

test("each batch's report counts its own WMS calls, with the WMS's mean answer time", { timeout: 30_000 }, async () => {
  // two batches ran in this process (240 and 10 categories); the client's counters span the process
  const reportsDir = join(tmp.dir, 'outbox', 'reports');
  const summaries = await until('two batch reports', async () => {
    const dirs = (await readdir(reportsDir, { withFileTypes: true })).filter((d) => d.isDirectory());
    const all = await Promise.all(
      dirs.map(async (d) => JSON.parse(await readFile(join(reportsDir, d.name, 'summary.json'), 'utf8')) as RunSummary).map((p) => p.catch(() => null)),
    );
    const sent = all.filter((x): x is RunSummary => x !== null && x.totals.created > 0);
    return sent.length >= 2 ? sent : undefined;
  });
  for (const sm of summaries) {
    assert.ok(sm.wms.requests >= sm.totals.created, `run ${sm.runId}: ${sm.wms.requests} requests for ${sm.totals.created} records`);
    assert.ok(
      sm.wms.requests <= sm.totals.created + 5,
      `run ${sm.runId}: ${sm.wms.requests} requests for ${sm.totals.created} records: counted since the process started`,
    );
    assert.ok((sm.wms.meanLatencyMs ?? 0) > 0, `run ${sm.runId}: mean WMS latency ${sm.wms.meanLatencyMs}`);
  }
});

test('a second process on the same state folder is refused with a clear message', { timeout: 30_000 }, async () => {
  const res = await runCli(['run', ...cfg()], { env: env() });
  assert.equal(res.code, 2);
  assert.match(res.stderr, /in use by .*watch/i);
});

test('SIGTERM during a large file leaves nothing half-done; the next run finishes it exactly once', { timeout: 120_000 }, async () => {
  sb.setFaults({ latencyMs: 30 });
  await writeFile(join(tmp.dir, 'inbox', 'marcador', 'CAT_big.csv'), rows('B', 0, 1500));
  await writeFile(join(tmp.dir, 'inbox', 'marcador', 'CAT_big.csv.done'), '');
  await until('sending to start', async () => Object.keys(await creations('B')).length > 20);
  watch!.kill('SIGTERM');
  const code = await new Promise<number | null>((r) => watch!.once('exit', (c) => r(c)));
  assert.equal(code, 0, `watch exits 0 on SIGTERM\n${stderrTail()}`);
  const sentAtStop = Object.keys(await creations('B')).length;
  assert.ok(sentAtStop < 1500, 'stopped before the end of the file');
  const st = await runCli(['status', '--json', ...cfg()], { env: env() });
  const status = JSON.parse(st.stdout) as { records: Record<string, number> };
  assert.equal(status.records['sending'] ?? 0, 0, 'no record left in flight');
  sb.setFaults({ latencyMs: 0 });
  const res = await runCli(['run', ...cfg()], { env: env(), timeoutMs: 90_000 });
  assert.equal(res.code, 0, res.stderr.slice(-2000));
  const c = await creations('B');
  assert.equal(Object.keys(c).length, 1500, 'every row delivered');
  assert.ok(
    Object.values(c).every((n) => n === 1),
    'none twice',
  );
});
