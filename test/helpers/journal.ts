import { join } from 'node:path';
import Database from 'better-sqlite3';
import { makeTempDir } from './tmp.js';
import { createSqliteJournal } from '../../src/journal/sqlite.js';
import type { Journal, NewRecord } from '../../src/journal/types.js';

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

/**
 * The journal record of row `i` of a `codigo;nome` category file (line i + 1, after the header), with its source row:
 * what the finish tests read back into result and rejects files.
 */
export function categoryRecord(i: number): NewRecord {
  const code = `CAT${i}`;
  return {
    target: 'Category',
    op: 'create',
    key: code,
    source: { line: i + 1 },
    mapping: 'cat',
    payload: { codeERP: code, name: `Categoria ${i}` },
    payloadHash: `h${i}`,
    raw: [{ line: i + 1, fields: { codigo: code, nome: `Categoria ${i}` }, cells: [code, `Categoria ${i}`], text: `${code};Categoria ${i}` }],
  };
}

/** The names of the journal's methods. */
type JournalMethod = { [K in keyof Journal]-?: Journal[K] extends ((...args: never[]) => unknown) | undefined ? K : never }[keyof Journal] & keyof Journal;

/**
 * `journal` with its method `name` replaced by what `replace` makes of the real one (bound to the journal): a spy that
 * notes the arguments and calls through, or a failure injected before the real call. Every other member is the
 * journal's own.
 */
export function replacingMethod<K extends JournalMethod>(journal: Journal, name: K, replace: (real: Journal[K]) => Journal[K]): Journal {
  const replaced = replace((journal[name] as (...args: unknown[]) => unknown).bind(journal) as Journal[K]);
  return new Proxy(journal, { get: (target, prop, receiver) => (prop === name ? replaced : (Reflect.get(target, prop, receiver) as unknown)) });
}
