/**
 * A file sent while it is still being mapped (streamed, docs/ARCHITECTURE.md "Streaming") is shared by several
 * instances too (issue 19, docs/SCALING.md "Record batches"): three `run` processes on one inbox and one PostgreSQL
 * journal. One claims the file and streams it; the other two claim batches of what it has PUBLISHED while it is
 * still mapping it, never a record above its last published batch. Every record once, one result file by the owner.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdir, readdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { ChildProcess } from 'node:child_process';
import { makeTempDir } from '../helpers/tmp.js';
import { categoryMapping } from '../helpers/fixtures.js';
import { spawnCli, killAll } from '../helpers/cli.js';
import { startSandbox, sandboxCall, type Sandbox } from '../helpers/sandbox.js';
import { assertPostgresReachable, dropSchema, freshSchemaName, PG_TEST_URL, pgQuery, postgresSkipReason } from '../helpers/postgres.js';

const skip = postgresSkipReason();
const RECORDS = 1500;
/** small batches: the mapper stays 4 batches (200 records) ahead of the send loop, so the file streams for most of the run */
const BATCH = 50;

let sb: Sandbox;
let tmp: { dir: string; cleanup: () => Promise<void> };
let schema: string;
const procs: ChildProcess[] = [];

before(async () => {
  if (skip) return;
  await assertPostgresReachable();
  schema = freshSchemaName('stream');
  sb = await startSandbox({ latencyMs: 20 });
  tmp = await makeTempDir('wmsbridge-cluster-stream-');
  await mkdir(join(tmp.dir, 'inbox', 'cadastros'), { recursive: true });
  await mkdir(join(tmp.dir, 'mappings'));
  await writeFile(join(tmp.dir, 'mappings', 'cat.yaml'), categoryMapping({ channel: 'cadastros', files: 'BIG_*.csv' }));
  await writeFile(
    join(tmp.dir, 'wmsbridge.config.json'),
    JSON.stringify({
      journal: { kind: 'postgres', url: PG_TEST_URL, schema, leaseTtlMs: 3000 },
      channels: [{ name: 'cadastros', readiness: { mode: 'stable', checks: 1, intervalMs: 50 } }],
      wms: { url: sb.url, accessKeyId: sb.accessKeyID },
      // every file streams
      sending: { concurrency: 4, batchSize: BATCH, streamFrom: 0 },
    }),
  );
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
    const keys = Array.from({ length: RECORDS }, (_, i) => `S${i}`);
    await writeFile(join(tmp.dir, 'inbox', 'cadastros', 'BIG_S.csv'), `codigo;nome\n${keys.map((k) => `${k};Categoria ${k}`).join('\n')}\n`);
    const outputs: string[] = [];
    const exits = Array.from({ length: 3 }, () => {
      const child = spawnCli(['run', '--config', join(tmp.dir, 'wmsbridge.config.json')], {
        env: { WMS_SECRET_KEY: sb.secretKey, WMSBRIDGE_LOG_LEVEL: 'info' },
      });
      procs.push(child);
      const i = outputs.push('') - 1;
      child.stdout?.on('data', (d: Buffer) => (outputs[i] += d.toString()));
      child.stderr?.on('data', (d: Buffer) => (outputs[i] = (outputs[i] + d.toString()).slice(-20_000)));
      return new Promise<number | null>((r) => child.on('close', r));
    });
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
        await new Promise((res) => setTimeout(res, 50));
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
    const created = ((await sandboxCall(sb, 'GET', '/__sandbox/counts')).json.creations as Record<string, Record<string, number>>)['Category'] ?? {};
    for (const k of keys) assert.equal(created[k] ?? 0, 1, `category ${k} created exactly once`);
    const owner = outputs.findIndex((o) => /"streamed":true/.test(o));
    assert.ok(owner >= 0, 'the owner logged the file as mapped while it was sent (streamed)');
    const results = (await readdir(join(tmp.dir, 'outbox', 'results', 'cadastros'))).filter((f) => f.startsWith('BIG_S.'));
    assert.equal(results.length, 1, `one result file: ${results.join(', ')}`);
    const lines = (await readFile(join(tmp.dir, 'outbox', 'results', 'cadastros', results[0]!), 'utf8')).trim().split('\n');
    assert.equal(lines.length, RECORDS + 1, 'the result lists every record (and a header)');
  },
);
