/**
 * Unicode text as input: a byte order mark names the encoding whatever the mapping declares (Excel's "Unicode
 * text" is tab-delimited UTF-16LE with FF FE), for every text format, and the rejects file is written back in
 * the same encoding with the same BOM, so it can be fixed and dropped again.
 */
import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { makeTempDir } from '../helpers/tmp.js';
import { collectItems, type ParseOptionsInput, type RawRow } from '../../src/parse/index.js';
import { createRejectsWriter } from '../../src/outbox/rejects.js';
import { InputError } from '../../src/shared/errors.js';

let dir: string;
let cleanup: () => Promise<void>;
let n = 0;
before(async () => {
  ({ dir, cleanup } = await makeTempDir('wmsbridge-parse-unicode-'));
});
after(async () => cleanup());

const LE_BOM = Buffer.from([0xff, 0xfe]);
const BE_BOM = Buffer.from([0xfe, 0xff]);
const UTF8_BOM = Buffer.from([0xef, 0xbb, 0xbf]);
const utf16be = (s: string): Buffer => Buffer.from(s, 'utf16le').swap16();

async function file(content: Buffer, ext = 'txt'): Promise<string> {
  const p = join(dir, `f${n++}.${ext}`);
  await writeFile(p, content);
  return p;
}

function rows(items: Awaited<ReturnType<typeof collectItems>>['items']): RawRow[] {
  return items.flatMap((i) => (i.kind === 'row' ? [i.row] : []));
}

/** An Excel "Unicode text" save of a product list (tab-delimited UTF-16LE, CRLF, with its BOM). */
const UNICODE_TEXT = 'Código\tDescrição\tEAN\r\nP-001\tMaçã “gala” 1 kg\t7891234567895\r\nP-002\tPão de açúcar 😀\t7891234567901\r\n';
const TAB: ParseOptionsInput = { format: 'delimited', delimiter: '\t' };

describe('UTF-16 with a byte order mark', () => {
  test('UTF-16LE tab-delimited (Excel "Unicode text") in a utf-8 mapping: read from the BOM', async () => {
    const p = await file(Buffer.concat([LE_BOM, Buffer.from(UNICODE_TEXT, 'utf16le')]));
    const r = await collectItems(p, TAB);
    assert.equal(r.summary.errors, 0);
    assert.deepEqual(r.facts.header, ['Código', 'Descrição', 'EAN']);
    assert.deepEqual(
      rows(r.items).map((x) => [x.line, x.fields['Código'], x.fields['Descrição'], x.fields['EAN']]),
      [
        [2, 'P-001', 'Maçã “gala” 1 kg', '7891234567895'],
        [3, 'P-002', 'Pão de açúcar 😀', '7891234567901'],
      ],
    );
    assert.equal(r.facts.encoding, 'utf-16le');
    assert.equal(r.facts.bom, true);
    assert.equal(r.facts.newline, '\r\n');
  });

  test('UTF-16BE with FE FF, and a character split across read chunks', async () => {
    const long = 'x'.repeat(40_000); // 80,000 bytes: the file spans two 64 KB chunks
    const p = await file(Buffer.concat([BE_BOM, utf16be(`a\tb\r\n${long}ç\tñ\r\n`)]));
    const r = await collectItems(p, TAB);
    assert.equal(r.facts.encoding, 'utf-16be');
    assert.deepEqual(
      rows(r.items).map((x) => [x.fields.a!.slice(-2), x.fields.b]),
      [['xç', 'ñ']],
    );
  });

  test('the BOM wins over a declared windows-1252; without a BOM, encoding: utf-16le reads it', async () => {
    const p = await file(Buffer.concat([LE_BOM, Buffer.from(UNICODE_TEXT, 'utf16le')]));
    const r = await collectItems(p, { ...TAB, encoding: 'windows-1252' });
    assert.equal(rows(r.items)[0]!.fields['Descrição'], 'Maçã “gala” 1 kg');
    const bare = await file(Buffer.from(UNICODE_TEXT, 'utf16le'));
    await assert.rejects(collectItems(bare, TAB), (e: unknown) => e instanceof InputError && /looks binary.*utf-16le/.test(e.message));
    const r2 = await collectItems(bare, { ...TAB, encoding: 'utf-16le' });
    assert.equal(rows(r2.items).length, 2);
    assert.equal(r2.facts.bom, undefined);
  });

  test('a lone surrogate is an invalid_encoding row, not text with U+FFFD', async () => {
    const body = Buffer.concat([Buffer.from('a\tb\r\n1\t', 'utf16le'), Buffer.from([0x00, 0xd8]), Buffer.from('x\r\n2\tok\r\n', 'utf16le')]);
    const r = await collectItems(await file(Buffer.concat([LE_BOM, body])), TAB);
    const err = r.items.find((i) => i.kind === 'error');
    assert.ok(err && err.kind === 'error');
    assert.equal(err.issue.code, 'invalid_encoding');
    assert.match(err.issue.message, /UTF-16LE/);
    assert.deepEqual(
      rows(r.items).map((x) => x.fields.b),
      ['ok'],
    );
  });

  test('fixed-width, JSON Lines, JSON and XML in UTF-16LE with a BOM', async () => {
    const fw = await file(Buffer.concat([LE_BOM, Buffer.from('1Maçã \r\n1Pão  \r\n', 'utf16le')]));
    const fr = await collectItems(fw, {
      format: 'fixed-width',
      records: [{ type: 'd', match: { start: 1, value: '1' }, fields: [{ name: 'nome', start: 2, length: 5 }] }],
    });
    assert.deepEqual(
      rows(fr.items).map((x) => x.fields.nome),
      ['Maçã ', 'Pão  '],
    );
    const jl = await file(Buffer.concat([LE_BOM, Buffer.from('{"c":"Maçã"}\n{"c":"Pão"}\n', 'utf16le')]));
    assert.deepEqual(
      rows((await collectItems(jl, { format: 'jsonl' })).items).map((x) => x.fields.c),
      ['Maçã', 'Pão'],
    );
    const js = await file(Buffer.concat([LE_BOM, Buffer.from('[{"c":"Maçã"}]', 'utf16le')]));
    assert.deepEqual(
      rows((await collectItems(js, { format: 'json' })).items).map((x) => x.fields.c),
      ['Maçã'],
    );
    const xml = await file(Buffer.concat([LE_BOM, Buffer.from('<?xml version="1.0" encoding="UTF-16"?>\n<cats><cat><c>Maçã</c></cat></cats>', 'utf16le')]));
    assert.deepEqual(
      rows((await collectItems(xml, { format: 'xml', itemPath: 'cats/cat' })).items).map((x) => x.fields.c),
      ['Maçã'],
    );
  });
});

