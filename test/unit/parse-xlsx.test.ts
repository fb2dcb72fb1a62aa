/**
 * The xlsx reader (src/parse/xlsx.ts): sheet by name or position, header on any row, typed cells (an EAN number
 * read as its digits, decimals with a comma, date cells as dates, Excel errors refused naming the cell), and the
 * rejects workbook (src/outbox/rejects-xlsx.ts) read back by the same options.
 */
import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import ExcelJS from 'exceljs';
import { makeTempDir } from '../helpers/tmp.js';
import { PROJECT_ROOT } from '../helpers/cli.js';
import { collectItems, type ParseOptionsInput, type RawRow } from '../../src/parse/index.js';
import { columnLetter, numberText, dateText } from '../../src/parse/xlsx.js';
import { createRejectsWriter } from '../../src/outbox/rejects.js';
import { InputError } from '../../src/shared/errors.js';
import { compileTransform, RowFail } from '../../src/map/transforms.js';

let dir: string;
let cleanup: () => Promise<void>;
let n = 0;
before(async () => {
  ({ dir, cleanup } = await makeTempDir('wmsbridge-parse-xlsx-'));
});
after(async () => cleanup());

const BLING = join(PROJECT_ROOT, 'test', 'fixtures', 'inputs', 'bling', 'produtos_bling.xlsx');
const BLING_OPTS: ParseOptionsInput = { format: 'xlsx', sheet: 'Produtos', headerRow: 3 };

function rows(items: Awaited<ReturnType<typeof collectItems>>['items']): RawRow[] {
  return items.flatMap((i) => (i.kind === 'row' ? [i.row] : []));
}

async function workbook(build: (wb: ExcelJS.Workbook) => void): Promise<string> {
  const wb = new ExcelJS.Workbook();
  build(wb);
  const p = join(dir, `w${n++}.xlsx`);
  await wb.xlsx.writeFile(p);
  return p;
}

