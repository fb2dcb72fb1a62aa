/**
 * The journal's policy, one module above the two stores (store.ts): the state transitions and the
 * statuses each question takes, what a resume does (in-flight records become in doubt), when an operation
 * is refused, the group commit of the send loop's writes, and how an error names the store and the
 * operation. A store (sqlite.ts, postgres.ts) is only SQL and transactions; createJournal turns one into the
 * Journal every caller uses (types.ts).
 */
import { setImmediate as yieldToLoop } from 'node:timers/promises';
import { isBridgeError, errorMessage } from '../shared/errors.js';
import { JournalError } from './errors.js';
import type { RefResource } from '../wms/targets.js';
import { createXrefMemo, LOCAL_MAX_AGE_MS, SHARED_MAX_AGE_MS } from './xref-memo.js';
import { createGroupCommit, type WriteOutcome } from './group-commit.js';
import type { JournalStore, JournalWrite, NewWebhookEvent, PruneRule, StoreRecordQuery } from './store.js';
import type { FileRow, FileStatus, Journal, JournalWriteStats, LeaderLock, RecordQuery, RecordStatus } from './types.js';

export const RECORD_STATUSES: readonly RecordStatus[] = ['pending', 'sending', 'sent', 'rejected', 'failed', 'held', 'in_doubt'];
export const FILE_STATUSES: readonly FileStatus[] = ['claimed', 'mapped', 'done', 'error', 'duplicate'];

/** Statuses of an earlier file that make a new file with the same content a duplicate. */
export const DUPLICATE_OF_STATUSES: readonly FileStatus[] = ['claimed', 'mapped', 'done'];
/** Statuses of a file that is being worked on: leases matter only for these. */
export const LEASED_STATUSES: readonly FileStatus[] = ['claimed', 'mapped'];
/** Statuses of a record that is not settled yet (see Journal.countUnsettled). */
export const UNSETTLED_STATUSES: readonly RecordStatus[] = ['pending', 'sending', 'in_doubt'];
/** Records a claim covers while it matters (claimRecordBatch): not sent yet, or in flight. */
export const CLAIMED_STATUSES: readonly RecordStatus[] = ['pending', 'sending'];
/** What claimRecordBatch hands out: records not sent yet (never one in flight, settled or in doubt). */
export const CLAIMABLE_STATUSES: readonly RecordStatus[] = ['pending'];
/** Settled statuses findLatest looks at. */
export const SETTLED_STATUSES: readonly RecordStatus[] = ['sent', 'rejected', 'failed', 'held'];
/** What an operator's retry puts back to pending (a sent record is never requeued). */
export const REQUEUABLE_STATUSES: readonly RecordStatus[] = ['held', 'failed', 'in_doubt'];
/** A record that never left the building (no attempt either): a file of only these can be re-mapped. */
export const UNTOUCHED_STATUSES: readonly RecordStatus[] = ['pending', 'rejected'];
/** Retention: settled files ... */
export const PRUNABLE_FILE_STATUSES: readonly FileStatus[] = ['done', 'error', 'duplicate'];
/** ... none of whose records waits for anything. */
export const WAITING_STATUSES: readonly RecordStatus[] = ['pending', 'sending', 'held', 'in_doubt', 'failed'];

/**
 * The meta keys that belong to one file, each built here only: what the rejects writer needs of its parse (header
 * cells, newline), where a streamed file's mapping stands (its resume point), which owner shares its records.
 */
