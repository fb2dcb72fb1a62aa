/**
 * Streaming (docs/ARCHITECTURE.md, "Streaming"): a file of at least sending.streamFrom bytes is sent while it
 * is still being mapped. The CLI as a child process against a real sandbox, a real SQLite journal read beside
 * it, kill -9 for the crash.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readdirSync } from 'node:fs';
import { appendFile, mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { makeTempDir, walkFiles as walk } from '../helpers/tmp.js';
import { runCli, spawnCli } from '../helpers/cli.js';
import { startSandbox, sandboxCall, type Sandbox } from '../helpers/sandbox.js';
import { categoryMapping } from '../helpers/fixtures.js';
import { sendWindow } from '../../src/push/send-queue.js';

let sb: Sandbox;
let tmp: { dir: string; cleanup: () => Promise<void> };

before(async () => {
  sb = await startSandbox({ latencyMs: 2 });
  tmp = await makeTempDir('wmsbridge-streaming-');
});
after(async () => {
  await sb?.close();
  if (process.env.WMSBRIDGE_TEST_KEEP) console.log(`kept ${tmp?.dir}`);
  else await tmp?.cleanup();
});

async function categoryCodes(prefix: string): Promise<string[]> {
  const cats = (await sandboxCall(sb, 'GET', '/__sandbox/state?resource=Category')).json as Array<{ codeERP: string }>;
  return cats.map((c) => c.codeERP).filter((c) => c.startsWith(prefix));
}

/** categories in the sandbox (the cheap count: the state of thousands is polled every few ms) */
async function categoriesInWms(): Promise<number> {
  const c = (await sandboxCall(sb, 'GET', '/__sandbox/counts')).json as { records?: Record<string, number> } | undefined;
  return c?.records?.['Category'] ?? 0;
}

/** categories the sandbox starts with (its seed), set by setup */
let seeded = 0;

/** whether a category of the running file reached the sandbox */
async function oneSent(): Promise<boolean> {
  return (await categoriesInWms()) > seeded;
}

/** POST /Category requests per code (the sandbox keeps the last 20,000 changing requests) */
async function createsPerCode(prefix: string): Promise<Map<string, number>> {
  const arrivals = (await sandboxCall(sb, 'GET', '/__sandbox/arrivals?path=/open/v1/category')).json as Array<{
    method: string;
    body: { codeERP?: string } | null;
  }>;
  const n = new Map<string, number>();
  for (const a of arrivals) {
    const code = a.body?.codeERP;
    if (a.method === 'POST' && code?.startsWith(prefix)) n.set(code, (n.get(code) ?? 0) + 1);
  }
  return n;
}

async function setup(name: string, rows: number, prefix: string) {
  await sandboxCall(sb, 'POST', '/__sandbox/reset'); // the arrivals log keeps the last 20,000 requests: this test's
  seeded = await categoriesInWms();
  const base = join(tmp.dir, name);
  const inbox = join(base, 'inbox');
  await mkdir(join(base, 'mappings'), { recursive: true });
  await mkdir(join(inbox, 'big'), { recursive: true });
  const config = join(base, 'wmsbridge.config.json');
  await writeFile(
    config,
    JSON.stringify({
      channels: [{ name: 'big', readiness: { mode: 'stable', checks: 1, intervalMs: 50 } }],
      wms: { url: sb.url, accessKeyId: sb.accessKeyID, retries: 1 },
      sending: { concurrency: 16, streamFrom: 0 },
    }),
  );
  await writeFile(join(base, 'mappings', 'cat.yaml'), categoryMapping({ channel: 'big', files: '*.csv' }));
  const body = Array.from({ length: rows }, (_, i) => `${prefix}${i};Categoria ${i}`).join('\n');
  await writeFile(join(inbox, 'big', `${prefix}.csv`), `codigo;nome\n${body}\n`);
  const args = [
    'run',
    '--config',
    config,
    '--inbox',
    inbox,
    '--outbox',
    join(base, 'outbox'),
    '--state-dir',
    join(base, 'state'),
    '--mappings',
    join(base, 'mappings'),
  ];
  return { base, inbox, args, env: { WMS_SECRET_KEY: sb.secretKey, WMSBRIDGE_LOG_LEVEL: 'info' }, dbPath: join(base, 'state', 'journal.db') };
}

