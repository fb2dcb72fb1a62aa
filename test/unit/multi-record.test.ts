/**
 * Multi-record files (issue 39): record types in delimited and fixed-width files chosen by a cell value, a prefix or
 * a pattern, each with its own layout; comments; trailers (counts, per block, sums, per code); grouping at any depth
 * (header -> item -> lot, context records read as '<type>/<field>'), and the load-time checks `check` reports.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { makeTempDir } from '../helpers/tmp.js';
import { mapping, run } from '../fixtures/map/util.js';
import { collectItems, openParser, type ParsedItem, type ParseOptionsInput } from '../../src/parse/index.js';
import { ConfigError, InputError, MappingError } from '../../src/shared/errors.js';
import { parseMapping } from '../../src/map/load.js';

let dir = '';
let cleanup: () => Promise<void> = async () => {};
let n = 0;
before(async () => ({ dir, cleanup } = await makeTempDir('wmsbridge-multi-record-')));
after(() => cleanup());

async function file(lines: string[]): Promise<string> {
  const p = join(dir, `f${n++}.txt`);
  await writeFile(p, `${lines.join('\r\n')}\r\n`);
  return p;
}
const summary = (items: ParsedItem[]): string[] =>
  items.map((i) =>
    i.kind === 'row' ? `${i.row.line} ${i.row.recordType}: ${JSON.stringify(i.row.fields)}` : `${i.line} error ${i.issue.code}: ${i.issue.message}`,
  );

/** the Sankhya-like orders layout: C header, I item, L lot, by the value of cell 0 */
const ORDERS: ParseOptionsInput = {
  format: 'delimited',
  delimiter: ';',
  header: false,
  comment: '#',
  records: [
    { type: 'C', match: { col: 0, value: 'C' }, columns: ['t', 'pedido', 'cd', 'cliente'] },
    { type: 'I', match: { col: 0, value: 'I' }, columns: ['t', 'produto', 'qtd'] },
    { type: 'L', match: { prefix: 'L;' }, columns: ['t', 'lote', 'qtd'] },
  ],
};

describe('record types of a delimited file', () => {
  test('each type has its own columns; comments skipped; an undeclared type and a short line are errors naming line and type', async () => {
    const p = await file(['# exported 05/11/2024', 'C;1;CD-SP01;Ana', 'I;P1;2', 'L;A1;1', 'X;what', 'I;P2']);
    const { items } = await collectItems(p, ORDERS);
    assert.deepEqual(summary(items), [
      '2 C: {"t":"C","pedido":"1","cd":"CD-SP01","cliente":"Ana"}',
      '3 I: {"t":"I","produto":"P1","qtd":"2"}',
      '4 L: {"t":"L","lote":"A1","qtd":"1"}',
      '5 error unknown_record: no record type of the layout matches this line (starts with "X;what")',
      '6 error ragged_row: record I: expected 3 columns, found 2',
    ]);
    assert.equal(items[4]?.kind === 'error' && items[4].recordType, 'I');
  });

  test('a pattern, a list of conditions, the default type, unnamed cells ("") and mixed fixed-width fields', async () => {
    const p = await file(['|0000|ACME|', '|C100|0|123|', 'HDRFIXED  42', '|9999|4|']);
    const { items } = await collectItems(p, {
      format: 'delimited',
      delimiter: '|',
      quote: false,
      header: false,
      relaxColumnCount: true,
      records: [
        { type: 'head', match: [{ col: 1, value: '0000' }, { pattern: '^\\|0000\\|' }], columns: ['', 'REG', 'NOME'] },
        { type: 'fixed', match: { prefix: 'HDR' }, fields: [{ name: 'n', start: 11, length: 2 }] },
        { type: 'other', match: 'default' },
        { type: 'C100', match: { pattern: '^\\|C1\\d\\d\\|' }, columns: ['', 'REG', 'IND_OPER', 'NUM_DOC'] },
      ],
      trailer: { type: 'other', countField: '2', counts: 'all' },
    });
    assert.deepEqual(summary(items), [
      '1 head: {"0":"","3":"","REG":"0000","NOME":"ACME"}',
      '2 C100: {"0":"","4":"","REG":"C100","IND_OPER":"0","NUM_DOC":"123"}',
      '3 fixed: {"n":"42"}',
      '4 other: {"0":"","1":"9999","2":"4","3":""}',
    ]);
  });

  test('layout rules are ConfigErrors', () => {
    const bad = (o: Record<string, unknown>, re: RegExp): void =>
      assert.throws(
        () => openParser('x', { ...ORDERS, ...o } as ParseOptionsInput),
        (e: unknown) => e instanceof ConfigError && re.test(e.message),
      );
    bad({ header: true }, /records: a multi-record file has no header line: set header: false/);
    bad({ records: [{ type: 'C', match: { pattern: '([' } }] }, /records\.0\.match\.pattern: not a regular expression/);
    bad({ trailer: { type: 'T', countField: 'n' } }, /trailer\.type: the layout declares no record type "T"/);
    bad({ trailer: { type: 'C', countField: 'nope' } }, /trailer\.countField: record type "C" has no field "nope"/);
    bad(
      { trailer: { type: 'C', countField: 'pedido', sums: [{ field: 'pedido', of: { type: 'I', field: 'preco' } }] } },
      /sums\.of\.field: record type "I" has no field "preco"/,
    );
    assert.throws(
      () => openParser('x', { format: 'fixed-width', records: [{ type: 'a', match: { col: 0, value: 'a' }, fields: [] }] }),
      (e: unknown) => e instanceof ConfigError && /\{col, value\} reads a cell of a delimited file/.test(e.message),
    );
  });
});

