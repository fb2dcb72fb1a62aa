/**
 * In doubt only what was really on the wire (issue 41): `wmsbridge run` (a child process) is sending records when
 * the WMS starts answering 429 with a long Retry-After, then killed with SIGKILL while it waits out the window;
 * the journal is read directly, and the next run must deliver every record exactly once.
 *
 * Documents (picking lists, held for a person when in doubt) are marked `sending` per attempt, right before the
 * request is written, and the mark is cleared by the 429: none is left in doubt by the kill. On the code before
 * issue 41 a document was marked once it had a request slot and stayed marked through the wait (up to
 * `concurrency` held after the kill).
 *
 * Master data (categories: no read-back, resent when in doubt) is marked ahead, before its request slot, so that
 * no slot waits for a journal commit: at most the send window (concurrency plus a quarter, at least 2) is left
 * `sending`, and as none of their requests reached the WMS the resend creates each exactly once. (Marked per
 * attempt, the throughput at concurrency 32 and 20 ms fell from 0.89 to 0.80 of the Little's-law bound:
 * docs/RELIABILITY.md.)
 */
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { once } from 'node:events';
import Database from 'better-sqlite3';
import { makeTempDir } from '../helpers/tmp.js';
import { runCli, spawnCli } from '../helpers/cli.js';
import { startSandbox, sandboxCall, type Sandbox } from '../helpers/sandbox.js';
import { categoryMapping, pickingListMapping, seededProductId } from '../helpers/fixtures.js';

/** One scenario: what is sent, and how each record's creation is counted by the WMS. */
interface Scenario {
  channel: string;
  /** the mapping file's text, given the sandbox (a product id to order) */
  mapping: (sb: Sandbox) => Promise<string>;
  /** the export's lines, header first */
  lines: (sb: Sandbox) => Promise<string[]>;
  /** the endpoint the records are created through (the sandbox's arrivals) */
  path: string;
  /** delivered before the WMS starts throttling: the send loop is going, the others queued behind them */
  deliveredFirst: number;
  /** the sandbox's creations key, and the ERP keys each expected exactly once */
  target: string;
  keys: string[];
  /** records left `sending` at the kill at most: 0 for documents (marked per attempt) */
  sendingAtKill: number;
}

