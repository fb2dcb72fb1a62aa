/**
 * The sample inbox under injected faults: 20% HTTP 500, 5% 429 with Retry-After, 1% dropped connections
 * and a token lifetime of one second. Every valid record is delivered (or, for a document whose send may
 * have reached the WMS, held and listed), nothing is duplicated where a read-back allows, and the exit
 * code says whether something needs attention.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { cp } from 'node:fs/promises';
import { join } from 'node:path';
import { makeTempDir } from '../helpers/tmp.js';
import { runCli, PROJECT_ROOT, workspaceFlags } from '../helpers/cli.js';
import { startSandbox, sandboxCall, type Sandbox } from '../helpers/sandbox.js';

let sb: Sandbox;
let tmp: { dir: string; cleanup: () => Promise<void> };

before(async () => {
  sb = await startSandbox({ seed: 7 });
  tmp = await makeTempDir('wmsbridge-e2e-faults-');
  await cp(join(PROJECT_ROOT, 'inbox'), join(tmp.dir, 'inbox'), { recursive: true, filter: (s) => !s.includes('.wmsbridge') });
});

after(async () => {
  await sb?.close();
  await tmp?.cleanup();
});

test('faults, 429s, resets and a 1 s token: delivered, not duplicated where a read-back allows, honest exit code', { timeout: 240_000 }, async () => {
  sb.setFaults({ failRate: 0.2, rate429: 0.05, resetRate: 0.01, tokenTtlSeconds: 1, latencyMs: 15 });
  const env = { WMS_URL: sb.url, WMS_ACCESS_KEY_ID: sb.accessKeyID, WMS_SECRET_KEY: sb.secretKey, WMSBRIDGE_LOG_LEVEL: 'warn' };
  // with 20% 500s and 5% 429s a call fails six times in a row once in ~4,000: ten retries make "nothing
  // failed for good" a property of the pipeline, not of the dice (the channels are the inbox's folders)
  const { writeFile } = await import('node:fs/promises');
  await writeFile(join(tmp.dir, 'faults.config.json'), JSON.stringify({ wms: { retries: 10 } }));
  const dirs = ['--config', join(tmp.dir, 'faults.config.json'), ...workspaceFlags(tmp.dir)];
  const res = await runCli(['run', ...dirs], { env, timeoutMs: 200_000 });
  assert.ok(res.code === 0 || res.code === 1, `exit ${res.code}: ${res.stderr.slice(-3000)}`);

  sb.setFaults({ failRate: 0, rate429: 0, resetRate: 0, latencyMs: 0 });
  const status = await runCli(['status', '--json', '--limit', '1000', ...dirs], { env });
  const st = JSON.parse(status.stdout) as { records: Record<string, number>; attention: Array<{ target: string; status: string; error: string }> };
  const open = (st.records['held'] ?? 0) + (st.records['failed'] ?? 0) + (st.records['in_doubt'] ?? 0) + (st.records['rejected'] ?? 0);
  const filesInError = /\(\d+ com erro\)/.test(res.stdout);
  assert.equal(
    res.code,
    open > 0 || filesInError ? 1 : 0,
    `exit code ${res.code} must say whether ${open} record(s) need attention\n${res.stdout}\n${res.stderr.slice(-3000)}`,
  );
  // nothing failed for good: retries absorbed the 500s, 429s and token expiries
  assert.equal(st.records['failed'] ?? 0, 0, `failed records: ${JSON.stringify(st.attention.filter((a) => a.status === 'failed'))}`);
  // what is held is held because a send may have reached the WMS, and says so
  for (const a of st.attention.filter((x) => x.status === 'held')) assert.match(a.error, /in doubt|depends on/);

  const c = (await sandboxCall(sb, 'GET', '/__sandbox/counts')).json as { creations: Record<string, Record<string, number>>; stats: Record<string, unknown> };
  for (const resource of ['Provider', 'ShippingCompany', 'Owners', 'PickingList', 'PurchaseOrder']) {
    for (const [key, n] of Object.entries(c.creations[resource] ?? {})) assert.ok(n <= 1, `${resource} ${key} created ${n} times`);
  }
  // the faults really happened
  const injected = c.stats['faults'] as Record<string, number>;
  assert.ok(injected['failRate']! > 0, `500s were injected: ${JSON.stringify(injected)}`);
  assert.ok(injected['rate429']! > 0, `429s were injected: ${JSON.stringify(injected)}`);
  assert.ok((c.stats['refreshes'] as number) + (c.stats['authorizations'] as number) > 1, 'the 1 s tokens expired and were renewed');
});

test('records that failed because the WMS was down are sent by the next run, without a person', { timeout: 120_000 }, async () => {
  const { mkdir, writeFile } = await import('node:fs/promises');
  const d = join(tmp.dir, 'down');
  await mkdir(join(d, 'inbox', 'cadastros'), { recursive: true });
  await mkdir(join(d, 'mappings'));
  await writeFile(
    join(d, 'mappings', 'cat.yaml'),
    'name: cat\nmatch: { channel: cadastros, files: "CAT_*.csv" }\nsource: { format: delimited, delimiter: ";" }\ntarget: Category\nfields:\n  codeERP: { col: codigo }\n  name: { col: nome }\n',
  );
  await writeFile(join(d, 'inbox', 'cadastros', 'CAT_down.csv'), 'codigo;nome\nDOWN1;Um\nDOWN2;Dois\nDOWN3;Tres\n');
  await writeFile(
    join(d, 'wmsbridge.config.json'),
    JSON.stringify({
      channels: [{ name: 'cadastros', readiness: { mode: 'stable', checks: 1, intervalMs: 10 } }],
      wms: { url: sb.url, accessKeyId: sb.accessKeyID, retries: 1 },
    }),
  );
  const env = { WMS_SECRET_KEY: sb.secretKey, WMSBRIDGE_LOG_LEVEL: 'warn' };
  const cfg = ['--config', join(d, 'wmsbridge.config.json')];
  const token = await sandboxCall(sb, 'POST', '/open/v1/authorize', { body: { accessKeyID: sb.accessKeyID, secretKey: sb.secretKey } });
  assert.equal(token.status, 200);
  sb.setFaults({ failRate: 1 });
  const down = await runCli(['run', ...cfg], { env });
  sb.setFaults({ failRate: 0 });
  assert.notEqual(down.code, 0, `a run against a WMS that answers 500 is not a success\n${down.stdout}`);
  const c0 = (await sandboxCall(sb, 'GET', '/__sandbox/counts')).json.creations.Category ?? {};
  assert.equal(c0['DOWN1'] ?? 0, 0);
  const next = await runCli(['run', ...cfg], { env });
  assert.equal(next.code, 0, `the next run sends what failed\n${next.stdout}\n${next.stderr.slice(-1500)}`);
  const c1 = (await sandboxCall(sb, 'GET', '/__sandbox/counts')).json.creations.Category ?? {};
  for (const k of ['DOWN1', 'DOWN2', 'DOWN3']) assert.equal(c1[k], 1, `${k} sent once`);
});
