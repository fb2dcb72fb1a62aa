import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { createSemaphore, createTokenBucket } from '../../src/wms/rate-limit.js';

describe('semaphore', () => {
  test('caps concurrency and serves waiters in order', async () => {
    const sem = createSemaphore(2);
    let active = 0;
    let peak = 0;
    const order: number[] = [];
    const gates: Array<() => void> = [];
    const tasks = [0, 1, 2, 3, 4].map(async (i) => {
      await sem.acquire();
      active++;
      peak = Math.max(peak, active);
      order.push(i);
      await new Promise<void>((r) => gates.push(r));
      active--;
      sem.release();
    });
    // release one task at a time until all ran
    while (order.length < 5 || gates.length > 0) {
      await new Promise((r) => setImmediate(r));
      const g = gates.shift();
      if (g) g();
    }
    await Promise.all(tasks);
    assert.equal(peak, 2);
    assert.deepEqual(order, [0, 1, 2, 3, 4]);
    assert.equal(sem.inFlight, 0);
  });

  test('an aborted waiter leaves the queue', async () => {
    const sem = createSemaphore(1);
    await sem.acquire();
    const ac = new AbortController();
    const p = sem.acquire(ac.signal);
    assert.equal(sem.waiting, 1);
    ac.abort(new Error('stop'));
    await assert.rejects(p, /stop/);
    assert.equal(sem.waiting, 0);
    sem.release();
    assert.equal(sem.inFlight, 0);
  });

  test('rejects a bad size', () => {
    assert.throws(() => createSemaphore(0), RangeError);
  });
});

describe('token bucket', () => {
  test('allows a burst then paces at the rate (virtual clock)', async () => {
    let t = 0;
    const bucket = createTokenBucket({ ratePerSecond: 10, burst: 2, now: () => t });
    await bucket.take();
    await bucket.take();
    let third = false;
    const p = bucket.take().then(() => (third = true));
    await new Promise((r) => setImmediate(r));
    assert.equal(third, false, 'third token waits');
    t = 100; // 100 ms at 10/s = one token
    await p;
    assert.equal(third, true);
    bucket.close();
  });

  test('real clock: 20 takes at 100/s with burst 1 take about 190 ms or more', async () => {
    const bucket = createTokenBucket({ ratePerSecond: 100, burst: 1 });
    const start = performance.now();
    for (let i = 0; i < 20; i++) await bucket.take();
    const elapsed = performance.now() - start;
    bucket.close();
    assert.ok(elapsed >= 180, `elapsed ${elapsed} ms`);
  });

  test('close rejects waiters', async () => {
    const bucket = createTokenBucket({ ratePerSecond: 1, burst: 1, now: () => 0 });
    await bucket.take();
    const p = bucket.take();
    bucket.close();
    await assert.rejects(p, /closed/);
  });

  test('rejects a bad rate', () => {
    assert.throws(() => createTokenBucket({ ratePerSecond: 0 }), RangeError);
  });
});

test('semaphore: a lowered limit takes effect as requests finish, a raised one wakes waiters at once', async () => {
  const s = createSemaphore(4);
  for (let i = 0; i < 4; i++) await s.acquire();
  const order: number[] = [];
  const waiters = [1, 2, 3].map((n) => s.acquire().then(() => order.push(n)));
  s.setLimit(2);
  assert.equal(s.limit, 2);
  s.release(); // 4 -> 3 in flight: above the limit, the slot is not handed on
  s.release(); // 3 -> 2
  await new Promise((r) => setImmediate(r));
  assert.deepEqual(order, []);
  assert.equal(s.inFlight, 2);
  s.setLimit(4); // two waiters go at once
  await new Promise((r) => setImmediate(r));
  assert.deepEqual(order, [1, 2]);
  assert.equal(s.inFlight, 4);
  s.setLimit(99); // never above the initial max
  assert.equal(s.limit, 4);
  s.release();
  await Promise.all(waiters);
  assert.deepEqual(order, [1, 2, 3]);
});
