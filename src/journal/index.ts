/**
 * Opens the configured journal store. SQLite is the embedded default; PostgreSQL (several instances
 * sharing work) comes later behind the same async interface.
 */
import { ConfigError } from '../shared/errors.js';
import { createSqliteJournal } from './sqlite.js';
import type { Journal } from './types.js';

export type JournalSpec =
  | {
      kind: 'sqlite';
      path: string;
      /** 'FULL' (default) keeps every commit through a power loss; see createSqliteJournal */
      synchronous?: 'FULL' | 'NORMAL';
    }
  | { kind: 'postgres'; url: string };

export async function openJournal(spec: JournalSpec): Promise<Journal> {
  switch (spec.kind) {
    case 'sqlite':
      return createSqliteJournal({ path: spec.path, ...(spec.synchronous ? { synchronous: spec.synchronous } : {}) });
    case 'postgres':
      throw new ConfigError('journal: the postgres store is not implemented yet (use the embedded sqlite journal)');
    default: {
      const kind: never = spec;
      throw new ConfigError(`journal: unknown store kind ${JSON.stringify((kind as { kind: unknown }).kind)}`);
    }
  }
}

export type * from './types.js';
export { JournalError } from './errors.js';
export { createSqliteJournal, type SqliteJournalOptions } from './sqlite.js';
export { acquireStateLock, isPidAlive, LOCK_FILE, type StateLock, type StateLockOptions, type LockInfo } from './state-lock.js';
