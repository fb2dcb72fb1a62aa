/**
 * Crash safety: `wmsbridge run` is killed with SIGKILL at random points, again and again, and restarted,
 * over a drop of categories (no read-back: resend policy), providers (read-back by codeERP) and picking
 * lists (documents: hold policy). In the end nothing is lost: every category exists (duplicates only from
 * sends that were in flight at a kill), every provider exists exactly once, and every order exists exactly
 * once or is listed as held in doubt (and then exists at most once).
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { makeTempDir } from '../helpers/tmp.js';
import { runCli } from '../helpers/cli.js';
import { crashLoop, killDelays } from '../helpers/crash-loop.js';
import { startSandbox, sandboxCall, type Sandbox } from '../helpers/sandbox.js';
import { categoryMapping, pickingListMapping, providerMapping, seededProductId } from '../helpers/fixtures.js';
import { sendWindow } from '../../src/push/send-queue.js';
import { cnpjCheckDigits } from '../../src/map/checks.js';

const CATEGORIES = 2000;
const PROVIDERS = 200;
const ORDERS = 150;
const MAX_KILLS = 10;

let sb: Sandbox;
let tmp: { dir: string; cleanup: () => Promise<void> };

function cnpj(i: number): string {
  const base = `${String(10_000_000 + i).padStart(8, '0')}0001`;
  return base + cnpjCheckDigits(base);
}

before(async () => {
  sb = await startSandbox({ latencyMs: 10 });
  tmp = await makeTempDir('wmsbridge-crash-');
  const d = tmp.dir;
  for (const ch of ['cadastros', 'pedidos']) await mkdir(join(d, 'inbox', ch), { recursive: true });
  await mkdir(join(d, 'mappings'));
  // seed facts for the orders: a product id the sandbox already has
  const productId = await seededProductId(sb);

  await writeFile(join(d, 'mappings', 'cat.yaml'), categoryMapping({ channel: 'cadastros', files: 'CAT_*.csv' }));
  await writeFile(join(d, 'mappings', 'prov.yaml'), providerMapping({ channel: 'cadastros', files: 'PROV_*.csv' }));
  await writeFile(join(d, 'mappings', 'ped.yaml'), pickingListMapping({ channel: 'pedidos', files: 'PED_*.csv' }));
  const cats = ['codigo;nome', ...Array.from({ length: CATEGORIES }, (_, i) => `C${i};Categoria ${i}`)];
  await writeFile(join(d, 'inbox', 'cadastros', 'CAT_1.csv'), cats.join('\n'));
  const provs = ['codigo;cnpj;nome', ...Array.from({ length: PROVIDERS }, (_, i) => `P${i};${cnpj(i)};Fornecedor ${i} Ltda`)];
  await writeFile(join(d, 'inbox', 'cadastros', 'PROV_1.csv'), provs.join('\n'));
  const peds = ['pedido;produto;qtd', ...Array.from({ length: ORDERS }, (_, i) => `${500000 + i};${productId};${1 + (i % 7)}`)];
  await writeFile(join(d, 'inbox', 'pedidos', 'PED_1.csv'), peds.join('\n'));
  await writeFile(
    join(d, 'wmsbridge.config.json'),
    JSON.stringify({
      channels: [
        { name: 'cadastros', readiness: { mode: 'stable', checks: 1, intervalMs: 10 } },
        { name: 'pedidos', readiness: { mode: 'stable', checks: 1, intervalMs: 10 } },
      ],
      sending: { concurrency: 8 },
      wms: { url: sb.url, accessKeyId: sb.accessKeyID, retries: 2, timeoutMs: 5000 },
    }),
  );
});

after(async () => {
  await sb?.close();
  await tmp?.cleanup();
});

test('kill -9 at random points, restart, repeat: nothing lost, nothing duplicated where a read-back allows', { timeout: 240_000 }, async () => {
  const env = { WMS_SECRET_KEY: sb.secretKey, WMSBRIDGE_LOG_LEVEL: 'warn' };
  const cfg = ['--config', join(tmp.dir, 'wmsbridge.config.json')];
  // a run that finishes before its kill ends the loop
  const kills = await crashLoop({ args: ['run', ...cfg], env, maxRuns: MAX_KILLS, delays: killDelays(42, 300), whenARunEnds: 'stop' });
  // the final, uninterrupted run settles everything
  const final = await runCli(['run', ...cfg], { env, timeoutMs: 120_000 });
  assert.ok(final.code === 0 || final.code === 1, `final run exit ${final.code}: ${final.stderr.slice(-2000)}`);
  assert.ok(kills >= 2, `the test must actually kill runs mid-way (killed ${kills})`);

  const counts = (await sandboxCall(sb, 'GET', '/__sandbox/counts')).json;
  const created = counts.creations as Record<string, Record<string, number>>;
  // categories: none lost; duplicates only from sends in the window at a kill (in flight, or answered and not
  // yet settled: at most sendWindow(8) per kill)
  let catDup = 0;
  for (let i = 0; i < CATEGORIES; i++) {
    const n = created['Category']?.[`C${i}`] ?? 0;
    assert.ok(n >= 1, `category C${i} lost`);
    catDup += n - 1;
  }
  assert.ok(catDup <= kills * sendWindow(8), `category duplicates ${catDup} exceed what ${kills} kills can explain`);
  // providers: exactly once (read-back by codeERP settles in-doubt sends)
  for (let i = 0; i < PROVIDERS; i++) assert.equal(created['Provider']?.[`P${i}`] ?? 0, 1, `provider P${i} exactly once`);

  // orders: exactly once, or held in doubt (and then at most once)
  const status = await runCli(['status', '--json', '--limit', '1000', ...cfg], { env });
  assert.equal(status.code, 0, status.stderr);
  const st = JSON.parse(status.stdout) as { attention: Array<{ target: string; key: string; status: string }>; records: Record<string, number> };
  // a picking list's key is order|owner
  const heldKeys = st.attention.filter((a) => a.target === 'PickingList' && a.status === 'held').map((a) => a.key);
  const held = new Set(heldKeys.map((k) => k.split('|')[0]));
  // held in doubt: at most the requests in flight per kill (a document is marked only once it has one of
  // the 8 request slots; master data is marked ahead, up to sendWindow(8), because it resolves itself)
  assert.ok(heldKeys.length <= kills * 8, `${heldKeys.length} orders held in doubt: more than ${kills} kills x concurrency 8 can explain`);
  const plKeys = Object.keys(created['PickingList'] ?? {});
  for (let i = 0; i < ORDERS; i++) {
    const order = String(500000 + i);
    const n = plKeys.filter((k) => k.startsWith(`${order}|`)).reduce((s, k) => s + (created['PickingList']![k] ?? 0), 0);
    assert.ok(n <= 1, `order ${order} created ${n} times`);
    if (n === 0)
      assert.ok(
        held.has(order),
        `order ${order} neither delivered nor held: lost (${JSON.stringify(st.attention.filter((a) => a.key === order))}; records ${JSON.stringify(st.records)})`,
      );
  }
  assert.equal(st.records['pending'] ?? 0, 0, 'nothing left pending');
  assert.equal(st.records['sending'] ?? 0, 0, 'nothing left in flight');
});
