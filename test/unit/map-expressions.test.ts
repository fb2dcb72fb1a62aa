import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mapping, row, rowOf, run, seedId, SEED_REFS } from '../fixtures/map/util.js';
import { LookupPlaceholder, PLACEHOLDER_UUID } from '../../src/map/compile.js';
import { createStaticReferenceCache } from '../../src/map/static-refs.js';
import { isRef } from '../../src/map/types.js';
import type { ParsedItem } from '../../src/parse/types.js';

const category = (fields: Record<string, unknown>, extra: Record<string, unknown> = {}) =>
  mapping({ target: 'Category', fields: { codeERP: 'codigo', name: 'nome', ...fields }, ...extra });

describe('expression forms', () => {
  test('shorthand, col by name and by index, const, default, transforms', async () => {
    const m = category({ description: { col: 2, transforms: ['trim', 'upper'] }, name: { col: 'nome', default: 'Sem nome' } });
    const r = await run(m, [row({ codigo: 'C1', nome: 'Mercearia', obs: '  seca ' }), row({ codigo: 'C2', nome: '', obs: '' })]);
    assert.equal(r.rejects.length, 0);
    assert.deepEqual(r.records[0]?.payload, { status: 1, codeERP: 'C1', name: 'Mercearia', description: 'SECA' });
    assert.deepEqual(r.records[1]?.payload, { status: 1, codeERP: 'C2', name: 'Sem nome' }, 'empty values are not sent; default applies');
    assert.equal(r.records[0]?.key, 'C1');
    assert.equal(r.records[0]?.op, 'create');
    assert.equal(r.records[0]?.mapping, 't');
    assert.equal(r.records[0]?.raw[0]?.fields['codigo'], 'C1', 'the raw row is kept');
  });

  test('template, concat, coalesce', async () => {
    const m = category({
      name: { template: '{nome} ({codigo})' },
      description: { concat: [{ col: 'a' }, { col: 'b' }, { const: 'fim' }], sep: ' / ' },
      codeERP: { coalesce: [{ col: 'novo' }, { col: 'codigo' }] },
    });
    const r = await run(m, [row({ codigo: 'C1', nome: 'Bebidas', a: 'x', b: '', novo: '' }), row({ codigo: 'C2', nome: 'Frios', a: '', b: 'y', novo: 'N2' })]);
    assert.deepEqual(
      r.records.map((x) => x.payload),
      [
        { status: 1, codeERP: 'C1', name: 'Bebidas (C1)', description: 'x / fim' },
        { status: 1, codeERP: 'N2', name: 'Frios (C2)', description: 'y / fim' },
      ],
    );
  });

  test('a template with an empty placeholder is empty; {$file} {$line} and braces', async () => {
    const m = category({ name: { template: '{nome}-{serie}', default: 'vazio' }, description: { template: '{{x}} {$file}:{$line}' } });
    const r = await run(m, [row({ codigo: 'C1', nome: 'A', serie: '' }, 7)]);
    assert.equal(r.records[0]?.payload['name'], 'vazio');
    assert.equal(r.records[0]?.payload['description'], '{x} TEST.csv:7');
  });

  test('path and field expressions read the flat fields of XML and fixed-width rows', async () => {
    const xml = mapping({
      source: { format: 'xml', itemPath: 'nfeProc/NFe/infNFe/det' },
      target: 'Category',
      fields: { codeERP: { path: 'prod/cProd' }, name: { path: '/NFe/infNFe/emit/xNome' }, description: '@nItem' },
    });
    const r = await run(xml, [rowOf({ 'prod/cProd': '00042', '/NFe/infNFe/emit/xNome': 'Emitente', '@nItem': '1' }, { recordType: 'det[1]' })]);
    assert.deepEqual(r.records[0]?.payload, { status: 1, codeERP: '00042', name: 'Emitente', description: '1' });
    assert.equal(r.records[0]?.source.element, 'det[1]');
    const fw = mapping({
      source: {
        format: 'fixed-width',
        records: [
          {
            type: 'd',
            match: 'default',
            fields: [
              { name: 'cod', start: 1, length: 3 },
              { name: 'nome', start: 4, length: 10 },
            ],
          },
        ],
      },
      target: 'Category',
      fields: { codeERP: { field: 'cod' }, name: { field: 'nome', transforms: ['trim'] } },
    });
    const r2 = await run(fw, [rowOf({ cod: '001', nome: 'Laticínios ' }, { recordType: 'd' })]);
    assert.deepEqual(r2.records[0]?.payload, { status: 1, codeERP: '001', name: 'Laticínios' });
  });

  test('required: an empty value rejects the row; WMS-required fields are required automatically', async () => {
    const m = category({ description: { col: 'obs', required: true } });
    const r = await run(m, [row({ codigo: 'C1', nome: '', obs: '' }, 14)]);
    assert.equal(r.rejects.length, 1);
    const issues = r.rejects[0]?.issues ?? [];
    assert.deepEqual(
      issues.map((i) => [i.code, i.field]),
      [
        ['required', 'name'],
        ['required', 'description'],
      ],
    );
    assert.equal(issues[0]?.message, 'line 14: field name: is empty but required (Category requires name)');
    assert.equal(r.rejects[0]?.key, 'C1');
    assert.equal(r.rejects[0]?.target, 'Category');
  });

  test('every failing field is reported, each message self-contained', async () => {
    const m = mapping({
      target: 'Product',
      fields: {
        code: 'codigo',
        name: 'nome',
        categoryID: { ref: 'Category', from: 'cat' },
        familyID: { ref: 'Family', from: 'fam' },
        logisticsProfileID: { lookup: 'LogisticsProfile', by: 'mnemonic', from: 'perfil' },
        unitmeasurement: 'un',
        weight: { col: 'peso', transforms: ['number'] },
        barCode: { col: 'ean', transforms: ['ean'] },
      },
    });
    const r = await run(m, [row({ codigo: 'P1', nome: 'X', cat: 'C', fam: 'F', perfil: 'PADRAO', un: 'UN', peso: '12,3,4', ean: '7891234001017' }, 14)]);
    assert.deepEqual(
      r.rejects[0]?.issues.map((i) => i.message),
      [
        "line 14: field weight: '12,3,4' is not a number (decimal ',' thousands '.')",
        "line 14: field barCode: '7891234001017' has a wrong GTIN/EAN check digit",
      ],
    );
    assert.equal(r.rejects[0]?.issues[0]?.value, '12,3,4');
    assert.equal(r.rejects[0]?.issues[0]?.code, 'invalid_number');
  });
});

