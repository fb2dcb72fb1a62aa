/**
 * The send loop's SQLite writes use an index, never a scan of a table that grows with the journal: a scan per
 * record makes a run quadratic (20,000 categories took 18 s instead of 3 s when the cross-reference's
 * identifying fields were deleted through a primary-key prefix scan). Checked on the query plans, not on time.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { makeTempDir } from '../helpers/tmp.js';
import { createSqliteJournal, RECORD_STATUSES, sqliteListRecordsSql } from '../../src/journal/sqlite.js';
import type { StoreRecordQuery } from '../../src/journal/store.js';
import { QUEUED_WRITES, type StatementCache } from '../../src/journal/sqlite-writes.js';
import { categoryRecord } from '../helpers/journal.js';

/** a fresh journal's database, opened beside the store for EXPLAIN QUERY PLAN */
async function withJournalDb(fn: (db: Database.Database) => Promise<void> | void): Promise<void> {
  const tmp = await makeTempDir('wmsbridge-plans-');
  try {
    const path = join(tmp.dir, 'journal.db');
    const j = await createSqliteJournal({ path });
    await j.close();
    const db = new Database(path);
    try {
      await fn(db);
    } finally {
      db.close();
    }
  } finally {
    await tmp.cleanup();
  }
}

test('every queued write of the send loop searches an index (no SCAN in its query plan)', async () => {
  await withJournalDb(async (db) => {
    // collect the SQL each write runs, with placeholder arguments
    const seen: Array<{ sql: string; args: unknown[] }> = [];
    const stmt = ((sql: string) => ({
      run: (...args: unknown[]) => {
        seen.push({ sql, args });
        return { changes: 1, lastInsertRowid: 1 };
      },
      get: (...args: unknown[]) => {
        seen.push({ sql, args });
        return { id: 1 };
      },
    })) as unknown as StatementCache;
    QUEUED_WRITES.markSending(stmt, 1);
    QUEUED_WRITES.settle(stmt, 1, { status: 'sent', outcome: 'created', wmsId: 'x' });
    QUEUED_WRITES.putXref(stmt, 'Category', 'K1', 'x', 'h');
    QUEUED_WRITES.putXrefFields(stmt, 'Category', 'K1', [
      ['codeERP', 'k1'],
      ['name', 'um'],
    ]);
    QUEUED_WRITES.deleteXref(stmt, 'Category', 'K1');
    assert.ok(seen.length >= 6, `writes seen: ${seen.length}`);
    for (const { sql, args } of seen) {
      const plan = db.prepare(`EXPLAIN QUERY PLAN ${sql}`).all(...(args as never[])) as Array<{ detail: string }>;
      for (const step of plan) assert.doesNotMatch(step.detail, /^SCAN /, `${sql}\n  plans a scan: ${step.detail}`);
      if (/^DELETE|^UPDATE/.test(sql.trim())) {
        assert.ok(
          plan.some((s) => /USING (INDEX|PRIMARY KEY|INTEGER PRIMARY KEY)/.test(s.detail) && !/PRIMARY KEY \(resource=\?\)$/.test(s.detail)),
          `${sql}\n  plan: ${plan.map((s) => s.detail).join(' | ')}`,
        );
      }
    }
  });
});

