/**
 * What compiled mapping functions share: the per-row evaluation state, the compile-time context (problems,
 * names a row may hold, reference needs), lookup placeholders and the text a value contributes to a key.
 */
import type { ParseOptions } from '../parse/options.js';
import type { RefResource } from '../wms/targets.js';
import type { MappingProblem } from './problems.js';
import { safeString } from './transforms.js';
import { isRef, type MapContext } from './types.js';
import type { RawRow } from '../parse/types.js';

/**
 * A read-only lookup not resolved (preview without a WMS). Prints as `<lookup Warehouse codeERP=CD-SP01>`
 * in JSON and tables, validates as a UUID.
 */
export class LookupPlaceholder {
  constructor(
    readonly resource: RefResource,
    readonly by: string,
    readonly value: string,
    readonly select?: string,
  ) {}
  get label(): string {
    return `<lookup ${this.resource} ${this.by}=${this.value}${this.select ? ` .${this.select}` : ''}>`;
  }
  toJSON(): string {
    return this.label;
  }
  toString(): string {
    return this.label;
  }
}

/** The UUID RefValues and lookup placeholders are replaced with for validation at map time. */
export const PLACEHOLDER_UUID = '00000000-0000-4000-8000-000000000000';

// ---------------------------------------------------------------------------------------------
// Evaluation state (one object per mapItems call, mutated per row: no per-row allocation)
// ---------------------------------------------------------------------------------------------

export interface EvalState {
  ctx: MapContext;
  symbolic: boolean;
  line: number;
}

export type Eval = (row: RawRow, st: EvalState) => unknown;

export const isMissing = (v: unknown): boolean => v === undefined || v === null || v === '';

/** The text a value contributes to a key: a RefValue's natural key, a lookup's label, else the value. */
export function keyText(v: unknown): string | undefined {
  if (isMissing(v)) return undefined;
  if (isRef(v)) return v.$ref.value;
  if (v instanceof LookupPlaceholder) return v.label;
  return typeof v === 'string' ? v : safeString(v);
}

export interface CompileCtx {
  format: ParseOptions['format'];
  /** names a source row may hold (declared columns / fixed-width fields); undefined: unknown */
  names: Set<string> | undefined;
  namesLabel: string;
  timeZone: string;
  problems: MappingProblem[];
  needs: Map<string, { resource: RefResource; by: string }>;
  /** every source name read by name (col / field / shorthand) */
  read: Set<string>;
  /** the source names (columns, fixed-width fields, paths, template names) the expression being compiled reads */
  reading?: Set<string>;
  /** the source names the attachment path (attachmentPath) reads */
  attachmentColumns?: string[];
  /** names of the explode element children, when compiling item fields of an exploding group */
  explodePrefix?: string;
}

export function problem(cc: CompileCtx, path: Array<string | number>, message: string): void {
  cc.problems.push({ path, message });
}

export function sourceNames(source: ParseOptions): { names: Set<string> | undefined; label: string } {
  if (source.format === 'delimited' || source.format === 'xlsx') {
    if (source.format === 'delimited' && source.records) return recordNames(source.records);
    if (source.columns) return { names: new Set(source.columns), label: 'source.columns' };
    return { names: undefined, label: '' };
  }
  if (source.format === 'fixed-width') return recordNames(source.records);
  return { names: undefined, label: '' };
}

/**
 * The names rows of a multi-record file hold: each type's fields (or named columns), also as '<type>/<name>' (what
 * the lines below a record read of it, record-groups.ts), and '<n>' / '<type>/<n>' for an unnamed column. Undefined
 * (not checked) when no type names its cells.
 */
function recordNames(records: ReadonlyArray<{ type: string; fields?: Array<{ name: string }> | undefined; columns?: string[] | undefined }>): {
  names: Set<string> | undefined;
  label: string;
} {
  const names = new Set<string>();
  // a type whose cells are keyed by position only (a catch-all 'other' type) adds no name
  if (records.every((r) => r.fields === undefined && r.columns === undefined)) return { names: undefined, label: '' };
  for (const r of records) {
    for (const f of r.fields ?? []) names.add(f.name).add(`${r.type}/${f.name}`);
    (r.columns ?? []).forEach((c, i) => {
      if (c !== '') names.add(c).add(`${r.type}/${c}`);
      else names.add(String(i)).add(`${r.type}/${i}`);
    });
  }
  return { names, label: 'the fields of source.records' };
}

export function checkName(cc: CompileCtx, name: string, path: Array<string | number>): void {
  if (cc.names === undefined || cc.names.has(name)) return;
  if (cc.explodePrefix && name.startsWith(`${cc.explodePrefix}/`)) return;
  const known = [...cc.names].slice(0, 30).join(', ');
  problem(cc, path, `'${name}' is not declared in ${cc.namesLabel} (known: ${known})`);
}

export type Cond = (row: RawRow, st: EvalState) => boolean;
