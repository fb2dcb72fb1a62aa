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
import { createSqliteJournal } from '../../src/journal/sqlite.js';
import { QUEUED_WRITES, type StatementCache } from '../../src/journal/sqlite-writes.js';

test('every queued write of the send loop searches an index (no SCAN in its query plan)', async () => {
  const tmp = await makeTempDir('wmsbridge-plans-');
  try {
    const path = join(tmp.dir, 'journal.db');
    const j = await createSqliteJournal({ path });
    await j.close();
    const db = new Database(path);
    try {
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
    } finally {
      db.close();
    }
  } finally {
    await tmp.cleanup();
  }
});
