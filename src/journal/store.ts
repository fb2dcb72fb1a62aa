/**
 * What a journal store does: SQL and transactions, nothing else. Every rule (which statuses a query
 * takes, what a transition leads to, when an operation is refused, how writes are batched, how errors
 * are named) lives in policy.ts, above the store; the SQLite (sqlite.ts) and PostgreSQL (postgres.ts)
 * stores only say how a step is written in their dialect and which steps share a transaction, and the
 * in-memory store (memory.ts, for unit tests) does the same steps on maps.
 *
 * A method may return its value or a promise of it (the SQLite store is synchronous) and may throw: the
 * policy names the store and the operation in the error.
 */
import type { RefResource, Target } from '../wms/targets.js';
import type { WriteOutcome } from './group-commit.js';
import type {
  FileRow,
  FileStatus,
  NewFile,
  NewRecord,
  RecordQuery,
  RecordResult,
  RecordRow,
  RecordStatus,
  SettleXref,
  WebhookEventRow,
  WebhookEventStored,
  XrefEntry,
} from './types.js';

export type Awaitable<T> = T | Promise<T>;

/** The send loop's per-record writes, group-committed by the policy (store.commitWrites applies a batch). */
export type JournalWrite =
  | { kind: 'markSending'; recordId: number }
  | { kind: 'settle'; recordId: number; result: RecordResult; xref?: SettleXref | undefined }
  | { kind: 'putXref'; resource: RefResource; key: string; wmsId: string; payloadHash: string | null }
  | { kind: 'deleteXref'; resource: RefResource; key: string }
  | { kind: 'putXrefFields'; resource: RefResource; key: string; fields: ReadonlyArray<readonly [string, string]> }
  | { kind: 'addWebhookEvent'; event: NewWebhookEvent }
  | { kind: 'markWebhookDelivered'; ids: number[] };

export interface NewWebhookEvent {
  dedupKey: string;
  kind: string;
  body: string;
  recordId?: number | null;
  /** without recordId: link to the latest record whose send returned this WMS id, looked up in the insert's transaction */
  linkWmsId?: string | null;
}

/** A record query whose lists are all non-empty (the policy answers an empty list itself). */
export type StoreRecordQuery = Omit<RecordQuery, 'limit'> & { limit?: number };

/** How addFile decides, in the store's transaction, what a new file row is. */
export interface FileInsert {
  file: NewFile;
  /** lease length from now (store clock) when the row is created leased to file.owner; else null */
  leaseTtlMs: number | null;
  /** statuses of an earlier file with the same sha256 that make this one a duplicate; null: never a duplicate */
  duplicateAmong: readonly FileStatus[] | null;
  /** the new row's status, given the earliest such file (null when none) */
  statusFor: (duplicateOf: number | null) => FileStatus;
}

/** What pruneSettled removes, decided by the policy. */
export interface PruneRule {
  before: Date;
  /** settled file statuses */
  fileStatuses: readonly FileStatus[];
  /** a file with a record in one of these still waits for something: kept */
  waitingStatuses: readonly RecordStatus[];
  /** meta keys that belong to a file (removed with it) */
  metaKeysOf: (fileId: number) => string[];
}

/** A leader lock as the store holds it; the policy adds "and the journal is open". */
export interface StoreLeaderLock {
  isHeld(): boolean;
  release(): Promise<void>;
}

/**
 * A leader lock held in this process (the in-memory store; SQLite, whose journals of one process share a file):
 * `held` names the locks taken on the database, `own` those this journal took (given back when it closes).
 */
export function inProcessLeaderLock(held: Set<string>, own: Set<string>, name: string): StoreLeaderLock | null {
  if (held.has(name)) return null;
  held.add(name);
  own.add(name);
  let released = false;
  return {
    isHeld: () => !released,
    release: async () => {
      if (released) return;
      released = true;
      own.delete(name);
      held.delete(name);
    },
  };
}

