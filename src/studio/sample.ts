/**
 * The sample as the studio's grid shows it: decoded with the mapping's source options (or, without a mapping,
 * with the options `infer` sniffed), its rows with their line and record type, the columns per record type, and
 * what `infer`'s column typing finds in each column (type, share, evidence, examples). Nothing here is new
 * parsing or typing: src/parse reads the file, src/infer sniffs and types.
 */
import { extname } from 'node:path';
import { parseDocument } from 'yaml';
import { openParser, type ParseOptionsInput, type RawRow } from '../parse/index.js';
import { sniffFile, type Sniffed } from '../infer/sniff.js';
import { sourceOptions } from '../infer/propose.js';
import { fileDecimalSeparator, profileColumn } from '../infer/types.js';
import { errorMessage } from '../shared/errors.js';

/** rows the grid shows (and the column typing reads) */
export const GRID_ROWS = 2000;

export interface GridColumn {
  name: string;
  kind: string;
  /** share of the non-empty values that fit the kind (infer's confidence in it) */
  confidence: number;
  evidence: string;
  examples: string[];
  format?: string;
  /** fixed-width: 1-based position and length */
  start?: number;
  length?: number;
}

export interface GridRow {
  line: number;
  lineEnd?: number;
  recordType?: string;
  /** 0 header, 1 item, 2 lot (the mapping's group levels), else 0 */
  level: number;
  cells: Record<string, string>;
  /** a parse error item: the reason, and the raw text */
  error?: string;
  text?: string;
}

export interface SampleGrid {
  file: string;
  /** how it was decoded: 'mapping' (the editor's source options) or 'infer' (sniffed) */
  decodedWith: 'mapping' | 'infer';
  source: unknown;
  notes: string[];
  encoding?: string;
  delimiter?: string;
  /** record type -> its columns; '' for files with one kind of row */
  columns: Record<string, GridColumn[]>;
  recordTypes: string[];
  rows: GridRow[];
  truncated: boolean;
  /** xlsx: the workbook's sheets in tab order, and the one read */
  sheets?: string[];
  sheet?: string;
  problem?: string;
}

/** The `source:` and group levels of a mapping text, read leniently (the text may not validate yet). */
export function sourceOfText(text: string | undefined): { source?: ParseOptionsInput; levels: Map<string, number> } {
  const levels = new Map<string, number>();
  if (!text) return { levels };
  try {
    const obj = parseDocument(text).toJS({ maxAliasCount: 100 }) as Record<string, unknown> | null;
    const group = (obj?.['group'] ?? {}) as Record<string, unknown>;
    const list = (v: unknown): string[] => (typeof v === 'string' ? [v] : Array.isArray(v) ? v.filter((x): x is string => typeof x === 'string') : []);
    for (const t of list(group['headerRecord'])) levels.set(t, 0);
    for (const t of list(group['itemRecord'])) levels.set(t, 1);
    for (const t of list(group['lotRecord'])) levels.set(t, 2);
    const source = obj?.['source'];
    return source && typeof source === 'object' ? { source: source as ParseOptionsInput, levels } : { levels };
  } catch {
    return { levels };
  }
}

function sniffNotes(s: Sniffed): string[] {
  return [
    `encoding: ${s.encoding.ascii ? 'utf-8 (ASCII)' : s.encoding.encoding}${s.encoding.bom ? ' + BOM' : ''}: ${s.encoding.evidence}`,
    `format: ${s.formatEvidence}`,
    ...(s.multiRecord ? [`record types: ${s.multiRecord.evidence}`] : []),
  ];
}

async function readRows(path: string, source: ParseOptionsInput, levels: Map<string, number>) {
  const parser = openParser(path, source);
  const rows: GridRow[] = [];
  const raw: RawRow[] = [];
  let truncated = false;
  for await (const item of parser) {
    if (rows.length >= GRID_ROWS) {
      truncated = true;
      break;
    }
    if (item.kind === 'row') {
      const r = item.row;
      raw.push(r);
      rows.push({
        line: r.line,
        ...(r.lineEnd !== undefined ? { lineEnd: r.lineEnd } : {}),
        ...(r.recordType !== undefined ? { recordType: r.recordType } : {}),
        level: r.recordType !== undefined ? (levels.get(r.recordType) ?? 0) : 0,
        cells: r.fields,
      });
    } else {
      rows.push({
        line: item.line,
        ...(item.recordType !== undefined ? { recordType: item.recordType } : {}),
        level: 0,
        cells: {},
        error: `${item.issue.code}: ${item.issue.message}`,
        ...(item.text !== undefined ? { text: item.text.slice(0, 400) } : {}),
      });
    }
  }
  return { rows, raw, truncated, facts: parser.facts, options: parser.options };
}

