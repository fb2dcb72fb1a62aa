/**
 * Sending: every pending record of the given files, tier by tier (units, categories, carriers,
 * providers, owners -> families -> products -> documents, factors, stock -> attachments), with limited
 * concurrency. Each send is marked in the journal before its request leaves and settled after, so a
 * crash leaves at most the records of the send window in doubt, never a record sent twice unknowingly.
 *
 * Two limits: `concurrency` bounds the requests in flight to the WMS (the Little's-law resource), and a
 * slightly larger send window bounds the records being prepared (references, validation) or sent, and those
 * answered whose settle has not committed. Every record is marked 'sending' per attempt, inside its request
 * slot, right before its request is written (issue 41: a crash leaves in doubt only what may have reached the
 * WMS, none while the client waits out a Retry-After). A record that resolves itself when in doubt is settled
 * after its slot is released, still inside the window (a crash leaves at most the window in doubt), so the slot
 * does not wait for that commit. When the journal commits its writes in issue order (SQLite), a delivered record
 * hands its window place on as soon as its settle is issued, so the records marked but not settled in the
 * journal are still never more than the window. Documents held when in doubt are settled inside their request
 * slot, so a crash leaves at most `concurrency` of them for a person.
 */
import pLimit from 'p-limit';
import type { Logger } from '../shared/logger.js';
import type { RecordResult, RecordRow, RecordQueue, RecordClaims, CrossReference, MetaStore } from '../journal/types.js';
import { iterate } from '../journal/iterate.js';
import { FILE_META } from '../journal/policy.js';
import type { WmsClient } from '../wms/client-types.js';
import type { WmsError } from '../wms/errors.js';
import { MAX_TIER, SESSION_TARGETS, TARGET_INFO, TARGETS, type Target } from '../wms/targets.js';
import { BridgeError, ErrorCode } from '../shared/errors.js';
import { isWaitingForWms, PushReason } from '../shared/reason.js';
import { createRefResolver, failureKey, type DependencyState, type RunFailures } from './refs.js';
import type { LoadableReferenceCache } from './reference-cache.js';
import { createSequenceGate, touchOf, type Blocker } from './sequence.js';
import { describeError, inDoubtPolicyFor, isWmsUnavailable } from './decide.js';
import { createRecordSender, type PushRun } from './record.js';
import { pushStockSync } from './stock-sync.js';
import type { RecordFeed } from './feed.js';
import { createSendQueue, createWindow, prefetchXrefsOf, sendWindow } from './send-queue.js';
import { sendClaimed, shareableTarget, type ShareOptions } from './share.js';

export interface ChannelPolicy {
  /** the channel's inbox folder (attachments are read from inside it only) */
  inboxDir: string;
  concurrency?: number | undefined;
  inDoubt: { masterData: 'resend' | 'hold'; documents: 'resend' | 'hold' };
  stockSyncChunkSize: number;
}

export interface PushOptions {
  journal: RecordQueue & RecordClaims & CrossReference & MetaStore;
  client: WmsClient;
  refCache: LoadableReferenceCache;
  logger: Logger;
  /** files whose records are sent */
  files: ReadonlyArray<{ id: number; name: string; sha256: string; policy: ChannelPolicy }>;
  /** global concurrency (p-limit) */
  concurrency: number;
  /** records read from the journal per batch */
  batchSize: number;
  /** aborting stops picking new records; in-flight requests finish and are settled */
  signal?: AbortSignal;
  /**
   * how long a record whose dependency is not settled yet (another instance is sending it) waits before
   * it is held; 0 holds it at once (one instance: lower tiers are always settled first)
   */
  dependencyWaitMs?: number;
  onSettled?: (row: RecordRow, result: RecordResult) => void;
  /**
   * The source column(s) a record's field reads, by the record's mapping (CompiledMapping.sourceColumns): a reason
   * naming a field (a reference not found, a schema or WMS refusal) also names the column the person edits.
   */
  sourceColumns?: (mapping: string, field: string) => string | undefined;
  /**
   * files still being mapped while they are sent (feed.ts): a tier is read up to what they published, and
   * waits for their next batch until they can add no more records of it
   */
  feed?: RecordFeed;
  /**
   * A shared journal (docs/SCALING.md, "Record batches"): the records of targets whose order does not matter
   * (shareableTarget) are claimed in batches (claimRecordBatch) instead of read, so other instances may send
   * batches of the same files. The files' owner also sends their in-doubt records and, before each next tier,
   * waits until the records other instances claimed are settled (an instance that stopped renewing its claims:
   * its records in flight become in doubt, and the owner settles them). A helper (`helper`) sends only claimed
   * batches of the tiers it is given and leaves everything else to the owner.
   */
  share?: ShareOptions;
}

