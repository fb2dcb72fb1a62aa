/**
 * A file sent while it is still being mapped (streamed, docs/ARCHITECTURE.md "Streaming") is shared by several
 * instances too (issue 19, docs/SCALING.md "Record batches"): three `run` processes on one inbox and one PostgreSQL
 * journal. One claims the file and streams it; the other two claim batches of what it has PUBLISHED while it is
 * still mapping it, never a record above its last published batch. Every record once, one result file by the owner.
 * Then the owner is killed with SIGKILL mid-stream: the next run resumes the file after its last published batch,
 * nothing is lost, and only records that were in flight may be sent twice.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { readdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { ChildProcess } from 'node:child_process';
import { categoryCluster, type CategoryCluster } from '../helpers/cluster.js';
import { spawnCli, killAll, runCli } from '../helpers/cli.js';
import { startSandbox, sandboxCall, type Sandbox } from '../helpers/sandbox.js';
import { assertPostgresReachable, dropSchema, freshSchemaName, pgQuery, postgresSkipReason } from '../helpers/postgres.js';
import { sendWindow } from '../../src/push/send-queue.js';

const skip = postgresSkipReason();
const RECORDS = 1500;
/** small batches: the mapper stays 4 batches (200 records) ahead of the send loop, so the file streams for most of the run */
const BATCH = 50;

let sb: Sandbox;
let tmp: CategoryCluster;
let schema: string;
const procs: ChildProcess[] = [];
const CONCURRENCY = 4;
const env = (): Record<string, string> => ({ WMS_SECRET_KEY: sb.secretKey, WMSBRIDGE_LOG_LEVEL: 'info' });
const created = async (): Promise<Record<string, number>> =>
  ((await sandboxCall(sb, 'GET', '/__sandbox/counts')).json.creations as Record<string, Record<string, number>>)['Category'] ?? {};

/** `n` `run` processes on the inbox: their exit codes, and each one's output */
function startRuns(n: number): { exits: Array<Promise<number | null>>; outputs: string[]; children: ChildProcess[] } {
  const outputs: string[] = [];
  const children: ChildProcess[] = [];
  const exits = Array.from({ length: n }, () => {
    const child = spawnCli(['run', '--config', tmp.configPath], { env: env() });
    procs.push(child);
    children.push(child);
    const i = outputs.push('') - 1;
    child.stdout?.on('data', (d: Buffer) => (outputs[i] += d.toString()));
    child.stderr?.on('data', (d: Buffer) => (outputs[i] = (outputs[i] + d.toString()).slice(-20_000)));
    return new Promise<number | null>((r) => child.on('close', (code, signal) => r(signal ? -1 : code)));
  });
  return { exits, outputs, children };
}

/** drops a file of RECORDS categories keyed `${prefix}0`...; returns the keys */
async function drop(name: string, prefix: string): Promise<string[]> {
  const keys = Array.from({ length: RECORDS }, (_, i) => `${prefix}${i}`);
  await writeFile(join(tmp.inbox, `${name}.csv`), `codigo;nome\n${keys.map((k) => `${k};Categoria ${k}`).join('\n')}\n`);
  return keys;
}

/** the file's status and owner, and how many of its records other instances than the owner sent */
async function fileState(name: string): Promise<{ status: string; owner: string | null; helped: number } | undefined> {
  const rows = await pgQuery<{ status: string; owner: string | null; helped: string }>(
    `SELECT f.status, f.owner,
            count(r.id) FILTER (WHERE r.status = 'sent' AND r.claim_owner IS NOT NULL AND r.claim_owner <> f.owner) AS helped
       FROM "${schema}".files f LEFT JOIN "${schema}".records r ON r.file_id = f.id WHERE f.name = $1 GROUP BY 1, 2`,
    [name],
  );
  const r = rows[0];
  return r && { status: r.status, owner: r.owner, helped: Number(r.helped) };
}

before(async () => {
  if (skip) return;
  await assertPostgresReachable();
  schema = freshSchemaName('stream');
  sb = await startSandbox({ latencyMs: 20 });
  tmp = await categoryCluster({
    prefix: 'wmsbridge-cluster-stream-',
    files: 'BIG_*.csv',
    sb,
    schema,
    leaseTtlMs: 3000,
    readiness: { checks: 1, intervalMs: 50 },
    // every file streams
    sending: { concurrency: CONCURRENCY, batchSize: BATCH, streamFrom: 0 },
  });
});

after(async () => {
  killAll(procs);
  await sb?.close();
  await tmp?.cleanup();
  if (schema) await dropSchema(schema).catch(() => {});
});

