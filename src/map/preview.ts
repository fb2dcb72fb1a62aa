/**
 * Preview: map a data file with a mapping and return what would be sent, without sending anything.
 * Without a ReferenceCache, read-only lookups stay symbolic (`<lookup Warehouse codeERP=CD-SP01>`).
 */
import { openParser, type ParsedItem, type ParseOptions } from '../parse/index.js';
import { loadMappingFile } from './load.js';
import type { CompiledMapping } from './compile.js';
import type { MappedRecord, MapStats, ReferenceCache, RejectedRow } from './types.js';
import { basename } from 'node:path';
import { MappingError } from '../shared/errors.js';
import { composeMappings, sharingProblem } from './multi.js';
import { UnsentTally, type UnsentRows } from './unsent.js';

export interface PreviewOptions {
  /** stop after this many outputs (records + rejects) */
  limit?: number;
  /** resolve read-only lookups with this cache; without it they print as <lookup ...> */
  refs?: ReferenceCache;
  /** "now" of the run (templates) @default new Date() */
  now?: Date;
  /** the file's parsed items (a caller that keeps a sample's, as the studio does between edits); else openParser */
  items?: (path: string, source: ParseOptions) => AsyncIterable<ParsedItem>;
}

export interface PreviewResult {
  mapping: CompiledMapping;
  records: MappedRecord[];
  rejects: RejectedRow[];
  stats: MapStats;
  /** rows read and not sent: not selected by any mapping (filter), excluded by a skip rule */
  unsent: UnsentRows;
  /** true when the limit stopped the preview before the end of the file */
  truncated: boolean;
}

const NO_REFS: ReferenceCache = { find: () => undefined, has: () => false };

/** Maps `dataPath` with an already loaded mapping. */
export async function previewWith(mapping: CompiledMapping, dataPath: string, options: PreviewOptions = {}): Promise<PreviewResult> {
  const stats: MapStats = { rows: 0, skipped: 0, records: 0, rejects: 0 };
  const records: MappedRecord[] = [];
  const rejects: RejectedRow[] = [];
  const limit = options.limit ?? Number.POSITIVE_INFINITY;
  let truncated = false;
  const items = options.items ? options.items(dataPath, mapping.source) : openParser(dataPath, mapping.source);
  const unsent = new UnsentTally();
  const ctx = {
    unsent,
    file: basename(dataPath),
    refs: options.refs ?? NO_REFS,
    now: options.now ?? new Date(),
    stats,
    symbolicLookups: options.refs === undefined,
  };
  for await (const out of mapping.mapItems(items, ctx)) {
    if (records.length + rejects.length >= limit) {
      truncated = true;
      break;
    }
    if (out.ok) records.push(out.record);
    else rejects.push(out.reject);
  }
  return { mapping, records, rejects, stats, unsent: unsent.toJSON(), truncated };
}

/**
 * Loads the mapping (MappingError when invalid) and previews `dataPath` with it; with several mapping files, every
 * one of them applies to the file as in a run (multi.ts: they must declare that they share it).
 */
export async function previewFile(mappingPath: string | readonly string[], dataPath: string, options: PreviewOptions = {}): Promise<PreviewResult> {
  const paths = typeof mappingPath === 'string' ? [mappingPath] : mappingPath;
  const parts: CompiledMapping[] = [];
  for (const p of paths) parts.push(await loadMappingFile(p));
  const problem = parts.length > 1 ? sharingProblem(parts) : null;
  if (problem !== null) throw new MappingError(`${basename(dataPath)}: ${problem}`);
  return previewWith(composeMappings(parts, basename(dataPath)), dataPath, options);
}
