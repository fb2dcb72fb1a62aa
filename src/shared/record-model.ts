/**
 * The record model's floor: the types a source row and a mapped record are made of, shared by parse/ (which yields
 * RawRows), map/ (which turns them into records with an op and a source location) and journal/ (which stores both),
 * so the journal depends on neither parse/ nor map/ (eslint.config.js LAYERS). parse/types.ts and map/types.ts
 * re-export them: their producers' faces.
 */
import type { Reason } from './reason.js';

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

/** Where a record came from. Lines are 1-based physical lines of the source file. */
export interface SourceLocation {
  line: number;
  /** last line, for documents made of several rows */
  lineEnd?: number;
  /** XML element path (e.g. nfeProc/NFe/infNFe/det[3]) when the source is XML */
  element?: string;
}

/** What a record asks the WMS to do with its key. */
export type RecordOp = 'create' | 'update' | 'upsert' | 'delete';

/**
 * A source row as the journal keeps it: the row without its fields by column name (journal/types.ts StoredRawRow
 * says why).
 */
export type KeptRawRow = Omit<RawRow, 'fields'>;

/**
 * A record as it is journaled, but for its target (wms/targets.ts, above this floor) and its source rows (which
 * each side types its own way): what map/ makes of a mapping's output (map/mapped-records.ts RecordToJournal, a
 * record to send or a reject) and the journal takes (journal/types.ts NewRecord), stated once for both.
 */
export interface JournaledRecord {
  op: RecordOp;
  key: string;
  source: SourceLocation;
  mapping: string;
  payload: Record<string, unknown>;
  /** sha256 of the canonical JSON of the payload (refs unresolved) */
  payloadHash: string;
  attachmentPath?: string;
  /** records rejected at map time are journaled too, with status 'rejected' and the issues */
  status?: 'pending' | 'rejected';
  error?: string;
  /** the error as a stable code and its parameters: the outbox renders it in the reader's language */
  reason?: Reason;
}