describe('references, lookups, static tables', () => {
  test('ref emits a RefValue placeholder; lookup of a sendable resource keeps `by`', async () => {
    const m = mapping({
      target: 'Family',
      fields: { codeERP: 'codigo', name: 'nome', categoryID: { ref: 'Category', from: 'cat', transforms: ['trim', 'upper'] } },
    });
    const r = await run(m, [row({ codigo: 'F1', nome: 'Grãos', cat: ' merc ' })]);
    assert.deepEqual(r.records[0]?.payload['categoryID'], { $ref: { resource: 'Category', value: 'MERC' } });
    const s = mapping({
      target: 'StockSync',
      fields: {
        productId: { ref: 'Product', from: 'p' },
        ownerId: { lookup: 'Owners', by: 'code', from: { const: '001' } },
        quantity: { col: 'q', transforms: ['number'] },
      },
    });
    const r2 = await run(s, [row({ p: '000101', q: '10' })]);
    assert.deepEqual(r2.records[0]?.payload['ownerId'], { $ref: { resource: 'Owners', value: '001', by: 'code' } });
    assert.equal(r2.records[0]?.key, '000101|001');
    assert.ok(isRef(r2.records[0]?.payload['productId']));
  });

  test('read-only lookups resolve at map time; not found rejects with lookup_not_found', async () => {
    const m = mapping({
      target: 'StockLock',
      fields: {
        warehouseId: { lookup: 'Warehouse', by: 'codeERP', from: 'cd' },
        materialStatusId: { lookup: 'MaterialStatus', by: 'name', from: 'st' },
        productId: { ref: 'Product', from: 'p' },
      },
    });
    assert.deepEqual(m.referenceNeeds, [
      { resource: 'Warehouse', by: 'codeERP' },
      { resource: 'MaterialStatus', by: 'name' },
    ]);
    const r = await run(m, [row({ cd: 'cd-sp01', st: 'DISPONÍVEL', p: '1' }), row({ cd: 'CD-XX01', st: 'Bloqueado', p: '1' }, 9)]);
    assert.equal(r.records[0]?.payload['warehouseId'], seedId('wh:CD-SP01'), 'case-insensitive');
    assert.equal(r.records[0]?.payload['materialStatusId'], seedId('ms:Disponível'));
    assert.deepEqual(r.rejects[0]?.issues, [
      {
        code: 'lookup_not_found',
        field: 'warehouseId',
        column: 'cd',
        value: 'CD-XX01',
        message: "line 9: field warehouseId: Warehouse with codeERP 'CD-XX01' not found",
      },
    ]);
  });

  test("lookup with where and select (Dock by name within a warehouse, a warehouse's branchID)", async () => {
    const m = mapping({
      target: 'PickingList',
      group: { by: 'pedido', items: 'pickingItens', itemFields: { productID: { ref: 'Product', from: 'p' }, quantity: { col: 'q', transforms: ['number'] } } },
      fields: {
        order: 'pedido',
        codeERP: { col: 'pedido', transforms: ['uuid5'] },
        companyID: { lookup: 'Company', by: 'name', from: { const: 'Distribuidora Paulista de Alimentos Ltda' } },
        branchID: { lookup: 'Warehouse', by: 'codeERP', from: 'cd', select: 'branchID' },
        warehouseID: { lookup: 'Warehouse', by: 'codeERP', from: 'cd' },
        dockID: { lookup: 'Dock', by: 'name', from: 'doca', where: { warehouseID: { lookup: 'Warehouse', by: 'codeERP', from: 'cd' } } },
        ownerID: { lookup: 'Owners', by: 'code', from: { const: '001' } },
      },
    });
    const r = await run(m, [
      row({ pedido: '1', cd: 'CD-RJ01', doca: 'DOCA 02', p: 'A', q: '1' }),
      row({ pedido: '2', cd: 'CD-RJ01', doca: 'DOCA 09', p: 'A', q: '1' }, 30),
    ]);
    assert.equal(r.records.length, 1);
    assert.equal(r.records[0]?.payload['branchID'], seedId('branch:Filial Rio de Janeiro'));
    assert.equal(r.records[0]?.payload['dockID'], seedId('dock:CD-RJ01:DOCA 02'));
    assert.match(r.rejects[0]?.issues[0]?.message ?? '', /^line 30: field dockID: Dock with name 'DOCA 09' and warehouseID '[0-9a-f-]+' not found$/);
    // without `where`, "DOCA 01" exists in three warehouses
    const amb = mapping({
      target: 'StockLock',
      fields: {
        warehouseId: { lookup: 'Dock', by: 'name', from: 'd', select: 'warehouseID' },
        materialStatusId: { const: PLACEHOLDER_UUID },
        productId: { ref: 'Product', from: 'p' },
      },
    });
    const r2 = await run(amb, [row({ d: 'DOCA 01', p: 'x' })]);
    assert.equal(r2.rejects[0]?.issues[0]?.code, 'lookup_ambiguous');
    // a cache without findAll cannot answer where/select
    const r3 = await run(m, [row({ pedido: '1', cd: 'CD-RJ01', doca: 'DOCA 02', p: 'A', q: '1' })], { refs: { find: SEED_REFS.find, has: SEED_REFS.has } });
    assert.equal(r3.rejects[0]?.issues[0]?.code, 'lookup_unsupported');
  });

  test('symbolic lookups for previews validate as UUIDs and print as <lookup ...>', async () => {
    const m = mapping({
      target: 'StockLock',
      fields: {
        warehouseId: { lookup: 'Warehouse', by: 'codeERP', from: 'cd' },
        materialStatusId: { lookup: 'MaterialStatus', by: 'name', from: 'st' },
        productId: { ref: 'Product', from: 'p' },
      },
    });
    const empty = createStaticReferenceCache({});
    const r = await run(m, [row({ cd: 'CD-SP01', st: 'Bloqueado', p: '1' })], { refs: empty, symbolicLookups: true });
    const wh = r.records[0]?.payload['warehouseId'];
    assert.ok(wh instanceof LookupPlaceholder);
    assert.equal(JSON.stringify(wh), '"<lookup Warehouse codeERP=CD-SP01>"');
  });

  test('a read-only resource that was not loaded is a pipeline bug, thrown before any row', async () => {
    const m = mapping({
      target: 'StockLock',
      fields: {
        warehouseId: { lookup: 'Warehouse', by: 'codeERP', from: 'cd' },
        materialStatusId: { const: PLACEHOLDER_UUID },
        productId: { ref: 'Product', from: 'p' },
      },
    });
    await assert.rejects(run(m, [row({ cd: 'CD-SP01', p: '1' })], { refs: createStaticReferenceCache({ MaterialStatus: [] }) }), /Warehouse was not loaded/);
  });

  test('static tables: known values map, unknown ones reject', async () => {
    const m = category({ description: { table: { '01': 'Seco', '02': 'Refrigerado' }, from: 'tipo', transforms: [{ padStart: { length: 2, char: '0' } }] } });
    const r = await run(m, [row({ codigo: 'A', nome: 'A', tipo: '1' }), row({ codigo: 'B', nome: 'B', tipo: '7' }, 40)]);
    assert.equal(r.records[0]?.payload['description'], 'Seco');
    assert.equal(r.rejects[0]?.issues[0]?.message, "line 40: field description: '07' is not in the mapping's table (known: 01, 02)");
  });
});

