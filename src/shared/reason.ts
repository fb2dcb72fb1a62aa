import { ErrorCode } from './errors.js';
import { MapReason, ParseIssueCode, PushReason } from './reason-codes.js';

/**
 * Why a record needs attention, as data: a stable code and the values its message template needs. The
 * journal keeps it beside the English `error` text (for logs and machines); the outbox renders it in the
 * reader's language with the catalogs of src/i18n. Codes never change meaning; new ones may be added
 * (a code without a template is shown with its English message).
 */
export interface Reason {
  /** a RowIssue code (map time: required, invalid_number, schema, ...), a push code (below) or an ErrorCode (E_WMS_*) */
  code: string;
  /**
   * the values its template needs: `field` the WMS field, `column` the source column(s) that feed it (what the
   * person edits: the mapping knows them), `value` the value refused, `resource`, `status`, `message`...
   */
  params?: Record<string, string | number>;
}

export { MapReason, ParseIssueCode, PushReason, type RowIssueCode } from './reason-codes.js';

/** Codes a reason has besides the registry's and ErrorCode: a crash in the send loop, the run's outage line. */
export const OtherReason = {
  INTERNAL: 'E_INTERNAL',
  WMS_UNAVAILABLE: 'E_WMS_UNAVAILABLE',
} as const;

/** Every code a Reason can carry: what the outbox must have a text for, in every locale. */
export type ReasonCode = MapReason | ParseIssueCode | PushReason | ErrorCode | (typeof OtherReason)[keyof typeof OtherReason];

/** The registry as a list (test/unit/reason-texts.test.ts walks it against the catalogs). */
export const REASON_CODES: readonly ReasonCode[] = [
  ...new Set<ReasonCode>([
    ...Object.values(MapReason),
    ...Object.values(ParseIssueCode),
    ...Object.values(PushReason),
    ...Object.values(ErrorCode),
    ...Object.values(OtherReason),
  ]),
];

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
export function reasonOfIssues(
  issues: ReadonlyArray<{
    code: string;
    field?: string;
    column?: string;
    value?: string;
    sheet?: string;
    cell?: string;
    recordType?: string;
    expected?: string;
  }>,
): Reason | undefined {
  const first = issues[0];
  if (!first) return undefined;
  const params: Record<string, string | number> = {};
  if (first.field !== undefined) params['field'] = first.field;
  if (first.column !== undefined) params['column'] = first.column;
  if (first.value !== undefined) params['value'] = first.value;
  if (first.recordType !== undefined) params['recordType'] = first.recordType;
  if (first.expected !== undefined) params['expected'] = first.expected;
  if (first.sheet !== undefined && first.cell !== undefined) {
    params['sheet'] = first.sheet;
    params['cell'] = first.cell;
  }
  if (issues.length > 1) {
    params['more'] = issues.length - 1;
    // where the others are, as the person editing the file knows them (the columns; else the fields)
    const others = [...new Set(issues.slice(1).flatMap((i) => (i.column ?? i.field ?? '').split(', ').filter((x) => x !== '')))];
    if (others.length > 0) params['others'] = others.slice(0, 5).join(', ') + (others.length > 5 ? ', ...' : '');
    // every code, so a reader can ask "is one of them X" without reading the message
    params['codes'] = [...new Set(issues.map((i) => i.code))].join(',');
  }
  return { code: first.code, params };
}
