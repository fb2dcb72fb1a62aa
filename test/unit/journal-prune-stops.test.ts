/**
 * Retention's prune goes in slices on both stores (SQLite 2,000 records a transaction, PostgreSQL PG_PRUNE_SLICE): a
 * prune told to stop (a stopping run or daemon) stops after its current slice, leaves the file row, its parse facts
 * and the rest of its records, and the next prune finishes the file. PostgreSQL used to delete every expired file in
 * ONE transaction, which a stop could not interrupt. Real journals: a SQLite file and the local PostgreSQL (a fresh
 * schema), each with one expired file of 25,000 settled records.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { makeTempDir } from '../helpers/tmp.js';
import { categoryRecord } from '../helpers/journal.js';
import { dropSchema, freshSchemaName, PG_TEST_URL, postgresSkipReason } from '../helpers/postgres.js';
import { openJournal, type Journal } from '../../src/journal/index.js';
import type { NewRecord } from '../../src/journal/types.js';

const N = 25_000;

let tmp: { dir: string; cleanup: () => Promise<void> };
before(async () => (tmp = await makeTempDir('wmsbridge-prune-slices-')));
after(async () => tmp.cleanup());

/** row i of the file, rejected: settled, so the file may be pruned */
const rejected = (i: number): NewRecord => ({ ...categoryRecord(i), status: 'rejected', error: `line ${i + 1}: field nome: empty` });

/** a signal that reads "not aborted" the first `times` times it is asked, then "aborted" (a SIGTERM between slices) */
function stopAfter(times: number): AbortSignal {
  let asked = 0;
  return {
    get aborted() {
      return ++asked > times;
    },
  } as AbortSignal;
}

function pruneContract(name: string, open: () => Promise<Journal>, cleanup: () => Promise<void> = async () => undefined, skip: string | false = false): void {
  describe(`prune in slices: ${name}`, { skip }, () => {
    test('a prune stopped between slices leaves the file whole enough to finish; the next prune finishes it', { timeout: 120_000 }, async () => {
      const j = await open();
      try {
        const file = await j.addFile({ channel: 'cadastros', name: 'CAT_VELHO.csv', path: '/in/CAT_VELHO.csv', size: 1, sha256: `sha-${name}`, runId: 'r' });
        for (let i = 0; i < N; i += 5_000)
          await j.addRecords(
            file.id,
            Array.from({ length: 5_000 }, (_, k) => rejected(i + k)),
          );
        await j.updateFile(file.id, { status: 'error', error: 'rejected rows' });
        await j.setMeta(`parse-facts:${file.id}`, '{}');
        await new Promise((r) => setTimeout(r, 20)); // the journal stamps rows with the real clock: the cutoff must come strictly after them
        const cutoff = new Date();

        const first = await j.pruneSettled(cutoff, { signal: stopAfter(1) });
        const left = (await j.countRecords({ fileIds: [file.id] })).rejected;
        assert.equal(first.records, N - left, JSON.stringify(first));
        assert.ok(left > 0 && left < N, `one slice went, the rest stayed: ${left} of ${N} left`);
        assert.equal(first.files, 0);
        assert.ok(await j.getFile(file.id), 'the file row stays until its last record is gone');
        assert.equal(await j.getMeta(`parse-facts:${file.id}`), '{}', 'and its parse facts');

        const rest = await j.pruneSettled(cutoff);
        assert.equal(rest.records, left);
        assert.equal(rest.files, 1);
        assert.equal(await j.getFile(file.id), undefined);
        assert.equal(await j.getMeta(`parse-facts:${file.id}`), undefined);
        assert.equal((await j.countRecords({ fileIds: [file.id] })).rejected, 0);
      } finally {
        await j.close();
        await cleanup();
      }
    });
  });
}

pruneContract('sqlite', () => openJournal({ kind: 'sqlite', path: join(tmp.dir, 'journal.db') }));
const schema = freshSchemaName('prune_slices');
pruneContract(
  'postgres',
  () => openJournal({ kind: 'postgres', url: PG_TEST_URL, schema }),
  () => dropSchema(schema),
  postgresSkipReason(),
);