export interface PushStats {
  settled: number;
  aborted: boolean;
  /**
   * Set when the WMS was unavailable (no answer, timeouts, 5xx, throttling beyond the retries) for some
   * records: they were not sent and stay pending (their dependants held "waiting for ..."), for the next run.
   */
  wmsUnavailable?: { since: string; lastError: string; requeued: number };
}

/** Authentication refused: no record can be sent; the run stops (exit 2) and records stay pending. */
export class FatalPushError extends BridgeError {
  constructor(message: string, cause: unknown) {
    super(ErrorCode.WMS_AUTH, message, { cause });
    this.name = 'FatalPushError';
  }
}

/** What a record not delivered tells its dependants (from its settled state). */
export function dependencyStateOf(r: Pick<RecordRow, 'status' | 'outcome' | 'error' | 'reason' | 'wmsId'>): DependencyState | null {
  if (r.status === 'held' && isWaitingForWms(r)) return { kind: 'waiting-for-wms', why: 'it waits for a dependency itself' };
  if (r.status !== 'sent') return { kind: 'not-delivered', why: `${r.status}: ${r.error ?? ''}`.trim() };
  if (r.outcome === 'already-existed' && !r.wmsId) return { kind: 'exists-without-id', why: `its id is unknown: ${r.error ?? ''}`.trim() };
  return null;
}

/** Notes, for the records that refer to it, a cross-referenced record that is not usable as a reference. */
function rememberFailure(failures: RunFailures, r: Pick<RecordRow, 'target' | 'key' | 'status' | 'outcome' | 'error' | 'reason' | 'wmsId'>): void {
  const xref = TARGET_INFO[r.target].xref;
  const dep = xref ? dependencyStateOf(r) : null;
  if (xref && dep) failures.set(failureKey(xref, r.key), dep);
}

/**
 * The run's shared services for every record (record.ts): settle, the outage bookkeeping, the request
 * slots, the channel policies, the stop conditions.
 */
/** The reason of a settled record names the source column(s) of its field (PushOptions.sourceColumns), when known. */
function withColumn(result: RecordResult, mapping: string, sourceColumns: PushOptions['sourceColumns']): void {
  const params = result.reason?.params;
  const field = params?.['field'];
  if (!sourceColumns || !params || typeof field !== 'string' || field === '' || params['column'] !== undefined) return;
  const column = sourceColumns(mapping, field);
  if (column !== undefined) params['column'] = column;
}

function createPushRun(opts: PushOptions, onSettledRow: (row: RecordRow, result: RecordResult) => void) {
  const { journal, client, logger } = opts;
  const failures: RunFailures = new Map();
  const policyOf = new Map(opts.files.map((f) => [f.id, f.policy]));
  const globalLimit = pLimit(opts.concurrency);
  const channelLimits = new Map<string, ReturnType<typeof pLimit>>();
  const state = { settled: 0, fatal: null as unknown, wmsUnavailable: undefined as PushStats['wmsUnavailable'], deferred: [] as RecordRow[], final: false };
  /** the client's circuit is open: no record is taken any more, what is left stays pending */
  const wmsDown = (): boolean => client.availability?.().circuitOpen === true;
  const noteUnavailable = (err: unknown, requeued: number): void => {
    const since = client.availability?.().unavailableSince ?? new Date().toISOString();
    const u = state.wmsUnavailable;
    state.wmsUnavailable = { since: u?.since ?? since, lastError: describeError(err), requeued: (u?.requeued ?? 0) + requeued };
  };
  const limitFor = (row: RecordRow) => {
    const policy = policyOf.get(row.fileId);
    if (!policy?.concurrency) return null;
    let l = channelLimits.get(policy.inboxDir);
    if (!l) channelLimits.set(policy.inboxDir, (l = pLimit(policy.concurrency)));
    return l;
  };

  const run: PushRun = {
    journal,
    client,
    logger,
    failures,
    resolver: createRefResolver({ journal, client, refCache: opts.refCache, failures }),
    dependencyWaitMs: opts.dependencyWaitMs ?? 0,
    get fatal() {
      return state.fatal;
    },
    async settle(row, result, xref) {
      withColumn(result, row.mapping, opts.sourceColumns);
      await journal.settle(row.id, result, xref);
      state.settled++;
      // what a dependant needs of it: the settled state comes from the result, not a copy of the whole row per record
      rememberFailure(failures, {
        target: row.target,
        key: row.key,
        status: result.status,
        outcome: result.outcome,
        error: result.error ?? null,
        reason: result.reason ?? undefined,
        wmsId: result.wmsId ?? null,
      });
      onSettledRow(row, result);
    },
    async unmark(row, why) {
      await journal.settle(row.id, { status: 'failed', outcome: 'failed', error: why });
      await journal.requeue([row.id]);
    },
    async waitForWms(row, err: WmsError, marked) {
      // nothing was applied: back to pending (the next run sends it), the attempt stays counted
      if (marked) await run.unmark(row, `the WMS was unavailable: ${describeError(err)}`);
      const xref = TARGET_INFO[row.target].xref;
      if (xref) failures.set(failureKey(xref, row.key), { kind: 'waiting-for-wms', why: describeError(err) });
      noteUnavailable(err, 1);
    },
    requestSlot(row, fn) {
      const guarded = () => (state.fatal ? Promise.reject(state.fatal) : fn());
      const ch = limitFor(row);
      return ch ? ch(() => globalLimit(guarded)) : globalLimit(guarded);
    },
    inDoubtPolicy: (row) => inDoubtPolicyFor(TARGET_INFO[row.target].document, policyOf.get(row.fileId)?.inDoubt),
    inboxDirOf: (row) => policyOf.get(row.fileId)?.inboxDir ?? '.',
    stopping: () => (opts.signal?.aborted ?? false) || state.fatal !== null || wmsDown(),
    stopRun(message, cause) {
      state.fatal ??= new FatalPushError(message, cause);
    },
    defer(row) {
      if (state.final) return false;
      state.deferred.push(row);
      return true;
    },
  };
  return { run, state, wmsDown, noteUnavailable };
}