describe('trailers', () => {
  const T: ParseOptionsInput = {
    ...ORDERS,
    records: [...(ORDERS as { records: object[] }).records, { type: 'T', match: { col: 0, value: 'T' }, columns: ['t', 'itens', 'total'] }],
  } as ParseOptionsInput;
  const lines = ['C;1;CD-SP01;Ana', 'I;P1;2,50', 'I;P2;1', 'C;2;CD-SP01;Bia', 'I;P3;4'];

  test('a count and a sum per block (since the header) that agree; a comment is not counted', async () => {
    const p = await file(['C;1;CD-SP01;Ana', 'I;P1;2,50', '# note', 'I;P2;1', 'T;2;3,50', 'C;2;CD-SP01;Bia', 'I;P3;4', 'T;1;4,00']);
    const o = { ...T, trailer: { type: 'T', countField: 'itens', counts: ['I'], since: 'C', sums: [{ field: 'total', of: { type: 'I', field: 'qtd' } }] } };
    const { items } = await collectItems(p, o as ParseOptionsInput);
    assert.equal(items.filter((i) => i.kind === 'error').length, 0);
  });

  test('a sum that disagrees fails the file, naming line, record type and field', async () => {
    const p = await file([...lines, 'T;3;7,49']);
    const o = { ...T, trailer: { type: 'T', countField: 'itens', counts: ['I'], sums: [{ field: 'total', of: { type: 'I', field: 'qtd' } }] } };
    await assert.rejects(collectItems(p, o as ParseOptionsInput), (e: unknown) => {
      assert.ok(e instanceof InputError);
      assert.match(e.message, /:6: trailer sum mismatch: the trailer T \(total\) declares 7\.49, the I records of the file add up to 7\.50 \(field qtd\)/);
      return true;
    });
  });

  test('a count that disagrees, a value that is no number, and a missing trailer fail the file', async () => {
    const o = { ...T, trailer: { type: 'T', countField: 'itens', counts: ['I'] } } as ParseOptionsInput;
    await assert.rejects(
      collectItems(await file([...lines, 'T;4;0']), o),
      /:6: trailer count mismatch: the trailer T \(itens\) declares 4 records, the file has 3 \(I\)/,
    );
    await assert.rejects(collectItems(await file(lines), o), /no trailer record \(type "T"\) found: the file may be truncated/);
    const sums = { ...T, trailer: { type: 'T', sums: [{ field: 'total', of: { type: 'I', field: 'qtd' } }] } } as ParseOptionsInput;
    await assert.rejects(
      collectItems(await file(['C;1;x;y', 'I;P1;dois', 'T;1;2']), sums),
      /:2: record I, field qtd: value "dois" is not a number with decimal ','/,
    );
  });

  test('fixed-width: implied decimals, per-code counts (SPED 9900 style) and comments', async () => {
    const fw: ParseOptionsInput = {
      format: 'fixed-width',
      comment: '*',
      records: [
        { type: 'H', match: { prefix: 'H' }, fields: [{ name: 'doc', start: 2, length: 3 }] },
        { type: 'D', match: { start: 1, value: 'D' }, fields: [{ name: 'valor', start: 2, length: 5 }] },
        {
          type: 'N',
          match: { prefix: 'N' },
          fields: [
            { name: 'code', start: 2, length: 1 },
            { name: 'n', start: 3, length: 2 },
          ],
        },
        { type: 'S', match: { prefix: 'S' }, fields: [{ name: 'total', start: 2, length: 7 }] },
      ],
      trailer: [
        { type: 'S', since: 'H', sums: [{ field: 'total', of: { type: 'D', field: 'valor' }, scale: 2 }] },
        { type: 'N', countField: 'n', perCode: { codeField: 'code', code: { start: 1, length: 1 } } },
      ],
    };
    const good = ['H001', '* a comment', 'D00150', 'D00025', 'S0000175', 'ND02', 'NH01', 'NS01', 'NN04'];
    const { items } = await collectItems(await file(good), fw);
    assert.equal(items.length, 8);
    await assert.rejects(
      collectItems(await file(good.map((l) => (l === 'ND02' ? 'ND03' : l))), fw),
      /:6: trailer count mismatch: the trailer N \(n\) declares 3 records of code D, the file has 2/,
    );
    await assert.rejects(
      collectItems(await file(good.map((l) => (l === 'S0000175' ? 'S0000176' : l))), fw),
      /declares 1\.76, the D records of the H block from line 1 add up to 1\.75/,
    );
  });
});

