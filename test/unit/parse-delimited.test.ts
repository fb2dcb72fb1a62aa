import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { makeTempDir } from '../helpers/tmp.js';
import { SAMPLES_DIR } from '../helpers/cli.js';
import { collectItems, openParser, splitRecord, resolveHeader, type ParsedItem, type ParseOptionsInput } from '../../src/parse/index.js';
import { InputError, ConfigError } from '../../src/shared/errors.js';
import type { RawRow } from '../../src/parse/types.js';

let dir: string;
let cleanup: () => Promise<void>;
let n = 0;
before(async () => {
  ({ dir, cleanup } = await makeTempDir('wmsbridge-parse-csv-'));
});
after(async () => cleanup());

async function file(content: string | Buffer): Promise<string> {
  const p = join(dir, `f${n++}.csv`);
  await writeFile(p, content);
  return p;
}
const rows = (items: ParsedItem[]): RawRow[] => items.flatMap((i) => (i.kind === 'row' ? [i.row] : []));
const errors = (items: ParsedItem[]) => items.flatMap((i) => (i.kind === 'error' ? [i] : []));
async function parse(content: string | Buffer, opts: Partial<Extract<ParseOptionsInput, { format: 'delimited' }>> = {}) {
  return collectItems(await file(content), { format: 'delimited', ...opts });
}

