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
import { makeTempDir } from '../helpers/tmp.js';
import { runCliWatched } from '../helpers/crash-loop.js';
import { startSandbox, sandboxCall, type Sandbox } from '../helpers/sandbox.js';
import { sendWindow } from '../../src/push/send-queue.js';
import { categoryMapping, pickingListMapping, seededProductId } from '../helpers/fixtures.js';

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

async function workspace(name: string, rows: number, channelConcurrency?: number, orders = 0): Promise<string> {
  const d = join(tmp.dir, name);
  await mkdir(join(d, 'inbox', 'cadastros'), { recursive: true });
  await mkdir(join(d, 'mappings'), { recursive: true });
  if (orders > 0) {
    const productId = await seededProductId(sb);
    await writeFile(join(d, 'mappings', 'ped.yaml'), pickingListMapping({ channel: 'cadastros', files: 'PED_*.csv' }));
    const peds = ['pedido;produto;qtd', ...Array.from({ length: orders }, (_, i) => `${700000 + i};${productId};1`)];
    await writeFile(join(d, 'inbox', 'cadastros', 'PED_1.csv'), peds.join('\n'));
  }
  await writeFile(join(d, 'mappings', 'cat.yaml'), categoryMapping({ channel: 'cadastros', files: 'CAT_*.csv' }));
  if (rows > 0) {
    const lines = ['codigo;nome', ...Array.from({ length: rows }, (_, i) => `${name}-${i};Categoria ${i}`)];
    await writeFile(join(d, 'inbox', 'cadastros', 'CAT_1.csv'), lines.join('\n'));
  }
  await writeFile(
    join(d, 'wmsbridge.config.json'),
    JSON.stringify({
      inboxDir: 'inbox',
      outboxDir: 'outbox',
      mappingsDir: 'mappings',
      stateDir: 'state',
      channels: [
        { name: 'cadastros', readiness: { mode: 'stable', checks: 1, intervalMs: 10 }, ...(channelConcurrency ? { concurrency: channelConcurrency } : {}) },
      ],
      wms: { url: sb.url, accessKeyId: sb.accessKeyID },
      sending: { concurrency: GLOBAL },
    }),
  );
  return d;
}

/** Runs `wmsbridge run` while polling the journal; returns the exit code and the most records seen 'sending'. */
async function runWatchingJournal(
  dir: string,
): Promise<{ code: number | null; maxSending: number; maxSendingDocuments: number; samples: number; stderr: string }> {
  await sandboxCall(sb, 'POST', '/__sandbox/reset');
  let maxSending = 0;
  let maxSendingDocuments = 0;
  const run = await runCliWatched({
    args: ['run', '--config', join(dir, 'wmsbridge.config.json')],
    env: { WMS_SECRET_KEY: sb.secretKey, WMSBRIDGE_LOG_LEVEL: 'warn' },
    journal: {
      path: join(dir, 'state', 'journal.db'),
      sample: (db) => {
        const r = db.prepare("SELECT COUNT(*) AS n, COUNT(*) FILTER (WHERE target = 'PickingList') AS docs FROM records WHERE status = 'sending'").get() as {
          n: number;
          docs: number;
        };
        maxSending = Math.max(maxSending, r.n);
        maxSendingDocuments = Math.max(maxSendingDocuments, r.docs);
      },
    },
  });
  return { code: run.code, maxSending, maxSendingDocuments, samples: run.samples, stderr: run.stderr };
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

test('documents (held when in doubt) are marked only inside a request slot: never more than the concurrency in flight', { timeout: 120_000 }, async () => {
  const dir = await workspace('documents', 0, undefined, 200);
  const r = await runWatchingJournal(dir);
  assert.equal(r.code, 0, r.stderr);
  assert.ok(r.samples > 10, `the journal was sampled only ${r.samples} times`);
  assert.ok(r.maxSendingDocuments <= GLOBAL, `${r.maxSendingDocuments} picking lists marked 'sending' at once, concurrency is ${GLOBAL}`);
  assert.ok(r.maxSendingDocuments >= 2, `never more than ${r.maxSendingDocuments} picking list marked 'sending': the sampling saw nothing`);
  // a document's slot also covers its two commits, so all six are at the sandbox at once only most of the time
  const p = await peak();
  assert.ok(p <= GLOBAL && p >= GLOBAL - 1, `the sandbox saw ${p} requests at once, concurrency is ${GLOBAL}`);
});
