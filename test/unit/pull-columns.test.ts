import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import type { z } from 'zod';
import * as S from '../../src/wms/schemas.js';
import { COLUMN_SETS, INVENTORY_COLUMNS, inventoryRows, pickRow, subWarehouseRow } from '../../src/pull/columns.js';
import { PULL_KINDS } from '../../src/pull/types.js';
import { exportFileName, freeFileName, validatePullRequest } from '../../src/pull/run.js';
import { scheduledPullFromConfig } from '../../src/pull/config.js';
import { isBridgeError } from '../../src/shared/errors.js';
import { makeTempDir } from '../helpers/tmp.js';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';

/** the object shape behind a readable() Record schema */
function shapeKeys(schema: z.ZodType): string[] {
  const out = (schema as unknown as { out: { shape: Record<string, unknown> } }).out;
  return Object.keys(out.shape);
}

const ADDRESS = ['postalCode', 'address', 'complement', 'number', 'district', 'city', 'state', 'country', 'phone', 'cellPhone', 'contact'];

describe('column sets', () => {
  test('every kind has a column set without duplicates', () => {
    for (const kind of PULL_KINDS) {
      const set = COLUMN_SETS[kind];
      assert.ok(set.columns.length > 0, kind);
      assert.equal(new Set(set.columns).size, set.columns.length, `${kind} has duplicate columns`);
      for (const d of set.dateColumns) assert.ok(set.columns.includes(d), `${kind}: date column ${d} is not a column`);
    }
  });

  const bySchema: Array<[keyof typeof COLUMN_SETS, z.ZodType, string[]]> = [
    ['stock', S.StockRecord, []],
    ['stock-search', S.StockRecord, []],
    ['company', S.CompanyRecord, []],
    ['branch', S.BranchRecord, []],
    ['warehouse', S.WarehouseRecord, []],
    ['dock', S.DockRecord, []],
    ['logistics-profiles', S.LogisticsProfileRecord, []],
    ['material-statuses', S.MaterialStatusRecord, []],
    ['owners', S.OwnerRecord, []],
    ['conversion-factors', S.ConversionFactorRecord, []],
    // the spec's field tables list address and contact fields the Record schema keeps as unknown keys
    ['providers', S.ProviderRecord, ADDRESS],
    ['shipping-companies', S.ShippingCompanyRecord, ADDRESS],
  ];
  for (const [kind, schema, extra] of bySchema) {
    test(`${kind}: the Record schema's fields, canonical spellings, schema order`, () => {
      const cols = COLUMN_SETS[kind].columns.filter((c) => !extra.includes(c));
      assert.deepEqual(cols, shapeKeys(schema));
    });
  }

  test('inventory: header fields prefixed inventory_, then the item fields', () => {
    const header = shapeKeys(S.InventoryRecord).filter((k) => k !== 'itens');
    const items = shapeKeys(S.InventoryItemRecord);
    assert.deepEqual(INVENTORY_COLUMNS, [...header.map((k) => `inventory_${k}`), ...items]);
    assert.deepEqual(COLUMN_SETS['inventory-finished'].columns, INVENTORY_COLUMNS);
  });

  test('sub-warehouses: warehouse id, code and name first, then the SubWarehouse fields', () => {
    assert.deepEqual(COLUMN_SETS['sub-warehouses'].columns, ['warehouse_id', 'warehouse_codeERP', 'warehouse_name', ...shapeKeys(S.SubWarehouseRecord)]);
  });
});

