/**
 * runPull against the real sandbox (127.0.0.1, port 0) through the real client, with a real SQLite
 * journal and real temp folders. Small pages (7) so every export spans many pages.
 */
import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, readdirSync, existsSync } from 'node:fs';
import { join } from 'node:path';
import iconv from 'iconv-lite';
import { parse } from 'csv-parse/sync';
import { startSandbox, type Sandbox } from '../helpers/sandbox.js';
import { makeTempDir } from '../helpers/tmp.js';
import { createWmsClient } from '../../src/wms/client.js';
import type { WmsClient } from '../../src/wms/client-types.js';
import { openJournal, type Journal } from '../../src/journal/index.js';
import { silentLogger } from '../../src/shared/logger.js';
import { runPull, inventoryExportedKey } from '../../src/pull/run.js';
import { COLUMN_SETS, INVENTORY_COLUMNS } from '../../src/pull/columns.js';
import { PULL_KINDS, type PullKind, type PullRequest, type RefCacheRefresher } from '../../src/pull/types.js';
import type { RefResource } from '../../src/wms/targets.js';
import { stockSlice, stockTotal } from '../../src/sandbox/stock.js';

const STOCK_RECORDS = 120;
const PAGE = 7;

/** a valid CNPJ from a 12-digit base */
function cnpj(base12: string): string {
  const digits = base12.split('').map(Number);
  const dv = (ds: number[]): number => {
    const weights = ds.length === 12 ? [5, 4, 3, 2, 9, 8, 7, 6, 5, 4, 3, 2] : [6, 5, 4, 3, 2, 9, 8, 7, 6, 5, 4, 3, 2];
    const sum = ds.reduce((acc, d, i) => acc + d * weights[i]!, 0);
    const r = sum % 11;
    return r < 2 ? 0 : 11 - r;
  };
  const d1 = dv(digits);
  const d2 = dv([...digits, d1]);
  return `${base12}${d1}${d2}`;
}

function readCsv(path: string, encoding: 'utf-8' | 'windows-1252' = 'utf-8', delimiter = ';'): string[][] {
  const buf = readFileSync(path);
  const text = encoding === 'windows-1252' ? iconv.decode(buf, 'win1252') : buf.toString('utf8');
  return parse(text, { delimiter, bom: true }) as string[][];
}

function visibleFiles(dir: string): string[] {
  return existsSync(dir)
    ? readdirSync(dir)
        .filter((n) => !n.startsWith('.'))
        .sort()
    : [];
}

let sandbox: Sandbox;
let client: WmsClient;
let journal: Journal;
let tmp: { dir: string; cleanup: () => Promise<void> };
let counter = 0;
const logger = silentLogger();

/** a fresh exports folder per test */
function outDir(): string {
  counter++;
  return join(tmp.dir, `exports-${counter}`);
}

function pull(req: Omit<PullRequest, 'outDir'> & { outDir?: string }, extra: { refCache?: RefCacheRefresher; client?: WmsClient } = {}) {
  const dir = req.outDir ?? outDir();
  const deps: Parameters<typeof runPull>[1] = { client: extra.client ?? client, journal, logger };
  if (extra.refCache) deps.refCache = extra.refCache;
  return runPull({ pageSize: PAGE, ...req, outDir: dir }, deps).then((r) => ({ ...r, dir }));
}

