import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { makeTempDir } from '../helpers/tmp.js';
import { PROJECT_ROOT, SAMPLES_DIR } from '../helpers/cli.js';
import { collectItems, matchRecord, ParseOptionsSchema, type FixedWidthOptions, type ParsedItem, type ParseOptionsInput } from '../../src/parse/index.js';
import { ConfigError, InputError } from '../../src/shared/errors.js';
import type { RawRow } from '../../src/parse/types.js';

const CNAB = join(SAMPLES_DIR, 'brcobranca-cnab');
const layout = (name: string): FixedWidthOptions =>
  ParseOptionsSchema.parse(JSON.parse(readFileSync(join(PROJECT_ROOT, `test/fixtures/parse/${name}.layout.json`), 'utf8'))) as FixedWidthOptions;
const CNAB400 = layout('cnab400');
const CNAB240 = layout('cnab240');

let dir: string;
let cleanup: () => Promise<void>;
let n = 0;
before(async () => {
  ({ dir, cleanup } = await makeTempDir('wmsbridge-parse-fw-'));
});
after(async () => cleanup());
async function file(content: string | Buffer): Promise<string> {
  const p = join(dir, `f${n++}.txt`);
  await writeFile(p, content);
  return p;
}
const rows = (items: ParsedItem[]): RawRow[] => items.flatMap((i) => (i.kind === 'row' ? [i.row] : []));
const errors = (items: ParsedItem[]) => items.flatMap((i) => (i.kind === 'error' ? [i] : []));
const countTypes = (items: ParsedItem[]) => {
  const t: Record<string, number> = {};
  for (const i of items) {
    const k = i.kind === 'row' ? i.row.recordType! : `error:${i.issue.code}`;
    t[k] = (t[k] ?? 0) + 1;
  }
  return t;
};

const simple = (extra: Partial<Extract<ParseOptionsInput, { format: 'fixed-width' }>> = {}): ParseOptionsInput => ({
  format: 'fixed-width',
  records: [
    { type: 'header', match: { start: 1, value: 'H' }, fields: [{ name: 'date', start: 2, length: 8 }] },
    {
      type: 'detail',
      match: { start: 1, value: 'D' },
      fields: [
        { name: 'sku', start: 2, length: 6 },
        { name: 'qty', start: 8, length: 5 },
        { name: 'desc', start: 13, length: 10 },
      ],
    },
    { type: 'trailer', match: { start: 1, value: 'T' }, fields: [{ name: 'qtd', start: 2, length: 6 }] },
  ],
  ...extra,
});