describe('row builders', () => {
  test('pickRow keeps column order, null for missing, drops unknown keys', () => {
    const row = pickRow({ name: 'X', extra: 1, id: 'a', status: 0 }, ['id', 'name', 'cnpj', 'status']);
    assert.deepEqual(Object.keys(row), ['id', 'name', 'cnpj', 'status']);
    assert.deepEqual(row, { id: 'a', name: 'X', cnpj: null, status: 0 });
  });

  const inv = S.InventoryRecord.parse({
    id: '11111111-1111-4111-8111-111111111111',
    companyID: '22222222-2222-4222-8222-222222222222',
    name: 'Inv A',
    situation: 3,
    startDate: '2026-01-02T10:00:00Z',
    itens: [
      {
        id: '33333333-3333-4333-8333-333333333333',
        inventoryID: '11111111-1111-4111-8111-111111111111',
        productID: '44444444-4444-4444-8444-444444444444',
        quantity: 5,
        firstCount: 4,
      },
      {
        id: '55555555-5555-4555-8555-555555555555',
        inventoryID: '11111111-1111-4111-8111-111111111111',
        productID: '44444444-4444-4444-8444-444444444444',
        quantity: 2,
        lotNumber: 'L1',
        situation: 1,
      },
    ],
  });

  test('inventoryRows: one row per item, header repeated', () => {
    const rows = inventoryRows(inv);
    assert.equal(rows.length, 2);
    for (const r of rows) {
      assert.deepEqual(Object.keys(r), INVENTORY_COLUMNS);
      assert.equal(r['inventory_id'], inv.id);
      assert.equal(r['inventory_name'], 'Inv A');
      assert.equal(r['inventory_situation'], 3);
      assert.equal(r['inventory_branchID'], null);
    }
    assert.equal(rows[0]!['id'], '33333333-3333-4333-8333-333333333333');
    assert.equal(rows[0]!['firstCount'], 4);
    assert.equal(rows[1]!['lotNumber'], 'L1');
    assert.equal(rows[1]!['situation'], 1);
  });

  test('inventoryRows: an inventory without items still gives one row', () => {
    const rows = inventoryRows({ ...inv, itens: [] });
    assert.equal(rows.length, 1);
    assert.equal(rows[0]!['inventory_id'], inv.id);
    assert.equal(rows[0]!['id'], null);
    assert.equal(rows[0]!['productID'], null);
  });

  test('subWarehouseRow puts the parent first', () => {
    const row = subWarehouseRow(
      { id: 'w', companyID: 'c', branchID: 'b', name: 'CD São Paulo', codeERP: 'CD-SP01' } as S.WarehouseRecord,
      { id: 's', warehouseID: 'w', name: 'Câmara fria', status: 1 } as S.SubWarehouseRecord,
    );
    assert.deepEqual(row, {
      warehouse_id: 'w',
      warehouse_codeERP: 'CD-SP01',
      warehouse_name: 'CD São Paulo',
      id: 's',
      warehouseID: 'w',
      name: 'Câmara fria',
      description: null,
      allowGenerateResponsible: null,
      status: 1,
    });
  });
});

describe('file names and request validation', () => {
  test('exportFileName carries date and time (local)', () => {
    const at = new Date(2026, 0, 5, 7, 8, 9);
    assert.equal(exportFileName('stock', 'csv', at), 'stock-20260105-070809.csv');
    assert.equal(exportFileName('inventory-finished', 'jsonl', at), 'inventory-finished-20260105-070809.jsonl');
    assert.equal(exportFileName('sub-warehouses', 'json', at), 'sub-warehouses-20260105-070809.json');
  });

  test('freeFileName never reuses a taken name', async () => {
    const { dir, cleanup } = await makeTempDir();
    try {
      assert.equal(freeFileName(dir, 'stock-1.csv'), 'stock-1.csv');
      await writeFile(join(dir, 'stock-1.csv'), 'x');
      assert.equal(freeFileName(dir, 'stock-1.csv'), 'stock-1-2.csv');
      await writeFile(join(dir, 'stock-1-2.csv.done'), 'x');
      assert.equal(freeFileName(dir, 'stock-1.csv'), 'stock-1-3.csv');
    } finally {
      await cleanup();
    }
  });

  const bad: Array<[string, Record<string, unknown>, RegExp]> = [
    ['unknown kind', { what: 'stocks' }, /unknown kind "stocks"/],
    ['unknown format', { what: 'stock', format: 'xml' }, /unknown format "xml"/],
    ['bad CSV option', { what: 'stock', csv: { delimiter: ':' } }, /delimiter/],
    ['filters on another kind', { what: 'stock', filters: {} }, /stock-search only/],
    ['bad filter', { what: 'stock-search', filters: { warehouseId: 'nope' } }, /warehouseId: must be a UUID/],
    ['unknown filter', { what: 'stock-search', filters: { color: 'red' } }, /color/],
    ['path in file name', { what: 'stock', fileName: '../x.csv' }, /plain name/],
    ['hidden file name', { what: 'stock', fileName: '.x.csv' }, /plain name/],
    ['page size', { what: 'stock', pageSize: 0 }, /page size/],
  ];
  for (const [label, req, re] of bad) {
    test(`refuses ${label}`, () => {
      assert.throws(
        () => validatePullRequest({ outDir: '.', ...req } as never),
        (err: unknown) => isBridgeError(err) && err.code === 'E_CONFIG' && re.test(err.message),
      );
    });
  }

  test('scheduledPullFromConfig checks kind and filters and keeps options', () => {
    const p = scheduledPullFromConfig({
      name: 'stock-sp',
      what: 'stock-search',
      schedule: 'every 30m',
      format: 'csv',
      doneFile: true,
      filters: { warehouseId: '11111111-1111-4111-8111-111111111111' },
    });
    assert.deepEqual(p, {
      name: 'stock-sp',
      schedule: 'every 30m',
      request: { what: 'stock-search', format: 'csv', doneFile: true, filters: { warehouseId: '11111111-1111-4111-8111-111111111111' } },
    });
    assert.throws(() => scheduledPullFromConfig({ name: 'x', what: 'nope', schedule: 'every 1h' }), /"x": unknown kind "nope"/);
    assert.throws(
      () => scheduledPullFromConfig({ name: 'y', what: 'stock-search', schedule: 'every 1h', filters: { warehouseId: 'bad' } }),
      /"y".*warehouseId/,
    );
  });
});