describe('delimited: basics', () => {
  test('header, ; delimiter by default, 1-based physical lines, cells and text kept', async () => {
    const { items, summary, facts } = await parse('code;name;qty\nA1;Maçã;3\nB2;"Pera; verde";4\n');
    const r = rows(items);
    assert.equal(r.length, 2);
    assert.deepEqual(r[0], { line: 2, fields: { code: 'A1', name: 'Maçã', qty: '3' }, cells: ['A1', 'Maçã', '3'], text: 'A1;Maçã;3' });
    assert.deepEqual(r[1]!.fields, { code: 'B2', name: 'Pera; verde', qty: '4' });
    assert.equal(r[1]!.text, 'B2;"Pera; verde";4');
    assert.deepEqual(facts.columns, ['code', 'name', 'qty']);
    assert.equal(facts.newline, '\n');
    assert.deepEqual(summary, { rows: 2, errors: 0, bytes: Buffer.byteLength('code;name;qty\nA1;Maçã;3\nB2;"Pera; verde";4\n') });
  });

  for (const [delimiter, sep] of [
    [',', ','],
    ['|', '|'],
    ['\t', '\t'],
  ] as const) {
    test(`delimiter ${JSON.stringify(delimiter)}`, async () => {
      const { items } = await parse(`a${sep}b\n1${sep}"x${sep}y"\n`, { delimiter });
      assert.deepEqual(rows(items)[0]!.fields, { a: '1', b: `x${sep}y` });
    });
  }

  test('CRLF, LF and lone CR line ends; CRLF remembered', async () => {
    const crlf = await parse('a;b\r\n1;2\r\n3;4\r\n');
    assert.deepEqual(
      rows(crlf.items).map((r) => [r.line, r.cells]),
      [
        [2, ['1', '2']],
        [3, ['3', '4']],
      ],
    );
    assert.equal(crlf.facts.newline, '\r\n');
    const cr = await parse('a;b\r1;2\r3;4');
    assert.deepEqual(
      rows(cr.items).map((r) => [r.line, r.cells]),
      [
        [2, ['1', '2']],
        [3, ['3', '4']],
      ],
    );
    assert.equal(cr.facts.newline, '\r');
    const mixed = await parse('a;b\n1;2\r\n3;4\r5;6');
    assert.deepEqual(
      rows(mixed.items).map((r) => r.line),
      [2, 3, 4],
    );
  });

  test('a UTF-8 BOM is stripped (first header name is clean) and wins over the declared encoding', async () => {
    const bom = Buffer.from([0xef, 0xbb, 0xbf]);
    const utf = await parse(Buffer.concat([bom, Buffer.from('code;name\nX;Y\n')]));
    assert.deepEqual(utf.facts.columns, ['code', 'name']);
    assert.deepEqual(rows(utf.items)[0]!.fields, { code: 'X', name: 'Y' });
    // the BOM names the encoding whatever the option says (Excel's "CSV UTF-8" in a windows-1252 channel)
    const cp = await parse(Buffer.concat([bom, Buffer.from('código;nome\nX;Ação\n', 'utf8')]), { encoding: 'windows-1252' });
    assert.deepEqual(cp.facts.columns, ['código', 'nome']);
    assert.equal(rows(cp.items)[0]!.fields.nome, 'Ação');
  });

  test('quoted fields: doubled quotes, embedded CRLF/LF; line and lineEnd of a multi-line record', async () => {
    const { items } = await parse('a;b;c\r\n1;"say ""hi""";x\r\n2;"two\r\nlines\nthree";y\r\n3;z;w\r\n');
    const r = rows(items);
    assert.equal(r.length, 3);
    assert.equal(r[0]!.fields.b, 'say "hi"');
    assert.equal(r[1]!.fields.b, 'two\r\nlines\nthree');
    assert.equal(r[1]!.line, 3);
    assert.equal(r[1]!.lineEnd, 5);
    assert.equal(r[1]!.text, '2;"two\r\nlines\nthree";y');
    assert.equal(r[2]!.line, 6);
    assert.equal(r[2]!.lineEnd, undefined);
  });

  test('escape character other than the quote', async () => {
    const { items } = await parse('a;b\n1;"x\\"y\\\\z"\n', { escape: '\\' });
    assert.equal(rows(items)[0]!.fields.b, 'x"y\\z');
  });

  test('quote: false reads quotes as plain text', async () => {
    const { items } = await parse('a|b\n12" tube|"odd\n', { delimiter: '|', quote: false });
    assert.deepEqual(rows(items)[0]!.fields, { a: '12" tube', b: '"odd' });
    assert.equal(errors(items).length, 0);
  });

  test('header: false gives index keys; columns names them', async () => {
    const plain = await parse('1;2\n3;4\n', { header: false });
    assert.deepEqual(
      rows(plain.items).map((r) => [r.line, r.fields]),
      [
        [1, { '0': '1', '1': '2' }],
        [2, { '0': '3', '1': '4' }],
      ],
    );
    const named = await parse('1;2\n3;4\n', { header: false, columns: ['x', 'y'] });
    assert.deepEqual(rows(named.items)[1]!.fields, { x: '3', y: '4' });
    const ragged = await parse('1;2\n3\n', { header: false });
    assert.deepEqual(
      errors(ragged.items).map((e) => [e.line, e.issue.code, e.issue.message]),
      [[2, 'ragged_row', 'expected 2 columns, found 1']],
    );
  });

  test('skipLines skips leading physical lines (even with quotes) before the header', async () => {
    const { items, facts } = await parse('Export of 2024-01-01 "daily"\n\n"unbalanced\ncode;qty\nA;1\n', { skipLines: 3 });
    assert.deepEqual(facts.columns, ['code', 'qty']);
    assert.deepEqual(
      rows(items).map((r) => [r.line, r.fields]),
      [[5, { code: 'A', qty: '1' }]],
    );
  });

  test('skipEmptyLines true by default; false reports an empty line as a 1-cell row', async () => {
    const on = await parse('a;b\n\n1;2\n\n');
    assert.deepEqual(
      rows(on.items).map((r) => r.line),
      [3],
    );
    assert.equal(errors(on.items).length, 0);
    const off = await parse('a;b\n\n1;2\n', { skipEmptyLines: false });
    assert.deepEqual(
      errors(off.items).map((e) => [e.line, e.issue.code]),
      [[2, 'ragged_row']],
    );
    assert.deepEqual(
      rows(off.items).map((r) => r.line),
      [3],
    );
  });

  test('comment lines are skipped', async () => {
    const { items } = await parse('# exported\na;b\n# note\n1;2\n', { comment: '#' });
    assert.deepEqual(
      rows(items).map((r) => [r.line, r.fields]),
      [[4, { a: '1', b: '2' }]],
    );
  });

  test('trim trims fields (spaces around quotes allowed), cells stay as read', async () => {
    const { items } = await parse('a ; b\n  x  ;  "y;z"  \n', { trim: true });
    const r = rows(items)[0]!;
    assert.deepEqual(r.fields, { a: 'x', b: 'y;z' });
    assert.deepEqual(r.cells, ['  x  ', 'y;z']);
    const untrimmed = await parse('a;b\n x ;y\n');
    assert.deepEqual(rows(untrimmed.items)[0]!.fields, { a: ' x ', b: 'y' });
  });

  test('header names trimmed; duplicates get _2, _3 and are noted; empty names get column_<n>', async () => {
    const { items, facts } = await parse(' code ;name;code;;name;code\n1;2;3;4;5;6\n');
    assert.deepEqual(facts.columns, ['code', 'name', 'code_2', 'column_4', 'name_2', 'code_3']);
    assert.deepEqual(facts.renamedColumns, [
      { from: 'code', to: 'code_2' },
      { from: '', to: 'column_4' },
      { from: 'name', to: 'name_2' },
      { from: 'code', to: 'code_3' },
    ]);
    assert.deepEqual(facts.header, ['code', 'name', 'code', '', 'name', 'code']);
    assert.equal(rows(items)[0]!.fields.code_3, '6');
    assert.deepEqual(resolveHeader(['a', 'a_2', 'a']).columns, ['a', 'a_2', 'a_3']);
  });

  test('an empty file gives no rows and no error', async () => {
    const { items, facts } = await parse('');
    assert.equal(items.length, 0);
    assert.deepEqual(facts.columns, []);
  });
});

