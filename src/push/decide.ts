/**
 * The send decision, pure: what an error from the WMS means for a record, and what to do next. No I/O,
 * no clock, no journal: the pusher (pipeline.ts, record.ts) asks, then does what it is told. Every result
 * carries a stable reason code (shared/reason.ts) beside its English text; nothing downstream reads the
 * text to recover a meaning.
 */
import type { RecordResult, RecordRow, XrefEntry } from '../journal/types.js';
import { isWmsError, WmsErrorCode, type WmsError } from '../wms/errors.js';
import { TARGET_INFO } from '../wms/targets.js';
import { BridgeError, errorMessage } from '../shared/errors.js';
import { OtherReason, PushReason, type Reason } from '../shared/reason.js';
import { SendRefused, type SendOutput } from './senders.js';

/** What went wrong with a request, as far as the record is concerned. */
export type ErrorClass =
  /** refused before any request (a field rule of the sender): fix the data */
  | 'refused'
  /** not an error of the WMS (a bug, the journal): the record failed, the run goes on */
  | 'internal'
  /** the WMS refused the credentials (or a token expired in flight) */
  | 'auth'
  /** a create refused because its natural key exists: evidence of an earlier delivery */
  | 'conflict'
  /** the WMS refused the data: fixing the data is the way out */
  | 'rejection'
  /** no answer, 5xx, throttling beyond the retries: nothing was applied, try later */
  | 'unavailable'
  /** the request may have taken effect (answer lost after it left) */
  | 'maybe-applied'
  /** anything else: failed, retried by the next runs */
  | 'failed';

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
export function isRejection(err: WmsError): boolean {
  if (err.code === WmsErrorCode.VALIDATION || err.code === WmsErrorCode.ENVELOPE || err.code === WmsErrorCode.RESPONSE) return true;
  if (err.code === WmsErrorCode.HTTP && err.httpStatus !== undefined && err.httpStatus >= 400 && err.httpStatus < 500 && err.httpStatus !== 408) return true;
  return false;
}

/**
 * A create refused because its natural key already exists: HTTP 409, or a refusal whose text says it
 * exists (or is a duplicate) and names the record's key. (The WMS's own words: the interface gives no code.)
 */