export interface JournalStore {
  /** the store's name for messages */
  readonly location: string;
  /** batches of the send loop's writes committing at once */
  readonly maxBatchesInFlight: number;
  /** batches of webhook events committing at once, when they are gathered apart (insertWebhookEvents); else maxBatchesInFlight */
  readonly maxEventBatchesInFlight?: number;
  /** whether other processes write to this store (PostgreSQL); SQLite has one process per state folder (the state lock) */
  readonly sharedByProcesses: boolean;
  /**
   * whether the batches commit in the order they were submitted, so a write never commits before one issued
   * earlier (Journal.queuedWritesInOrder): SQLite, whose batches one connection applies in turn (merged or not), and
   * PostgreSQL, which commits one batch at a time
   */
  readonly queuedWritesInOrder: boolean;
  /** transactions the batches committed in, when the store merges batches (SQLite's writer thread) */
  transactions?(): number | undefined;
  /** whether addWebhookEvent goes through the group commit (else insertWebhookEvent is called) */
  readonly groupCommitsWebhookEvents: boolean;

  // files and leases
  insertFile(insert: FileInsert): Awaitable<FileRow>;
  getFile(id: number): Awaitable<FileRow | undefined>;
  listFiles(query: { statuses?: FileStatus[]; channel?: string; runId?: string }): Awaitable<FileRow[]>;
  /** the journal's files counted by status (statuses without a file are left out) */
  countFilesByStatus(): Awaitable<Array<{ status: FileStatus; n: number }>>;
  /** sets the given columns (and updated_at); returns whether the file exists */
  updateFile(id: number, columns: ReadonlyArray<readonly [column: string, value: unknown]>): Awaitable<boolean>;
  /** takes the lease if the file is unowned, owned by `owner`, or its lease expired; returns whether it did */
  takeLease(fileId: number, owner: string, ttlMs: number): Awaitable<boolean>;
  fileExists(fileId: number): Awaitable<boolean>;
  renewLeases(owner: string, ttlMs: number, statuses: readonly FileStatus[]): Awaitable<number>;
  releaseLease(fileId: number, owner: string): Awaitable<void>;
  /** files in `statuses` unowned, owned by `owner`, or whose lease expired, by id */
  listLeasable(owner: string, statuses: readonly FileStatus[]): Awaitable<FileRow[]>;
  tryLeaderLock(name: string): Awaitable<StoreLeaderLock | null>;

  // record claims (several instances sending one file)
  /** one statement: claims up to `limit` records in `statuses` of these files/targets not claimed live by another owner */
  claimRecords(
    fileIds: number[],
    targets: Target[],
    owner: string,
    limit: number,
    ttlMs: number,
    statuses: readonly RecordStatus[],
    afterId: number,
    /** file id -> the id of its last claimable record (files not named: every record) */
    upTo?: ReadonlyMap<number, number>,
  ): Awaitable<RecordRow[]>;
  /** extends the claims `owner` holds on records in `statuses`; returns how many */
  renewRecordClaims(owner: string, ttlMs: number, statuses: readonly RecordStatus[]): Awaitable<number>;
  /** clears the claims `owner` holds on records in `statuses` (of these files when given); returns how many */
  releaseRecordClaims(owner: string, statuses: readonly RecordStatus[], fileIds?: number[]): Awaitable<number>;
  /** records of these files/targets in `statuses` claimed live by another owner than `owner` */
  countClaimedByOthers(fileIds: number[], targets: Target[], owner: string, statuses: readonly RecordStatus[]): Awaitable<number>;
  /** records of these files in `from` whose claim expired become `to`, unclaimed; returns how many */
  moveExpiredClaims(fileIds: number[], from: RecordStatus, to: RecordStatus): Awaitable<number>;