describe('delimited: row problems are data, parsing continues', () => {
  test('ragged rows are error items with line, cells and text; other rows still come', async () => {
    const header = Array.from({ length: 12 }, (_, i) => `c${i + 1}`).join(';');
    const full = Array.from({ length: 12 }, (_, i) => `v${i}`).join(';');
    const short = Array.from({ length: 9 }, (_, i) => `s${i}`).join(';');
    const long = Array.from({ length: 13 }, (_, i) => `l${i}`).join(';');
    const { items, summary } = await parse(`${header}\n${full}\n${short}\n${full}\n${long}\n`);
    const errs = errors(items);
    assert.deepEqual(
      errs.map((e) => [e.line, e.issue.code, e.issue.message]),
      [
        [3, 'ragged_row', 'expected 12 columns, found 9'],
        [5, 'ragged_row', 'expected 12 columns, found 13'],
      ],
    );
    assert.equal(errs[0]!.text, short);
    assert.equal(errs[0]!.cells!.length, 9);
    assert.deepEqual(
      rows(items).map((r) => r.line),
      [2, 4],
    );
    assert.equal(summary.rows, 2);
    assert.equal(summary.errors, 2);
  });

  test('relaxColumnCount accepts ragged rows; extra cells keyed by index', async () => {
    const { items } = await parse('a;b;c\n1;2\n1;2;3;4\n', { relaxColumnCount: true });
    assert.equal(errors(items).length, 0);
    assert.deepEqual(
      rows(items).map((r) => r.fields),
      [
        { a: '1', b: '2' },
        { a: '1', b: '2', c: '3', '3': '4' },
      ],
    );
  });

  test('quote inside an unquoted field: that line reported, next line parsed', async () => {
    const { items } = await parse('a;b;c\n1;2;3\n4;5"x;6\n7;8;9\n');
    const errs = errors(items);
    assert.equal(errs.length, 1);
    assert.equal(errs[0]!.line, 3);
    assert.equal(errs[0]!.issue.code, 'bad_quote');
    assert.match(errs[0]!.issue.message, /quote inside unquoted field 2/);
    assert.equal(errs[0]!.text, '4;5"x;6');
    assert.deepEqual(
      rows(items).map((r) => r.line),
      [2, 4],
    );
  });

  test('garbage after a closing quote on one line: reported, next line parsed', async () => {
    const { items } = await parse('a;b\n"x"y;2\n3;4\n');
    assert.deepEqual(
      errors(items).map((e) => [e.line, e.issue.code]),
      [[2, 'bad_quote']],
    );
    assert.deepEqual(
      rows(items).map((r) => r.line),
      [3],
    );
  });

  test('an unclosed quote followed by a later quoted field: only the opening line is lost', async () => {
    // line 3 opens a quote that never closes properly; lines 4.. must still be rows
    const { items } = await parse('a;b;c\n1;2;3\n4;"5;6\n7;8;9\n10;"x";12\n13;14;15\n');
    const errs = errors(items);
    assert.deepEqual(
      errs.map((e) => [e.line, e.issue.code]),
      [[3, 'bad_quote']],
    );
    assert.match(errs[0]!.issue.message, /quote opened at line 3 is not closed properly/);
    assert.equal(errs[0]!.text, '4;"5;6');
    assert.deepEqual(
      rows(items).map((r) => [r.line, r.cells]),
      [
        [2, ['1', '2', '3']],
        [4, ['7', '8', '9']],
        [5, ['10', 'x', '12']],
        [6, ['13', '14', '15']],
      ],
    );
  });

  test('an unclosed quote running to the end of the file: the line reported, the rest re-read', async () => {
    const { items } = await parse('a;b\n1;"open\n2;3\n4;5\n');
    assert.deepEqual(
      errors(items).map((e) => [e.line, e.issue.code]),
      [[2, 'bad_quote']],
    );
    assert.match(errors(items)[0]!.issue.message, /never closed \(end of file\)/);
    assert.deepEqual(
      rows(items).map((r) => r.line),
      [3, 4],
    );
  });

  test('an unclosed quote bounded by maxLineLength (no unbounded buffering)', async () => {
    const lines = ['a;b', '1;"open'];
    for (let i = 0; i < 50; i++) lines.push(`${i};x`);
    const { items } = await parse(lines.join('\n') + '\n', { maxLineLength: 64 });
    const errs = errors(items);
    assert.equal(errs[0]!.line, 2);
    assert.match(errs[0]!.issue.message, /not closed within 64 characters/);
    assert.equal(rows(items).length, 50);
    assert.equal(rows(items)[0]!.line, 3);
  });

  test('a line longer than maxLineLength is a line_too_long error item, then parsing continues', async () => {
    const { items } = await parse(`a;b\n1;${'x'.repeat(5000)}\n2;3\n`, { maxLineLength: 1000 });
    assert.deepEqual(
      errors(items).map((e) => [e.line, e.issue.code]),
      [[2, 'line_too_long']],
    );
    assert.match(errors(items)[0]!.issue.message, /5002 characters long, above the limit of 1000/);
    assert.deepEqual(
      rows(items).map((r) => [r.line, r.cells]),
      [[3, ['2', '3']]],
    );
  });

  test('a broken header is a whole-file InputError naming the line', async () => {
    await assert.rejects(parse('x;"a\n'), (err: unknown) => err instanceof InputError && /:1: the header line/.test(err.message));
  });
});

