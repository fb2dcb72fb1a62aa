/**
 * Three one-shot `wmsbridge run` processes started together on one inbox holding ONE big file, one PostgreSQL
 * journal (issue 19, docs/SCALING.md "Record batches"): one wins the file's claim and sends it, the two that lost the
 * race help with it. The claimer journals the file only after moving and hashing it, so a loser that looked for work
 * once, at once, could find nothing and end: the cluster bench measured three instances at the pace of two. Each
 * loser now says in its line what it sent for the other instance; every category is created exactly once.
 * (The deterministic half of this is unit/help-claimers: the race itself does not show on every run.)
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { categoryCluster, type CategoryCluster } from '../helpers/cluster.js';
import { runCli } from '../helpers/cli.js';
import { startSandbox, sandboxCall, type Sandbox } from '../helpers/sandbox.js';
import { assertPostgresReachable, dropSchema, freshSchemaName, pgQuery, postgresSkipReason } from '../helpers/postgres.js';

const skip = postgresSkipReason();
const RECORDS = 1200;

let sb: Sandbox;
let tmp: CategoryCluster;
let schema: string;

before(async () => {
  if (skip) return;
  await assertPostgresReachable();
  schema = freshSchemaName('runs');
  // 50 ms a request, 4 at a time: the winner alone would need 15 s, so the others have time to join
  sb = await startSandbox({ latencyMs: 50 });
  tmp = await categoryCluster({
    prefix: 'wmsbridge-cluster-runs-',
    files: 'CAT_*.csv',
    sb,
    schema,
    leaseTtlMs: 5000,
    readiness: { checks: 1, intervalMs: 10 },
    sending: { concurrency: 4 },
  });
});

after(async () => {
  await sb?.close();
  await tmp?.cleanup();
  if (schema) await dropSchema(schema).catch(() => {});
});

test('three `run` processes on one big file: the two that lost its claim help send it, each category once', { skip, timeout: 180_000 }, async () => {
  await writeFile(join(tmp.inbox, 'CAT_0.csv'), `codigo;nome\n${Array.from({ length: RECORDS }, (_, i) => `R${i};Categoria R${i}`).join('\n')}\n`);
  const env = { WMS_SECRET_KEY: sb.secretKey, WMSBRIDGE_LOG_LEVEL: 'info' };
  const runs = await Promise.all([0, 1, 2].map(() => runCli(['run', '--config', tmp.configPath], { env, timeoutMs: 150_000 })));
  for (const r of runs) assert.equal(r.code, 0, `${r.stdout}\n${r.stderr.slice(-3000)}`);
  const helped = runs.map((r) => /(\d[\d.]*) registro\(s\) de 1 arquivo\(s\) de outras instâncias enviados/.exec(r.stdout));
  const helpers = helped.filter((m) => m !== null).map((m) => Number(m[1]!.replaceAll('.', '')));
  assert.equal(helpers.length, 2, `the two runs that lost the claim say what they sent for the winner:\n${runs.map((r) => r.stdout).join('\n---\n')}`);
  assert.ok(
    helpers.every((n) => n > 0),
    `each sent a share: ${helpers.join(', ')}`,
  );
  const byOwner = await pgQuery<{ claim_owner: string | null; n: string }>(
    `SELECT claim_owner, count(*) AS n FROM "${schema}".records WHERE status = 'sent' GROUP BY 1`,
  );
  assert.equal(
    byOwner.reduce((s, r) => s + Number(r.n), 0),
    RECORDS,
    'every record sent',
  );
  const created = ((await sandboxCall(sb, 'GET', '/__sandbox/counts')).json.creations as Record<string, Record<string, number>>)['Category'] ?? {};
  const keys = Object.keys(created).filter((k) => k.startsWith('R'));
  assert.equal(keys.length, RECORDS);
  assert.ok(
    keys.every((k) => created[k] === 1),
    'each category created exactly once',
  );
});
