/**
 * The journal: wmsbridge's durable state. One interface, several stores: SQLite (embedded default,
 * src/journal/sqlite.ts), PostgreSQL (several instances sharing work) and in memory (unit tests, memory.ts).
 * Every method is async so a networked store fits behind the same interface. Every store passes
 * test/contract/journal.test.ts. The interface is made of roles (FileLedger, Leases, RecordQueue, RecordClaims,
 * CrossReference, MetaStore, WebhookInbox, JournalUpkeep): a consumer takes the ones it uses, `Journal` is them all.
 */
import type { LatencySnapshot } from '../shared/latency.js';
import type { JournaledRecord, KeptRawRow, RawRow } from '../shared/record-model.js';
import { ORDER_TARGETS, type Target, type RefResource } from '../wms/targets.js';
import type { Reason } from '../shared/reason.js';

export type FileStatus =
  | 'claimed' // moved into the working folder, not fully mapped yet
  | 'mapped' // every row is in the journal as a record or a reject
  | 'done' // every record settled, original archived
  | 'error' // the file as a whole could not be processed, original in the error folder
  | 'duplicate'; // same content as an earlier file: not processed again

export interface FileRow {
  id: number;
  channel: string;
  /** file name as dropped */
  name: string;
  /** where the original is now (working folder, archive or error folder) */
  path: string;
  size: number;
  sha256: string;
  status: FileStatus;
  /** the file this one duplicates, when status is 'duplicate' */
  duplicateOf: number | null;
  error: string | null;
  /** id of the run that processed it */
  runId: string | null;
  /** claim owner (instance id) and lease expiry, for shared stores */
  owner: string | null;
  leaseUntil: string | null;
  createdAt: string;
  updatedAt: string;
}

export type RecordStatus =
  | 'pending' // mapped, not sent yet
  | 'sending' // a request is (or was, at a crash) in flight
  | 'sent' // settled with outcome created / updated / unchanged
  | 'rejected' // refused by validation or by the WMS (4xx): fix the data
  | 'failed' // gave up after retries (network, 5xx): can be retried
  | 'held' // not sent: a dependency failed, or in-doubt without read-back under the 'hold' policy
  | 'in_doubt'; // a send whose outcome is unknown (crash in flight), not settled yet

/**
 * 'no-change': a valid operation the WMS applied to nothing (stock lock/unlock answered stocksLocked 0: already
 * in that status, or nothing matched), delivered, shown as a warning with the WMS's reason.
 * 'already-existed': a create the WMS refused because its natural key exists (evidence of an earlier delivery).
 */
export type RecordOutcome = 'created' | 'updated' | 'unchanged' | 'already-existed' | 'deleted' | 'no-change' | 'rejected' | 'failed' | 'held' | 'in-doubt';

/**
 * A source row as the journal keeps it: where it was (line, lineEnd), its cells and its text (what the rejects file
 * and the report's originals are written from), the record type of a fixed-width or XML row. Not its fields by
 * column name (RawRow.fields): the mapping read them, nothing reads them back, and they held each row a third
 * time (a fifth of a category record's bytes). Rows journaled by wmsbridge before 2026-11-27 carry them too.
 */
export type StoredRawRow = KeptRawRow & { fields?: RawRow['fields'] };

/** A record to journal: its fields are the record model's (shared/record-model.ts JournaledRecord), which map/ makes. */
export interface NewRecord extends JournaledRecord {
  target: Target;
  /**
   * the source row(s) as read, so a record refused at send time (lookup not found, WMS validation)
   * can still be written to the rejects file in the original format
   */
  raw?: StoredRawRow[];
}

export interface RecordRow extends Omit<NewRecord, 'status' | 'error' | 'reason'> {
  id: number;
  fileId: number;
  status: RecordStatus;
  outcome: RecordOutcome | null;
  wmsId: string | null;
  error: string | null;
  reason?: Reason;
  attempts: number;
  updatedAt: string;
}

export interface RecordQuery {
  fileIds?: number[];
  targets?: Target[];
  statuses?: RecordStatus[];
  /** only records with id > afterId (keyset paging) */
  afterId?: number;
  limit?: number;
  /**
   * the rows come without `raw` (the source rows as read, kept for the rejects file): the send loop never reads
   * them, and parsing them was a quarter of what it allocated per record (issue 19)
   */
  withoutRaw?: boolean;
}

export interface RecordResult {
  status: Exclude<RecordStatus, 'pending' | 'sending'>;
  outcome: RecordOutcome;
  wmsId?: string | null;
  error?: string | null;
  /** the error as a stable code and its parameters (the English `error` stays for logs and machines) */
  reason?: Reason | null;
}

