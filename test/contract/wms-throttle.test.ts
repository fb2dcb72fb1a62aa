/**
 * Retry-After as the WMS measures it (issue 41): the in-process sandbox injects 429s with `Retry-After: 1`
 * and records, for each one, when the 429 was written and every API request that ARRIVED after it inside its
 * window (GET /__sandbox/retry-after). The client runs in the sandbox's process with a latency: every answer
 * is written in a timers phase and read in the poll phase right after, so a request arriving after the 429
 * left was written after the client had read it: the count must be exactly 0, with no grace.
 *
 * On the code before issue 41 both tests fail: the 429's slot was handed to the next call before the gate was
 * closed (concurrency 1: the next request arrives ~1 ms into the window), and a request handed to undici before
 * the 429 was read was written after it (concurrency 32).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { startSandbox, sandboxCall } from '../helpers/sandbox.js';
import { createWmsClient } from '../../src/wms/client.js';
import type { RetryAfterWindow } from '../../src/sandbox/faults.js';

async function throttledRun(concurrency: number, calls: number, rate429: number): Promise<void> {
  const sb = await startSandbox({ seed: 41 + concurrency, latencyMs: 15 });
  const client = createWmsClient({
    baseUrl: sb.url,
    accessKeyID: sb.accessKeyID,
    secretKey: sb.secretKey,
    concurrency,
    pagingBase: 1,
    retry: { retries: 30, baseDelayMs: 1, maxDelayMs: 5 },
  });
  try {
    await client.createCategory({ name: 'warm-up', codeERP: 'W', status: 1 }); // token and first connection
    sb.setFaults({ rate429 });
    // every call queued at once: the slot a 429 frees always has a waiter
    await Promise.all(
      Array.from({ length: calls }, (_, i) =>
        i % 4 === 3 ? client.getProviderByErp(`P${i}`) : client.createCategory({ name: `Categoria ${i}`, codeERP: `T${i}`, status: 1 }),
      ),
    );
    sb.setFaults({ rate429: 0 });
    if (process.env['WMSBRIDGE_TEST_VERBOSE']) console.log(`concurrency ${concurrency}: held back ${client.stats().heldBack}`);
    const windows = (await sandboxCall(sb, 'GET', '/__sandbox/retry-after')).json as RetryAfterWindow[];
    assert.ok(windows.length >= 2, `the WMS throttled the calls (${windows.length} windows)`);
    const inside = windows.flatMap((w) => w.inside.map((r) => `${r.method} ${r.path} ${r.at.toFixed(2)} ms after a 429 left`));
    assert.deepEqual(inside, [], `${inside.length} request(s) arrived inside one of ${windows.length} Retry-After windows`);
    const stats = (await sandboxCall(sb, 'GET', '/__sandbox/counts')).json.stats as { retryAfter: { strict: number } };
    assert.equal(stats.retryAfter.strict, 0);
  } finally {
    await client.close();
    await sb.close();
  }
}

test('concurrency 1: no request arrives inside a Retry-After window (the slot is not handed on before the gate closes)', { timeout: 120_000 }, () =>
  throttledRun(1, 60, 0.08),
);

test('concurrency 32: no request arrives inside a Retry-After window (requests handed over before the 429 was read are held back)', { timeout: 120_000 }, () =>
  throttledRun(32, 600, 0.02),
);
