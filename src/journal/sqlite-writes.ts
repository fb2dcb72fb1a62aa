/**
 * The send loop's per-record writes to the SQLite journal, in one table shared by the two places that
 * apply them: the journal's own connection (':memory:' journals, `writer: 'inline'`) and the writer
 * thread (sqlite-writer.ts). Each write is a plain function of a statement cache and structured-clonable
 * arguments, so a batch of them can cross to the thread as data and commit there in one transaction.
 */
import type Database from 'better-sqlite3';
import type { RecordResult, SettleXref, WebhookEventStored } from './types.js';
import type { NewWebhookEvent } from './store.js';
import type { RefResource } from '../wms/targets.js';
import { linkedRecordId, toWebhookStored, type RecordColumns, type WebhookLinkDbRow } from './rows.js';

export type StatementCache = (sql: string) => Database.Statement;

/** The webhook link's record id for one WMS id parameter (rows.ts linkedRecordId), in this store's SQL. */
export const LINKED_RECORD_ID = linkedRecordId('records', '?');

/** The batch's one timestamp: every write of a batch commits at the same moment (one Date per batch, not per write). */
let batchAt: string | null = null;
const now = (): string => batchAt ?? new Date().toISOString();

export const QUEUED_WRITES = {
  /**
   * A batch of a file's new records (columns as rows.ts recordColumns gives them), all or none: under a savepoint,
   * since the writes of a batch commit together and one that fails must fail alone. Returns the last record's id.
   */
  insertRecords(stmt: StatementCache, fileId: number, rows: readonly RecordColumns[], ts: string): number {
    stmt('SAVEPOINT insert_records').run();
    try {
      const insert = stmt(
        `INSERT INTO records (file_id, target, op, key, source, mapping, payload, payload_hash, attachment_path, raw, status, error, reason, attempts, updated_at)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 0, ?)`,
      );
      let last = 0;
      for (const r of rows) last = Number(insert.run(fileId, ...r, ts).lastInsertRowid);
      stmt('RELEASE insert_records').run();
      return last;
    } catch (err) {
      stmt('ROLLBACK TO insert_records').run();
      stmt('RELEASE insert_records').run();
      throw err;
    }
  },

  markSending(stmt: StatementCache, recordId: number): void {
    const info = stmt(`UPDATE records SET status = 'sending', attempts = attempts + 1, updated_at = ? WHERE id = ?`).run(now(), recordId);
    if (info.changes === 0) throw new Error(`record ${recordId} not found`);
  },

  /** `xref`: the delivered record's cross-reference and identifying fields, written first, in the same transaction */
  settle(stmt: StatementCache, recordId: number, result: RecordResult, xref?: SettleXref): void {
    if (xref) {
      QUEUED_WRITES.putXref(stmt, xref.resource, xref.key, xref.wmsId, xref.payloadHash);
      if (xref.fields.length > 0) QUEUED_WRITES.putXrefFields(stmt, xref.resource, xref.key, xref.fields);
    }
    const keepWmsId = result.wmsId === undefined;
    const info = stmt(`UPDATE records SET status = ?, outcome = ?, error = ?, reason = ?, updated_at = ?${keepWmsId ? '' : ', wms_id = ?'} WHERE id = ?`).run(
      ...[
        result.status,
        result.outcome,
        result.error ?? null,
        result.reason ? JSON.stringify(result.reason) : null,
        now(),
        ...(keepWmsId ? [] : [result.wmsId ?? null]),
        recordId,
      ],
    );
    if (info.changes === 0) throw new Error(`record ${recordId} not found`);
  },

  putXref(stmt: StatementCache, resource: RefResource, key: string, wmsId: string, payloadHash: string | null): void {
    stmt(
      `INSERT INTO xref (resource, key, wms_id, payload_hash, updated_at) VALUES (?, ?, ?, ?, ?)
       ON CONFLICT (resource, key) DO UPDATE SET wms_id = excluded.wms_id, payload_hash = excluded.payload_hash, updated_at = excluded.updated_at`,
    ).run(resource, key, wmsId, payloadHash, now());
  },

  /** replaces the identifying fields stored for (resource, key) (Journal.putXrefFields) */
  putXrefFields(stmt: StatementCache, resource: RefResource, key: string, fields: ReadonlyArray<readonly [string, string]>): void {
    // INDEXED BY: without statistics SQLite searches the primary key by its first column (resource) alone,
    // a scan of every row of the resource per record: 20,000 categories took 42 s of writer-thread CPU
    stmt('DELETE FROM xref_field INDEXED BY xref_field_by_key WHERE resource = ? AND key = ?').run(resource, key);
    const at = now();
    for (const [field, value] of fields)
      stmt('INSERT OR REPLACE INTO xref_field (resource, field, value, key, updated_at) VALUES (?, ?, ?, ?, ?)').run(resource, field, value, key, at);
  },

  deleteXref(stmt: StatementCache, resource: RefResource, key: string): void {
    stmt('DELETE FROM xref WHERE resource = ? AND key = ?').run(resource, key);
  },

  /**
   * Stores an event once per dedup key. Its link (the latest document whose send returned linkWmsId) is looked
   * up in the same statement, so the receiver's event loop does no query of its own per event (issue 19).
   * recordId answers the row's link: the new row's, or the stored one's for a resend.
   */
  addWebhookEvent(stmt: StatementCache, event: NewWebhookEvent): WebhookEventStored {
    const inserted = stmt(
      `INSERT INTO webhook_events (dedup_key, kind, received_at, body, record_id)
       VALUES (?, ?, ?, ?, COALESCE(?, (${LINKED_RECORD_ID})))
       ON CONFLICT (dedup_key) DO NOTHING RETURNING id, record_id`,
    ).get(event.dedupKey, event.kind, now(), event.body, event.recordId ?? null, event.linkWmsId ?? null) as WebhookLinkDbRow | undefined;
    if (inserted) return toWebhookStored(true, inserted);
    const existing = stmt('SELECT id, record_id FROM webhook_events WHERE dedup_key = ?').get(event.dedupKey) as WebhookLinkDbRow;
    return toWebhookStored(false, existing);
  },

  /** the flush's mark (webhook/flush.ts), on the writer thread with the events it marks */
  markWebhookDelivered(stmt: StatementCache, ids: number[]): void {
    stmt('UPDATE webhook_events SET delivered_at = ? WHERE delivered_at IS NULL AND id IN (SELECT value FROM json_each(?))').run(now(), JSON.stringify(ids));
  },
} as const;