/**
 * The targets whose records a webhook links to by WMS id (webhook/event.ts LINK_FIELDS): the documents with an
 * `order` rule in the target registry (purchase orders and picking lists). Both journals index records by WMS id
 * for these targets only (their migration 6, whose SQL names them from this list): a UUID index over every created
 * record put each record's id on a random page of it, 30 % of what a run of master data wrote to disk (issue 19).
 * A new target with an `order` rule needs a migration that rebuilds that index on journals migrated before it
 * (until then the link query, which names the new list, is answered without the index: correct, slower).
 */
export const WEBHOOK_LINK_TARGETS: readonly Target[] = ORDER_TARGETS;

export interface XrefEntry {
  resource: RefResource;
  key: string;
  wmsId: string;
  /** hash of the last payload sent for this key: an identical payload later is 'unchanged' */
  payloadHash: string | null;
  updatedAt: string;
}

export interface WebhookEventRow {
  id: number;
  /** dedup key: the event id when the payload has one, else sha256 of kind + body */
  dedupKey: string;
  kind: string;
  receivedAt: string;
  body: string;
  /** set when written to outbox */
  deliveredAt: string | null;
  /** linked record (a webhook about a document wmsbridge sent) */
  recordId: number | null;
}

/** What storing a webhook event answers: whether this call stored it (false: its dedupKey was stored before), the row's id and its link. */
export interface WebhookEventStored {
  stored: boolean;
  id: number;
  recordId: number | null;
}

export interface NewFile {
  channel: string;
  name: string;
  path: string;
  size: number;
  sha256: string;
  runId: string;
  force?: boolean;
  /** instance id of the claimer: the new row is leased to it */
  owner?: string;
  /**
   * lease length from now (ms) when `owner` is given; without it the owner holds the file until it
   * releases it (no expiry: only for single-instance stores)
   */
  leaseTtlMs?: number;
}

/** A held leader lock (see Journal.tryLeaderLock). */
export interface LeaderLock {
  /**
   * False once the lock is released, its journal closed, or (PostgreSQL) the connection holding it
   * was lost: the server then frees the lock and another instance may take it. Check it before each
   * step of long work done under the lock.
   */
  isHeld(): boolean;
  /** Gives the lock up; idempotent. */
  release(): Promise<void>;
}

/** A delivered record's cross-reference, written with its settle (Journal.settle). */
export interface SettleXref {
  resource: RefResource;
  key: string;
  wmsId: string;
  payloadHash: string | null;
  /** the identifying fields stored for (resource, key), replacing the earlier ones; none: left alone */
  fields: ReadonlyArray<readonly [string, string]>;
}

/**
 * How the send loop's group-committed writes (markSending, settle, putXref, deleteXref, addWebhookEvent on
 * SQLite) went in this process: batches, writes, and each batch's commit latency (submitted to committed,
 * the writer thread's or the database's round trip included). A slow disk or database shows here first.
 */
/** Bucket bounds (ms) of JournalWriteStats.commit */
export const COMMIT_BUCKETS_MS: readonly number[] = [0.5, 1, 2, 5, 10, 25, 50, 100, 250, 1000, 5000];

export interface JournalWriteStats {
  batches: number;
  writes: number;
  /** transactions the batches committed in, when the store merges the batches waiting for it (SQLite's writer thread) */
  transactions?: number;
  commit: LatencySnapshot;
}

/** The files the journal knows: one row per file claimed, its status, where its original is now. */
export interface FileLedger {
  /**
   * Registers a claimed file. If a file with the same sha256 was already processed (status done,
   * mapped or claimed) and `force` is false, the new row gets status 'duplicate' and duplicateOf.
   * With `owner` (and `leaseTtlMs`) the row is created already leased to its claimer, so no other
   * instance can resume it between the insert and a first acquireFileLease.
   */
  addFile(file: NewFile): Promise<FileRow>;
  getFile(id: number): Promise<FileRow | undefined>;
  listFiles(query?: { statuses?: FileStatus[]; channel?: string; runId?: string }): Promise<FileRow[]>;
  /**
   * Every file of the journal counted by status, every status present (0 when none): `watch`'s /metrics at each
   * scrape and `status`. One pass over the status index, not every file's row (listFiles read 50,000 rows in 200 ms
   * on the event loop for a gauge).
   */
  countFiles(): Promise<Record<FileStatus, number>>;
  updateFile(id: number, patch: Partial<Pick<FileRow, 'status' | 'path' | 'error' | 'runId' | 'owner' | 'leaseUntil'>>): Promise<void>;
}