export const FILE_META = {
  parseFacts: (fileId: number): string => `parse-facts:${fileId}`,
  stream: (fileId: number): string => `stream:${fileId}`,
  /**
   * the targets of the records the mapping produced (a JSON array), written when the file is mapped: what the send
   * loop reads instead of every record of the file (a fresh file's records are not in the reader's cache yet: 80 ms
   * for 20,000 records before the first request, against one row)
   */
  targets: (fileId: number): string => `targets:${fileId}`,
  /** rows read and not sent (not selected by any mapping, excluded by a skip rule): map/unsent.ts UnsentRows as JSON */
  unsent: (fileId: number): string => `unsent:${fileId}`,
  /**
   * a stock sync file with rejected rows is sent without them (push/stock-sync.ts): who decided and when, as JSON
   * ({by, at}); `by` is "mapping <name>" (its onRejected: sendValid) or "operator <user>" (`wmsbridge resolve --send-valid`)
   */
  sendValid: (fileId: number): string => `send-valid:${fileId}`,
  /**
   * its value is the owner: other instances may send claimed batches of the file while that owner holds it (never of
   * a streamed file, nor of one whose owner runs a wmsbridge that does not claim: they would send the same records)
   */
  share: (fileId: number): string => `share:${fileId}`,
} as const;

/** Meta keys that belong to one file (removed with it). */
export const fileMetaKeys = (fileId: number): string[] => Object.values(FILE_META).map((key) => key(fileId));

/** The columns of an updateFile patch (keys given as undefined are left alone). */
const FILE_PATCH_COLUMNS: Record<string, string> = {
  status: 'status',
  path: 'path',
  error: 'error',
  runId: 'run_id',
  owner: 'owner',
  leaseUntil: 'lease_until',
};

/** The journal's state, shared by its sections. */
interface Ctx {
  store: JournalStore;
  location: string;
  isClosed: () => boolean;
  /** runs one operation; names the store and the operation in any error */
  op: <T>(name: string, fn: () => T | Promise<T>) => Promise<T>;
  fail: (name: string, message: string) => JournalError;
}

