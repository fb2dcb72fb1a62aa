/**
 * Pull: the warehouse's truth back to the ERP as files in <outbox>/exports.
 */
import type { CsvFormatOptions } from '../outbox/csv.js';
import type { MetaStore } from '../journal/types.js';
import type { Logger } from '../shared/logger.js';
import type { WmsClient } from '../wms/client-types.js';
import type { StockSearchFilters } from '../wms/schemas.js';
import type { RefResource } from '../wms/targets.js';

export const PULL_KINDS = [
  'stock',
  'stock-search',
  'inventory',
  'inventory-finished',
  'company',
  'branch',
  'warehouse',
  'sub-warehouses',
  'dock',
  'logistics-profiles',
  'material-statuses',
  'owners',
  'providers',
  'shipping-companies',
  'conversion-factors',
] as const;
export type PullKind = (typeof PULL_KINDS)[number];

export function isPullKind(s: string): s is PullKind {
  return (PULL_KINDS as readonly string[]).includes(s);
}

export const PULL_FORMATS = ['csv', 'jsonl', 'json'] as const;
export type PullFormat = (typeof PULL_FORMATS)[number];

export interface PullRequest {
  what: PullKind;
  /** @default 'csv' */
  format?: PullFormat;
  /** CSV settings (encoding, delimiter, decimal separator, date format...); ignored for jsonl/json */
  csv?: CsvFormatOptions;
  /** stock-search only: the search filters (every one optional) */
  filters?: StockSearchFilters;
  /** the exports folder (<outbox>/exports); created when missing */
  outDir: string;
  /** also write `<file>.done` after the file appears. @default false */
  doneFile?: boolean;
  /** inventory-finished: export again inventories exported before. @default false */
  force?: boolean;
  /**
   * file name instead of `<what>-YYYYMMDD-HHmmss.<ext>` (a plain name, no folder). An existing file of
   * that name is replaced atomically (for ERPs that poll one fixed name); dated names never overwrite.
   */
  fileName?: string;
  /** records per page asked of the WMS. @default the client's page size */
  pageSize?: number;
  /** mode of the export file (config outbox.fileMode; the umask still applies). @default 0o640 */
  fileMode?: number;
  signal?: AbortSignal;
}

/**
 * The lookup cache mappings use for WMS reference reads (src/map/types.ts ReferenceCache). A reference
 * pull hands it the complete, fresh list of records of the resource after the export file was written;
 * the cache replaces what it held for that resource. The pipeline owner wires an implementation.
 */
export interface RefCacheRefresher {
  refresh(resource: RefResource, records: ReadonlyArray<Record<string, unknown>>): void;
}

export interface PullDeps {
  client: WmsClient;
  journal: MetaStore;
  logger: Logger;
  /** clock for file names and journal stamps. @default () => new Date() */
  now?: () => Date;
  refCache?: RefCacheRefresher;
}

export interface PullResult {
  /** path of the file written; null only for inventory-finished when there was nothing new to export */
  file: string | null;
  /** data rows written (inventories: one per item) */
  records: number;
  /** inventory-finished: finished inventories skipped because they were exported before */
  skipped?: number;
  /** inventory kinds: inventories exported */
  inventories?: number;
  /** windows-1252 CSV: characters that could not be represented and were written as '?' */
  replacedChars?: number;
  durationMs: number;
}
