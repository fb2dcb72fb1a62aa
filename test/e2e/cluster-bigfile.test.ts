/**
 * One big file sent by several instances (issue 19, docs/SCALING.md "Record batches"): three `watch` processes
 * on one inbox and one PostgreSQL journal. One instance claims the file and maps it; all three send claimed
 * batches of its records; the owner alone writes the result and archives the original. Then a helper is killed
 * with SIGKILL while it sends a second big file: the others finish it, nothing is lost, and at most the killed
 * instance's send window is sent twice.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { readdir, readFile, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import type { ChildProcess } from 'node:child_process';
import { categoryCluster, type CategoryCluster } from '../helpers/cluster.js';
import { killAll, spawnCli, spawnInstances } from '../helpers/cli.js';
import { startSandbox, sandboxCall, type Sandbox } from '../helpers/sandbox.js';
import { assertPostgresReachable, dropSchema, freshSchemaName, pgQuery, postgresSkipReason } from '../helpers/postgres.js';
import { sendWindow } from '../../src/push/send-queue.js';
import type { RunSummary } from '../../src/outbox/types.js';

const skip = postgresSkipReason();
const RECORDS = 1500;
const CONCURRENCY = 4;

let sb: Sandbox;
let tmp: CategoryCluster;
let schema: string;
const procs: ChildProcess[] = [];
const logs: string[] = [];

async function until<T>(what: string, fn: () => Promise<T | undefined | false>, timeoutMs: number): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await fn();
    if (v) return v;
    if (Date.now() > deadline) {
      const open = schema
        ? await pgQuery(`SELECT status, claim_owner, count(*) AS n FROM "${schema}".records GROUP BY 1, 2`).catch((err: unknown) => String(err))
        : [];
      throw new Error(`timed out waiting for ${what}\nrecords: ${JSON.stringify(open)}\n${logs.map((l) => l.slice(-1500)).join('\n---\n')}`);
    }
    await new Promise((r) => setTimeout(r, 100)); // poll interval of a wait on a condition
  }
}

const env = () => ({ WMS_SECRET_KEY: sb.secretKey, WMSBRIDGE_LOG_LEVEL: 'info' });
const counts = async () => ((await sandboxCall(sb, 'GET', '/__sandbox/counts')).json.creations as Record<string, Record<string, number>>)['Category'] ?? {};
const keysOf = (prefix: string) => Array.from({ length: RECORDS }, (_, i) => `${prefix}${i}`);

async function drop(name: string, prefix: string): Promise<void> {
  await writeFile(
    join(tmp.inbox, `${name}.csv`),
    `codigo;nome\n${keysOf(prefix)
      .map((k) => `${k};Categoria ${k}`)
      .join('\n')}\n`,
  );
}

/** records of the file sent, by the instance that claimed them (claim_owner stays on a settled record) */
async function sentBy(file: string): Promise<Map<string, number>> {
  const rows = await pgQuery<{ claim_owner: string | null; n: string }>(
    `SELECT r.claim_owner, count(*) AS n FROM "${schema}".records r JOIN "${schema}".files f ON f.id = r.file_id
     WHERE f.name = $1 AND r.status = 'sent' GROUP BY 1`,
    [file],
  );
  return new Map(rows.map((r) => [r.claim_owner ?? '(unclaimed)', Number(r.n)]));
}

async function fileRow(name: string): Promise<{ status: string; owner: string | null } | undefined> {
  return (await pgQuery<{ status: string; owner: string | null }>(`SELECT status, owner FROM "${schema}".files WHERE name = $1`, [name]))[0];
}

before(async () => {
  if (skip) return;
  await assertPostgresReachable();
  schema = freshSchemaName('bigfile');
  sb = await startSandbox({ latencyMs: 20 });
  tmp = await categoryCluster({
    prefix: 'wmsbridge-bigfile-',
    files: 'BIG_*.csv',
    sb,
    schema,
    leaseTtlMs: 3000,
    readiness: { checks: 2, intervalMs: 100 },
    sending: { concurrency: CONCURRENCY },
    watch: { batchDelayMs: 100, rescanIntervalMs: 500 },
  });
  spawnInstances(3, ['watch', '--config', tmp.configPath], { env: env() }, procs, logs);
  await until('three instances watching', async () => logs.every((l) => /wmsbridge watch: watching/.test(l)), 60_000);
});

after(async () => {
  killAll(procs);
  await sb?.close();
  await tmp?.cleanup();
  if (schema) await dropSchema(schema).catch(() => {});
});