/** Leases: several instances sharing one store (a file's claim, the leader of a scheduled job). */
export interface Leases {
  /**
   * Takes (or extends) the lease of a file for `owner` for `ttlMs` from now. Atomic: succeeds only if
   * the file has no owner, is already owned by `owner`, or its lease expired; returns false when
   * another owner holds a live lease. Throws a JournalError when the file does not exist. Lease
   * times are the store's clock (PostgreSQL: the server's), so instances' clocks need not agree.
   */
  acquireFileLease(fileId: number, owner: string, ttlMs: number): Promise<boolean>;
  /**
   * Extends to now + `ttlMs` the lease of every file `owner` holds in status claimed or mapped, and its claims
   * on records still pending or sending (claimRecordBatch)
   * (call it well within the ttl, e.g. every ttl/3). Returns how many file leases were extended; a file
   * another owner took after this owner's lease expired is not counted (it is no longer held).
   */
  renewLeases(owner: string, ttlMs: number): Promise<number>;
  /** Gives up a file's lease if `owner` holds it (owner and leaseUntil become null); else a no-op. */
  releaseFileLease(fileId: number, owner: string): Promise<void>;
  /**
   * Files in status claimed or mapped that `owner` may resume: unowned, owned by `owner`, or whose
   * lease expired. Ordered by id. Resuming one still needs acquireFileLease (another instance may
   * race for it).
   */
  listResumableFiles(owner: string): Promise<FileRow[]>;
  /**
   * Tries to become the leader for `name` (e.g. 'pull:inventory', so a scheduled pull runs once per
   * schedule across the cluster). Returns null at once when another holder has it. The lock is held
   * until release() or until the journal is closed (PostgreSQL: a session-level advisory lock on a
   * dedicated connection, so it also ends when that connection or the instance dies). SQLite: one
   * process per state folder already; the lock is exclusive among the journal objects of this
   * process on the same database file.
   */
  tryLeaderLock(name: string): Promise<LeaderLock | null>;
}

/**
 * The records mapped from the files, their status from pending to settled, and the send loop's writes (mark before
 * send, settle after).
 */
export interface RecordQueue {
  /**
   * Inserts a batch of records for one file in one transaction. Returns the id of the batch's last record
   * (ids grow in batch order; 0 for an empty batch): a file sent while it is still being mapped publishes its
   * records to the sender up to that id.
   */
  addRecords(fileId: number, records: NewRecord[]): Promise<number>;
  /**
   * Removes every record of a file: used when a file that was claimed but not fully mapped (a crash
   * mid-mapping, nothing of it sent yet) is mapped again from the start. With `afterId`, only the file's
   * records above that id (a streamed file's records not yet published to the sender). Refuses (JournalError)
   * when one of the records to remove was sent or is in flight.
   */
  deleteRecords(fileId: number, options?: { afterId?: number }): Promise<void>;
  /** Records matching the query, ordered by id. */
  listRecords(query: RecordQuery): Promise<RecordRow[]>;
  countRecords(query: Omit<RecordQuery, 'afterId' | 'limit'>): Promise<Record<RecordStatus, number>>;
  /**
   * The targets of these files' records in these statuses, each once (any order): the send loop reads only the tiers
   * that have some, instead of scanning the files' records once per tier for targets they do not hold.
   */
  targetsOf(fileIds: number[], statuses: RecordStatus[]): Promise<Target[]>;
  /** Marks a record in flight (status 'sending', attempts + 1) before its request leaves. */
  markSending(recordId: number): Promise<void>;
  /**
   * Settles a record. `xref`: the WMS id it was delivered under, cross-referenced (with its identifying fields) in
   * the same transaction as the settle: one write of the group commit instead of three (putXref, putXrefFields).
   */
  settle(recordId: number, result: RecordResult, xref?: SettleXref): Promise<void>;
  /**
   * Operator decision (`wmsbridge resolve --retry`): puts settled records (held, failed, in_doubt) back
   * to 'pending' so the next push sends them. Returns how many changed. Records already sent are never
   * requeued.
   */
  requeue(recordIds: number[]): Promise<number>;
  /**
   * At start-up: every record left 'sending' by a crash becomes 'in_doubt'. Returns how many. A record another
   * owner holds a live claim on (a helper still sending it, see claimRecordBatch) is left to that owner.
   */
  recoverInFlight(fileIds?: number[]): Promise<number>;
  /**
   * Latest settled record (status sent, rejected, failed or held) for (target, key), optionally in
   * another file than `excludeFileId`: for 'unchanged' detection and reports.
   */
  findLatest(target: Target, key: string, options?: { excludeFileId?: number }): Promise<RecordRow | undefined>;
  /**
   * The latest purchase order or picking list (WEBHOOK_LINK_TARGETS) whose send returned this WMS id: what links a
   * webhook to the file and line it concerns. Records of other targets are not looked up by WMS id (master data:
   * their ids are in the cross-reference, xrefKeysByWmsId).
   */
  findRecordByWmsId(wmsId: string): Promise<RecordRow | undefined>;
  /**
   * Records (in any file) of (target, key) that are not settled yet: status pending, sending or
   * in_doubt. The pipeline uses it to wait for a dependency another instance is still sending instead
   * of calling it "not found".
   */
  countUnsettled(target: Target, key: string): Promise<number>;
  /**
   * true when the group-committed writes (markSending, settle, putXref, ...) commit in the order they were
   * issued: a write is never committed before one issued earlier, so when a write's promise resolves every
   * earlier write has committed (SQLite: one writer applies the batches in turn; PostgreSQL: one batch at a time).
   * The send loop relies on it to hand a record's window place on as soon as its settle is issued (the next record's
   * mark commits with it or after it). Absent or false: no such order (a store committing several batches at once).
   */
  readonly queuedWritesInOrder?: boolean;
}