test(
  'three instances share a file while its owner still maps it: helpers take published batches only, every record exactly once',
  { skip, timeout: 180_000 },
  async () => {
    const keys = await drop('BIG_S', 'S');
    const { exits, outputs } = startRuns(3);
    // while the instances run: records other instances than the owner sent while the file was still being mapped
    // (status claimed), and every claimed record against the last batch published at that moment
    let helpedWhileMapping = 0;
    let aboveBound = 0;
    let running = true;
    const watcher = (async () => {
      while (running) {
        const rows = await pgQuery<{ status: string; owner: string | null; point: string | null; helped: string; above: string }>(
          `SELECT f.status, f.owner, m.value AS point,
                  count(*) FILTER (WHERE r.status = 'sent' AND r.claim_owner IS NOT NULL AND r.claim_owner <> f.owner) AS helped,
                  count(*) FILTER (WHERE r.claim_owner IS NOT NULL AND m.value IS NOT NULL AND r.id > (m.value::jsonb ->> 'lastId')::bigint) AS above
             FROM "${schema}".files f JOIN "${schema}".records r ON r.file_id = f.id
             LEFT JOIN "${schema}".meta m ON m.key = 'stream:' || f.id
            WHERE f.name = 'BIG_S.csv' GROUP BY 1, 2, 3`,
        ).catch(() => []);
        const r = rows[0];
        if (r?.status === 'claimed') {
          helpedWhileMapping = Math.max(helpedWhileMapping, Number(r.helped));
          aboveBound = Math.max(aboveBound, Number(r.above));
        }
        await new Promise((res) => setTimeout(res, 50)); // sampling interval of the journal beside the runs, not a wait
      }
    })();
    const codes = await Promise.all(exits);
    running = false;
    await watcher;
    assert.deepEqual(codes, [0, 0, 0], outputs.map((o) => o.slice(-3000)).join('\n---\n'));

    assert.ok(helpedWhileMapping > 0, 'other instances sent records of the file while its owner was still mapping it');
    assert.equal(aboveBound, 0, 'no record above the last published batch was ever claimed');
    const by = await pgQuery<{ claim_owner: string | null; n: string }>(
      `SELECT r.claim_owner, count(*) AS n FROM "${schema}".records r JOIN "${schema}".files f ON f.id = r.file_id
        WHERE f.name = 'BIG_S.csv' AND r.status = 'sent' GROUP BY 1`,
    );
    assert.equal(
      by.reduce((a, r) => a + Number(r.n), 0),
      RECORDS,
      `every record sent: ${JSON.stringify(by)}`,
    );
    assert.equal(by.filter((r) => r.claim_owner !== null && Number(r.n) > 0).length, 3, `all three instances sent a share: ${JSON.stringify(by)}`);
    const c = await created();
    for (const k of keys) assert.equal(c[k] ?? 0, 1, `category ${k} created exactly once`);
    const owner = outputs.findIndex((o) => /"streamed":true/.test(o));
    assert.ok(owner >= 0, 'the owner logged the file as mapped while it was sent (streamed)');
    const results = (await readdir(join(tmp.dir, 'outbox', 'results', 'cadastros'))).filter((f) => f.startsWith('BIG_S.'));
    assert.equal(results.length, 1, `one result file: ${results.join(', ')}`);
    const lines = (await readFile(join(tmp.dir, 'outbox', 'results', 'cadastros', results[0]!), 'utf8')).trim().split('\n');
    assert.equal(lines.length, RECORDS + 1, 'the result lists every record (and a header)');
  },
);

test(
  'the owner of a shared streamed file killed with SIGKILL mid-stream: the next run resumes after its last published batch, nothing lost',
  { skip, timeout: 180_000 },
  async () => {
    const keys = await drop('BIG_K', 'K');
    const { exits, outputs, children } = startRuns(3);
    // the owner, once helpers have sent some of the file while it still streams
    const deadline = Date.now() + 60_000;
    let owner: ChildProcess | undefined;
    while (!owner) {
      const f = await fileState('BIG_K.csv');
      if (f?.status === 'claimed' && f.owner && f.helped >= 20) owner = children.find((c) => c.pid === Number(f.owner!.split(':')[1]));
      else if (f && f.status !== 'claimed') assert.fail(`the file was mapped before helpers sent 20 of its records: ${JSON.stringify(f)}`);
      if (Date.now() > deadline) assert.fail(`no helper sent 20 records of the streaming file: ${outputs.map((o) => o.slice(-1500)).join('\n---\n')}`);
      if (!owner) await new Promise((r) => setTimeout(r, 50)); // poll interval: the journal pushes no event
    }
    owner.kill('SIGKILL');
    const codes = await Promise.all(exits);
    assert.equal(codes.filter((c) => c === -1).length, 1, 'the owner was killed');
    assert.deepEqual(
      codes.filter((c) => c !== -1),
      [0, 0],
      `the helpers end on their own once the owner's lease expires\n${outputs.map((o) => o.slice(-2000)).join('\n---\n')}`,
    );
    assert.equal((await fileState('BIG_K.csv'))?.status, 'claimed', 'the file stays claimed with its stream place');
    // the next run: the file's lease has expired; it resumes after the last published batch
    const next = await runCli(['run', '--config', tmp.configPath], { env: env(), timeoutMs: 120_000 });
    assert.equal(next.code, 0, `${next.stdout}\n${next.stderr.slice(-3000)}`);
    const rows = await pgQuery<{ status: string; n: string }>(
      `SELECT r.status, count(*) AS n FROM "${schema}".records r JOIN "${schema}".files f ON f.id = r.file_id WHERE f.name = 'BIG_K.csv' GROUP BY 1`,
    );
    assert.deepEqual(
      rows.map((r) => [r.status, Number(r.n)]),
      [['sent', RECORDS]],
      'every record of the file settled as sent',
    );
    assert.equal((await fileState('BIG_K.csv'))?.status, 'done');
    const c = await created();
    for (const k of keys) assert.ok((c[k] ?? 0) >= 1, `category ${k} lost`);
    // sent twice at most: what the killed owner had in flight (its send window), settled by read-back or resent
    const dups = keys.reduce((n, k) => n + Math.max(0, (c[k] ?? 0) - 1), 0);
    assert.ok(dups <= sendWindow(CONCURRENCY), `duplicates (${dups}) beyond the killed owner's send window (${sendWindow(CONCURRENCY)})`);
  },
);