test(
  'three instances send one big file together: each settles a share, every record exactly once, the owner writes the result',
  { skip, timeout: 180_000 },
  async () => {
    await drop('BIG_1', 'A');
    await until('BIG_1 done', async () => (await fileRow('BIG_1.csv'))?.status === 'done', 150_000);
    const by = await sentBy('BIG_1.csv');
    const total = [...by.values()].reduce((a, b) => a + b, 0);
    assert.equal(total, RECORDS, `every record sent: ${JSON.stringify([...by])}`);
    const sharers = [...by].filter(([owner, n]) => owner !== '(unclaimed)' && n > 0);
    assert.equal(sharers.length, 3, `all three instances sent a share of the file: ${JSON.stringify([...by])}`);
    const c = await counts();
    for (const k of keysOf('A')) assert.equal(c[k] ?? 0, 1, `category ${k} created exactly once`);
    // one result file, by the owner, listing every record
    const results = (await readdir(join(tmp.dir, 'outbox', 'results', 'cadastros'))).filter((f) => f.startsWith('BIG_1.'));
    assert.equal(results.length, 1, `one result file: ${results.join(', ')}`);
    const lines = (await readFile(join(tmp.dir, 'outbox', 'results', 'cadastros', results[0]!), 'utf8')).trim().split('\n');
    assert.equal(lines.length, RECORDS + 1, 'the result lists every record (and a header)');
    const archived = await pgQuery<{ path: string }>(`SELECT path FROM "${schema}".files WHERE name = 'BIG_1.csv'`);
    assert.match(archived[0]!.path, /archive/, 'the original is archived');
  },
);

test('a helper killed with SIGKILL mid-send: the rest is finished, nothing lost, at most its send window sent twice', { skip, timeout: 180_000 }, async () => {
  await drop('BIG_2', 'B');
  // a helper (not the file's owner) that has sent some of the file's records
  const victim = await until(
    'a helper sending BIG_2',
    async () => {
      const f = await fileRow('BIG_2.csv');
      if (f?.status !== 'mapped' || !f.owner) return false;
      const ownerPid = Number(f.owner.split(':')[1]);
      for (const [claimer, n] of await sentBy('BIG_2.csv')) {
        const pid = Number(claimer.split(':')[1]);
        if (n >= 20 && pid !== ownerPid) return procs.find((p) => p.pid === pid);
      }
      return false;
    },
    60_000,
  );
  victim.kill('SIGKILL');
  await new Promise((r) => (victim.exitCode !== null || victim.signalCode !== null ? r(null) : victim.once('exit', r)));
  await until('BIG_2 done', async () => (await fileRow('BIG_2.csv'))?.status === 'done', 150_000);

  const rows = await pgQuery<{ status: string; n: string }>(
    `SELECT r.status, count(*) AS n FROM "${schema}".records r JOIN "${schema}".files f ON f.id = r.file_id WHERE f.name = 'BIG_2.csv' GROUP BY 1`,
  );
  assert.deepEqual(
    rows.map((r) => [r.status, Number(r.n)]),
    [['sent', RECORDS]],
    'every record of the file settled as sent',
  );
  const c = await counts();
  for (const k of keysOf('B')) assert.ok((c[k] ?? 0) >= 1, `category ${k} lost`);
  const dups = keysOf('B').reduce((n, k) => n + Math.max(0, (c[k] ?? 0) - 1), 0);
  assert.ok(dups <= sendWindow(CONCURRENCY), `duplicates (${dups}) beyond the killed instance's send window (${sendWindow(CONCURRENCY)})`);
});

test("a one-shot `run` that helps with another instance's file names what it sent in its line and its report", { skip, timeout: 180_000 }, async () => {
  const BIG = 3 * RECORDS;
  await writeFile(join(tmp.inbox, 'BIG_3.csv'), `codigo;nome\n${Array.from({ length: BIG }, (_, i) => `C${i};Categoria C${i}`).join('\n')}\n`);
  await until('BIG_3 mapped by a watch instance', async () => (await fileRow('BIG_3.csv'))?.status === 'mapped', 60_000);
  const child = spawnCli(['run', '--config', tmp.configPath], { env: env() });
  let stdout = '';
  let stderr = '';
  child.stdout?.on('data', (d: Buffer) => (stdout += d.toString()));
  child.stderr?.on('data', (d: Buffer) => (stderr += d.toString()));
  const code = await new Promise<number | null>((r) => child.on('close', r));
  assert.equal(code, 0, `${stdout}\n${stderr.slice(-3000)}`);
  const mine = [...(await sentBy('BIG_3.csv'))].find(([claimer]) => Number(claimer.split(':')[1]) === child.pid);
  assert.ok(mine && mine[1] > 0, `the run sent a share of BIG_3: ${JSON.stringify([...(await sentBy('BIG_3.csv'))])}\n${stdout}`);
  const line = /(\d[\d.]*) registro\(s\) de 1 arquivo\(s\) de outras instâncias enviados/.exec(stdout);
  assert.ok(line, `the line names the help: ${stdout}`);
  assert.equal(Number(line[1]!.replaceAll('.', '')), mine[1], 'the records the run settled for the owner');
  const reportHtml = /relatório (\S+report\.html)/.exec(stdout)?.[1];
  assert.ok(reportHtml, stdout);
  const summary = JSON.parse(await readFile(join(dirname(reportHtml), 'summary.json'), 'utf8')) as RunSummary;
  assert.equal(summary.totals.records, 0, "not counted as this run's own records");
  const owner = (await fileRow('BIG_3.csv'))?.owner;
  assert.deepEqual(
    summary.helped?.files.map((f) => [f.name, f.channel, f.records]),
    [['BIG_3.csv', 'cadastros', mine[1]]],
  );
  if (owner) assert.equal(summary.helped?.files[0]?.owner, owner);
  assert.match(await readFile(reportHtml, 'utf8'), /Enviados para outras instâncias/);
  await until('BIG_3 done', async () => (await fileRow('BIG_3.csv'))?.status === 'done', 150_000);
});