describe('filters', () => {
  const items = (): ParsedItem[] => [
    row({ codigo: 'A', nome: 'a', tipo: 'A', obs: '' }),
    row({ codigo: 'B', nome: 'b', tipo: 'b', obs: 'x' }),
    row({ codigo: 'C', nome: 'c', tipo: 'C', obs: '123' }),
  ];
  const keys = async (filter: unknown): Promise<string[]> => {
    const r = await run(category({}, { filter }), items());
    assert.equal(r.stats.skipped + r.records.length, 3);
    return r.records.map((x) => x.key);
  };
  test('in, notIn, equals, notEquals, notEmpty, empty, regex, ignoreCase', async () => {
    assert.deepEqual(await keys({ col: 'tipo', in: ['A', 'B'] }), ['A']);
    assert.deepEqual(await keys({ col: 'tipo', in: ['A', 'B'], ignoreCase: true }), ['A', 'B']);
    assert.deepEqual(await keys({ col: 'tipo', notIn: ['A'] }), ['B', 'C']);
    assert.deepEqual(await keys({ col: 'tipo', equals: 'C' }), ['C']);
    assert.deepEqual(await keys({ col: 'tipo', notEquals: 'C' }), ['A', 'B']);
    assert.deepEqual(await keys({ col: 'obs', notEmpty: true }), ['B', 'C']);
    assert.deepEqual(await keys({ col: 'obs', empty: true }), ['A']);
    assert.deepEqual(await keys({ col: 'obs', regex: '^\\d+$' }), ['C']);
    assert.deepEqual(await keys({ field: 'tipo', equals: 'B', transforms: ['upper'] }), ['B']);
  });
  test('all, any, not and lists', async () => {
    assert.deepEqual(
      await keys([
        { col: 'tipo', notEquals: 'A' },
        { col: 'obs', notEmpty: true },
      ]),
      ['B', 'C'],
    );
    assert.deepEqual(
      await keys({
        any: [
          { col: 'tipo', equals: 'A' },
          { col: 'obs', equals: '123' },
        ],
      }),
      ['A', 'C'],
    );
    assert.deepEqual(await keys({ not: { col: 'tipo', equals: 'A' } }), ['B', 'C']);
    assert.deepEqual(await keys({ all: [{ col: 'tipo', in: ['A', 'C'] }, { not: { col: 'obs', empty: true } }] }), ['C']);
  });
  test('skipped rows are counted, not rejected', async () => {
    const r = await run(category({}, { filter: { col: 'tipo', equals: 'A' } }), items());
    assert.deepEqual(r.stats, { rows: 3, skipped: 2, records: 1, rejects: 0 });
  });
});

