/**
 * Mapping stage for one claimed file: parse (streaming) -> mapping -> journal, in batches, so memory
 * stays flat however large the file. Rejected rows are journaled too (status 'rejected', with their raw
 * row) so the rejects file can be written from the journal alone.
 */
import { UnsentTally, type CompiledMapping } from '../map/index.js';
import type { MapContext, MapOutput, MapStats } from '../map/types.js';
import type { NewRecord, StoredRawRow, RecordQueue, MetaStore } from '../journal/types.js';
import type { RawRow } from '../parse/types.js';
import type { Encoding } from '../parse/options.js';
import { sentAsSession, type Target } from '../wms/targets.js';
import { FILE_META } from '../journal/policy.js';
import { openParser, type ParserHandle, type ParsedItem } from '../parse/index.js';
import { InputError } from '../shared/errors.js';
import { payloadHash } from '../shared/hash.js';
import { reasonOfIssues } from '../shared/reason.js';

export interface StoredParseFacts {
  headerCells?: string[];
  newline?: '\r\n' | '\n' | '\r';
  /** the encoding the file was read with, when its byte order mark overrode the mapping's (UTF-16 "Unicode text") */
  encoding?: Encoding;
  /** the file had a byte order mark: its rejects file gets one too */
  bom?: boolean;
  /** xlsx: the sheet read and the workbook's sheets, for the rejects workbook */
  sheetName?: string;
  sheetNames?: string[];
}

export interface MapFileResult {
  records: number;
  rejects: number;
  rows: number;
  /** rows rejected while mapping and journaled by this call (not those `skip` passed over), by target */
  rejectsByTarget: Map<Target, number>;
  /** rows read and not sent: not selected by any mapping, or excluded by a skip rule */
  unsent?: number;
}

export function toNewRecord(out: MapOutput, mapping: CompiledMapping): NewRecord {
  if (out.ok) {
    const r = out.record;
    return {
      target: r.target,
      op: r.op,
      key: r.key,
      source: r.source,
      mapping: r.mapping,
      payload: r.payload,
      payloadHash: payloadHash(r.payload),
      ...(r.attachmentPath !== undefined ? { attachmentPath: r.attachmentPath } : {}),
      raw: storedRows(r.raw),
      status: 'pending',
    };
  }
  const j = out.reject;
  return {
    target: j.target ?? mapping.target,
    op: (mapping.parts?.find((p) => p.name === j.mapping) ?? mapping).op,
    key: j.key ?? '',
    source: j.source,
    mapping: j.mapping,
    payload: {},
    payloadHash: '',
    raw: storedRows(j.raw),
    status: 'rejected',
    // the mapping's messages are self-contained ("line 14: field weight: '12,3,4' is not a number")
    error: summarizeIssues(j.issues.map((i) => i.message)),
    ...(reasonOfIssues(j.issues) ? { reason: reasonOfIssues(j.issues)! } : {}),
  };
}

/**
 * The source rows as the journal keeps them (StoredRawRow): without their fields by column name, which the mapping
 * has read and nothing reads back (the rejects file and the report write cells and text).
 */
export function storedRows(rows: readonly RawRow[]): StoredRawRow[] {
  return rows.map((r) => {
    const kept: StoredRawRow = { line: r.line };
    if (r.lineEnd !== undefined) kept.lineEnd = r.lineEnd;
    if (r.recordType !== undefined) kept.recordType = r.recordType;
    if (r.cells !== undefined) kept.cells = r.cells;
    if (r.text !== undefined) kept.text = r.text;
    return kept;
  });
}

/** distinct problems named in one reject's reason; beyond, "and N more problems" */
const MAX_PROBLEMS = 20;

/**
 * One message per problem, not per item: a document of 10,000 items whose quantity is 'abc' says so once
 * ("... (the same in 9,999 more items)"), not 10,000 times (the reason is written beside every row of
 * the document: repeated per item it grew quadratically, 400 MB for 2,000 items). Messages that differ
 * only by their line number or item index (`itens[7]`) are one problem.
 */
export function summarizeIssues(messages: readonly string[]): string {
  const groups = new Map<string, { first: string; count: number }>();
  for (const m of messages) {
    const key = m.replace(/^lines? \d+(-\d+)?: /, '').replace(/\[\d+\]/g, '[]');
    const g = groups.get(key);
    if (g) g.count++;
    else groups.set(key, { first: m, count: 1 });
  }
  const parts = [...groups.values()]
    .slice(0, MAX_PROBLEMS)
    .map((g) => (g.count > 1 ? `${g.first} (the same in ${(g.count - 1).toLocaleString('en-US')} more item(s))` : g.first));
  if (groups.size > MAX_PROBLEMS) parts.push(`and ${groups.size - MAX_PROBLEMS} more problem(s)`);
  return parts.join(' | ');
}

