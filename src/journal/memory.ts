/**
 * The in-memory journal store: the journal's third store, for unit tests (and a sketch of what any other backend
 * implements). Plain maps instead of tables, the same columns as SQLite's and PostgreSQL's (rows.ts maps them to the
 * journal's objects, so its answers have the very shapes of theirs), no persistence: the data lives as long as its
 * MemoryDatabase. It passes the journal contract (test/contract/journal.test.ts) like the two SQL stores; the rules
 * stay policy.ts's, as for them.
 *
 * Several journals opened on one MemoryDatabase share its data, as several connections share a database file (the
 * contract's "second instance" journals): each write is applied whole before the next one starts (one thread), which
 * is what the SQL stores' transactions give.
 */
import type { WriteOutcome } from './group-commit.js';
import { createJournal, RECORD_STATUSES } from './policy.js';
import {
  recordColumns,
  toFileRow,
  toRecordRowFromText,
  toWebhook,
  toWebhookStored,
  toXref,
  type FileDbRow,
  type RecordDbRow,
  type WebhookDbRow,
  type XrefDbRow,
} from './rows.js';
import {
  inProcessLeaderLock,
  type FileInsert,
  type JournalStore,
  type JournalWrite,
  type NewWebhookEvent,
  type PruneRule,
  type StoreLeaderLock,
  type StoreRecordQuery,
} from './store.js';
import {
  WEBHOOK_LINK_TARGETS,
  type FileRow,
  type FileStatus,
  type Journal,
  type NewRecord,
  type RecordResult,
  type RecordRow,
  type RecordStatus,
  type SettleXref,
  type WebhookEventRow,
  type WebhookEventStored,
  type XrefEntry,
} from './types.js';
import type { RefResource, Target } from '../wms/targets.js';

/** A records row as the SQL stores hold it (JSON columns as text), with its claim. */
interface MemoryRecord extends RecordDbRow<string> {
  claim_owner: string | null;
  claim_until: string | null;
}

/** An identifying field of a cross-reference (the SQL stores' xref_field), with the order it was written in. */
interface MemoryXrefField {
  resource: RefResource;
  field: string;
  value: string;
  key: string;
  updated_at: string;
  seq: number;
}

/** The data of one in-memory journal: what a database file is to SQLite. */
export interface MemoryDatabase {
  readonly name: string;
  files: Map<number, FileDbRow>;
  /** by id; ids only grow, so the map's order is id order */
  records: Map<number, MemoryRecord>;
  /** by resource and key */
  xref: Map<string, XrefDbRow>;
  /** by resource, field, value and key */
  xrefFields: Map<string, MemoryXrefField>;
  meta: Map<string, string>;
  webhookEvents: Map<number, WebhookDbRow>;
  /** dedup key -> event id */
  webhookByDedup: Map<string, number>;
  /** leader locks held, by name */
  leaderLocks: Set<string>;
  seq: { file: number; record: number; event: number; field: number };
}

let databaseSeq = 0;

export function createMemoryDatabase(name = `journal-${++databaseSeq}`): MemoryDatabase {
  return {
    name,
    files: new Map(),
    records: new Map(),
    xref: new Map(),
    xrefFields: new Map(),
    meta: new Map(),
    webhookEvents: new Map(),
    webhookByDedup: new Map(),
    leaderLocks: new Set(),
    seq: { file: 0, record: 0, event: 0, field: 0 },
  };
}

export interface MemoryJournalOptions {
  /** the data to open (a journal opened on it again sees what this one wrote); @default a new, empty one */
  database?: MemoryDatabase;
}

/** Opens a journal on an in-memory database (a new empty one unless given). */
export async function createMemoryJournal(options: MemoryJournalOptions = {}): Promise<Journal> {
  return createJournal(new MemoryStore(options.database ?? createMemoryDatabase()));
}

/** records a pruneSlice deletes at most (as SQLite's) */
const PRUNE_SLICE = 2_000;

const now = (): string => new Date().toISOString();
const later = (ms: number): string => new Date(Date.now() + ms).toISOString();
const xrefKey = (resource: string, key: string): string => `${resource}\u0000${key}`;
const fieldKey = (resource: string, field: string, value: string, key: string): string => [resource, field, value, key].join('\u0000');
const fromMemory = (r: MemoryRecord, withoutRaw?: boolean): RecordRow => toRecordRowFromText(withoutRaw ? { ...r, raw: null } : r);
const unclaimedAt = (r: MemoryRecord, ts: string): boolean => r.claim_owner === null || (r.claim_until ?? '') < ts;

