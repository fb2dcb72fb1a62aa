/**
 * What the parsers yield. A row-level problem (ragged row, broken quote, unknown record type, bad JSON
 * line, over-long line) is data: an `error` item with its location and the raw text/cells, so the
 * rejects writer can write it back. A whole-file problem throws InputError instead.
 */
import type { RowIssue } from '../shared/errors.js';
import type { Encoding } from './options.js';
import type { RawRow } from '../shared/record-model.js';

/**
 * The last column of a delimited rejects file (src/outbox/rejects.ts) with the reasons: a rejects file
 * dropped again after fixing is read with it (a header row repeated with it is recognised as a header).
 */
export const REJECT_REASON_COLUMN = 'wmsbridge_error';

export type { RawRow, SheetPlace } from '../shared/record-model.js';

export interface ParsedRowItem {
  kind: 'row';
  row: RawRow;
}

export interface ParsedErrorItem {
  kind: 'error';
  /** 1-based physical line where the problem starts */
  line: number;
  /** last physical line, when the problem spans several (a quoted field with newlines) */
  lineEnd?: number;
  /** the raw text of the line(s), without the line terminator */
  text?: string;
  /** the cells that could be split, when any (delimited) */
  cells?: string[];
  /** fixed-width: the record type, when known */
  recordType?: string;
  issue: RowIssue;
}

export type ParsedItem = ParsedRowItem | ParsedErrorItem;

/** Stable codes of parse error items (RowIssue.code): the registry of reason codes holds them (shared/reason-codes.ts). */
export { ParseIssueCode } from '../shared/reason-codes.js';

/** Counters a caller may keep while iterating (see `countItems` in index.ts). */
export interface ParseSummary {
  rows: number;
  errors: number;
  bytes: number;
}

/** Extra facts a parser learns while reading, useful to write rejects back in the same shape. */
export interface ParseFacts {
  /** delimited with header: the header cells as read (trimmed, before de-duplication) */
  header?: string[];
  /** the effective column names (after _2/_3 suffixing for duplicates) */
  columns?: string[];
  /** duplicate header names that were renamed ("name" -> "name_2") */
  renamedColumns?: Array<{ from: string; to: string }>;
  /** the line terminator seen first in the file */
  newline?: '\r\n' | '\n' | '\r';
  /** xml: the item path actually used (one of the alternatives, with or without the optional root) */
  itemPath?: string;
  /** bytes read from the file so far */
  bytes: number;
  /** text formats: the encoding the file was read with (its byte order mark's, else the option) */
  encoding?: Encoding;
  /** the file starts with a byte order mark (the rejects writer writes it back) */
  bom?: boolean;
  /** xlsx: the sheet read, and every sheet of the workbook in tab order (the rejects workbook keeps its position) */
  sheetName?: string;
  sheetNames?: string[];
}
