import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { makeTempDir } from '../helpers/tmp.js';
import { PROJECT_ROOT, SAMPLES_DIR } from '../helpers/cli.js';
import { mapping, row, run } from '../fixtures/map/util.js';
import { openParser } from '../../src/parse/index.js';
import type { ParsedItem } from '../../src/parse/types.js';

const orderMapping = (group: Record<string, unknown> = {}, fields: Record<string, unknown> = {}) =>
  mapping({
    target: 'PickingList',
    group: {
      by: 'pedido',
      items: 'pickingItens',
      itemFields: { productID: { ref: 'Product', from: 'produto' }, quantity: { col: 'qtd', transforms: ['number'] } },
      ...group,
    },
    fields: {
      order: 'pedido',
      codeERP: { template: 'PickingList:{pedido}', transforms: ['uuid5'] },
      companyID: { lookup: 'Company', by: 'name', from: { const: 'Distribuidora Paulista de Alimentos Ltda' } },
      branchID: { lookup: 'Branch', by: 'name', from: { const: 'Matriz São Paulo' } },
      warehouseID: { lookup: 'Warehouse', by: 'codeERP', from: 'cd' },
      ownerID: { lookup: 'Owners', by: 'code', from: { const: '001' } },
      clientName: 'cliente',
      ...fields,
    },
  });

const line = (pedido: string, cliente: string, produto: string, qtd: string, l: number): ParsedItem => row({ pedido, cd: 'CD-SP01', cliente, produto, qtd }, l);