/** Record batches: several instances sending one file (docs/SCALING.md, "Record batches"). */
export interface RecordClaims {
  /**
   * Claims up to `limit` pending records of these files and targets, in id order, for `owner` for `leaseTtlMs`
   * from now: records nobody holds a live claim on (unclaimed, or whose claim expired; a record `owner` already
   * holds is not returned again, so an owner may claim page after page while it sends the earlier ones). Atomic: two owners never get the same record (PostgreSQL: FOR UPDATE SKIP LOCKED, so racing
   * claimers skip each other's rows instead of waiting). A record that is not pending (in flight, settled, in
   * doubt) is never returned. Claims are renewed by renewLeases (pending and sending records) and given back by
   * releaseRecordClaims; a claim is a lease, not a fence (see acquireFileLease).
   * `afterId`: only records with a greater id (a claimer's cursor: the last id it was handed). Claiming from the
   * start each time walks every record already claimed or sent (quadratic in the file); a record given back or
   * whose claim expired may lie behind the cursor, so claim from 0 once the cursor finds none.
   * The records come without their source rows (`raw`), as the send loop's pages do: it never reads them, and on
   * PostgreSQL they were the largest part of each claim's answer (a claim of 80 records 12.3 -> 11.4 ms).
   * `upTo`: files still being mapped while they are sent (streamed, docs/ARCHITECTURE.md "Streaming"), each with the
   * id of its last published record: only records up to it are claimed (the ones above may still be withdrawn).
   */
  claimRecordBatch(
    fileIds: number[],
    targets: Target[],
    owner: string,
    limit: number,
    leaseTtlMs: number,
    afterId?: number,
    upTo?: ReadonlyMap<number, number>,
  ): Promise<RecordRow[]>;
  /**
   * Gives back the claims `owner` holds on records still pending (the next claimer takes them at once), of these
   * files only when given (one process may run several sends under one owner id). Returns how many.
   */
  releaseRecordClaims(owner: string, fileIds?: number[]): Promise<number>;
  /**
   * Records of these files (and targets) that another owner than `owner` holds a live claim on and has not settled
   * (pending or sending): what a file's owner waits for before its next tier or its result.
   */
  countClaimedByOthers(fileIds: number[], targets: Target[], owner: string): Promise<number>;
  /**
   * Records of these files left 'sending' under a claim that expired (the claimer stopped renewing: it died or
   * lost the database): they become 'in_doubt', unclaimed, as recoverInFlight does after a crash. Returns how many.
   */
  recoverExpiredClaims(fileIds: number[]): Promise<number>;
}