/** ids the sandbox holds for a kind, in its list order */
function expectedIds(kind: PullKind): string[] {
  const c = sandbox.state.collections;
  const ids = (name: keyof typeof c): string[] => c[name].map((r) => r.id);
  switch (kind) {
    case 'company':
      return ids('Company');
    case 'branch':
      return ids('Branch');
    case 'warehouse':
      return ids('Warehouse');
    case 'sub-warehouses':
      return c.Warehouse.flatMap((w) => c.SubWarehouse.filter((s) => s['warehouseID'] === w.id).map((s) => s.id));
    case 'dock':
      return ids('Dock');
    case 'logistics-profiles':
      return ids('LogisticsProfile');
    case 'material-statuses':
      return ids('MaterialStatus');
    case 'owners':
      return ids('Owners');
    case 'providers':
      return ids('Provider');
    case 'shipping-companies':
      return ids('ShippingCompany');
    case 'conversion-factors':
      return ids('ConversionFactor');
    case 'inventory':
      return c.Inventory.flatMap((inv) => (inv['itens'] as Array<{ id: string }>).map((i) => i.id));
    case 'inventory-finished':
      return c.Inventory.filter((inv) => inv['endDate']).flatMap((inv) => (inv['itens'] as Array<{ id: string }>).map((i) => i.id));
    case 'stock':
    case 'stock-search':
      return [];
  }
}

before(async () => {
  tmp = await makeTempDir('wmsbridge-pull-');
  sandbox = await startSandbox({ stockRecords: STOCK_RECORDS });
  client = createWmsClient({ baseUrl: sandbox.url, accessKeyID: sandbox.accessKeyID, secretKey: sandbox.secretKey, pageSize: 100, logger });
  journal = await openJournal({ kind: 'sqlite', path: join(tmp.dir, 'journal.db') });
  // enough reference records that the sent kinds span several pages of 7
  const company = sandbox.state.collections.Company[0]!.id;
  const product = sandbox.state.collections.Product[0]!;
  const units = sandbox.state.collections.UnitMeasurement;
  await client.createProvider({ socialName: 'Comercial A|B; "Filial" Ltda', cnpj: cnpj('778889990001'), codeERP: 'FQ' });
  for (let i = 0; i < 16; i++) {
    const n = String(i).padStart(2, '0');
    await client.createProvider({
      socialName: `Fornecedor ${n} Indústria e Comércio Ltda`,
      cnpj: cnpj(`1122233300${n}`),
      codeERP: `F${n}`,
      city: 'São Paulo',
      state: 'SP',
    });
    await client.createShippingCompany({ cnpj: cnpj(`4455566600${n}`), name: `Transportes Ágil ${n}`, codeERP: `T${n}`, status: 1 });
    await client.createOwner({ companyID: company, name: `Dono ${n}`, code: `D${n}` });
    await client.createConversionFactor({
      codeERP: `CF${n}`,
      productID: product.id,
      name: `Caixa com ${i + 2}`,
      unitMeasurementInputID: units[0]!.id,
      unitMeasurementInputCount: i + 2,
      unitMeasurementOutputID: units[1]!.id,
    });
  }
});

after(async () => {
  await client?.close();
  await journal?.close();
  await sandbox?.close();
  await tmp?.cleanup();
});

