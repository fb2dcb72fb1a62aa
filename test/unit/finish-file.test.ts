/**
 * Finishing a file reads its records back: without their source rows (raw) except in the pages that hold a record
 * a person must see or fix (issue 19), and the rejects and attention rows still carry the original text.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { makeTempDir } from '../helpers/tmp.js';
import { categoryRecord, replacingMethod } from '../helpers/journal.js';
import { createSqliteJournal } from '../../src/journal/sqlite.js';
import type { Journal, RecordQuery } from '../../src/journal/types.js';
import type { CompiledMapping } from '../../src/map/index.js';
import { finishFile } from '../../src/app/finish-file.js';

let tmp: { dir: string; cleanup: () => Promise<void> };
before(async () => (tmp = await makeTempDir('wmsbridge-finish-')));
after(async () => tmp.cleanup());

const N = 2500;
const REJECTED = 1700; // in the second page of 1,000

test('a file is read back lean; only the page with a rejected record is read whole, and its rejects row keeps the original', async () => {
  const journal: Journal = await createSqliteJournal({ path: join(tmp.dir, 'state', 'journal.db') });
  try {
    const file = await journal.addFile({ channel: 'cadastros', name: 'CATS.csv', path: join(tmp.dir, 'CATS.csv'), size: 1, sha256: 'x', runId: 'r' });
    await journal.addRecords(
      file.id,
      Array.from({ length: N }, (_, i) => categoryRecord(i + 1)),
    );
    const rows = await journal.listRecords({ fileIds: [file.id] });
    await Promise.all(
      rows.map((r, i) =>
        journal.settle(
          r.id,
          i + 1 === REJECTED
            ? { status: 'rejected', outcome: 'rejected', error: 'name: too long' }
            : { status: 'sent', outcome: 'created', wmsId: `id-${i}`, error: null },
        ),
      ),
    );
    const reads: RecordQuery[] = [];
    const spy = replacingMethod(journal, 'listRecords', (real) => (q) => {
      reads.push(q);
      return real(q);
    });
    const mapping = { name: 'cat', source: { format: 'delimited', delimiter: ';', header: true } } as unknown as CompiledMapping;
    await journal.setMeta(`parse-facts:${file.id}`, JSON.stringify({ headerCells: ['codigo', 'nome'], newline: '\n' }));
    const figures = await finishFile({ file, mapping, journal: spy, outboxDir: join(tmp.dir, 'outbox'), csv: {}, now: new Date('2026-11-26T12:00:00Z') });

    assert.equal(figures.records, N);
    assert.deepEqual(figures.outcomes, { created: N - 1, rejected: 1 });
    assert.equal(reads.filter((q) => q.withoutRaw).length, 3, 'three lean pages');
    assert.deepEqual(
      reads.filter((q) => !q.withoutRaw).map((q) => [q.afterId, q.limit]),
      [[rows[999]!.id, 1000]],
      'only the second page read again with its source rows',
    );
    assert.deepEqual(figures.attention[0]?.original, [`CAT${REJECTED}`, `Categoria ${REJECTED}`]);
    const rejectsDir = join(tmp.dir, 'outbox', 'rejects', 'cadastros');
    const [rejects] = await readdir(rejectsDir);
    const text = await readFile(join(rejectsDir, rejects!), 'utf8');
    assert.match(text, new RegExp(`^codigo;nome;.*\\nCAT${REJECTED};Categoria ${REJECTED};.*name: too long`, 's'));
    const result = (await readFile(join(tmp.dir, 'outbox', figures.resultFile!), 'utf8')).trim().split('\n');
    assert.equal(result.length, N + 1, 'every record in the result file');
  } finally {
    await journal.close();
  }
});