const cleanups: Array<() => Promise<void>> = [];
after(async () => {
  for (const c of cleanups.reverse()) await c();
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

function inDoubt(dir: string): { sending: number; inDoubt: number } {
  const db = new Database(join(dir, 'state', 'journal.db'), { readonly: true, fileMustExist: true });
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

async function setUp(s: Scenario): Promise<{ sb: Sandbox; dir: string }> {
  const sb = await startSandbox({ latencyMs: 20 });
  const tmp = await makeTempDir(`wmsbridge-on-wire-${s.channel}-`);
  cleanups.push(async () => {
    await sb.close();
    await tmp.cleanup();
  });
  const d = tmp.dir;
  await mkdir(join(d, 'inbox', s.channel), { recursive: true });
  await mkdir(join(d, 'mappings'));
  await writeFile(join(d, 'mappings', `${s.channel}.yaml`), await s.mapping(sb));
  await writeFile(join(d, 'inbox', s.channel, 'EXPORT_1.csv'), (await s.lines(sb)).join('\n'));
  await writeFile(
    join(d, 'wmsbridge.config.json'),
    JSON.stringify({
      channels: [{ name: s.channel, readiness: { mode: 'stable', checks: 1, intervalMs: 10 } }],
      sending: { concurrency: 4 },
      wms: { url: sb.url, accessKeyId: sb.accessKeyID, retries: 5, timeoutMs: 5000 },
    }),
  );
  return { sb, dir: d };
}

/** Runs the scenario: kill -9 while waiting out the window, nothing in doubt, then every record exactly once. */
async function killWhileThrottled(s: Scenario): Promise<void> {
  const { sb, dir } = await setUp(s);
  const env = { WMS_SECRET_KEY: sb.secretKey, WMSBRIDGE_LOG_LEVEL: 'warn' };
  const cfg = ['--config', join(dir, 'wmsbridge.config.json')];
  const arrived = async () => ((await sandboxCall(sb, 'GET', `/__sandbox/arrivals?path=${s.path}`)).json as unknown[]).length;
  const child = spawnCli(['run', ...cfg], { env, cwd: dir });
  let stderr = '';
  child.stderr?.on('data', (b: Buffer) => (stderr += b.toString()));
  try {
    const delivering = await waitFor(async () => (await arrived()) >= s.deliveredFirst, 60_000);
    assert.ok(delivering, `the run did not start delivering: ${stderr.slice(-2000)}`);
    sb.setFaults({ rate429: 1, retryAfterSeconds: 120 });
    const throttled = await waitFor(async () => ((await sandboxCall(sb, 'GET', '/__sandbox/retry-after')).json as unknown[]).length >= 1, 30_000);
    assert.ok(throttled, 'the WMS answered a 429');
    // the client waits out the window: the records whose requests got the 429 are cleared (bounded wait)
    await waitFor(() => inDoubt(dir).sending <= s.sendingAtKill, 10_000);
    const delivered = await arrived();
    assert.ok(delivered < s.keys.length, `records were still queued at the kill (${delivered} of ${s.keys.length} delivered)`);
    assert.equal(child.exitCode, null, 'still running (waiting out the Retry-After)');
    child.kill('SIGKILL');
    await once(child, 'close');
    const atKill = inDoubt(dir);
    assert.equal(atKill.inDoubt, 0);
    assert.ok(atKill.sending <= s.sendingAtKill, `${atKill.sending} record(s) sending after the kill, at most ${s.sendingAtKill}: none was on the wire`);
  } finally {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    sb.setFaults({ rate429: 0, retryAfterSeconds: 1 });
  }

  const next = await runCli(['run', ...cfg], { env, cwd: dir, timeoutMs: 120_000 });
  assert.equal(next.code, 0, `${next.stdout}\n${next.stderr.slice(-2000)}`);
  const created = (await sandboxCall(sb, 'GET', '/__sandbox/counts')).json.creations as Record<string, Record<string, number>>;
  const perKey = new Map<string, number>();
  for (const [k, n] of Object.entries(created[s.target] ?? {})) perKey.set(k.split('|')[0]!, (perKey.get(k.split('|')[0]!) ?? 0) + n);
  for (const key of s.keys) assert.equal(perKey.get(key) ?? 0, 1, `${s.target} ${key} exactly once`);
  assert.deepEqual(inDoubt(dir), { sending: 0, inDoubt: 0 });
}

const ORDERS = Array.from({ length: 60 }, (_, i) => String(700000 + i));
const CATEGORIES = Array.from({ length: 200 }, (_, i) => `MC${i}`);

test('kill -9 while waiting out a long Retry-After with documents queued: no record in doubt, then each order exactly once', { timeout: 180_000 }, () =>
  killWhileThrottled({
    channel: 'pedidos',
    mapping: async () => pickingListMapping({ channel: 'pedidos', files: 'EXPORT_*.csv' }),
    lines: async (sb) => {
      const productId = await seededProductId(sb);
      return ['pedido;produto;qtd', ...ORDERS.map((o, i) => `${o};${productId};${1 + (i % 5)}`)];
    },
    path: '/open/v1/pickinglist',
    deliveredFirst: 4,
    target: 'PickingList',
    keys: ORDERS,
    sendingAtKill: 0,
  }),
);

test(
  'kill -9 while waiting out a long Retry-After with master data queued: at most the send window left sending, then each category exactly once',
  { timeout: 180_000 },
  () =>
    killWhileThrottled({
      channel: 'cadastros',
      mapping: async () => categoryMapping({ channel: 'cadastros', files: 'EXPORT_*.csv' }),
      lines: async () => ['codigo;nome', ...CATEGORIES.map((c, i) => `${c};Categoria ${i}`)],
      path: '/open/v1/category',
      deliveredFirst: 8,
      target: 'Category',
      keys: CATEGORIES,
      // marked ahead, before its slot (so no request slot waits for a journal commit): at most the send window,
      // concurrency 4 plus a quarter, at least 2: 6
      sendingAtKill: 6,
    }),
);