describe('delimited: whole-file failures', () => {
  test('a missing file is an InputError naming it', async () => {
    const p = join(dir, 'nope.csv');
    await assert.rejects(
      collectItems(p, { format: 'delimited' }),
      (err: unknown) => err instanceof InputError && err.message.includes(p) && /ENOENT/.test(err.message),
    );
  });

  test('NUL bytes in the first 8 KB: "looks binary"', async () => {
    const p = await file(Buffer.concat([Buffer.from('a;b\n1;2\n'), Buffer.from([0, 1, 2, 3])]));
    await assert.rejects(
      collectItems(p, { format: 'delimited' }),
      (err: unknown) => err instanceof InputError && /looks binary/.test(err.message) && err.message.includes(p),
    );
  });

  test('bad options are a ConfigError naming the key', () => {
    assert.throws(
      () => openParser('x.csv', { format: 'delimited', delimiter: ':' } as never),
      (err: unknown) => err instanceof ConfigError && /delimiter/.test(err.message),
    );
    assert.throws(() => openParser('x.csv', { format: 'delimited', delim: ';' } as never), ConfigError);
    assert.throws(() => openParser('x.csv', { format: 'delimited', columns: ['a'] }), /columns: only apply with header: false/);
    assert.throws(() => openParser('x.csv', { format: 'delimited', header: false, columns: ['a', 'a'] }), /duplicate names a/);
    assert.throws(() => openParser('x.csv', { format: 'delimited', delimiter: ',', quote: ',' }), /quote: must differ/);
  });

  test('the parser is single-pass and stops reading when the consumer breaks', async () => {
    const p = await file('a\n1\n2\n3\n');
    const h = openParser(p, { format: 'delimited' });
    for await (const item of h) {
      assert.equal(item.kind, 'row');
      break;
    }
    assert.equal(h.summary.rows, 1);
    assert.throws(() => h[Symbol.asyncIterator](), /single-pass/);
  });
});