describe('repeated fields (occurs)', () => {
  test('each filled occurrence of a line is a row of its own, on the same line; blank ones after the first left out', async () => {
    const o: ParseOptionsInput = {
      format: 'fixed-width',
      lineLength: 20,
      records: [
        {
          type: 'M',
          match: { prefix: 'M' },
          occurs: { times: 3, every: 6 },
          fields: [
            { name: 'p', start: 2, length: 3 },
            { name: 'q', start: 5, length: 3 },
          ],
        },
      ],
    };
    const { items } = await collectItems(await file(['MA  001B  002      ', 'MC  003']), o);
    assert.deepEqual(summary(items), ['1 M: {"p":"A  ","q":"001"}', '1 M: {"p":"B  ","q":"002"}', '2 M: {"p":"C  ","q":"003"}']);
    assert.throws(
      () => openParser('x', { ...o, lineLength: 18 } as ParseOptionsInput),
      (e: unknown) => e instanceof ConfigError && /field q \(its occurrence 3\) ends at 19, past lineLength 18/.test(e.message),
    );
  });
});

/** a header/item/lot mapping of the ORDERS layout */
const ordersMapping = (group: Record<string, unknown> = {}, extra: Record<string, unknown> = {}) =>
  mapping({
    source: ORDERS,
    target: 'PickingList',
    group: {
      headerRecord: 'C',
      itemRecord: 'I',
      lotRecord: 'L',
      items: 'pickingItens',
      itemFields: {
        productID: { ref: 'Product', from: { col: 'I/produto' } },
        quantity: { coalesce: [{ col: 'L/qtd' }, { col: 'I/qtd' }], transforms: ['number'] },
        lotNumber: { col: 'lote' },
        aux01: { col: 'C/cliente' },
      },
      ...group,
    },
    fields: {
      order: 'pedido',
      codeERP: { template: 'PickingList:{pedido}', transforms: ['uuid5'] },
      companyID: { lookup: 'Company', by: 'name', from: { const: 'Distribuidora Paulista de Alimentos Ltda' } },
      branchID: { lookup: 'Warehouse', by: 'codeERP', from: 'cd', select: 'branchID' },
      warehouseID: { lookup: 'Warehouse', by: 'codeERP', from: 'cd' },
      ownerID: { lookup: 'Owners', by: 'code', from: { const: '001' } },
      clientName: 'cliente',
    },
    ...extra,
  });

const itemsOf = (r: Awaited<ReturnType<typeof run>>): string[][] =>
  r.records.map((x) =>
    (x.payload['pickingItens'] as Array<Record<string, unknown>>).map(
      (i) =>
        `${(i['productID'] as { $ref: { value: string } }).$ref.value} ${String(i['quantity'])}${i['lotNumber'] ? ` ${String(i['lotNumber'])}` : ''} ${String(i['aux01'])}`,
    ),
  );