/** Wraps a store in the journal's policy. */
export function createJournal(store: JournalStore): Journal {
  const location = store.location;
  let closed = false;

  const wrap = (name: string, err: unknown): Error =>
    isBridgeError(err) ? err : new JournalError(`journal ${location}: ${name}: ${errorMessage(err)}`, { cause: err });
  const fail = (name: string, message: string): JournalError => new JournalError(`journal ${location}: ${name}: ${message}`);

  async function op<T>(name: string, fn: () => T | Promise<T>): Promise<T> {
    if (closed) throw fail(name, 'the journal is closed');
    try {
      return await fn();
    } catch (err) {
      throw wrap(name, err);
    }
  }

  /**
   * Group commit for the per-record writes of the send loop (markSending, settle, putXref...): the writes
   * issued while the store's batches are committing are applied in ONE transaction, so one commit (one
   * fsync) serves all the records in flight instead of one each. Each caller's promise resolves only after
   * its commit: a 'sending' mark is durable before its request leaves. A write that throws fails alone.
   */
  const writes = createGroupCommit<JournalWrite>({
    maxInFlight: store.maxBatchesInFlight,
    commit: async (batch): Promise<WriteOutcome[]> => {
      let outcomes: WriteOutcome[];
      try {
        outcomes = await store.commitWrites(batch);
      } catch (err) {
        return batch.map((w) => ({ ok: false, error: wrap(w.kind, err) }));
      }
      return outcomes.map((o, i) => (o.ok ? o : { ok: false, error: wrap(batch[i]!.kind, o.error) }));
    },
  });
  /**
   * PostgreSQL: the webhook events issued while the store's batches are committing are stored by ONE statement
   * (store.insertWebhookEvents), apart from the send loop's transactions; each answer still waits for its own commit.
   */
  const insertEvents = store.insertWebhookEvents?.bind(store);
  const events = insertEvents
    ? createGroupCommit<NewWebhookEvent>({
        maxInFlight: store.maxEventBatchesInFlight ?? store.maxBatchesInFlight,
        commit: async (batch): Promise<WriteOutcome[]> => {
          let outcomes: WriteOutcome[];
          try {
            outcomes = await insertEvents(batch);
          } catch (err) {
            return batch.map(() => ({ ok: false, error: wrap('addWebhookEvent', err) }));
          }
          return outcomes.map((o) => (o.ok ? o : { ok: false, error: wrap('addWebhookEvent', o.error) }));
        },
      })
    : null;
  const queued = <T>(w: JournalWrite): Promise<T> => (closed ? Promise.reject(fail(w.kind, 'the journal is closed')) : (writes.add(w) as Promise<T>));

  const ctx: Ctx = { store, location, isClosed: () => closed, op, fail };
  // the send loop's cross-reference reads, a page at a time (xref-memo.ts); this journal's xref writes keep it exact
  const memo = createXrefMemo({ maxAgeMs: store.sharedByProcesses ? SHARED_MAX_AGE_MS : LOCAL_MAX_AGE_MS });
  const xrefWrite = (resource: RefResource, key: string, w: JournalWrite): Promise<void> => {
    const done = memo.writing(resource, key);
    return queued<void>(w).finally(done);
  };
  return {
    location,
    ...fileSection(ctx),
    ...recordSection(ctx),
    markSending: (recordId) => queued({ kind: 'markSending', recordId }),
    settle: (recordId, result, xref) =>
      xref ? xrefWrite(xref.resource, xref.key, { kind: 'settle', recordId, result, xref }) : queued({ kind: 'settle', recordId, result }),
    putXref: (resource, key, wmsId, payloadHash) => xrefWrite(resource, key, { kind: 'putXref', resource, key, wmsId, payloadHash }),
    deleteXref: (resource, key) => xrefWrite(resource, key, { kind: 'deleteXref', resource, key }),
    // group-committed with the settle and the xref of the same record (no extra commit per record)
    putXrefFields: (resource, key, fields) => queued({ kind: 'putXrefFields', resource, key, fields }),
    // SQLite: group-committed like the send loop's writes, so concurrent webhooks share one fsync, and each
    // answer still waits for its own event to be committed
    addWebhookEvent: (event) => {
      if (store.groupCommitsWebhookEvents) return queued({ kind: 'addWebhookEvent', event });
      if (!events) return op('addWebhookEvent', () => store.insertWebhookEvent(event));
      return closed ? Promise.reject(fail('addWebhookEvent', 'the journal is closed')) : (events.add(event) as ReturnType<Journal['addWebhookEvent']>);
    },
    ...lookupSection(ctx),
    getXref: (resource, key, options) =>
      op('getXref', () => {
        const ahead = options?.fresh ? null : memo.lookup(resource, key);
        return ahead ? ahead.entry : store.getXref(resource, key);
      }),
    prefetchXrefs: (resource, keys) => op('prefetchXrefs', () => memo.prefetch(resource, keys, async (ks) => await store.getXrefs(resource, ks))),
    // SQLite: the outbox flush's mark goes to the writer thread with the events, so the receiver's event loop never
    // waits (busy_timeout, synchronously) for the write lock the thread holds while it commits
    ...(store.groupCommitsWebhookEvents
      ? {
          markWebhookDelivered: (ids: number[]) =>
            ids.length === 0 ? op('markWebhookDelivered', () => undefined) : queued<void>({ kind: 'markWebhookDelivered', ids }),
        }
      : {}),
    writeStats: () => {
      const transactions = store.transactions?.();
      const stats = events ? mergeWriteStats(writes.stats(), events.stats()) : writes.stats();
      return { ...stats, ...(transactions !== undefined ? { transactions } : {}) };
    },
    // the store says whether its batches commit in the order they were submitted (SQLite: one writer, in order)
    queuedWritesInOrder: store.queuedWritesInOrder,
    warmUp: async () => {
      if (closed) return;
      await store.warmUp?.();
    },
    close: async () => {
      if (closed) return;
      closed = true;
      await writes.drain(); // writes already issued commit before the store closes
      await events?.drain();
      await store.close();
    },
  };
}