export async function pushFiles(opts: PushOptions): Promise<PushStats> {
  const { journal, logger } = opts;
  const fileIds = opts.files.map((f) => f.id);
  const sequenced = new Map<number, RecordResult | null>();
  // records the claim loop entered (share.ts sendClaimed), until they settle: a claim expired and handed out again,
  // or the in-doubt pass after a claimer stopped, never enters one twice in a run. A record settled in doubt stays
  // (the in-doubt pass would find it again); one deferred or requeued never settles here and stays too
  const claimedInLoop = new Set<number>();
  const { run, state, wmsDown, noteUnavailable } = createPushRun(opts, (row, result) => {
    if (result.status !== 'in_doubt') claimedInLoop.delete(row.id);
    if (sequenced.has(row.id)) sequenced.set(row.id, result);
    opts.onSettled?.(row, result);
  });
  const sender = createRecordSender(run);
  const windowLimit = createWindow(sendWindow(opts.concurrency));
  /**
   * A record through the send window, from preparation to its settle commit: a record that reached the WMS
   * but is not settled yet is in doubt after a crash too, so the window bounds both kinds (a record gives its
   * place back early only where the journal's commit order keeps that bound: record.ts afterSent).
   */
  const runRecord = (row: RecordRow): Promise<void> => windowLimit((release) => sender.process(row, release));
  const runInOrder = createInOrder(run, runRecord, sequenced, () => state.wmsUnavailable !== undefined || wmsDown(), opts.signal);

  // resume: what already failed in these files blocks its dependants
  for await (const row of iterate(journal, { fileIds, statuses: ['rejected', 'failed', 'held'], withoutRaw: true }, opts.batchSize))
    rememberFailure(run.failures, row);

  // the targets each file has records to send of: a tier without any is not read, and a tier's reads and claims visit
  // only the files with records of its targets (each read of a tier visits every record of the files it names that
  // is still to send: a claim of categories scanned every pending family and product of the run's other files, 22 ms
  // a claim for 10,000 families on PostgreSQL). The files are mapped, so no record of another target can appear
  // while they are sent (a requeued record was in flight, so its target is listed); a streamed file (feed) still
  // adds records: every tier reads every file
  const waiting = opts.feed ? null : await waitingTargetsByFile(journal, fileIds);
  const filesWith = (targets: readonly Target[]): number[] => (waiting ? fileIds.filter((id) => targets.some((t) => waiting.get(id)!.has(t))) : fileIds);
  for (let tier = 0; tier <= MAX_TIER && !run.stopping(); tier++) {
    // session targets (stock sync) are sent file by file, after the tier's other records
    const targets = TARGETS.filter((t) => TARGET_INFO[t].tier === tier && TARGET_INFO[t].send.kind !== 'session' && filesWith([t]).length > 0);
    // a streamed file (feed) is claimed up to what it published (share.ts)
    const claimed = opts.share ? targets.filter(shareableTarget) : [];
    const read = opts.share?.helper ? [] : targets.filter((t) => !claimed.includes(t));
    if (read.length > 0) await sendTier(opts, filesWith(read), read, runInOrder, run.stopping);
    if (claimed.length > 0) await sendClaimed(opts, opts.share!, filesWith(claimed), claimed, runInOrder, run.stopping, claimedInLoop, opts.feed);
    await retryDeferred(opts, state, runRecord, run.stopping);
    if (tier === TARGET_INFO.StockSync.tier && !opts.share?.helper && !opts.signal?.aborted && !state.fatal) {
      // only the files with stock rows: asking a file of 20,000 categories for its stock rows counted them through
      // the (file, status) index, 60 ms of the event loop in the middle of the send (a streamed 1 GB file: minutes)
      const stockFiles = await filesWithStockRows(journal, fileIds, waiting, opts.feed);
      for (const f of opts.files) {
        if (!stockFiles.has(f.id)) continue;
        if (wmsDown()) break;
        try {
          await pushStockSync(f, run, { batchSize: opts.batchSize, chunkSize: f.policy.stockSyncChunkSize, signal: opts.signal });
        } catch (err) {
          if (!isWmsUnavailable(err)) throw err;
          logger.warn({ file: f.name, err }, 'stock sync not sent: the WMS is unavailable; its rows stay pending');
          if (!state.wmsUnavailable) noteUnavailable(err, 0);
        }
      }
    }
  }
  // claimed but not sent (stopping): the next claimer takes them at once instead of after the claim expires
  if (opts.share) await journal.releaseRecordClaims(opts.share.owner, fileIds).catch((err: unknown) => logger.warn({ err }, 'could not release record claims'));
  if (state.fatal) throw state.fatal;
  if (!state.wmsUnavailable && wmsDown()) {
    const a = opts.client.availability!();
    state.wmsUnavailable = { since: a.unavailableSince ?? new Date().toISOString(), lastError: 'circuit open', requeued: 0 };
  }
  return { settled: state.settled, aborted: opts.signal?.aborted ?? false, ...(state.wmsUnavailable ? { wmsUnavailable: state.wmsUnavailable } : {}) };
}

