/**
 * Entry point of the parsers: `openParser(path, options)` dispatches on `options.format` and returns a
 * single-pass async iterable of ParsedItems (rows and row-level errors, in file order) that also
 * exposes live counters (`summary`) and what was learnt about the file (`facts`: header, newline...).
 *
 * Whole-file failures throw InputError from the iteration (cannot open, binary, XML too large or not
 * well-formed, DOCTYPE, trailer count mismatch). A trailer mismatch is only known at the trailer, after
 * rows were yielded: callers must treat the file as failed as a whole when the iteration throws.
 */
import { ConfigError } from '../shared/errors.js';
import { parseDelimited } from './delimited.js';
import { parseFixedWidth } from './fixed-width.js';
import { parseJson, parseJsonl } from './json.js';
import { ParseOptionsSchema, checkParseOptions, type ParseOptions, type ParseOptionsInput } from './options.js';
import type { SourceStats } from './text-source.js';
import type { ParseFacts, ParsedItem, ParseSummary } from './types.js';
import { parseXml } from './xml.js';
import { parseXlsx } from './xlsx.js';

export * from './options.js';
export * from './types.js';
export { splitRecord, resolveHeader } from './delimited.js';
export { matchRecord, cutFields } from './fixed-width.js';
export { flatten, decodeXmlEntities } from './flatten.js';
export { jsonItemPathOf } from './json.js';
export { columnLetter, type TypedCell } from './xlsx.js';

export interface ParserHandle extends AsyncIterable<ParsedItem> {
  /** the resolved options (defaults filled in) */
  readonly options: ParseOptions;
  /** live counters: rows and error items yielded so far, bytes read so far */
  readonly summary: ParseSummary;
  /** facts learnt while reading (header cells, column names, renamed duplicates, newline, item path) */
  readonly facts: ParseFacts;
}

/** Validates options (zod) and fills defaults; a bad option is a ConfigError naming the key path. */
export function resolveOptions(options: ParseOptionsInput | ParseOptions): ParseOptions {
  const r = ParseOptionsSchema.safeParse(options);
  if (!r.success) {
    const first = r.error.issues[0];
    const where = first && first.path.length > 0 ? first.path.join('.') : 'format';
    throw new ConfigError(`parse options: ${where}: ${first?.message ?? 'invalid'}`, { cause: r.error });
  }
  const problems = checkParseOptions(r.data);
  if (problems.length > 0) throw new ConfigError(`parse options: ${problems.join('; ')}`);
  return r.data;
}

/**
 * Opens a streaming parser over `path`. Nothing is read until the iteration starts; the iterable is
 * single-pass (iterating twice throws). Breaking out of a for-await closes the file.
 */
export function openParser(path: string, options: ParseOptionsInput | ParseOptions): ParserHandle {
  const o = resolveOptions(options);
  const stats: SourceStats = { bytes: 0 };
  const summary: ParseSummary = { rows: 0, errors: 0, bytes: 0 };
  const facts: ParseFacts = { bytes: 0 };
  let started = false;
  const source = (): AsyncGenerator<ParsedItem> => {
    switch (o.format) {
      case 'delimited':
        return parseDelimited(path, o, facts, stats);
      case 'fixed-width':
        return parseFixedWidth(path, o, facts, stats);
      case 'xml':
        return parseXml(path, o, facts, stats);
      case 'json':
        return parseJson(path, o, facts, stats);
      case 'jsonl':
        return parseJsonl(path, o, facts, stats);
      case 'xlsx':
        return parseXlsx(path, o, facts, stats);
    }
  };
  async function* run(): AsyncGenerator<ParsedItem> {
    try {
      for await (const item of source()) {
        summary.bytes = facts.bytes = stats.bytes;
        if (item.kind === 'row') summary.rows++;
        else summary.errors++;
        yield item;
      }
    } finally {
      summary.bytes = facts.bytes = stats.bytes;
      if (facts.newline === undefined && stats.newline !== undefined) facts.newline = stats.newline;
      if (stats.encoding !== undefined) facts.encoding = stats.encoding;
      if (stats.bom) facts.bom = true;
    }
  }
  return {
    options: o,
    summary,
    facts,
    [Symbol.asyncIterator]() {
      if (started) throw new Error(`openParser(${path}): the parser is single-pass and was already iterated`);
      started = true;
      return run();
    },
  };
}

/** Reads a whole file into memory (previews, tests, small files): items, summary and facts. */
export async function collectItems(
  path: string,
  options: ParseOptionsInput | ParseOptions,
): Promise<{ items: ParsedItem[]; summary: ParseSummary; facts: ParseFacts }> {
  const p = openParser(path, options);
  const items: ParsedItem[] = [];
  for await (const item of p) items.push(item);
  return { items, summary: { ...p.summary }, facts: p.facts };
}