describe('every kind, CSV (defaults: UTF-8 BOM, ;)', () => {
  for (const kind of PULL_KINDS) {
    if (kind === 'stock' || kind === 'stock-search') continue;
    test(kind, async () => {
      const r = await pull({ what: kind, force: true, ...(kind.startsWith('inventory') ? { pageSize: 1 } : {}) });
      assert.ok(r.file, 'a file was written');
      assert.match(r.file, new RegExp(`${kind}-\\d{8}-\\d{6}\\.csv$`));
      assert.deepEqual(visibleFiles(r.dir), [r.file.slice(r.dir.length + 1)]);
      const bytes = readFileSync(r.file);
      assert.deepEqual([...bytes.subarray(0, 3)], [0xef, 0xbb, 0xbf], 'UTF-8 BOM');
      const [header, ...rows] = readCsv(r.file);
      assert.deepEqual(header, [...COLUMN_SETS[kind].columns]);
      const expected = expectedIds(kind);
      assert.ok(expected.length > 0, `the sandbox has ${kind} records`);
      assert.equal(r.records, expected.length);
      // the id column (items for inventories) in the sandbox's order: every page, nothing twice
      const idCol = header!.indexOf('id');
      assert.deepEqual(
        rows.map((row) => row[idCol]),
        expected,
      );
    });
  }

  test('reference kinds with more than one page really used several pages', () => {
    assert.ok(sandbox.state.collections.Provider.length > PAGE * 2);
    assert.ok(sandbox.state.collections.Owners.length > PAGE * 2);
  });

  test('sub-warehouses carry their warehouse id, ERP code and name', async () => {
    const r = await pull({ what: 'sub-warehouses' });
    const [header, ...rows] = readCsv(r.file!);
    const col = (n: string) => header!.indexOf(n);
    const wh = new Map(sandbox.state.collections.Warehouse.map((w) => [w.id, w]));
    assert.ok(rows.length > 0);
    for (const row of rows) {
      const w = wh.get(row[col('warehouse_id')]!);
      assert.ok(w, 'the parent exists');
      assert.equal(row[col('warehouseID')], w.id);
      assert.equal(row[col('warehouse_codeERP')], w['codeERP']);
      assert.equal(row[col('warehouse_name')], w['name']);
    }
  });

  test('inventory: one line per item, header fields repeated with the inventory_ prefix', async () => {
    const r = await pull({ what: 'inventory', pageSize: 1 });
    const [header, ...rows] = readCsv(r.file!);
    assert.deepEqual(header, INVENTORY_COLUMNS);
    const col = (n: string) => header!.indexOf(n);
    const invs = sandbox.state.collections.Inventory;
    assert.equal(r.inventories, invs.length);
    for (const inv of invs) {
      const items = inv['itens'] as Array<Record<string, unknown>>;
      const lines = rows.filter((row) => row[col('inventory_id')] === inv.id);
      assert.equal(lines.length, items.length);
      for (const [k, line] of lines.entries()) {
        assert.equal(line[col('inventory_name')], inv['name']);
        assert.equal(line[col('inventory_warehouseID')], inv['warehouseID']);
        assert.equal(line[col('id')], items[k]!['id']);
        assert.equal(line[col('inventoryID')], inv.id);
        assert.equal(line[col('productID')], items[k]!['productID']);
      }
    }
  });
});

describe('every kind, JSONL and JSON', () => {
  for (const kind of PULL_KINDS) {
    for (const format of ['jsonl', 'json'] as const) {
      test(`${kind} as ${format}`, async () => {
        const filters = kind === 'stock-search' ? { filters: { ownerId: sandbox.state.collections.Owners[0]!.id } } : {};
        const r = await pull({ what: kind, format, force: true, ...filters, ...(kind.startsWith('inventory') ? { pageSize: 2 } : {}) });
        assert.ok(r.file?.endsWith(`.${format}`));
        const text = readFileSync(r.file!, 'utf8');
        const objs = (
          format === 'json'
            ? JSON.parse(text)
            : text
                .trimEnd()
                .split('\n')
                .map((l) => JSON.parse(l))
        ) as Array<Record<string, unknown>>;
        assert.equal(objs.length, r.records);
        const expected =
          kind === 'stock' || kind === 'stock-search' ? stockSlice(sandbox.state, 0, stockTotal(sandbox.state)).map((s) => s.productId) : expectedIds(kind);
        const key = kind === 'stock' || kind === 'stock-search' ? 'productId' : 'id';
        assert.ok(expected.length > 0);
        assert.deepEqual(
          objs.map((o) => o[key]),
          expected,
        );
        for (const o of objs) assert.deepEqual(Object.keys(o), [...COLUMN_SETS[kind].columns]);
      });
    }
  }
});