test('a read of several statuses, of one file or of the whole journal, is one index range per status (never a walk of every record)', async () => {
  await withJournalDb(async (db) => {
    const shapes: StoreRecordQuery[] = [
      // the send loop's resume: what already failed in a file (a fresh 20,000-record file walked whole: 55 ms before its first request)
      { fileIds: [1], statuses: ['rejected', 'failed', 'held'], afterId: 0, limit: 1000, withoutRaw: true },
      // the start of every run: the journal's failed and held records (a scan of the table: 440 ms at 1,000,000 records)
      { statuses: ['failed', 'held'], limit: 100_000 },
      // the send loop's pages
      { fileIds: [1], targets: ['Category'], statuses: ['pending', 'in_doubt'], afterId: 10, limit: 200, withoutRaw: true },
      // the send loop's resume over a run of several files (one read over their id range walked every record of them)
      { fileIds: [1, 2, 3], statuses: ['rejected', 'failed', 'held'], afterId: 0, limit: 1000, withoutRaw: true },
    ];
    for (const q of shapes) {
      const reads = sqliteListRecordsSql(q);
      for (const { sql, params } of reads) {
        const plan = (db.prepare(`EXPLAIN QUERY PLAN ${sql}`).all(...(params as never[])) as Array<{ detail: string }>).map((s) => s.detail);
        const shown = `${sql}\n  plan: ${plan.join(' | ')}`;
        assert.ok(
          plan.some((d) => /^SEARCH records USING (COVERING )?INDEX records_by_(file_)?status \((file_id=\? AND )?status=\?/.test(d)),
          `the status is not in the index search: ${shown}`,
        );
        assert.ok(!plan.some((d) => /TEMP B-TREE/.test(d)), `rows sorted after the read: ${shown}`);
      }
      assert.equal(reads.length, q.statuses!.length * Math.max(1, q.fileIds?.length ?? 0), JSON.stringify(q));
    }
    // several files waiting to be sent: their id range, one read (most of their records are pending)
    assert.equal(sqliteListRecordsSql({ fileIds: [1, 2, 3], statuses: ['pending', 'in_doubt'], afterId: 0, limit: 200 }).length, 1);
    // past 64 (file, status) pairs: one read again, not hundreds of statements a page
    const many = Array.from({ length: 30 }, (_, i) => i + 1);
    assert.equal(sqliteListRecordsSql({ fileIds: many, statuses: ['rejected', 'failed', 'held'], limit: 1000 }).length, 1);
    // every status at once is no status condition: the file's own index, in id order
    const all = sqliteListRecordsSql({ fileIds: [1], statuses: [...RECORD_STATUSES], afterId: 0, limit: 1000 });
    assert.equal(all.length, 1);
    assert.doesNotMatch(all[0]!.sql, /WHERE.*status/);
  });
});

test("a page of several files' records after an id starts its walk at that id, not at the files' first record", async () => {
  const tmp = await makeTempDir('wmsbridge-plans-walk-');
  try {
    const path = join(tmp.dir, 'journal.db');
    const j = await createSqliteJournal({ path });
    const fileIds: number[] = [];
    for (let f = 0; f < 5; f++) {
      const file = await j.addFile({ channel: 'c', name: `F${f}.csv`, path: `/x/F${f}.csv`, size: 1, sha256: `s${f}`, runId: 'r' });
      fileIds.push(file.id);
      await j.addRecords(
        file.id,
        Array.from({ length: 400 }, (_, i) => categoryRecord(f * 400 + i + 1)),
      );
    }
    await j.close();
    const db = new Database(path);
    try {
      // counts the rows the read looks at: a first WHERE term, evaluated for every row of the range the plan walks
      let visited = 0;
      db.function('visited', (id: unknown) => (visited++, id === null ? 0 : 1));
      const ids = (db.prepare('SELECT id FROM records ORDER BY id').all() as Array<{ id: number }>).map((r) => r.id);
      const afterId = ids[1500]!;
      const [read, ...more] = sqliteListRecordsSql({ fileIds, targets: ['Category'], statuses: ['pending', 'in_doubt'], afterId, limit: 50, withoutRaw: true });
      assert.equal(more.length, 0, 'one read over the files');
      const sql = read!.sql.replace(' WHERE ', ' WHERE visited(id) AND ');
      const rows = db.prepare(sql).all(...(read!.params as never[])) as Array<{ id: number }>;
      assert.deepEqual(
        rows.map((r) => r.id),
        ids.slice(1501, 1551),
      );
      // the old read walked the 1,500 records before afterId again at every page of the send loop
      assert.ok(visited <= 60, `rows looked at for a page of 50: ${visited}`);
    } finally {
      db.close();
    }
  } finally {
    await tmp.cleanup();
  }
});
