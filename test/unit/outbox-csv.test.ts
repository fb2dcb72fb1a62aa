import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { readFile, readdir } from 'node:fs/promises';
import { join } from 'node:path';
import iconv from 'iconv-lite';
import { makeTempDir } from '../helpers/tmp.js';
import {
  createCsvWriter,
  createJsonArrayWriter,
  createJsonlWriter,
  CsvFormatSchema,
  formatCsvCell,
  formatCsvNumber,
  resolveCsvFormat,
} from '../../src/outbox/csv.js';
import { createResultWriter, RESULT_COLUMNS } from '../../src/outbox/results.js';

let dir: string;
let cleanup: () => Promise<void>;
before(async () => ({ dir, cleanup } = await makeTempDir()));
after(async () => cleanup());

const fmt = resolveCsvFormat({ timeZone: 'UTC' });

describe('csv cells', () => {
  test('RFC 4180 quoting: delimiter, quote, CR, LF', () => {
    assert.equal(formatCsvCell('a;b', fmt), '"a;b"');
    assert.equal(formatCsvCell('say "hi"', fmt), '"say ""hi"""');
    assert.equal(formatCsvCell('l1\nl2', fmt), '"l1\nl2"');
    assert.equal(formatCsvCell('x\ry', fmt), '"x\ry"');
    assert.equal(formatCsvCell('a,b', fmt), 'a,b');
    assert.equal(formatCsvCell('a,b', resolveCsvFormat({ delimiter: ',' })), '"a,b"');
    assert.equal(formatCsvCell('a|b', resolveCsvFormat({ delimiter: '|' })), '"a|b"');
    assert.equal(formatCsvCell(null, fmt), '');
    assert.equal(formatCsvCell(undefined, fmt), '');
  });
  test('numbers: decimal comma, no thousands separator, no exponent', () => {
    assert.equal(formatCsvCell(1234567.5, fmt), '1234567,5');
    assert.equal(formatCsvCell(1234567.5, resolveCsvFormat({ decimalSeparator: '.' })), '1234567.5');
    assert.equal(formatCsvNumber(1e21), '1000000000000000000000');
    assert.equal(formatCsvNumber(1e-7), '0,0000001');
    assert.equal(formatCsvNumber(Number.NaN), '');
    assert.equal(formatCsvNumber(12n), '12');
    // decimal comma with a comma delimiter must be quoted
    assert.equal(formatCsvCell(2.5, resolveCsvFormat({ delimiter: ',' })), '"2,5"');
  });
  test('formula neutralisation: text yes, numbers no', () => {
    assert.equal(formatCsvCell('=SUM(A1:A9)', fmt), "'=SUM(A1:A9)");
    assert.equal(formatCsvCell('+1', fmt), "'+1");
    assert.equal(formatCsvCell('-2', fmt), "'-2");
    assert.equal(formatCsvCell(-2, fmt), '-2');
    assert.equal(formatCsvCell(-2.5, fmt), '-2,5');
    assert.equal(formatCsvCell('@x', fmt), "'@x");
    assert.equal(formatCsvCell('\tx', fmt), "'\tx");
    assert.equal(formatCsvCell('\rx', fmt), '"\'\rx"');
    assert.equal(formatCsvCell('=1;2', fmt), '"\'=1;2"');
    assert.equal(formatCsvCell('a=b', fmt), 'a=b');
    assert.equal(formatCsvCell('=1', resolveCsvFormat({ neutralizeFormulas: false })), '=1');
  });
  test('dates: Date values and ISO strings in date columns', () => {
    const d = new Date('2025-07-29T14:56:56.035Z');
    assert.equal(formatCsvCell(d, fmt), '29/07/2025 14:56:56');
    assert.equal(formatCsvCell(d, resolveCsvFormat({ dateFormat: 'dd/MM/yyyy', timeZone: 'UTC' })), '29/07/2025');
    assert.equal(formatCsvCell(d, resolveCsvFormat({ dateFormat: 'iso' })), '2025-07-29T14:56:56.035Z');
    assert.equal(formatCsvCell(d, resolveCsvFormat({ timeZone: 'America/Sao_Paulo' })), '29/07/2025 11:56:56');
    assert.equal(formatCsvCell('2025-07-29T14:56:56.035Z', fmt, true), '29/07/2025 14:56:56');
    assert.equal(formatCsvCell('2025-07-29', fmt, true), '29/07/2025');
    assert.equal(formatCsvCell('2025-07-29T08:05', fmt, true), '29/07/2025 08:05:00');
    assert.equal(formatCsvCell('2025-07-29', fmt, false), '2025-07-29');
    assert.equal(formatCsvCell('not a date', fmt, true), 'not a date');
  });
  test('the format schema is strict and fills defaults', () => {
    const f = CsvFormatSchema.parse({});
    assert.deepEqual(
      { e: f.encoding, d: f.delimiter, s: f.decimalSeparator, df: f.dateFormat, le: f.lineEnding, n: f.neutralizeFormulas },
      { e: 'utf-8-bom', d: ';', s: ',', df: 'dd/MM/yyyy HH:mm:ss', le: '\r\n', n: true },
    );
    assert.throws(() => CsvFormatSchema.parse({ delimiter: ':' }));
    assert.throws(() => CsvFormatSchema.parse({ encodng: 'utf-8' }));
  });
});