/** records in the journal, read beside the running process (null before its schema exists) */
async function journaled(dbPath: string): Promise<number | null> {
  if (!existsSync(dbPath)) return null;
  const { default: Database } = await import('better-sqlite3');
  try {
    const db = new Database(dbPath, { readonly: true, fileMustExist: true });
    const n = (db.prepare('SELECT COUNT(*) AS n FROM records').get() as { n: number }).n;
    db.close();
    return n;
  } catch {
    return null;
  }
}

/** Polls until `seen` says yes (or the deadline): the state of the sandbox and of the journal beside a running process. */
async function until(seen: () => Promise<boolean>, ms = 60_000): Promise<boolean> {
  const deadline = Date.now() + ms;
  while (Date.now() < deadline) {
    if (await seen()) return true;
    await new Promise((r) => setTimeout(r, 5)); // poll interval of a wait on a condition
  }
  return false;
}

test(
  'a file at or above sending.streamFrom is sent while it is mapped: records reach the WMS before the last rows are journaled',
  { timeout: 150_000 },
  async () => {
    const ROWS = 15_000;
    const w = await setup('overlap', ROWS, 'STR');
    const running = runCli(w.args, { env: w.env, timeoutMs: 140_000 });
    let overlap = false;
    await until(async () => {
      const sent = await oneSent();
      const n = await journaled(w.dbPath);
      if (sent && n !== null && n < ROWS) overlap = true;
      return overlap || (n === ROWS && sent);
    });
    const r = await running;
    const log = r.stdout + r.stderr;
    assert.equal(r.code, 0, log.slice(-3000));
    assert.ok(overlap, 'no category reached the WMS before the whole file was journaled');
    assert.match(log, /"streamed":true[^\n]*"file mapped"|"file mapped"[^\n]*"streamed":true/);
    assert.equal((await categoryCodes('STR')).length, ROWS);
    const results = (await walk(join(w.base, 'outbox'))).filter((p) => p.includes('STR') && p.endsWith('.csv'));
    assert.ok(results.length > 0, 'no result file');
  },
);

test(
  'a streamed file that changes half-way: what was published is sent once and named, the rest withdrawn, the original in error, exit 1',
  { timeout: 150_000 },
  async () => {
    const ROWS = 60_000;
    const w = await setup('changed', ROWS, 'CHS');
    const running = runCli(w.args, { env: w.env, timeoutMs: 140_000 });
    const work = join(w.inbox, 'big', '.wmsbridge', 'work');
    // a writer that reopens the file where wmsbridge moved it and goes on writing, once records of it reached the WMS
    const appended = await until(async () => {
      const claimed = existsSync(work) ? readdirSync(work).find((n) => n.endsWith('CHS.csv')) : undefined;
      if (!claimed || !(await oneSent())) return false;
      await appendFile(join(work, claimed), 'CHSLATE;Escrita depois\n');
      return true;
    });
    assert.ok(appended, 'no record of the file reached the WMS');
    const r = await running;
    const log = r.stdout + r.stderr;
    assert.equal(r.code, 1, log.slice(-3000));
    const sent = await categoryCodes('CHS');
    const journaledNow = await journaled(w.dbPath);
    assert.ok(sent.length > 0 && sent.length < ROWS, `sent ${sent.length}`);
    assert.ok(!sent.includes('CHSLATE'));
    assert.equal(journaledNow, sent.length, 'every published record was sent, every unpublished one withdrawn');
    const creates = await createsPerCode('CHS');
    assert.equal(creates.size, sent.length);
    for (const [code, n] of creates) assert.equal(n, 1, `${code} created ${n} times`);
    const reason = (await walk(join(w.inbox, 'big', '.wmsbridge', 'error'))).find((p) => p.endsWith('CHS.csv.reason.txt'));
    assert.ok(reason, log.slice(-3000));
    const text = await readFile(reason, 'utf8');
    assert.match(text, /its size went from \d+ to \d+ bytes/);
    assert.match(text, new RegExp(`the ${sent.length.toLocaleString('en-US')} record\\(s\\) read before that went on to the WMS`));
    const result = (await walk(join(w.base, 'outbox'))).find((p) => /CHS.*result.*\.csv$|resultado/.test(p));
    assert.ok(result, 'the records sent are in a result file');
  },
);

