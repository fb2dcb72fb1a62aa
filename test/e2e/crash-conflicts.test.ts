/**
 * A conflict on a create is evidence of delivery. Against a sandbox that refuses a second create with the
 * same natural key (dialect duplicates=refuse: 409 naming the key and the existing id), with connections
 * dropped after the WMS applied the request (answers lost), 500s and 429s, `wmsbridge run` is killed with
 * SIGKILL at random points and restarted; then the faults stop and two clean runs follow. In the end every
 * category, family and product exists exactly once and is delivered in the journal (the re-sends the WMS
 * refused are `already-existed`, with the WMS's id), nothing is rejected, failed or pending, and the only
 * records held are picking lists truly in doubt (a kill or a lost answer while they were in flight); every
 * other picking list was created once, its product references resolved.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { makeTempDir } from '../helpers/tmp.js';
import { runCli } from '../helpers/cli.js';
import { crashLoop, killDelays } from '../helpers/crash-loop.js';
import { startSandbox, sandboxCall, type Sandbox } from '../helpers/sandbox.js';

const CATEGORIES = 20;
const FAMILIES = 40;
const PRODUCTS = 600;
const ORDERS = 80;
const MAX_KILLS = 8;

let sb: Sandbox;
let tmp: { dir: string; cleanup: () => Promise<void> };

before(async () => {
  sb = await startSandbox({ latencyMs: 5, dialect: 'duplicates=refuse', resetRate: 0.08, failRate: 0.03, rate429: 0.02 });
  tmp = await makeTempDir('wmsbridge-crash-conflicts-');
  const d = tmp.dir;
  for (const ch of ['cadastros', 'pedidos']) await mkdir(join(d, 'inbox', ch), { recursive: true });
  await mkdir(join(d, 'mappings'));
  const csv = (name: string, target: string, channel: string, files: string, fields: string, extra = ''): Promise<void> =>
    writeFile(
      join(d, 'mappings', `${name}.yaml`),
      `name: ${name}\nmatch: { channel: ${channel}, files: "${files}" }\nsource: { format: delimited, delimiter: ';', encoding: utf-8 }\ntarget: ${target}\n${extra}fields:\n${fields}`,
    );
  await csv('cat', 'Category', 'cadastros', 'CAT_*.csv', '  codeERP: { col: codigo }\n  name: { col: nome }\n');
  await csv('fam', 'Family', 'cadastros', 'FAM_*.csv', '  codeERP: { col: codigo }\n  name: { col: nome }\n  categoryID: { ref: Category, from: categoria }\n');
  await csv(
    'prod',
    'Product',
    'cadastros',
    'PROD_*.csv',
    [
      '  code: { col: codigo }',
      '  codeERP: { col: codigo }',
      '  name: { col: nome }',
      '  categoryID: { ref: Category, from: categoria }',
      '  familyID: { ref: Family, from: familia }',
      '  logisticsProfileID: { lookup: LogisticsProfile, by: mnemonic, from: { const: PADRAO } }',
      '  unitmeasurement: { const: UN }',
      '',
    ].join('\n'),
  );
  await csv(
    'ped',
    'PickingList',
    'pedidos',
    'PED_*.csv',
    [
      '  order: { col: pedido }',
      "  codeERP: { template: 'PickingList:{pedido}', transforms: [uuid5] }",
      '  companyID: { lookup: Company, by: name, from: { const: Distribuidora Paulista de Alimentos Ltda } }',
      '  branchID: { lookup: Branch, by: name, from: { const: Matriz São Paulo } }',
      '  warehouseID: { lookup: Warehouse, by: codeERP, from: { const: CD-SP01 } }',
      "  ownerID: { lookup: Owners, by: code, from: { const: '001' } }",
      '',
    ].join('\n'),
    'group: { by: { col: pedido }, items: pickingItens, itemFields: { productID: { ref: Product, from: produto }, quantity: { col: qtd, transforms: [number] } } }\n',
  );
  const cats = ['codigo;nome', ...Array.from({ length: CATEGORIES }, (_, i) => `K${i};Categoria ${i}`)];
  const fams = ['codigo;nome;categoria', ...Array.from({ length: FAMILIES }, (_, i) => `F${i};Familia ${i};K${i % CATEGORIES}`)];
  const prods = [
    'codigo;nome;categoria;familia',
    ...Array.from({ length: PRODUCTS }, (_, i) => `${String(7000 + i).padStart(6, '0')};Produto ${i};K${(i % FAMILIES) % CATEGORIES};F${i % FAMILIES}`),
  ];
  const peds = [
    'pedido;produto;qtd',
    ...Array.from({ length: ORDERS }, (_, i) => `${800000 + i};${String(7000 + ((i * 7) % PRODUCTS)).padStart(6, '0')};${1 + (i % 5)}`),
  ];
  await writeFile(join(d, 'inbox', 'cadastros', 'CAT_1.csv'), cats.join('\n'));
  await writeFile(join(d, 'inbox', 'cadastros', 'FAM_1.csv'), fams.join('\n'));
  await writeFile(join(d, 'inbox', 'cadastros', 'PROD_1.csv'), prods.join('\n'));
  await writeFile(join(d, 'inbox', 'pedidos', 'PED_1.csv'), peds.join('\n'));
  await writeFile(
    join(d, 'wmsbridge.config.json'),
    JSON.stringify({
      inboxDir: 'inbox',
      outboxDir: 'outbox',
      mappingsDir: 'mappings',
      stateDir: 'state',
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

test(
  'kill -9 loop with answers lost after the WMS applied them, against a WMS that refuses duplicates: everything delivered, only true in-doubt documents held',
  { timeout: 300_000 },
  async (t) => {
    const env = { WMS_SECRET_KEY: sb.secretKey, WMSBRIDGE_LOG_LEVEL: 'warn' };
    const cfg = ['--config', join(tmp.dir, 'wmsbridge.config.json')];
    // the kill delay counts from the first request of the run (a loaded machine may take seconds to start it);
    // a run that finished is followed by the next one, which retries what failed
    const kills = await crashLoop({ args: ['run', ...cfg], env, maxRuns: MAX_KILLS, delays: killDelays(7, 100), firstRequestOn: sb, whenARunEnds: 'continue' });
    const faulted = (await sandboxCall(sb, 'GET', '/__sandbox/counts')).json.stats.faults;
    await sandboxCall(sb, 'POST', '/__sandbox/faults', { body: { resetRate: 0, failRate: 0, rate429: 0 } });
    for (let i = 0; i < 2; i++) {
      const r = await runCli(['run', ...cfg], { env, timeoutMs: 120_000 });
      assert.ok(r.code === 0 || r.code === 1, `clean run ${i + 1} exit ${r.code}: ${r.stdout}\n${r.stderr.slice(-2000)}`);
    }
    assert.ok(kills >= 2, `the test must actually kill runs mid-way (killed ${kills})`);
    assert.ok(faulted.resetAfter >= 1, `answers must have been lost after the WMS applied them (${JSON.stringify(faulted)})`);

    const counts = (await sandboxCall(sb, 'GET', '/__sandbox/counts')).json;
    const created = counts.creations as Record<string, Record<string, number>>;
    for (let i = 0; i < CATEGORIES; i++) assert.equal(created['Category']?.[`K${i}`], 1, `category K${i} exactly once`);
    for (let i = 0; i < FAMILIES; i++) assert.equal(created['Family']?.[`F${i}`], 1, `family F${i} exactly once`);
    for (let i = 0; i < PRODUCTS; i++) assert.equal(created['Product']?.[String(7000 + i).padStart(6, '0')], 1, `product ${7000 + i} exactly once`);

    const db = new Database(join(tmp.dir, 'state', 'journal.db'), { readonly: true });
    try {
      const byStatus = Object.fromEntries(
        (db.prepare('SELECT status, count(*) AS n FROM records GROUP BY status').all() as Array<{ status: string; n: number }>).map((r) => [r.status, r.n]),
      );
      const open = db.prepare("SELECT id, target, key, status, outcome, error FROM records WHERE status <> 'sent'").all() as Array<{
        id: number;
        target: string;
        key: string;
        status: string;
        outcome: string;
        error: string;
      }>;
      const notInDoubt = open.filter((r) => !(r.target === 'PickingList' && r.status === 'held' && r.outcome === 'in-doubt'));
      assert.deepEqual(notInDoubt, [], `only picking lists truly in doubt may stay open (records by status ${JSON.stringify(byStatus)})`);
      // master data re-sent after a lost answer or a kill and refused as a duplicate: delivered, with the id
      const existed = db.prepare("SELECT count(*) AS n, sum(wms_id IS NULL) AS noId FROM records WHERE outcome = 'already-existed'").get() as {
        n: number;
        noId: number | null;
      };
      assert.ok(existed.n >= 1, 'some re-sends were refused as duplicates and taken as delivered');
      assert.equal(existed.noId ?? 0, 0, 'the WMS id came from the 409 answer');
      // the held ones are at most the documents in flight at a kill or whose answer was lost
      const held = open.map((r) => r.key.split('|')[0]!);
      t.diagnostic(`kills ${kills}; faults ${JSON.stringify(faulted)}; already-existed ${existed.n}; picking lists held in doubt ${held.length}`);
      assert.ok(held.length <= kills * 8 + faulted.resetAfter, `${held.length} picking lists held: more than kills and lost answers explain`);
      const plKeys = Object.keys(created['PickingList'] ?? {});
      for (let i = 0; i < ORDERS; i++) {
        const order = String(800000 + i);
        const n = plKeys.filter((k) => k.startsWith(`${order}|`)).reduce((s, k) => s + (created['PickingList']![k] ?? 0), 0);
        assert.ok(n <= 1, `order ${order} created ${n} times`);
        if (n === 0) assert.ok(held.includes(order), `order ${order} neither delivered nor held in doubt`);
      }
    } finally {
      db.close();
    }
  },
);