describe('csv files', () => {
  const row = { code: 'P-1', name: 'Ação ção é €', qty: 2.5, note: '=HYPERLINK("x")' };
  const columns = ['code', 'name', 'qty', 'note'];

  test('utf-8-bom (default): BOM, ; and CRLF', async () => {
    const p = join(dir, 'bom.csv');
    const w = createCsvWriter(p, { columns });
    w.write(row);
    assert.deepEqual(await w.close(), { rows: 1, replacedChars: 0 });
    const buf = await readFile(p);
    assert.deepEqual([...buf.subarray(0, 3)], [0xef, 0xbb, 0xbf]);
    assert.equal(buf.subarray(3).toString('utf8'), 'code;name;qty;note\r\nP-1;Ação ção é €;2,5;"\'=HYPERLINK(""x"")"\r\n');
  });
  test('utf-8 without BOM and LF', async () => {
    const p = join(dir, 'plain.csv');
    const w = createCsvWriter(p, { columns, format: { encoding: 'utf-8', lineEnding: '\n', delimiter: ',', decimalSeparator: '.' } });
    w.write(row);
    await w.close();
    const buf = await readFile(p);
    assert.notEqual(buf[0], 0xef);
    assert.equal(buf.toString('utf8'), 'code,name,qty,note\nP-1,Ação ção é €,2.5,"\'=HYPERLINK(""x"")"\n');
  });
  test('windows-1252: single bytes for ç ã é €, unrepresentable -> ? and counted', async () => {
    const p = join(dir, 'cp1252.csv');
    const w = createCsvWriter(p, { columns, format: { encoding: 'windows-1252' } });
    w.write(row);
    // decomposed c + combining cedilla is normalised to ç; emoji and CJK are not representable
    w.write({ code: 'P-2', name: 'c\u0327 😀 中', qty: -1, note: '' });
    const res = await w.close();
    assert.equal(res.rows, 2);
    assert.equal(res.replacedChars, 2);
    const buf = await readFile(p);
    assert.ok(buf.includes(Buffer.from([0xe7])), 'ç is 0xE7');
    assert.ok(buf.includes(Buffer.from([0xe3])), 'ã is 0xE3');
    assert.ok(buf.includes(Buffer.from([0xe9])), 'é is 0xE9');
    assert.ok(buf.includes(Buffer.from([0x80])), '€ is 0x80');
    const text = iconv.decode(buf, 'win1252');
    assert.equal(text, 'code;name;qty;note\r\nP-1;Ação ção é €;2,5;"\'=HYPERLINK(""x"")"\r\nP-2;ç ? ?;-1;\r\n');
  });
  test('backpressure: write returns false past the buffer, drain resolves, all rows arrive', async () => {
    const p = join(dir, 'big.csv');
    const w = createCsvWriter(p, { columns: ['i', 'pad'], format: { encoding: 'utf-8' } });
    let sawFalse = false;
    for (let i = 0; i < 20_000; i++) {
      if (!w.write({ i, pad: 'x'.repeat(50) })) {
        sawFalse = true;
        await w.drain();
      }
    }
    assert.equal((await w.close()).rows, 20_000);
    assert.ok(sawFalse, 'the writer signalled backpressure');
    const lines = (await readFile(p, 'utf8')).split('\r\n');
    assert.equal(lines.length, 20_002);
    assert.equal(lines[20_000], '19999;' + 'x'.repeat(50));
  });
  test('abort leaves nothing behind', async () => {
    const sub = join(dir, 'abort');
    await (await import('node:fs/promises')).mkdir(sub);
    const w = createCsvWriter(join(sub, 'x.csv'), { columns: ['a'] });
    w.write({ a: 1 });
    await w.abort();
    assert.deepEqual(await readdir(sub), []);
  });
  test('JSONL and JSON array writers', async () => {
    const jl = createJsonlWriter(join(dir, 'x.jsonl'));
    jl.write({ a: 1 });
    jl.write('<b>"');
    assert.equal((await jl.close()).rows, 2);
    assert.equal(await readFile(join(dir, 'x.jsonl'), 'utf8'), '{"a":1}\n"<b>\\""\n');
    const ja = createJsonArrayWriter(join(dir, 'x.json'));
    ja.write({ a: 1 });
    ja.write([2, 3]);
    await ja.close();
    assert.deepEqual(JSON.parse(await readFile(join(dir, 'x.json'), 'utf8')), [{ a: 1 }, [2, 3]]);
    const empty = createJsonArrayWriter(join(dir, 'empty.json'));
    await empty.close();
    assert.deepEqual(JSON.parse(await readFile(join(dir, 'empty.json'), 'utf8')), []);
  });
  test('result CSV: stable columns', async () => {
    const p = join(dir, 'result-x.csv');
    const w = createResultWriter(p, { encoding: 'utf-8' });
    w.write({ line: 2, target: 'Product', key: '-7891000100103', outcome: 'created', wmsId: '42', mapping: 'm' });
    w.write({
      line: 3,
      lineEnd: 5,
      target: 'PickingList',
      key: 'PED-1',
      outcome: 'rejected',
      error: 'qty; "bad"',
      mapping: 'm',
      reason: 'o valor da coluna qtd não é um número',
    });
    assert.equal((await w.close()).rows, 2);
    const lines = (await readFile(p, 'utf8')).split('\r\n');
    assert.equal(lines[0], RESULT_COLUMNS.join(';'));
    // the columns ERP import jobs read keep their places; the reason in the outbox's language comes last
    assert.equal(lines[0], 'line;line_end;target;key;outcome;wms_id;error;mapping;reason');
    assert.equal(lines[1], "2;;Product;'-7891000100103;created;42;;m;");
    assert.equal(lines[2], '3;5;PickingList;PED-1;rejected;;"qty; ""bad""";m;o valor da coluna qtd não é um número');
  });
});
