/**
 * Why a record needs attention, as data: a stable code and the values its message template needs. The
 * journal keeps it beside the English `error` text (for logs and machines); the outbox renders it in the
 * reader's language with the catalogs of src/i18n. Codes never change meaning; new ones may be added
 * (a code without a template is shown with its English message).
 */
export interface Reason {
  /** a RowIssue code (map time: required, invalid_number, schema, ...), a push code (below) or an ErrorCode (E_WMS_*) */
  code: string;
  params?: Record<string, string | number>;
}

/** Codes produced when sending (src/push). */
export const PushReason = {
  /** a lookup (reference) not found in the WMS: fix the data */
  LOOKUP_NOT_FOUND: 'lookup_not_found',
  /** a record it depends on was not delivered */
  DEPENDENCY_FAILED: 'dependency_failed',
  /** a record it depends on did not settle in time (another instance) */
  DEPENDENCY_PENDING: 'dependency_pending',
  /** a record it depends on was not delivered because the WMS was unavailable: the next run sends both */
  DEPENDENCY_WAITING: 'dependency_waiting',
  /** an earlier operation on the same target waits for the WMS: the next run sends both, in order */
  SEQUENCE_WAITING: 'sequence_waiting',
  /** an earlier operation on the same target was not delivered: not sent, to keep the source order */
  SEQUENCE_NOT_DELIVERED: 'sequence_not_delivered',
  /** the payload failed the interface's schema */
  SCHEMA: 'schema',
  /** refused before sending by the sender (field rule) */
  REFUSED: 'refused',
  /** created earlier with other data, and the interface has no update */
  ALREADY_CREATED: 'already_created',
  /** a send was in flight at a stop: check the WMS, then `wmsbridge resolve` */
  IN_DOUBT: 'in_doubt',
  /** in doubt, and reading it back failed */
  IN_DOUBT_READBACK_FAILED: 'in_doubt_readback_failed',
  /** a stock sync file with refused rows is not sent at all */
  STOCK_SYNC_NOT_SENT: 'stock_sync_not_sent',
  /** the stock sync session stopped */
  STOCK_SYNC_STOPPED: 'stock_sync_stopped',
} as const;

/**
 * Held only because the WMS was unavailable (for a dependency or an earlier operation on the same target),
 * not because of the data: the next run sends these records again without a person.
 */
export const WAITING_FOR_WMS: ReadonlySet<string> = new Set([PushReason.DEPENDENCY_WAITING, PushReason.SEQUENCE_WAITING]);

/**
 * The reason of a journal record. Records written before reasons were journaled (journal migration 3)
 * carry only their English text: the text forms those versions wrote are recognised here, and only here.
 */
export function reasonOfRecord(r: { reason?: Reason | null | undefined; error?: string | null | undefined }): Reason | undefined {
  if (r.reason) return r.reason;
  const e = r.error ?? '';
  if (e.startsWith('waiting for ')) return { code: PushReason.DEPENDENCY_WAITING };
  const dep = /depends on (\w+) '([^']*)'/.exec(e);
  if (dep)
    return { code: /not settled yet/.test(e) ? PushReason.DEPENDENCY_PENDING : PushReason.DEPENDENCY_FAILED, params: { resource: dep[1]!, value: dep[2]! } };
  return undefined;
}

/** Held only because the WMS was unavailable (see WAITING_FOR_WMS). */
export function isWaitingForWms(r: { status: string; reason?: Reason | null | undefined; error?: string | null | undefined }): boolean {
  return r.status === 'held' && WAITING_FOR_WMS.has(reasonOfRecord(r)?.code ?? '');
}

/**
 * Held because a record it refers to was not delivered, or did not settle in time (another instance):
 * not in doubt (those wait for a person). Its row can be fixed and dropped again, and every run looks at
 * it again.
 */
export function isHeldOnDependency(r: {
  status: string;
  outcome: string | null;
  reason?: Reason | null | undefined;
  error?: string | null | undefined;
}): boolean {
  const code = reasonOfRecord(r)?.code;
  return r.status === 'held' && r.outcome === 'held' && (code === PushReason.DEPENDENCY_FAILED || code === PushReason.DEPENDENCY_PENDING);
}

/** Whether a reason is `code`, or names it among its issues' codes (a row refused for several problems). */
export function hasCode(reason: Reason | null | undefined, code: string): boolean {
  if (!reason) return false;
  if (reason.code === code) return true;
  const codes = reason.params?.['codes'];
  return typeof codes === 'string' && codes.split(',').includes(code);
}

/** A reason from a RowIssue-like object (first issue; `more` counts the others). */
export function reasonOfIssues(issues: ReadonlyArray<{ code: string; field?: string; value?: string; sheet?: string; cell?: string }>): Reason | undefined {
  const first = issues[0];
  if (!first) return undefined;
  const params: Record<string, string | number> = {};
  if (first.field !== undefined) params['field'] = first.field;
  if (first.value !== undefined) params['value'] = first.value;
  if (first.sheet !== undefined && first.cell !== undefined) {
    params['sheet'] = first.sheet;
    params['cell'] = first.cell;
  }
  if (issues.length > 1) {
    params['more'] = issues.length - 1;
    // every code, so a reader can ask "is one of them X" without reading the message
    params['codes'] = [...new Set(issues.map((i) => i.code))].join(',');
  }
  return { code: first.code, params };
}
