/**
 * Field sets: what a target's schema accepts, requires and gets implicitly; compiling a mapping's `fields`
 * (or a group's `itemFields`) against it; evaluating them per row, collecting issues.
 */
import type { z } from 'zod';
import type { RowIssue } from '../shared/errors.js';
import { TARGET_INFO, type Target } from '../wms/targets.js';
import { isMissing, problem, type CompileCtx, type Eval, type EvalState } from './evaluation.js';
import { compileExpr } from './expressions.js';
import type { ExprSpec } from './model.js';
import { RowFail } from './transforms.js';
import { cellOf } from './cells.js';
import type { RawRow } from '../parse/types.js';

export interface ShapeInfo {
  keys: Set<string>;
  /** keys the schema requires (no default) */
  required: Set<string>;
  /** keys with a value the mapping does not need to give (status: 1, finishCallBack: false, defaults) */
  implicit: Map<string, unknown>;
}

export function shapeOf(schema: z.ZodType): Record<string, z.ZodType> {
  const shape = (schema as unknown as { shape?: Record<string, z.ZodType> }).shape;
  if (!shape) throw new Error('target schema is not an object schema');
  return shape;
}

export function shapeInfo(schema: z.ZodType): ShapeInfo {
  const shape = shapeOf(schema);
  const info: ShapeInfo = { keys: new Set(Object.keys(shape)), required: new Set(), implicit: new Map() };
  for (const [k, s] of Object.entries(shape)) {
    const u = s.safeParse(undefined);
    if (u.success) {
      if (u.data !== undefined) info.implicit.set(k, u.data);
      continue;
    }
    // a field that only accepts the literal 1 (status: senders always send 1)
    if (k === 'status' && s.safeParse(1).success && !s.safeParse(0).success) {
      info.implicit.set(k, 1);
      continue;
    }
    info.required.add(k);
  }
  return info;
}

/** The schema of a document's items (the target's `items` array), or undefined for flat records. */
export function itemSchemaOf(target: Target): z.ZodType | undefined {
  const key = TARGET_INFO[target].items;
  if (!key) return undefined;
  const arr = shapeOf(TARGET_INFO[target].schema)[key] as unknown as { element?: z.ZodType };
  return arr.element;
}

export interface CompiledField {
  name: string;
  eval: Eval;
  /** the source names (columns, fixed-width fields, paths) its expression reads: what a person edits */
  columns: string[];
}

/** Compiles an expression, noting the source names it reads (CompileCtx.reading). */
export function compileReading(cc: CompileCtx, compile: () => Eval): { eval: Eval; columns: string[] } {
  const outer = cc.reading;
  const reading = new Set<string>();
  cc.reading = reading;
  try {
    return { eval: compile(), columns: [...reading] };
  } finally {
    cc.reading = outer;
    if (outer) for (const n of reading) outer.add(n);
  }
}

export function compileFields(
  cc: CompileCtx,
  fields: Record<string, ExprSpec>,
  info: ShapeInfo,
  basePath: Array<string | number>,
  targetLabel: string,
  exclude: string[] = [],
): CompiledField[] {
  const out: CompiledField[] = [];
  for (const [name, expr] of Object.entries(fields)) {
    const path = [...basePath, name];
    if (!info.keys.has(name) || exclude.includes(name)) {
      const keys = [...info.keys].filter((k) => !exclude.includes(k));
      const near = closest(name, keys);
      problem(cc, path, `${targetLabel} has no field '${name}'${near ? ` (did you mean '${near}'?)` : ''} (fields: ${keys.join(', ')})`);
      continue;
    }
    const req = info.required.has(name);
    out.push({ name, ...compileReading(cc, () => compileExpr(cc, expr, path, req, req ? `${targetLabel} requires ${name}` : '')) });
  }
  for (const r of info.required) {
    if (exclude.includes(r)) continue;
    if (!(r in fields)) problem(cc, basePath, `${targetLabel} requires '${r}' but the mapping gives no expression for it`);
  }
  return out;
}

/** The candidate within edit distance 2 (case-insensitive), if any. */
function closest(word: string, candidates: readonly string[]): string | undefined {
  const w = word.toLowerCase();
  let best: string | undefined;
  let bestD = 3;
  for (const c of candidates) {
    const d = editDistance(w, c.toLowerCase());
    if (d < bestD) {
      bestD = d;
      best = c;
    }
  }
  return best;
}

function editDistance(a: string, b: string): number {
  const prev = Array.from({ length: b.length + 1 }, (_, i) => i);
  for (let i = 1; i <= a.length; i++) {
    let diag = prev[0] as number;
    prev[0] = i;
    for (let j = 1; j <= b.length; j++) {
      const tmp = prev[j] as number;
      prev[j] = Math.min((prev[j] as number) + 1, (prev[j - 1] as number) + 1, diag + (a[i - 1] === b[j - 1] ? 0 : 1));
      diag = tmp;
    }
  }
  return prev[b.length] as number;
}

/** Issues collected for one row or document (allocated only when something fails). */
export class Issues {
  list: RowIssue[] | undefined;
  add(line: number, field: string | undefined, err: RowFail, row?: RawRow): void {
    const where = field ? `line ${line}: field ${field}: ` : `line ${line}: `;
    const cell = cellOf(row, err);
    const issue: RowIssue = { code: err.code, message: `${where}${err.message}${cell ? ` (sheet ${cell.sheet}, cell ${cell.cell})` : ''}` };
    if (cell) {
      issue.sheet = cell.sheet;
      issue.cell = cell.cell;
    }
    if (field) issue.field = field;
    if (err.value !== undefined) issue.value = err.value;
    (this.list ??= []).push(issue);
  }
  push(issue: RowIssue): void {
    (this.list ??= []).push(issue);
  }
}

export function evalFields(
  fields: CompiledField[],
  implicit: Map<string, unknown>,
  row: RawRow,
  st: EvalState,
  issues: Issues,
  fieldPrefix = '',
): Record<string, unknown> {
  const payload: Record<string, unknown> = {};
  for (const [k, v] of implicit) payload[k] = v;
  for (let i = 0; i < fields.length; i++) {
    const f = fields[i] as CompiledField;
    try {
      const v = f.eval(row, st);
      if (!isMissing(v)) payload[f.name] = v;
    } catch (err) {
      if (err instanceof RowFail) issues.add(st.line, fieldPrefix + f.name, err, row);
      else throw err;
    }
  }
  return payload;
}
