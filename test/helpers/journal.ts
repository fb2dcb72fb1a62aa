import { join } from 'node:path';
import Database from 'better-sqlite3';
import { makeTempDir } from './tmp.js';
import { createSqliteJournal } from '../../src/journal/sqlite.js';
import type { Journal } from '../../src/journal/types.js';

/**
 * A real SQLite journal file and a second connection to it, for `fn`; then both are closed and the folder removed.
 * The second connection holds the write lock (BEGIN IMMEDIATE) so the journal's writes stay in flight, or changes rows
 * behind the journal's back.
 */
export async function withSqliteJournalAndOther(
  prefix: string,
  fn: (t: { journal: Journal; other: Database.Database; dir: string }) => Promise<void>,
): Promise<void> {
  const tmp = await makeTempDir(prefix);
  const path = join(tmp.dir, 'journal.db');
  const journal = await createSqliteJournal({ path });
  const other = new Database(path);
  try {
    await fn({ journal, other, dir: tmp.dir });
  } finally {
    other.close();
    await journal.close();
    await tmp.cleanup();
  }
}
