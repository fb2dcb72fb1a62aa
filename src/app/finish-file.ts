/**
 * Finishing a file: its result CSV (every record with its outcome), its rejects file in the ORIGINAL
 * format (fix and drop again), and the per-file figures for the run report. Everything is read back
 * from the journal, so a file finished after a restart gets the same files.
 */
import { hasCode, isHeldOnDependency, reasonOfRecord } from '../shared/reason.js';
import { createI18n, type I18n } from '../i18n/index.js';
import { mkdir, readFile, stat } from 'node:fs/promises';
import { basename, extname, join, relative } from 'node:path';
import type { FileRow, RecordRow, RecordQueue, MetaStore } from '../journal/types.js';
import { linesText, type CompiledMapping, type UnsentRows } from '../map/index.js';
import { createResultWriter, type ResultWriter } from '../outbox/results.js';
import { modeOption } from '../outbox/atomic.js';
import type { Outcome, AttentionItem, UnsentRowsSummary } from '../outbox/types.js';
import type { CsvFormatOptions } from '../outbox/csv.js';
import { createRejectsWriter, type RejectItem, type RejectsWriter } from '../outbox/rejects.js';
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
  /**
   * records an earlier run settled (sent or rejected before this run started: a resumed or retried file): in the
   * result and rejects files, not in this run's counts (a resumed run reports what it did)
   */
  earlier: number;
  /** rows read and not sent (issue 39), by group, for the report */
  unsent?: UnsentRowsSummary[];
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

/** Sent or rejected before `startedMs` (an earlier run's doing); what is still pending, held or open is this run's to report. */
function settledBefore(row: RecordRow, startedMs: number): boolean {
  return (row.status === 'sent' || row.status === 'rejected') && Date.parse(row.updatedAt) < startedMs;
}

