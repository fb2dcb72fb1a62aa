/**
 * Opens the configured journal store. SQLite is the embedded default; PostgreSQL lets several
 * instances share work (docs/SCALING.md). Both sit behind the same async interface, as does the in-memory
 * store of the unit tests (createMemoryJournal: never configured, only built by tests).
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
  | {
      kind: 'postgres';
      /** postgres://user@host:port/db */
      url: string;
      /** kept out of the URL so it never shows in config dumps or messages */
      password?: string;
      /** @default 'wmsbridge' */
      schema?: string;
      /** @default 10 */
      poolSize?: number;
    };

export async function openJournal(spec: JournalSpec): Promise<Journal> {
  switch (spec.kind) {
    case 'sqlite':
      return createSqliteJournal({ path: spec.path, ...(spec.synchronous ? { synchronous: spec.synchronous } : {}) });
    case 'postgres': {
      // loaded only for a shared journal: the SQLite default does not pay for pg at start-up
      const { createPostgresJournal } = await import('./postgres.js');
      return createPostgresJournal({
        url: spec.url,
        ...(spec.password !== undefined ? { password: spec.password } : {}),
        ...(spec.schema !== undefined ? { schema: spec.schema } : {}),
        ...(spec.poolSize !== undefined ? { poolSize: spec.poolSize } : {}),
      });
    }
    default: {
      const kind: never = spec;
      throw new ConfigError(`journal: unknown store kind ${JSON.stringify((kind as { kind: unknown }).kind)}`);
    }
  }
}

export type * from './types.js';
export { JournalError } from './errors.js';
export { createSqliteJournal, type SqliteJournalOptions } from './sqlite.js';
export { createMemoryDatabase, createMemoryJournal, type MemoryDatabase, type MemoryJournalOptions } from './memory.js';
export type { PostgresJournalOptions } from './postgres.js';
export { acquireStateLock, isPidAlive, LOCK_FILE, type StateLock, type StateLockOptions, type LockInfo } from './state-lock.js';
