/**
 * A document whose send may have reached the WMS (the connection dropped after the request was written)
 * is held for a person, never resent blindly; `status` lists it, `run` keeps exiting 1 while it waits,
 * and `resolve` settles it: --retry sends it again (the person checked the WMS), --mark-sent records
 * that the WMS has it.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { makeTempDir } from '../helpers/tmp.js';
import { runCli } from '../helpers/cli.js';
import { startSandbox, sandboxCall, type Sandbox } from '../helpers/sandbox.js';
import { pickingListMapping, seededProductId } from '../helpers/fixtures.js';

const ORDERS = Array.from({ length: 12 }, (_, i) => String(900001 + i));
let sb: Sandbox;
let tmp: { dir: string; cleanup: () => Promise<void> };
const env = () => ({ WMS_SECRET_KEY: sb.secretKey, WMSBRIDGE_LOG_LEVEL: 'warn' });
const cfg = () => ['--config', join(tmp.dir, 'wmsbridge.config.json')];

before(async () => {
  sb = await startSandbox();
  tmp = await makeTempDir('wmsbridge-resolve-');
  await mkdir(join(tmp.dir, 'inbox', 'pedidos'), { recursive: true });
  await mkdir(join(tmp.dir, 'mappings'));
  const productId = await seededProductId(sb);
  await writeFile(join(tmp.dir, 'mappings', 'ped.yaml'), pickingListMapping({ channel: 'pedidos', files: 'PED_*.csv' }));
  const lines = Array.from({ length: ORDERS.length }, (_, i) => `${ORDERS[i]};${productId};${i + 1}`);
  await writeFile(join(tmp.dir, 'inbox', 'pedidos', 'PED_1.csv'), `pedido;produto;qtd\n${lines.join('\n')}\n`);
  await writeFile(
    join(tmp.dir, 'wmsbridge.config.json'),
    JSON.stringify({
      channels: [{ name: 'pedidos', readiness: { mode: 'stable', checks: 1, intervalMs: 10 } }],
      wms: { url: sb.url, accessKeyId: sb.accessKeyID, retries: 10, timeoutMs: 5000 },
    }),
  );
});

after(async () => {
  await sb?.close();
  await tmp?.cleanup();
});

test('an in-doubt document is held, listed, keeps the run at exit 1, and is settled by resolve', { timeout: 120_000 }, async () => {
  // half the connections dropped: reads are retried away, POSTs whose body went out end in doubt
  // (12 orders: the chance that none is in doubt is 0.5^12)
  sb.setFaults({ resetRate: 0.5 });
  const first = await runCli(['run', ...cfg()], { env: env(), timeoutMs: 60_000 });
  sb.setFaults({ resetRate: 0 });
  assert.equal(first.code, 1, `held documents make the run exit 1\n${first.stdout}\n${first.stderr.slice(-2000)}`);

  const list = await runCli(['resolve', '--list', ...cfg()], { env: env() });
  assert.equal(list.code, 0, list.stderr);
  const ids = [...list.stdout.matchAll(/^#(\d+) (held|in-doubt|failed) PickingList (\d+)/gm)].map((m) => ({ id: m[1]!, order: m[3]! }));
  assert.ok(ids.length >= 1, `held records listed:\n${list.stdout}\n${list.stderr}`);
  assert.match(list.stdout, /in doubt/);

  // nothing new: a second run still says something waits
  const again = await runCli(['run', ...cfg()], { env: env() });
  assert.equal(again.code, 1);
  assert.match(again.stdout, /aguardam `wmsbridge resolve`/);

  // the person checks the WMS: the first order is there (mark it), the second is not (retry it)
  const created = ((await sandboxCall(sb, 'GET', '/__sandbox/counts')).json.creations.PickingList ?? {}) as Record<string, number>;
  const inWms = (order: string) => Object.keys(created).some((k) => k.startsWith(`${order}|`));
  const toMark = ids.filter((r) => inWms(r.order)).map((r) => r.id);
  const toRetry = ids.filter((r) => !inWms(r.order)).map((r) => r.id);
  if (toMark.length) {
    const m = await runCli(['resolve', '--mark-sent', '--ids', toMark.join(','), ...cfg()], { env: env() });
    assert.equal(m.code, 0, m.stderr);
  }
  if (toRetry.length) {
    const r = await runCli(['resolve', '--retry', '--ids', toRetry.join(','), ...cfg()], { env: env() });
    assert.equal(r.code, 0, `${r.stdout}\n${r.stderr}`);
  }
  const final = await runCli(['run', ...cfg()], { env: env() });
  assert.equal(final.code, 0, `nothing waits any more\n${final.stdout}`);
  const after = ((await sandboxCall(sb, 'GET', '/__sandbox/counts')).json.creations.PickingList ?? {}) as Record<string, number>;
  for (const order of ORDERS) {
    const n = Object.entries(after)
      .filter(([k]) => k.startsWith(`${order}|`))
      .reduce((a, [, v]) => a + v, 0);
    assert.equal(n, 1, `order ${order} exists exactly once`);
  }
});
