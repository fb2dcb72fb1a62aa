/**
 * Operations on the same stock are applied in source order (push/sequence.ts): a locks file and an unlocks
 * file touching the same product and lots, the usual nightly pair, are dropped together 20 times (the same
 * content each time: operations files are processed again by default) and sent by `wmsbridge run` at
 * concurrency 32 against a sandbox whose latency varies per request (concurrent requests are applied out of
 * their arrival order). Every time, the sandbox's arrival log shows the operations on that stock in source
 * order and the final material statuses are the ones the files mean. Independent stock keeps concurrency.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdir, readFile, writeFile, utimes } from 'node:fs/promises';
import { join } from 'node:path';
import { makeTempDir } from '../helpers/tmp.js';
import { runCli } from '../helpers/cli.js';
import { startSandbox, sandboxCall, type Sandbox } from '../helpers/sandbox.js';

let sb: Sandbox;
let tmp: { dir: string; cleanup: () => Promise<void> };

before(async () => {
  sb = await startSandbox({ latencyMs: 2, latencyJitterMs: 25 });
  tmp = await makeTempDir('wmsbridge-e2e-sequencing-');
});

after(async () => {
  await sb?.close();
  await tmp?.cleanup();
});

const lockMapping = (name: string, target: string, files: string): string => `name: ${name}
match: { channel: estoque, files: "${files}" }
source: { format: delimited, delimiter: ';', encoding: utf-8 }
target: ${target}
fields:
  warehouseId: { lookup: Warehouse, by: codeERP, from: { const: CD-SP01 } }
  materialStatusId: { lookup: MaterialStatus, by: name, from: situacao }
  productId: { col: produto }
  lotNumber: { col: lote }
`;

interface StockRow {
  warehouseId: string;
  productId: string;
  lotNumber: string;
  materialStatusName: string;
}

test(
  'a locks and an unlocks file on the same stock, dropped together 20 times at concurrency 32: source order and the right final statuses every time',
  { timeout: 420_000 },
  async () => {
    const d = tmp.dir;
    await mkdir(join(d, 'inbox', 'estoque'), { recursive: true });
    await mkdir(join(d, 'mappings'), { recursive: true });
    await writeFile(join(d, 'mappings', 'bloq.yaml'), lockMapping('bloq', 'StockLock', 'BLOQUEIOS_*.csv'));
    await writeFile(join(d, 'mappings', 'desbloq.yaml'), lockMapping('desbloq', 'StockUnlock', 'DESBLOQUEIOS_*.csv'));
    await writeFile(
      join(d, 'wmsbridge.config.json'),
      JSON.stringify({
        inboxDir: 'inbox',
        outboxDir: 'outbox',
        mappingsDir: 'mappings',
        stateDir: 'state',
        channels: [{ name: 'estoque', readiness: { mode: 'stable', checks: 1, intervalMs: 10 } }],
        wms: { url: sb.url, accessKeyId: sb.accessKeyID },
        // the summary lines these tests read, in English (the outbox's language is not what they test)
        outbox: { locale: 'en' },
        sending: { concurrency: 32 },
      }),
    );

    const stockOf = async (): Promise<StockRow[]> => (await sandboxCall(sb, 'GET', '/__sandbox/state?resource=Stock')).json.stored;
    const seeded = await stockOf();
    const products = (await sandboxCall(sb, 'GET', '/__sandbox/state?resource=Product')).json as Array<{ id: string }>;
    const cdsp = ((await sandboxCall(sb, 'GET', '/__sandbox/state?resource=Warehouse')).json as Array<{ id: string; codeERP: string }>).find(
      (w) => w.codeERP === 'CD-SP01',
    )!.id;
    // the product with three lots in CD-SP01 (A, B and X, X already blocked)
    const p = products.find((x) => seeded.filter((s) => s.productId === x.id && s.warehouseId === cdsp).length === 3)!.id;
    const lot = (suffix: string): string => seeded.find((s) => s.productId === p && s.warehouseId === cdsp && s.lotNumber.endsWith(suffix))!.lotNumber;
    const [A, B, X] = [lot('A'), lot('B'), lot('X')];
    // independent stock: lot A of other products, locked then unlocked
    const others = products.filter((x) => x.id !== p && seeded.some((s) => s.productId === x.id && s.warehouseId === cdsp)).slice(0, 12);
    const otherA = (id: string): string => seeded.find((s) => s.productId === id && s.warehouseId === cdsp && s.lotNumber.endsWith('A'))!.lotNumber;

    const locks = [
      ['produto;lote;situacao'],
      [`${p};;Bloqueado`], // every lot of the product
      [`${p};${A};Avariado`],
      ...others.map((o) => [`${o.id};${otherA(o.id)};Bloqueado`]),
      [`${p};${A};Quarentena`],
      [`${p};${B};Vencido`],
    ].join('\n');
    const unlocks = ['produto;lote;situacao', `${p};${B};Disponível`, ...others.map((o) => `${o.id};${otherA(o.id)};Disponível`), `${p};${X};Disponível`].join(
      '\n',
    );
    // the operations on product p, in source order (locks file first: same drop time, then name)
    const expected = [
      ['lock', '', 'Bloqueado'],
      ['lock', A, 'Avariado'],
      ['lock', A, 'Quarentena'],
      ['lock', B, 'Vencido'],
      ['unlock', B, 'Disponível'],
      ['unlock', X, 'Disponível'],
    ];
    await writeFile(join(d, 'unlocks.csv'), unlocks);
    const statuses = (await sandboxCall(sb, 'GET', '/__sandbox/state?resource=MaterialStatus')).json as Array<{ id: string; name: string }>;
    const statusName = new Map(statuses.map((s) => [s.id, s.name]));

    const started = Date.now();
    let peak = 0;
    for (let i = 0; i < 20; i++) {
      await sandboxCall(sb, 'POST', '/__sandbox/reset');
      const at = new Date();
      await writeFile(join(d, 'inbox', 'estoque', 'DESBLOQUEIOS_20241105.csv'), unlocks);
      await writeFile(join(d, 'inbox', 'estoque', 'BLOQUEIOS_20241105.csv'), locks);
      // dropped together: the same modification time (the unlocks file was even written first)
      for (const f of ['DESBLOQUEIOS_20241105.csv', 'BLOQUEIOS_20241105.csv']) await utimes(join(d, 'inbox', 'estoque', f), at, at);
      const res = await runCli(['run', '--config', join(d, 'wmsbridge.config.json')], {
        env: { WMS_SECRET_KEY: sb.secretKey, WMSBRIDGE_LOG_LEVEL: 'warn' },
        timeoutMs: 60_000,
      });
      assert.equal(res.code, 0, `run ${i + 1}: exit 0 expected\n${res.stdout}\n${res.stderr.slice(-2000)}`);
      assert.match(res.stdout, new RegExp(`${4 + others.length + 2 + others.length} updated`), `run ${i + 1}: every operation applied (${res.stdout})`);

      const arrivals = (await sandboxCall(sb, 'GET', '/__sandbox/arrivals?path=/open/v1/Stock/')).json as Array<{ path: string; body: Record<string, string> }>;
      const onP = arrivals
        .filter((a) => a.body?.['productId'] === p)
        .map((a) => [a.path.endsWith('/unlock') ? 'unlock' : 'lock', a.body['lotNumber'] ?? '', statusName.get(a.body['materialStatusId']!) ?? '?']);
      assert.equal(onP.length, expected.length, `run ${i + 1}: each operation on the stock applied once`);
      // per lot, the operations touching it (those on the lot, and those on every lot) in source order;
      // different lots are independent stock
      for (const l of [A, B, X]) {
        const touching = (ops: string[][]): string[][] => ops.filter((o) => o[1] === '' || o[1] === l);
        assert.deepEqual(touching(onP), touching(expected), `run ${i + 1}: operations on lot ${l} applied in source order`);
      }

      const final = (await stockOf()).filter((s) => s.warehouseId === cdsp);
      const st = (prod: string, l: string): string => final.find((s) => s.productId === prod && s.lotNumber === l)!.materialStatusName;
      assert.equal(st(p, A), 'Quarentena', `run ${i + 1}: lot A locked twice, last to Quarentena`);
      assert.equal(st(p, B), 'Disponível', `run ${i + 1}: lot B locked then unlocked`);
      assert.equal(st(p, X), 'Disponível', `run ${i + 1}: lot X unlocked after the whole product was locked`);
      for (const o of others) assert.equal(st(o.id, otherA(o.id)), 'Disponível', `run ${i + 1}: independent stock locked then unlocked`);
      peak = Math.max(peak, (await sandboxCall(sb, 'GET', '/__sandbox/counts')).json.concurrency.peak);
    }
    // independent stock is not serialised: several requests were in the sandbox at once
    assert.ok(peak >= 4, `independent stock keeps its concurrency (peak ${peak})`);
    assert.ok(Date.now() - started < 400_000);
  },
);

test('a channel with noChange: attention makes a run whose operations changed nothing exit 1', { timeout: 120_000 }, async () => {
  const d = tmp.dir;
  const cfgPath = join(d, 'wmsbridge.config.json');
  const cfg = JSON.parse(await readFile(cfgPath, 'utf8'));
  // after the last run every stock the unlocks file names is available already
  const run = async (): Promise<{ code: number | null; stdout: string }> => {
    await writeFile(join(d, 'inbox', 'estoque', 'DESBLOQUEIOS_20241105.csv'), await readFile(join(d, 'unlocks.csv')));
    return runCli(['run', '--config', cfgPath], { env: { WMS_SECRET_KEY: sb.secretKey, WMSBRIDGE_LOG_LEVEL: 'warn' }, timeoutMs: 60_000 });
  };
  const warned = await run();
  assert.equal(warned.code, 0, warned.stdout);
  assert.match(warned.stdout, /\d+ no stock affected/);
  cfg.channels[0].noChange = 'attention';
  await writeFile(cfgPath, JSON.stringify(cfg));
  const stopped = await run();
  assert.equal(stopped.code, 1, stopped.stdout);
  assert.match(stopped.stdout, /\d+ no stock affected/);
});
