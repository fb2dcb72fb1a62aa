/**
 * What the parsers yield. A row-level problem (ragged row, broken quote, unknown record type, bad JSON
 * line, over-long line) is data: an `error` item with its location and the raw text/cells, so the
 * rejects writer can write it back. A whole-file problem throws InputError instead.
 */
import type { RowIssue } from '../shared/errors.js';
import type { Encoding } from './options.js';

/**
 * The last column of a delimited rejects file (src/outbox/rejects.ts) with the reasons: a rejects file
 * dropped again after fixing is read with it (a header row repeated with it is recognised as a header).
 */
export const REJECT_REASON_COLUMN = 'wmsbridge_error';

/** A parsed source row: values by column name (or index) plus its location. */
export interface RawRow {
  /** 1-based physical line (first line for multi-line quoted fields) */
  line: number;
  lineEnd?: number;
  /** delimited: column name (or "0","1".. without header) -> value; fixed-width: field -> value; XML: path -> value */
  fields: Record<string, string>;
  /** delimited: the row as an array in file order (to write rejects back in the same shape) */
  cells?: string[];
  /** fixed-width: the record type; XML: the element path */
  recordType?: string;
  /** the raw text of the line(s), when the parser keeps it (fixed-width, delimited); xlsx: the typed cells as JSON */
  text?: string;
  /** xlsx: the sheet and each column's letter, so a problem names its cell ("sheet Produtos, cell D7"); shared by every row */
  sheet?: SheetPlace;
}

/** Where a spreadsheet row's values are: the sheet's name and the letter of each column (by column name). */
export interface SheetPlace {
  name: string;
  letters: Readonly<Record<string, string>>;
}

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