describe('xlsx: values as a mapping reads them', () => {
  test('numbers: digits, never an exponent; decimals with a comma', () => {
    assert.equal(numberText(7891234567895), '7891234567895');
    assert.equal(numberText(17891234567892), '17891234567892');
    assert.equal(numberText(12.5), '12,5');
    assert.equal(numberText(0.0000001), '0,0000001');
    assert.equal(numberText(-3), '-3');
    assert.equal(numberText(1e20), '100000000000000000000');
    assert.equal(dateText(new Date(Date.UTC(2024, 1, 29))), '29/02/2024');
    assert.equal(dateText(new Date(Date.UTC(2025, 6, 1, 14, 30, 5))), '01/07/2025 14:30:05');
    assert.deepEqual([1, 26, 27, 52, 703].map(columnLetter), ['A', 'Z', 'AA', 'AZ', 'AAA']);
  });

  test('a Bling product export: sheet by name, header on row 3, typed cells', async () => {
    const r = await collectItems(BLING, BLING_OPTS);
    assert.equal(r.summary.errors, 0);
    assert.equal(r.facts.sheetName, 'Produtos');
    assert.deepEqual(r.facts.sheetNames, ['Instruções', 'Produtos']);
    const all = rows(r.items);
    assert.deepEqual(
      all.map((x) => x.line),
      [4, 5, 6, 7, 8, 9],
    );
    const first = all[0]!.fields;
    assert.equal(first['GTIN/EAN'], '7891234567895', 'an EAN number is read as its 13 digits');
    assert.equal(first['Preço'], '27,9');
    assert.equal(first['Peso bruto (Kg)'], '5,05');
    assert.equal(first['Data de cadastro'], '15/01/2024');
    assert.equal(first['ID'], '16001');
    assert.equal(all[1]!.fields['NCM'], '07133319', 'a text cell keeps its leading zero');
    assert.equal(all[2]!.fields['Data de cadastro'], '01/07/2025 14:30:00');
    assert.equal(all[4]!.fields['Peso bruto (Kg)'], 'n/d');
    assert.deepEqual(all[0]!.sheet?.letters['Peso bruto (Kg)'], 'I');
  });

  test('sheet by position; a missing sheet names the sheets there are', async () => {
    const r = await collectItems(BLING, { format: 'xlsx', sheet: 2, headerRow: 3 });
    assert.equal(rows(r.items).length, 6);
    await assert.rejects(
      collectItems(BLING, { format: 'xlsx', sheet: 'Estoque' }),
      (e: unknown) => e instanceof InputError && /no sheet "Estoque" \(the workbook's sheets: "Instruções", "Produtos"\)/.test(e.message),
    );
    await assert.rejects(collectItems(BLING, { format: 'xlsx', sheet: 3 }), /no sheet at position 3/);
  });

  test('an Excel error cell rejects its row naming the cell; formulas give their result; rich text is joined', async () => {
    const p = await workbook((wb) => {
      const ws = wb.addWorksheet('Plan1');
      ws.addRow(['codigo', 'qtd', 'nome']);
      ws.addRow(['A', { formula: '2*3', result: 6 }, { richText: [{ text: 'Maçã ' }, { font: { bold: true }, text: 'gala' }] }]);
      ws.addRow(['B', { error: '#N/A' }, 'x']);
      ws.addRow([]);
      ws.addRow(['C', true, 'y']);
    });
    const r = await collectItems(p, { format: 'xlsx' });
    assert.deepEqual(
      rows(r.items).map((x) => [x.line, x.fields.qtd, x.fields.nome]),
      [
        [2, '6', 'Maçã gala'],
        [5, 'true', 'y'],
      ],
    );
    const err = r.items.find((i) => i.kind === 'error');
    assert.ok(err && err.kind === 'error');
    assert.equal(err.line, 3);
    assert.equal(err.issue.code, 'cell_error');
    assert.match(err.issue.message, /field qtd: the cell holds the Excel error #N\/A \(sheet Plan1, cell B3\)/);
  });

  test('header: false: columns by letter, or by `columns`', async () => {
    const p = await workbook((wb) => {
      const ws = wb.addWorksheet('Dados');
      ws.addRow(['X1', 10]);
    });
    const byLetter = rows((await collectItems(p, { format: 'xlsx', header: false })).items);
    assert.deepEqual(byLetter[0]!.fields, { A: 'X1', B: '10' });
    const named = rows((await collectItems(p, { format: 'xlsx', header: false, columns: ['codigo', 'qtd'] })).items);
    assert.deepEqual(named[0]!.fields, { codigo: 'X1', qtd: '10' });
  });

  test('not a workbook: a clear InputError naming the file', async () => {
    const p = join(dir, 'fake.xlsx');
    await (await import('node:fs/promises')).writeFile(p, 'codigo;nome\n1;a\n');
    await assert.rejects(collectItems(p, { format: 'xlsx' }), (e: unknown) => e instanceof InputError && e.message.includes(p) && /XLSX/.test(e.message));
  });
});

describe('date: {format: excel}: an Excel date serial', () => {
  test('days since 1899-12-30 (a decimal comma as the reader gives it), a fraction is the time of day', () => {
    const date = compileTransform({ date: { format: 'excel', output: 'auto' } }, { timeZone: 'America/Sao_Paulo' });
    assert.equal(date('45292'), '2024-01-01');
    assert.equal(date('45351'), '2024-02-29');
    assert.equal(date('45292,5'), '2024-01-01T15:00:00.000Z', 'noon in São Paulo');
    assert.throws(
      () => date('01/01/2024'),
      (e: unknown) => e instanceof RowFail && /not an Excel date serial/.test(e.message),
    );
    assert.throws(() => date('0'), RowFail);
  });
});

describe('xlsx rejects: a workbook the same mapping reads again', () => {
  test('typed cells, the original sheet name and position, the reason column; read back with headerRow 3', async () => {
    const r = await collectItems(BLING, BLING_OPTS);
    const bad = rows(r.items)[4]!;
    const out = join(dir, `produtos_bling-rejects.xlsx`);
    const w = createRejectsWriter(out, { ...BLING_OPTS, headerCells: r.facts.header!, sheetName: r.facts.sheetName!, sheetNames: r.facts.sheetNames! });
    w.write({ line: bad.line, text: bad.text!, cells: bad.cells!, reasons: 'line 8: field weight: n/d is not a number (sheet Produtos, cell I8)' });
    const res = await w.close();
    assert.equal(res.count, 1);
    assert.equal(res.path, out);
    const again = await collectItems(out, BLING_OPTS);
    assert.equal(again.facts.sheetName, 'Produtos');
    assert.deepEqual(again.facts.sheetNames, ['Instruções', 'Produtos']);
    const back = rows(again.items);
    assert.equal(back.length, 1);
    const { wmsbridge_error: reason, ...fields } = back[0]!.fields;
    assert.deepEqual(fields, bad.fields, 'the same values, typed as they were (EAN digits, decimals, date)');
    assert.match(reason!, /cell I8/);
    // the EAN is still a number cell, the date a date cell
    const wb = new ExcelJS.Workbook();
    await wb.xlsx.readFile(out);
    const ws = wb.getWorksheet('Produtos')!;
    assert.equal(typeof ws.getRow(2).getCell(8).value, 'number');
    assert.ok(ws.getRow(2).getCell(10).value instanceof Date);
  });
});