/** rows counted by status, in the order each status is first met (statuses without a row left out, as a GROUP BY) */
function countByStatus<S>(rows: Iterable<{ status: S }>): Array<{ status: S; n: number }> {
  const counts = new Map<S, number>();
  for (const r of rows) counts.set(r.status, (counts.get(r.status) ?? 0) + 1);
  return [...counts].map(([status, n]) => ({ status, n }));
}

/** The in-memory store: maps and the steps of each operation, nothing else (policy.ts decides). */
class MemoryStore implements JournalStore {
  readonly location: string;
  /** one batch at a time: each is applied whole, at once */
  readonly maxBatchesInFlight = 1;
  readonly sharedByProcesses = false;
  readonly queuedWritesInOrder = true;
  readonly groupCommitsWebhookEvents = true;
  readonly pruneSliceRecords = PRUNE_SLICE;
  /** leader-lock names this journal holds (released at close) */
  private readonly ownLocks = new Set<string>();

  constructor(private readonly db: MemoryDatabase) {
    this.location = `memory:${db.name}`;
  }

  // ---- files and leases ------------------------------------------------------------------------

  insertFile(insert: FileInsert): FileRow {
    const f = insert.file;
    let duplicateOf: number | null = null;
    if (insert.duplicateAmong) {
      for (const row of this.db.files.values()) {
        if (row.sha256 === f.sha256 && insert.duplicateAmong.includes(row.status)) {
          duplicateOf = row.id;
          break;
        }
      }
    }
    const ts = now();
    const row: FileDbRow = {
      id: ++this.db.seq.file,
      channel: f.channel,
      name: f.name,
      path: f.path,
      size: f.size,
      sha256: f.sha256,
      status: insert.statusFor(duplicateOf),
      duplicate_of: duplicateOf,
      error: null,
      run_id: f.runId,
      owner: f.owner ?? null,
      lease_until: insert.leaseTtlMs !== null ? later(insert.leaseTtlMs) : null,
      created_at: ts,
      updated_at: ts,
    };
    this.db.files.set(row.id, row);
    return toFileRow(row);
  }

  getFile(id: number): FileRow | undefined {
    const r = this.db.files.get(id);
    return r ? toFileRow(r) : undefined;
  }

  listFiles(query: { statuses?: FileStatus[]; channel?: string; runId?: string }): FileRow[] {
    return [...this.db.files.values()]
      .filter(
        (f) =>
          (!query.statuses || query.statuses.includes(f.status)) &&
          (query.channel === undefined || f.channel === query.channel) &&
          (query.runId === undefined || f.run_id === query.runId),
      )
      .map(toFileRow);
  }

  countFilesByStatus(): Array<{ status: FileStatus; n: number }> {
    return countByStatus(this.db.files.values());
  }

  updateFile(id: number, columns: ReadonlyArray<readonly [column: string, value: unknown]>): boolean {
    const row = this.db.files.get(id);
    if (!row) return false;
    for (const [column, value] of columns) {
      if (!(column in row) || column === 'id') throw new Error(`no such column: ${column}`);
      (row as unknown as Record<string, unknown>)[column] = value;
    }
    row.updated_at = now();
    return true;
  }

  takeLease(fileId: number, owner: string, ttlMs: number): boolean {
    const row = this.db.files.get(fileId);
    const ts = now();
    if (!row || !(row.owner === null || row.owner === owner || (row.lease_until ?? '') < ts)) return false;
    row.owner = owner;
    row.lease_until = later(ttlMs);
    row.updated_at = ts;
    return true;
  }

  fileExists(fileId: number): boolean {
    return this.db.files.has(fileId);
  }

  renewLeases(owner: string, ttlMs: number, statuses: readonly FileStatus[]): number {
    let n = 0;
    for (const row of this.db.files.values()) {
      if (row.owner !== owner || !statuses.includes(row.status)) continue;
      row.lease_until = later(ttlMs);
      row.updated_at = now();
      n++;
    }
    return n;
  }

