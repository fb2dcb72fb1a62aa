/**
 * A mapped row is journaled with its place, cells and text, not its fields by column name (issue 19: they held
 * each source row a third time, a fifth of a category record's bytes, and nothing reads them back). The rejects
 * file is written from what is kept: a row refused at map time and one refused at send time come back exactly as
 * they were in the original file, the reason in its column.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { makeTempDir } from '../helpers/tmp.js';
import { createSqliteJournal } from '../../src/journal/sqlite.js';
import { createStaticReferenceCache, parseMappingText } from '../../src/map/index.js';
import { mapFileToJournal } from '../../src/app/map-file.js';
import { finishFile } from '../../src/app/finish-file.js';

const MAPPING = `name: cats
match: { channel: cadastros, files: "CAT*.csv" }
source: { format: delimited, delimiter: ';', encoding: utf-8 }
target: Category
fields:
  codeERP: { col: codigo, transforms: [trim] }
  name: { col: descricao, transforms: [trim], required: true }
`;

test('mapped rows are journaled without their fields by name, and the rejects file still reproduces them exactly', async () => {
  const tmp = await makeTempDir('wmsbridge-map-raw-');
  const journal = await createSqliteJournal({ path: join(tmp.dir, 'journal.db') });
  try {
    const path = join(tmp.dir, 'CAT1.csv');
    // a quoted cell (its quotes are part of the original text), an empty required field, an accented name
    await writeFile(path, 'codigo;descricao\r\n"C1";Um\r\nC2;\r\nC3;Três\r\n');
    const file = await journal.addFile({ channel: 'cadastros', name: 'CAT1.csv', path, size: 1, sha256: 'x', runId: 'r' });
    const mapping = parseMappingText(MAPPING, 'cats.yaml');
    await mapFileToJournal({
      fileId: file.id,
      path,
      fileName: 'CAT1.csv',
      mapping,
      journal,
      ctx: { file: 'CAT1.csv', refs: createStaticReferenceCache({}), now: new Date() },
    });
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

    const outboxDir = join(tmp.dir, 'outbox');
    const figures = await finishFile({ file, mapping, journal, outboxDir, csv: {}, now: new Date('2026-11-27T12:00:00Z') });
    assert.equal(figures.outcomes['rejected'], 2);
    const dir = join(outboxDir, 'rejects', 'cadastros');
    const [name] = await readdir(dir);
    const lines = (await readFile(join(dir, name!), 'utf8')).split('\r\n');
    assert.equal(lines[0], 'codigo;descricao;wmsbridge_error', 'the header as read, the reason column added');
    assert.match(lines[1]!, /^C2;;line 3: .*name/, 'refused at map time: its cells, the reason in its column');
    assert.equal(lines[2], 'C3;Três;line 4: name: already used', 'refused at send time: the same shape');
    assert.equal(lines.length, 4, 'two rejected rows and the final line break');
    assert.deepEqual(
      figures.attention.map((a) => a.original),
      [
        ['C2', ''],
        ['C3', 'Três'],
      ],
    );
  } finally {
    await journal.close();
    await tmp.cleanup();
  }
});