describe('stock over many pages, every format', () => {
  const total = () => stockTotal(sandbox.state);

  test('csv', async () => {
    const r = await pull({ what: 'stock' });
    assert.ok(total() > PAGE * 10);
    assert.equal(r.records, total());
    const [header, ...rows] = readCsv(r.file!);
    assert.deepEqual(header, [...COLUMN_SETS.stock.columns]);
    const expected = stockSlice(sandbox.state, 0, total());
    assert.equal(rows.length, expected.length);
    const col = (n: string) => header!.indexOf(n);
    for (const [i, e] of expected.entries()) {
      const row = rows[i]!;
      assert.equal(row[col('productId')], e.productId);
      assert.equal(row[col('lotNumber')], e.lotNumber);
      assert.equal(row[col('quantity')], String(e.quantity));
      assert.equal(row[col('productName')], e.productName);
    }
  });

  test('jsonl: one object per line, keys in column order, values typed', async () => {
    const r = await pull({ what: 'stock', format: 'jsonl' });
    assert.match(r.file!, /stock-\d{8}-\d{6}\.jsonl$/);
    const lines = readFileSync(r.file!, 'utf8').split('\n');
    assert.equal(lines.pop(), '', 'ends with a newline');
    assert.equal(lines.length, total());
    const expected = stockSlice(sandbox.state, 0, total());
    for (const [i, line] of lines.entries()) {
      const obj = JSON.parse(line) as Record<string, unknown>;
      assert.deepEqual(Object.keys(obj), [...COLUMN_SETS.stock.columns]);
      assert.deepEqual(obj, { ...expected[i] });
    }
  });

  test('json: one array', async () => {
    const r = await pull({ what: 'stock', format: 'json' });
    assert.match(r.file!, /stock-\d{8}-\d{6}\.json$/);
    const arr = JSON.parse(readFileSync(r.file!, 'utf8')) as Array<Record<string, unknown>>;
    assert.equal(arr.length, total());
    assert.deepEqual(arr[0], { ...stockSlice(sandbox.state, 0, 1)[0] });
    assert.deepEqual(Object.keys(arr[arr.length - 1]!), [...COLUMN_SETS.stock.columns]);
  });

  test('json / jsonl of an inventory are flattened like the CSV', async () => {
    const r = await pull({ what: 'inventory', format: 'jsonl', pageSize: 2 });
    const lines = readFileSync(r.file!, 'utf8').trim().split('\n');
    assert.equal(lines.length, expectedIds('inventory').length);
    assert.deepEqual(Object.keys(JSON.parse(lines[0]!) as object), INVENTORY_COLUMNS);
  });

  test('stock-search applies the filters', async () => {
    const wh = sandbox.state.collections.Warehouse[1]!.id;
    const r = await pull({ what: 'stock-search', filters: { warehouseId: wh } });
    const [header, ...rows] = readCsv(r.file!);
    const expected = stockSlice(sandbox.state, 0, total()).filter((s) => s.warehouseId === wh);
    assert.ok(expected.length > PAGE, 'spans several pages');
    assert.ok(expected.length < total(), 'the filter removes records');
    assert.equal(r.records, expected.length);
    const col = header!.indexOf('warehouseId');
    assert.ok(rows.every((row) => row[col] === wh));
    assert.match(r.file!, /stock-search-\d{8}-\d{6}\.csv$/);
  });
});

