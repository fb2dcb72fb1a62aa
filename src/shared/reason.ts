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

/** A reason from a RowIssue-like object (first issue; `more` counts the others). */
export function reasonOfIssues(issues: ReadonlyArray<{ code: string; field?: string; value?: string }>): Reason | undefined {
  const first = issues[0];
  if (!first) return undefined;
  const params: Record<string, string | number> = {};
  if (first.field !== undefined) params['field'] = first.field;
  if (first.value !== undefined) params['value'] = first.value;
  if (issues.length > 1) params['more'] = issues.length - 1;
  return { code: first.code, params };
}