describe('validation against the target schema, parse errors, keys', () => {
  test('schema failures are rejects with field and message', async () => {
    const m = mapping({
      target: 'ConversionFactor',
      fields: {
        codeERP: 'c',
        productID: { ref: 'Product', from: 'p' },
        unitMeasurementInputID: { lookup: 'UnitMeasurement', by: 'symbol', from: 'u' },
        unitMeasurementInputCount: { col: 'n', transforms: ['integer'] },
        unitMeasurementOutputID: { col: 'out' },
      },
    });
    const r = await run(m, [row({ c: 'FC1', p: 'P', u: 'CX', n: '0', out: 'not-a-uuid' }, 5)]);
    const issues = r.rejects[0]?.issues ?? [];
    assert.deepEqual(
      issues.map((i) => [i.code, i.field]),
      [
        ['schema', 'unitMeasurementInputCount'],
        ['schema', 'unitMeasurementOutputID'],
      ],
    );
    assert.match(issues[0]?.message ?? '', /^line 5: field unitMeasurementInputCount: '0': /);
    assert.match(issues[1]?.message ?? '', /must be a UUID/);
  });

  test('forgetting a number transform is caught by validation', async () => {
    const m = mapping({
      target: 'StockSync',
      fields: { productId: { ref: 'Product', from: 'p' }, ownerId: { lookup: 'Owners', by: 'code', from: 'o' }, quantity: 'q' },
    });
    const r = await run(m, [row({ p: '1', o: '001', q: '5' }, 3)]);
    assert.equal(r.rejects[0]?.issues[0]?.field, 'quantity');
    assert.match(r.rejects[0]?.issues[0]?.message ?? '', /^line 3: field quantity: '5': .*expected number/);
  });

  test('parse error items become rejects carrying the issue and the raw text', async () => {
    const m = category({});
    const err: ParsedItem = { kind: 'error', line: 4, text: 'A;"broken', cells: ['A', 'broken'], issue: { code: 'bad_quote', message: 'unclosed quote' } };
    const r = await run(m, [row({ codigo: 'A', nome: 'a' }, 3), err, row({ codigo: 'B', nome: 'b' }, 5)]);
    assert.equal(r.records.length, 2);
    assert.deepEqual(r.rejects[0]?.issues, [{ code: 'bad_quote', message: 'line 4: unclosed quote' }]);
    assert.equal(r.rejects[0]?.raw[0]?.text, 'A;"broken');
    assert.deepEqual(r.rejects[0]?.source, { line: 4 });
    assert.deepEqual(r.stats, { rows: 3, skipped: 0, records: 2, rejects: 1 });
  });

  test('an explicit key, and a missing default key', async () => {
    const m = category({}, { key: { template: '{codigo}-{nome}' } });
    const r = await run(m, [row({ codigo: 'A', nome: 'x' })]);
    assert.equal(r.records[0]?.key, 'A-x');
    const u = mapping({ target: 'UnitMeasurement', fields: { symbol: 's', name: 'n', codeERP: 'c' } });
    const r2 = await run(u, [row({ s: 'UN', n: 'Unidade', c: '' }), row({ s: 'CX', n: 'Caixa', c: 'CX01' })]);
    assert.deepEqual(
      r2.records.map((x) => x.key),
      ['UN', 'CX01'],
      'codeERP, else the symbol',
    );
    const r3 = await run(category({}), [row({ codigo: '', nome: 'x' }, 8)]);
    assert.equal(r3.rejects[0]?.issues[0]?.code, 'key_missing');
  });

  test('ops and attachments', async () => {
    const d = mapping({ target: 'ConversionFactorDelete', fields: { id: { ref: 'ConversionFactor', from: 'c' } } });
    const r = await run(d, [row({ c: 'FC-1' })]);
    assert.equal(r.records[0]?.op, 'delete');
    assert.equal(r.records[0]?.key, 'FC-1');
    assert.equal(mapping({ target: 'Provider', fields: { codeERP: 'c', cnpj: 'd', socialName: 'n' } }).op, 'upsert');
    const a = mapping({
      target: 'PickingListAttachment',
      attachmentPath: 'arquivo',
      fields: {
        PickingListID: { ref: 'PickingList', from: { template: '{pedido}|001' } },
        UserFileName: 'desc',
        IsPrintCheckout: { col: 'imp', transforms: ['boolean'] },
      },
    });
    const r2 = await run(a, [row({ pedido: '9', arquivo: 'anexos/x.pdf', desc: 'Etiqueta', imp: 'S' })]);
    assert.equal(r2.records[0]?.attachmentPath, 'anexos/x.pdf');
    assert.equal(r2.records[0]?.key, '9|001|Etiqueta');
    assert.deepEqual(r2.records[0]?.payload, {
      PickingListID: { $ref: { resource: 'PickingList', value: '9|001' } },
      UserFileName: 'Etiqueta',
      IsPrintCheckout: true,
    });
  });

  test('matches: channel and case-insensitive globs', () => {
    const m = mapping({
      match: { channel: 'cadastros', files: ['PRODUTOS_*.csv', 'prod-{a,b}?.txt'] },
      target: 'Category',
      fields: { codeERP: 'c', name: 'n' },
    });
    assert.equal(m.matches('cadastros', 'produtos_20241105.CSV'), true);
    assert.equal(m.matches('Cadastros', 'PRODUTOS_1.csv'), true);
    assert.equal(m.matches('pedidos', 'PRODUTOS_1.csv'), false);
    assert.equal(m.matches('cadastros', 'PRODUTOS_1.csv.bak'), false);
    assert.equal(m.matches('cadastros', 'prod-b1.txt'), true);
    assert.equal(m.matches('cadastros', 'prod-c1.txt'), false);
    const any = mapping({ match: { files: '*.xml' }, target: 'Category', fields: { codeERP: 'c', name: 'n' } });
    assert.equal(any.matches('whatever', 'NFe123.XML'), true);
  });
});