describe('documents of multi-record files', () => {
  test('header -> item -> lot: an item with lots is one item per lot reading its item; without lots one item', async () => {
    const m = ordersMapping();
    const p = await file(['# x', 'C;1;CD-SP01;Ana', 'I;P1;2', 'I;P2;5', 'L;A1;3', 'L;A2;2', 'C;2;CD-RJ01;Bia', 'I;P3;1']);
    const r = await run(m, openParser(p, m.source));
    assert.equal(r.rejects.length, 0, JSON.stringify(r.rejects));
    assert.deepEqual(itemsOf(r), [['P1 2 Ana', 'P2 3 A1 Ana', 'P2 2 A2 Ana'], ['P3 1 Bia']]);
    assert.deepEqual(r.records[0]?.source, { line: 2, lineEnd: 6 });
    assert.deepEqual(
      r.records[0]?.raw.map((x) => x.recordType),
      ['C', 'I', 'I', 'L', 'L'],
    );
  });

  test('an item before any header, a lot before any item, a line of no declared type: rejects, nothing lost', async () => {
    const m = ordersMapping();
    const p = await file(['I;P0;1', 'C;1;CD-SP01;Ana', 'L;A0;1', 'I;P1;2', 'C;2;CD-SP01;Bia', 'I;P2;1', 'Z;??', 'C;3;CD-SP01;Cid', 'I;P3;1']);
    const r = await run(m, openParser(p, m.source));
    assert.deepEqual(
      r.records.map((x) => x.payload['order']),
      ['3'],
    );
    assert.deepEqual(
      r.rejects.map((x) => [x.raw.map((w) => w.line), x.issues.map((i) => i.message)]),
      [
        [[1], ['line 1: I record before any C record: it belongs to no document']],
        [[2, 3, 4], ["line 3: L record before any I record of document 'line 2': it belongs to no item"]],
        [
          [5, 6, 7],
          [
            'line 7: no record type of the layout matches this line (starts with "Z;??") (the line could not be read and may belong to document \'line 5\', so the whole document is held back)',
          ],
        ],
      ],
    );
    assert.equal(r.stats.rows, 9);
  });

  test('context records: read by every line after them as <type>/<field> (fixed-width, NOTFIS-like)', async () => {
    const m = mapping({
      match: { files: '*.txt' },
      source: {
        format: 'fixed-width',
        records: [
          { type: 'S', match: { prefix: 'S' }, fields: [{ name: 'cnpj', start: 2, length: 4 }] },
          { type: 'N', match: { prefix: 'N' }, fields: [{ name: 'nf', start: 2, length: 3 }] },
          {
            type: 'M',
            match: { prefix: 'M' },
            fields: [
              { name: 'prod', start: 2, length: 2 },
              { name: 'qtd', start: 4, length: 2 },
            ],
          },
        ],
      },
      target: 'PurchaseOrder',
      group: {
        headerRecord: 'N',
        itemRecord: 'M',
        contextRecords: ['S'],
        items: 'purchaseOrderItens',
        itemFields: { productID: { ref: 'Product', from: { field: 'prod' } }, quantity: { field: 'qtd', transforms: ['integer'] }, aux01: { field: 'S/cnpj' } },
      },
      fields: {
        nf: { field: 'nf' },
        codeERP: { template: '{S/cnpj}:{nf}', transforms: ['uuid5'] },
        companyID: { lookup: 'Company', by: 'name', from: { const: 'Distribuidora Paulista de Alimentos Ltda' } },
        branchID: { lookup: 'Warehouse', by: 'codeERP', from: { const: 'CD-SP01' }, select: 'branchID' },
        warehouseID: { lookup: 'Warehouse', by: 'codeERP', from: { const: 'CD-SP01' } },
        providerID: { ref: 'Provider', from: { field: 'S/cnpj' } },
        ownersID: { lookup: 'Owners', by: 'code', from: { const: '001' } },
      },
    });
    const p = await file(['S1111', 'N001', 'MA 1', 'N002', 'MB 2', 'S2222', 'N003', 'MC 3']);
    const r = await run(m, openParser(p, m.source));
    assert.equal(r.rejects.length, 0, JSON.stringify(r.rejects));
    assert.deepEqual(
      r.records.map((x) => `${x.key} ${(x.payload['purchaseOrderItens'] as Array<Record<string, unknown>>).map((i) => i['aux01']).join()}`),
      ['001|1111 1111', '002|1111 1111', '003|2222 2222'],
    );
  });

  test('check names what is wrong in a multi-record group at load time', () => {
    const bad = (obj: Record<string, unknown>, re: RegExp): void =>
      assert.throws(
        () => ordersMapping(obj),
        (e: unknown) => e instanceof MappingError && re.test(e.message),
      );
    bad({ lotRecord: 'X' }, /group\.lotRecord: 'X' is not a record type of source\.records \(C, I, L\)/);
    bad({ lotRecord: 'I' }, /group\.lotRecord: record type 'I' is already the itemRecord/);
    bad({ contextRecords: ['C'] }, /group\.contextRecords: record type 'C' is already the headerRecord/);
    assert.throws(
      () =>
        ordersMapping(
          {},
          { group: { by: 'pedido', lotRecord: 'L', items: 'pickingItens', itemFields: { productID: { ref: 'Product', from: 'produto' }, quantity: 'qtd' } } },
        ),
      /lotRecord and contextRecords are levels of a multi-record group: give headerRecord and itemRecord too/,
    );
    assert.throws(
      () =>
        ordersMapping(
          {},
          {
            source: { format: 'delimited', delimiter: ';' },
            fields: { order: 'pedido', codeERP: 'x', companyID: 'x', branchID: 'x', warehouseID: 'x', ownerID: 'x' },
          },
        ),
      /headerRecord\/itemRecord name record types: declare them in source\.records/,
    );
    // a name no record type declares is refused, qualified or not
    bad(
      { itemFields: { productID: { ref: 'Product', from: { col: 'I/produtos' } }, quantity: 'qtd' } },
      /'I\/produtos' is not declared in the fields of source\.records/,
    );
    assert.ok(parseMapping);
  });
});