/** the send loop's writes and the webhook events gathered apart (PostgreSQL), as one figure */
function mergeWriteStats(a: JournalWriteStats, b: JournalWriteStats): JournalWriteStats {
  return {
    batches: a.batches + b.batches,
    writes: a.writes + b.writes,
    commit: {
      bucketsMs: a.commit.bucketsMs,
      counts: a.commit.counts.map((n, i) => n + (b.commit.counts[i] ?? 0)),
      sumMs: a.commit.sumMs + b.commit.sumMs,
      count: a.commit.count + b.commit.count,
      maxMs: Math.max(a.commit.maxMs, b.commit.maxMs),
    },
  };
}

function checkTtl(ctx: Ctx, name: string, ttlMs: number): void {
  if (!Number.isFinite(ttlMs) || ttlMs <= 0) throw ctx.fail(name, `ttlMs must be a positive number of milliseconds, got ${ttlMs}`);
}

type FileMethods = Pick<
  Journal,
  | 'addFile'
  | 'getFile'
  | 'listFiles'
  | 'countFiles'
  | 'updateFile'
  | 'acquireFileLease'
  | 'renewLeases'
  | 'releaseFileLease'
  | 'listResumableFiles'
  | 'tryLeaderLock'
>;

/** Files, leases and leader locks. */
function fileSection(ctx: Ctx): FileMethods {
  const { store, op } = ctx;
  return {
    addFile: (file) =>
      op('addFile', (): FileRow | Promise<FileRow> => {
        const leased = file.owner !== undefined && file.leaseTtlMs !== undefined;
        if (leased) checkTtl(ctx, 'addFile', file.leaseTtlMs as number);
        return store.insertFile({
          file,
          leaseTtlMs: leased ? (file.leaseTtlMs as number) : null,
          duplicateAmong: file.force ? null : DUPLICATE_OF_STATUSES,
          statusFor: (duplicateOf) => (duplicateOf === null ? 'claimed' : 'duplicate'),
        });
      }),
    getFile: (id) => op('getFile', () => store.getFile(id)),
    listFiles: (query = {}) => op('listFiles', () => store.listFiles(query)),
    countFiles: () =>
      op('countFiles', async () => {
        return everyStatus(FILE_STATUSES, await store.countFilesByStatus());
      }),
    updateFile: (id, patch) =>
      op('updateFile', async () => {
        const columns: Array<[string, unknown]> = [];
        for (const [k, col] of Object.entries(FILE_PATCH_COLUMNS)) {
          const v = (patch as Record<string, unknown>)[k];
          if (k in patch && v !== undefined) columns.push([col, v]);
        }
        if (!(await store.updateFile(id, columns))) throw ctx.fail('updateFile', `file ${id} not found`);
      }),
    acquireFileLease: (fileId, owner, ttlMs) =>
      op('acquireFileLease', async () => {
        checkTtl(ctx, 'acquireFileLease', ttlMs);
        if (await store.takeLease(fileId, owner, ttlMs)) return true;
        if (!(await store.fileExists(fileId))) throw ctx.fail('acquireFileLease', `file ${fileId} not found`);
        return false;
      }),
    renewLeases: (owner, ttlMs) =>
      op('renewLeases', async () => {
        checkTtl(ctx, 'renewLeases', ttlMs);
        // the records first: a file's lease never outlives the claims its records are sent under
        await store.renewRecordClaims(owner, ttlMs, CLAIMED_STATUSES);
        return store.renewLeases(owner, ttlMs, LEASED_STATUSES);
      }),
    releaseFileLease: (fileId, owner) => op('releaseFileLease', () => store.releaseLease(fileId, owner)),
    listResumableFiles: (owner) => op('listResumableFiles', () => store.listLeasable(owner, LEASED_STATUSES)),
    tryLeaderLock: (name) =>
      op('tryLeaderLock', async (): Promise<LeaderLock | null> => {
        const lock = await store.tryLeaderLock(name);
        if (!lock) return null;
        if (ctx.isClosed()) {
          // closed while the lock was being taken: a lock nobody can release must not stay held
          await lock.release();
          return null;
        }
        // a lock ends with its journal, as a PostgreSQL session lock ends with its connection
        return { isHeld: () => !ctx.isClosed() && lock.isHeld(), release: () => lock.release() };
      }),
  };
}

