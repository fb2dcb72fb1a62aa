/**
 * A compiled mapping as the row mappers use it (the plan compileMapping builds once), the state of one
 * mapItems call, and rejects (of rows and of parse errors).
 */
import type { z } from 'zod';
import type { ParsedErrorItem, ParsedItem, RawRow } from '../parse/types.js';
import { MappingError, type RowIssue } from '../shared/errors.js';
import type { RefResource, Target } from '../wms/targets.js';
import type { Cond, Eval, EvalState } from './evaluation.js';
import type { FastCheck } from './fast-check.js';
import type { CompiledField } from './fields.js';
import type { MappingSpec } from './model.js';
import type { MapOutput, MapStats, RecordOp, RejectedRow, SourceLocation } from './types.js';

export interface MappingPlan {
  name: string;
  file: string;
  target: Target;
  op: RecordOp;
  xml: boolean;
  headerFields: CompiledField[];
  headerImplicit: Map<string, unknown>;
  /** the key expression, or undefined: the target's natural key */
  keyEval: Eval | undefined;
  attachmentEval: Eval | undefined;
  filter: Cond | undefined;
  schema: z.ZodType;
  fastCheck: FastCheck | undefined;
  referenceNeeds: Array<{ resource: RefResource; by: string }>;
  /** documents: the group, its items array and item fields, the document key, the item record types (fixed-width) */
  group: MappingSpec['group'];
  itemsKey: string | undefined;
  itemFields: CompiledField[];
  itemImplicit: Map<string, unknown>;
  groupByEval: Eval | undefined;
  itemRecords: Set<string> | undefined;
  /**
   * the source names (columns, fixed-width fields, paths) each target field reads, by field path: `weight`,
   * `pickingItens[].quantity`, `key`, `group.by` (columnsOfField reads it)
   */
  sourceColumns: ReadonlyMap<string, readonly string[]>;
  /** declared skips (`skip`), in order: rows the mapping selects but must not send */
  skips: Array<{ when: Cond; reason: string }>;
  /** multi-record files: the record types under an item, and those every following line may read (record-groups.ts) */
  lotRecords: Set<string> | undefined;
  contextRecords: Set<string> | undefined;
}

/**
 * The source names a target field (a RowIssue's or a reason's `field`: `pickingItens[2].productID`) reads, as
 * the person editing the file knows them: `peso_bruto` for `weight`. A path inside a field (`items[0].x.y`)
 * falls back to the field that holds it. undefined: not from the mapping's fields (a constant, an implicit value).
 */
export function columnsOfField(sourceColumns: ReadonlyMap<string, readonly string[]>, field: string | undefined): string | undefined {
  if (!field) return undefined;
  let path = field.replace(/\[\d+\]/g, '[]');
  for (;;) {
    const cols = sourceColumns.get(path);
    if (cols) return cols.length ? cols.join(', ') : undefined;
    const cut = Math.max(path.lastIndexOf('.'), path.lastIndexOf('['));
    if (cut <= 0) return undefined;
    path = path.slice(0, cut);
  }
}

/** A row's issues with the source column(s) each one's field reads (a parse error's field is a source name already). */
function withColumns(plan: MappingPlan, issues: RowIssue[]): RowIssue[] {
  for (const issue of issues) {
    if (issue.column !== undefined) continue;
    const column = columnsOfField(plan.sourceColumns, issue.field);
    if (column !== undefined) issue.column = column;
  }
  return issues;
}

/** One mapItems call: the plan, the evaluation state (mutated per row), the counters. */
export interface MapRun {
  plan: MappingPlan;
  st: EvalState;
  stats: MapStats | undefined;
  /** counts an output */
  out(o: MapOutput): MapOutput;
  /** the filter's verdict on a row: kept, skipped, or a reject when it could not be evaluated */
  passes(row: RawRow): boolean | MapOutput;
}

export type Items = AsyncIterable<ParsedItem>;

export function makeReject(plan: MappingPlan, rows: RawRow[], issues: RowIssue[], key: string | undefined): MapOutput {
  const first = rows[0] as RawRow;
  const reject: RejectedRow = {
    source: location(first, rows[rows.length - 1] as RawRow, plan.xml),
    raw: rows,
    issues: withColumns(plan, issues),
    mapping: plan.name,
    target: plan.target,
  };
  if (key !== undefined) reject.key = key;
  return { ok: false, reject };
}

/**
 * Read-only lookups need their resource in the reference cache (preloaded by the app), unless symbolic.
 * Called when the mapping starts (on the first read of mapItems' output), not when mapItems is called.
 */
export function checkReferenceNeeds(run: MapRun): void {
  const { plan, st } = run;
  if (st.symbolic) return;
  for (const need of plan.referenceNeeds) {
    if (!st.ctx.refs.has(need.resource)) {
      throw new MappingError(
        `${plan.file}: mapping ${plan.name} looks up ${need.resource} by ${need.by}, but ${need.resource} was not loaded into the reference cache`,
      );
    }
  }
}

/** A parse error as its own reject. */
export function parseErrorReject(plan: MappingPlan, item: ParsedErrorItem): MapOutput {
  return makeReject(plan, [errorRaw(item)], [errorIssue(item)], undefined);
}

export function errorRaw(item: ParsedErrorItem): RawRow {
  const raw: RawRow = { line: item.line, fields: {} };
  if (item.lineEnd !== undefined) raw.lineEnd = item.lineEnd;
  if (item.cells !== undefined) raw.cells = item.cells;
  if (item.text !== undefined) raw.text = item.text;
  if (item.recordType !== undefined) raw.recordType = item.recordType;
  return raw;
}

export function errorIssue(item: ParsedErrorItem): RowIssue {
  const msg = item.issue.message;
  const issue: RowIssue = { ...item.issue, message: /^line \d/.test(msg) ? msg : `line ${item.line}: ${msg}` };
  // a parser names the source column itself
  if (issue.field !== undefined && issue.column === undefined) issue.column = issue.field;
  return issue;
}

export function location(first: RawRow, last: RawRow, xml: boolean): SourceLocation {
  const loc: SourceLocation = { line: first.line };
  const end = last.lineEnd ?? last.line;
  if (end !== first.line) loc.lineEnd = end;
  if (xml && first.recordType !== undefined) loc.element = first.recordType;
  return loc;
}
