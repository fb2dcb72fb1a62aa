/**
 * Row shapes and row-to-object mapping shared by the journal's stores (SQLite, PostgreSQL and the in-memory store
 * of the unit tests): they have the same columns; they differ only in how a JSON column arrives (text in SQLite and
 * in memory, already parsed by pg), which the caller of toRecordRow says with `json`.
 */
import type { Target, RefResource } from '../wms/targets.js';
import type { Reason } from '../shared/reason.js';
import {
  WEBHOOK_LINK_TARGETS,
  type FileRow,
  type FileStatus,
  type NewRecord,
  type RecordRow,
  type RecordStatus,
  type WebhookEventRow,
  type WebhookEventStored,
  type XrefEntry,
} from './types.js';

export interface FileDbRow {
  id: number;
  channel: string;
  name: string;
  path: string;
  size: number;
  sha256: string;
  status: FileStatus;
  duplicate_of: number | null;
  error: string | null;
  run_id: string | null;
  owner: string | null;
  lease_until: string | null;
  created_at: string;
  updated_at: string;
}

/** A records row; `J` is how the store returns its JSON columns (source, payload, raw). */
export interface RecordDbRow<J> {
  id: number;
  file_id: number;
  target: Target;
  op: RecordRow['op'];
  key: string;
  source: J;
  mapping: string;
  payload: J;
  payload_hash: string;
  attachment_path: string | null;
  raw: J | null;
  status: RecordStatus;
  outcome: RecordRow['outcome'];
  wms_id: string | null;
  error: string | null;
  /** JSON text of a Reason (absent before migration 3) */
  reason?: string | null;
  attempts: number;
  updated_at: string;
}

/**
 * SQL for the id of the latest document (WEBHOOK_LINK_TARGETS) whose send returned the WMS id `wmsId` (a parameter
 * or column, as the store writes it), in the records table `records`: the webhook link, in both stores. It states the
 * condition of records_by_link_wms_id (migration 6 of each), as a query must for the planner to use a partial index
 * (test/unit/sqlite-link-index.test.ts and the PostgreSQL contract test read the plans).
 */
export function linkedRecordId(records: string, wmsId: string): string {
  return `SELECT l.id FROM ${records} l WHERE l.wms_id = ${wmsId} AND l.target IN (${linkTargetsSql()}) ORDER BY l.id DESC LIMIT 1`;
}

/** WEBHOOK_LINK_TARGETS as an SQL list of quoted literals: the link index's condition (both stores' migration 6). */
export function linkTargetsSql(): string {
  return WEBHOOK_LINK_TARGETS.map((t) => `'${t}'`).join(', ');
}

/**
 * The records columns a query selects: every one, or every one but `raw` (RecordQuery.withoutRaw), which comes back
 * null; `table` qualifies them (a RETURNING beside a joined CTE).
 */
export function recordSelectList(withoutRaw: boolean | undefined, table?: string): string {
  if (!table) return withoutRaw ? RECORD_COLUMNS_WITHOUT_RAW : '*';
  return withoutRaw
    ? RECORD_COLUMNS_WITHOUT_RAW.split(', ')
        .map((c) => (c.startsWith('NULL') ? c : `${table}.${c}`))
        .join(', ')
    : `${table}.*`;
}
const RECORD_COLUMNS_WITHOUT_RAW =
  'id, file_id, target, op, key, source, mapping, payload, payload_hash, attachment_path, NULL AS raw, status, outcome, wms_id, error, reason, attempts, updated_at';
const RECORD_COLUMNS = RECORD_COLUMNS_WITHOUT_RAW.replace('NULL AS raw', 'raw');

/**
 * The same columns named one by one, in the order toRecordRowFromValues reads them: for a store that reads rows
 * as arrays (better-sqlite3's raw mode builds no object per row: a page of the send loop or of a file's results
 * reads 2 to 3 us faster a row).
 */
export function recordValuesList(withoutRaw: boolean | undefined): string {
  return withoutRaw ? RECORD_COLUMNS_WITHOUT_RAW : RECORD_COLUMNS;
}

export interface XrefDbRow {
  resource: RefResource;
  key: string;
  wms_id: string;
  payload_hash: string | null;
  updated_at: string;
}

export interface WebhookDbRow {
  id: number;
  dedup_key: string;
  kind: string;
  received_at: string;
  body: string;
  delivered_at: string | null;
  record_id: number | null;
}

export function toFileRow(r: FileDbRow): FileRow {
  return {
    id: r.id,
    channel: r.channel,
    name: r.name,
    path: r.path,
    size: r.size,
    sha256: r.sha256,
    status: r.status,
    duplicateOf: r.duplicate_of,
    error: r.error,
    runId: r.run_id,
    owner: r.owner,
    leaseUntil: r.lease_until,
    createdAt: r.created_at,
    updatedAt: r.updated_at,
  };
}

