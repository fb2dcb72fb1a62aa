/**
 * Mapping stage for one claimed file: parse (streaming) -> mapping -> journal, in batches, so memory
 * stays flat however large the file. Rejected rows are journaled too (status 'rejected', with their raw
 * row) so the rejects file can be written from the journal alone.
 */
import { UnsentTally, type CompiledMapping } from '../map/index.js';
import { checkHeader, toNewRecord } from '../map/mapped-records.js';
import type { MapContext, MapStats } from '../map/types.js';
import type { NewRecord, RecordQueue, MetaStore } from '../journal/types.js';
import type { Encoding } from '../parse/options.js';
import { sentAsSession, type Target } from '../wms/targets.js';
import { FILE_META } from '../journal/policy.js';
import { openParser } from '../parse/index.js';

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