describe('CSV options', () => {
  test('Windows-1252, decimal comma, dd/MM/yyyy: read back with iconv-lite + csv-parse', async () => {
    const r = await pull({
      what: 'inventory',
      pageSize: 1,
      csv: { encoding: 'windows-1252', decimalSeparator: ',', dateFormat: 'dd/MM/yyyy', timeZone: 'UTC' },
    });
    const bytes = readFileSync(r.file!);
    assert.notDeepEqual([...bytes.subarray(0, 3)], [0xef, 0xbb, 0xbf], 'no BOM');
    // "Inventário" in cp1252: á is the single byte 0xE1
    assert.ok(bytes.includes(Buffer.from([0x49, 0x6e, 0x76, 0x65, 0x6e, 0x74, 0xe1, 0x72, 0x69, 0x6f])));
    assert.equal(bytes.indexOf(Buffer.from('á', 'utf8')), -1, 'no UTF-8 sequences');
    const [header, ...rows] = readCsv(r.file!, 'windows-1252');
    const col = (n: string) => header!.indexOf(n);
    const geral = rows.find((row) => row[col('inventory_name')] === 'Inventário geral 2025');
    assert.ok(geral, 'accented name decoded back');
    assert.equal(geral[col('inventory_accuracy')], '99,2', 'decimal comma');
    assert.equal(geral[col('inventory_startDate')], '27/12/2025');
    assert.equal(geral[col('inventory_adjustiment')], 'true');
    assert.equal(Number(geral[col('inventory_accuracy')]!.replace(',', '.')), 99.2);
  });

  test('Windows-1252 stock: product names with ç and ã', async () => {
    const r = await pull({ what: 'stock', csv: { encoding: 'windows-1252' } });
    const [header, ...rows] = readCsv(r.file!, 'windows-1252');
    const names = new Set(rows.map((row) => row[header!.indexOf('productName')]));
    assert.ok(names.has('Feijão Carioca 1kg'));
    assert.ok(names.has('Queijo Muçarela Fatiado'));
    assert.equal(r.replacedChars, 0);
  });

  test('UTF-8 without BOM, comma delimiter, LF, ISO dates, decimal point', async () => {
    const r = await pull({
      what: 'inventory',
      pageSize: 1,
      csv: { encoding: 'utf-8', delimiter: ',', lineEnding: '\n', dateFormat: 'iso', decimalSeparator: '.' },
    });
    const bytes = readFileSync(r.file!);
    assert.equal(bytes[0], 'i'.charCodeAt(0), 'starts with the header, no BOM');
    assert.equal(bytes.includes(Buffer.from('\r\n')), false);
    const [header, ...rows] = readCsv(r.file!, 'utf-8', ',');
    const col = (n: string) => header!.indexOf(n);
    const geral = rows.find((row) => row[col('inventory_name')] === 'Inventário geral 2025')!;
    assert.equal(geral[col('inventory_accuracy')], '99.2');
    assert.equal(geral[col('inventory_startDate')], '2025-12-27T08:00:00Z');
  });

  test('pipe delimiter; cells holding the delimiter are quoted', async () => {
    const r = await pull({ what: 'providers', csv: { delimiter: '|' } });
    const [header, ...rows] = readCsv(r.file!, 'utf-8', '|');
    assert.deepEqual(header, [...COLUMN_SETS.providers.columns]);
    assert.equal(rows.length, expectedIds('providers').length);
    const names = rows.map((row) => row[header!.indexOf('socialName')]);
    assert.ok(names.includes('Fornecedor 00 Indústria e Comércio Ltda'));
    assert.ok(names.includes('Comercial A|B; "Filial" Ltda'), 'read back whole');
    assert.ok(readFileSync(r.file!, 'utf8').includes('|"Comercial A|B; ""Filial"" Ltda"|'), 'quoted per RFC 4180');
  });

  test('tab delimiter and dd/MM/yyyy HH:mm:ss in a given zone', async () => {
    const r = await pull({ what: 'stock', csv: { delimiter: '\t', dateFormat: 'dd/MM/yyyy HH:mm:ss', timeZone: 'America/Sao_Paulo' } });
    const [header, ...rows] = readCsv(r.file!, 'utf-8', '\t');
    const first = stockSlice(sandbox.state, 0, 1)[0]!;
    const iso = new Date(first.manufacturingDate!);
    const local = new Date(iso.getTime() - 3 * 3_600_000); // Sao Paulo is UTC-3
    const p = (n: number) => String(n).padStart(2, '0');
    const want = `${p(local.getUTCDate())}/${p(local.getUTCMonth() + 1)}/${local.getUTCFullYear()} ${p(local.getUTCHours())}:${p(local.getUTCMinutes())}:${p(local.getUTCSeconds())}`;
    assert.equal(rows[0]![header!.indexOf('manufacturingDate')], want);
  });
});

