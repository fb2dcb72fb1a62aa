/**
 * The embedded journal: one SQLite file (better-sqlite3) in the state folder.
 *
 * - WAL mode, so readers (status, webhooks) never block the writer and a crash never leaves a torn file.
 * - synchronous=FULL by default: with NORMAL a power loss may roll back the last commits, and a lost
 *   'sending' mark turns an in-doubt send into a silent resend. FULL costs one fsync per commit, which
 *   batches (addRecords) amortise; see docs/INTAKE.md for the measured figures.
 * - busy_timeout so a second process (status, webhooks) waits instead of failing on a held write lock.
 * - Schema versioned in `schema_version`; MIGRATIONS are applied in order, each in one transaction.
 * This module is the store: SQL and transactions (synchronous, better-sqlite3); the rules are policy.ts's,
 * whose createJournal makes it the async Journal.
 */
import Database from 'better-sqlite3';
import { chmodSync, existsSync, mkdirSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { setImmediate as yieldToLoop } from 'node:timers/promises';
import { isBridgeError, errorMessage } from '../shared/errors.js';
import { JournalError } from './errors.js';
import {
  recordColumns,
  recordValuesList,
  toFileRow,
  toRecordRowFromText,
  toRecordRowFromValues,
  toWebhook,
  toXref,
  type FileDbRow,
  type RecordDbRow,
  type WebhookDbRow,
  type XrefDbRow,
} from './rows.js';
import {
  applyBatch,
  LINKED_RECORD_ID,
  QUEUED_WRITES,
  statementCache,
  type QueuedWriteOp,
  type QueuedWriteResult,
  type StatementCache,
} from './sqlite-writes.js';
import { startWriterThread, type WriterThread } from './sqlite-writer.js';
import type { WriteOutcome } from './group-commit.js';
import { createJournal, RECORD_STATUSES } from './policy.js';
import { migrationsOf } from './migrations.js';
import {
  inProcessLeaderLock,
  type FileInsert,
  type JournalStore,
  type JournalWrite,
  type NewWebhookEvent,
  type PruneRule,
  type StoreLeaderLock,
  type StoreRecordQuery,
} from './store.js';
import type { FileRow, FileStatus, Journal, NewRecord, RecordRow, RecordStatus, WebhookEventRow, WebhookEventStored, XrefEntry } from './types.js';
import type { RefResource, Target } from '../wms/targets.js';

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

export { RECORD_STATUSES };

const sqlList = (values: readonly string[]): string => values.map((v) => `'${v}'`).join(', ');

/** SQLite's migrations (migrations.ts, the plan both stores share): index i brings the schema from version i to i + 1. */
export const MIGRATIONS: readonly string[] = migrationsOf('sqlite');

export const SCHEMA_VERSION = MIGRATIONS.length;

/** SQLite returns JSON columns as text */
type SqliteRecordRow = RecordDbRow<string>;

const now = (): string => new Date().toISOString();
const later = (ms: number): string => new Date(Date.now() + ms).toISOString();

/**
 * Leader locks held in this process, by database path then name: SQLite has one process per state
 * folder (the state lock), so exclusivity among this process's journal objects is exclusivity.
 */
const leaderLocks = new Map<string, Set<string>>();
let memoryLockSeq = 0;

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
  const store = new SqliteStore(db, location, {
    writer: writerMode,
    path,
    synchronous: options.synchronous ?? 'FULL',
    busyTimeoutMs: options.busyTimeoutMs ?? 10_000,
  });
  return createJournal(store);
}

/** the journal's files by status, counted in the status index: no file row is read (test/e2e/journal-count-files) */
export const COUNT_FILES_BY_STATUS = 'SELECT status, COUNT(*) AS n FROM files INDEXED BY files_by_status GROUP BY status';

/** batches a file journal keeps in flight to its writer thread (merged there into one transaction when they wait) */
const SQLITE_THREAD_BATCHES_IN_FLIGHT = 8;

/** A queued write that failed, as the error it threw (its SQLite code kept). */
function failedWrite(r: Extract<QueuedWriteResult, { ok: false }>): Error {
  return Object.assign(new Error(r.message), { code: r.code });
}