  releaseLease(fileId: number, owner: string): void {
    const row = this.db.files.get(fileId);
    if (!row || row.owner !== owner) return;
    row.owner = null;
    row.lease_until = null;
    row.updated_at = now();
  }

  listLeasable(owner: string, statuses: readonly FileStatus[]): FileRow[] {
    const ts = now();
    return [...this.db.files.values()]
      .filter((f) => statuses.includes(f.status) && (f.owner === null || f.owner === owner || (f.lease_until ?? '') < ts))
      .map(toFileRow);
  }

  /** exclusive among the journals opened on this database */
  tryLeaderLock(name: string): StoreLeaderLock | null {
    return inProcessLeaderLock(this.db.leaderLocks, this.ownLocks, name);
  }

  // ---- record claims ---------------------------------------------------------------------------

  claimRecords(
    fileIds: number[],
    targets: Target[],
    owner: string,
    limit: number,
    ttlMs: number,
    statuses: readonly RecordStatus[],
    afterId: number,
    upTo?: ReadonlyMap<number, number>,
  ): RecordRow[] {
    const ts = now();
    const until = later(ttlMs);
    const claimed: RecordRow[] = [];
    for (const r of this.db.records.values()) {
      if (claimed.length >= limit) break;
      if (r.id <= afterId || !fileIds.includes(r.file_id) || !targets.includes(r.target) || !statuses.includes(r.status)) continue;
      if (!unclaimedAt(r, ts) || r.id > (upTo?.get(r.file_id) ?? Number.MAX_SAFE_INTEGER)) continue;
      r.claim_owner = owner;
      r.claim_until = until;
      claimed.push(fromMemory(r, true));
    }
    return claimed;
  }

  renewRecordClaims(owner: string, ttlMs: number, statuses: readonly RecordStatus[]): number {
    let n = 0;
    for (const r of this.db.records.values()) {
      if (r.claim_owner !== owner || !statuses.includes(r.status)) continue;
      r.claim_until = later(ttlMs);
      n++;
    }
    return n;
  }

  releaseRecordClaims(owner: string, statuses: readonly RecordStatus[], fileIds?: number[]): number {
    let n = 0;
    for (const r of this.db.records.values()) {
      if (r.claim_owner !== owner || !statuses.includes(r.status) || (fileIds && !fileIds.includes(r.file_id))) continue;
      r.claim_owner = null;
      r.claim_until = null;
      n++;
    }
    return n;
  }

  countClaimedByOthers(fileIds: number[], targets: Target[], owner: string, statuses: readonly RecordStatus[]): number {
    const ts = now();
    let n = 0;
    for (const r of this.db.records.values()) {
      if (!fileIds.includes(r.file_id) || !targets.includes(r.target) || !statuses.includes(r.status)) continue;
      if (r.claim_owner !== null && r.claim_owner !== owner && (r.claim_until ?? '') >= ts) n++;
    }
    return n;
  }

  moveExpiredClaims(fileIds: number[], from: RecordStatus, to: RecordStatus): number {
    const ts = now();
    let n = 0;
    for (const r of this.db.records.values()) {
      if (!fileIds.includes(r.file_id) || r.status !== from || r.claim_owner === null || (r.claim_until ?? '') >= ts) continue;
      Object.assign(r, { status: to, claim_owner: null, claim_until: null, updated_at: ts });
      n++;
    }
    return n;
  }

  // ---- records ---------------------------------------------------------------------------------

  countByKey(target: Target, key: string, statuses: readonly RecordStatus[]): number {
    let n = 0;
    for (const r of this.db.records.values()) if (r.target === target && r.key === key && statuses.includes(r.status)) n++;
    return n;
  }