describe('delimited: encodings and real samples', () => {
  test('windows-1252 IBPT table: accents and 0x80-0x9F characters (… “ ” –) decode right', async () => {
    const { items, summary, facts } = await collectItems(join(SAMPLES_DIR, 'ibpt-tabela-cp1252/TabelaIBPTaxSP.csv'), {
      format: 'delimited',
      encoding: 'windows-1252',
    });
    assert.equal(summary.errors, 0);
    assert.equal(summary.rows, 11832);
    assert.equal(facts.newline, '\r\n');
    assert.equal(facts.columns![0], 'codigo');
    const all = rows(items);
    const byCode = (code: string) => all.filter((r) => r.fields.codigo === code).map((r) => r.fields.descricao);
    assert.ok(byCode('01022911').includes('Outros bovinos para reprodução, prenhe ou com cria ao pe'));
    const descr = all.map((r) => r.fields.descricao!).join('\n');
    for (const s of ['reprodução', 'domésticos', 'Búfalos', 'Óleos', 'ç', 'ã', 'é', '…', '“signal-oil”', '–']) {
      assert.ok(descr.includes(s), `missing ${s}`);
    }
    // no C1 control characters (what TextDecoder would produce for 0x80-0x9F)
    assert.equal(/[\u0080-\u009f]/.test(descr), false);
    assert.equal((descr.match(/…/g) ?? []).length, 9);
    assert.equal((descr.match(/–/g) ?? []).length, 8);
    // leading zeros kept
    assert.equal(all[0]!.fields.codigo, '00000000');
  });

  test('iso-8859-1 SPED EFD: pipes, no header, no quoting, relaxed columns, CRLF', async () => {
    const { items, summary, facts } = await collectItems(join(SAMPLES_DIR, 'sped-efd/Arquivoexemplo.TXT'), {
      format: 'delimited',
      delimiter: '|',
      header: false,
      quote: false,
      relaxColumnCount: true,
      encoding: 'iso-8859-1',
    });
    assert.equal(summary.errors, 0);
    assert.equal(facts.newline, '\r\n');
    const all = rows(items);
    assert.equal(all[0]!.line, 1);
    assert.equal(all[0]!.fields['1'], '0000');
    const r0200 = all.find((r) => r.fields['1'] === '0200' && r.fields['2'] === 'AD42900001');
    assert.equal(r0200?.fields['3'], 'Segurança e sinalização - misc.');
    // records differ in length: relaxed
    assert.ok(new Set(all.map((r) => r.cells!.length)).size > 3);
    // the last record |9999|n| counts the lines
    const last = all[all.length - 1]!;
    assert.equal(last.fields['1'], '9999');
    assert.equal(Number(last.fields['2']), last.line);
  });

  test('the same SPED file without relaxColumnCount: ragged rows reported, not a crash', async () => {
    const { summary } = await collectItems(join(SAMPLES_DIR, 'sped-efd/exemploICMSIPI.txt'), {
      format: 'delimited',
      delimiter: '|',
      header: false,
      quote: false,
      encoding: 'iso-8859-1',
    });
    assert.ok(summary.errors > 0);
    assert.ok(summary.rows > 0);
  });
});