describe('UTF-8 with a byte order mark, every format', () => {
  const cases: Array<[string, string, ParseOptionsInput]> = [
    ['delimited', 'c;n\nA;Maçã\n', { format: 'delimited' }],
    ['delimited windows-1252 declared', 'c;n\nA;Maçã\n', { format: 'delimited', encoding: 'windows-1252' }],
    [
      'fixed-width',
      '1Maçã\n',
      { format: 'fixed-width', records: [{ type: 'd', match: { start: 1, value: '1' }, fields: [{ name: 'n', start: 2, length: 4 }] }] },
    ],
    ['jsonl', '{"n":"Maçã"}\n', { format: 'jsonl' }],
    ['json', '[{"n":"Maçã"}]', { format: 'json' }],
    ['xml', '<r><i><n>Maçã</n></i></r>', { format: 'xml', itemPath: 'r/i' }],
  ];
  for (const [name, text, opts] of cases) {
    test(`${name}: the BOM is stripped and names UTF-8`, async () => {
      const r = await collectItems(await file(Buffer.concat([UTF8_BOM, Buffer.from(text, 'utf8')])), opts);
      assert.equal(r.summary.errors, 0);
      assert.equal(rows(r.items)[0]!.fields.n, 'Maçã');
      assert.equal(r.facts.bom, true);
    });
  }
});

describe('rejects written back in the source encoding, with its BOM', () => {
  for (const [name, bom, enc] of [
    ['UTF-16LE', LE_BOM, (s: string) => Buffer.from(s, 'utf16le')],
    ['UTF-16BE', BE_BOM, utf16be],
    ['UTF-8', UTF8_BOM, (s: string) => Buffer.from(s, 'utf8')],
  ] as const) {
    test(`${name}: BOM, header + wmsbridge_error, the row byte for byte; dropped again it reads the same`, async () => {
      const src = await file(Buffer.concat([bom, enc(UNICODE_TEXT)]));
      const r = await collectItems(src, TAB);
      const row = rows(r.items)[1]!;
      const out = join(dir, `rejects${n++}.txt`);
      const w = createRejectsWriter(out, { ...TAB, encoding: r.facts.encoding!, bom: r.facts.bom!, headerCells: r.facts.header!, newline: r.facts.newline! });
      w.write({ line: row.line, text: row.text!, cells: row.cells!, reasons: 'line 3: field EAN: não é um número' });
      await w.close();
      const bytes = await readFile(out);
      const expected = Buffer.concat([
        bom,
        enc('Código\tDescrição\tEAN\twmsbridge_error\r\nP-002\tPão de açúcar 😀\t7891234567901\tline 3: field EAN: não é um número\r\n'),
      ]);
      assert.deepEqual(bytes, expected);
      const again = await collectItems(out, TAB);
      assert.deepEqual(rows(again.items)[0]!.fields['Descrição'], 'Pão de açúcar 😀');
    });
  }
});
