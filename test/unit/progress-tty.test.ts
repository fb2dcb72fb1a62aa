import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import { createProgress, formatEta, renderProgressLine } from '../../src/shared/progress.js';

function sink(isTTY: boolean): Writable & { isTTY: boolean; columns: number; out: string; writes: number } {
  const w = new Writable({
    write(chunk: Buffer, _e, cb) {
      w.out += chunk.toString();
      w.writes++;
      cb();
    },
  }) as Writable & { isTTY: boolean; columns: number; out: string; writes: number };
  w.isTTY = isTTY;
  w.columns = 100;
  w.out = '';
  w.writes = 0;
  return w;
}

describe('progress', () => {
  test('prints nothing when the stream is not a TTY', () => {
    const s = sink(false);
    const p = createProgress({ stream: s, label: 'products', total: 100 });
    for (let i = 0; i < 100; i++) p.tick();
    p.done();
    assert.equal(s.out, '');
    assert.equal(p.count, 100);
  });

  test('on a TTY draws rows, rate and ETA, at most 10 times per second', () => {
    const s = sink(true);
    let now = 0;
    const p = createProgress({ stream: s, label: 'products', total: 1000, now: () => now });
    for (let i = 0; i < 1000; i++) {
      now += 1; // 1000 ticks over 1 s
      p.tick();
    }
    assert.ok(s.writes <= 11, `${s.writes} redraws in 1 s`);
    assert.ok(s.writes >= 9, `${s.writes} redraws in 1 s`);
    p.done();
    assert.ok(s.out.endsWith('\n'));
    assert.match(s.out, /products \[#+\] 1000\/1000 100% 1000 rows\/s ETA 00:00\n$/);
  });

  test('line rendering without a total, and ETA format', () => {
    assert.equal(renderProgressLine('x', 50, 2000, undefined), 'x 50 rows 25.0 rows/s');
    assert.match(renderProgressLine('x', 25, 1000, 100), /\[#+-+\] 25\/100 {2}25% 25\.0 rows\/s ETA 00:03$/);
    assert.equal(formatEta(3725), '1:02:05');
    assert.equal(formatEta(Number.NaN), '--:--');
  });
});