describe('splitRecord (pure)', () => {
  const o = { delimiter: ';', quote: '"' } as const;
  test('cases', () => {
    assert.deepEqual(splitRecord('', o), { ok: true, cells: [''] });
    assert.deepEqual(splitRecord(';', o), { ok: true, cells: ['', ''] });
    assert.deepEqual(splitRecord('"";""', o), { ok: true, cells: ['', ''] });
    assert.deepEqual(splitRecord('"a""b";c', o), { ok: true, cells: ['a"b', 'c'] });
    assert.deepEqual(splitRecord('"a;', o), { ok: 'open' });
    assert.deepEqual(splitRecord('a;"b\nc"', o), { ok: true, cells: ['a', 'b\nc'] });
    assert.equal(splitRecord('a"b', o).ok, false);
    assert.equal(splitRecord('"a"b', o).ok, false);
  });
});

describe('bytes that are not text are row errors naming line and field', () => {
  const errs = (items: Awaited<ReturnType<typeof parse>>['items']) =>
    items
      .filter((i) => i.kind === 'error')
      .map((i) => (i.kind === 'error' ? { line: i.line, code: i.issue.code, field: i.issue.field, message: i.issue.message } : null));

  test('NUL after the first 8 KB, a tab, an RLO, a C1 control: each its row, the others go on', async () => {
    // past the first 8 KB (a NUL there makes the whole file 'binary')
    const filler = Array.from({ length: 800 }, (_, i) => `F${i};Categoria ${i}`).join('\n');
    const { items } = await parse(`codigo;nome\n${filler}\nN1;Na\u0000me\nT1;Tab\there\nR1;\u202Egpj.exe\nC1;x\u0085y\nOK;Fine\n`);
    const e = errs(items);
    assert.deepEqual(
      e.map((x) => [x!.line, x!.code, x!.field]),
      [
        [802, 'control_character', 'nome'],
        [803, 'control_character', 'nome'],
        [804, 'control_character', 'nome'],
        [805, 'control_character', 'nome'],
      ],
    );
    assert.match(e[0]!.message, /field nome: U\+0000 \(NUL\) at position 3: not text$/);
    assert.match(e[1]!.message, /U\+0009 \(tab\).*allowControlCharacters/);
    assert.match(e[2]!.message, /U\+202E \(right-to-left override\)/);
    assert.equal(rows(items).at(-1)!.fields['codigo'], 'OK');
  });

  test('allowControlCharacters accepts tabs and overrides, never NUL; a quoted tab in a TAB file is text', async () => {
    const filler = Array.from({ length: 800 }, (_, i) => `F${i};Categoria ${i}`).join('\n');
    const { items } = await parse(`codigo;nome\nT1;Tab\there \u202E\n${filler}\nN1;a\u0000b\n`, { allowControlCharacters: true });
    assert.deepEqual(
      errs(items).map((x) => x!.line),
      [803],
    );
    const tsv = await parse('a\tb\n1\t"x\ty"\n', { delimiter: '\t' });
    assert.deepEqual(errs(tsv.items), []);
  });

  test('a row equal to the header line (two exports joined) is rejected', async () => {
    const { items } = await parse('CODIGO;NOME\nA;Um\nCODIGO;NOME\nB;Dois\n');
    assert.deepEqual(
      errs(items).map((x) => [x!.line, x!.code]),
      [[3, 'repeated_header']],
    );
    assert.deepEqual(
      rows(items).map((r) => r.fields['CODIGO']),
      ['A', 'B'],
    );
  });

  test('windows-1252: the five undefined bytes (0x81 0x8D 0x8F 0x90 0x9D) are errors, 0x80-0x9F specials are text', async () => {
    const body = Buffer.concat([Buffer.from('codigo;nome\nA;caf'), Buffer.from([0xe9, 0x80]), Buffer.from('\n')]);
    assert.deepEqual(errs((await parse(body, { encoding: 'windows-1252' })).items), []);
    for (const b of [0x81, 0x8d, 0x8f, 0x90, 0x9d]) {
      const bad = Buffer.concat([Buffer.from('codigo;nome\nA;x'), Buffer.from([b]), Buffer.from('y\n')]);
      const e = errs((await parse(bad, { encoding: 'windows-1252' })).items);
      assert.equal(e.length, 1, `byte 0x${b.toString(16)}`);
      assert.match(e[0]!.message, /windows-1252 does not define .* at column 4/);
    }
  });
});
