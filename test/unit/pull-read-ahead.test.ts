import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { readAhead } from '../../src/pull/read-ahead.js';

/** a source that counts how far it was pulled and whether it was closed */
function source(n: number, opts: { failAt?: number } = {}) {
  const s = { pulled: 0, closed: false };
  const iterable: AsyncIterable<number> = {
    [Symbol.asyncIterator]() {
      let i = 0;
      return {
        async next() {
          await new Promise((r) => setImmediate(r));
          if (opts.failAt !== undefined && i === opts.failAt) throw new Error(`boom at ${i}`);
          if (i >= n) return { done: true, value: undefined };
          s.pulled++;
          return { done: false, value: i++ };
        },
        async return() {
          s.closed = true;
          return { done: true, value: undefined };
        },
      };
    },
  };
  return { s, iterable };
}

describe('readAhead', () => {
  test('yields every item in order', async () => {
    const { iterable } = source(5000);
    const out: number[] = [];
    for await (const v of readAhead(iterable, 64)) out.push(v);
    assert.deepEqual(
      out,
      Array.from({ length: 5000 }, (_, i) => i),
    );
  });

  test('reads ahead, but never more than the limit', async () => {
    const { s, iterable } = source(1000);
    const it = readAhead(iterable, 10)[Symbol.asyncIterator]();
    assert.equal((await it.next()).value, 0);
    // give the producer time to fill its buffer
    const deadline = Date.now() + 2000;
    while (s.pulled < 11 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 1)); // poll interval of a wait on the producer (bounded)
    for (let k = 0; k < 20; k++) await new Promise((r) => setImmediate(r));
    assert.ok(s.pulled > 1, 'it read ahead');
    assert.ok(s.pulled <= 1 + 10, `bounded: pulled ${s.pulled}`);
    await it.return?.(undefined);
    assert.equal(s.closed, true);
  });

  test('a source error reaches the consumer after the items before it', async () => {
    const { iterable } = source(100, { failAt: 7 });
    const seen: number[] = [];
    await assert.rejects(
      (async () => {
        for await (const v of readAhead(iterable, 4)) seen.push(v);
      })(),
      /boom at 7/,
    );
    assert.deepEqual(seen, [0, 1, 2, 3, 4, 5, 6]);
  });

  test('a consumer that stops early closes the source', async () => {
    const { s, iterable } = source(1000);
    for await (const v of readAhead(iterable, 8)) if (v === 3) break;
    assert.equal(s.closed, true);
    assert.ok(s.pulled < 20);
  });

  test('a consumer that throws closes the source and keeps its own error', async () => {
    const { s, iterable } = source(1000);
    await assert.rejects(
      (async () => {
        for await (const v of readAhead(iterable, 8)) if (v === 2) throw new Error('writer failed');
      })(),
      /writer failed/,
    );
    assert.equal(s.closed, true);
  });
});
