/**
 * Finishing a file: its result CSV (every record with its outcome), its rejects file in the ORIGINAL
 * format (fix and drop again), and the per-file figures for the run report. Everything is read back
 * from the journal, so a file finished after a restart gets the same files.
 */
import { hasCode, isHeldOnDependency } from '../shared/reason.js';
import { mkdir, readFile, stat } from 'node:fs/promises';
import { basename, extname, join, relative } from 'node:path';
import type { FileRow, Journal, RecordRow } from '../journal/types.js';
import type { CompiledMapping } from '../map/index.js';
import { createResultWriter } from '../outbox/results.js';
import type { Outcome, AttentionItem } from '../outbox/types.js';
import type { CsvFormatOptions } from '../outbox/csv.js';
import { createRejectsWriter } from '../outbox/rejects.js';
import type { Logger } from '../shared/logger.js';
import type { StoredParseFacts } from './map-file.js';
import { FILE_META } from '../journal/policy.js';
import type { KeyLabeler } from './stock-labels.js';

export interface FileFigures {
  outcomes: Partial<Record<Outcome, number>>;
  resources: Map<string, Partial<Record<Outcome, number>>>;
  /** key -> group; `text` is the English message's shape (values replaced), code/params the stable reason */
  reasons: Map<
    string,
    { count: number; example: { file: string; line: number }; text: string; outcome: Outcome; code?: string; params?: Record<string, string | number> }
  >;
  attention: AttentionItem[];
  resultFile: string | null;
  rejectsFile: string | null;
  records: number;
}

export const ATTENTION_CAP = 500;