export async function mapFileToJournal(opts: {
  fileId: number;
  path: string;
  fileName: string;
  mapping: CompiledMapping;
  journal: RecordQueue & MetaStore;
  ctx: MapContext;
  batchSize?: number;
  /** records in the first batch (default batchSize): a streamed file publishes a small one first, so sending starts sooner */
  firstBatchSize?: number;
  onRow?: () => void;
  /**
   * Outputs (records and rejects) already in the journal from an earlier run that streamed this file: mapped
   * again (the same file gives the same outputs) but not inserted again.
   */
  skip?: number;
  /**
   * After each batch is committed: the id of its last record and the outputs mapped so far (skipped ones
   * included). A file sent while it is still being mapped publishes its records here; throwing stops the mapping.
   */
  onBatch?: (lastId: number, outputs: number) => Promise<void>;
}): Promise<MapFileResult> {
  const fullBatch = opts.batchSize ?? 1000;
  let batchSize = opts.firstBatchSize ?? fullBatch;
  const items = openParser(opts.path, opts.mapping.source);
  const checked = checkHeader(items, opts.mapping, opts.fileName);
  let batch: NewRecord[] = [];
  const res: MapFileResult = { records: 0, rejects: 0, rows: 0, rejectsByTarget: new Map() };
  const targets = new Set<Target>();
  const skip = opts.skip ?? 0;
  const unsent = new UnsentTally();
  const stats: MapStats = { rows: 0, skipped: 0, records: 0, rejects: 0 };
  const ctx: MapContext = { ...opts.ctx, unsent, stats };
  // one batch commits (on the journal's writer thread) while the next is mapped: at most one in flight, in order
  let inFlight: Promise<void> | null = null;
  const commit = async (): Promise<void> => {
    const records = batch;
    const outputs = res.records + res.rejects;
    batch = [];
    batchSize = fullBatch;
    if (inFlight) await inFlight;
    inFlight = (async () => {
      const lastId = await opts.journal.addRecords(opts.fileId, records);
      if (lastId > 0) await opts.onBatch?.(lastId, outputs);
    })();
    // awaited at the next batch or at the end; a failure meanwhile must not count as unhandled
    inFlight.catch(() => {});
  };
  try {
    for await (const out of opts.mapping.mapItems(checked, ctx)) {
      const rec = toNewRecord(out, opts.mapping);
      targets.add(rec.target);
      if (rec.status === 'rejected') res.rejects++;
      else res.records++;
      res.rows += out.ok ? Math.max(1, out.record.raw.length) : Math.max(1, out.reject.raw.length);
      opts.onRow?.();
      if (res.records + res.rejects <= skip) continue;
      if (rec.status === 'rejected') res.rejectsByTarget.set(rec.target, (res.rejectsByTarget.get(rec.target) ?? 0) + 1);
      batch.push(rec);
      if (batch.length >= batchSize) await commit();
    }
    if (batch.length) await commit();
  } catch (err) {
    // the batch in flight lands (or fails) before the caller withdraws what was inserted
    await (inFlight as Promise<void> | null)?.catch(() => {});
    throw err;
  }
  if (inFlight) await inFlight;
  // what the rejects writer needs to write rows back in the original shape (header cells, newline)
  const facts: StoredParseFacts = {
    ...(items.facts.header ? { headerCells: items.facts.header } : {}),
    ...(items.facts.newline ? { newline: items.facts.newline } : {}),
    ...(items.facts.encoding !== undefined && 'encoding' in items.options && items.facts.encoding !== items.options.encoding
      ? { encoding: items.facts.encoding }
      : {}),
    ...(items.facts.bom ? { bom: true } : {}),
    ...(items.facts.sheetName !== undefined ? { sheetName: items.facts.sheetName } : {}),
    ...(items.facts.sheetNames !== undefined ? { sheetNames: items.facts.sheetNames } : {}),
  };
  await opts.journal.setMeta(FILE_META.parseFacts(opts.fileId), JSON.stringify(facts));
  await opts.journal.setMeta(FILE_META.targets(opts.fileId), JSON.stringify([...targets]));
  // rows not sent are listed with the file's results, never dropped in silence
  if (unsent.size > 0 || (await opts.journal.getMeta(FILE_META.unsent(opts.fileId))) !== undefined)
    await opts.journal.setMeta(FILE_META.unsent(opts.fileId), JSON.stringify(unsent.toJSON()));
  res.unsent = unsent.size;
  // a stock sync whose mapping declares that its valid rows are sent even when some are rejected (the business rule)
  const rule = (opts.mapping.parts ?? [opts.mapping]).find((m) => sentAsSession(m.target) && m.spec.onRejected === 'sendValid');
  if (rule && res.rejects > 0)
    await opts.journal.setMeta(
      FILE_META.sendValid(opts.fileId),
      JSON.stringify({ by: `mapping ${rule.name} (onRejected: sendValid)`, at: new Date().toISOString() }),
    );
  // rows read: what the outputs were made of and the rows not sent; with several mappings, each row once
  res.rows = opts.mapping.parts ? stats.rows : res.rows + unsent.size;
  return res;
}

/**
 * Passes the parsed items through, after checking once that the header has every column the mapping
 * reads: a wrong delimiter ("codigo,nome" read with ';') or a renamed column is one clear file error,
 * not every row rejected for an empty field.
 */
async function* checkHeader(items: ParserHandle, mapping: CompiledMapping, fileName: string): AsyncGenerator<ParsedItem> {
  let checked = false;
  const check = () => {
    checked = true;
    const columns = items.facts.columns;
    if (!columns || mapping.columnsRead.length === 0) return;
    const missing = mapping.columnsRead.filter((c) => !columns.includes(c));
    if (missing.length === 0) return;
    const found = columns.length <= 12 ? columns.map((c) => `'${c}'`).join(', ') : `${columns.length} columns`;
    const hint = columns.length === 1 ? ': wrong delimiter?' : '';
    throw new InputError(
      `${fileName}:1: the header has no column ${missing.map((c) => `'${c}'`).join(', ')} that mapping ${mapping.name} reads (found ${found})${hint}`,
      { details: { file: fileName, line: 1, missing } },
    );
  };
  for await (const item of items) {
    if (!checked) check();
    yield item;
  }
  if (!checked) check();
}
