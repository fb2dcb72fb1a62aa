/**
 * In doubt only what was really on the wire (issue 41): `wmsbridge run` (a child process) is sending picking
 * lists (documents: held for a person when in doubt) when the WMS starts answering 429 with a long Retry-After.
 * While the client waits out the window, with documents queued and in its request slots, none of them is marked
 * `sending` (the mark is made per attempt, right before the request is written, and cleared by the 429); it is
 * then killed with SIGKILL, and the journal (read directly) holds no record in doubt. The next run delivers every
 * order exactly once and holds none.
 *
 * On the code before issue 41 a document was marked once it had a request slot and stayed marked through the
 * Retry-After wait: the journal holds up to `concurrency` records `sending` at the kill, held after it.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { once } from 'node:events';
import Database from 'better-sqlite3';
import { makeTempDir } from '../helpers/tmp.js';
import { runCli, spawnCli } from '../helpers/cli.js';
import { startSandbox, sandboxCall, type Sandbox } from '../helpers/sandbox.js';
import { pickingListMapping, seededProductId } from '../helpers/fixtures.js';

const ORDERS = 60;

let sb: Sandbox;
let tmp: { dir: string; cleanup: () => Promise<void> };

before(async () => {
  sb = await startSandbox({ latencyMs: 20 });
  tmp = await makeTempDir('wmsbridge-on-wire-');
  const d = tmp.dir;
  await mkdir(join(d, 'inbox', 'pedidos'), { recursive: true });
  await mkdir(join(d, 'mappings'));
  const productId = await seededProductId(sb);
  await writeFile(join(d, 'mappings', 'ped.yaml'), pickingListMapping({ channel: 'pedidos', files: 'PED_*.csv' }));
  const peds = ['pedido;produto;qtd', ...Array.from({ length: ORDERS }, (_, i) => `${700000 + i};${productId};${1 + (i % 5)}`)];
  await writeFile(join(d, 'inbox', 'pedidos', 'PED_1.csv'), peds.join('\n'));
  await writeFile(
    join(d, 'wmsbridge.config.json'),
    JSON.stringify({
      channels: [{ name: 'pedidos', readiness: { mode: 'stable', checks: 1, intervalMs: 10 } }],
      sending: { concurrency: 4 },
      wms: { url: sb.url, accessKeyId: sb.accessKeyID, retries: 5, timeoutMs: 5000 },
    }),
  );
});

after(async () => {
  await sb?.close();
  await tmp?.cleanup();
});

/** Polls `check` every 20 ms until it is true or `ms` passed; the last value. */
async function waitFor(check: () => boolean | Promise<boolean>, ms: number): Promise<boolean> {
  const end = Date.now() + ms;
  for (;;) {
    if (await check()) return true;
    if (Date.now() > end) return false;
    await new Promise((r) => setTimeout(r, 20)); // poll interval of a wait on a condition
  }
}

function inDoubt(): { sending: number; inDoubt: number } {
  const db = new Database(join(tmp.dir, 'state', 'journal.db'), { readonly: true, fileMustExist: true });
  try {
    const rows = db.prepare(`SELECT status, COUNT(*) AS n FROM records WHERE status IN ('sending', 'in_doubt') GROUP BY status`).all() as Array<{
      status: string;
      n: number;
    }>;
    const of = (s: string) => rows.find((r) => r.status === s)?.n ?? 0;
    return { sending: of('sending'), inDoubt: of('in_doubt') };
  } finally {
    db.close();
  }
}

test('kill -9 while waiting out a long Retry-After with documents queued: no record in doubt, then each order exactly once', { timeout: 180_000 }, async () => {
  const env = { WMS_SECRET_KEY: sb.secretKey, WMSBRIDGE_LOG_LEVEL: 'warn' };
  const cfg = ['--config', join(tmp.dir, 'wmsbridge.config.json')];
  const child = spawnCli(['run', ...cfg], { env, cwd: tmp.dir });
  let stderr = '';
  child.stderr?.on('data', (b: Buffer) => (stderr += b.toString()));
  try {
    // some orders delivered: the send loop is going, the others queued behind them
    const delivering = await waitFor(async () => {
      const a = (await sandboxCall(sb, 'GET', '/__sandbox/arrivals?path=/open/v1/pickinglist')).json as unknown[];
      return a.length >= 4;
    }, 60_000);
    assert.ok(delivering, `the run did not start delivering: ${stderr.slice(-2000)}`);
    sb.setFaults({ rate429: 1, retryAfterSeconds: 120 });
    const throttled = await waitFor(async () => ((await sandboxCall(sb, 'GET', '/__sandbox/retry-after')).json as unknown[]).length >= 1, 30_000);
    assert.ok(throttled, 'the WMS answered a 429');
    // the client waits out the window: the records whose requests got the 429 are cleared (bounded wait)
    await waitFor(() => inDoubt().sending === 0, 10_000);
    assert.equal(child.exitCode, null, 'still running (waiting out the Retry-After)');
    child.kill('SIGKILL');
    await once(child, 'close');
    assert.deepEqual(inDoubt(), { sending: 0, inDoubt: 0 }, 'no record in doubt after the kill: none was on the wire');
  } finally {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    sb.setFaults({ rate429: 0, retryAfterSeconds: 1 });
  }

  const next = await runCli(['run', ...cfg], { env, cwd: tmp.dir, timeoutMs: 120_000 });
  assert.equal(next.code, 0, `${next.stdout}\n${next.stderr.slice(-2000)}`);
  const created = (await sandboxCall(sb, 'GET', '/__sandbox/counts')).json.creations as Record<string, Record<string, number>>;
  const perOrder = new Map<string, number>();
  for (const [k, n] of Object.entries(created['PickingList'] ?? {})) perOrder.set(k.split('|')[0]!, (perOrder.get(k.split('|')[0]!) ?? 0) + n);
  for (let i = 0; i < ORDERS; i++) assert.equal(perOrder.get(String(700000 + i)) ?? 0, 1, `order ${700000 + i} exactly once`);
  assert.deepEqual(inDoubt(), { sending: 0, inDoubt: 0 });
});