export function toRecordRow<J>(r: RecordDbRow<J>, json: (v: J) => unknown): RecordRow {
  const row: RecordRow = {
    id: r.id,
    fileId: r.file_id,
    target: r.target,
    op: r.op,
    key: r.key,
    source: json(r.source) as RecordRow['source'],
    mapping: r.mapping,
    payload: json(r.payload) as Record<string, unknown>,
    payloadHash: r.payload_hash,
    status: r.status,
    outcome: r.outcome,
    wmsId: r.wms_id,
    error: r.error,
    attempts: r.attempts,
    updatedAt: r.updated_at,
  };
  return withOptionalColumns(row, r.attachment_path, r.raw, r.reason, json);
}

/** A records row whose JSON columns are text: SQLite's, and the in-memory store's (which holds them as SQLite does). */
export function toRecordRowFromText(r: RecordDbRow<string>): RecordRow {
  return toRecordRow(r, JSON.parse);
}

/** A row read as an array of the recordValuesList columns (text JSON columns, as SQLite returns them). */
export function toRecordRowFromValues(v: readonly unknown[]): RecordRow {
  const row: RecordRow = {
    id: v[0] as number,
    fileId: v[1] as number,
    target: v[2] as RecordRow['target'],
    op: v[3] as RecordRow['op'],
    key: v[4] as string,
    source: JSON.parse(v[5] as string) as RecordRow['source'],
    mapping: v[6] as string,
    payload: JSON.parse(v[7] as string) as Record<string, unknown>,
    payloadHash: v[8] as string,
    status: v[11] as RecordStatus,
    outcome: v[12] as RecordRow['outcome'],
    wmsId: v[13] as string | null,
    error: v[14] as string | null,
    attempts: v[16] as number,
    updatedAt: v[17] as string,
  };
  return withOptionalColumns(row, v[9] as string | null, v[10] as string | null, v[15] as string | null, JSON.parse);
}

function withOptionalColumns<J>(
  row: RecordRow,
  attachmentPath: string | null,
  raw: J | null,
  reason: string | null | undefined,
  json: (v: J) => unknown,
): RecordRow {
  if (attachmentPath !== null) row.attachmentPath = attachmentPath;
  if (raw !== null) row.raw = json(raw) as RecordRow['raw'];
  if (reason) {
    try {
      row.reason = JSON.parse(reason) as Reason;
    } catch {
      // a reason that cannot be read is shown as its English message
    }
  }
  return row;
}

export function toXref(r: XrefDbRow): XrefEntry {
  return { resource: r.resource, key: r.key, wmsId: r.wms_id, payloadHash: r.payload_hash, updatedAt: r.updated_at };
}

export function toWebhook(r: WebhookDbRow): WebhookEventRow {
  return {
    id: r.id,
    dedupKey: r.dedup_key,
    kind: r.kind,
    receivedAt: r.received_at,
    body: r.body,
    deliveredAt: r.delivered_at,
    recordId: r.record_id,
  };
}

/** The columns of a webhook_events row that storing an event reads back (RETURNING id, record_id). */
export type WebhookLinkDbRow = Pick<WebhookDbRow, 'id' | 'record_id'>;

/** What storing an event answers, from the row it stored (`stored`) or found under its dedup key. */
export function toWebhookStored(stored: boolean, r: WebhookLinkDbRow): WebhookEventStored {
  return { stored, id: r.id, recordId: r.record_id };
}

/**
 * A new record's column values, in the order both stores insert them: target, op, key, source, mapping,
 * payload, payload_hash, attachment_path, raw, status, error, reason (JSON columns as text).
 */
export function recordColumns(
  r: NewRecord,
): [
  target: string | null,
  op: string | null,
  key: string | null,
  source: string | null,
  mapping: string | null,
  payload: string | null,
  payloadHash: string | null,
  attachmentPath: string | null,
  raw: string | null,
  status: string,
  error: string | null,
  reason: string | null,
] {
  return [
    r.target ?? null,
    r.op ?? null,
    r.key ?? null,
    r.source === undefined ? null : JSON.stringify(r.source),
    r.mapping ?? null,
    r.payload === undefined ? null : JSON.stringify(r.payload),
    r.payloadHash ?? null,
    r.attachmentPath ?? null,
    r.raw === undefined ? null : JSON.stringify(r.raw),
    r.status ?? 'pending',
    r.error ?? null,
    r.reason ? JSON.stringify(r.reason) : null,
  ];
}

/** A new record's column values as recordColumns gives them (what crosses to the SQLite writer thread). */
export type RecordColumns = ReturnType<typeof recordColumns>;
