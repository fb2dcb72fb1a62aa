/**
 * The asynchronous half of the receiver: takes undelivered events from the journal, writes them to
 * the outbox and marks them delivered.
 *
 * Per kind and batch: `<outboxDir>/webhooks/<kind>/<kind>-<YYYYMMDD-HHmmss>-<firstId>.jsonl` and, for
 * kinds with a known shape, a flattened `.csv` beside it. Both are written atomically (temp + rename,
 * src/outbox/atomic.ts), never appended, so an importer never reads half a file. The name derives
 * from the batch's first event (its journal id and the time it was received), so a batch rewritten
 * after a crash between the write and markWebhookDelivered replaces the same files instead of adding
 * copies.
 */
import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import type { WebhookEventRow, FileLedger, RecordQueue, WebhookInbox } from '../journal/types.js';
import type { Logger } from '../shared/logger.js';
import { errorMessage } from '../shared/errors.js';
import { createCsvWriter, createJsonlWriter, type CsvFormatOptions } from '../outbox/csv.js';
import { modeOption } from '../outbox/atomic.js';
import { extractLinkId } from './event.js';
import { csvColumnsFor, csvDateColumns, flattenEvent } from './flatten.js';

/** Where an event's document came from (the ERP file and line wmsbridge sent it from). */
export interface SourceLink {
  recordId: number;
  /** the file name as dropped in the inbox */
  file: string;
  /** its first line */
  line: number;
}

/** One event as written to the JSONL file. */
export interface WebhookOutboxLine {
  id: number;
  kind: string;
  dedupKey: string;
  eventId: string | null;
  receivedAt: string;
  source_file: string | null;
  source_line: number | null;
  record_id: number | null;
  /** the payload as received (parsed; a body that no longer parses is kept as text in `raw`) */
  payload?: unknown;
  raw?: string;
}

export interface FlushOptions {
  outboxDir: string;
  /** events read from the journal per round. @default 500 */
  batchSize?: number;
  csvFormat?: CsvFormatOptions;
  /** mode of the files written (outbox.fileMode). @default DEFAULT_OUTBOX_FILE_MODE */
  fileMode?: number;
}

export interface FlushDeps {
  journal: WebhookInbox & RecordQueue & FileLedger;
  logger: Logger;
}

/** An event ready to be written: the journal row, its parsed body and its source link. */
export interface PreparedWebhookEvent extends WebhookEventRow {
  /** the parsed body; undefined when the stored body does not parse (it is then written as `raw`) */
  payload: unknown;
  parsed: boolean;
  link?: SourceLink | undefined;
}

export interface BatchFiles {
  kind: string;
  count: number;
  jsonl: string;
  csv: string | null;
}

/**
 * `<kind>-<YYYYMMDD-HHmmss>-<firstId>` from the first event of a batch (UTC receive time; the id
 * zero-padded to 9 digits so names sort in delivery order). Pure.
 */
export function batchBaseName(kind: string, first: Pick<WebhookEventRow, 'id' | 'receivedAt'>): string {
  const d = new Date(first.receivedAt);
  const valid = !Number.isNaN(d.getTime());
  const p = (n: number): string => String(n).padStart(2, '0');
  const stamp = valid
    ? `${d.getUTCFullYear()}${p(d.getUTCMonth() + 1)}${p(d.getUTCDate())}-${p(d.getUTCHours())}${p(d.getUTCMinutes())}${p(d.getUTCSeconds())}`
    : '00000000-000000';
  return `${kind}-${stamp}-${String(first.id).padStart(9, '0')}`;
}

function parseBody(body: string): { ok: true; payload: unknown } | { ok: false } {
  try {
    return { ok: true, payload: JSON.parse(body) as unknown };
  } catch {
    return { ok: false };
  }
}

/** Looks up the source file/line of the documents events refer to, cached for one flush. */
function createLinkResolver(journal: RecordQueue & FileLedger, logger: Logger): (wmsId: string | undefined) => Promise<SourceLink | undefined> {
  const byWmsId = new Map<string, SourceLink | undefined>();
  const fileNames = new Map<number, string | undefined>();
  return async (wmsId) => {
    if (wmsId === undefined) return undefined;
    if (byWmsId.has(wmsId)) return byWmsId.get(wmsId);
    let link: SourceLink | undefined;
    try {
      const record = await journal.findRecordByWmsId(wmsId);
      if (record) {
        if (!fileNames.has(record.fileId)) {
          const f = await journal.getFile(record.fileId);
          fileNames.set(record.fileId, f?.name);
        }
        link = { recordId: record.id, file: fileNames.get(record.fileId) ?? `file #${record.fileId}`, line: record.source.line };
      }
    } catch (err) {
      logger.warn({ err: errorMessage(err) }, 'webhook flush: source lookup failed; writing the event unlinked');
    }
    byWmsId.set(wmsId, link);
    return link;
  };
}