describe('files', () => {
  test('done file written after the file', async () => {
    const r = await pull({ what: 'company', doneFile: true });
    const name = r.file!.slice(r.dir.length + 1);
    assert.deepEqual(visibleFiles(r.dir), [name, `${name}.done`]);
  });

  test('a fixed file name is replaced atomically; dated names never overwrite', async () => {
    const dir = outDir();
    await pull({ what: 'company', outDir: dir, fileName: 'empresas.csv' });
    await pull({ what: 'company', outDir: dir, fileName: 'empresas.csv' });
    assert.deepEqual(visibleFiles(dir), ['empresas.csv']);
    const fixed = new Date(2026, 4, 6, 7, 8, 9);
    const deps = { client, journal, logger, now: () => fixed };
    const a = await runPull({ what: 'company', outDir: dir }, deps);
    const b = await runPull({ what: 'company', outDir: dir }, deps);
    assert.equal(a.file, join(dir, 'company-20260506-070809.csv'));
    assert.equal(b.file, join(dir, 'company-20260506-070809-2.csv'));
  });

  test('a reader polling the folder never sees a partial file', async () => {
    const dir = outDir();
    const before = sandbox.state.synthetic.count;
    sandbox.seedStock(20_000);
    try {
      const total = stockTotal(sandbox.state);
      let sawTemp = false;
      let checks = 0;
      const problems: string[] = [];
      let done = false;
      const poller = (async () => {
        while (!done) {
          for (const name of existsSync(dir) ? readdirSync(dir) : []) {
            if (name.startsWith('.')) {
              sawTemp = true;
              continue;
            }
            // a visible file must be complete: header + every record, last line ended
            let text: string;
            try {
              text = readFileSync(join(dir, name), 'utf8');
            } catch (err) {
              problems.push(`${name}: ${(err as Error).message}`);
              continue;
            }
            checks++;
            const lines = text.split('\r\n');
            if (lines[lines.length - 1] !== '' || lines.length - 2 !== total) problems.push(`${name}: ${lines.length - 2} of ${total} records visible`);
          }
          await new Promise((res) => setImmediate(res));
          await new Promise((res) => setTimeout(res, 2)); // sampling interval of a reader beside the writer, not a wait
        }
      })();
      const r = await runPull({ what: 'stock', outDir: dir, pageSize: 500 }, { client, journal, logger });
      // keep polling a little after the rename so the complete file is seen too
      const deadline = Date.now() + 2_000;
      while (checks === 0 && Date.now() < deadline) await new Promise((res) => setTimeout(res, 5)); // poll interval of a wait on the first check
      done = true;
      await poller;
      assert.equal(r.records, total);
      assert.ok(sawTemp, 'the poller saw the hidden temp file while the export ran');
      assert.ok(checks > 0, 'the poller saw the final file');
      assert.deepEqual(problems, []);
    } finally {
      sandbox.seedStock(before);
    }
  });

  test('a WMS failure mid-export leaves no file, no temp file, and no journal mark', async () => {
    const failing = createWmsClient({ baseUrl: sandbox.url, accessKeyID: sandbox.accessKeyID, secretKey: sandbox.secretKey, retry: { retries: 0 }, logger });
    const dir = outDir();
    try {
      // first page answers, then the WMS fails: pages are streamed, so the temp file already has rows
      let pages = 0;
      const wrapped: WmsClient = {
        ...failing,
        listFinishedInventories: (opts) =>
          (async function* () {
            for await (const inv of failing.listFinishedInventories(opts)) {
              yield inv;
              pages++;
              if (pages === 1) sandbox.setFaults({ failRate: 1 });
            }
          })(),
      };
      await assert.rejects(
        pull({ what: 'inventory-finished', outDir: dir, pageSize: 1, force: true }, { client: wrapped }),
        (err: unknown) => (err as { code?: string }).code?.startsWith('E_WMS') === true,
      );
      assert.equal(pages, 1);
      assert.deepEqual(existsSync(dir) ? readdirSync(dir) : [], [], 'nothing at all in the folder');
    } finally {
      sandbox.setFaults({ failRate: 0 });
      await failing.close();
    }
  });
});