/** The cross-reference of ERP keys to WMS ids. */
export interface CrossReference {
  /**
   * The WMS id wmsbridge learned for (resource, key). An answer may come from the page read ahead (prefetchXrefs);
   * `fresh` asks the store itself: a second look after another instance may have written the key.
   */
  getXref(resource: RefResource, key: string, options?: { fresh?: boolean }): Promise<XrefEntry | undefined>;
  /**
   * Reads the entries of these keys with one query, ahead of their getXref (the send loop, a page of records at a time):
   * getXref answers from them while they are exact (journal/xref-memo.ts says when).
   */
  prefetchXrefs(resource: RefResource, keys: readonly string[]): Promise<void>;
  putXref(resource: RefResource, key: string, wmsId: string, payloadHash: string | null): Promise<void>;
  deleteXref(resource: RefResource, key: string): Promise<void>;
  /**
   * Identifying fields of a record wmsbridge created under `key` (symbol, cnpj, code, codeERP, name: what
   * a lookup's `by` may name), values as src/map/identifiers.ts `matchKey` gives them, so a lookup by any
   * of them finds the record. Replaces the fields stored for (resource, key).
   */
  putXrefFields(resource: RefResource, key: string, fields: ReadonlyArray<readonly [field: string, value: string]>): Promise<void>;
  /** The cross-reference of the record whose `field` was stored with `value` (the most recent one). */
  findXrefByField(resource: RefResource, field: string, value: string): Promise<XrefEntry | undefined>;
  /** Every cross-reference of a resource as WMS id -> ERP key (one read: the stock result files' product labels). */
  xrefKeysByWmsId(resource: RefResource): Promise<Map<string, string>>;
}

/** Key/value (finished inventories exported, schedules' last runs, a file's parse facts, ...). */
export interface MetaStore {
  getMeta(key: string): Promise<string | undefined>;
  setMeta(key: string, value: string): Promise<void>;
  /**
   * Atomic compare-and-set: writes `value` only if the current value is `expected` (`null`: the key
   * must not exist yet). Returns whether it wrote. Lets several instances agree on e.g. a schedule's
   * last run: the one whose CAS succeeds runs it.
   */
  compareAndSetMeta(key: string, expected: string | null, value: string): Promise<boolean>;
}

/** The webhook events received, stored once each, until they are written to the outbox. */
export interface WebhookInbox {
  /**
   * Stores an event once; returns { stored: false } when the dedupKey was seen before. Its link is `recordId`, or
   * else the latest document whose send returned `linkWmsId` (as findRecordByWmsId), looked up in the insert's own
   * transaction; the answer's recordId is the stored row's link (the earlier row's for a resend).
   */
  addWebhookEvent(event: { dedupKey: string; kind: string; body: string; recordId?: number | null; linkWmsId?: string | null }): Promise<WebhookEventStored>;
  /** Events in id order; `afterId` keeps those stored after a given one (reports: what arrived since). */
  listWebhookEvents(query: { undeliveredOnly?: boolean; afterId?: number; limit?: number }): Promise<WebhookEventRow[]>;
  markWebhookDelivered(ids: number[]): Promise<void>;
}

/** The journal as a whole: its name, retention over every role, the group commit's start-up and figures, closing. */
export interface JournalUpkeep {
  /** the store's name for messages: 'sqlite:/path/state/journal.db' or 'postgres://host/db' */
  readonly location: string;
  /**
   * Retention: removes files last updated before `before` whose status is settled (done, error,
   * duplicate) and none of whose records waits for anything (pending, sending, held, in_doubt, failed),
   * with their records, raw text and parse facts (a webhook event's link to such a record is cleared); and the
   * webhook events received before `before` and already delivered to the outbox (an older resend of one is stored
   * again, as a new event). A file goes in transactions of a slice of its records each (SQLite 2,000, PostgreSQL
   * 10,000), the file row last; `signal` aborted: the prune stops after its current slice (a file keeps the records not
   * deleted yet, which the next prune deletes).
   */
  pruneSettled(before: Date, options?: { signal?: AbortSignal }): Promise<{ files: number; records: number; webhookEvents: number }>;
  /**
   * Gets the group-committed writes ready before the first one (SQLite: starts the writer thread and commits an
   * empty batch on it), so a server's first answers do not wait for it (the webhook receiver calls it before it
   * listens). Optional: a journal without such a start-up cost leaves it out.
   */
  warmUp?(): Promise<void>;
  /** Figures of the group-committed writes since the journal was opened (for /metrics and benchmarks). */
  writeStats(): JournalWriteStats;
  close(): Promise<void>;
}

/**
 * The whole journal: every role. Only the composition root (app/context.ts, the CLI commands that open a journal) and
 * journal/ hold it; every other consumer takes the roles it uses (FileLedger, RecordQueue, ...).
 */
export interface Journal extends FileLedger, Leases, RecordQueue, RecordClaims, CrossReference, MetaStore, WebhookInbox, JournalUpkeep {}