  /** all or none, as the SQL stores' transaction: every row is checked before the first is added */
  insertRecords(fileId: number, records: NewRecord[]): number {
    if (!this.db.files.has(fileId)) throw new Error(`FOREIGN KEY constraint failed: no file ${fileId}`);
    const ts = now();
    const rows = records.map((rec): Omit<MemoryRecord, 'id'> => {
      const [target, op, key, source, mapping, payload, payloadHash, attachmentPath, raw, status, error, reason] = recordColumns(rec);
      const required = { target, op, key, source, mapping, payload, payloadHash };
      for (const [column, value] of Object.entries(required)) if (value === null) throw new Error(`NOT NULL constraint failed: records.${column}`);
      if (!RECORD_STATUSES.includes(status as RecordStatus)) throw new Error(`CHECK constraint failed: status ${status}`);
      return {
        file_id: fileId,
        target: target as Target,
        op: op as RecordRow['op'],
        key: key as string,
        source: source as string,
        mapping: mapping as string,
        payload: payload as string,
        payload_hash: payloadHash as string,
        attachment_path: attachmentPath,
        raw,
        status: status as RecordStatus,
        outcome: null,
        wms_id: null,
        error,
        reason,
        attempts: 0,
        updated_at: ts,
        claim_owner: null,
        claim_until: null,
      };
    });
    let last = 0;
    for (const row of rows) {
      last = ++this.db.seq.record;
      this.db.records.set(last, { id: last, ...row });
    }
    return last;
  }

  deleteUntouchedRecords(fileId: number, untouched: readonly RecordStatus[], afterId: number): number {
    const mine = [...this.db.records.values()].filter((r) => r.file_id === fileId && r.id > afterId);
    const touched = mine.filter((r) => !untouched.includes(r.status) || r.attempts > 0).length;
    if (touched === 0) for (const r of mine) this.deleteRecord(r.id);
    return touched;
  }

  /** a record goes with its webhook events' links to it */
  private deleteRecord(id: number): void {
    this.db.records.delete(id);
    for (const e of this.db.webhookEvents.values()) if (e.record_id === id) e.record_id = null;
  }

  private isPrunable(rule: PruneRule, file: FileDbRow): boolean {
    if (!(file.updated_at < rule.before.toISOString()) || !rule.fileStatuses.includes(file.status)) return false;
    for (const r of this.db.records.values()) if (r.file_id === file.id && rule.waitingStatuses.includes(r.status)) return false;
    return true;
  }

  prunableFiles(rule: PruneRule): number[] {
    return [...this.db.files.values()].filter((f) => this.isPrunable(rule, f)).map((f) => f.id);
  }

  pruneSlice(rule: PruneRule, fileId: number): { deleted: number; stopped: boolean } {
    const file = this.db.files.get(fileId);
    if (!file || !this.isPrunable(rule, file)) return { deleted: 0, stopped: true };
    const slice: number[] = [];
    for (const r of this.db.records.values()) {
      if (slice.length >= PRUNE_SLICE) break;
      if (r.file_id === fileId) slice.push(r.id);
    }
    for (const id of slice) this.deleteRecord(id);
    if (slice.length < PRUNE_SLICE) {
      for (const f of this.db.files.values()) if (f.duplicate_of === fileId) f.duplicate_of = null;
      for (const key of rule.metaKeysOf(fileId)) this.db.meta.delete(key);
      this.db.files.delete(fileId);
    }
    return { deleted: slice.length, stopped: false };
  }

  pruneWebhookEvents(before: Date): number {
    const cutoff = before.toISOString();
    let n = 0;
    for (const e of [...this.db.webhookEvents.values()]) {
      if (!(e.received_at < cutoff) || e.delivered_at === null) continue;
      this.db.webhookEvents.delete(e.id);
      this.db.webhookByDedup.delete(e.dedup_key);
      n++;
    }
    return n;
  }

  private matching(q: StoreRecordQuery): MemoryRecord[] {
    const out: MemoryRecord[] = [];
    for (const r of this.db.records.values()) {
      if (q.limit !== undefined && out.length >= q.limit) break;
      if (q.afterId !== undefined && r.id <= q.afterId) continue;
      if (q.fileIds && !q.fileIds.includes(r.file_id)) continue;
      if (q.targets && !q.targets.includes(r.target)) continue;
      if (q.statuses && !q.statuses.includes(r.status)) continue;
      out.push(r);
    }
    return out;
  }

  listRecords(query: StoreRecordQuery): RecordRow[] {
    return this.matching(query).map((r) => fromMemory(r, query.withoutRaw));
  }

  countByStatus(query: StoreRecordQuery): Array<{ status: RecordStatus; n: number }> {
    return countByStatus(this.matching(query));
  }

  targetsOf(fileIds: number[], statuses: readonly RecordStatus[]): Target[] {
    return [...new Set(this.matching({ fileIds, statuses: [...statuses] }).map((r) => r.target))];
  }

