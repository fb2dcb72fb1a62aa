/**
 * The contract between mapping (parse + map, pure) and sending (push). A mapping turns source rows
 * into MappedRecords; a record may hold references to WMS ids that are not known yet at map time
 * (a product's category may be created in the same run). Those are `RefValue` placeholders,
 * resolved by push just before sending, after everything of a lower tier has been settled.
 */
import type { RefResource, Target } from '../wms/targets.js';
import type { RowIssue } from '../shared/errors.js';
import type { RawRow, RecordOp, SourceLocation } from '../shared/record-model.js';

/**
 * A reference to a WMS id, resolved at send time.
 * - Without `by`: the natural key of a record wmsbridge sends (e.g. a Category's codeERP). It is looked
 *   up in the journal's cross-reference; a record of the same run with that target and key is a
 *   dependency (sent first; when it fails, the referring record is held).
 * - With `by`: a WMS reference read (Warehouse by codeERP, Dock by name, LogisticsProfile by
 *   mnemonic, MaterialStatus by name, Provider/ShippingCompany by codeERP, Owners by code, Company or
 *   Branch by name or cnpj). The cross-reference is tried first.
 */
export interface RefValue {
  $ref: { resource: RefResource; value: string; by?: string };
}

export function isRef(v: unknown): v is RefValue {
  return typeof v === 'object' && v !== null && '$ref' in v && typeof (v as RefValue).$ref === 'object';
}

export type { RecordOp, SourceLocation } from '../shared/record-model.js';

export interface MappedRecord {
  target: Target;
  op: RecordOp;
  /** natural key, unique per target (codeERP, code, "nf|provider", "order|owner"...) */
  key: string;
  source: SourceLocation;
  /** the request body, possibly holding RefValue placeholders at any depth */
  payload: Record<string, unknown>;
  /** PickingListAttachment only: path of the file to attach, relative to the channel's inbox */
  attachmentPath?: string;
  /** name of the mapping that produced it */
  mapping: string;
  /** the source row(s) it was made from (kept for rejects written at send time) */
  raw: RawRow[];
}

/** A source row (or document) that could not be mapped: written to the rejects and result files. */
export interface RejectedRow {
  source: SourceLocation;
  /** the raw source row(s) as read (several for a document), to rewrite them in the original format */
  raw: RawRow[];
  issues: RowIssue[];
  mapping: string;
  /** the natural key when it could be computed */
  key?: string;
  target?: Target;
}

export type MapOutput = { ok: true; record: MappedRecord } | { ok: false; reject: RejectedRow };

/**
 * Read-only reference data (Company, Branch, Warehouse, Dock, LogisticsProfile, MaterialStatus),
 * preloaded from the WMS before a file is mapped, so lookups are synchronous and a code that is not
 * found rejects the row at map time with the original row at hand.
 */
export interface ReferenceCache {
  /** the WMS id of the record of `resource` whose field `by` equals `value` (case-insensitive, trimmed) */
  find(resource: RefResource, by: string, value: string): string | undefined;
  /** whether this resource was loaded at all (a mapping needing an unloaded resource is a bug) */
  has(resource: RefResource): boolean;
  /**
   * Optional: every loaded record of `resource` whose field `by` equals `value` (case-insensitive,
   * trimmed), as read from the WMS. Lookups with `where` (Dock name within a warehouse) or `select`
   * (a Warehouse's branchID) need it; without it such a lookup rejects the row ('lookup_unsupported').
   */
  findAll?(resource: RefResource, by: string, value: string): ReadonlyArray<Readonly<Record<string, unknown>>>;
}

/** Counters a mapping keeps while mapping one file (pass an object in MapContext.stats to read them). */
export interface MapStats {
  /** source rows seen (parse error items included) */
  rows: number;
  /** rows skipped by the mapping's filter (or record types a document mapping does not use) */
  skipped: number;
  /** records and documents produced */
  records: number;
  /** rejects produced (a rejected document counts once) */
  rejects: number;
  /** rows excluded by the mapping's `skip` rules (not counted in `skipped`) */
  excluded?: number;
}

/** What a mapping needs at map time besides its rows. */
export interface MapContext {
  /** the file name as dropped, for messages */
  file: string;
  refs: ReferenceCache;
  /** "now" for templates and default dates */
  now: Date;
  /** optional counters, incremented while mapping */
  stats?: MapStats;
  /**
   * Preview without a WMS: read-only lookups are not resolved but yield a LookupPlaceholder that
   * prints as `<lookup Warehouse codeERP=CD-SP01>` (and validates as a UUID). Never set it in a run.
   */
  symbolicLookups?: boolean;
  /** where rows that are not sent are told: not selected by the filter, or excluded by a `skip` rule (unsent.ts) */
  unsent?: UnsentSink;
}

/**
 * Rows a mapping reads and does not send, told as they are met (never dropped in silence): `notSelected` when the
 * mapping's filter does not select the row, `excluded` when a `skip` rule of the mapping excludes it.
 */
export interface UnsentSink {
  notSelected(line: number, lineEnd?: number): void;
  excluded(line: number, mapping: string, reason: string, lineEnd?: number, target?: string): void;
}