export type QueuedWriteName = keyof typeof QUEUED_WRITES;

/** One write of a batch, as data. */
export interface QueuedWriteOp {
  name: QueuedWriteName;
  args: unknown[];
}

export type QueuedWriteResult = { ok: true; value: unknown } | { ok: false; message: string; code?: string | undefined };

/**
 * Applies a batch in ONE transaction: a write that throws fails alone (its result says why), the others
 * still commit. Throws only if the transaction itself fails (then none of them committed).
 */
export function applyBatch(db: Database.Database, stmt: StatementCache, ops: readonly QueuedWriteOp[]): QueuedWriteResult[] {
  const results: QueuedWriteResult[] = [];
  batchAt = new Date().toISOString();
  try {
    db.transaction(() => {
      for (const op of ops) {
        try {
          const fn = QUEUED_WRITES[op.name] as (s: StatementCache, ...a: unknown[]) => unknown;
          results.push({ ok: true, value: fn(stmt, ...op.args) });
        } catch (err) {
          results.push({ ok: false, message: err instanceof Error ? err.message : String(err), code: (err as { code?: string }).code });
        }
      }
    }).immediate();
  } finally {
    batchAt = null;
  }
  return results;
}

/**
 * A batch's results as they cross back from the writer thread: almost every write succeeds with no value
 * (marks, settles, cross-references), so only the others are sent: [index, result] pairs. Halves the JSON
 * both threads make per batch.
 */
export function packResults(results: readonly QueuedWriteResult[]): string {
  const notPlain: Array<[number, QueuedWriteResult]> = [];
  results.forEach((r, i) => {
    if (!r.ok || r.value !== undefined) notPlain.push([i, r]);
  });
  return JSON.stringify([results.length, notPlain]);
}

export function unpackResults(packed: string): QueuedWriteResult[] {
  const [n, notPlain] = JSON.parse(packed) as [number, Array<[number, QueuedWriteResult]>];
  const out: QueuedWriteResult[] = new Array<QueuedWriteResult>(n);
  for (let i = 0; i < n; i++) out[i] = { ok: true, value: undefined };
  for (const [i, r] of notPlain) out[i] = r;
  return out;
}

/** A statement cache for one connection (statements prepared once, by SQL text); `raw`: they return rows as arrays. */
export function statementCache(db: Database.Database, options: { raw?: boolean } = {}): StatementCache & { clear(): void } {
  const cache = new Map<string, Database.Statement>();
  const get = (sql: string): Database.Statement => {
    let s = cache.get(sql);
    if (!s) {
      s = db.prepare(sql);
      if (options.raw) s.raw(true);
      cache.set(sql, s);
    }
    return s;
  };
  return Object.assign(get, { clear: () => cache.clear() });
}