  resetRecords(ids: number[], from: readonly RecordStatus[], to: RecordStatus): number {
    let n = 0;
    for (const id of new Set(ids)) {
      const r = this.db.records.get(id);
      if (!r || !from.includes(r.status)) continue;
      Object.assign(r, { status: to, outcome: null, error: null, reason: null, updated_at: now() });
      n++;
    }
    return n;
  }

  moveStatus(from: RecordStatus, to: RecordStatus, fileIds?: number[]): number {
    const ts = now();
    let n = 0;
    for (const r of this.db.records.values()) {
      if (r.status !== from || (fileIds && !fileIds.includes(r.file_id)) || !unclaimedAt(r, ts)) continue;
      Object.assign(r, { status: to, claim_owner: null, claim_until: null, updated_at: ts });
      n++;
    }
    return n;
  }

  findLatest(target: Target, key: string, statuses: readonly RecordStatus[], excludeFileId?: number): RecordRow | undefined {
    let latest: MemoryRecord | undefined;
    for (const r of this.db.records.values()) {
      if (r.target === target && r.key === key && statuses.includes(r.status) && r.file_id !== excludeFileId) latest = r;
    }
    return latest ? fromMemory(latest) : undefined;
  }

  /** the latest document (WEBHOOK_LINK_TARGETS) whose send returned `wmsId` */
  private linked(wmsId: string | null | undefined): MemoryRecord | undefined {
    if (wmsId === null || wmsId === undefined) return undefined;
    let latest: MemoryRecord | undefined;
    for (const r of this.db.records.values()) {
      if (r.wms_id === wmsId && (WEBHOOK_LINK_TARGETS as readonly string[]).includes(r.target)) latest = r;
    }
    return latest;
  }

  findRecordByWmsId(wmsId: string): RecordRow | undefined {
    const r = this.linked(wmsId);
    return r ? fromMemory(r) : undefined;
  }

  // ---- the send loop's writes ------------------------------------------------------------------

  /** one outcome per write; a write that throws fails alone (as in the SQL stores' batch transaction) */
  commitWrites(batch: JournalWrite[]): WriteOutcome[] {
    const ts = now();
    return batch.map((w): WriteOutcome => {
      try {
        return { ok: true, value: this.apply(w, ts) };
      } catch (error) {
        return { ok: false, error };
      }
    });
  }

  private apply(w: JournalWrite, ts: string): unknown {
    switch (w.kind) {
      case 'markSending': {
        const r = this.record(w.recordId);
        Object.assign(r, { status: 'sending', attempts: r.attempts + 1, updated_at: ts });
        return undefined;
      }
      case 'settle':
        return this.settle(w.recordId, w.result, w.xref, ts);
      case 'putXref':
        return this.putXref(w.resource, w.key, w.wmsId, w.payloadHash, ts);
      case 'deleteXref':
        this.db.xref.delete(xrefKey(w.resource, w.key));
        return undefined;
      case 'putXrefFields':
        return this.putXrefFields(w.resource, w.key, w.fields, ts);
      case 'addWebhookEvent':
        return this.insertEvent(w.event, ts);
      case 'markWebhookDelivered':
        return this.markDelivered(w.ids, ts);
    }
  }

  private record(id: number): MemoryRecord {
    const r = this.db.records.get(id);
    if (!r) throw new Error(`record ${id} not found`);
    return r;
  }

  private settle(recordId: number, result: RecordResult, xref: SettleXref | undefined, ts: string): void {
    if (xref) {
      this.putXref(xref.resource, xref.key, xref.wmsId, xref.payloadHash, ts);
      if (xref.fields.length > 0) this.putXrefFields(xref.resource, xref.key, xref.fields, ts);
    }
    const r = this.record(recordId);
    Object.assign(r, {
      status: result.status,
      outcome: result.outcome,
      error: result.error ?? null,
      reason: result.reason ? JSON.stringify(result.reason) : null,
      updated_at: ts,
      ...(result.wmsId === undefined ? {} : { wms_id: result.wmsId ?? null }),
    });
  }

  private putXref(resource: RefResource, key: string, wmsId: string, payloadHash: string | null, ts: string): void {
    this.db.xref.set(xrefKey(resource, key), { resource, key, wms_id: wmsId, payload_hash: payloadHash, updated_at: ts });
  }