describe('documents grouped by key', () => {
  test('contiguous lines make one document each, streaming', async () => {
    const r = await run(orderMapping(), [line('1', 'Ana', 'P1', '2', 2), line('1', 'Ana', 'P2', '3', 3), line('2', 'Bia', 'P1', '1,5', 4)]);
    assert.equal(r.rejects.length, 0);
    assert.equal(r.records.length, 2);
    const [a, b] = r.records;
    assert.equal(a?.key, '1|001');
    assert.deepEqual(a?.source, { line: 2, lineEnd: 3 });
    assert.equal(a?.raw.length, 2);
    const items = a?.payload['pickingItens'] as Array<Record<string, unknown>>;
    assert.deepEqual(
      items.map((i) => [i['productID'], i['quantity'], i['pickingItemStatus'], i['status']]),
      [
        [{ $ref: { resource: 'Product', value: 'P1' } }, 2, '0', 1],
        [{ $ref: { resource: 'Product', value: 'P2' } }, 3, '0', 1],
      ],
    );
    assert.equal(a?.payload['pickingStatus'], '0');
    assert.equal(a?.payload['finishCallBack'], false);
    assert.equal((b?.payload['pickingItens'] as unknown[]).length, 1);
    assert.deepEqual(r.stats, { rows: 3, skipped: 0, records: 2, rejects: 0 });
  });

  test('contiguous: a key reappearing later is rejected with a clear message', async () => {
    const r = await run(orderMapping(), [line('1', 'Ana', 'P1', '2', 2), line('2', 'Bia', 'P1', '1', 3), line('1', 'Ana', 'P3', '1', 4)]);
    assert.equal(r.records.length, 2);
    assert.equal(r.rejects.length, 1);
    assert.equal(r.rejects[0]?.issues[0]?.code, 'group_not_contiguous');
    assert.equal(
      r.rejects[0]?.issues[0]?.message,
      "line 4: document '1' appears again after its lines ended at line 2; list a document's lines together, or set group.contiguous: false",
    );
  });

  test('contiguous: false buffers and merges documents in first-seen order', async () => {
    const r = await run(orderMapping({ contiguous: false }), [line('1', 'Ana', 'P1', '2', 2), line('2', 'Bia', 'P1', '1', 3), line('1', 'Ana', 'P3', '1', 4)]);
    assert.equal(r.rejects.length, 0);
    assert.deepEqual(
      r.records.map((x) => [x.key, (x.payload['pickingItens'] as unknown[]).length, x.raw.map((w) => w.line)]),
      [
        ['1|001', 2, [2, 4]],
        ['2|001', 1, [3]],
      ],
    );
  });

  test('header fields must agree: the whole document is rejected naming line and field', async () => {
    const r = await run(orderMapping(), [
      line('1', 'Ana', 'P1', '2', 2),
      line('1', 'Ana Maria', 'P2', '3', 3),
      line('1', 'Ana', 'P3', '1', 4),
      line('2', 'Bia', 'P1', '1', 5),
    ]);
    assert.equal(r.records.length, 1);
    const rej = r.rejects[0];
    assert.equal(rej?.raw.length, 3, 'every row of the document is in the reject');
    assert.deepEqual(rej?.source, { line: 2, lineEnd: 4 });
    assert.equal(rej?.key, '1|001');
    assert.deepEqual(
      rej?.issues.map((i) => [i.code, i.field]),
      [['header_mismatch', 'clientName']],
    );
    assert.equal(
      rej?.issues[0]?.message,
      "line 3: field clientName: 'Ana Maria' differs from 'Ana' on line 2 (first line of document '1'); header fields must agree on every line",
    );
    const lenient = await run(orderMapping({ headerMustAgree: false }), [line('1', 'Ana', 'P1', '2', 2), line('1', 'Ana Maria', 'P2', '3', 3)]);
    assert.equal(lenient.records[0]?.payload['clientName'], 'Ana', 'the first line wins when agreement is not required');
  });

  test('one bad item rejects the whole document; item issues name the item', async () => {
    const r = await run(orderMapping(), [line('1', 'Ana', 'P1', '2', 2), line('1', 'Ana', 'P2', 'dois', 3)]);
    assert.equal(r.records.length, 0);
    assert.equal(r.rejects[0]?.issues[0]?.field, 'pickingItens[1].quantity');
    assert.match(r.rejects[0]?.issues[0]?.message ?? '', /^line 3: field pickingItens\[1\]\.quantity: 'dois' is not a number/);
    const zero = await run(orderMapping(), [line('1', 'Ana', 'P1', '2', 2), line('1', 'Ana', 'P2', '0', 3)]);
    assert.equal(zero.rejects[0]?.issues[0]?.code, 'schema');
    assert.match(zero.rejects[0]?.issues[0]?.message ?? '', /^line 3: field pickingItens\[1\]\.quantity: '0': /);
  });

  test('a parse error inside an open document holds the document back', async () => {
    const err: ParsedItem = { kind: 'error', line: 3, text: '1;x', issue: { code: 'ragged_row', message: 'expected 5 columns, found 2' } };
    const r = await run(orderMapping(), [line('1', 'Ana', 'P1', '2', 2), err, line('1', 'Ana', 'P2', '1', 4), line('2', 'Bia', 'P1', '1', 5)]);
    assert.equal(r.records.length, 1);
    assert.equal(r.records[0]?.key, '2|001');
    assert.equal(r.rejects[0]?.raw.length, 3);
    assert.match(r.rejects[0]?.issues[0]?.message ?? '', /^line 3: expected 5 columns, found 2 \(the line could not be read and may belong to document '1'/);
  });

  test('an empty document key rejects the row', async () => {
    const r = await run(orderMapping(), [line('', 'Ana', 'P1', '2', 2)]);
    assert.equal(r.rejects[0]?.issues[0]?.message, 'line 2: field group.by: is empty but required (the document key)');
    // inside an open document (contiguous), the line most likely belongs to it: the document is held back
    const mid = await run(orderMapping(), [line('1', 'Ana', 'P1', '2', 2), line('', 'Ana', 'P2', '1', 3), line('2', 'Bia', 'P1', '1', 4)]);
    assert.deepEqual(
      mid.records.map((x) => x.key),
      ['2|001'],
    );
    assert.equal(mid.rejects[0]?.raw.length, 2);
    assert.match(mid.rejects[0]?.issues[0]?.message ?? '', /^line 3: field group\.by: is empty but required .*may belong to document '1'/);
  });

  test('a filter that cannot be evaluated rejects the whole document, never sends it partially', async () => {
    const m = mapping({
      target: 'PickingList',
      filter: { col: 'qtd', transforms: ['number'], notEquals: 0 },
      group: {
        by: 'pedido',
        items: 'pickingItens',
        itemFields: { productID: { ref: 'Product', from: 'produto' }, quantity: { col: 'qtd', transforms: ['number'] } },
      },
      fields: {
        order: 'pedido',
        codeERP: { col: 'pedido', transforms: ['uuid5'] },
        companyID: { lookup: 'Company', by: 'name', from: { const: 'Distribuidora Paulista de Alimentos Ltda' } },
        branchID: { lookup: 'Branch', by: 'name', from: { const: 'Matriz São Paulo' } },
        warehouseID: { lookup: 'Warehouse', by: 'codeERP', from: 'cd' },
        ownerID: { lookup: 'Owners', by: 'code', from: { const: '001' } },
      },
    });
    const r = await run(m, [line('1', 'Ana', 'P1', '2', 2), line('1', 'Ana', 'P2', '0', 3), line('1', 'Ana', 'P3', 'x', 4), line('2', 'Bia', 'P1', '1', 5)]);
    assert.deepEqual(
      r.records.map((x) => x.key),
      ['2|001'],
    );
    assert.equal(r.stats.skipped, 1, 'quantity 0 is filtered out');
    assert.deepEqual(
      r.rejects[0]?.raw.map((x) => x.line),
      [2, 4],
    );
    assert.match(r.rejects[0]?.issues[0]?.message ?? '', /^line 4: field filter: 'x' is not a number/);
  });
});

describe('documents from files (real parsers)', () => {
  let dir = '';
  let cleanup: () => Promise<void> = async () => {};
  before(async () => ({ dir, cleanup } = await makeTempDir('wmsbridge-map-group-')));
  after(() => cleanup());

  test('fixed-width header/detail record types', async () => {
    const path = join(dir, 'PEDIDOS.TXT');
    const lines = [
      'H00000101CD-SP01Supermercado Boa Esperança   ',
      'D000101    12',
      'D000102     3',
      'H00000102CD-RJ01Comercial Irmãos Araújo      ',
      'D000300    24',
      'T3',
      'D000999     1',
    ];
    await writeFile(path, `${lines.join('\r\n')}\r\n`);
    const m = mapping({
      source: {
        format: 'fixed-width',
        records: [
          {
            type: 'H',
            match: { start: 1, value: 'H' },
            fields: [
              { name: 'pedido', start: 2, length: 8 },
              { name: 'cd', start: 10, length: 7 },
              { name: 'cliente', start: 17, length: 29 },
            ],
          },
          {
            type: 'D',
            match: { start: 1, value: 'D' },
            fields: [
              { name: 'produto', start: 2, length: 6 },
              { name: 'qtd', start: 8, length: 6 },
            ],
          },
          { type: 'T', match: { start: 1, value: 'T' }, fields: [{ name: 'n', start: 2, length: 1 }] },
        ],
      },
      target: 'PickingList',
      group: {
        headerRecord: 'H',
        itemRecord: 'D',
        items: 'pickingItens',
        itemFields: { productID: { ref: 'Product', from: 'produto' }, quantity: { field: 'qtd', transforms: ['integer'] } },
      },
      fields: {
        order: { field: 'pedido', transforms: ['stripZeros'] },
        codeERP: { field: 'pedido', transforms: ['uuid5'] },
        companyID: { lookup: 'Company', by: 'name', from: { const: 'Distribuidora Paulista de Alimentos Ltda' } },
        branchID: { lookup: 'Warehouse', by: 'codeERP', from: 'cd', select: 'branchID' },
        warehouseID: { lookup: 'Warehouse', by: 'codeERP', from: 'cd' },
        ownerID: { lookup: 'Owners', by: 'code', from: { const: '001' } },
        clientName: { field: 'cliente', transforms: ['trim'] },
      },
    });
    const r = await run(m, openParser(path, m.source));
    assert.deepEqual(
      r.records.map((x) => [x.key, x.payload['clientName'], (x.payload['pickingItens'] as unknown[]).length]),
      [
        ['101|001', 'Supermercado Boa Esperança', 2],
        ['102|001', 'Comercial Irmãos Araújo', 2],
      ],
    );
    assert.deepEqual(r.records[0]?.source, { line: 1, lineEnd: 3 });
    // the trailer is skipped (other record types do not end a document): the detail line after it still belongs to 102
    assert.equal(r.stats.skipped, 1);
    const orphan = await run(
      m,
      (async function* () {
        yield { kind: 'row', row: { line: 1, fields: { produto: '000101', qtd: '1' }, recordType: 'D' } } as ParsedItem;
      })(),
    );
    assert.equal(orphan.rejects[0]?.issues[0]?.code, 'orphan_item');
    assert.equal(orphan.rejects[0]?.issues[0]?.message, 'line 1: D record before any H record: it belongs to no document');
  });

  const nfeMapping = () =>
    mapping({
      match: { files: '*.xml' },
      source: { format: 'xml', itemPath: 'nfeProc/NFe/infNFe/det' },
      target: 'PurchaseOrder',
      group: {
        by: { path: '/NFe/infNFe/@Id' },
        items: 'purchaseOrderItens',
        explode: 'prod/rastro',
        itemFields: {
          productID: { ref: 'Product', from: { path: 'prod/cProd' } },
          quantity: { coalesce: [{ path: 'prod/rastro/qLote' }, { path: 'prod/qCom' }], transforms: [{ number: { decimal: '.' } }] },
          lotNumber: { path: 'prod/rastro/nLote' },
          manufacturingDate: { path: 'prod/rastro/dFab', transforms: [{ date: { format: 'yyyy-MM-dd' } }] },
          expirationDate: { path: 'prod/rastro/dVal', transforms: [{ date: { format: 'yyyy-MM-dd' } }] },
          aux01: { path: '@nItem' },
          aux02: { path: 'prod/NCM' },
        },
      },
      fields: {
        nf: { path: '/NFe/infNFe/ide/nNF' },
        codeERP: { path: '/NFe/infNFe/@Id', transforms: ['uuid5'] },
        companyID: { lookup: 'Company', by: 'name', from: { const: 'Distribuidora Paulista de Alimentos Ltda' } },
        branchID: { lookup: 'Branch', by: 'name', from: { const: 'Matriz São Paulo' } },
        warehouseID: { lookup: 'Warehouse', by: 'codeERP', from: { const: 'CD-SP01' } },
        providerID: { ref: 'Provider', from: { path: '/NFe/infNFe/emit/CNPJ' } },
        ownersID: { lookup: 'Owners', by: 'code', from: { const: '001' } },
        registrationDate: { path: '/NFe/infNFe/ide/dhEmi', transforms: [{ date: { format: 'iso' } }] },
      },
    });

  test('NF-e (real sample): one purchase order, items in order, leading zeros kept', async () => {
    const m = nfeMapping();
    const path = join(SAMPLES_DIR, 'nfelib/35180834128745000152550010000474491454651420-nfe.xml');
    const r = await run(m, openParser(path, m.source));
    assert.equal(r.rejects.length, 0, JSON.stringify(r.rejects[0]?.issues));
    assert.equal(r.records.length, 1);
    const po = r.records[0];
    assert.equal(po?.key, '47449|34128745000152');
    assert.equal(po?.payload['nf'], '47449');
    assert.equal(po?.payload['receiptStatus'], '1');
    assert.equal(po?.payload['registrationDate'], '2018-08-08T13:25:10.000Z');
    const items = po?.payload['purchaseOrderItens'] as Array<Record<string, unknown>>;
    assert.equal(items.length, 21);
    assert.deepEqual(
      items.map((i) => i['aux01']),
      Array.from({ length: 21 }, (_, i) => String(i + 1)),
    );
    assert.ok(
      items.some((i) => i['aux02'] === '09021000'),
      'NCM 09021000 keeps its leading zero',
    );
    assert.deepEqual(items[0]?.['productID'], { $ref: { resource: 'Product', value: '1094' } });
    assert.equal(items[0]?.['quantity'], 2);
    assert.equal(items[0]?.['lotNumber'], undefined);
  });

  test('NF-e with rastro: an item with N lots becomes N items (qLote, nLote, dFab, dVal)', async () => {
    const m = nfeMapping();
    const path = join(PROJECT_ROOT, 'test/fixtures/map/nfe-rastro-35180834128745000152550010000474491454651420.xml');
    const r = await run(m, openParser(path, m.source));
    assert.equal(r.rejects.length, 0, JSON.stringify(r.rejects[0]?.issues));
    const items = r.records[0]?.payload['purchaseOrderItens'] as Array<Record<string, unknown>>;
    assert.equal(items.length, 21 + 1, 'item 1 has two lots');
    assert.deepEqual(
      items.slice(0, 3).map((i) => [i['aux01'], i['lotNumber'], i['quantity'], i['manufacturingDate'], i['expirationDate']]),
      [
        ['1', '0012E5', 1.5, '2018-07-01', '2019-01-01'],
        ['1', '000731', 0.5, '2018-07-15', '2019-01-15'],
        ['2', 'L-0042', 2, '2018-06-30', '2018-12-31'],
      ],
    );
    assert.equal(items[3]?.['lotNumber'], undefined, 'items without rastro stay whole');
    assert.equal(items[3]?.['quantity'], 2);
  });
});

describe('JSON Lines sources', () => {
  let dir = '';
  let cleanup: () => Promise<void> = async () => {};
  before(async () => ({ dir, cleanup } = await makeTempDir('wmsbridge-map-jsonl-')));
  after(() => cleanup());

  test('nested objects read by slash paths; a bad line becomes a reject', async () => {
    const path = join(dir, 'transportadoras.jsonl');
    await writeFile(
      path,
      [
        JSON.stringify({ codigo: 'T001', empresa: { razao: 'Transportes Rápido Paulista Ltda', cnpj: '11.223.344/0001-86' } }),
        '{"codigo": "T002", ',
        JSON.stringify({ codigo: 'T003', empresa: { razao: 'Expresso Carioca', cnpj: '11.223.344/0001-87' } }),
      ].join('\n') + '\n',
    );
    const m = mapping({
      match: { files: '*.jsonl' },
      source: { format: 'jsonl' },
      target: 'ShippingCompany',
      fields: { codeERP: { path: 'codigo' }, name: { path: 'empresa/razao' }, cnpj: { path: 'empresa/cnpj', transforms: ['cnpj'] } },
    });
    const r = await run(m, openParser(path, m.source));
    assert.deepEqual(
      r.records.map((x) => [x.key, x.payload['cnpj'], x.op]),
      [['T001', '11223344000186', 'upsert']],
    );
    assert.deepEqual(
      r.rejects.map((x) => [x.source.line, x.issues[0]?.code]),
      [
        [2, 'bad_json'],
        [3, 'invalid_cnpj'],
      ],
    );
    assert.match(r.rejects[1]?.issues[0]?.message ?? '', /^line 3: field cnpj: '11\.223\.344\/0001-87' is not a valid CNPJ \(check digits should be 86\)$/);
  });
});
