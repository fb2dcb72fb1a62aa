/**
 * Sending: every pending record of the given files, tier by tier (units, categories, carriers,
 * providers, owners -> families -> products -> documents, factors, stock -> attachments), with limited
 * concurrency. Each send is marked in the journal before its request leaves and settled after, so a
 * crash leaves at most the records of the send window in doubt, never a record sent twice unknowingly.
 *
 * Two limits: `concurrency` bounds the requests in flight to the WMS (the Little's-law resource), and a
 * slightly larger send window bounds the records being prepared (references, validation, the journal's
 * 'sending' mark) or sent. The window lets the next records' journal commits happen while requests are in
 * flight, so a request slot never waits for a commit (the settle happens after the slot is released, still
 * inside the window: a crash leaves at most the window in doubt, sent or not).
 * Only records that resolve themselves when in doubt are marked ahead; documents held when in doubt are
 * marked and settled inside their request slot, so a crash leaves at most `concurrency` of them for a person.
 */
import { createHash } from 'node:crypto';
import pLimit from 'p-limit';
import type { Logger } from '../shared/logger.js';
import type { Journal, RecordResult, RecordRow } from '../journal/types.js';
import type { WmsClient } from '../wms/client-types.js';
import { isWmsError, WmsErrorCode, type WmsError } from '../wms/errors.js';
import { MAX_TIER, TARGET_INFO, TARGETS, type Target } from '../wms/targets.js';
import { ENDPOINTS } from '../wms/endpoints.js';
import { BridgeError, ErrorCode, errorMessage } from '../shared/errors.js';
import { createRefResolver, failureKey, identifyingFields, isWaitingForWms, WAITING_FOR_PREFIX, WMS_UNAVAILABLE_TAG, type RunFailures } from './refs.js';
import { PushReason, type Reason } from '../shared/reason.js';
import type { LoadableReferenceCache } from './reference-cache.js';
import { readBack, send, SendRefused, type SendContext, type SendInput, type SendOutput } from './senders.js';
import { STOCK_SYNC_NAMESPACE, uuid5 } from '../shared/uuid.js';
import { createSequenceGate, touchOf, type Blocker } from './sequence.js';

export interface ChannelPolicy {
  /** the channel's inbox folder (attachments are read from inside it only) */
  inboxDir: string;
  concurrency?: number | undefined;
  inDoubt: { masterData: 'resend' | 'hold'; documents: 'resend' | 'hold' };
  stockSyncChunkSize: number;
}