/** A queued write as the writer thread's table names it (sqlite-writes.ts). */
function toQueuedOp(w: JournalWrite): QueuedWriteOp {
  switch (w.kind) {
    case 'markSending':
      return { name: 'markSending', args: [w.recordId] };
    case 'settle':
      return { name: 'settle', args: w.xref ? [w.recordId, w.result, w.xref] : [w.recordId, w.result] };
    case 'putXref':
      return { name: 'putXref', args: [w.resource, w.key, w.wmsId, w.payloadHash] };
    case 'deleteXref':
      return { name: 'deleteXref', args: [w.resource, w.key] };
    case 'putXrefFields':
      return { name: 'putXrefFields', args: [w.resource, w.key, w.fields] };
    case 'addWebhookEvent':
      return { name: 'addWebhookEvent', args: [w.event] };
    case 'markWebhookDelivered':
      return { name: 'markWebhookDelivered', args: [w.ids] };
  }
}

/** `status IN (...)` of a fixed list, inlined (prepared once per list). */
const inList = (values: readonly string[]): string => `(${sqlList(values)})`;

/** records a slice of a journal-wide count (countInSlices): ~3 ms of the event loop */
const COUNT_SLICE = 100_000;
/** records deleted a transaction by retention's prune: a few ms of the event loop, ~40 ms on a cold page cache */
const PRUNE_SLICE = 2_000;

/** The SQLite store: SQL and transactions only (policy.ts decides). */
class SqliteStore implements JournalStore {
  /**
   * Writer thread: several batches in flight, so the thread finds the next ones waiting when a commit ends and
   * merges them into one transaction (sqlite-writer-thread.ts) instead of waiting a round trip to this thread
   * for each. Inline: one at a time, the next one gathers while it commits.
   */
  readonly maxBatchesInFlight: number;
  /** one process per state folder (the state lock) */
  readonly sharedByProcesses = false;
  /** one writer (the thread, or this connection) applies the batches in the order they were submitted */
  readonly queuedWritesInOrder = true;
  readonly groupCommitsWebhookEvents = true;
  /** Prepared statements are cached by SQL text (dynamic queries have a handful of shapes). */
  private readonly stmt: StatementCache & { clear(): void };
  /** statements in raw mode (rows as arrays), by SQL text: a cache of their own, as raw mode is a statement's state */
  private readonly valuesStmt: StatementCache & { clear(): void };
  private writer: WriterThread | null = null;
  /** leader-lock names this store holds (released at close) */
  private readonly ownLocks = new Set<string>();
  /** separate ':memory:' databases must not share leader locks */
  private readonly lockKey: string;

  constructor(
    private readonly db: Database.Database,
    readonly location: string,
    private readonly options: { writer: 'thread' | 'inline'; path: string; synchronous: 'FULL' | 'NORMAL'; busyTimeoutMs: number },
  ) {
    this.stmt = statementCache(db);
    this.valuesStmt = statementCache(db, { raw: true });
    this.maxBatchesInFlight = options.writer === 'thread' ? SQLITE_THREAD_BATCHES_IN_FLIGHT : 1;
    this.lockKey = location === 'sqlite::memory:' ? `${location}#${++memoryLockSeq}` : location;
  }

  // ---- files and leases ------------------------------------------------------------------------

