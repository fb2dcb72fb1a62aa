/**
 * What mapping a file leaves in the journal.
 * - The targets of the records it produced (FILE_META.targets), so the send loop knows which tiers a file has
 *   without reading its records (a fresh file's records are not in the reader's cache: 80 ms for 20,000 before the
 *   first request). Rejected rows count: their target is the mapping's.
 * - Each row with its place, cells and text, not its fields by column name (issue 19: they held each source row a
 *   third time, a fifth of a category record's bytes, and nothing reads them back). The rejects file is written
 *   from what is kept: a row refused at map time and one refused at send time come back exactly as they were in
 *   the original file, the reason in its column.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { makeTempDir } from '../helpers/tmp.js';
import { createSqliteJournal } from '../../src/journal/sqlite.js';
import { FILE_META } from '../../src/journal/policy.js';
import { createStaticReferenceCache, parseMappingText, type CompiledMapping } from '../../src/map/index.js';
import { mapFileToJournal, type MapFileResult } from '../../src/app/map-file.js';
import { finishFile } from '../../src/app/finish-file.js';
import type { FileRow, Journal } from '../../src/journal/types.js';

const MAPPING = `name: cats
match: { channel: cadastros, files: "CAT*.csv" }
source: { format: delimited, delimiter: ';', encoding: utf-8 }
target: Category
fields:
  codeERP: { col: codigo, transforms: [trim] }
  name: { col: descricao, transforms: [trim], required: true }
`;

/** `text` as CAT1.csv, mapped into a fresh SQLite journal */
async function withMappedFile(
  text: string,
  fn: (m: { journal: Journal; file: FileRow; mapping: CompiledMapping; res: MapFileResult; dir: string }) => Promise<void>,
): Promise<void> {
  const tmp = await makeTempDir('wmsbridge-map-file-');
  const journal = await createSqliteJournal({ path: join(tmp.dir, 'journal.db') });
  try {
    const path = join(tmp.dir, 'CAT1.csv');
    await writeFile(path, text);
    const file = await journal.addFile({ channel: 'cadastros', name: 'CAT1.csv', path, size: 1, sha256: 'x', runId: 'r' });
    const mapping = parseMappingText(MAPPING, 'cats.yaml');
    const res = await mapFileToJournal({
      fileId: file.id,
      path,
      fileName: 'CAT1.csv',
      mapping,
      journal,
      ctx: { file: 'CAT1.csv', refs: createStaticReferenceCache({}), now: new Date() },
    });
    await fn({ journal, file, mapping, res, dir: tmp.dir });
  } finally {
    await journal.close();
    await tmp.cleanup();
  }
}

test('a mapped file notes the targets its records have, rejected rows included', async () => {
  await withMappedFile('codigo;descricao\r\nC1;Um\r\nC2;\r\nC3;Três\r\n', async ({ journal, file, res }) => {
    assert.deepEqual({ records: res.records, rejects: res.rejects }, { records: 2, rejects: 1 });
    assert.deepEqual(JSON.parse((await journal.getMeta(FILE_META.targets(file.id)))!), ['Category']);
    assert.deepEqual(await journal.targetsOf([file.id], ['pending', 'rejected']), ['Category']);
  });
});

test('mapped rows are journaled without their fields by name, and the rejects file still reproduces them exactly', async () => {
  // a quoted cell (its quotes are part of the original text), an empty required field, an accented name
  await withMappedFile('codigo;descricao\r\n"C1";Um\r\nC2;\r\nC3;Três\r\n', async ({ journal, file, mapping, dir }) => {
    const rows = await journal.listRecords({ fileIds: [file.id] });
    assert.deepEqual(
      rows.map((r) => r.raw),
      [
        [{ line: 2, cells: ['C1', 'Um'], text: '"C1";Um' }],
        [{ line: 3, cells: ['C2', ''], text: 'C2;' }],
        [{ line: 4, cells: ['C3', 'Três'], text: 'C3;Três' }],
      ],
      'each row kept once as cells and once as text, no fields by name',
    );
    // the first is sent, the third refused by the WMS at send time; the second was refused at map time
    await journal.settle(rows[0]!.id, { status: 'sent', outcome: 'created', wmsId: 'w1', error: null });
    await journal.settle(rows[2]!.id, { status: 'rejected', outcome: 'rejected', error: 'name: already used' });

    const outboxDir = join(dir, 'outbox');
    const figures = await finishFile({ file, mapping, journal, outboxDir, csv: {}, now: new Date('2026-11-27T12:00:00Z') });
    assert.equal(figures.outcomes['rejected'], 2);
    const rejectsDir = join(outboxDir, 'rejects', 'cadastros');
    const [name] = await readdir(rejectsDir);
    const lines = (await readFile(join(rejectsDir, name!), 'utf8')).split('\r\n');
    assert.equal(lines[0], 'codigo;descricao;wmsbridge_error', 'the header as read, the reason column added');
    assert.match(
      lines[1]!,
      /^C2;;linha 3: falta o valor da coluna descricao, que é obrigatório \(campo name no WMS\)/,
      'refused at map time: its cells, the reason in its column',
    );
    assert.equal(lines[2], 'C3;Três;linha 4: name: already used', 'refused at send time: the same shape');
    assert.equal(lines.length, 4, 'two rejected rows and the final line break');
    assert.deepEqual(
      figures.attention.map((a) => a.original),
      [
        ['C2', ''],
        ['C3', 'Três'],
      ],
    );
  });
});