test(
  'kill -9 while a file streams: the next run goes on after what was published; nothing mapped twice, nothing lost, resends only from the send window',
  { timeout: 200_000 },
  async () => {
    const ROWS = 15_000;
    const w = await setup('crash', ROWS, 'KIL');
    await sandboxCall(sb, 'POST', '/__sandbox/faults', { body: { latencyMs: 5 } });
    let killedMidStream = false;
    try {
      const child = spawnCli(w.args, { env: w.env });
      const exited = new Promise<void>((r) => child.on('close', () => r()));
      await until(async () => {
        const n = await journaled(w.dbPath);
        if (!(await oneSent()) || n === null) return false;
        killedMidStream = n < ROWS;
        child.kill('SIGKILL');
        return true;
      });
      await exited;
    } finally {
      await sandboxCall(sb, 'POST', '/__sandbox/faults', { body: { latencyMs: 2 } });
    }
    assert.ok(killedMidStream, 'the mapping had ended before the kill');
    const r = await runCli(w.args, { env: w.env, timeoutMs: 120_000 });
    const log = r.stdout + r.stderr;
    assert.equal(r.code, 0, log.slice(-3000));
    assert.match(log, /resuming a streamed file/);
    assert.equal(new Set(await categoryCodes('KIL')).size, ROWS, 'every category exists');
    assert.equal(await journaled(w.dbPath), ROWS, 'each row is one record: nothing mapped twice');
    // categories are resent when in doubt (their channel policy): only the send window at the kill can be sent
    // twice (ARCHITECTURE.md, "Crash safety"), never what was settled before it
    const creates = await createsPerCode('KIL');
    assert.equal(creates.size, ROWS);
    const twice = [...creates.values()].filter((n) => n > 1).length;
    assert.ok(twice <= sendWindow(16), `${twice} categories created twice: more than one kill's send window (${sendWindow(16)})`);
    assert.ok(![...creates.values()].some((n) => n > 2));
  },
);

test(
  'SIGTERM while a file streams: exit 143, the report shows what was sent (file partial, a result file), the next run finishes it',
  { timeout: 200_000 },
  async () => {
    const ROWS = 15_000;
    const w = await setup('term', ROWS, 'TRM');
    await sandboxCall(sb, 'POST', '/__sandbox/faults', { body: { latencyMs: 5 } });
    let code: number | null = null;
    let log = '';
    try {
      const child = spawnCli(w.args, { env: w.env });
      child.stdout?.on('data', (d: Buffer) => (log += d.toString()));
      child.stderr?.on('data', (d: Buffer) => (log += d.toString()));
      const exited = new Promise<number | null>((r) => child.on('close', (c) => r(c)));
      const stopped = await until(async () => {
        const n = await journaled(w.dbPath);
        if (!(await oneSent()) || n === null || n >= ROWS) return false;
        child.kill('SIGTERM');
        return true;
      });
      assert.ok(stopped, 'the mapping had ended before a category reached the WMS');
      code = await exited;
    } finally {
      await sandboxCall(sb, 'POST', '/__sandbox/faults', { body: { latencyMs: 2 } });
    }
    assert.equal(code, 143, log.slice(-3000));
    const summaries = (await walk(join(w.base, 'outbox'))).filter((p) => p.endsWith('summary.json'));
    assert.equal(summaries.length, 1);
    const summary = JSON.parse(await readFile(summaries[0]!, 'utf8')) as {
      files: Array<{ name: string; status: string; outcomes: Record<string, number>; resultFile?: string }>;
    };
    const file = summary.files.find((f) => f.name === 'TRM.csv');
    assert.ok(file, JSON.stringify(summary.files));
    assert.equal(file.status, 'partial', 'an unfinished streamed file is not done');
    const sentBefore = (await categoryCodes('TRM')).length;
    assert.ok(sentBefore > 0 && (file.outcomes['created'] ?? 0) > 0, JSON.stringify(file));
    assert.ok(file.resultFile, 'what was sent is in a result file');
    // the original is still claimed, not archived: it was not read to its end
    assert.equal((await walk(join(w.inbox, 'big', '.wmsbridge', 'archive'))).length, 0);
    const r = await runCli(w.args, { env: w.env, timeoutMs: 120_000 });
    assert.equal(r.code, 0, (r.stdout + r.stderr).slice(-3000));
    assert.equal(new Set(await categoryCodes('TRM')).size, ROWS, 'every category exists after the next run');
    const creates = await createsPerCode('TRM');
    assert.ok(![...creates.values()].some((n) => n > 1), 'a graceful stop leaves nothing in doubt: nothing created twice');
  },
);
