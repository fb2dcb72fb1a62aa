import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { readdir, readFile, writeFile } from 'node:fs/promises';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import iconv from 'iconv-lite';
import { makeTempDir } from '../helpers/tmp.js';
import { PROJECT_ROOT, SAMPLES_DIR } from '../helpers/cli.js';
import { collectItems, REJECT_REASON_COLUMN, type ParsedItem, type ParseOptionsInput } from '../../src/parse/index.js';
import { createRejectsWriter, formatCell } from '../../src/outbox/rejects.js';

let dir: string;
let cleanup: () => Promise<void>;
let n = 0;
before(async () => {
  ({ dir, cleanup } = await makeTempDir('wmsbridge-parse-rej-'));
});
after(async () => cleanup());
const sub = async () => {
  const d = join(dir, `case${n++}`);
  await (await import('node:fs/promises')).mkdir(d);
  return d;
};

describe('rejects writer: delimited', () => {
  test('windows-1252 ";" CRLF round trip: same header + wmsbridge_error, same cells, same bytes per row', async () => {
    const d = await sub();
    const src = join(d, 'produtos.csv');
    const lines = [
      'código;descrição;preço',
      'A1;Maçã “gala”;1,50',
      'B2;"Feijão; preto";7,00',
      'C3;"Arroz ""tipo 1""\r\nem 2 linhas";5,00',
      'D4;Açúcar – refinado…;4,20',
      'E5;só dois',
    ];
    await writeFile(src, iconv.encode(lines.join('\r\n') + '\r\n', 'win1252'));
    const opts: ParseOptionsInput = { format: 'delimited', delimiter: ';', encoding: 'windows-1252' };
    const first = await collectItems(src, opts);
    const items = first.items;
    assert.equal(first.summary.errors, 1); // E5 is ragged

    const out = join(d, 'produtos.rejects.csv');
    const w = createRejectsWriter(out, { ...opts, headerCells: first.facts.header!, newline: first.facts.newline! });
    const rejected: ParsedItem[] = [items[1]!, items[2]!, items[4]!];
    for (const it of rejected) {
      if (it.kind === 'row')
        w.write({
          line: it.row.line,
          lineEnd: it.row.lineEnd,
          text: it.row.text,
          cells: it.row.cells,
          reasons: `line ${it.row.line}: field preço: not valid; "x"`,
        });
      else w.write({ line: it.line, text: it.text, cells: it.cells, reasons: it.issue.message });
    }
    // a row known only by its cells (no raw text)
    w.write({ line: 99, cells: ['Z9', 'Pão; de "queijo"', '9,99'], reasons: 'lookup_not_found' });
    const res = await w.close();
    assert.equal(res.count, 4);
    assert.equal(res.path, out);
    assert.equal(
      (await readdir(d)).some((f) => f.endsWith('.tmp')),
      false,
    );

    const raw = await readFile(out);
    assert.equal(raw.includes(Buffer.from('\r\n')), true);
    assert.equal(iconv.decode(raw, 'win1252').split('\r\n')[0], `código;descrição;preço;${REJECT_REASON_COLUMN}`);
    // row text written byte-faithfully: the original bytes of B2 appear as they were
    assert.ok(raw.includes(iconv.encode('B2;"Feijão; preto";7,00;', 'win1252')));

    const back = await collectItems(out, opts);
    assert.equal(back.summary.errors, 0);
    assert.deepEqual(back.facts.columns, ['código', 'descrição', 'preço', REJECT_REASON_COLUMN]);
    const cells = back.items.map((i) => (i.kind === 'row' ? i.row.cells : undefined));
    assert.deepEqual(cells, [
      ['B2', 'Feijão; preto', '7,00', 'line 3: field preço: not valid; "x"'],
      ['C3', 'Arroz "tipo 1"\r\nem 2 linhas', '5,00', 'line 4: field preço: not valid; "x"'],
      ['E5', 'só dois', '', 'expected 3 columns, found 2'],
      ['Z9', 'Pão; de "queijo"', '9,99', 'lookup_not_found'],
    ]);
  });

  test('no header: no header line; the reason is the last column; pipes without quoting stay parseable', async () => {
    const d = await sub();
    const out = join(d, 'efd.rejects.txt');
    const w = createRejectsWriter(out, { format: 'delimited', delimiter: '|', header: false, quote: false, encoding: 'iso-8859-1' });
    w.write({ line: 3, text: '|0200|X|Ação|', cells: ['', '0200', 'X', 'Ação', ''], reasons: 'bad | reason\nsecond line' });
    await w.close();
    const text = iconv.decode(await readFile(out), 'latin1');
    assert.equal(text, '|0200|X|Ação||bad   reason second line\n');
  });

  test('no rejects: no file; abort leaves nothing behind', async () => {
    const d = await sub();
    const w = createRejectsWriter(join(d, 'none.csv'), { format: 'delimited' });
    assert.deepEqual(await w.close(), { count: 0 });
    const w2 = createRejectsWriter(join(d, 'aborted.csv'), { format: 'delimited', headerCells: ['a'] } as never);
    w2.write({ line: 1, cells: ['x'], reasons: 'r' });
    w2.abort();
    assert.deepEqual(await readdir(d), []);
  });

  test('formatCell quotes only when needed', () => {
    const f = { delimiter: ';', quote: '"' } as const;
    assert.equal(formatCell('plain', f), 'plain');
    assert.equal(formatCell('a;b', f), '"a;b"');
    assert.equal(formatCell('say "x"', f), '"say ""x"""');
    assert.equal(formatCell('l1\nl2', f), '"l1\nl2"');
    assert.equal(formatCell('a\\"b', { ...f, escape: '\\' }), '"a\\\\\\"b"');
  });
});

