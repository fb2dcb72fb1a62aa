/**
 * From a `pulls:` entry of the configuration file (src/config/schema.ts PullConfigSchema) to a
 * ScheduledPull. Structural types only: pull/ does not depend on config/.
 */
import type { CsvFormatOptions } from '../outbox/csv.js';
import { ConfigError } from '../shared/errors.js';
import type { StockSearchFilters } from '../wms/schemas.js';
import type { ScheduledPull } from './due.js';
import { validatePullRequest } from './run.js';
import { isPullKind, PULL_KINDS, type PullFormat } from './types.js';

export interface PullConfigEntry {
  name: string;
  what: string;
  schedule: string;
  format?: PullFormat;
  csv?: CsvFormatOptions;
  doneFile?: boolean;
  /** stock-search filters as strings (warehouseId, ownerId, productId, lotNumber, ...) */
  filters?: Record<string, string>;
  fileName?: string;
  pageSize?: number;
}

/** Checks the kind and the filters (ConfigError naming the pull) and builds the ScheduledPull. */
export function scheduledPullFromConfig(entry: PullConfigEntry): ScheduledPull {
  if (!isPullKind(entry.what)) {
    throw new ConfigError(`pulls: "${entry.name}": unknown kind "${entry.what}" (expected one of ${PULL_KINDS.join(', ')})`);
  }
  const request: ScheduledPull['request'] = { what: entry.what };
  if (entry.format !== undefined) request.format = entry.format;
  if (entry.csv !== undefined) request.csv = entry.csv;
  if (entry.doneFile !== undefined) request.doneFile = entry.doneFile;
  if (entry.filters !== undefined && Object.keys(entry.filters).length > 0) request.filters = { ...entry.filters } as StockSearchFilters;
  if (entry.fileName !== undefined) request.fileName = entry.fileName;
  if (entry.pageSize !== undefined) request.pageSize = entry.pageSize;
  try {
    validatePullRequest({ ...request, outDir: '.' });
  } catch (err) {
    throw new ConfigError(`pulls: "${entry.name}": ${(err as Error).message}`, { cause: err });
  }
  return { name: entry.name, schedule: entry.schedule, request };
}
