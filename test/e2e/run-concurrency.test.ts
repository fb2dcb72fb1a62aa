/**
 * The send loop keeps to its limits, seen from outside: the sandbox counts the API requests it handles
 * at once (`concurrency.peak`), and a read-only connection to the journal polls how many records are
 * marked 'sending' while `wmsbridge run` (the CLI as a child process) sends. The global concurrency and
 * a channel's own are both reached and never exceeded; the records marked in flight never exceed the
 * send window (what a kill -9 could leave in doubt).
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { makeTempDir } from '../helpers/tmp.js';
import { spawnCli } from '../helpers/cli.js';
import { startSandbox, sandboxCall, type Sandbox } from '../helpers/sandbox.js';
import { sendWindow } from '../../src/push/pipeline.js';

let sb: Sandbox;
let tmp: { dir: string; cleanup: () => Promise<void> };

const GLOBAL = 6;
const CHANNEL = 2;

before(async () => {
  sb = await startSandbox({ latencyMs: 10 });
  tmp = await makeTempDir('wmsbridge-e2e-concurrency-');
});

after(async () => {
  await sb?.close();
  await tmp?.cleanup();
});

async function workspace(name: string, rows: number, channelConcurrency?: number): Promise<string> {
  const d = join(tmp.dir, name);
  await mkdir(join(d, 'inbox', 'cadastros'), { recursive: true });
  await mkdir(join(d, 'mappings'), { recursive: true });
  await writeFile(
    join(d, 'mappings', 'cat.yaml'),
    `name: cat
match: { channel: cadastros, files: "CAT_*.csv" }
source: { format: delimited, delimiter: ';', encoding: utf-8 }
target: Category
fields:
  codeERP: { col: codigo }
  name: { col: nome }
`,
  );
  const lines = ['codigo;nome', ...Array.from({ length: rows }, (_, i) => `${name}-${i};Categoria ${i}`)];
  await writeFile(join(d, 'inbox', 'cadastros', 'CAT_1.csv'), lines.join('\n'));
  await writeFile(
    join(d, 'wmsbridge.config.json'),
    JSON.stringify({
      inboxDir: 'inbox',
      outboxDir: 'outbox',
      mappingsDir: 'mappings',
      stateDir: 'state',
      channels: [{ name: 'cadastros', readiness: { mode: 'stable', checks: 1, intervalMs: 10 }, ...(channelConcurrency ? { concurrency: channelConcurrency } : {}) }],
      wms: { url: sb.url, accessKeyId: sb.accessKeyID },
      sending: { concurrency: GLOBAL },
    }),
  );
  return d;
}

/** Runs `wmsbridge run` while polling the journal; returns the exit code and the most records seen 'sending'. */
async function runWatchingJournal(dir: string): Promise<{ code: number | null; maxSending: number; samples: number; stderr: string }> {
  await sandboxCall(sb, 'POST', '/__sandbox/reset');
  const child = spawnCli(['run', '--config', join(dir, 'wmsbridge.config.json')], { env: { WMS_SECRET_KEY: sb.secretKey, WMSBRIDGE_LOG_LEVEL: 'warn' } });
  let stderr = '';
  child.stderr?.on('data', (d: Buffer) => (stderr += d.toString()));
  let exited = false;
  const exit = new Promise<number | null>((resolve) => child.once('exit', (code) => ((exited = true), resolve(code))));
  let maxSending = 0;
  let samples = 0;
  let db: Database.Database | null = null;
  while (!exited) {
    try {
      db ??= new Database(join(dir, 'state', 'journal.db'), { readonly: true, fileMustExist: true });
      const n = (db.prepare("SELECT COUNT(*) AS n FROM records WHERE status = 'sending'").get() as { n: number }).n;
      maxSending = Math.max(maxSending, n);
      samples++;
    } catch {
      // not created yet, or its schema not yet migrated
    }
    await new Promise((r) => setTimeout(r, 3)); // sampling interval, not a wait for a condition
  }
  db?.close();
  return { code: await exit, maxSending, samples, stderr };
}

async function peak(): Promise<number> {
  const r = await sandboxCall(sb, 'GET', '/__sandbox/counts');
  return r.json.concurrency.peak as number;
}

test('the global concurrency is reached and never exceeded; at most the send window is marked in flight', { timeout: 120_000 }, async () => {
  const dir = await workspace('global', 300);
  const r = await runWatchingJournal(dir);
  assert.equal(r.code, 0, r.stderr);
  const p = await peak();
  assert.ok(p <= GLOBAL, `the sandbox saw ${p} requests at once, concurrency is ${GLOBAL}`);
  assert.ok(p >= GLOBAL - 1, `the sandbox saw at most ${p} requests at once: the send loop does not fill its ${GLOBAL} slots`);
  assert.ok(r.samples > 10, `the journal was sampled only ${r.samples} times`);
  assert.ok(r.maxSending <= sendWindow(GLOBAL), `${r.maxSending} records marked 'sending' at once, the window is ${sendWindow(GLOBAL)}`);
  assert.ok(r.maxSending >= 2, `never more than ${r.maxSending} record marked 'sending': the sampling saw nothing`);
});

test("a channel's own concurrency is kept under the global one", { timeout: 120_000 }, async () => {
  const dir = await workspace('channel', 120, CHANNEL);
  const r = await runWatchingJournal(dir);
  assert.equal(r.code, 0, r.stderr);
  const p = await peak();
  assert.equal(p, CHANNEL, `the sandbox saw ${p} requests at once, the channel allows ${CHANNEL}`);
});