/**
 * Every pending or in-doubt record of one tier, in id (source) order, with back-pressure: never more than a
 * batch of records queued in memory. With a feed, the tier is read again from where it stopped each time a
 * file still being mapped publishes a batch, until no such file can add records of the tier.
 */
async function sendTier(
  opts: PushOptions,
  fileIds: number[],
  targets: Target[],
  runInOrder: (row: RecordRow) => Promise<void>,
  stopping: () => boolean,
): Promise<void> {
  const queue = createSendQueue(opts.logger, runInOrder, opts.batchSize);
  const feed = opts.feed;
  let afterId = 0;
  for (;;) {
    // asked before the pass: a batch published during the pass settles `more`, and the pass after reads it
    const open = feed?.open(targets) ?? false;
    const more = open ? feed!.next() : null;
    for await (const row of iterate(
      opts.journal,
      { fileIds, targets, statuses: ['pending', 'in_doubt'], afterId, withoutRaw: true },
      Math.min(opts.batchSize, SEND_PAGE_ROWS),
      (rows) => prefetchXrefsOf(opts.journal, opts.logger, rows),
    )) {
      if (stopping() || (feed && !feed.published(row))) break;
      feed?.taken(row);
      afterId = row.id;
      await queue.push(row);
    }
    if (!more || stopping()) break;
    await more;
  }
  await queue.drain();
}

/** Dependencies still being sent elsewhere (another instance): try again until they settle or the wait is over. */
async function retryDeferred(
  opts: PushOptions,
  state: { deferred: RecordRow[]; final: boolean },
  runRecord: (row: RecordRow) => Promise<void>,
  stopping: () => boolean,
): Promise<void> {
  const waitUntil = Date.now() + (opts.dependencyWaitMs ?? 0);
  while (state.deferred.length > 0 && !stopping()) {
    state.final = Date.now() >= waitUntil;
    if (!state.final) await new Promise((r) => setTimeout(r, 250));
    const again = state.deferred;
    state.deferred = [];
    await Promise.all(
      again.map((row) => runRecord(row).catch((err: unknown) => opts.logger.error({ err, recordKey: row.key }, 'unexpected error while sending'))),
    );
  }
  state.final = false;
}

/**
 * Enters a record in source order (the send loop calls it in id order). A record whose effect depends on
 * order waits, outside the send window, until every earlier record touching the same target has settled;
 * if one of them was not delivered (failed, in doubt, not sent), applying this one first would invert
 * them: it is not sent either (failed, so the next run sends both, in order; held "waiting" during an outage).
 */
