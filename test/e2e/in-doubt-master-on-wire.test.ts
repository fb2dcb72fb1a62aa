/**
 * Master data in doubt only when really on the wire (issue 41): `wmsbridge run` (a child process) is sending
 * categories when the WMS starts answering 429 with a long Retry-After. While the client waits out the window,
 * with categories queued in its send window and request slots, none of them is marked `sending` (the mark is made
 * per attempt, right before the request is written, and cleared by the 429, as for documents); it is then killed
 * with SIGKILL, and the journal (read directly) holds no record in doubt. The next run delivers every category
 * exactly once: none was in doubt, so none is sent twice (a category has no read-back: one in doubt is resent).
 *
 * On the code before (master data marked ahead, before its request slot) the journal holds the send window's
 * records (`concurrency` plus a quarter, at least 2) `sending` at the kill, each resent by the next run.
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
import { categoryMapping } from '../helpers/fixtures.js';

const CATEGORIES = 200;

let sb: Sandbox;
let tmp: { dir: string; cleanup: () => Promise<void> };

before(async () => {
  sb = await startSandbox({ latencyMs: 20 });
  tmp = await makeTempDir('wmsbridge-master-on-wire-');
  const d = tmp.dir;
  await mkdir(join(d, 'inbox', 'cadastros'), { recursive: true });
  await mkdir(join(d, 'mappings'));
  await writeFile(join(d, 'mappings', 'cat.yaml'), categoryMapping({ channel: 'cadastros', files: 'CAT_*.csv' }));
  const cats = ['codigo;nome', ...Array.from({ length: CATEGORIES }, (_, i) => `MC${i};Categoria ${i}`)];
  await writeFile(join(d, 'inbox', 'cadastros', 'CAT_1.csv'), cats.join('\n'));
  await writeFile(
    join(d, 'wmsbridge.config.json'),
    JSON.stringify({
      channels: [{ name: 'cadastros', readiness: { mode: 'stable', checks: 1, intervalMs: 10 } }],
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
    await new Promise((r) => setTimeout(r, 20));
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

test(
  'kill -9 while waiting out a long Retry-After with master data queued: no record in doubt, then each category exactly once',
  { timeout: 180_000 },
  async () => {
    const env = { WMS_SECRET_KEY: sb.secretKey, WMSBRIDGE_LOG_LEVEL: 'warn' };
    const cfg = ['--config', join(tmp.dir, 'wmsbridge.config.json')];
    const child = spawnCli(['run', ...cfg], { env, cwd: tmp.dir });
    let stderr = '';
    child.stderr?.on('data', (b: Buffer) => (stderr += b.toString()));
    try {
      // some categories delivered: the send loop is going, the others queued behind them
      const delivering = await waitFor(async () => {
        const a = (await sandboxCall(sb, 'GET', '/__sandbox/arrivals?path=/open/v1/category')).json as unknown[];
        return a.length >= 8;
      }, 60_000);
      assert.ok(delivering, `the run did not start delivering: ${stderr.slice(-2000)}`);
      sb.setFaults({ rate429: 1, retryAfterSeconds: 120 });
      const throttled = await waitFor(async () => ((await sandboxCall(sb, 'GET', '/__sandbox/retry-after')).json as unknown[]).length >= 1, 30_000);
      assert.ok(throttled, 'the WMS answered a 429');
      // the client waits out the window: the records whose requests got the 429 are cleared (bounded wait)
      await waitFor(() => inDoubt().sending === 0, 10_000);
      const delivered = ((await sandboxCall(sb, 'GET', '/__sandbox/arrivals?path=/open/v1/category')).json as unknown[]).length;
      assert.ok(delivered < CATEGORIES, `categories were still queued at the kill (${delivered} of ${CATEGORIES} delivered)`);
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
    const perCode = new Map<string, number>();
    for (const [k, n] of Object.entries(created['Category'] ?? {})) perCode.set(k.split('|')[0]!, (perCode.get(k.split('|')[0]!) ?? 0) + n);
    for (let i = 0; i < CATEGORIES; i++) assert.equal(perCode.get(`MC${i}`) ?? 0, 1, `category MC${i} exactly once`);
    assert.deepEqual(inDoubt(), { sending: 0, inDoubt: 0 });
  },
);