function count(figures: FileFigures, target: string, outcome: Outcome): void {
  figures.records++;
  figures.outcomes[outcome] = (figures.outcomes[outcome] ?? 0) + 1;
  let res = figures.resources.get(target);
  if (!res) figures.resources.set(target, (res = {}));
  res[outcome] = (res[outcome] ?? 0) + 1;
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

/** records read per page by `complete` */
const FINISH_PAGE = 1000;
/**
 * A follow step reads smaller pages (each read blocks the event loop while requests are in flight) and lets the
 * loop run between them. Its first page is smaller still: a step visits every file being sent, and a file of a later
 * tier (its first record still pending) or one already followed to its end costs a read of that many rows, not 250.
 */
const FOLLOW_PAGE = 250;
const FOLLOW_FIRST_PAGE = 32;
/**
 * What a record can no longer become in this run once it is there: sent and rejected are never put back (a sent
 * record is never requeued, a rejected one waits for its row to be dropped again), held is final until the next
 * run of this instance. Not failed: the send loop settles a record it could not send because the WMS did not
 * answer as failed, then puts it back to pending (pipeline.ts unmark); nor in doubt (the in-doubt pass), pending or
 * sending. With a shared journal (`shared`), another instance's run may put a held record back as it starts
 * (run-resume.ts: held records that waited for the WMS), so held is not final either.
 */
const FINAL_IN_RUN: ReadonlySet<RecordRow['status']> = new Set<RecordRow['status']>(['sent', 'rejected', 'held']);
const FINAL_IN_SHARED_RUN: ReadonlySet<RecordRow['status']> = new Set<RecordRow['status']>(['sent', 'rejected']);
const ALL_STATUSES: RecordRow['status'][] = ['pending', 'sending', 'sent', 'rejected', 'failed', 'held', 'in_doubt'];

export interface FileFinishOptions {
  file: FileRow;
  mapping: CompiledMapping | null;
  journal: RecordQueue & MetaStore;
  outboxDir: string;
  csv: CsvFormatOptions;
  /** mode of the result file (outbox.fileMode). @default DEFAULT_OUTBOX_FILE_MODE */
  fileMode?: number;
  now: Date;
  dryRun?: boolean;
  logger?: Logger;
  /** a readable name for a record where its key is made of ids (stock rows: warehouse, product, lot) */
  keyLabel?: KeyLabeler;
  /** other instances share the journal (PostgreSQL): what `follow` takes as final (FINAL_IN_SHARED_RUN) */
  shared?: boolean;
  /** the outbox's language (outbox.locale): the result file's `reason` and the rejects file's reasons @default pt-BR */
  i18n?: I18n;
}

/**
 * A file's finish in steps: `follow` writes the records already settled for good while the file is still being
 * sent (the result file is written behind the send loop instead of after it: a 1 GB export's 12 million result
 * rows, or the last half second of a 20,000-record run), `complete` writes every record left, whatever its
 * status, and closes the files. Both read in id order from where the last step stopped, so the result file is
 * the one a single read after the send would write. Steps never overlap (each waits for the one before).
 */
export interface FileFinish {
  /**
   * Reads on, in id order, up to the first record that may still change in this run (FINAL_IN_RUN; FINAL_IN_SHARED_RUN
   * with a shared journal) or the last
   * id `upTo` (a streamed file: its last published record; 0 reads nothing). Returns the records taken.
   */
  follow(upTo?: number): Promise<number>;
  complete(): Promise<FileFigures>;
  /** the run leaves the file unfinished: nothing is written (the temp files are removed) */
  abort(): Promise<void>;
}

/** A file's figures before its first record is counted. */
function emptyFigures(): FileFigures {
  return { outcomes: {}, resources: new Map(), reasons: new Map(), attention: [], resultFile: null, rejectsFile: null, records: 0, earlier: 0 };
}

export function createFileFinish(opts: FileFinishOptions): FileFinish {
  return new FileFinishSteps(opts);
}

/**
 * One file's finish: its result file (and rejects) written from the journal in id order, in steps that run one
 * after the other (`serial`): `follow` behind the send, `complete` at the end, `abort` to drop what was written.
 */
class FileFinishSteps implements FileFinish {
  private readonly file: FileRow;
  private readonly final: ReadonlySet<RecordRow['status']>;
  private readonly i18n: I18n;
  private readonly figures = emptyFigures();
  private readonly startedMs: number;
  private readonly resultsDir: string;
  private readonly rejectsDir: string;
  private readonly resultPath: string;
  private readonly rejectsPath: string;
  private result: ResultWriter | null = null;
  private rejects: RejectsWriter | null = null;
  private rejectCount = 0;
  private afterId = 0;
  private failed: unknown = null;
  private ended = false;
  /** the step in progress: the next one starts after it */
  private last: Promise<unknown> = Promise.resolve();

  constructor(private readonly opts: FileFinishOptions) {
    const { file } = opts;
    this.file = file;
    this.final = opts.shared ? FINAL_IN_SHARED_RUN : FINAL_IN_RUN;
    this.i18n = opts.i18n ?? createI18n();
    this.startedMs = opts.now.getTime();
    const stem = basename(file.name, extname(file.name));
    const ext = extname(file.name);
    const runStamp = stamp(opts.now);
    this.resultsDir = join(opts.outboxDir, opts.dryRun ? 'dry-run' : 'results', file.channel);
    this.rejectsDir = join(opts.outboxDir, opts.dryRun ? 'dry-run' : 'rejects', file.channel);
    this.resultPath = join(this.resultsDir, `${stem}.${runStamp}.result.csv`);
    this.rejectsPath = join(this.rejectsDir, `${stem}-rejects-${runStamp}${ext}`);
  }

  follow(upTo = Number.MAX_SAFE_INTEGER): Promise<number> {
    return this.serial(async () => {
      let taken = 0;
      for (let limit = FOLLOW_FIRST_PAGE; ; limit = FOLLOW_PAGE) {
        const p = await this.page(limit, true, upTo);
        taken += p.taken;
        if (!p.full) return taken;
        await new Promise((r) => setImmediate(r));
      }
    });
  }

  complete(): Promise<FileFigures> {
    // a step that failed before (a full disk behind the send) fails the finish too: its temp files go
    return this.serial(() => this.writeTheRest()).catch(async (err: unknown) => {
      this.ended = true;
      await this.cleanUp();
      throw err;
    });
  }

  async abort(): Promise<void> {
    await this.last;
    if (this.ended) return;
    this.ended = true;
    await this.cleanUp();
  }

  /** complete's step: the records not written yet, the rows not sent, and both files closed into place */
  private async writeTheRest(): Promise<FileFigures> {
    const { opts, file, figures } = this;
    while ((await this.page(FINISH_PAGE, false, 0)).full);
    const out = await this.opened();
    await writeUnsent(figures, out, await opts.journal.getMeta(FILE_META.unsent(file.id)), opts.mapping);
    const closed = await out.close();
    if (closed.replacedChars > 0)
      opts.logger?.warn({ file: file.name, replaced: closed.replacedChars }, 'characters the outbox encoding cannot hold were written as ? in the result file');
    figures.resultFile = relative(opts.outboxDir, this.resultPath);
    if (this.rejects) {
      const closedRejects = await this.rejects.close();
      // the file actually written: the rejects in the original format, or only the listing of reasons
      // (XML and JSON documents cannot be split back: `<name>.errors.txt`)
      const written = closedRejects.path ?? closedRejects.sidecar;
      if (this.rejectCount > 0 && written) figures.rejectsFile = relative(opts.outboxDir, written);
    }
    lineCache.delete(file.path);
    this.ended = true;
    return figures;
  }

  private async opened(): Promise<ResultWriter> {
    if (!this.result) {
      await mkdir(this.resultsDir, { recursive: true });
      this.result = createResultWriter(this.resultPath, this.opts.csv, modeOption(this.opts.fileMode));
    }
    return this.result;
  }

  /** one record's result line, its figures, its place in the attention list and, when it can be fixed, its rejects */
  private async take(row: RecordRow): Promise<void> {
    const { opts, figures } = this;
    const out = this.result!;
    const outcome = outcomeOf(row);
    const earlier = settledBefore(row, this.startedMs);
    if (earlier) figures.earlier++;
    else count(figures, row.target, outcome);
    const line = row.source.line;
    // a stock row's label may read the journal; any other row's key is its own (no await per row)
    const label = opts.keyLabel?.(row);
    const key = (label ? await label : null) ?? row.key;
    if (
      !out.write({
        line,
        ...(row.source.lineEnd !== undefined ? { lineEnd: row.source.lineEnd } : {}),
        target: row.target,
        key,
        outcome,
        wmsId: row.wmsId,
        error: row.error,
        mapping: row.mapping,
        reason: reasonText(row, this.i18n),
      })
    )
      await out.drain();
    // no-change is listed with the WMS's reason (a warning), not counted as needing attention
    if (NEEDS_SOURCE.has(outcome) && !earlier) noteAttention(figures, this.file, row, outcome, line, key);
    // rows that can be fixed and dropped again: refused data, and rows held because a dependency failed
    const fixable = outcome === 'rejected' || isHeldOnDependency(row);
    if (fixable && opts.mapping && row.raw && row.raw.length > 0) await this.writeRejects(row, outcome);
  }

  private async writeRejects(row: RecordRow, outcome: Outcome): Promise<void> {
    const { opts, file, i18n } = this;
    if (!this.rejects) {
      await mkdir(this.rejectsDir, { recursive: true });
      const facts = JSON.parse((await opts.journal.getMeta(FILE_META.parseFacts(file.id))) ?? '{}') as StoredParseFacts;
      this.rejects = createRejectsWriter(this.rejectsPath, {
        ...opts.mapping!.source,
        ...facts,
        i18n,
        ...(opts.fileMode !== undefined ? { fileMode: opts.fileMode } : {}),
      });
    }
    for (const entry of await rejectsRows(row, outcome, opts.mapping!, file.path, i18n)) {
      this.rejects.write(entry);
      this.rejectCount++;
    }
  }

  /**
   * One page after `afterId`, in id order, read without its source rows (`raw`) unless a record taken needs them
   * (NEEDS_SOURCE): a clean file of 20,000 records is read once, lean; a page with a reject is read again whole, up
   * to the last record taken (those do not change any more, so both reads see the same rows). `finalOnly`: stops at
   * the first record that may still change in this run, or above `upTo`. Returns whether the page was full.
   */
  private async page(limit: number, finalOnly: boolean, upTo: number): Promise<{ taken: number; full: boolean }> {
    const { journal } = this.opts;
    const afterId = this.afterId;
    const query = { fileIds: [this.file.id], statuses: ALL_STATUSES };
    const lean = await journal.listRecords({ ...query, afterId, limit, withoutRaw: true });
    let n = lean.length;
    if (finalOnly) {
      n = lean.findIndex((r) => r.id > upTo || !this.final.has(r.status));
      if (n < 0) n = lean.length;
    }
    if (n === 0) return { taken: 0, full: false };
    const chosen = n === lean.length ? lean : lean.slice(0, n);
    const rows = chosen.some((r) => NEEDS_SOURCE.has(outcomeOf(r))) ? await journal.listRecords({ ...query, afterId, limit: n }) : chosen;
    await this.opened();
    for (const row of rows) await this.take(row);
    this.afterId = chosen[n - 1]!.id;
    return { taken: n, full: n === limit };
  }

  /** runs `step` after the steps before it; a step that failed fails every later one (complete rethrows it) */
  private serial<T>(step: () => Promise<T>): Promise<T> {
    const next = this.last.then(() => {
      if (this.failed) throw this.failed;
      if (this.ended) throw new Error(`${this.file.name}: its finish has ended`);
      return step();
    });
    this.last = next.catch((err: unknown) => {
      this.failed ??= err;
    });
    return next;
  }

  private async cleanUp(): Promise<void> {
    lineCache.delete(this.file.path);
    await this.result?.abort().catch(() => {});
    this.rejects?.abort();
  }
}

/**
 * The rows the file read and did not send (map/unsent.ts), after its records: one result line per run of lines,
 * outcome not-selected or excluded with the skip rule's reason; counted in the file's outcomes and listed by the
 * report. They are not rejects: nothing to fix, nothing to drop again.
 */
async function writeUnsent(figures: FileFigures, out: ResultWriter, text: string | undefined, mapping: CompiledMapping | null): Promise<void> {
  if (text === undefined) return;
  const rows = JSON.parse(text) as UnsentRows;
  const targetOf = (name: string | undefined): string => (mapping?.parts ?? (mapping ? [mapping] : [])).find((m) => m.name === name)?.target ?? '';
  for (const g of rows.groups) {
    if (g.count === 0) continue;
    const outcome: Outcome = g.kind;
    figures.outcomes[outcome] = (figures.outcomes[outcome] ?? 0) + g.count;
    (figures.unsent ??= []).push({
      outcome,
      count: g.count,
      lines: linesText(g),
      ...(g.mapping !== undefined ? { mapping: g.mapping } : {}),
      ...(g.reason !== undefined ? { reason: g.reason } : {}),
    });
    const error = g.kind === 'excluded' ? `not sent: ${g.reason ?? ''}` : `not selected by any mapping of the file (${mapping?.name ?? ''})`;
    for (const [line, end] of g.ranges) {
      const entry = {
        line,
        ...(end !== line ? { lineEnd: end } : {}),
        target: g.target ?? targetOf(g.mapping),
        key: '',
        outcome,
        error,
        mapping: g.mapping ?? mapping?.name ?? '',
      };
      if (!out.write(entry)) await out.drain();
    }
  }
}

/** A record a person must see: counted by reason and listed (the first ATTENTION_CAP) with its source row. */
function noteAttention(figures: FileFigures, file: FileRow, row: RecordRow, outcome: Outcome, line: number, key: string): void {
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
    const original = row.raw?.[0] ? (row.raw[0].cells ? [...row.raw[0].cells] : row.raw[0].text !== undefined ? [row.raw[0].text] : undefined) : undefined;
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

/**
 * A record's reason as a person reads it, in the outbox's language: naming the source column, with the value and
 * the WMS field (I18n.reason); the English message when its code has no text; null when it has none.
 */
function reasonText(row: RecordRow, i18n: I18n): string | null {
  const reason = reasonOfRecord(row);
  if (!reason && !row.error) return null;
  // a map-time message starts with its own "line N: "; the result file has the line in its own column
  return i18n.reason(reason, (row.error ?? '').replace(/^lines? \d+(-\d+)?: /, ''), true);
}

/** A fixable record's rows for the rejects file, in its original format, each with its reason (outbox language, with its line). */
async function rejectsRows(row: RecordRow, outcome: Outcome, mapping: CompiledMapping, path: string, i18n: I18n): Promise<RejectItem[]> {
  // xml/json rejects are a listing only: one line per rejected document, with its line range, not
  // the same reason once per item
  const raw0 = row.raw!;
  const listingOnly = mapping.source.format === 'xml' || mapping.source.format === 'json';
  const raws = listingOnly ? [{ ...raw0[0]!, ...(raw0.length > 1 ? { lineEnd: raw0[raw0.length - 1]!.lineEnd ?? raw0[raw0.length - 1]!.line } : {}) }] : raw0;
  const out: RejectItem[] = [];
  const reason = reasonText(row, i18n) ?? i18n.outcome(outcome);
  for (const raw of raws) {
    const bytes = hasCode(row.reason, 'invalid_encoding') ? await originalLine(path, raw.line) : undefined;
    out.push({
      line: raw.line,
      ...(raw.lineEnd !== undefined && raw.lineEnd !== raw.line ? { lineEnd: raw.lineEnd } : {}),
      ...(raw.cells ? { cells: raw.cells } : {}),
      ...(raw.text !== undefined ? { text: raw.text } : {}),
      ...(bytes ? { bytes } : {}),
      reasons: `${i18n.t('reason.atLine', { line: String(raw.line) })}${reason}`,
    });
  }
  return out;
}

/** Every record of a file with its outcome: the result CSV, the rejects file and the file's figures, read in one go. */
export function finishFile(opts: FileFinishOptions): Promise<FileFigures> {
  return createFileFinish(opts).complete();
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