/**
 * Writes one kind's batch (events sorted by id) to its JSONL file and, when the kind's shape is
 * known, its CSV. Resolves when both files are in place.
 */
export async function writeWebhookBatch(options: FlushOptions, kind: string, events: readonly PreparedWebhookEvent[]): Promise<BatchFiles> {
  const first = events[0];
  if (!first) throw new RangeError('writeWebhookBatch: empty batch');
  const dir = join(options.outboxDir, 'webhooks', kind);
  await mkdir(dir, { recursive: true });
  const base = batchBaseName(kind, first);
  const jsonlPath = join(dir, `${base}.jsonl`);
  const csvColumns = csvColumnsFor(kind);
  const csvPath = csvColumns ? join(dir, `${base}.csv`) : null;

  const jsonl = createJsonlWriter(jsonlPath, modeOption(options.fileMode));
  const csv =
    csvColumns && csvPath
      ? createCsvWriter(csvPath, {
          columns: csvColumns,
          format: options.csvFormat ?? {},
          dateColumns: csvDateColumns(csvColumns),
          ...modeOption(options.fileMode),
        })
      : undefined;
  try {
    for (const e of events) {
      const line: WebhookOutboxLine = {
        id: e.id,
        kind: e.kind,
        dedupKey: e.dedupKey,
        // the receiver keyed the event by its id when it had one (header first), else by a body hash
        eventId: e.dedupKey.startsWith('sha256:') ? null : e.dedupKey,
        receivedAt: e.receivedAt,
        source_file: e.link?.file ?? null,
        source_line: e.link?.line ?? null,
        record_id: e.link?.recordId ?? e.recordId ?? null,
        ...(e.parsed ? { payload: e.payload } : { raw: e.body }),
      };
      if (!jsonl.write(line)) await jsonl.drain();
      if (csv) {
        const common: Record<string, unknown> = {
          received_at: e.receivedAt,
          kind: e.kind,
          event_id: line.eventId ?? '',
          dedup_key: e.dedupKey,
          source_file: line.source_file ?? '',
          source_line: line.source_line ?? '',
        };
        for (const row of flattenEvent(kind, e.payload)) {
          if (!csv.write({ ...row, ...common })) await csv.drain();
        }
      }
    }
    await jsonl.close();
    if (csv) await csv.close();
  } catch (err) {
    await jsonl.abort().catch(() => undefined);
    if (csv) await csv.abort().catch(() => undefined);
    throw err;
  }
  return { kind, count: events.length, jsonl: jsonlPath, csv: csvPath };
}

/**
 * One flush: reads undelivered events page by page, writes each kind's batch, marks them delivered.
 * Resolves to the number of events delivered. A failure (full disk) leaves the rest undelivered for
 * the next flush; batches already written stay marked.
 */
export async function flushWebhookEvents(options: FlushOptions, deps: FlushDeps): Promise<{ delivered: number; files: BatchFiles[] }> {
  const { journal, logger } = deps;
  const batchSize = options.batchSize ?? 500;
  const resolveLink = createLinkResolver(journal, logger);
  const files: BatchFiles[] = [];
  let delivered = 0;
  for (;;) {
    const events = await journal.listWebhookEvents({ undeliveredOnly: true, limit: batchSize });
    if (events.length === 0) break;
    const byKind = new Map<string, PreparedWebhookEvent[]>();
    for (const e of [...events].sort((a, b) => a.id - b.id)) {
      const parsed = parseBody(e.body);
      const payload = parsed.ok ? parsed.payload : undefined;
      const link = await resolveLink(parsed.ok ? extractLinkId(payload) : undefined);
      let list = byKind.get(e.kind);
      if (!list) byKind.set(e.kind, (list = []));
      list.push({ ...e, payload, parsed: parsed.ok, link });
    }
    for (const [kind, batch] of byKind) {
      const written = await writeWebhookBatch(options, kind, batch);
      await journal.markWebhookDelivered(batch.map((e) => e.id));
      files.push(written);
      delivered += batch.length;
      logger.info({ kind, count: batch.length, file: written.jsonl }, 'webhooks written to outbox');
    }
    if (events.length < batchSize) break;
  }
  return { delivered, files };
}