describe('fixed-width: positions and record types', () => {
  test('fields cut by 1-based start/length, not trimmed; recordType and text set', async () => {
    const p = await file('H20240115\nD000123000100Maçã verde\nT000003\n');
    const { items } = await collectItems(p, simple());
    assert.deepEqual(rows(items)[1], {
      line: 2,
      fields: { sku: '000123', qty: '00010', desc: '0Maçã verd' },
      recordType: 'detail',
      text: 'D000123000100Maçã verde',
    });
  });

  test('right-trimmed lines: partial field, and "" past the end', async () => {
    const p = await file('D000123000\nD00012\n');
    const { items } = await collectItems(p, simple());
    assert.deepEqual(
      rows(items).map((r) => r.fields),
      [
        { sku: '000123', qty: '000', desc: '' },
        { sku: '00012', qty: '', desc: '' },
      ],
    );
  });

  test('a line matching no record type is an unknown_record error item; parsing continues', async () => {
    const p = await file('H20240115\nX garbage\nD000123000100abc\n');
    const { items } = await collectItems(p, simple());
    assert.deepEqual(
      errors(items).map((e) => [e.line, e.issue.code, e.text]),
      [[2, 'unknown_record', 'X garbage']],
    );
    assert.deepEqual(
      rows(items).map((r) => r.line),
      [1, 3],
    );
  });

  test('"default" matches what no other type matched, whatever its position in the list', async () => {
    const o = ParseOptionsSchema.parse({
      format: 'fixed-width',
      records: [
        { type: 'other', match: 'default', fields: [{ name: 'all', start: 1, length: 5 }] },
        { type: 'h', match: { start: 1, value: 'H' }, fields: [] },
      ],
    }) as FixedWidthOptions;
    assert.equal(matchRecord('Habc', o.records)?.type, 'h');
    assert.equal(matchRecord('Zabc', o.records)?.type, 'other');
  });

  test('match lists need every literal (CNAB240 segment letters)', () => {
    assert.equal(matchRecord('0010001300001P 01', CNAB240.records)?.type, 'detail-P');
    assert.equal(matchRecord('0010001300001Q 01', CNAB240.records)?.type, 'detail-Q');
    assert.equal(matchRecord('0010001300001Z 01', CNAB240.records), undefined);
  });

  test('lineLength: longer lines are line_too_long errors, shorter are fine', async () => {
    const p = await file('D000123000100abc\nD000123000100abcdefghijklmnop\n');
    const { items } = await collectItems(p, simple({ lineLength: 22 }));
    assert.deepEqual(
      errors(items).map((e) => [e.line, e.issue.code]),
      [[2, 'line_too_long']],
    );
    assert.match(errors(items)[0]!.issue.message, /29 characters long, above the layout's 22/);
  });

  test('empty lines skipped by default; an encoding option decodes accents', async () => {
    const p = await file(Buffer.from('D00012300010Ação\n\n', 'latin1'));
    const { items } = await collectItems(p, simple({ encoding: 'iso-8859-1' }));
    assert.equal(rows(items)[0]!.fields.desc, 'Ação');
    assert.equal(items.length, 1);
  });
});

describe('fixed-width: trailer check', () => {
  test('"all" counts every record including the trailer', async () => {
    const p = await file('H20240115\nD000001000010a\nD000002000020b\nT000004\n');
    const { summary } = await collectItems(p, simple({ trailer: { countField: 'qtd', counts: 'all' } }));
    assert.equal(summary.rows, 4);
  });

  test('"detail" counts records that are neither header nor trailer; offset adjusts', async () => {
    // a count that does not match rejects (next test), so each call resolving is the check; the rows too
    const p = await file('H20240115\nD000001000010a\nD000002000020b\nT000002\n');
    assert.equal((await collectItems(p, simple({ trailer: { countField: 'qtd', counts: 'detail' } }))).summary.rows, 4);
    const p2 = await file('H20240115\nD000001000010a\nD000002000020b\nT000003\n');
    assert.equal((await collectItems(p2, simple({ trailer: { countField: 'qtd', counts: 'detail', offset: 1 } }))).summary.rows, 4);
    const p3 = await file('H20240115\nD000001000010a\nT000001\n');
    assert.equal((await collectItems(p3, simple({ trailer: { countField: 'qtd', counts: ['detail'] } }))).summary.rows, 3);
    // and the same files with the other rule do not match
    await assert.rejects(
      collectItems(await file('H20240115\nD000001000010a\nD000002000020b\nT000002\n'), simple({ trailer: { countField: 'qtd', counts: 'all' } })),
      /trailer|count/i,
    );
  });

  test('a mismatch is an InputError naming the trailer line and both numbers', async () => {
    const p = await file('H20240115\nD000001000010a\nT000009\n');
    await assert.rejects(collectItems(p, simple({ trailer: { countField: 'qtd', counts: 'all' } })), (e: unknown) => {
      assert.ok(e instanceof InputError);
      assert.ok(e.message.includes(`${p}:3:`), e.message);
      assert.match(e.message, /declares 9 records, the file has 3/);
      return true;
    });
  });

  test('a non-numeric count and a missing trailer are InputErrors', async () => {
    const p = await file('H20240115\nTabc\n');
    await assert.rejects(collectItems(p, simple({ trailer: { countField: 'qtd' } })), /:2: trailer field qtd is not a count/);
    const p2 = await file('H20240115\nD000001000010a\n');
    await assert.rejects(collectItems(p2, simple({ trailer: { countField: 'qtd' } })), /no trailer record .* truncated/);
  });

  test('inconsistent layouts are ConfigErrors before anything is read', async () => {
    const p = await file('H\n');
    const refused = async (o: ParseOptionsInput, re: RegExp) =>
      assert.rejects(collectItems(p, o), (e: unknown) => e instanceof ConfigError && re.test(e.message));
    await refused(simple({ trailer: { type: 'foot', countField: 'qtd' } }), /trailer.type: the layout declares no record type "foot"/);
    await refused(simple({ trailer: { countField: 'nope' } }), /trailer.countField: record type "trailer" has no field "nope"/);
    await refused(simple({ trailer: { countField: 'qtd', counts: ['detal'] } }), /trailer.counts: no record type "detal"/);
    await refused(simple({ lineLength: 15 }), /field desc ends at 22, past lineLength 15/);
    await refused(
      {
        format: 'fixed-width',
        records: [
          {
            type: 'a',
            match: 'default',
            fields: [
              { name: 'x', start: 1, length: 1 },
              { name: 'x', start: 2, length: 1 },
            ],
          },
        ],
      },
      /duplicate field names x/,
    );
  });
});

describe('fixed-width: CNAB samples', () => {
  for (const [f, types] of [
    ['CNAB400.RET', { header: 1, detail: 52, trailer: 1 }],
    ['CNAB400ITAU.RET', { header: 1, detail: 52, trailer: 1 }],
    ['CBR64310.RET', { header: 1, detail: 26, trailer: 1 }],
    ['remessa-bradesco-cnab400.rem', { header: 1, detail: 1, trailer: 1 }],
  ] as const) {
    test(`CNAB400 ${f}: record types and trailer sequence`, async () => {
      const { items } = await collectItems(join(CNAB, f), CNAB400);
      assert.deepEqual(countTypes(items), types);
    });
  }

  test('CNAB400 retorno detail fields keep leading zeros and blanks', async () => {
    const { items } = await collectItems(join(CNAB, 'CNAB400.RET'), CNAB400);
    const d = rows(items)[1]!;
    assert.equal(d.recordType, 'detail');
    assert.equal(d.fields.numeroInscricao, '16733872000107');
    assert.equal(d.fields.valorTitulo, '0000000004000');
    assert.equal(d.fields.valorPago, '0000000003790');
    assert.equal(d.fields.ocorrencia, '06');
    assert.equal(d.fields.sequencial, '000002');
    assert.equal(d.text!.length, 400);
    const h = rows(items)[0]!;
    assert.equal(h.fields.literalOperacao, 'RETORNO');
  });

  test('CNAB400 Itaú remessa: a type-2 record the layout lacks is an unknown_record; the trailer still counts it', async () => {
    const { items } = await collectItems(join(CNAB, 'remessa-itau-cnab400.rem'), CNAB400);
    assert.deepEqual(countTypes(items), { header: 1, detail: 1, 'error:unknown_record': 1, trailer: 1 });
    assert.equal(errors(items)[0]!.line, 3);
  });

  for (const [f, types] of [
    ['CNAB240.RET', { header: 1, 'lot-header': 1, 'detail-T': 35, 'detail-U': 35, 'lot-trailer': 1, trailer: 1 }],
    ['CNAB240SICOOB.RET', { header: 1, 'lot-header': 1, 'detail-T': 3, 'detail-U': 3, 'lot-trailer': 1, trailer: 1 }],
    ['remessa-banco_brasil-cnab240.rem', { header: 1, 'lot-header': 1, 'detail-P': 1, 'detail-Q': 1, 'detail-R': 1, 'lot-trailer': 1, trailer: 1 }],
  ] as const) {
    test(`CNAB240 ${f}: segments, right-trimmed lines, trailer count`, async () => {
      const { items } = await collectItems(join(CNAB, f), CNAB240);
      assert.deepEqual(countTypes(items), types);
    });
  }

  test('CNAB240 segment T/U fields; CRLF file', async () => {
    const { items, facts } = await collectItems(join(CNAB, 'CNAB240SICOOB.RET'), CNAB240);
    assert.equal(facts.newline, '\r\n');
    const t = rows(items).find((r) => r.recordType === 'detail-T')!;
    assert.equal(t.line, 3);
    assert.equal(t.fields.segmento, 'T');
    assert.equal(t.fields.vencimento, '13082015');
    assert.equal(t.fields.valorTitulo, '000000000000200');
    const trailer = rows(items).at(-1)!;
    assert.equal(trailer.fields.qtdRegistros, '000010');
    assert.equal(trailer.text!.length, 35); // right-trimmed in the sample (36 bytes with its CR)
  });

  test('CNAB240 with "detail" counting and an offset for header and trailer', async () => {
    const o = { ...CNAB240, trailer: { type: 'trailer', countField: 'qtdRegistros', counts: 'detail' as const, offset: 2 } };
    const { summary } = await collectItems(join(CNAB, 'CNAB240.RET'), o);
    assert.equal(summary.rows, 74);
  });

  test('a truncated CNAB file fails the trailer check', async () => {
    const text = await readFile(join(CNAB, 'CNAB240.RET'), 'latin1');
    const lines = text.split('\n');
    lines.splice(5, 2); // drop a T/U pair
    const p = await file(Buffer.from(lines.join('\n'), 'latin1'));
    await assert.rejects(
      collectItems(p, CNAB240),
      (e: unknown) => e instanceof InputError && /:72: trailer count mismatch.*declares 74 records, the file has 72/.test(e.message),
    );
  });
});
