/**
 * Mapping a file notes the targets of the records it produced (FILE_META.targets), so the send loop knows which
 * tiers a file has without reading its records (a fresh file's records are not in the reader's cache: 80 ms for
 * 20,000 before the first request). Rejected rows count: their target is the mapping's.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { makeTempDir } from '../helpers/tmp.js';
import { createSqliteJournal } from '../../src/journal/sqlite.js';
import { FILE_META } from '../../src/journal/policy.js';
import { createStaticReferenceCache, parseMappingText } from '../../src/map/index.js';
import { mapFileToJournal } from '../../src/app/map-file.js';

const MAPPING = `name: cats
match: { channel: cadastros, files: "CAT*.csv" }
source: { format: delimited, delimiter: ';', encoding: utf-8 }
target: Category
fields:
  codeERP: { col: codigo, transforms: [trim] }
  name: { col: descricao, transforms: [trim], required: true }
`;

test('a mapped file notes the targets its records have, rejected rows included', async () => {
  const tmp = await makeTempDir('wmsbridge-map-targets-');
  const journal = await createSqliteJournal({ path: join(tmp.dir, 'journal.db') });
  try {
    const path = join(tmp.dir, 'CAT1.csv');
    await writeFile(path, 'codigo;descricao\r\nC1;Um\r\nC2;\r\nC3;Três\r\n');
    const file = await journal.addFile({ channel: 'cadastros', name: 'CAT1.csv', path, size: 1, sha256: 'x', runId: 'r' });
    const res = await mapFileToJournal({
      fileId: file.id,
      path,
      fileName: 'CAT1.csv',
      mapping: parseMappingText(MAPPING, 'cats.yaml'),
      journal,
      ctx: { file: 'CAT1.csv', refs: createStaticReferenceCache({}), now: new Date() },
    });
    assert.deepEqual({ records: res.records, rejects: res.rejects }, { records: 2, rejects: 1 });
    assert.deepEqual(JSON.parse((await journal.getMeta(FILE_META.targets(file.id)))!), ['Category']);
    assert.deepEqual(await journal.targetsOf([file.id], ['pending', 'rejected']), ['Category']);
  } finally {
    await journal.close();
    await tmp.cleanup();
  }
});