function createInOrder(
  run: PushRun,
  runRecord: (row: RecordRow) => Promise<void>,
  sequenced: Map<number, RecordResult | null>,
  outage: () => boolean,
  signal: AbortSignal | undefined,
): (row: RecordRow) => Promise<void> {
  // order-dependent operations (ARCHITECTURE.md, "Sequencing"): their outcome tells the next one on the
  // same target whether it may go
  const gate = createSequenceGate();
  const label = (row: RecordRow): string => `${TARGET_INFO[row.target].label} '${row.key}' (line ${row.source.line})`;
  return (row) => {
    const touch = touchOf(row);
    if (!touch) return runRecord(row);
    const { ready, done } = gate.enter(touch);
    sequenced.set(row.id, null);
    let mine: Blocker = `${label(row)} was not sent`;
    return ready
      .then(async (blocker) => {
        if (blocker) {
          if (signal?.aborted || run.fatal) return; // stays pending, and so do the ones after it
          await run.settle(row, notInOrder(blocker, outage()));
          mine = blocker;
          return;
        }
        await runRecord(row);
        const r = sequenced.get(row.id);
        if (r && (r.status === 'sent' || r.status === 'rejected')) mine = null;
        else if (r) mine = `${label(row)} ${r.outcome}`;
      })
      .finally(() => {
        sequenced.delete(row.id);
        done(mine);
      });
  };
}

/**
 * A record not sent because an earlier operation on the same target was not delivered. During an outage
 * the earlier one waits for the WMS, and so does this one (held, requeued by the next run like every record
 * waiting for the WMS), not a failure.
 */
export function notInOrder(blocker: string, outage: boolean): RecordResult {
  if (outage) {
    return {
      status: 'held',
      outcome: 'held',
      error: `waiting for an earlier operation on the same target (${blocker}): the WMS was unavailable; the next run sends both, in order`,
      reason: { code: PushReason.SEQUENCE_WAITING, params: { blocker } },
    };
  }
  return {
    status: 'failed',
    outcome: 'failed',
    error: `not sent, to keep the source order: an earlier operation on the same target was not delivered (${blocker}); the next run sends both, in order`,
    reason: { code: PushReason.SEQUENCE_NOT_DELIVERED, params: { blocker } },
  };
}

/** Records the send loop may still send or settle: not sent yet, in flight (a claim that expires: in doubt), in doubt. */
const SEND_STATUSES: RecordRow['status'][] = ['pending', 'sending', 'in_doubt'];

/**
 * The files that may hold stock rows: by their targets (the mapping's note). A streamed file holds none (stock
 * synchronisations are never streamed, and a mapping has one target), and its note is not written before its end.
 */
async function filesWithStockRows(
  journal: RecordQueue & MetaStore,
  fileIds: readonly number[],
  waiting: ReadonlyMap<number, ReadonlySet<Target>> | null,
  feed: RecordFeed | undefined,
): Promise<Set<number>> {
  const streamed = feed?.bounds();
  const candidates = streamed ? fileIds.filter((id) => !streamed.has(id)) : fileIds;
  const targets = waiting ?? (await waitingTargetsByFile(journal, candidates));
  return new Set(candidates.filter((id) => hasSessionTarget(targets.get(id))));
}

/** Whether a file's targets include one sent as a sync session (unknown targets: it may). */
function hasSessionTarget(targets: ReadonlySet<Target> | undefined): boolean {
  return targets === undefined || SESSION_TARGETS.some((t) => targets.has(t));
}

/** Each file's targets with records to send (one read per file: the run's files side by side in one query would not say whose). */
async function waitingTargetsByFile(journal: RecordQueue & MetaStore, fileIds: readonly number[]): Promise<Map<number, Set<Target>>> {
  const byFile = new Map<number, Set<Target>>();
  for (const id of fileIds) {
    // the targets its mapping produced, written when it was mapped: those still to send, or more once some target's
    // records are all settled (then that tier reads an empty range of the file's waiting records, or, in a file of
    // several targets, walks the others' waiting records once). A file mapped by an older wmsbridge: its records are asked
    const mapped = await journal.getMeta(FILE_META.targets(id));
    byFile.set(id, new Set(mapped !== undefined ? (JSON.parse(mapped) as Target[]) : await journal.targetsOf([id], SEND_STATUSES)));
  }
  return byFile;
}

/**
 * Rows per journal read in the send loop. A read is synchronous with SQLite: 1,000 rows (payloads
 * parsed) held the event loop ~20 ms, and every WMS answer that arrived meanwhile waited; 200-row pages
 * keep each read to a few ms. The back-pressure bound stays `batchSize` records.
 */
const SEND_PAGE_ROWS = 200;