export interface PushOptions {
  journal: Journal;
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

const DOCUMENT_TARGETS = new Set<Target>(['PurchaseOrder', 'PickingList', 'PickingListAttachment']);

/** Authentication refused: no record can be sent; the run stops (exit 2) and records stay pending. */
export class FatalPushError extends BridgeError {
  constructor(message: string, cause: unknown) {
    super(ErrorCode.WMS_AUTH, message, { cause });
    this.name = 'FatalPushError';
  }
}

function sha256(s: string): string {
  return createHash('sha256').update(s).digest('hex');
}

/** Canonical JSON (sorted keys) so equal payloads hash equally whatever the key order. */
export function canonicalJson(v: unknown): string {
  if (Array.isArray(v)) return `[${v.map(canonicalJson).join(',')}]`;
  if (v !== null && typeof v === 'object') {
    return `{${Object.keys(v)
      .sort()
      .map((k) => `${JSON.stringify(k)}:${canonicalJson((v as Record<string, unknown>)[k])}`)
      .join(',')}}`;
  }
  return JSON.stringify(v) ?? 'null';
}

export function payloadHash(payload: unknown): string {
  return sha256(canonicalJson(payload));
}

function describeError(err: unknown): string {
  if (isWmsError(err)) return err.message;
  return errorMessage(err);
}

/** The error as a stable code and the values the outbox's message templates need. */
function reasonOf(err: unknown): Reason {
  if (isWmsError(err)) {
    const params: Record<string, string | number> = {};
    if (err.httpStatus !== undefined) params['status'] = err.httpStatus;
    const said = err.envelopeMessage ?? err.envelopeError;
    if (said) params['message'] = said;
    if (err.networkCode) params['network'] = err.networkCode;
    return { code: err.code, params };
  }
  if (err instanceof BridgeError) return { code: err.code, params: { message: err.message } };
  return { code: 'E_INTERNAL', params: { message: errorMessage(err) } };
}
/** the reason of a failed reference (refs.ts) */
function refReason(r: { code: string; field: string; resource?: string; value?: string }): Reason {
  return { code: r.code, params: { field: r.field, ...(r.resource ? { resource: r.resource } : {}), ...(r.value !== undefined ? { value: r.value } : {}) } };
}

/** Targets whose send creates a record with a natural key (a conflict on them is evidence of delivery). */
const CREATES = new Set<Target>(['UnitMeasurement', 'Category', 'Family', 'Product', 'ConversionFactor', 'ShippingCompany', 'Provider', 'Owners', 'PurchaseOrder', 'PickingList']);

/**
 * A create refused because its natural key already exists: HTTP 409, or a refusal whose text says it
 * exists (or is a duplicate) and names the record's key.
 */
export function isConflict(row: Pick<RecordRow, 'target' | 'key'>, err: WmsError): boolean {
  if (!CREATES.has(row.target)) return false;
  if (err.httpStatus === 409 || err.envelopeCode === 409) return true;
  if (!isRejection(err)) return false;
  const text = `${err.envelopeError ?? ''} ${err.envelopeMessage ?? ''} ${err.message}`;
  if (!/already exist|duplicat|j[aá] exist/i.test(text)) return false;
  return row.key.split('|').some((part) => part.length > 0 && text.includes(part));
}

/** A GUID named as the existing record's id in a refusal's text ("... already exists (id X)"). */
export function idInMessage(text: string): string | undefined {
  return /\bid\b[^0-9a-f]{0,4}([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})/i.exec(text)?.[1];
}

/**
 * The WMS did not take the request and said nothing about the data: no answer (connection refused or
 * reset, timeout before the request was sent completely, circuit open, aborted), a 5xx, a 408 or a 429
 * beyond the retries. Such a record is not a data error: it stays pending for the next run.
 */
export function isWmsUnavailable(err: unknown): boolean {
  if (!isWmsError(err)) return false;
  // a certificate the client refuses is configuration (wms.tls), not an outage
  if (err.networkCode && /CERT|SELF_SIGNED|UNABLE_TO_VERIFY|TLS/i.test(err.networkCode)) return false;
  if (err.code === WmsErrorCode.NETWORK || err.code === WmsErrorCode.TIMEOUT) return !err.mayHaveReachedServer;
  if (err.code === WmsErrorCode.RATE_LIMIT) return true;
  if (err.code === WmsErrorCode.HTTP && err.httpStatus !== undefined) return err.httpStatus >= 500 || err.httpStatus === 408 || err.httpStatus === 429;
  return false;
}

/** Data problems the WMS refused: fixing the data is the way out, not retrying. */
function isRejection(err: WmsError): boolean {
  if (err.code === WmsErrorCode.VALIDATION || err.code === WmsErrorCode.ENVELOPE || err.code === WmsErrorCode.RESPONSE) return true;
  if (err.code === WmsErrorCode.HTTP && err.httpStatus !== undefined && err.httpStatus >= 400 && err.httpStatus < 500 && err.httpStatus !== 408) return true;
  return false;
}

export async function pushFiles(opts: PushOptions): Promise<PushStats> {
  const { journal, client, logger } = opts;
  const failures: RunFailures = new Map();
  const resolver = createRefResolver({ journal, client, refCache: opts.refCache, failures });
  const policyOf = new Map(opts.files.map((f) => [f.id, f.policy]));
  const fileIds = opts.files.map((f) => f.id);
  const globalLimit = pLimit(opts.concurrency);
  const windowLimit = pLimit(sendWindow(opts.concurrency));
  const channelLimits = new Map<string, ReturnType<typeof pLimit>>();
  let settledCount = 0;
  let fatal: unknown = null;
  let wmsUnavailable: PushStats['wmsUnavailable'];
  /** the client's circuit is open: no record is taken any more, what is left stays pending */
  const wmsDown = (): boolean => client.availability?.().circuitOpen === true;

  /** what dependants of a record not delivered are told: waiting (the WMS) or depending on a failure */
  const failureReason = (status: string, error: string | null | undefined): string =>
    status === 'held' && isWaitingForWms(error) ? `${WMS_UNAVAILABLE_TAG}it waits for a dependency itself` : `${status}: ${error ?? ''}`.trim();

  // order-dependent operations (ARCHITECTURE.md, "Sequencing"): their outcome tells the next one on the
  // same target whether it may go
  const gate = createSequenceGate();
  const sequenced = new Map<number, RecordResult | null>();

  const settle = async (row: RecordRow, result: RecordResult): Promise<void> => {
    await journal.settle(row.id, result);
    if (sequenced.has(row.id)) sequenced.set(row.id, result);
    settledCount++;
    const info = TARGET_INFO[row.target];
    if (result.status !== 'sent' && info.xref) failures.set(failureKey(info.xref, row.key), failureReason(result.status, result.error));
    else if (result.outcome === 'already-existed' && !result.wmsId && info.xref) failures.set(failureKey(info.xref, row.key), `it exists in the WMS but its id is unknown: ${result.error ?? ''}`.trim());
    opts.onSettled?.(row, result);
  };

  /**
   * The WMS was unavailable for this record: nothing was applied, so it goes back to pending (the next run
   * sends it) and its dependants wait for it. `marked`: the record was marked sending (settled, then
   * requeued; the attempt stays counted).
   */
  const leavePendingForWms = async (row: RecordRow, err: WmsError, marked: boolean): Promise<void> => {
    if (marked) {
      await journal.settle(row.id, { status: 'failed', outcome: 'failed', error: `the WMS was unavailable: ${describeError(err)}` });
      await journal.requeue([row.id]);
    }
    const info = TARGET_INFO[row.target];
    if (info.xref) failures.set(failureKey(info.xref, row.key), `${WMS_UNAVAILABLE_TAG}${describeError(err)}`);
    const since = client.availability?.().unavailableSince ?? new Date().toISOString();
    wmsUnavailable = { since: wmsUnavailable?.since ?? since, lastError: describeError(err), requeued: (wmsUnavailable?.requeued ?? 0) + 1 };
  };

  // resume: what already failed in these files blocks its dependants
  for await (const row of iterate(journal, { fileIds, statuses: ['rejected', 'failed', 'held'] }, opts.batchSize)) {
    const info = TARGET_INFO[row.target];
    if (info.xref) failures.set(failureKey(info.xref, row.key), failureReason(row.status, row.error));
  }

  const limitFor = (policy: ChannelPolicy | undefined) => {
    if (!policy?.concurrency) return null;
    let l = channelLimits.get(policy.inboxDir);
    if (!l) channelLimits.set(policy.inboxDir, (l = pLimit(policy.concurrency)));
    return l;
  };

  /** a request slot: the channel's limit (if any), then the global one; nothing leaves once the run is fatal */
  const requestSlot = <T>(row: RecordRow, fn: () => Promise<T>): Promise<T> => {
    const guarded = (): Promise<T> => (fatal ? Promise.reject(fatal) : fn());
    const ch = limitFor(policyOf.get(row.fileId));
    return ch ? ch(() => globalLimit(guarded)) : globalLimit(guarded);
  };

  /**
   * A record through the send window, from preparation to its settle commit: a record that reached the WMS
   * but is not settled yet is in doubt after a crash too, so the window bounds both kinds.
   */
  const runRecord = (row: RecordRow): Promise<void> => windowLimit(() => processRecord(row));

  /**
   * Enters a record in source order (the send loop calls it in id order). A record whose effect depends on
   * order waits, outside the send window, until every earlier record touching the same target has settled;
   * if one of them was not delivered (failed, in doubt, not sent), applying this one first would invert
   * them: it is not sent either (failed, so the next run sends both, in order).
   */
  const runInOrder = (row: RecordRow): Promise<void> => {
    const touch = touchOf(row);
    if (!touch) return runRecord(row);
    const { ready, done } = gate.enter(touch);
    sequenced.set(row.id, null);
    let mine: Blocker = `${TARGET_INFO[row.target].label} '${row.key}' (line ${row.source.line}) was not sent`;
    return ready
      .then(async (blocker) => {
        if (blocker) {
          if (opts.signal?.aborted || fatal) return; // stays pending, and so do the ones after it
          // during an outage the earlier one waits for the WMS: so does this one (held "waiting for ...",
          // requeued by the next run like every record waiting for the WMS), not a failure
          if (wmsUnavailable !== undefined || wmsDown()) {
            await settle(row, { status: 'held', outcome: 'held', error: `${WAITING_FOR_PREFIX}an earlier operation on the same target (${blocker}): the WMS was unavailable; the next run sends both, in order` });
          } else {
            await settle(row, { status: 'failed', outcome: 'failed', error: `not sent, to keep the source order: an earlier operation on the same target was not delivered (${blocker}); the next run sends both, in order` });
          }
          mine = blocker;
          return;
        }
        await runRecord(row);
        const r = sequenced.get(row.id);
        if (r && (r.status === 'sent' || r.status === 'rejected')) mine = null;
        else if (r) mine = `${TARGET_INFO[row.target].label} '${row.key}' (line ${row.source.line}) ${r.outcome}`;
      })
      .finally(() => {
        sequenced.delete(row.id);
        done(mine);
      });
  };

  const inDoubtPolicy = (row: RecordRow): 'resend' | 'hold' => {
    const p = policyOf.get(row.fileId);
    const docs = DOCUMENT_TARGETS.has(row.target);
    return docs ? (p?.inDoubt.documents ?? 'hold') : (p?.inDoubt.masterData ?? 'resend');
  };

  // records waiting for a dependency another instance is still sending; `final` = the last attempt
  let deferred: RecordRow[] = [];
  let final = false;

  /** Prepares, sends and settles one record (inside the send window; the request inside a request slot). */
  async function processRecord(row: RecordRow): Promise<void> {
    if (opts.signal?.aborted || fatal || wmsDown()) return;
    const policy = policyOf.get(row.fileId);
    const ctx: SendContext = { client, journal, inboxDir: policy?.inboxDir ?? '.' };
    const info = TARGET_INFO[row.target];
    let resolved: Awaited<ReturnType<typeof resolver.resolve>>;
    try {
      resolved = await resolver.resolve(row.payload);
    } catch (err) {
      // a reference read from the WMS got no answer: the record stays pending
      if (!isWmsUnavailable(err)) throw err;
      await leavePendingForWms(row, err as WmsError, false);
      return;
    }
    if (!resolved.ok) {
      if (resolved.status === 'deferred') {
        if (!final) {
          deferred.push(row);
          return;
        }
        await settle(row, { status: 'held', outcome: 'held', error: `${resolved.field}: ${resolved.message}; still not settled after ${Math.round((opts.dependencyWaitMs ?? 0) / 1000)} s`, reason: refReason(resolved) });
        return;
      }
      // "waiting for ..." leads the message: the next run finds these records by it (isWaitingForWms)
      const error = resolved.code === 'dependency_waiting' ? resolved.message : `${resolved.field}: ${resolved.message}`;
      await settle(row, { status: resolved.status, outcome: resolved.status === 'held' ? 'held' : 'rejected', error, reason: refReason(resolved) });
      return;
    }
    const checked = info.schema.safeParse(resolved.payload);
    if (!checked.success) {
      const msg = checked.error.issues.map((i) => `${i.path.join('.') || '(record)'}: ${i.message}`).join('; ');
      const reason: Reason = { code: PushReason.SCHEMA, params: { field: checked.error.issues.map((i) => i.path.join('.') || '(record)').join(', ') } };
      await settle(row, { status: 'rejected', outcome: 'rejected', error: msg, reason });
      return;
    }
    const input: SendInput = { target: row.target, key: row.key, payload: checked.data as Record<string, unknown>, attachmentPath: row.attachmentPath };

    // an earlier attempt whose outcome is unknown (crash in flight): read back where the interface can
    if (row.status === 'in_doubt') {
      let rb: SendOutput | 'absent' | null;
      try {
        rb = await requestSlot(row, () => readBack(input, ctx));
      } catch (err) {
        // the WMS did not answer the read-back: still in doubt, the next run reads back again
        if (isWmsUnavailable(err)) await settle(row, { status: 'in_doubt', outcome: 'in-doubt', error: `in doubt, the WMS was unavailable for the read-back: ${describeError(err)}`, reason: reasonOf(err) });
        else await settle(row, { status: 'failed', outcome: 'failed', error: `in doubt, read-back failed: ${describeError(err)}`, reason: { code: PushReason.IN_DOUBT_READBACK_FAILED, params: reasonOf(err).params ?? {} } });
        return;
      }
      if (rb && rb !== 'absent') {
        await afterSent(row, rb);
        return;
      }
      if (rb === null && inDoubtPolicy(row) === 'hold') {
        await settle(row, {
          status: 'held',
          outcome: 'in-doubt',
          error: 'in doubt: a send was in flight when wmsbridge stopped and the interface cannot tell whether it took effect; check the WMS, then `wmsbridge resolve`',
          reason: { code: PushReason.IN_DOUBT },
        });
        return;
      }
    }

    // idempotent reruns: the same payload already delivered for this key is not sent again
    if (info.xref) {
      const known = await journal.getXref(info.xref, row.key);
      if (known && known.payloadHash === row.payloadHash) {
        await settle(row, { status: 'sent', outcome: 'unchanged', wmsId: known.wmsId });
        return;
      }
      if (known && row.op === 'create') {
        await settle(row, {
          status: 'rejected',
          outcome: 'rejected',
          error: `${info.label} '${row.key}' was already created (WMS id ${known.wmsId}) with other data, and the interface has no update for it: change it in the WMS`,
          reason: { code: PushReason.ALREADY_CREATED, params: { resource: info.label, key: row.key, wmsId: known.wmsId } },
        });
        return;
      }
    }

    // a record that resolves itself when in doubt (read back, or resent) is marked ahead, while the request
    // slots are busy, and settled after its slot is released. One held when in doubt (documents by default)
    // needs a person after a crash: it is marked once it has a slot and settled before releasing it, so a
    // kill leaves at most `concurrency` of them in doubt
    const markAhead = inDoubtPolicy(row) !== 'hold';
    let marked = false;
    const mark = async (): Promise<void> => {
      await journal.markSending(row.id);
      marked = true;
    };
    let out: SendOutput | undefined;
    let sendError: { err: unknown } | null = null;
    try {
      if (markAhead) await mark();
      await requestSlot(row, async () => {
        if (!markAhead) await mark();
        try {
          out = await send(input, ctx);
        } catch (err) {
          sendError = { err };
          return;
        }
        if (!markAhead) await afterSent(row, out);
      });
    } catch (err) {
      // the slot was refused (the run is stopping) or the journal failed
      if (err !== fatal) throw err;
      if (!marked) return; // nothing was sent and the record stays pending
      sendError = { err };
    }
    if (sendError) {
      await onSendError(row, input, ctx, (sendError as { err: unknown }).err);
      return;
    }
    if (markAhead && out) await afterSent(row, out);
  }

  async function afterSent(row: RecordRow, out: SendOutput): Promise<void> {
    const info = TARGET_INFO[row.target];
    // issued together, so they share one commit (the journal groups the writes of a turn): the record is
    // settled and its WMS id cross-referenced atomically, with one fsync instead of two
    const writes: Promise<void>[] = [];
    if (info.xref && out.wmsId) {
      writes.push(journal.putXref(info.xref, row.key, out.wmsId, row.payloadHash));
      // every identifying field, so a lookup by symbol, cnpj, code... finds what wmsbridge created (issue 14)
      const fields = identifyingFields(info.xref, row.payload);
      if (fields.length) writes.push(journal.putXrefFields(info.xref, row.key, fields));
    }
    if (row.target === 'ConversionFactorDelete') writes.push(journal.deleteXref('ConversionFactor', row.key));
    writes.push(settle(row, { status: 'sent', outcome: out.outcome, wmsId: out.wmsId, error: out.note ?? null }));
    await Promise.all(writes);
  }

  async function onSendError(row: RecordRow, input: SendInput, ctx: SendContext, err: unknown): Promise<void> {
    if (err instanceof SendRefused) {
      await settle(row, { status: 'rejected', outcome: 'rejected', error: `${err.field ?? 'record'}: ${err.message}`, reason: { code: PushReason.REFUSED, params: { field: err.field ?? '', message: err.message } } });
      return;
    }
    if (!isWmsError(err)) {
      await settle(row, { status: 'failed', outcome: 'failed', error: describeError(err), reason: reasonOf(err) });
      return;
    }
    if (err.code === WmsErrorCode.AUTH) {
      await settle(row, { status: 'failed', outcome: 'failed', error: describeError(err), reason: reasonOf(err) });
      // the credentials themselves were refused (authorize, or a 403 firewall block): no record can be
      // sent, stop the run; a 401 on one request (a token that expired in flight) fails only that record
      if (err.path === ENDPOINTS.authorize.path || err.httpStatus === 403) fatal ??= new FatalPushError(`the WMS refused authentication: ${err.message}`, err);
      return;
    }
    if (isConflict(row, err)) {
      await alreadyExisted(row, input, ctx, err);
      return;
    }
    if (isRejection(err)) {
      await settle(row, { status: 'rejected', outcome: 'rejected', error: describeError(err), reason: reasonOf(err) });
      return;
    }
    if (isWmsUnavailable(err)) {
      await leavePendingForWms(row, err, true);
      return;
    }
    if (err.mayHaveReachedServer) {
      // the request may have taken effect: read back, else the channel's policy
      let rb: SendOutput | 'absent' | null = null;
      try {
        rb = await requestSlot(row, () => readBack(input, ctx));
      } catch {
        rb = null;
      }
      if (rb && rb !== 'absent') {
        await afterSent(row, rb);
        return;
      }
      if (rb === 'absent' || inDoubtPolicy(row) === 'resend') {
        try {
          const out = await requestSlot(row, () => send(input, ctx));
          await afterSent(row, out);
        } catch (err2) {
          // the first send took effect and its answer was lost: the resend is refused as a duplicate
          if (isWmsError(err2) && isConflict(row, err2)) await alreadyExisted(row, input, ctx, err2);
          else if (isWmsError(err2) && isRejection(err2)) await settle(row, { status: 'rejected', outcome: 'rejected', error: describeError(err2), reason: reasonOf(err2) });
          else if (isWmsUnavailable(err2) && rb === 'absent') await leavePendingForWms(row, err2 as WmsError, true);
          else if (isWmsError(err2) && err2.mayHaveReachedServer) await settle(row, { status: 'in_doubt', outcome: 'in-doubt', error: describeError(err2), reason: reasonOf(err2) });
          else await settle(row, { status: 'failed', outcome: 'failed', error: describeError(err2), reason: reasonOf(err2) });
        }
        return;
      }
      await settle(row, {
        status: 'held',
        outcome: 'in-doubt',
        error: `in doubt: ${describeError(err)}; the interface cannot tell whether it took effect: check the WMS, then \`wmsbridge resolve\``,
        reason: { code: PushReason.IN_DOUBT, params: reasonOf(err).params ?? {} },
      });
      return;
    }
    await settle(row, { status: 'failed', outcome: 'failed', error: describeError(err), reason: reasonOf(err) });
  }

  /**
   * A create the WMS refused because its natural key exists: evidence of an earlier delivery (an answer lost
   * after the WMS applied it, a crash before the settle), so the record is sent, outcome already-existed, with
   * the WMS id from the answer, else from a read where the interface has one, else delivered without an id.
   */
  async function alreadyExisted(row: RecordRow, input: SendInput, ctx: SendContext, err: WmsError): Promise<void> {
    const info = TARGET_INFO[row.target];
    let id = err.answerId ?? idInMessage(describeError(err));
    if (!id) {
      try {
        const rb = await requestSlot(row, () => readBack(input, ctx));
        if (rb && rb !== 'absent') id = rb.wmsId ?? undefined;
        else if (rb === null && (row.target === 'Provider' || row.target === 'ShippingCompany')) {
          const code = String(input.payload['codeERP'] ?? '');
          const r = code ? await requestSlot(row, async (): Promise<{ id: string } | null> => (row.target === 'Provider' ? client.getProviderByErp(code) : client.getShippingCompanyByErp(code))) : null;
          id = r?.id;
        }
      } catch {
        id = undefined;
      }
    }
    const why = `the WMS already has it (${describeError(err)})`;
    if (id) {
      await afterSent(row, { outcome: 'already-existed', wmsId: id, note: why });
      return;
    }
    await settle(row, {
      status: 'sent',
      outcome: 'already-existed',
      wmsId: null,
      error: `${why}; its WMS id is unknown (the answer does not carry it and the interface has no read for a ${info.label}): records that refer to it are held until \`wmsbridge resolve --mark-sent --ids ${row.id} --wms-id <id>\``,
    });
  }

  for (let tier = 0; tier <= MAX_TIER && !opts.signal?.aborted && !fatal && !wmsDown(); tier++) {
    const targets = TARGETS.filter((t) => TARGET_INFO[t].tier === tier && t !== 'StockSync');
    // back-pressure: never more than a batch of records queued in memory. A counter and one waiter: a
    // Promise.race over the queued tasks would add a reaction to each of them at every turn (quadratic
    // work and memory: found with --cpu-prof on 20,000 records)
    let queued = 0;
    let slotFree: (() => void) | null = null;
    let allDone: (() => void) | null = null;
    for await (const row of iterate(journal, { fileIds, targets, statuses: ['pending', 'in_doubt'] }, Math.min(opts.batchSize, SEND_PAGE_ROWS))) {
      if (opts.signal?.aborted || fatal || wmsDown()) break;
      queued++;
      runInOrder(row)
        .catch((err: unknown) => {
          logger.error({ err, recordKey: row.key, resource: row.target }, 'unexpected error while sending');
        })
        .finally(() => {
          queued--;
          slotFree?.();
          if (queued === 0) allDone?.();
        });
      while (queued >= opts.batchSize) await new Promise<void>((r) => (slotFree = r));
      slotFree = null;
    }
    if (queued > 0) await new Promise<void>((r) => (allDone = r));
    allDone = null;
    // dependencies still being sent elsewhere: retry until they settle or the wait is over
    const waitUntil = Date.now() + (opts.dependencyWaitMs ?? 0);
    while (deferred.length > 0 && !opts.signal?.aborted && !fatal && !wmsDown()) {
      final = Date.now() >= waitUntil;
      if (!final) await new Promise((r) => setTimeout(r, 250));
      const again = deferred;
      deferred = [];
      await Promise.all(again.map((row) => runRecord(row).catch((err: unknown) => logger.error({ err, recordKey: row.key }, 'unexpected error while sending'))));
    }
    final = false;
    if (tier === TARGET_INFO.StockSync.tier && !opts.signal?.aborted && !fatal) {
      for (const f of opts.files) {
        if (wmsDown()) break;
        try {
          await pushStockSync(f, { journal, client, resolver, settle, leavePendingForWms, logger, batchSize: opts.batchSize, chunkSize: f.policy.stockSyncChunkSize, signal: opts.signal });
        } catch (err) {
          if (!isWmsUnavailable(err)) throw err;
          logger.warn({ file: f.name, err }, 'stock sync not sent: the WMS is unavailable; its rows stay pending');
          wmsUnavailable ??= { since: client.availability?.().unavailableSince ?? new Date().toISOString(), lastError: describeError(err), requeued: 0 };
        }
      }
    }
  }
  if (fatal) throw fatal;
  if (!wmsUnavailable && wmsDown()) {
    const a = client.availability!();
    wmsUnavailable = { since: a.unavailableSince ?? new Date().toISOString(), lastError: 'circuit open', requeued: 0 };
  }
  return { settled: settledCount, aborted: opts.signal?.aborted ?? false, ...(wmsUnavailable ? { wmsUnavailable } : {}) };
}

/**
 * Rows per journal read in the send loop. A read is synchronous with SQLite: 1,000 rows (payloads
 * parsed) held the event loop ~20 ms, and every WMS answer that arrived meanwhile waited; 200-row pages
 * keep each read to a few ms. The back-pressure bound stays `batchSize` records.
 */
const SEND_PAGE_ROWS = 200;

/**
 * Records in the send window for a given request concurrency: the requests in flight plus a quarter more
 * (at least 2) being prepared, whose 'sending' marks commit while the requests are out. A crash leaves at
 * most this many records in doubt; only the `concurrency` in flight can have reached the WMS.
 */
export function sendWindow(concurrency: number): number {
  return concurrency + Math.max(2, Math.ceil(concurrency / 4));
}

/** Keyset iteration over records, one batch in memory at a time. */
export async function* iterate(
  journal: Journal,
  query: { fileIds: number[]; targets?: Target[]; statuses: RecordRow['status'][] },
  batchSize: number,
): AsyncGenerator<RecordRow> {
  let afterId = 0;
  for (;;) {
    const rows = await journal.listRecords({ ...query, afterId, limit: batchSize });
    if (rows.length === 0) return;
    for (const r of rows) yield r;
    afterId = rows[rows.length - 1]!.id;
    if (rows.length < batchSize) return;
  }
}

/**
 * Stock synchronisation: one file is one session per owner (a stable sessionId derived from the file,
 * so a resumed session is the same session), sent in chunks with isLastChunk on the last. A failed chunk
 * is retried by the client, not the session. If any row of the file was refused, nothing is sent: a
 * partial synchronisation would zero the stock of the missing products.
 */
async function pushStockSync(
  file: { id: number; name: string; sha256: string },
  d: {
    journal: Journal;
    client: WmsClient;
    resolver: ReturnType<typeof createRefResolver>;
    settle: (row: RecordRow, r: RecordResult) => Promise<void>;
    leavePendingForWms: (row: RecordRow, err: WmsError, marked: boolean) => Promise<void>;
    logger: Logger;
    batchSize: number;
    chunkSize: number;
    signal?: AbortSignal | undefined;
  },
): Promise<void> {
  const q = { fileIds: [file.id], targets: ['StockSync' as Target] };
  const counts = await d.journal.countRecords(q);
  if ((counts.pending ?? 0) + (counts.in_doubt ?? 0) === 0) return;
  // pass 1: resolve every row; refuse the session if any row is refused
  let refused = counts.rejected ?? 0;
  let waiting = 0;
  const owners = new Set<string>();
  for await (const row of iterate(d.journal, { ...q, statuses: ['pending', 'in_doubt'] }, d.batchSize)) {
    const r = await d.resolver.resolve(row.payload);
    if (!r.ok && r.code === 'dependency_waiting') {
      // not the data: this row waits, and the session with it (the other rows stay pending)
      await d.settle(row, { status: 'held', outcome: 'held', error: r.message });
      waiting++;
      continue;
    }
    if (!r.ok) {
      const status = r.status === 'rejected' ? 'rejected' : 'held';
      await d.settle(row, { status, outcome: status, error: `${r.field}: ${r.message}`, reason: refReason(r) });
      refused++;
      continue;
    }
    const c = TARGET_INFO.StockSync.schema.safeParse(r.payload);
    if (!c.success) {
      await d.settle(row, {
        status: 'rejected',
        outcome: 'rejected',
        error: c.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; '),
        reason: { code: PushReason.SCHEMA, params: { field: c.error.issues.map((i) => i.path.join('.')).join(', ') } },
      });
      refused++;
      continue;
    }
    owners.add(String(r.payload['ownerId']));
  }
  if (refused > 0) {
    for await (const row of iterate(d.journal, { ...q, statuses: ['pending', 'in_doubt'] }, d.batchSize)) {
      await d.settle(row, {
        status: 'held',
        outcome: 'held',
        error: `stock sync of ${file.name} not sent: ${refused} row(s) were refused, and a partial synchronisation would zero the stock of the missing products; fix the rejects and drop the whole file again`,
        reason: { code: PushReason.STOCK_SYNC_NOT_SENT, params: { file: file.name, refused } },
      });
    }
    return;
  }
  if (waiting > 0) return;
  // pass 2: one session per owner, chunked
  for (const ownerId of owners) {
    const sessionId = uuid5(`${file.sha256}:${file.id}:${ownerId}`, STOCK_SYNC_NAMESPACE);
    let chunk: Array<{ row: RecordRow; productId: string; quantity: number }> = [];
    let broken: string | null = null;
    const flush = async (isLast: boolean) => {
      const rows = chunk;
      chunk = [];
      if (broken) {
        // an earlier chunk failed: sending the rest (and the last chunk) would apply a partial session
        await Promise.all(rows.map((c) => d.settle(c.row, { status: 'held', outcome: 'held', error: `stock sync session ${sessionId} stopped: ${broken}`, reason: { code: PushReason.STOCK_SYNC_STOPPED } })));
        return;
      }
      // issued together: one commit for the whole chunk, not one per row
      await Promise.all(rows.map((c) => d.journal.markSending(c.row.id)));
      try {
        await d.client.syncStock({ sessionId, ownerId, isLastChunk: isLast, products: rows.map((c) => ({ productId: c.productId, quantity: c.quantity })) }, { idempotent: true });
        await Promise.all(rows.map((c) => d.settle(c.row, { status: 'sent', outcome: 'updated', wmsId: null, error: null })));
      } catch (err) {
        if (isWmsUnavailable(err)) {
          // nothing of this chunk was applied: its rows, and the rest of the session, wait for the next run
          for (const c of rows) await d.leavePendingForWms(c.row, err as WmsError, true);
          throw err;
        }
        const status = isWmsError(err) && isRejection(err) ? 'rejected' : 'failed';
        broken = `a chunk failed: ${describeError(err)}`;
        await Promise.all(rows.map((c) => d.settle(c.row, { status, outcome: status, error: `stock sync session ${sessionId}: ${describeError(err)}`, reason: reasonOf(err) })));
      }
    };
    // look-ahead of one chunk, so the last chunk is known when it is sent
    let pending: typeof chunk | null = null;
    for await (const row of iterate(d.journal, { ...q, statuses: ['pending', 'in_doubt'] }, d.batchSize)) {
      if (d.signal?.aborted) return;
      const r = await d.resolver.resolve(row.payload);
      if (!r.ok || String(r.payload['ownerId']) !== ownerId) continue;
      chunk.push({ row, productId: String(r.payload['productId']), quantity: Number(r.payload['quantity']) });
      if (chunk.length >= d.chunkSize) {
        if (pending) {
          const next = chunk;
          chunk = pending;
          await flush(false);
          chunk = [];
          pending = next;
        } else {
          pending = chunk;
          chunk = [];
        }
      }
    }
    const tail = chunk;
    if (pending) {
      chunk = pending;
      await flush(tail.length === 0);
    }
    if (tail.length > 0) {
      chunk = tail;
      await flush(true);
    }
  }
}