  // records
  countByKey(target: Target, key: string, statuses: readonly RecordStatus[]): Awaitable<number>;
  /** one transaction */
  /** one transaction; returns the id of the last record inserted */
  insertRecords(fileId: number, records: NewRecord[]): Awaitable<number>;
  /**
   * One transaction: counts the file's records (above `afterId`) in another status than `untouched` or with
   * attempts; deletes those records only when there are none. Returns that count.
   */
  deleteUntouchedRecords(fileId: number, untouched: readonly RecordStatus[], afterId: number): Awaitable<number>;
  /**
   * files, their records (webhook links cleared), duplicate links to them, their meta keys: a file as one transaction
   * (PostgreSQL: every file in one), or (SQLite) its records in slices and the file row last
   */
  /** the ids of the files `rule` removes (settled, old, nothing waiting) */
  prunableFiles(rule: PruneRule): Awaitable<number[]>;
  /**
   * One transaction of retention's prune (policy.ts runs them, file by file, until a file is gone or the prune is told
   * to stop): when file `fileId` is still prunable, up to `pruneSliceRecords` of its records go (their webhook events'
   * links cleared), and once fewer were left the file goes too, with its meta and its duplicates' links. `stopped`: the
   * file was no longer prunable (nothing deleted).
   */
  pruneSlice(rule: PruneRule, fileId: number): Awaitable<{ deleted: number; stopped: boolean }>;
  /** records a pruneSlice deletes at most (the store's transaction size for a prune) */
  readonly pruneSliceRecords: number;
  /** webhook events received before `before` and delivered to the outbox; returns how many were deleted */
  pruneWebhookEvents(before: Date, signal?: AbortSignal): Awaitable<number>;
  listRecords(query: StoreRecordQuery): Awaitable<RecordRow[]>;
  countByStatus(query: StoreRecordQuery): Awaitable<Array<{ status: RecordStatus; n: number }>>;
  /** distinct targets of these files' records in these statuses (lists not empty) */
  targetsOf(fileIds: number[], statuses: readonly RecordStatus[]): Awaitable<Target[]>;
  /** records in `from` (among `ids`) become `to` with outcome, error and reason cleared; returns how many */
  resetRecords(ids: number[], from: readonly RecordStatus[], to: RecordStatus): Awaitable<number>;
  /** records in status `from` (of these files, or all) become `to`; returns how many. A record claimed live by an owner is left alone. */
  moveStatus(from: RecordStatus, to: RecordStatus, fileIds?: number[]): Awaitable<number>;
  findLatest(target: Target, key: string, statuses: readonly RecordStatus[], excludeFileId?: number): Awaitable<RecordRow | undefined>;
  findRecordByWmsId(wmsId: string): Awaitable<RecordRow | undefined>;

  // the send loop's writes
  /** applies a batch in one transaction: one outcome per write (a write may fail alone); throws if the batch failed */
  commitWrites(batch: JournalWrite[]): Awaitable<WriteOutcome[]>;

  // cross-reference, meta, webhooks
  getXref(resource: RefResource, key: string): Awaitable<XrefEntry | undefined>;
  /** the entries of these keys that exist (one statement) */
  getXrefs(resource: RefResource, keys: readonly string[]): Awaitable<XrefEntry[]>;
  findXrefByField(resource: RefResource, field: string, value: string): Awaitable<XrefEntry | undefined>;
  xrefKeysByWmsId(resource: RefResource): Awaitable<Map<string, string>>;
  getMeta(key: string): Awaitable<string | undefined>;
  setMeta(key: string, value: string): Awaitable<void>;
  /** writes `value` if the key holds `expected` (null: absent); returns whether it wrote */
  compareAndSetMeta(key: string, expected: string | null, value: string): Awaitable<boolean>;
  insertWebhookEvent(event: NewWebhookEvent): Awaitable<WebhookEventStored>;
  /**
   * Stores a batch of events at once (the policy gathers them like the send loop's writes): one outcome per event,
   * in order, each `{ stored, id, recordId }` as insertWebhookEvent answers; a key twice in the batch is stored once.
   * Used, when present, instead of insertWebhookEvent for stores that do not group-commit events with the send loop.
   */
  insertWebhookEvents?(events: NewWebhookEvent[]): Awaitable<WriteOutcome[]>;
  listWebhookEvents(query: { undeliveredOnly?: boolean; afterId?: number; limit?: number }): Awaitable<WebhookEventRow[]>;
  markWebhookDelivered(ids: number[]): Awaitable<void>;

  /** prepares the write path before the first write (SQLite: starts the writer thread and commits an empty batch) */
  warmUp?(): Promise<void>;
  /** after the policy's last batch committed: ends connections, threads and locks */
  close(): Promise<void>;
}