/** infer's typing of each column, per record type (examples: the first distinct non-empty values). */
function columnsOf(raw: RawRow[], fixed: boolean, positions: Map<string, { start: number; length: number }>): Record<string, GridColumn[]> {
  const byType = new Map<string, RawRow[]>();
  for (const r of raw) {
    const t = r.recordType ?? '';
    const list = byType.get(t) ?? [];
    list.push(r);
    byType.set(t, list);
  }
  const out: Record<string, GridColumn[]> = {};
  for (const [type, rows] of byType) {
    const names: string[] = [];
    const seen = new Set<string>();
    for (const r of rows.slice(0, 200))
      for (const k of Object.keys(r.fields))
        if (!seen.has(k)) {
          seen.add(k);
          names.push(k);
        }
    const rawCols = names.map((n) => rows.map((r) => r.fields[n] ?? ''));
    const fd = fileDecimalSeparator(rawCols);
    out[type] = names.map((n, i) => {
      const p = profileColumn(n, i, rawCols[i]!, { fileDecimal: fd.decimal, fixedWidth: fixed });
      const examples = [...new Set(p.values.filter((v) => v !== ''))].slice(0, 3);
      const pos = positions.get(`${type}\u0000${n}`);
      return {
        name: n,
        kind: p.type.kind,
        confidence: Math.round(p.type.share * 100) / 100,
        evidence: p.type.evidence,
        examples,
        ...(p.type.format !== undefined ? { format: p.type.format } : {}),
        ...(pos ?? {}),
      };
    });
  }
  return out;
}

/**
 * The grid of `path`: with the source options of `mappingText` when it has a `source:` the parser accepts, else
 * with the options `infer` sniffs. `sheet` (xlsx) picks the tab to show.
 */
export async function sampleGrid(path: string, mappingText?: string, sheet?: string): Promise<SampleGrid> {
  const { source: fromMapping, levels } = sourceOfText(mappingText);
  const notes: string[] = [];
  let source: ParseOptionsInput | undefined;
  let decodedWith: SampleGrid['decodedWith'] = 'mapping';
  let sniffed: Sniffed | undefined;
  const isXlsx = extname(path).toLowerCase() === '.xlsx';
  if (fromMapping && typeof fromMapping === 'object' && 'format' in fromMapping) source = fromMapping;
  if (source && isXlsx && sheet !== undefined) source = { ...source, sheet } as ParseOptionsInput;
  let result: Awaited<ReturnType<typeof readRows>> | undefined;
  let problem: string | undefined;
  if (source) {
    try {
      result = await readRows(path, source, levels);
    } catch (err) {
      problem = `the mapping's source options do not read this file: ${errorMessage(err)}`;
    }
  }
  if (!result) {
    decodedWith = 'infer';
    if (isXlsx) source = { format: 'xlsx', ...(sheet !== undefined ? { sheet } : {}) } as ParseOptionsInput;
    else {
      sniffed = await sniffFile(path);
      source = sourceOptions(sniffed);
      notes.push(...sniffNotes(sniffed));
    }
    result = await readRows(path, source!, levels);
  }
  const o = result.options;
  const positions = new Map<string, { start: number; length: number }>();
  if (o.format === 'fixed-width')
    for (const r of o.records) for (const f of r.fields) positions.set(`${r.type}\u0000${f.name}`, { start: f.start, length: f.length });
  const columns = columnsOf(result.raw, o.format === 'fixed-width', positions);
  // fixed-width files with one record type: one set of columns, named by the type
  const recordTypes = Object.keys(columns).filter((t) => t !== '');
  const encoding = result.facts.encoding ?? ('encoding' in o ? (o.encoding as string | undefined) : undefined);
  return {
    file: path,
    decodedWith,
    source: source,
    notes,
    ...(encoding !== undefined ? { encoding } : {}),
    ...(o.format === 'delimited' ? { delimiter: o.delimiter } : {}),
    columns,
    recordTypes,
    rows: result.rows,
    truncated: result.truncated,
    ...(result.facts.sheetNames ? { sheets: result.facts.sheetNames } : {}),
    ...(result.facts.sheetName ? { sheet: result.facts.sheetName } : {}),
    ...(problem !== undefined ? { problem } : {}),
  };
}