type RecordMethods = Pick<
  Journal,
  | 'countUnsettled'
  | 'addRecords'
  | 'deleteRecords'
  | 'pruneSettled'
  | 'listRecords'
  | 'countRecords'
  | 'targetsOf'
  | 'requeue'
  | 'recoverInFlight'
  | 'findLatest'
  | 'findRecordByWmsId'
  | 'claimRecordBatch'
  | 'releaseRecordClaims'
  | 'countClaimedByOthers'
  | 'recoverExpiredClaims'
>;

/** A store's counts by status (statuses without a row left out) with every status present, 0 when none. */
function everyStatus<S extends string>(statuses: readonly S[], rows: ReadonlyArray<{ status: S; n: number }>): Record<S, number> {
  const counts = Object.fromEntries(statuses.map((s) => [s, 0])) as Record<S, number>;
  for (const r of rows) counts[r.status] = r.n;
  return counts;
}

/**
 * Retention's prune, file by file, one transaction a slice of a file's records (JournalStore.pruneSlice), the event
 * loop served between slices: one transaction for everything held SQLite's loop (and its write lock) 13.6 s for a 4
 * M-record file, and on PostgreSQL could not be stopped (SIGTERM) before millions of records were deleted, a kill
 * losing it all. A file goes last, once its records are: a prune stopped half-way (a crash, the journal closed,
 * `signal` aborted: a stopping run or daemon) leaves a file with part of its records, which the next prune finishes.
 */
async function pruneInSlices(store: JournalStore, rule: PruneRule, signal: AbortSignal | undefined): Promise<{ files: number; records: number }> {
  let files = 0;
  let records = 0;
  for (const id of await store.prunableFiles(rule)) {
    for (;;) {
      if (signal?.aborted) return { files, records };
      const step = await store.pruneSlice(rule, id);
      records += step.deleted;
      if (step.stopped) break;
      if (step.deleted < store.pruneSliceRecords) {
        files++;
        break;
      }
      await yieldToLoop();
    }
  }
  return { files, records };
}

/** A query with an empty list matches nothing: the store is not asked. */
const matchesNothing = (q: Omit<RecordQuery, 'afterId' | 'limit'>): boolean => q.fileIds?.length === 0 || q.targets?.length === 0 || q.statuses?.length === 0;