  private putXrefFields(resource: RefResource, key: string, fields: ReadonlyArray<readonly [string, string]>, ts: string): void {
    for (const [k, f] of this.db.xrefFields) if (f.resource === resource && f.key === key) this.db.xrefFields.delete(k);
    for (const [field, value] of fields) {
      this.db.xrefFields.set(fieldKey(resource, field, value, key), { resource, field, value, key, updated_at: ts, seq: ++this.db.seq.field });
    }
  }

  private insertEvent(event: NewWebhookEvent, ts: string): WebhookEventStored {
    const known = this.db.webhookByDedup.get(event.dedupKey);
    if (known !== undefined) return toWebhookStored(false, this.db.webhookEvents.get(known) ?? { id: known, record_id: null });
    const row: WebhookDbRow = {
      id: ++this.db.seq.event,
      dedup_key: event.dedupKey,
      kind: event.kind,
      received_at: ts,
      body: event.body,
      delivered_at: null,
      record_id: event.recordId ?? this.linked(event.linkWmsId)?.id ?? null,
    };
    this.db.webhookEvents.set(row.id, row);
    this.db.webhookByDedup.set(row.dedup_key, row.id);
    return toWebhookStored(true, row);
  }

  private markDelivered(ids: number[], ts: string): void {
    for (const id of ids) {
      const e = this.db.webhookEvents.get(id);
      if (e && e.delivered_at === null) e.delivered_at = ts;
    }
  }

  // ---- cross-reference, meta, webhooks ---------------------------------------------------------

  getXref(resource: RefResource, key: string): XrefEntry | undefined {
    const r = this.db.xref.get(xrefKey(resource, key));
    return r ? toXref(r) : undefined;
  }

  getXrefs(resource: RefResource, keys: readonly string[]): XrefEntry[] {
    return [...new Set(keys)].flatMap((k) => {
      const r = this.db.xref.get(xrefKey(resource, k));
      return r ? [toXref(r)] : [];
    });
  }

  /** the most recently stored field's entry (the SQL stores: the latest updated_at) */
  findXrefByField(resource: RefResource, field: string, value: string): XrefEntry | undefined {
    let best: { f: MemoryXrefField; x: XrefDbRow } | undefined;
    for (const f of this.db.xrefFields.values()) {
      if (f.resource !== resource || f.field !== field || f.value !== value) continue;
      const x = this.db.xref.get(xrefKey(resource, f.key));
      if (!x) continue;
      if (!best || f.updated_at > best.f.updated_at || (f.updated_at === best.f.updated_at && (x.updated_at > best.x.updated_at || f.seq > best.f.seq))) {
        best = { f, x };
      }
    }
    return best ? toXref(best.x) : undefined;
  }

  xrefKeysByWmsId(resource: RefResource): Map<string, string> {
    const rows = [...this.db.xref.values()].filter((x) => x.resource === resource).sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
    return new Map(rows.map((x) => [x.wms_id, x.key]));
  }

  getMeta(key: string): string | undefined {
    return this.db.meta.get(key);
  }

  setMeta(key: string, value: string): void {
    this.db.meta.set(key, value);
  }

  compareAndSetMeta(key: string, expected: string | null, value: string): boolean {
    const current = this.db.meta.get(key);
    if (expected === null ? current !== undefined : current !== expected) return false;
    this.db.meta.set(key, value);
    return true;
  }

  insertWebhookEvent(event: NewWebhookEvent): WebhookEventStored {
    return this.insertEvent(event, now());
  }

  listWebhookEvents(query: { undeliveredOnly?: boolean; afterId?: number; limit?: number }): WebhookEventRow[] {
    const out: WebhookEventRow[] = [];
    for (const e of this.db.webhookEvents.values()) {
      if (query.limit !== undefined && out.length >= query.limit) break;
      if ((query.undeliveredOnly && e.delivered_at !== null) || (query.afterId !== undefined && e.id <= query.afterId)) continue;
      out.push(toWebhook(e));
    }
    return out;
  }

  markWebhookDelivered(ids: number[]): void {
    this.markDelivered(ids, now());
  }

  /** the data stays with its MemoryDatabase; this journal's leader locks end with it */
  async close(): Promise<void> {
    for (const name of this.ownLocks) this.db.leaderLocks.delete(name);
    this.ownLocks.clear();
  }
}