describe('finished inventories are exported once', () => {
  test('once-only rule', async () => {
    const j = await openJournal({ kind: 'sqlite', path: join(tmp.dir, 'once.db') });
    try {
      const finished = sandbox.state.collections.Inventory.filter((inv) => inv['endDate']);
      const items = finished.reduce((n, inv) => n + (inv['itens'] as unknown[]).length, 0);
      const deps = { client, journal: j, logger };
      const first = await runPull({ what: 'inventory-finished', outDir: outDir(), pageSize: 1 }, deps);
      assert.equal(first.inventories, finished.length);
      assert.equal(first.records, items);
      assert.equal(first.skipped, 0);
      assert.ok(first.file && existsSync(first.file));
      for (const inv of finished) assert.match((await j.getMeta(inventoryExportedKey(inv.id)))!, /inventory-finished-\d{8}-\d{6}\.csv$/);

      const dir2 = outDir();
      const second = await runPull({ what: 'inventory-finished', outDir: dir2, pageSize: 1 }, deps);
      assert.equal(second.file, null);
      assert.equal(second.records, 0);
      assert.equal(second.skipped, finished.length);
      assert.deepEqual(existsSync(dir2) ? readdirSync(dir2) : [], [], 'no file, no temp file');

      const forced = await runPull({ what: 'inventory-finished', outDir: outDir(), pageSize: 1, force: true }, deps);
      assert.equal(forced.inventories, finished.length);
      assert.equal(forced.skipped, 0);
      assert.equal(forced.records, items);
      const [, ...rows] = readCsv(forced.file!);
      assert.equal(rows.length, items);
    } finally {
      await j.close();
    }
  });

  test('only the new ones are exported when some were exported before', async () => {
    const j = await openJournal({ kind: 'sqlite', path: join(tmp.dir, 'partial.db') });
    try {
      const finished = sandbox.state.collections.Inventory.filter((inv) => inv['endDate']);
      await j.setMeta(inventoryExportedKey(finished[0]!.id), 'earlier');
      const r = await runPull({ what: 'inventory-finished', outDir: outDir(), pageSize: 1 }, { client, journal: j, logger });
      assert.equal(r.skipped, 1);
      assert.equal(r.inventories, finished.length - 1);
      const [header, ...rows] = readCsv(r.file!);
      const ids = new Set(rows.map((row) => row[header!.indexOf('inventory_id')]));
      assert.equal(ids.has(finished[0]!.id), false);
      assert.equal(ids.size, finished.length - 1);
      assert.equal(await j.getMeta(inventoryExportedKey(finished[0]!.id)), 'earlier', 'old mark untouched');
    } finally {
      await j.close();
    }
  });
});

describe('reference cache refresh', () => {
  test('reference pulls hand the complete list to refCache after the file is written', async () => {
    const calls: Array<{ resource: RefResource; ids: string[]; fileExisted: boolean }> = [];
    let dir = '';
    const refCache: RefCacheRefresher = {
      refresh(resource, records) {
        calls.push({ resource, ids: records.map((r) => String(r['id'])), fileExisted: visibleFiles(dir).length === 1 });
      },
    };
    dir = outDir();
    await pull({ what: 'owners', outDir: dir }, { refCache });
    dir = outDir();
    await pull({ what: 'material-statuses', outDir: dir }, { refCache });
    dir = outDir();
    await pull({ what: 'stock', outDir: dir }, { refCache });
    dir = outDir();
    await pull({ what: 'sub-warehouses', outDir: dir }, { refCache });
    assert.deepEqual(
      calls.map((c) => c.resource),
      ['Owners', 'MaterialStatus'],
    );
    assert.deepEqual(calls[0]!.ids, expectedIds('owners'));
    assert.deepEqual(calls[1]!.ids, expectedIds('material-statuses'));
    assert.ok(calls.every((c) => c.fileExisted));
  });
});
