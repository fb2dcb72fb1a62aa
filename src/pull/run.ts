/**
 * runPull: one export from the WMS into <outbox>/exports. Pages are streamed from the client's async
 * iterator straight into the writer with backpressure, so memory does not grow with the number of
 * records. The file is written under a hidden temp name and renamed into place (src/outbox/atomic.ts):
 * a reader polling the folder sees nothing or the whole file.
 */
import { existsSync } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import { basename, join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { createCsvWriter, createJsonArrayWriter, createJsonlWriter, CsvFormatSchema } from '../outbox/csv.js';
import { BridgeError, ConfigError, ErrorCode } from '../shared/errors.js';
import type { PageOptions, WmsClient } from '../wms/client-types.js';
import { StockSearchFilters as StockSearchFiltersSchema } from '../wms/schemas.js';
import type * as S from '../wms/schemas.js';
import type { RefResource } from '../wms/targets.js';
import { readAhead } from './read-ahead.js';
import { COLUMN_SETS, inventoryRows, pickRow, subWarehouseRow, type Row } from './columns.js';
import { isPullKind, PULL_FORMATS, type PullDeps, type PullKind, type PullRequest, type PullResult } from './types.js';

/** The reference resource each reference pull refreshes in the mappings' lookup cache. */
export const PULL_REF_RESOURCE: Readonly<Partial<Record<PullKind, RefResource>>> = {
  company: 'Company',
  branch: 'Branch',
  warehouse: 'Warehouse',
  dock: 'Dock',
  'logistics-profiles': 'LogisticsProfile',
  'material-statuses': 'MaterialStatus',
  owners: 'Owners',
  providers: 'Provider',
  'shipping-companies': 'ShippingCompany',
  'conversion-factors': 'ConversionFactor',
};

/** Journal meta key remembering that a finished inventory was exported. */
export function inventoryExportedKey(id: string): string {
  return `inventory-exported:${id}`;
}

const EXTENSIONS = { csv: 'csv', jsonl: 'jsonl', json: 'json' } as const;

function pad(n: number, width = 2): string {
  return String(n).padStart(width, '0');
}

/** `<what>-YYYYMMDD-HHmmss.<ext>` in the local time of the process. */
export function exportFileName(what: PullKind, format: keyof typeof EXTENSIONS, at: Date): string {
  const stamp = `${at.getFullYear()}${pad(at.getMonth() + 1)}${pad(at.getDate())}-${pad(at.getHours())}${pad(at.getMinutes())}${pad(at.getSeconds())}`;
  return `${what}-${stamp}.${EXTENSIONS[format]}`;
}

/**
 * A name not taken in `dir`: the name itself, else `<stem>-2.<ext>`, `-3`... (two exports of the same
 * kind within one second must not overwrite each other: rename replaces silently).
 */
export function freeFileName(dir: string, name: string): string {
  const taken = (n: string): boolean => existsSync(join(dir, n)) || existsSync(join(dir, `${n}.done`));
  if (!taken(name)) return name;
  const dot = name.lastIndexOf('.');
  const stem = dot > 0 ? name.slice(0, dot) : name;
  const ext = dot > 0 ? name.slice(dot) : '';
  for (let i = 2; i < 10_000; i++) {
    const candidate = `${stem}-${i}${ext}`;
    if (!taken(candidate)) return candidate;
  }
  throw new BridgeError(ErrorCode.OUTBOX, `outbox ${dir}: no free file name for ${name}`);
}

/** Validates a request's fields; throws ConfigError naming the field. */
export function validatePullRequest(req: PullRequest): void {
  if (!isPullKind(req.what)) throw new ConfigError(`pull: unknown kind "${String(req.what)}"`, { details: { what: req.what } });
  const format = req.format ?? 'csv';
  if (!(PULL_FORMATS as readonly string[]).includes(format)) {
    throw new ConfigError(`pull ${req.what}: unknown format "${String(format)}" (expected ${PULL_FORMATS.join(', ')})`);
  }
  if (req.csv !== undefined) {
    const parsed = CsvFormatSchema.safeParse(req.csv);
    if (!parsed.success) {
      const issues = parsed.error.issues.map((i) => `${i.path.join('.') || 'csv'}: ${i.message}`).join('; ');
      throw new ConfigError(`pull ${req.what}: invalid CSV format: ${issues}`);
    }
  }
  if (req.filters !== undefined) {
    if (req.what !== 'stock-search') throw new ConfigError(`pull ${req.what}: filters apply to stock-search only`);
    const parsed = StockSearchFiltersSchema.safeParse(req.filters);
    if (!parsed.success) {
      const issues = parsed.error.issues.map((i) => `${i.path.join('.') || 'filters'}: ${i.message}`).join('; ');
      throw new ConfigError(`pull stock-search: invalid filter: ${issues}`);
    }
  }
  if (req.fileName !== undefined) {
    if (req.fileName === '' || req.fileName !== basename(req.fileName) || req.fileName.includes('\\') || req.fileName.startsWith('.')) {
      throw new ConfigError(`pull ${req.what}: file name "${req.fileName}" must be a plain name (no folder, not hidden)`);
    }
  }
  if (req.pageSize !== undefined && (!Number.isInteger(req.pageSize) || req.pageSize < 1)) {
    throw new ConfigError(`pull ${req.what}: page size must be a positive integer, got ${String(req.pageSize)}`);
  }
}

function abortError(req: PullRequest): BridgeError {
  return new BridgeError(ErrorCode.OUTBOX, `pull ${req.what}: interrupted; no file was written`, { cause: req.signal?.reason });
}

interface RowSink {
  write(row: Row): boolean;
  drain(): Promise<void>;
  close(): Promise<{ replacedChars?: number }>;
  abort(): Promise<void>;
}

function openSink(path: string, req: PullRequest): RowSink {
  const format = req.format ?? 'csv';
  const set = COLUMN_SETS[req.what];
  const options = { doneFile: req.doneFile ?? false, ...(req.fileMode !== undefined ? { mode: req.fileMode } : {}) };
  if (format === 'csv') {
    const w = createCsvWriter(path, { ...options, columns: set.columns, dateColumns: set.dateColumns, format: req.csv ?? {} });
    return {
      write: (row) => w.write(row),
      drain: () => w.drain(),
      close: async () => ({ replacedChars: (await w.close()).replacedChars }),
      abort: () => w.abort(),
    };
  }
  const w = format === 'jsonl' ? createJsonlWriter(path, options) : createJsonArrayWriter(path, options);
  return {
    write: (row) => w.write(row),
    drain: () => w.drain(),
    close: async () => {
      await w.close();
      return {};
    },
    abort: () => w.abort(),
  };
}

interface Ctx {
  skipped: number;
  inventories: number;
  /** ids of finished inventories written to this file (marked exported after the commit) */
  exportedInventoryIds: string[];
  /** records kept for the lookup cache (reference pulls with a refCache only: small lists) */
  refRecords: Record<string, unknown>[] | undefined;
}

function flat<T extends object>(iter: AsyncIterable<T>, ctx: Ctx, columns: readonly string[] | null): AsyncGenerator<Row> {
  return (async function* () {
    for await (const rec of iter) {
      ctx.refRecords?.push(rec as Record<string, unknown>);
      // CSV picks its columns itself (unknown keys ignored, missing ones empty): no copy per record
      yield columns === null ? (rec as Row) : pickRow(rec, columns);
    }
  })();
}

async function* rowsOf(req: PullRequest, deps: PullDeps, ctx: Ctx): AsyncGenerator<Row> {
  const client: WmsClient = deps.client;
  const page: PageOptions = {};
  if (req.pageSize !== undefined) page.pageSize = req.pageSize;
  if (req.signal !== undefined) page.signal = req.signal;
  // JSON formats get objects with exactly the columns, in order; CSV takes the records as they are
  const cols = (req.format ?? 'csv') === 'csv' ? null : COLUMN_SETS[req.what].columns;
  switch (req.what) {
    case 'stock':
      yield* flat(client.listStock(page), ctx, cols);
      return;
    case 'stock-search':
      yield* flat(client.searchStock(req.filters ?? {}, page), ctx, cols);
      return;
    case 'inventory':
      for await (const inv of client.listInventories(page)) {
        ctx.inventories++;
        yield* inventoryRows(inv);
      }
      return;
    case 'inventory-finished':
      for await (const inv of client.listFinishedInventories(page)) {
        if (!req.force && (await deps.journal.getMeta(inventoryExportedKey(inv.id))) !== undefined) {
          ctx.skipped++;
          continue;
        }
        ctx.inventories++;
        ctx.exportedInventoryIds.push(inv.id);
        yield* inventoryRows(inv);
      }
      return;
    case 'sub-warehouses':
      for await (const wh of client.listWarehouses(page)) {
        for await (const sub of client.listSubWarehouses(wh.id, page)) yield subWarehouseRow(wh, sub);
      }
      return;
    case 'company':
      yield* flat<S.CompanyRecord>(client.listCompanies(page), ctx, cols);
      return;
    case 'branch':
      yield* flat(client.listBranches(page), ctx, cols);
      return;
    case 'warehouse':
      yield* flat(client.listWarehouses(page), ctx, cols);
      return;
    case 'dock':
      yield* flat(client.listDocks(page), ctx, cols);
      return;
    case 'logistics-profiles':
      yield* flat(client.listLogisticsProfiles(page), ctx, cols);
      return;
    case 'material-statuses':
      yield* flat(client.listMaterialStatuses(page), ctx, cols);
      return;
    case 'owners':
      yield* flat(client.listOwners(page), ctx, cols);
      return;
    case 'providers':
      yield* flat(client.listProviders(page), ctx, cols);
      return;
    case 'shipping-companies':
      yield* flat(client.listShippingCompanies(page), ctx, cols);
      return;
    case 'conversion-factors':
      yield* flat(client.listConversionFactors(page), ctx, cols);
      return;
    default: {
      const never: never = req.what;
      throw new ConfigError(`pull: unknown kind "${String(never)}"`);
    }
  }
}

/**
 * Exports one kind of WMS data to a new file in req.outDir. Resolves when the file is visible under its
 * final name (and its done file, when asked, is written); on any failure nothing appears and the
 * journal is not touched.
 */
export async function runPull(req: PullRequest, deps: PullDeps): Promise<PullResult> {
  validatePullRequest(req);
  const started = performance.now();
  const now = (deps.now ?? (() => new Date()))();
  const format = req.format ?? 'csv';
  const log = deps.logger.child({ pull: req.what });
  try {
    await mkdir(req.outDir, { recursive: true });
  } catch (err) {
    throw new BridgeError(ErrorCode.OUTBOX, `pull ${req.what}: cannot create the exports folder ${req.outDir}: ${(err as Error).message}`, { cause: err });
  }
  // a fixed file name is replaced atomically (ERPs that poll one name); dated names never overwrite
  const name = req.fileName ?? freeFileName(req.outDir, exportFileName(req.what, format, now));
  const path = join(req.outDir, name);
  const refResource = PULL_REF_RESOURCE[req.what];
  const ctx: Ctx = { skipped: 0, inventories: 0, exportedInventoryIds: [], refRecords: deps.refCache && refResource ? [] : undefined };
  const sink = openSink(path, req);
  let records = 0;
  let replacedChars: number | undefined;
  try {
    // read ahead about two pages: the next page is requested while this one is written
    const ahead = Math.min(10_000, Math.max(64, 2 * (req.pageSize ?? 500)));
    for await (const row of readAhead(rowsOf(req, deps, ctx), ahead)) {
      if (req.signal?.aborted) throw abortError(req);
      records++;
      if (!sink.write(row)) await sink.drain();
    }
    if (req.what === 'inventory-finished' && ctx.inventories === 0) {
      // nothing new: no file (an empty export every schedule tick would only be noise for the ERP)
      await sink.abort();
      const durationMs = Math.round(performance.now() - started);
      log.info({ skipped: ctx.skipped, durationMs }, 'pull: no new finished inventory to export');
      return { file: null, records: 0, skipped: ctx.skipped, inventories: 0, durationMs };
    }
    if (req.signal?.aborted) throw abortError(req);
    replacedChars = (await sink.close()).replacedChars;
  } catch (err) {
    await sink.abort().catch(() => undefined);
    log.error({ err, file: path }, 'pull failed: no file written');
    throw err;
  }
  // the file is in place: remember what it holds (a crash before this line only means the finished
  // inventories are exported again next time, never that one is lost)
  if (req.what === 'inventory-finished') {
    const stamp = `${now.toISOString()} ${name}`;
    for (const id of ctx.exportedInventoryIds) await deps.journal.setMeta(inventoryExportedKey(id), stamp);
  }
  if (refResource && ctx.refRecords && deps.refCache) deps.refCache.refresh(refResource, ctx.refRecords);
  const durationMs = Math.round(performance.now() - started);
  if (replacedChars) log.warn({ file: path, replacedChars }, 'pull: characters not representable in windows-1252 were written as ?');
  log.info({ file: path, records, durationMs, ...(req.what === 'inventory-finished' ? { skipped: ctx.skipped } : {}) }, 'pull: export written');
  const result: PullResult = { file: path, records, durationMs };
  if (req.what === 'inventory-finished') result.skipped = ctx.skipped;
  if (req.what === 'inventory' || req.what === 'inventory-finished') result.inventories = ctx.inventories;
  if (replacedChars !== undefined) result.replacedChars = replacedChars;
  return result;
}