  insertFile(insert: FileInsert): FileRow {
    return this.db
      .transaction((): FileRow => {
        const f = insert.file;
        let duplicateOf: number | null = null;
        if (insert.duplicateAmong) {
          const earlier = this.stmt(`SELECT id FROM files WHERE sha256 = ? AND status IN ${inList(insert.duplicateAmong)} ORDER BY id LIMIT 1`).get(
            f.sha256,
          ) as { id: number } | undefined;
          if (earlier) duplicateOf = earlier.id;
        }
        const ts = now();
        const leaseUntil = insert.leaseTtlMs !== null ? later(insert.leaseTtlMs) : null;
        const info = this.stmt(
          `INSERT INTO files (channel, name, path, size, sha256, status, duplicate_of, run_id, owner, lease_until, created_at, updated_at)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
        ).run(f.channel, f.name, f.path, f.size, f.sha256, insert.statusFor(duplicateOf), duplicateOf, f.runId, f.owner ?? null, leaseUntil, ts, ts);
        return toFileRow(this.stmt('SELECT * FROM files WHERE id = ?').get(info.lastInsertRowid) as FileDbRow);
      })
      .immediate();
  }

  getFile(id: number): FileRow | undefined {
    const r = this.stmt('SELECT * FROM files WHERE id = ?').get(id) as FileDbRow | undefined;
    return r ? toFileRow(r) : undefined;
  }

  countFilesByStatus(): Array<{ status: FileStatus; n: number }> {
    return this.stmt(COUNT_FILES_BY_STATUS).all() as Array<{ status: FileStatus; n: number }>;
  }

  listFiles(query: { statuses?: FileStatus[]; channel?: string; runId?: string }): FileRow[] {
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
    return (this.stmt(`SELECT * FROM files ${where} ORDER BY id`).all(...params) as FileDbRow[]).map(toFileRow);
  }

  updateFile(id: number, columns: ReadonlyArray<readonly [string, unknown]>): boolean {
    const sets = [...columns.map(([col]) => `${col} = ?`), 'updated_at = ?'];
    const info = this.stmt(`UPDATE files SET ${sets.join(', ')} WHERE id = ?`).run(...columns.map(([, v]) => v), now(), id);
    return info.changes > 0;
  }

  takeLease(fileId: number, owner: string, ttlMs: number): boolean {
    const ts = now();
    const info = this.stmt(
      `UPDATE files SET owner = ?, lease_until = ?, updated_at = ?
       WHERE id = ? AND (owner IS NULL OR owner = ? OR lease_until < ?)`,
    ).run(owner, later(ttlMs), ts, fileId, owner, ts);
    return info.changes === 1;
  }

  fileExists(fileId: number): boolean {
    return this.stmt('SELECT id FROM files WHERE id = ?').get(fileId) !== undefined;
  }

  renewLeases(owner: string, ttlMs: number, statuses: readonly FileStatus[]): number {
    return this.stmt(`UPDATE files SET lease_until = ?, updated_at = ? WHERE owner = ? AND status IN ${inList(statuses)}`).run(later(ttlMs), now(), owner)
      .changes;
  }

  releaseLease(fileId: number, owner: string): void {
    this.stmt('UPDATE files SET owner = NULL, lease_until = NULL, updated_at = ? WHERE id = ? AND owner = ?').run(now(), fileId, owner);
  }

  listLeasable(owner: string, statuses: readonly FileStatus[]): FileRow[] {
    const sql = `SELECT * FROM files WHERE status IN ${inList(statuses)} AND (owner IS NULL OR owner = ? OR lease_until < ?) ORDER BY id`;
    return (this.stmt(sql).all(owner, now()) as FileDbRow[]).map(toFileRow);
  }

  /** exclusive among the journal objects of this process on the same database file */
  tryLeaderLock(name: string): StoreLeaderLock | null {
    let held = leaderLocks.get(this.lockKey);
    if (!held) leaderLocks.set(this.lockKey, (held = new Set()));
    return inProcessLeaderLock(held, this.ownLocks, name);
  }

  // ---- records ---------------------------------------------------------------------------------

  countByKey(target: Target, key: string, statuses: readonly RecordStatus[]): number {
    return (this.stmt(`SELECT COUNT(*) AS n FROM records WHERE target = ? AND key = ? AND status IN ${inList(statuses)}`).get(target, key) as { n: number }).n;
  }

  /**
   * On the writer thread when there is one (file journals): the main connection never waits for the write lock
   * the thread holds while the send loop commits (busy_timeout waits with the event loop stopped), and the next
   * batch is mapped while this one commits. ':memory:' journals apply it on their one connection.
   */
  async insertRecords(fileId: number, records: NewRecord[]): Promise<number> {
    const [result] = await this.applyQueued([{ name: 'insertRecords', args: [fileId, records.map(recordColumns), now()] }]);
    if (!result) throw new Error('the writer answered no result');
    if (!result.ok) throw failedWrite(result);
    return result.value as number;
  }

  deleteUntouchedRecords(fileId: number, untouched: readonly RecordStatus[], afterId: number): number {
    return this.db
      .transaction((): number => {
        const touched = this.stmt(
          `SELECT COUNT(*) AS n FROM records WHERE file_id = ? AND id > ? AND (status NOT IN ${inList(untouched)} OR attempts > 0)`,
        ).get(fileId, afterId) as { n: number };
        if (touched.n === 0) this.stmt('DELETE FROM records WHERE file_id = ? AND id > ?').run(fileId, afterId);
        return touched.n;
      })
      .immediate();
  }

  /** the files retention's prune removes (settled, old, nothing waiting) */
  private prunable(rule: PruneRule): string {
    return `SELECT id FROM files f WHERE f.updated_at < ? AND f.status IN ${inList(rule.fileStatuses)}
       AND NOT EXISTS (SELECT 1 FROM records r WHERE r.file_id = f.id AND r.status IN ${inList(rule.waitingStatuses)})`;
  }

  prunableFiles(rule: PruneRule): number[] {
    return (this.stmt(this.prunable(rule)).all(rule.before.toISOString()) as Array<{ id: number }>).map((r) => r.id);
  }

  /** a slice of PRUNE_SLICE records: a few ms of the event loop (policy.ts serves it between slices) */
  readonly pruneSliceRecords = PRUNE_SLICE;

  pruneSlice(rule: PruneRule, id: number): { deleted: number; stopped: boolean } {
    return this.db
      .transaction((): { deleted: number; stopped: boolean } => {
        if (!this.stmt(`${this.prunable(rule)} AND f.id = ?`).get(rule.before.toISOString(), id)) return { deleted: 0, stopped: true };
        const slice = JSON.stringify(
          (this.stmt('SELECT id FROM records INDEXED BY records_by_file WHERE file_id = ? LIMIT ?').all(id, PRUNE_SLICE) as Array<{ id: number }>).map(
            (r) => r.id,
          ),
        );
        this.stmt('UPDATE webhook_events SET record_id = NULL WHERE record_id IN (SELECT value FROM json_each(?))').run(slice);
        const deleted = this.stmt('DELETE FROM records WHERE id IN (SELECT value FROM json_each(?))').run(slice).changes;
        if (deleted < PRUNE_SLICE) {
          this.stmt('UPDATE files SET duplicate_of = NULL WHERE duplicate_of = ?').run(id);
          for (const key of rule.metaKeysOf(id)) this.stmt('DELETE FROM meta WHERE key = ?').run(key);
          this.stmt('DELETE FROM files WHERE id = ?').run(id);
        }
        return { deleted, stopped: false };
      })
      .immediate();
  }

  /**
   * Webhook events received before `before` and delivered, read in id order by slices of PRUNE_SLICE (ids follow the
   * time of arrival): the pass stops at the first slice holding a newer event, so it reads the old events and one
   * slice, never the whole table (received_at has no index: a webhook's insert pays for none).
   */
  async pruneWebhookEvents(before: Date, signal?: AbortSignal): Promise<number> {
    const cutoff = before.toISOString();
    const page = this.stmt('SELECT id, received_at, delivered_at FROM webhook_events WHERE id > ? ORDER BY id LIMIT ?');
    let after = 0;
    let deleted = 0;
    for (;;) {
      const rows = page.all(after, PRUNE_SLICE) as Array<{ id: number; received_at: string; delivered_at: string | null }>;
      const old = rows.filter((r) => r.received_at < cutoff && r.delivered_at !== null).map((r) => r.id);
      if (old.length > 0) {
        deleted += this.db
          .transaction(
            () =>
              this.stmt('DELETE FROM webhook_events WHERE id IN (SELECT value FROM json_each(?)) AND delivered_at IS NOT NULL').run(JSON.stringify(old))
                .changes,
          )
          .immediate();
      }
      if (rows.length < PRUNE_SLICE || rows.some((r) => r.received_at >= cutoff) || signal?.aborted) return deleted;
      after = rows[rows.length - 1]!.id;
      await yieldToLoop();
    }
  }

  /**
   * Several statuses of one file, or of the whole journal, or rare statuses of several files: one index range per
   * (file and) status (sqliteRecordReads), merged in id order. Read as one statement, the statuses were a filter on
   * the file's (or the table's) id order, so asking a fresh 20,000-record file for its rejected, failed and held
   * records walked all 20,000 (55 ms of the main thread before the first request) and the start of every run asked
   * the whole journal for its failed and held ones (440 ms at 1,000,000 records). A page of k statuses reads at
   * most k pages.
   */
  listRecords(query: StoreRecordQuery): RecordRow[] {
    const reads = sqliteRecordReads(query);
    if (reads.length === 1) return this.readRecords(reads[0]!);
    const merged = reads.flatMap((q) => this.readRecords(q)).sort((a, b) => a.id - b.id);
    return query.limit !== undefined ? merged.slice(0, query.limit) : merged;
  }

  private readRecords(query: StoreRecordQuery): RecordRow[] {
    const { sql, params } = recordReadSql(query);
    // rows as arrays (raw mode): no object per row before the RecordRow (the send loop's pages and a file's results)
    return (this.valuesStmt(sql).all(...params) as unknown[][]).map(toRecordRowFromValues);
  }

  targetsOf(fileIds: number[], statuses: readonly RecordStatus[]): Target[] {
    // the (file, status) index: only the records still in those statuses are visited, not every record of the files
    const sql = `SELECT DISTINCT target FROM records INDEXED BY records_by_file_status
       WHERE file_id IN (SELECT value FROM json_each(?)) AND status IN (SELECT value FROM json_each(?))`;
    return (this.stmt(sql).all(JSON.stringify(fileIds), JSON.stringify(statuses)) as Array<{ target: Target }>).map((r) => r.target);
  }

  countByStatus(query: StoreRecordQuery): Array<{ status: RecordStatus; n: number }> | Promise<Array<{ status: RecordStatus; n: number }>> {
    if (!query.fileIds && !query.targets && query.afterId === undefined && query.limit === undefined) {
      return this.countInSlices(query.statuses ?? RECORD_STATUSES);
    }
    const { where, params } = recordWhere(query);
    // counting needs no order: let the planner pick (covering index on file and status)
    return this.stmt(`SELECT status, COUNT(*) AS n FROM records ${where} GROUP BY status`).all(...params) as Array<{ status: RecordStatus; n: number }>;
  }

  /**
   * The whole journal by status (`watch`'s /metrics at each scrape, a run's report): counted by id slices of
   * COUNT_SLICE records, one read transaction each, the event loop served between slices. One GROUP BY over the
   * status index held the loop ~38 ns a record (150 ms at 4 M records, ~0.5 s at 12 M, webhooks and requests
   * waiting); a slice is one range of the (status, id) index a status, ~3 ms, ~30 % less CPU in all. Each record is
   * counted once, in its slice's snapshot; records added after the first slice began are not counted.
   */
  private async countInSlices(statuses: readonly RecordStatus[]): Promise<Array<{ status: RecordStatus; n: number }>> {
    // two queries: MIN and MAX in one SELECT is a scan of the table, each alone one probe of the primary key
    const lo = (this.stmt('SELECT MIN(id) AS id FROM records').get() as { id: number | null }).id;
    const hi = (this.stmt('SELECT MAX(id) AS id FROM records').get() as { id: number | null }).id;
    const totals = new Map<RecordStatus, number>(statuses.map((s) => [s, 0]));
    if (lo === null || hi === null) return [];
    const one = this.stmt('SELECT COUNT(*) AS n FROM records INDEXED BY records_by_status WHERE status = ? AND id > ? AND id <= ?');
    const slice = this.db.transaction((after: number, upTo: number) => {
      for (const s of statuses) totals.set(s, totals.get(s)! + (one.get(s, after, upTo) as { n: number }).n);
    });
    for (let after = lo - 1; after < hi; after += COUNT_SLICE) {
      if (after >= lo) await yieldToLoop();
      slice.deferred(after, Math.min(after + COUNT_SLICE, hi));
    }
    return [...totals].filter(([, n]) => n > 0).map(([status, n]) => ({ status, n }));
  }

  resetRecords(ids: number[], from: readonly RecordStatus[], to: RecordStatus): number {
    return this.stmt(
      `UPDATE records SET status = ?, outcome = NULL, error = NULL, reason = NULL, updated_at = ?
       WHERE status IN ${inList(from)} AND id IN (SELECT value FROM json_each(?))`,
    ).run(to, now(), JSON.stringify(ids)).changes;
  }

  moveStatus(from: RecordStatus, to: RecordStatus, fileIds?: number[]): number {
    const ts = now();
    const sql = `UPDATE records SET status = ?, claim_owner = NULL, claim_until = NULL, updated_at = ?
       WHERE status = ? AND (claim_owner IS NULL OR claim_until < ?)`;
    const info = fileIds
      ? this.stmt(`${sql} AND file_id IN (SELECT value FROM json_each(?))`).run(to, ts, from, ts, JSON.stringify(fileIds))
      : this.stmt(sql).run(to, ts, from, ts);
    return info.changes;
  }

  /** one statement, so atomic against another connection to the file (SQLite has one writer at a time) */
  claimRecords(
    fileIds: number[],
    targets: Target[],
    owner: string,
    limit: number,
    ttlMs: number,
    statuses: readonly RecordStatus[],
    afterId: number,
    upTo?: ReadonlyMap<number, number>,
  ): RecordRow[] {
    const ts = now();
    // a streamed file's bound, looked up by its id in a JSON object (no bound: every record)
    const bounded = upTo ? `AND id <= coalesce(json_extract(?, '$."' || file_id || '"'), ${Number.MAX_SAFE_INTEGER})` : '';
    const params: unknown[] = [owner, later(ttlMs), JSON.stringify(fileIds), JSON.stringify(targets), afterId, ts];
    if (upTo) params.push(JSON.stringify(Object.fromEntries(upTo)));
    const rows = this.stmt(
      `UPDATE records SET claim_owner = ?, claim_until = ?
       WHERE id IN (SELECT id FROM records
         WHERE file_id IN (SELECT value FROM json_each(?)) AND target IN (SELECT value FROM json_each(?)) AND status IN ${inList(statuses)}
           AND id > ? AND (claim_owner IS NULL OR claim_until < ?) ${bounded}
         ORDER BY id LIMIT ?)
       RETURNING ${recordValuesList(true)}`,
    ).all(...params, limit) as SqliteRecordRow[];
    return rows.map(toRecordRowFromText).sort((a, b) => a.id - b.id);
  }

  renewRecordClaims(owner: string, ttlMs: number, statuses: readonly RecordStatus[]): number {
    return this.stmt(`UPDATE records SET claim_until = ? WHERE claim_owner = ? AND status IN ${inList(statuses)}`).run(later(ttlMs), owner).changes;
  }

  releaseRecordClaims(owner: string, statuses: readonly RecordStatus[], fileIds?: number[]): number {
    const sql = `UPDATE records SET claim_owner = NULL, claim_until = NULL WHERE claim_owner = ? AND status IN ${inList(statuses)}`;
    return fileIds
      ? this.stmt(`${sql} AND file_id IN (SELECT value FROM json_each(?))`).run(owner, JSON.stringify(fileIds)).changes
      : this.stmt(sql).run(owner).changes;
  }

  countClaimedByOthers(fileIds: number[], targets: Target[], owner: string, statuses: readonly RecordStatus[]): number {
    const r = this.stmt(
      `SELECT COUNT(*) AS n FROM records
       WHERE file_id IN (SELECT value FROM json_each(?)) AND target IN (SELECT value FROM json_each(?)) AND status IN ${inList(statuses)}
         AND claim_owner IS NOT NULL AND claim_owner <> ? AND claim_until >= ?`,
    ).get(JSON.stringify(fileIds), JSON.stringify(targets), owner, now()) as { n: number };
    return r.n;
  }

  moveExpiredClaims(fileIds: number[], from: RecordStatus, to: RecordStatus): number {
    const ts = now();
    return this.stmt(
      `UPDATE records SET status = ?, claim_owner = NULL, claim_until = NULL, updated_at = ?
       WHERE file_id IN (SELECT value FROM json_each(?)) AND status = ? AND claim_owner IS NOT NULL AND claim_until < ?`,
    ).run(to, ts, JSON.stringify(fileIds), from, ts).changes;
  }

  findLatest(target: Target, key: string, statuses: readonly RecordStatus[], excludeFileId?: number): RecordRow | undefined {
    const exclude = excludeFileId !== undefined;
    const r = this.stmt(
      `SELECT * FROM records WHERE target = ? AND key = ? AND status IN ${inList(statuses)}${exclude ? ' AND file_id <> ?' : ''}
       ORDER BY id DESC LIMIT 1`,
    ).get(...(exclude ? [target, key, excludeFileId] : [target, key])) as SqliteRecordRow | undefined;
    return r ? toRecordRowFromText(r) : undefined;
  }

  findRecordByWmsId(wmsId: string): RecordRow | undefined {
    const r = this.stmt(`SELECT * FROM records WHERE id = (${LINKED_RECORD_ID})`).get(wmsId) as SqliteRecordRow | undefined;
    return r ? toRecordRowFromText(r) : undefined;
  }

  // ---- the send loop's writes ------------------------------------------------------------------

  /**
   * With a writer thread (file journals, the default) the batch commits there and never stops the event
   * loop; the thread starts with the first batch.
   */
  async commitWrites(batch: JournalWrite[]): Promise<WriteOutcome[]> {
    const results = await this.applyQueued(batch.map(toQueuedOp));
    return results.map((r) => (r.ok ? r : { ok: false, error: failedWrite(r) }));
  }

  /** Queued writes in one transaction: on the writer thread (file journals, started by the first), else on this connection. */
  private async applyQueued(ops: QueuedWriteOp[]): Promise<QueuedWriteResult[]> {
    const writer = this.startWriter();
    return writer ? writer.submit(ops) : applyBatch(this.db, this.stmt, ops);
  }

  private startWriter(): WriterThread | null {
    if (this.options.writer === 'thread' && !this.writer) {
      const { path, synchronous, busyTimeoutMs } = this.options;
      this.writer = startWriterThread({ path, synchronous, busyTimeoutMs });
    }
    return this.writer;
  }

  transactions(): number | undefined {
    return this.writer?.transactions();
  }

  /** the thread is otherwise started by the first queued write, which then waits for it (100-300 ms) */
  async warmUp(): Promise<void> {
    await this.startWriter()?.submit([]);
  }

  // ---- cross-reference, meta, webhooks ---------------------------------------------------------

  getXref(resource: RefResource, key: string): XrefEntry | undefined {
    const r = this.stmt('SELECT * FROM xref WHERE resource = ? AND key = ?').get(resource, key) as XrefDbRow | undefined;
    return r ? toXref(r) : undefined;
  }

  getXrefs(resource: RefResource, keys: readonly string[]): XrefEntry[] {
    const rows = this.stmt('SELECT * FROM xref WHERE resource = ? AND key IN (SELECT value FROM json_each(?))').all(resource, JSON.stringify(keys));
    return (rows as XrefDbRow[]).map(toXref);
  }

  xrefKeysByWmsId(resource: RefResource): Map<string, string> {
    const rows = this.valuesStmt('SELECT wms_id, key FROM xref WHERE resource = ?').all(resource) as Array<[string, string]>;
    return new Map(rows);
  }

  findXrefByField(resource: RefResource, field: string, value: string): XrefEntry | undefined {
    const r = this.stmt(
      'SELECT x.* FROM xref_field f JOIN xref x ON x.resource = f.resource AND x.key = f.key WHERE f.resource = ? AND f.field = ? AND f.value = ? ORDER BY f.updated_at DESC, x.updated_at DESC LIMIT 1',
    ).get(resource, field, value) as XrefDbRow | undefined;
    return r ? toXref(r) : undefined;
  }

  getMeta(key: string): string | undefined {
    return (this.stmt('SELECT value FROM meta WHERE key = ?').get(key) as { value: string } | undefined)?.value;
  }

  setMeta(key: string, value: string): void {
    this.stmt('INSERT INTO meta (key, value) VALUES (?, ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value').run(key, value);
  }

  compareAndSetMeta(key: string, expected: string | null, value: string): boolean {
    const info =
      expected === null
        ? this.stmt('INSERT INTO meta (key, value) VALUES (?, ?) ON CONFLICT (key) DO NOTHING').run(key, value)
        : this.stmt('UPDATE meta SET value = ? WHERE key = ? AND value = ?').run(value, key, expected);
    return info.changes === 1;
  }

  insertWebhookEvent(event: NewWebhookEvent): WebhookEventStored {
    return QUEUED_WRITES.addWebhookEvent(this.stmt, event);
  }

  listWebhookEvents(query: { undeliveredOnly?: boolean; afterId?: number; limit?: number }): WebhookEventRow[] {
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
    return (this.stmt(`SELECT * FROM webhook_events ${where} ORDER BY id${limit}`).all(...params) as WebhookDbRow[]).map(toWebhook);
  }

  markWebhookDelivered(ids: number[]): void {
    QUEUED_WRITES.markWebhookDelivered(this.stmt, ids);
  }

  async close(): Promise<void> {
    if (this.writer) await this.writer.close();
    // leader locks end with their holder, as a PostgreSQL session lock ends with its connection
    const held = leaderLocks.get(this.lockKey);
    for (const name of this.ownLocks) held?.delete(name);
    this.ownLocks.clear();
    this.stmt.clear();
    this.valuesStmt.clear();
    this.db.close();
  }
}

/**
 * The reads listRecords makes of a query, each answered in id order by one index: several statuses of one file (or
 * of no file in particular) become one read per status, since an index range of (file, status) or (status) is in
 * id order and a list of statuses is not; every status at once is no status condition. Several files keep one read
 * (their id range) for the statuses most of their records have (pending, sent: the send loop's pages); for the
 * others (the send loop's resume read: rejected, failed, held) one read per file and status, so a run of many big
 * files does not walk all their records to find the few that failed (45 ms for 6 files of 20,000 here), up to
 * MAX_SPLIT_READS reads.
 */
function sqliteRecordReads(query: StoreRecordQuery): StoreRecordQuery[] {
  const statuses = query.statuses ? [...new Set(query.statuses)] : undefined;
  const files = query.fileIds ? [...new Set(query.fileIds)] : undefined;
  if (files && files.length > 1) {
    if (!statuses || statuses.some((s) => BULK_STATUSES.has(s)) || files.length * statuses.length > MAX_SPLIT_READS) return [query];
    return files.flatMap((f) => statuses.map((s) => ({ ...query, fileIds: [f], statuses: [s] })));
  }
  if (!statuses || statuses.length < 2) return [query];
  const { statuses: _all, ...rest } = query;
  if (RECORD_STATUSES.every((s) => statuses.includes(s))) return [rest];
  return statuses.map((s) => ({ ...rest, statuses: [s] }));
}
/** the statuses most of a file's records are in (waiting to be sent, or sent): read over the files' id range */
const BULK_STATUSES: ReadonlySet<RecordStatus> = new Set<RecordStatus>(['pending', 'sent']);
const MAX_SPLIT_READS = 64;

/** The statements listRecords runs for a query (one per sqliteRecordReads read), with their parameters. */
export function sqliteListRecordsSql(query: StoreRecordQuery): Array<{ sql: string; params: unknown[] }> {
  return sqliteRecordReads(query).map(recordReadSql);
}

function recordReadSql(query: StoreRecordQuery): { sql: string; params: unknown[] } {
  const { from, where, params } = recordWhere(query);
  const limit = query.limit !== undefined ? ' LIMIT ?' : '';
  if (query.limit !== undefined) params.push(query.limit);
  return { sql: `SELECT ${recordValuesList(query.withoutRaw)} FROM ${from} ${where} ORDER BY id${limit}`, params };
}

/**
 * FROM + WHERE for a record query, chosen so rows come out of an index already in id order: keyset
 * paging (`id > afterId ORDER BY id LIMIT n`) must not sort every remaining row of a 1M-record file
 * for each page. One file (+ one status): the file index; one status: the status index; anything
 * else: the id order itself, bounded by the files' id range. Lists are not empty (the policy answers those).
 */
function recordWhere(q: StoreRecordQuery): { from: string; where: string; params: unknown[] } {
  const conds: string[] = [];
  const params: unknown[] = [];
  const oneFile = q.fileIds?.length === 1;
  const oneStatus = q.statuses?.length === 1;
  let from = 'records NOT INDEXED';
  if (oneFile) {
    from = oneStatus ? 'records INDEXED BY records_by_file_status' : 'records INDEXED BY records_by_file';
    conds.push('file_id = ?');
    params.push(q.fileIds![0]);
  } else if (q.fileIds && q.fileIds.length > 1) {
    conds.push('file_id IN (SELECT value FROM json_each(?))');
    params.push(JSON.stringify(q.fileIds));
    // per-file MIN/MAX by equality: each one is a single index probe. The read's own lower bound (afterId) goes into
    // the same expression: given two lower bounds of the rowid range, SQLite starts the scan at one of them, the
    // files' first id, and every page of the send loop walked the files' records from their start again (a run of
    // 20 files of 1,000 records: 8.5 ms a 200-row page late in the run instead of ~1, 1 s of the run's main thread)
    const lowest = '(SELECT MIN((SELECT MIN(id) FROM records INDEXED BY records_by_file WHERE file_id = f.value)) FROM json_each(?) f)';
    conds.push(
      `id BETWEEN ${q.afterId !== undefined ? `max(${lowest}, ?)` : lowest}` +
        ' AND (SELECT MAX((SELECT MAX(id) FROM records INDEXED BY records_by_file WHERE file_id = f.value)) FROM json_each(?) f)',
    );
    params.push(JSON.stringify(q.fileIds), ...(q.afterId !== undefined ? [q.afterId + 1] : []), JSON.stringify(q.fileIds));
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
