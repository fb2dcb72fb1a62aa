/**
 * The registry of reason codes a row or a record can be refused, held or failed with. Every code the code
 * base can give a RowIssue (map and parse time) is in MapReason or ParseIssueCode: `RowIssue.code` and
 * `RowFail`'s code are typed by them, so a new code cannot be used without being listed here, and a test
 * (test/unit/reason-texts.test.ts) refuses a listed code without its text in every outbox locale.
 * Send-time codes are PushReason; the error codes of src/shared/errors.ts complete the set (reason.ts).
 * No imports: errors.ts types RowIssue with it.
 */

/** Codes of rows refused while mapping (src/map). */
export const MapReason = {
  REQUIRED: 'required',
  KEY_MISSING: 'key_missing',
  INVALID_NUMBER: 'invalid_number',
  IMPRECISE_NUMBER: 'imprecise_number',
  INVALID_INTEGER: 'invalid_integer',
  INVALID_DATE: 'invalid_date',
  INVALID_BOOLEAN: 'invalid_boolean',
  INVALID_EAN: 'invalid_ean',
  INVALID_CNPJ: 'invalid_cnpj',
  INVALID_NCM: 'invalid_ncm',
  INVALID_JSON: 'invalid_json',
  UNKNOWN_VALUE: 'unknown_value',
  /** a `table` expression met a value its table does not list */
  TABLE_UNKNOWN: 'table_unknown',
  /** a read-only lookup (map time) or a reference (send time) not found in the WMS */
  LOOKUP_NOT_FOUND: 'lookup_not_found',
  LOOKUP_AMBIGUOUS: 'lookup_ambiguous',
  LOOKUP_UNSUPPORTED: 'lookup_unsupported',
  /** the payload failed the interface's schema */
  SCHEMA: 'schema',
  HEADER_MISMATCH: 'header_mismatch',
  DUPLICATE_ITEM: 'duplicate_item',
  ORPHAN_ITEM: 'orphan_item',
  GROUP_NOT_CONTIGUOUS: 'group_not_contiguous',
  EXPLODE: 'explode',
  /** a StockSync file carries the same product twice (without `aggregate`) */
  DUPLICATE_KEY: 'duplicate_key',
  /** `aggregate`: the rows of one key disagree on a field that is not summed */
  AGGREGATE_DISAGREE: 'aggregate_disagree',
  /** `aggregate`: another row of the same key was rejected */
  AGGREGATE_INCOMPLETE: 'aggregate_incomplete',
  /** `aggregate`: a summed field is not a number */
  AGGREGATE_NOT_NUMBER: 'aggregate_not_number',
} as const;
export type MapReason = (typeof MapReason)[keyof typeof MapReason];

/**
 * Stable codes of parse error items (RowIssue.code):
 * - ragged_row: cell count differs from the header/declared columns
 * - bad_quote: unclosed or misplaced quote in a delimited line
 * - line_too_long: a physical line (or a record) longer than maxLineLength / lineLength
 * - invalid_encoding: bytes that are not valid in the declared encoding (UTF-8 channel fed Windows-1252)
 * - suspect_encoding: UTF-8 text read as Windows-1252/ISO-8859-1 ("SÃ£o" for "São")
 * - unknown_record: a fixed-width line no record type matches
 * - bad_json: a JSONL line that is not a JSON object
 * - not_an_object: a JSON item that is not an object
 * - repeated_header: a delimited row equal to the header line (two exports concatenated)
 * - control_character: NUL, another control character (tab...) or a bidi override inside a field
 * - cell_error: a spreadsheet cell holding an Excel error (#N/A, #VALUE!...)
 */
export const ParseIssueCode = {
  RAGGED_ROW: 'ragged_row',
  BAD_QUOTE: 'bad_quote',
  LINE_TOO_LONG: 'line_too_long',
  INVALID_ENCODING: 'invalid_encoding',
  SUSPECT_ENCODING: 'suspect_encoding',
  UNKNOWN_RECORD: 'unknown_record',
  BAD_JSON: 'bad_json',
  NOT_AN_OBJECT: 'not_an_object',
  REPEATED_HEADER: 'repeated_header',
  CONTROL_CHARACTER: 'control_character',
  CELL_ERROR: 'cell_error',
} as const;
export type ParseIssueCode = (typeof ParseIssueCode)[keyof typeof ParseIssueCode];

/** A RowIssue's code: map time or parse time. */
export type RowIssueCode = MapReason | ParseIssueCode;

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
export type PushReason = (typeof PushReason)[keyof typeof PushReason];