/** Records: batches, transitions, retention and the questions of the send loop. */
function recordSection(ctx: Ctx): RecordMethods {
  const { store, op } = ctx;
  return {
    countUnsettled: (target, key) => op('countUnsettled', () => store.countByKey(target, key, UNSETTLED_STATUSES)),
    addRecords: (fileId, records) => op('addRecords', () => (records.length === 0 ? 0 : store.insertRecords(fileId, records))),
    /**
     * Only a file none of whose records left the building can be re-mapped: a record that was (or may
     * have been) sent must stay, or its outcome would be forgotten.
     */
    deleteRecords: (fileId, options) =>
      op('deleteRecords', async () => {
        const touched = await store.deleteUntouchedRecords(fileId, UNTOUCHED_STATUSES, options?.afterId ?? 0);
        if (touched > 0) {
          throw ctx.fail('deleteRecords', `file ${fileId} has ${touched} record(s) that were sent or are in flight; refusing to delete its records`);
        }
      }),
    pruneSettled: (before, options) =>
      op('pruneSettled', async () => {
        const signal = options?.signal;
        const pruned = await pruneInSlices(
          store,
          { before, fileStatuses: PRUNABLE_FILE_STATUSES, waitingStatuses: WAITING_STATUSES, metaKeysOf: fileMetaKeys },
          signal,
        );
        // an event not delivered yet stays, however old: the outbox has not had it
        return { ...pruned, webhookEvents: signal?.aborted ? 0 : await store.pruneWebhookEvents(before, signal) };
      }),
    listRecords: (query) => op('listRecords', () => (matchesNothing(query) ? [] : store.listRecords(query as StoreRecordQuery))),
    countRecords: (query) =>
      op('countRecords', async () => {
        return everyStatus(RECORD_STATUSES, matchesNothing(query) ? [] : await store.countByStatus(query));
      }),
    targetsOf: (fileIds, statuses) => op('targetsOf', () => (fileIds.length === 0 || statuses.length === 0 ? [] : store.targetsOf(fileIds, statuses))),
    requeue: (recordIds) => op('requeue', () => (recordIds.length === 0 ? 0 : store.resetRecords(recordIds, REQUEUABLE_STATUSES, 'pending'))),
    // what a resume does: a record left 'sending' by a crash may or may not have reached the WMS
    recoverInFlight: (fileIds) => op('recoverInFlight', () => store.moveStatus('sending', 'in_doubt', fileIds)),
    findLatest: (target, key, options) => op('findLatest', () => store.findLatest(target, key, SETTLED_STATUSES, options?.excludeFileId)),
    findRecordByWmsId: (wmsId) => op('findRecordByWmsId', () => store.findRecordByWmsId(wmsId)),
    claimRecordBatch: (fileIds, targets, owner, limit, leaseTtlMs, afterId = 0, upTo) =>
      op('claimRecordBatch', () => {
        checkTtl(ctx, 'claimRecordBatch', leaseTtlMs);
        if (fileIds.length === 0 || targets.length === 0 || limit <= 0) return [];
        const bounds = upTo && fileIds.some((id) => upTo.has(id)) ? upTo : undefined;
        return store.claimRecords(fileIds, targets, owner, Math.floor(limit), leaseTtlMs, CLAIMABLE_STATUSES, afterId, bounds);
      }),
    releaseRecordClaims: (owner, fileIds) =>
      op('releaseRecordClaims', () => (fileIds?.length === 0 ? 0 : store.releaseRecordClaims(owner, CLAIMABLE_STATUSES, fileIds))),
    countClaimedByOthers: (fileIds, targets, owner) =>
      op('countClaimedByOthers', () =>
        fileIds.length === 0 || targets.length === 0 ? 0 : store.countClaimedByOthers(fileIds, targets, owner, CLAIMED_STATUSES),
      ),
    // the claimer of an in-flight record stopped renewing: the send may or may not have reached the WMS
    recoverExpiredClaims: (fileIds) => op('recoverExpiredClaims', () => (fileIds.length === 0 ? 0 : store.moveExpiredClaims(fileIds, 'sending', 'in_doubt'))),
  };
}

type LookupMethods = Pick<
  Journal,
  'findXrefByField' | 'xrefKeysByWmsId' | 'getMeta' | 'setMeta' | 'compareAndSetMeta' | 'listWebhookEvents' | 'markWebhookDelivered'
>;

/** Cross-reference reads, meta, webhook events. */
function lookupSection(ctx: Ctx): LookupMethods {
  const { store, op } = ctx;
  return {
    findXrefByField: (resource, field, value) => op('findXrefByField', () => store.findXrefByField(resource, field, value)),
    xrefKeysByWmsId: (resource) => op('xrefKeysByWmsId', () => store.xrefKeysByWmsId(resource)),
    getMeta: (key) => op('getMeta', () => store.getMeta(key)),
    setMeta: (key, value) => op('setMeta', () => store.setMeta(key, value)),
    compareAndSetMeta: (key, expected, value) => op('compareAndSetMeta', () => store.compareAndSetMeta(key, expected, value)),
    listWebhookEvents: (query) => op('listWebhookEvents', () => store.listWebhookEvents(query)),
    markWebhookDelivered: (ids) => op('markWebhookDelivered', () => (ids.length === 0 ? undefined : store.markWebhookDelivered(ids))),
  };
}
