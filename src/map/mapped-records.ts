/**
 * Map-level work on a mapped file's outputs, before the app journals them (issue 43: it was done in app/map-file.ts):
 * the header check of a parsed file, an output in the form the journal keeps it (a record to send, or a reject with
 * its reason), the source rows it keeps, and one reject's problems summed up. Pure but for the parser it reads.
 */
import type { ParsedItem, ParserHandle } from '../parse/index.js';
import type { RawRow } from '../parse/types.js';
import { InputError } from '../shared/errors.js';
import { payloadHash } from '../shared/hash.js';
import { reasonOfIssues } from '../shared/reason.js';
import type { JournaledRecord, KeptRawRow } from '../shared/record-model.js';
import type { Target } from '../wms/targets.js';
import type { CompiledMapping } from './compile.js';
import type { MapOutput } from './types.js';

/**
 * One output of a mapping as the journal takes it (journal/types.ts NewRecord, the same JournaledRecord of the
 * floor): a record to send, or a reject, with its status always said and its source rows kept (storedRows).
 */
export interface RecordToJournal extends JournaledRecord {
  target: Target;
  raw: KeptRawRow[];
  status: 'pending' | 'rejected';
}

export function toNewRecord(out: MapOutput, mapping: CompiledMapping): RecordToJournal {
  if (out.ok) {
    const r = out.record;
    return {
      target: r.target,
      op: r.op,
      key: r.key,
      source: r.source,
      mapping: r.mapping,
      payload: r.payload,
      payloadHash: payloadHash(r.payload),
      ...(r.attachmentPath !== undefined ? { attachmentPath: r.attachmentPath } : {}),
      raw: storedRows(r.raw),
      status: 'pending',
    };
  }
  const j = out.reject;
  return {
    target: j.target ?? mapping.target,
    op: (mapping.parts?.find((p) => p.name === j.mapping) ?? mapping).op,
    key: j.key ?? '',
    source: j.source,
    mapping: j.mapping,
    payload: {},
    payloadHash: '',
    raw: storedRows(j.raw),
    status: 'rejected',
    // the mapping's messages are self-contained ("line 14: field weight: '12,3,4' is not a number")
    error: summarizeIssues(j.issues.map((i) => i.message)),
    ...(reasonOfIssues(j.issues) ? { reason: reasonOfIssues(j.issues)! } : {}),
  };
}

/**
 * The source rows as the journal keeps them (KeptRawRow, the journal's StoredRawRow): without their fields by column name, which the mapping
 * has read and nothing reads back (the rejects file and the report write cells and text).
 */
export function storedRows(rows: readonly RawRow[]): KeptRawRow[] {
  return rows.map((r) => {
    const kept: KeptRawRow = { line: r.line };
    if (r.lineEnd !== undefined) kept.lineEnd = r.lineEnd;
    if (r.recordType !== undefined) kept.recordType = r.recordType;
    if (r.cells !== undefined) kept.cells = r.cells;
    if (r.text !== undefined) kept.text = r.text;
    return kept;
  });
}

/** distinct problems named in one reject's reason; beyond, "and N more problems" */
const MAX_PROBLEMS = 20;

/**
 * One message per problem, not per item: a document of 10,000 items whose quantity is 'abc' says so once
 * ("... (the same in 9,999 more items)"), not 10,000 times (the reason is written beside every row of
 * the document: repeated per item it grew quadratically, 400 MB for 2,000 items). Messages that differ
 * only by their line number or item index (`itens[7]`) are one problem.
 */
export function summarizeIssues(messages: readonly string[]): string {
  const groups = new Map<string, { first: string; count: number }>();
  for (const m of messages) {
    const key = m.replace(/^lines? \d+(-\d+)?: /, '').replace(/\[\d+\]/g, '[]');
    const g = groups.get(key);
    if (g) g.count++;
    else groups.set(key, { first: m, count: 1 });
  }
  const parts = [...groups.values()]
    .slice(0, MAX_PROBLEMS)
    .map((g) => (g.count > 1 ? `${g.first} (the same in ${(g.count - 1).toLocaleString('en-US')} more item(s))` : g.first));
  if (groups.size > MAX_PROBLEMS) parts.push(`and ${groups.size - MAX_PROBLEMS} more problem(s)`);
  return parts.join(' | ');
}

/**
 * Passes the parsed items through, after checking once that the header has every column the mapping
 * reads: a wrong delimiter ("codigo,nome" read with ';') or a renamed column is one clear file error,
 * not every row rejected for an empty field.
 */
export async function* checkHeader(items: ParserHandle, mapping: CompiledMapping, fileName: string): AsyncGenerator<ParsedItem> {
  let checked = false;
  const check = () => {
    checked = true;
    const columns = items.facts.columns;
    if (!columns || mapping.columnsRead.length === 0) return;
    const missing = mapping.columnsRead.filter((c) => !columns.includes(c));
    if (missing.length === 0) return;
    const found = columns.length <= 12 ? columns.map((c) => `'${c}'`).join(', ') : `${columns.length} columns`;
    const hint = columns.length === 1 ? ': wrong delimiter?' : '';
    throw new InputError(
      `${fileName}:1: the header has no column ${missing.map((c) => `'${c}'`).join(', ')} that mapping ${mapping.name} reads (found ${found})${hint}`,
      { details: { file: fileName, line: 1, missing } },
    );
  };
  for await (const item of items) {
    if (!checked) check();
    yield item;
  }
  if (!checked) check();
}
