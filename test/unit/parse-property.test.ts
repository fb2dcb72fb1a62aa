/**
 * Property tests: any CSV written by a correct writer parses back to the same cells, in UTF-8 and in
 * windows-1252, with LF or CRLF; and on the same text our parser agrees with csv-parse (the reference).
 */
import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import fc from 'fast-check';
import iconv from 'iconv-lite';
import { parse as csvParse } from 'csv-parse/sync';
import { makeTempDir } from '../helpers/tmp.js';
import { collectItems, splitRecord } from '../../src/parse/index.js';
import { formatRecord } from '../../src/parse/rejects.js';

let dir: string;
let cleanup: () => Promise<void>;
let n = 0;
before(async () => {
  ({ dir, cleanup } = await makeTempDir('wmsbridge-parse-prop-'));
});
after(async () => cleanup());

// characters that stress the format, plus accents and cp1252's 0x80-0x9F specials
const alphabet = ['a', 'Z', '0', ' ', ';', ',', '|', '"', '\r', '\n', 'ç', 'ã', 'é', 'Ó', '€', '“', '”', '–', '…', '\t', "'"];
const cell = fc.array(fc.constantFrom(...alphabet), { maxLength: 8 }).map((cs) => cs.join(''));
const record = fc.array(cell, { minLength: 1, maxLength: 6 });
const table = fc.array(record, { minLength: 1, maxLength: 12 });
const delimiter = fc.constantFrom(';', ',', '|', '\t');
const eol = fc.constantFrom('\n', '\r\n');

function cellsOf(items: Awaited<ReturnType<typeof collectItems>>['items']): string[][] {
  return items.map((i) => {
    if (i.kind !== 'row') throw new Error(`unexpected error item at line ${i.line}: ${i.issue.message}`);
    return i.row.cells!;
  });
}

describe('delimited round trip (fast-check)', () => {
  test('written by formatRecord, read back by openParser: same cells (utf-8 and windows-1252)', async () => {
    await fc.assert(
      fc.asyncProperty(table, delimiter, eol, fc.constantFrom('utf-8', 'windows-1252') , async (rows, d, nl, enc) => {
        const text = rows.map((r) => formatRecord(r, { delimiter: d, quote: '"' })).join(nl) + nl;
        const p = join(dir, `p${n++}.csv`);
        await writeFile(p, enc === 'utf-8' ? Buffer.from(text, 'utf8') : iconv.encode(text, 'win1252'));
        const { items } = await collectItems(p, {
          format: 'delimited',
          delimiter: d,
          header: false,
          relaxColumnCount: true,
          skipEmptyLines: false,
          encoding: enc,
        });
        assert.deepEqual(cellsOf(items), rows);
      }),
      { numRuns: 150 },
    );
  });

  test('splitRecord agrees with csv-parse on well-formed records', () => {
    fc.assert(
      fc.property(record, delimiter, (r, d) => {
        const text = formatRecord(r, { delimiter: d, quote: '"' });
        const ours = splitRecord(text, { delimiter: d, quote: '"' });
        const theirs = csvParse(text, { delimiter: d, relax_column_count: true, record_delimiter: '\u0001', skip_empty_lines: false }) as string[][];
        assert.equal(ours.ok, true);
        if (ours.ok === true) assert.deepEqual(ours.cells, theirs[0] ?? ['']);
      }),
      { numRuns: 300 },
    );
  });

  test('on arbitrary text, when csv-parse accepts a line our parser gives the same cells, and rejects what csv-parse rejects', () => {
    const noisy = fc.array(fc.constantFrom('a', ';', '"', ' ', 'x'), { maxLength: 12 }).map((cs) => cs.join(''));
    fc.assert(
      fc.property(noisy, (text) => {
        let theirs: string[][] | undefined;
        try {
          theirs = csvParse(text, { delimiter: ';', relax_column_count: true, record_delimiter: '\u0001', skip_empty_lines: false }) as string[][];
        } catch {
          theirs = undefined;
        }
        const ours = splitRecord(text, { delimiter: ';', quote: '"' });
        if (theirs === undefined) assert.notEqual(ours.ok, true, `csv-parse refused ${JSON.stringify(text)}, we accepted`);
        else if (ours.ok === true) assert.deepEqual(ours.cells, theirs[0] ?? ['']);
        else assert.fail(`csv-parse accepted ${JSON.stringify(text)}, we said ${JSON.stringify(ours)}`);
      }),
      { numRuns: 500 },
    );
  });
});
