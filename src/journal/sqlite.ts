/**
 * The embedded journal: one SQLite file (better-sqlite3) in the state folder.
 *
 * - WAL mode, so readers (status, webhooks) never block the writer and a crash never leaves a torn file.
 * - synchronous=FULL by default: with NORMAL a power loss may roll back the last commits, and a lost
 *   'sending' mark turns an in-doubt send into a silent resend. FULL costs one fsync per commit, which
 *   batches (addRecords) amortise; see docs/INTAKE.md for the measured figures.
 * - busy_timeout so a second process (status, webhooks) waits instead of failing on a held write lock.
 * - Schema versioned in `schema_version`; MIGRATIONS are applied in order, each in one transaction.
 * All methods are async (the interface also fits a networked store); the work itself is synchronous.
 */
import Database from 'better-sqlite3';
import { chmodSync, existsSync, mkdirSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { isBridgeError, errorMessage } from '../shared/errors.js';
import { JournalError } from './errors.js';
import { toFileRow, toRecordRow, toWebhook, toXref, type FileDbRow, type RecordDbRow, type WebhookDbRow, type XrefDbRow } from './rows.js';
import { applyBatch, statementCache, type QueuedWriteArgs, type QueuedWriteName, type QueuedWriteOp, type QueuedWriteResult, type QueuedWriteReturn } from './sqlite-writes.js';
import { startWriterThread, type WriterThread } from './sqlite-writer.js';
import { createGroupCommit } from './group-commit.js';
import type {
  FileRow,
  FileStatus,
  Journal,
  LeaderLock,
  NewFile,
  NewRecord,
  RecordQuery,
  RecordResult,
  RecordRow,
  RecordStatus,
} from './types.js';

export interface SqliteJournalOptions {
  /** path of the database file (created with its folder if missing), or ':memory:' */
  path: string;
  /**
   * PRAGMA synchronous. FULL survives power loss with every commit intact; NORMAL (WAL) survives a
   * process crash but may lose the last commits on power loss.
   * @default 'FULL'
   */
  synchronous?: 'FULL' | 'NORMAL';
  /**
   * How long a write waits for another process's lock before failing (ms).
   * @default 10000
   */
  busyTimeoutMs?: number;
  /**
   * Where the send loop's group-committed writes (markSending, settle, putXref, deleteXref,
   * addWebhookEvent) run: 'thread' (a worker thread with its own connection, so a commit never stops
   * the event loop) or 'inline' (this connection). ':memory:' journals are always inline.
   * @default 'thread' for a file, 'inline' for ':memory:'
   */
  writer?: 'thread' | 'inline';
}

export const RECORD_STATUSES: readonly RecordStatus[] = ['pending', 'sending', 'sent', 'rejected', 'failed', 'held', 'in_doubt'];
const FILE_STATUSES: readonly FileStatus[] = ['claimed', 'mapped', 'done', 'error', 'duplicate'];

/** Statuses of an earlier file that make a new file with the same content a duplicate. */
const DUPLICATE_OF_STATUSES: readonly FileStatus[] = ['claimed', 'mapped', 'done'];

const sqlList = (values: readonly string[]): string => values.map((v) => `'${v}'`).join(', ');

/**
 * Migrations, applied in order. Never edit a shipped entry: append a new one. Index i brings the
 * schema from version i to version i + 1.
 */
export const MIGRATIONS: readonly string[] = [
  `
  CREATE TABLE files (
    id            INTEGER PRIMARY KEY AUTOINCREMENT,
    channel       TEXT    NOT NULL,
    name          TEXT    NOT NULL,
    path          TEXT    NOT NULL,
    size          INTEGER NOT NULL,
    sha256        TEXT    NOT NULL,
    status        TEXT    NOT NULL CHECK (status IN (${sqlList(FILE_STATUSES)})),
    duplicate_of  INTEGER REFERENCES files(id),
    error         TEXT,
    run_id        TEXT,
    owner         TEXT,
    lease_until   TEXT,
    created_at    TEXT    NOT NULL,
    updated_at    TEXT    NOT NULL
  );
  CREATE INDEX files_by_sha256 ON files (sha256, status);
  CREATE INDEX files_by_status ON files (status);

  CREATE TABLE records (
    id              INTEGER PRIMARY KEY AUTOINCREMENT,
    file_id         INTEGER NOT NULL REFERENCES files(id),
    target          TEXT    NOT NULL,
    op              TEXT    NOT NULL,
    key             TEXT    NOT NULL,
    source          TEXT    NOT NULL,
    mapping         TEXT    NOT NULL,
    payload         TEXT    NOT NULL,
    payload_hash    TEXT    NOT NULL,
    attachment_path TEXT,
    raw             TEXT,
    status          TEXT    NOT NULL CHECK (status IN (${sqlList(RECORD_STATUSES)})),
    outcome         TEXT,
    wms_id          TEXT,
    error           TEXT,
    attempts        INTEGER NOT NULL DEFAULT 0,
    updated_at      TEXT    NOT NULL
  );
  CREATE INDEX records_by_file_status ON records (file_id, status);
  CREATE INDEX records_by_target_key ON records (target, key);
  CREATE INDEX records_by_status ON records (status);
  CREATE INDEX records_by_wms_id ON records (wms_id) WHERE wms_id IS NOT NULL;

  CREATE TABLE xref (
    resource      TEXT NOT NULL,
    key           TEXT NOT NULL,
    wms_id        TEXT NOT NULL,
    payload_hash  TEXT,
    updated_at    TEXT NOT NULL,
    PRIMARY KEY (resource, key)
  ) WITHOUT ROWID;

  CREATE TABLE meta (
    key    TEXT PRIMARY KEY,
    value  TEXT NOT NULL
  ) WITHOUT ROWID;

  CREATE TABLE webhook_events (
    id            INTEGER PRIMARY KEY AUTOINCREMENT,
    dedup_key     TEXT NOT NULL UNIQUE,
    kind          TEXT NOT NULL,
    received_at   TEXT NOT NULL,
    body          TEXT NOT NULL,
    delivered_at  TEXT,
    record_id     INTEGER REFERENCES records(id)
  );
  CREATE INDEX webhook_events_undelivered ON webhook_events (id) WHERE delivered_at IS NULL;
  `,
  // 2: one file's records in id order without a sort (keyset paging over a 1M-record file)
  `
  CREATE INDEX records_by_file ON records (file_id);
  `,
  // 3 (issue 15): the reason of a record's error as a stable code and its parameters (JSON), for the outbox locale
  `
  ALTER TABLE records ADD COLUMN reason TEXT;
  `,
  // 4 (issue 14): identifying fields of created records, so a lookup by symbol, cnpj, code... finds them
  `
  CREATE TABLE xref_field (
    resource    TEXT NOT NULL,
    field       TEXT NOT NULL,
    value       TEXT NOT NULL,
    key         TEXT NOT NULL,
    updated_at  TEXT NOT NULL,
    PRIMARY KEY (resource, field, value, key)
  ) WITHOUT ROWID;
  CREATE INDEX xref_field_by_key ON xref_field (resource, key);
  `,
];

export const SCHEMA_VERSION = MIGRATIONS.length;





/** SQLite returns JSON columns as text */
type SqliteRecordRow = RecordDbRow<string>;
const fromSqlite = (r: SqliteRecordRow): RecordRow => toRecordRow(r, JSON.parse);

const now = (): string => new Date().toISOString();
const later = (ms: number): string => new Date(Date.now() + ms).toISOString();

/** Statuses of a file that is being worked on: leases matter only for these. */
export const LEASED_STATUSES: readonly FileStatus[] = ['claimed', 'mapped'];

/** Statuses of a record that is not settled yet (see Journal.countUnsettled). */
export const UNSETTLED_STATUSES: readonly RecordStatus[] = ['pending', 'sending', 'in_doubt'];

/**
 * Leader locks held in this process, by database path then name: SQLite has one process per state
 * folder (the state lock), so exclusivity among this process's journal objects is exclusivity.
 */
const leaderLocks = new Map<string, Set<string>>();
let memoryLockSeq = 0;

function checkTtl(name: string, location: string, ttlMs: number): void {
  if (!Number.isFinite(ttlMs) || ttlMs <= 0) throw new JournalError(`journal ${location}: ${name}: ttlMs must be a positive number of milliseconds, got ${ttlMs}`);
}





/** Applies pending migrations; refuses a database written by a newer wmsbridge. */
function migrate(db: Database.Database, location: string): void {
  db.exec('CREATE TABLE IF NOT EXISTS schema_version (version INTEGER NOT NULL, applied_at TEXT NOT NULL)');
  const current = (db.prepare('SELECT MAX(version) AS v FROM schema_version').get() as { v: number | null }).v ?? 0;
  if (current > SCHEMA_VERSION) {
    throw new JournalError(
      `journal ${location}: schema version ${current} is newer than this wmsbridge supports (${SCHEMA_VERSION}); upgrade wmsbridge or use another --state-dir`,
    );
  }
  for (let v = current; v < SCHEMA_VERSION; v++) {
    const sql = MIGRATIONS[v] as string;
    db.transaction(() => {
      db.exec(sql);
      db.prepare('INSERT INTO schema_version (version, applied_at) VALUES (?, ?)').run(v + 1, now());
    }).immediate();
  }
}

/** Opens (creating or migrating) the SQLite journal at `options.path`. */
export async function createSqliteJournal(options: SqliteJournalOptions): Promise<Journal> {
  const memory = options.path === ':memory:';
  const path = memory ? options.path : resolve(options.path);
  const location = `sqlite:${path}`;
  let db: Database.Database;
  try {
    if (!memory) mkdirSync(dirname(path), { recursive: true, mode: 0o700 });
    db = new Database(path);
    // every payload sent is in here (business data): readable by its owner only, WAL and SHM included
    if (!memory) for (const f of [path, `${path}-wal`, `${path}-shm`]) if (existsSync(f)) chmodSync(f, 0o600);
  } catch (err) {
    throw new JournalError(`journal ${location}: cannot open: ${errorMessage(err)}`, { cause: err });
  }
  try {
    db.pragma(`busy_timeout = ${options.busyTimeoutMs ?? 10_000}`);
    if (!memory) db.pragma('journal_mode = WAL');
    db.pragma(`synchronous = ${options.synchronous ?? 'FULL'}`);
    db.pragma('foreign_keys = ON');
    migrate(db, location);
  } catch (err) {
    db.close();
    if (isBridgeError(err)) throw err;
    throw new JournalError(`journal ${location}: cannot initialise: ${errorMessage(err)}`, { cause: err });
  }
  const writerMode = options.writer ?? (memory ? 'inline' : 'thread');
  if (memory && writerMode === 'thread') throw new JournalError(`journal ${location}: a ':memory:' journal cannot have a writer thread`);
  return buildJournal(db, location, {
    writer: writerMode,
    path,
    synchronous: options.synchronous ?? 'FULL',
    busyTimeoutMs: options.busyTimeoutMs ?? 10_000,
  });
}

function buildJournal(
  db: Database.Database,
  location: string,
  options: { writer: 'thread' | 'inline'; path: string; synchronous: 'FULL' | 'NORMAL'; busyTimeoutMs: number },
): Journal {
  let closed = false;
  let writer: WriterThread | null = null;
  /** leader-lock names this journal object holds (released at close) */
  const ownLocks = new Set<string>();
  /** separate ':memory:' databases must not share leader locks */
  const lockKey = location === 'sqlite::memory:' ? `${location}#${++memoryLockSeq}` : location;
  /** Prepared statements are cached by SQL text (dynamic queries have a handful of shapes). */
  const stmt = statementCache(db);

  /** Runs one journal operation; names the store and the operation in any error. */
  function op<T>(name: string, fn: () => T): Promise<T> {
    if (closed) return Promise.reject(new JournalError(`journal ${location}: ${name}: the journal is closed`));
    try {
      return Promise.resolve(fn());
    } catch (err) {
      return Promise.reject(wrapError(name, err));
    }
  }

  function wrapError(name: string, err: unknown): Error {
    if (isBridgeError(err)) return err;
    return new JournalError(`journal ${location}: ${name}: ${errorMessage(err)}`, { cause: err });
  }

  /**
   * Group commit for the per-record writes of the send loop (markSending, settle, putXref...): the writes
   * issued while no batch is committing are applied in ONE transaction, so one fsync serves all the
   * records in flight instead of one each. With a writer thread (file journals, the default) the commit
   * runs there and never stops the event loop; one batch is in flight at a time and the next one gathers
   * meanwhile, so batches grow with the commit's cost. Each caller's promise resolves only after its
   * commit: a 'sending' mark is durable before its request leaves. A write that throws fails alone.
   */
  const writes = createGroupCommit<QueuedWriteOp>({
    maxInFlight: 1,
    commit: async (ops) => {
      let results: QueuedWriteResult[];
      try {
        results = writer ? await writer.submit(ops) : applyBatch(db, stmt, ops);
      } catch (err) {
        return ops.map((o) => ({ ok: false, error: wrapError(o.name, err) }));
      }
      return results.map((r, i) =>
        r.ok ? r : { ok: false, error: wrapError(ops[i]!.name, Object.assign(new Error(r.message), { code: r.code })) },
      );
    },
  });
  function queuedWrite<N extends QueuedWriteName>(name: N, ...args: QueuedWriteArgs<N>): Promise<QueuedWriteReturn<N>> {
    if (closed) return Promise.reject(new JournalError(`journal ${location}: ${name}: the journal is closed`));
    if (options.writer === 'thread' && !writer) writer = startWriterThread({ path: options.path, synchronous: options.synchronous, busyTimeoutMs: options.busyTimeoutMs });
    return writes.add({ name, args }) as Promise<QueuedWriteReturn<N>>;
  }

  const addFileTx = db.transaction(
    (f: NewFile): FileRow => {
      let duplicateOf: number | null = null;
      if (!f.force) {
        const earlier = stmt(
          `SELECT id FROM files WHERE sha256 = ? AND status IN (${sqlList(DUPLICATE_OF_STATUSES)}) ORDER BY id LIMIT 1`,
        ).get(f.sha256) as { id: number } | undefined;
        if (earlier) duplicateOf = earlier.id;
      }
      const ts = now();
      const leaseUntil = f.owner !== undefined && f.leaseTtlMs !== undefined ? later(f.leaseTtlMs) : null;
      const info = stmt(
        `INSERT INTO files (channel, name, path, size, sha256, status, duplicate_of, run_id, owner, lease_until, created_at, updated_at)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
      ).run(f.channel, f.name, f.path, f.size, f.sha256, duplicateOf === null ? 'claimed' : 'duplicate', duplicateOf, f.runId, f.owner ?? null, leaseUntil, ts, ts);
      return toFileRow(stmt('SELECT * FROM files WHERE id = ?').get(info.lastInsertRowid) as FileDbRow);
    },
  );

  const addRecordsTx = db.transaction((fileId: number, records: NewRecord[]) => {
    const insert = stmt(
      `INSERT INTO records (file_id, target, op, key, source, mapping, payload, payload_hash, attachment_path, raw, status, error, reason, attempts, updated_at)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 0, ?)`,
    );
    const ts = now();
    for (const r of records) {
      insert.run(
        fileId,
        r.target,
        r.op,
        r.key,
        JSON.stringify(r.source),
        r.mapping,
        JSON.stringify(r.payload),
        r.payloadHash,
        r.attachmentPath ?? null,
        r.raw === undefined ? null : JSON.stringify(r.raw),
        r.status ?? 'pending',
        r.error ?? null,
        r.reason ? JSON.stringify(r.reason) : null,
        ts,
      );
    }
  });

  /**
   * Only a file none of whose records left the building can be re-mapped: a record that was (or may
   * have been) sent must stay, or its outcome would be forgotten.
   */
  const deleteRecordsTx = db.transaction((fileId: number) => {
    const touched = stmt(
      `SELECT COUNT(*) AS n FROM records WHERE file_id = ? AND (status NOT IN ('pending', 'rejected') OR attempts > 0)`,
    ).get(fileId) as { n: number };
    if (touched.n > 0) {
      throw new JournalError(
        `journal ${location}: deleteRecords: file ${fileId} has ${touched.n} record(s) that were sent or are in flight; refusing to delete its records`,
      );
    }
    stmt('DELETE FROM records WHERE file_id = ?').run(fileId);
  });

  const pruneTx = db.transaction((before: string): { files: number; records: number } => {
    const ids = (
      stmt(
        `SELECT id FROM files f WHERE f.updated_at < ? AND f.status IN ('done', 'error', 'duplicate')
           AND NOT EXISTS (SELECT 1 FROM records r WHERE r.file_id = f.id AND r.status IN ('pending', 'sending', 'held', 'in_doubt', 'failed'))`,
      ).all(before) as Array<{ id: number }>
    ).map((r) => r.id);
    let records = 0;
    for (const id of ids) {
      stmt('UPDATE webhook_events SET record_id = NULL WHERE record_id IN (SELECT id FROM records WHERE file_id = ?)').run(id);
      records += stmt('DELETE FROM records WHERE file_id = ?').run(id).changes;
      stmt('UPDATE files SET duplicate_of = NULL WHERE duplicate_of = ?').run(id);
      stmt('DELETE FROM meta WHERE key = ?').run(`parse-facts:${id}`);
      stmt('DELETE FROM files WHERE id = ?').run(id);
    }
    return { files: ids.length, records };
  });

  /**
   * FROM + WHERE for a record query, chosen so rows come out of an index already in id order: keyset
   * paging (`id > afterId ORDER BY id LIMIT n`) must not sort every remaining row of a 1M-record file
   * for each page. One file (+ one status): the file index; one status: the status index; anything
   * else: the id order itself, bounded by the files' id range.
   */
  function recordWhere(q: Omit<RecordQuery, 'limit'>): { from: string; where: string; params: unknown[] } {
    const conds: string[] = [];
    const params: unknown[] = [];
    const oneFile = q.fileIds?.length === 1;
    const oneStatus = q.statuses?.length === 1;
    let from = 'records NOT INDEXED';
    if (q.fileIds && q.fileIds.length === 0) conds.push('0');
    if (q.targets && q.targets.length === 0) conds.push('0');
    if (q.statuses && q.statuses.length === 0) conds.push('0');
    if (oneFile) {
      from = oneStatus ? 'records INDEXED BY records_by_file_status' : 'records INDEXED BY records_by_file';
      conds.push('file_id = ?');
      params.push(q.fileIds![0]);
    } else if (q.fileIds && q.fileIds.length > 1) {
      conds.push('file_id IN (SELECT value FROM json_each(?))');
      params.push(JSON.stringify(q.fileIds));
      // per-file MIN/MAX by equality: each one is a single index probe
      conds.push(
        'id BETWEEN (SELECT MIN((SELECT MIN(id) FROM records INDEXED BY records_by_file WHERE file_id = f.value)) FROM json_each(?) f)' +
          ' AND (SELECT MAX((SELECT MAX(id) FROM records INDEXED BY records_by_file WHERE file_id = f.value)) FROM json_each(?) f)',
      );
      params.push(JSON.stringify(q.fileIds), JSON.stringify(q.fileIds));
    } else if (oneStatus) {
      from = 'records INDEXED BY records_by_status';
    }
    if (oneStatus) {
      conds.push('status = ?');
      params.push(q.statuses![0]);
    } else if (q.statuses && q.statuses.length > 1) {
      conds.push('status IN (SELECT value FROM json_each(?))');
      params.push(JSON.stringify(q.statuses));
    }
    if (q.targets?.length === 1) {
      conds.push('target = ?');
      params.push(q.targets[0]);
    } else if (q.targets && q.targets.length > 1) {
      conds.push('target IN (SELECT value FROM json_each(?))');
      params.push(JSON.stringify(q.targets));
    }
    if (q.afterId !== undefined) {
      conds.push('id > ?');
      params.push(q.afterId);
    }
    return { from, where: conds.length ? `WHERE ${conds.join(' AND ')}` : '', params };
  }

  const journal: Journal = {
    location,

    addFile: (file) =>
      op('addFile', () => {
        if (file.owner !== undefined && file.leaseTtlMs !== undefined) checkTtl('addFile', location, file.leaseTtlMs);
        return addFileTx.immediate(file);
      }),

    getFile: (id) =>
      op('getFile', () => {
        const r = stmt('SELECT * FROM files WHERE id = ?').get(id) as FileDbRow | undefined;
        return r ? toFileRow(r) : undefined;
      }),

    listFiles: (query = {}) =>
      op('listFiles', () => {
        const conds: string[] = [];
        const params: unknown[] = [];
        if (query.statuses) {
          conds.push('status IN (SELECT value FROM json_each(?))');
          params.push(JSON.stringify(query.statuses));
        }
        if (query.channel !== undefined) {
          conds.push('channel = ?');
          params.push(query.channel);
        }
        if (query.runId !== undefined) {
          conds.push('run_id = ?');
          params.push(query.runId);
        }
        const where = conds.length ? `WHERE ${conds.join(' AND ')}` : '';
        return (stmt(`SELECT * FROM files ${where} ORDER BY id`).all(...params) as FileDbRow[]).map(toFileRow);
      }),

    updateFile: (id, patch) =>
      op('updateFile', () => {
        const columns: Record<string, string> = { status: 'status', path: 'path', error: 'error', runId: 'run_id', owner: 'owner', leaseUntil: 'lease_until' };
        const sets: string[] = [];
        const params: unknown[] = [];
        for (const [k, col] of Object.entries(columns)) {
          if (k in patch && (patch as Record<string, unknown>)[k] !== undefined) {
            sets.push(`${col} = ?`);
            params.push((patch as Record<string, unknown>)[k]);
          }
        }
        sets.push('updated_at = ?');
        params.push(now(), id);
        const info = stmt(`UPDATE files SET ${sets.join(', ')} WHERE id = ?`).run(...params);
        if (info.changes === 0) throw new JournalError(`journal ${location}: updateFile: file ${id} not found`);
      }),

    acquireFileLease: (fileId, owner, ttlMs) =>
      op('acquireFileLease', () => {
        checkTtl('acquireFileLease', location, ttlMs);
        const ts = now();
        const info = stmt(
          `UPDATE files SET owner = ?, lease_until = ?, updated_at = ?
           WHERE id = ? AND (owner IS NULL OR owner = ? OR lease_until < ?)`,
        ).run(owner, later(ttlMs), ts, fileId, owner, ts);
        if (info.changes === 1) return true;
        if (!stmt('SELECT id FROM files WHERE id = ?').get(fileId)) throw new JournalError(`journal ${location}: acquireFileLease: file ${fileId} not found`);
        return false;
      }),

    renewLeases: (owner, ttlMs) =>
      op('renewLeases', () => {
        checkTtl('renewLeases', location, ttlMs);
        return stmt(`UPDATE files SET lease_until = ?, updated_at = ? WHERE owner = ? AND status IN (${sqlList(LEASED_STATUSES)})`).run(later(ttlMs), now(), owner)
          .changes;
      }),

    releaseFileLease: (fileId, owner) =>
      op('releaseFileLease', () => {
        stmt('UPDATE files SET owner = NULL, lease_until = NULL, updated_at = ? WHERE id = ? AND owner = ?').run(now(), fileId, owner);
      }),

    listResumableFiles: (owner) =>
      op('listResumableFiles', () =>
        (
          stmt(
            `SELECT * FROM files WHERE status IN (${sqlList(LEASED_STATUSES)}) AND (owner IS NULL OR owner = ? OR lease_until < ?) ORDER BY id`,
          ).all(owner, now()) as FileDbRow[]
        ).map(toFileRow),
      ),

    tryLeaderLock: (name) =>
      op('tryLeaderLock', (): LeaderLock | null => {
        let held = leaderLocks.get(lockKey);
        if (!held) leaderLocks.set(lockKey, (held = new Set()));
        if (held.has(name)) return null;
        held.add(name);
        ownLocks.add(name);
        let released = false;
        return {
          isHeld: () => !released && !closed,
          release: async () => {
            if (released) return;
            released = true;
            ownLocks.delete(name);
            held.delete(name);
          },
        };
      }),

    countUnsettled: (target, key) =>
      op('countUnsettled', () => {
        const r = stmt(`SELECT COUNT(*) AS n FROM records WHERE target = ? AND key = ? AND status IN (${sqlList(UNSETTLED_STATUSES)})`).get(target, key) as { n: number };
        return r.n;
      }),

    addRecords: (fileId, records) =>
      op('addRecords', () => {
        if (records.length === 0) return;
        addRecordsTx.immediate(fileId, records);
      }),

    deleteRecords: (fileId) =>
      op('deleteRecords', () => {
        deleteRecordsTx.immediate(fileId);
      }),

    pruneSettled: (before) => op('pruneSettled', () => pruneTx.immediate(before.toISOString())),

    listRecords: (query) =>
      op('listRecords', () => {
        const { from, where, params } = recordWhere(query);
        const limit = query.limit !== undefined ? ' LIMIT ?' : '';
        if (query.limit !== undefined) params.push(query.limit);
        return (stmt(`SELECT * FROM ${from} ${where} ORDER BY id${limit}`).all(...params) as SqliteRecordRow[]).map(fromSqlite);
      }),

    countRecords: (query) =>
      op('countRecords', () => {
        const { where, params } = recordWhere(query);
        // counting needs no order: let the planner pick (covering index on file and status)
        const counts = Object.fromEntries(RECORD_STATUSES.map((s) => [s, 0])) as Record<RecordStatus, number>;
        for (const r of stmt(`SELECT status, COUNT(*) AS n FROM records ${where} GROUP BY status`).all(...params) as { status: RecordStatus; n: number }[]) {
          counts[r.status] = r.n;
        }
        return counts;
      }),

    markSending: (recordId) => queuedWrite('markSending', recordId),

    settle: (recordId, result: RecordResult) => queuedWrite('settle', recordId, result),

    requeue: (recordIds) =>
      op('requeue', () => {
        if (recordIds.length === 0) return 0;
        return stmt(
          `UPDATE records SET status = 'pending', outcome = NULL, error = NULL, reason = NULL, updated_at = ?
           WHERE status IN ('held', 'failed', 'in_doubt') AND id IN (SELECT value FROM json_each(?))`,
        ).run(now(), JSON.stringify(recordIds)).changes;
      }),

    recoverInFlight: (fileIds) =>
      op('recoverInFlight', () => {
        const ts = now();
        const info = fileIds
          ? stmt(`UPDATE records SET status = 'in_doubt', updated_at = ? WHERE status = 'sending' AND file_id IN (SELECT value FROM json_each(?))`).run(
              ts,
              JSON.stringify(fileIds),
            )
          : stmt(`UPDATE records SET status = 'in_doubt', updated_at = ? WHERE status = 'sending'`).run(ts);
        return info.changes;
      }),

    findLatest: (target, key, options) =>
      op('findLatest', () => {
        const exclude = options?.excludeFileId;
        const r = stmt(
          `SELECT * FROM records WHERE target = ? AND key = ? AND status IN ('sent', 'rejected', 'failed', 'held')${exclude !== undefined ? ' AND file_id <> ?' : ''}
           ORDER BY id DESC LIMIT 1`,
        ).get(...(exclude !== undefined ? [target, key, exclude] : [target, key])) as SqliteRecordRow | undefined;
        return r ? fromSqlite(r) : undefined;
      }),

    findRecordByWmsId: (wmsId) =>
      op('findRecordByWmsId', () => {
        const r = stmt('SELECT * FROM records WHERE wms_id = ? ORDER BY id DESC LIMIT 1').get(wmsId) as SqliteRecordRow | undefined;
        return r ? fromSqlite(r) : undefined;
      }),

    getXref: (resource, key) =>
      op('getXref', () => {
        const r = stmt('SELECT * FROM xref WHERE resource = ? AND key = ?').get(resource, key) as XrefDbRow | undefined;
        return r ? toXref(r) : undefined;
      }),

    putXref: (resource, key, wmsId, payloadHash) => queuedWrite('putXref', resource, key, wmsId, payloadHash),

    deleteXref: (resource, key) => queuedWrite('deleteXref', resource, key),

    // group-committed with the settle and the xref of the same record (no extra commit per record)
    putXrefFields: (resource, key, fields) => queuedWrite('putXrefFields', resource, key, fields),

    findXrefByField: (resource, field, value) =>
      op('findXrefByField', () => {
        const r = stmt(
          'SELECT x.* FROM xref_field f JOIN xref x ON x.resource = f.resource AND x.key = f.key WHERE f.resource = ? AND f.field = ? AND f.value = ? ORDER BY f.updated_at DESC, x.updated_at DESC LIMIT 1',
        ).get(resource, field, value) as XrefDbRow | undefined;
        return r ? toXref(r) : undefined;
      }),

    getMeta: (key) =>
      op('getMeta', () => (stmt('SELECT value FROM meta WHERE key = ?').get(key) as { value: string } | undefined)?.value),

    setMeta: (key, value) =>
      op('setMeta', () => {
        stmt('INSERT INTO meta (key, value) VALUES (?, ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value').run(key, value);
      }),

    compareAndSetMeta: (key, expected, value) =>
      op('compareAndSetMeta', () => {
        const info =
          expected === null
            ? stmt('INSERT INTO meta (key, value) VALUES (?, ?) ON CONFLICT (key) DO NOTHING').run(key, value)
            : stmt('UPDATE meta SET value = ? WHERE key = ? AND value = ?').run(value, key, expected);
        return info.changes === 1;
      }),

    // group-committed like the send loop's writes: concurrent webhooks share one fsync, and each answer
    // still waits for its own event to be committed
    addWebhookEvent: (event) => queuedWrite('addWebhookEvent', event),

    listWebhookEvents: (query) =>
      op('listWebhookEvents', () => {
        const conds: string[] = [];
        const params: number[] = [];
        if (query.undeliveredOnly) conds.push('delivered_at IS NULL');
        if (query.afterId !== undefined) {
          conds.push('id > ?');
          params.push(query.afterId);
        }
        const where = conds.length ? `WHERE ${conds.join(' AND ')}` : '';
        const limit = query.limit !== undefined ? ' LIMIT ?' : '';
        if (query.limit !== undefined) params.push(query.limit);
        return (stmt(`SELECT * FROM webhook_events ${where} ORDER BY id${limit}`).all(...params) as WebhookDbRow[]).map(toWebhook);
      }),

    markWebhookDelivered: (ids) =>
      op('markWebhookDelivered', () => {
        if (ids.length === 0) return;
        stmt('UPDATE webhook_events SET delivered_at = ? WHERE delivered_at IS NULL AND id IN (SELECT value FROM json_each(?))').run(now(), JSON.stringify(ids));
      }),

    writeStats: () => writes.stats(),

    warmUp: async () => {
      if (closed) return;
      // the thread is otherwise started by the first queued write, which then waits for it (100-300 ms)
      if (options.writer === 'thread' && !writer) writer = startWriterThread({ path: options.path, synchronous: options.synchronous, busyTimeoutMs: options.busyTimeoutMs });
      if (writer) await writer.submit([]);
    },

    close: async () => {
      if (closed) return;
      // writes already queued commit before the database closes
      closed = true;
      await writes.drain();
      if (writer) await writer.close();
      // leader locks end with their holder, as a PostgreSQL session lock ends with its connection
      const held = leaderLocks.get(lockKey);
      for (const name of ownLocks) held?.delete(name);
      ownLocks.clear();
      stmt.clear();
      db.close();
    },
  };
  return journal;
}