describe('rejects writer: other formats', () => {
  test('fixed-width: original lines untouched plus a sidecar listing', async () => {
    const d = await sub();
    const layout = JSON.parse(await readFile(join(PROJECT_ROOT, 'test/fixtures/parse/cnab400.layout.json'), 'utf8')) as ParseOptionsInput;
    const { items, facts } = await collectItems(join(SAMPLES_DIR, 'brcobranca-cnab/CNAB400.RET'), layout);
    const out = join(d, 'CNAB400.rejects.RET');
    const w = createRejectsWriter(out, { ...layout, newline: facts.newline! });
    const picked = [items[3]!, items[7]!];
    for (const it of picked) if (it.kind === 'row') w.write({ line: it.row.line, text: it.row.text, reasons: `valor ${it.row.fields.valorPago} not accepted` });
    const res = await w.close();
    assert.equal(res.sidecar, join(d, 'CNAB400.rejects.errors.txt'));
    const written = (await readFile(out, 'latin1')).split('\n');
    const original = (await readFile(join(SAMPLES_DIR, 'brcobranca-cnab/CNAB400.RET'), 'latin1')).split('\n');
    assert.equal(written[0], original[3]);
    assert.equal(written[1], original[7]);
    assert.equal(written[0]!.length, 400);
    const listing = await readFile(res.sidecar!, 'utf8');
    assert.match(listing, /^line 4: valor \d+ not accepted\nline 8: valor \d+ not accepted\n$/);
    // the rejects file parses with the same layout, positions intact (no trailer: drop the check)
    const { trailer: _t, ...noTrailer } = layout as Record<string, unknown>;
    const back = await collectItems(out, noTrailer as ParseOptionsInput);
    assert.deepEqual(
      back.items.map((i) => (i.kind === 'row' ? i.row.recordType : 'error')),
      ['detail', 'detail'],
    );
  });

  test('xml: a sidecar listing with element paths only', async () => {
    const d = await sub();
    const out = join(d, 'nota.rejects.xml');
    const w = createRejectsWriter(out, { format: 'xml', itemPath: 'nfeProc/NFe/infNFe/det' });
    w.write({ line: 16, lineEnd: 36, recordType: 'nfeProc/NFe/infNFe/det[1]', reasons: 'field sku: required' });
    const res = await w.close();
    assert.equal(res.path, undefined);
    assert.equal(existsSync(out), false);
    assert.equal(await readFile(res.sidecar!, 'utf8'), 'lines 16-36 (nfeProc/NFe/infNFe/det[1]): field sku: required\n');
  });

  test('jsonl: the original lines plus the listing', async () => {
    const d = await sub();
    const out = join(d, 'feed.rejects.jsonl');
    const w = createRejectsWriter(out, { format: 'jsonl' });
    w.write({ line: 2, text: '{"sku":"é"}', reasons: 'bad' });
    const res = await w.close();
    assert.equal(await readFile(out, 'utf8'), '{"sku":"é"}\n');
    assert.equal(await readFile(res.sidecar!, 'utf8'), 'line 2: bad\n');
  });
});