/** Groups error messages that differ only in their values: quoted values and numbers become '…'. */
export function reasonKey(error: string): string {
  const msg = error.replace(/^[^:]+:\d+:\s*/, '');
  return msg
    .replace(/'[^']*'/g, "'…'")
    .replace(/"[^"]*"/g, '"…"')
    .replace(/\b[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b/gi, '<id>')
    .replace(/\b\d+([.,]\d+)?\b/g, 'N')
    .slice(0, 200);
}

export function outcomeOf(row: RecordRow): Outcome {
  if (row.outcome) return row.outcome as Outcome;
  if (row.status === 'rejected') return 'rejected';
  if (row.status === 'pending' || row.status === 'sending') return 'skipped';
  return row.status === 'in_doubt' ? 'in-doubt' : (row.status as Outcome);
}

function stamp(d: Date): string {
  return d.toISOString().replace(/[-:]/g, '').replace(/\..*$/, '').replace('T', '-');
}

/** Outcomes listed for a person (attention) or written to the rejects file: the rows whose source text is needed. */
const NEEDS_SOURCE: ReadonlySet<Outcome> = new Set<Outcome>(['rejected', 'failed', 'held', 'in-doubt', 'no-change']);

/**
 * Every record of a file, in id order, read without its source rows (`raw`) except in the pages that hold a record
 * needing them (NEEDS_SOURCE): a clean file of 20,000 records is read once, lean; a page with a reject is read again
 * whole. The records are settled (the file is finished after its sending), so both reads of a page see the same rows.
 */
async function* finishedRecords(journal: Journal, fileId: number): AsyncGenerator<RecordRow> {
  const query = { fileIds: [fileId], statuses: ['pending', 'sending', 'sent', 'rejected', 'failed', 'held', 'in_doubt'] as RecordRow['status'][] };
  let afterId = 0;
  for (;;) {
    const lean = await journal.listRecords({ ...query, afterId, limit: FINISH_PAGE, withoutRaw: true });
    if (lean.length === 0) return;
    const rows = lean.some((r) => NEEDS_SOURCE.has(outcomeOf(r))) ? await journal.listRecords({ ...query, afterId, limit: lean.length }) : lean;
    yield* rows;
    afterId = lean[lean.length - 1]!.id;
    if (lean.length < FINISH_PAGE) return;
  }
}
const FINISH_PAGE = 1000;

export async function finishFile(opts: {
  file: FileRow;
  mapping: CompiledMapping | null;
  journal: Journal;
  outboxDir: string;
  csv: CsvFormatOptions;
  now: Date;
  dryRun?: boolean;
  logger?: Logger;
  /** a readable name for a record where its key is made of ids (stock rows: warehouse, product, lot) */
  keyLabel?: KeyLabeler;
}): Promise<FileFigures> {
  const { file, journal } = opts;
  const figures: FileFigures = { outcomes: {}, resources: new Map(), reasons: new Map(), attention: [], resultFile: null, rejectsFile: null, records: 0 };
  const stem = basename(file.name, extname(file.name));
  const ext = extname(file.name);
  const runStamp = stamp(opts.now);
  const resultsDir = join(opts.outboxDir, opts.dryRun ? 'dry-run' : 'results', file.channel);
  const rejectsDir = join(opts.outboxDir, opts.dryRun ? 'dry-run' : 'rejects', file.channel);
  await mkdir(resultsDir, { recursive: true });
  const resultPath = join(resultsDir, `${stem}.${runStamp}.result.csv`);
  const result = createResultWriter(resultPath, opts.csv);
  const rejectsPath = join(rejectsDir, `${stem}-rejects-${runStamp}${ext}`);
  let rejects: ReturnType<typeof createRejectsWriter> | null = null;
  let rejectCount = 0;
  try {
    for await (const row of finishedRecords(journal, file.id)) {
      const outcome = outcomeOf(row);
      figures.records++;
      figures.outcomes[outcome] = (figures.outcomes[outcome] ?? 0) + 1;
      let res = figures.resources.get(row.target);
      if (!res) figures.resources.set(row.target, (res = {}));
      res[outcome] = (res[outcome] ?? 0) + 1;
      const line = row.source.line;
      const key = (await opts.keyLabel?.(row)) ?? row.key;
      if (
        !result.write({
          line,
          ...(row.source.lineEnd !== undefined ? { lineEnd: row.source.lineEnd } : {}),
          target: row.target,
          key,
          outcome,
          wmsId: row.wmsId,
          error: row.error,
          mapping: row.mapping,
        })
      )
        await result.drain();
      // no-change is listed with the WMS's reason (a warning), not counted as needing attention
      const needsAttention = outcome === 'rejected' || outcome === 'failed' || outcome === 'held' || outcome === 'in-doubt' || outcome === 'no-change';
      if (needsAttention) {
        const reason = row.error ?? outcome;
        // grouped by stable code (and field / resource) when the record carries one, else by the message's shape
        const code = row.reason;
        const k = code
          ? `${outcome}: ${code.code}|${String(code.params?.['field'] ?? '').replace(/\[\d+\]/g, '[]')}|${code.params?.['resource'] ?? ''}|${code.params?.['status'] ?? ''}`
          : `${outcome}: ${reasonKey(reason)}`;
        const r = figures.reasons.get(k);
        if (r) r.count++;
        else
          figures.reasons.set(k, {
            count: 1,
            example: { file: file.name, line },
            text: reasonKey(reason),
            outcome,
            ...(code ? { code: code.code, params: code.params ?? {} } : {}),
          });
        if (figures.attention.length < ATTENTION_CAP) {
          const original = row.raw?.[0]
            ? row.raw[0].cells
              ? [...row.raw[0].cells]
              : row.raw[0].text !== undefined
                ? [row.raw[0].text]
                : undefined
            : undefined;
          figures.attention.push({
            file: file.name,
            line,
            target: row.target,
            key,
            outcome,
            reason,
            ...(code ? { code: code.code, params: code.params ?? {} } : {}),
            ...(original ? { original } : {}),
          });
        }
      }
      // rows that can be fixed and dropped again: refused data, and rows held because a dependency failed
      const fixable = outcome === 'rejected' || isHeldOnDependency(row);
      if (fixable && opts.mapping && row.raw && row.raw.length > 0) {
        if (!rejects) {
          await mkdir(rejectsDir, { recursive: true });
          const facts = JSON.parse((await journal.getMeta(FILE_META.parseFacts(file.id))) ?? '{}') as StoredParseFacts;
          rejects = createRejectsWriter(rejectsPath, { ...opts.mapping.source, ...facts });
        }
        // xml/json rejects are a listing only: one line per rejected document, with its line range, not
        // the same reason once per item
        const listingOnly = opts.mapping.source.format === 'xml' || opts.mapping.source.format === 'json';
        const raws = listingOnly
          ? [{ ...row.raw[0]!, ...(row.raw.length > 1 ? { lineEnd: row.raw[row.raw.length - 1]!.lineEnd ?? row.raw[row.raw.length - 1]!.line } : {}) }]
          : row.raw;
        for (const raw of raws) {
          const reason = row.error ?? outcome;
          const bytes = hasCode(row.reason, 'invalid_encoding') ? await originalLine(file.path, raw.line) : undefined;
          // map-time messages start with "line N: field F:"; send-time ones get the same shape
          const located = /^line \d+/.test(reason) ? reason : `line ${raw.line}: ${reason}`;
          rejects.write({
            line: raw.line,
            ...(raw.lineEnd !== undefined && raw.lineEnd !== raw.line ? { lineEnd: raw.lineEnd } : {}),
            ...(raw.cells ? { cells: raw.cells } : {}),
            ...(raw.text !== undefined ? { text: raw.text } : {}),
            ...(bytes ? { bytes } : {}),
            reasons: located,
          });
          rejectCount++;
        }
      }
    }
    const closed = await result.close();
    if (closed.replacedChars > 0)
      opts.logger?.warn({ file: file.name, replaced: closed.replacedChars }, 'characters the outbox encoding cannot hold were written as ? in the result file');
    figures.resultFile = relative(opts.outboxDir, resultPath);
    if (rejects) {
      const closed = await rejects.close();
      // the file actually written: the rejects in the original format, or only the listing of reasons
      // (XML and JSON documents cannot be split back: `<name>.errors.txt`)
      const written = closed.path ?? closed.sidecar;
      if (rejectCount > 0 && written) figures.rejectsFile = relative(opts.outboxDir, written);
    }
    lineCache.delete(file.path);
  } catch (err) {
    lineCache.delete(file.path);
    await result.abort().catch(() => {});
    rejects?.abort();
    throw err;
  }
  return figures;
}

const lineCache = new Map<string, Buffer[]>();
/**
 * The original bytes of a physical line (1-based) of a file whose text could not be decoded: a rejects
 * file must hold what the ERP wrote, not replacement characters. Files above 64 MB are not split (the
 * row is then written as decoded).
 */
async function originalLine(path: string, line: number): Promise<Buffer | undefined> {
  let lines = lineCache.get(path);
  if (!lines) {
    try {
      if ((await stat(path)).size > 64 * 1024 * 1024) return undefined;
      const buf = await readFile(path);
      lines = [];
      let start = 0;
      for (let i = buf.indexOf(0x0a); i !== -1; i = buf.indexOf(0x0a, start)) {
        lines.push(buf.subarray(start, i > start && buf[i - 1] === 0x0d ? i - 1 : i));
        start = i + 1;
      }
      if (start < buf.length) lines.push(buf.subarray(start));
    } catch {
      return undefined;
    }
    lineCache.clear(); // one file at a time
    lineCache.set(path, lines);
  }
  return lines[line - 1];
}