export function isConflict(row: Pick<RecordRow, 'target' | 'key'>, err: WmsError): boolean {
  // only a send that creates a record with a natural key (one cross-referenced) is evidenced by a conflict
  if (TARGET_INFO[row.target].xref === null) return false;
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

/** The class of an error thrown by a send, in the order the checks must be made. */
export function classify(row: Pick<RecordRow, 'target' | 'key'>, err: unknown): ErrorClass {
  if (err instanceof SendRefused) return 'refused';
  if (!isWmsError(err)) return 'internal';
  if (err.code === WmsErrorCode.AUTH) return 'auth';
  if (isConflict(row, err)) return 'conflict';
  if (isRejection(err)) return 'rejection';
  if (isWmsUnavailable(err)) return 'unavailable';
  if (err.mayHaveReachedServer) return 'maybe-applied';
  return 'failed';
}

export function describeError(err: unknown): string {
  return isWmsError(err) ? err.message : errorMessage(err);
}

/** The error as a stable code and the values the outbox's message templates need. */
export function reasonOf(err: unknown): Reason {
  if (isWmsError(err)) {
    const params: Record<string, string | number> = {};
    if (err.httpStatus !== undefined) params['status'] = err.httpStatus;
    const said = err.envelopeMessage ?? err.envelopeError;
    if (said) params['message'] = said;
    if (err.networkCode) params['network'] = err.networkCode;
    return { code: err.code, params };
  }
  if (err instanceof SendRefused)
    return {
      code: PushReason.REFUSED,
      params: { field: err.field ?? '', message: err.message, ...(err.why ? { why: err.why } : {}), ...(err.value !== undefined ? { value: err.value } : {}) },
    };
  if (err instanceof BridgeError) return { code: err.code, params: { message: err.message } };
  return { code: OtherReason.INTERNAL, params: { message: errorMessage(err) } };
}

/** What the pusher does with a record after a send (or a resend) failed. */
export type ErrorAction =
  /** settle the record with this result; `stopRun`: no record can be sent any more (credentials refused) */
  | { act: 'settle'; result: RecordResult; stopRun?: string }
  /** the key exists in the WMS: delivered (outcome already-existed), with the id from the answer or a read */
  | { act: 'already-existed' }
  /** the WMS did not answer: nothing was applied, the record stays pending for the next run */
  | { act: 'wait-for-wms' }
  /** the request may have taken effect: read it back, then decideAfterReadBack */
  | { act: 'read-back' };

const failed = (err: unknown): RecordResult => ({ status: 'failed', outcome: 'failed', error: describeError(err), reason: reasonOf(err) });
const rejected = (err: unknown): RecordResult => ({ status: 'rejected', outcome: 'rejected', error: describeError(err), reason: reasonOf(err) });

/**
 * After a failed send. `stage` 'send' is the first attempt; 'resend' follows a read-back (`readBack`
 * says what it found: 'absent' means the first send did not take effect, 'unknown' that the interface
 * cannot tell, so an unanswered resend is only "waiting" when the first is known absent).
 * `authPath`: the authorization endpoint (a refusal there stops the run).
 */
export function decideOnError(
  row: Pick<RecordRow, 'target' | 'key'>,
  err: unknown,
  at: { stage: 'send' } | { stage: 'resend'; readBack: 'absent' | 'unknown' },
  authPath: string,
): ErrorAction {
  const cls = classify(row, err);
  if (at.stage === 'resend') {
    // the first send may have taken effect: a conflict is its delivery, a silence is not a clean "pending"
    if (cls === 'conflict') return { act: 'already-existed' };
    if (cls === 'rejection') return { act: 'settle', result: rejected(err) };
    if (cls === 'unavailable' && at.readBack === 'absent') return { act: 'wait-for-wms' };
    if (isWmsError(err) && err.mayHaveReachedServer)
      return { act: 'settle', result: { status: 'in_doubt', outcome: 'in-doubt', error: describeError(err), reason: reasonOf(err) } };
    return { act: 'settle', result: failed(err) };
  }
  switch (cls) {
    case 'refused': {
      const e = err as SendRefused;
      return { act: 'settle', result: { status: 'rejected', outcome: 'rejected', error: `${e.field ?? 'record'}: ${e.message}`, reason: reasonOf(err) } };
    }
    case 'internal':
    case 'failed':
      return { act: 'settle', result: failed(err) };
    case 'auth': {
      // the credentials themselves were refused (authorize, or a 403 firewall block): no record can be
      // sent, stop the run; a 401 on one request (a token that expired in flight) fails only that record
      const e = err as WmsError;
      const stop = e.path === authPath || e.httpStatus === 403;
      return { act: 'settle', result: failed(err), ...(stop ? { stopRun: `the WMS refused authentication: ${e.message}` } : {}) };
    }
    case 'conflict':
      return { act: 'already-existed' };
    case 'rejection':
      return { act: 'settle', result: rejected(err) };
    case 'unavailable':
      return { act: 'wait-for-wms' };
    case 'maybe-applied':
      return { act: 'read-back' };
  }
}

/** A channel's rule for a record whose send may or may not have taken effect. */
export type InDoubtPolicy = 'resend' | 'hold';

/** What a read-back found: the record, 'absent' (known not there), or null (the interface cannot tell). */
export type ReadBack = SendOutput | 'absent' | null;

export type AfterReadBack = { act: 'delivered'; out: SendOutput } | { act: 'send' } | { act: 'settle'; result: RecordResult };

/**
 * After reading back a record whose send may have taken effect. `why`: 'crash' (found in doubt when the
 * run started) or the error of the send that may have reached the WMS.
 */
export function decideAfterReadBack(rb: ReadBack, policy: InDoubtPolicy, why: { crash: true; checked?: string } | { err: unknown }): AfterReadBack {
  if (rb && rb !== 'absent') return { act: 'delivered', out: rb };
  if (rb === 'absent' || policy === 'resend') return { act: 'send' };
  if ('crash' in why) {
    // what was checked before holding it (`wmsbridge resolve --list` shows it): the person starts from there
    const checked = why.checked ? ` (checked: ${why.checked})` : '';
    return {
      act: 'settle',
      result: {
        status: 'held',
        outcome: 'in-doubt',
        error: `in doubt: a send was in flight when wmsbridge stopped and the interface cannot tell whether it took effect${checked}; check the WMS, then \`wmsbridge resolve\``,
        reason: { code: PushReason.IN_DOUBT },
      },
    };
  }
  return {
    act: 'settle',
    result: {
      status: 'held',
      outcome: 'in-doubt',
      error: `in doubt: ${describeError(why.err)}; the interface cannot tell whether it took effect: check the WMS, then \`wmsbridge resolve\``,
      reason: { code: PushReason.IN_DOUBT, params: reasonOf(why.err).params ?? {} },
    },
  };
}

/** A read-back of a record found in doubt at start-up that itself failed. */
export function decideReadBackFailed(err: unknown): RecordResult {
  if (isWmsUnavailable(err))
    return {
      status: 'in_doubt',
      outcome: 'in-doubt',
      error: `in doubt, the WMS was unavailable for the read-back: ${describeError(err)}`,
      reason: reasonOf(err),
    };
  return {
    status: 'failed',
    outcome: 'failed',
    error: `in doubt, read-back failed: ${describeError(err)}`,
    reason: { code: PushReason.IN_DOUBT_READBACK_FAILED, params: reasonOf(err).params ?? {} },
  };
}

/**
 * Before a send, from the cross-reference: the same payload already delivered for this key is not sent
 * again; a create whose key was created with other data cannot be sent (the interface has no update).
 */
export function decideBeforeSend(
  row: Pick<RecordRow, 'key' | 'op' | 'payloadHash'>,
  known: XrefEntry | undefined,
  label: string,
): { act: 'send' } | { act: 'settle'; result: RecordResult } {
  if (!known) return { act: 'send' };
  if (known.payloadHash === row.payloadHash) return { act: 'settle', result: { status: 'sent', outcome: 'unchanged', wmsId: known.wmsId } };
  if (row.op === 'create') {
    return {
      act: 'settle',
      result: {
        status: 'rejected',
        outcome: 'rejected',
        error: `${label} '${row.key}' was already created (WMS id ${known.wmsId}) with other data, and the interface has no update for it: change it in the WMS`,
        reason: { code: PushReason.ALREADY_CREATED, params: { resource: label, key: row.key, wmsId: known.wmsId } },
      },
    };
  }
  return { act: 'send' };
}

/** Where a channel's in-doubt rule applies: documents (held by default) or master data (resent). */
export function inDoubtPolicyFor(document: boolean, p: { masterData: InDoubtPolicy; documents: InDoubtPolicy } | undefined): InDoubtPolicy {
  return document ? (p?.documents ?? 'hold') : (p?.masterData ?? 'resend');
}
