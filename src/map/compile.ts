/**
 * Compiles a validated mapping (model.ts) to plain functions, once. Per row, mapping is: evaluate the
 * compiled field functions, build the payload, validate it against the target's schema. Everything
 * that can be decided at load time (field names, required fields, lookup fields, regexes, time zones,
 * date formats, source column names) is decided here and reported as a mapping error.
 */
import type { z } from 'zod';
import type { ParsedErrorItem, ParsedItem } from '../parse/types.js';
import * as parseOptionsModule from '../parse/options.js';
import type { ParseOptions } from '../parse/options.js';
import { MappingError, type RowIssue } from '../shared/errors.js';
import { TARGET_INFO, type RefResource, type Target } from '../wms/targets.js';
import {
  isRef,
  type MapContext,
  type MapOutput,
  type MappedRecord,
  type RawRow,
  type RecordOp,
  type RefValue,
  type RejectedRow,
  type SourceLocation,
} from './types.js';
import {
  LOOKUP_BY,
  READ_ONLY_RESOURCES,
  type ConditionSpec,
  type ExprSpec,
  type MappingSpec,
  type TestConditionSpec,
  type TransformSpec,
} from './model.js';
import { compileFastCheck, type FastCheck } from './fast-check.js';
import { matchKey } from './identifiers.js';
import { compileTransforms, q, RowFail, safeString, TransformSpecError, zoneOffsetFn, type TransformFn } from './transforms.js';

// ---------------------------------------------------------------------------------------------
// Public shapes
// ---------------------------------------------------------------------------------------------

export interface CompiledMapping {
  name: string;
  file: string;
  description?: string;
  match: { channel?: string; files: string[] };
  source: ParseOptions;
  target: Target;
  op: RecordOp;
  /** read-only references this mapping looks up at map time (preloaded by the pipeline) */
  referenceNeeds: Array<{ resource: RefResource; by: string }>;
  /**
   * column names the mapping reads by name from a delimited file (`col: name` and the plain-string
   * shorthand); the pipeline checks them against the file's header, so a wrong delimiter or a renamed
   * column is one clear file error, not a reject per row
   */
  columnsRead: string[];
  matches(channel: string, fileName: string): boolean;
  /** maps parsed items (rows and parse errors) to records, documents and rejects, streaming */
  mapItems(items: AsyncIterable<ParsedItem>, ctx: MapContext): AsyncIterable<MapOutput>;
  /** the validated model, defaults filled in (for tools and docs) */
  spec: MappingSpec;
}

/** A problem in a mapping file found while compiling: where (path inside the file) and what. */
export interface MappingProblem {
  path: Array<string | number>;
  message: string;
}

export class MappingCompileError extends Error {
  constructor(readonly problems: MappingProblem[]) {
    super(problems.map((p) => `${formatPath(p.path)}: ${p.message}`).join('; '));
  }
}

export function formatPath(path: ReadonlyArray<PropertyKey>): string {
  let out = '';
  for (const seg of path) {
    if (typeof seg === 'number') out += `[${seg}]`;
    else out += out === '' ? String(seg) : `.${String(seg)}`;
  }
  return out === '' ? '(top level)' : out;
}

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

interface EvalState {
  ctx: MapContext;
  symbolic: boolean;
  line: number;
}

type Eval = (row: RawRow, st: EvalState) => unknown;

const isMissing = (v: unknown): boolean => v === undefined || v === null || v === '';

// ---------------------------------------------------------------------------------------------
// Schemas: what each target accepts, requires, and gets implicitly
// ---------------------------------------------------------------------------------------------

interface ShapeInfo {
  keys: Set<string>;
  /** keys the schema requires (no default) */
  required: Set<string>;
  /** keys with a value the mapping does not need to give (status: 1, finishCallBack: false, defaults) */
  implicit: Map<string, unknown>;
}

function shapeOf(schema: z.ZodType): Record<string, z.ZodType> {
  const shape = (schema as unknown as { shape?: Record<string, z.ZodType> }).shape;
  if (!shape) throw new Error('target schema is not an object schema');
  return shape;
}

function shapeInfo(schema: z.ZodType): ShapeInfo {
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

const ITEMS_KEY: Partial<Record<Target, 'pickingItens' | 'purchaseOrderItens'>> = {
  PickingList: 'pickingItens',
  PurchaseOrder: 'purchaseOrderItens',
};

function itemSchemaOf(target: Target): z.ZodType | undefined {
  const key = ITEMS_KEY[target];
  if (!key) return undefined;
  const arr = shapeOf(TARGET_INFO[target].schema)[key] as unknown as { element?: z.ZodType };
  return arr.element;
}

const ALLOWED_OPS: Record<Target, readonly RecordOp[]> = {
  UnitMeasurement: ['create'],
  Category: ['create'],
  Family: ['create'],
  Product: ['create'],
  ConversionFactor: ['create', 'update', 'upsert'],
  ConversionFactorDelete: ['delete'],
  ShippingCompany: ['create', 'update', 'upsert'],
  Provider: ['create', 'update', 'upsert'],
  Owners: ['create'],
  PurchaseOrder: ['create'],
  PickingList: ['create'],
  StockLock: ['create'],
  StockUnlock: ['create'],
  StockSync: ['create'],
  PickingListAttachment: ['create'],
};

export function defaultOp(target: Target): RecordOp {
  if (target === 'ShippingCompany' || target === 'Provider' || target === 'ConversionFactor') return 'upsert';
  if (target === 'ConversionFactorDelete') return 'delete';
  return 'create';
}

/** Natural key parts of the payload per target (used when the mapping has no `key`). */
const DEFAULT_KEY: Record<Target, { parts: string[][]; label: string }> = {
  // each inner list: alternatives (first non-empty wins); parts joined by '|'
  UnitMeasurement: { parts: [['codeERP', 'symbol']], label: 'codeERP (or symbol)' },
  Category: { parts: [['codeERP']], label: 'codeERP' },
  Family: { parts: [['codeERP']], label: 'codeERP' },
  Provider: { parts: [['codeERP']], label: 'codeERP' },
  ShippingCompany: { parts: [['codeERP']], label: 'codeERP' },
  ConversionFactor: { parts: [['codeERP']], label: 'codeERP' },
  Product: { parts: [['code']], label: 'code' },
  Owners: { parts: [['code']], label: 'code' },
  PickingList: { parts: [['order'], ['ownerID']], label: 'order|ownerID' },
  PurchaseOrder: { parts: [['nf'], ['providerID']], label: 'nf|providerID' },
  StockLock: { parts: [['productId'], ['warehouseId'], ['lotNumber', ''], ['materialStatusId']], label: 'productId|warehouseId|lotNumber|materialStatusId' },
  StockUnlock: { parts: [['productId'], ['warehouseId'], ['lotNumber', ''], ['materialStatusId']], label: 'productId|warehouseId|lotNumber|materialStatusId' },
  StockSync: { parts: [['productId'], ['ownerId']], label: 'productId|ownerId' },
  ConversionFactorDelete: { parts: [['id']], label: 'id' },
  PickingListAttachment: { parts: [['PickingListID'], ['UserFileName']], label: 'PickingListID|UserFileName' },
};

/** The text a value contributes to a key: a RefValue's natural key, a lookup's label, else the value. */
export function keyText(v: unknown): string | undefined {
  if (isMissing(v)) return undefined;
  if (isRef(v)) return v.$ref.value;
  if (v instanceof LookupPlaceholder) return v.label;
  return typeof v === 'string' ? v : safeString(v);
}

function defaultKey(target: Target, payload: Record<string, unknown>): string | undefined {
  const spec = DEFAULT_KEY[target];
  let out = '';
  for (let i = 0; i < spec.parts.length; i++) {
    const alts = spec.parts[i] ?? [];
    let part: string | undefined;
    for (const a of alts) {
      if (a === '') {
        part = '';
        break;
      }
      part = keyText(payload[a]);
      if (part !== undefined) break;
    }
    if (part === undefined) return undefined;
    out = i === 0 ? part : `${out}|${part}`;
  }
  return out;
}

// ---------------------------------------------------------------------------------------------
// Globs
// ---------------------------------------------------------------------------------------------

/** Case-insensitive file-name glob: * ? [abc] [!abc] {a,b}. */
export function globToRegExp(glob: string): RegExp {
  let re = '';
  let inBrace = 0;
  for (let i = 0; i < glob.length; i++) {
    const c = glob[i] ?? '';
    if (c === '*') re += '.*';
    else if (c === '?') re += '.';
    else if (c === '[') {
      const end = glob.indexOf(']', i + 1);
      if (end < 0) re += '\\[';
      else {
        let body = glob.slice(i + 1, end);
        if (body.startsWith('!')) body = `^${body.slice(1)}`;
        re += `[${body.replace(/\\/g, '\\\\')}]`;
        i = end;
      }
    } else if (c === '{') {
      inBrace++;
      re += '(?:';
    } else if (c === '}' && inBrace > 0) {
      inBrace--;
      re += ')';
    } else if (c === ',' && inBrace > 0) re += '|';
    else re += c.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&');
  }
  if (inBrace > 0) throw new Error(`unclosed { in '${glob}'`);
  return new RegExp(`^${re}$`, 'i');
}

// ---------------------------------------------------------------------------------------------
// The compiler
// ---------------------------------------------------------------------------------------------

interface CompileCtx {
  format: ParseOptions['format'];
  /** names a source row may hold (declared columns / fixed-width fields); undefined: unknown */
  names: Set<string> | undefined;
  namesLabel: string;
  timeZone: string;
  problems: MappingProblem[];
  needs: Map<string, { resource: RefResource; by: string }>;
  /** every source name read by name (col / field / shorthand) */
  read: Set<string>;
  /** names of the explode element children, when compiling item fields of an exploding group */
  explodePrefix?: string;
}

function problem(cc: CompileCtx, path: Array<string | number>, message: string): void {
  cc.problems.push({ path, message });
}

function sourceNames(source: ParseOptions): { names: Set<string> | undefined; label: string } {
  if (source.format === 'delimited') {
    if (source.columns) return { names: new Set(source.columns), label: 'source.columns' };
    return { names: undefined, label: '' };
  }
  if (source.format === 'fixed-width') {
    const names = new Set<string>();
    for (const r of source.records) for (const f of r.fields) names.add(f.name);
    return { names, label: 'the fields of source.records' };
  }
  return { names: undefined, label: '' };
}

function checkName(cc: CompileCtx, name: string, path: Array<string | number>): void {
  if (cc.names === undefined || cc.names.has(name)) return;
  if (cc.explodePrefix && name.startsWith(`${cc.explodePrefix}/`)) return;
  const known = [...cc.names].slice(0, 30).join(', ');
  problem(cc, path, `'${name}' is not declared in ${cc.namesLabel} (known: ${known})`);
}

const EXPR_KEYS = ['col', 'path', 'field', 'const', 'template', 'concat', 'coalesce', 'ref', 'lookup', 'table'] as const;

function fieldReader(name: string): Eval {
  return (row) => row.fields[name];
}

function compileSourceName(cc: CompileCtx, kind: 'col' | 'path' | 'field' | 'short', name: string | number, path: Array<string | number>): Eval {
  const fmt = cc.format;
  if (kind === 'col' && fmt !== 'delimited') problem(cc, path, `'col' reads delimited files; this source is ${fmt}: use ${fmt === 'fixed-width' ? "'field'" : "'path'"}`);
  if (kind === 'field' && fmt !== 'fixed-width') problem(cc, path, `'field' reads fixed-width files; this source is ${fmt}: use ${fmt === 'delimited' ? "'col'" : "'path'"}`);
  if (kind === 'path' && fmt !== 'xml' && fmt !== 'json' && fmt !== 'jsonl') problem(cc, path, `'path' reads XML/JSON files; this source is ${fmt}: use ${fmt === 'delimited' ? "'col'" : "'field'"}`);
  if (typeof name === 'number') {
    const key = String(name);
    return (row) => (row.cells !== undefined ? row.cells[name] : row.fields[key]);
  }
  if (kind === 'col' || kind === 'field' || kind === 'short') {
    checkName(cc, name, path);
    cc.read.add(name);
  }
  return fieldReader(name);
}

interface TemplatePart {
  lit?: string;
  name?: string;
}

function parseTemplate(cc: CompileCtx, t: string, path: Array<string | number>): TemplatePart[] {
  const parts: TemplatePart[] = [];
  let lit = '';
  for (let i = 0; i < t.length; i++) {
    const c = t[i];
    if (c === '{' && t[i + 1] === '{') {
      lit += '{';
      i++;
    } else if (c === '}' && t[i + 1] === '}') {
      lit += '}';
      i++;
    } else if (c === '{') {
      const end = t.indexOf('}', i + 1);
      if (end < 0) {
        problem(cc, path, `unclosed '{' in template '${t}'`);
        return parts;
      }
      const name = t.slice(i + 1, end).trim();
      if (name === '') problem(cc, path, `empty placeholder {} in template '${t}'`);
      if (lit) parts.push({ lit });
      lit = '';
      if (!name.startsWith('$')) checkName(cc, name, path);
      else if (!['$file', '$line', '$now'].includes(name)) problem(cc, path, `unknown placeholder {${name}} (known: {$file} {$line} {$now})`);
      parts.push({ name });
      i = end;
    } else if (c === '}') {
      problem(cc, path, `unmatched '}' in template '${t}' (write '}}' for a literal brace)`);
    } else lit += c;
  }
  if (lit) parts.push({ lit });
  return parts;
}

/**
 * Compiles one expression: its value source, then transforms, `default`, `required` (for ref, lookup
 * and table these apply to the key before resolution). `forceRequired`: the WMS requires the field.
 */
function compileExpr(cc: CompileCtx, spec: ExprSpec, path: Array<string | number>, forceRequired = false, requiredWhy = ''): Eval {
  if (typeof spec === 'string') return finish(cc, compileSourceName(cc, 'short', spec, path), undefined, path, forceRequired, requiredWhy);
  const s = spec as Record<string, unknown>;
  const kinds = EXPR_KEYS.filter((k) => k in s);
  const kind = kinds[0];
  let base: Eval;
  switch (kind) {
    case 'col':
      base = compileSourceName(cc, 'col', s['col'] as string | number, [...path, 'col']);
      break;
    case 'path':
      base = compileSourceName(cc, 'path', s['path'] as string, [...path, 'path']);
      break;
    case 'field':
      base = compileSourceName(cc, 'field', s['field'] as string, [...path, 'field']);
      break;
    case 'const': {
      const v = s['const'];
      base = () => v;
      break;
    }
    case 'template': {
      const parts = parseTemplate(cc, s['template'] as string, [...path, 'template']);
      base = (row, st) => {
        let out = '';
        for (const p of parts) {
          if (p.lit !== undefined) {
            out += p.lit;
            continue;
          }
          const name = p.name ?? '';
          let v: unknown;
          if (name === '$file') v = st.ctx.file;
          else if (name === '$line') v = st.line;
          else if (name === '$now') v = st.ctx.now.toISOString();
          else v = row.fields[name];
          if (isMissing(v)) return undefined;
          out += typeof v === 'string' ? v : String(v);
        }
        return out;
      };
      break;
    }
    case 'concat': {
      const list = (s['concat'] as ExprSpec[]).map((e, i) => compileExpr(cc, e, [...path, 'concat', i]));
      const sep = (s['sep'] as string | undefined) ?? '';
      base = (row, st) => {
        let out: string | undefined;
        for (const e of list) {
          const v = e(row, st);
          if (isMissing(v)) continue;
          const t = typeof v === 'string' ? v : safeString(v);
          out = out === undefined ? t : out + sep + t;
        }
        return out;
      };
      break;
    }
    case 'coalesce': {
      const list = (s['coalesce'] as ExprSpec[]).map((e, i) => compileExpr(cc, e, [...path, 'coalesce', i]));
      base = (row, st) => {
        for (const e of list) {
          const v = e(row, st);
          if (!isMissing(v)) return v;
        }
        return undefined;
      };
      break;
    }
    case 'ref': {
      const resource = s['ref'] as RefResource;
      const from = finish(cc, compileExpr(cc, s['from'] as ExprSpec, [...path, 'from']), s as CommonLike, path, forceRequired, requiredWhy);
      return (row, st) => {
        const v = from(row, st);
        if (isMissing(v)) return undefined;
        const ref: RefValue = { $ref: { resource, value: typeof v === 'string' ? v : safeString(v) } };
        return ref;
      };
    }
    case 'lookup':
      return compileLookup(cc, s, path, forceRequired, requiredWhy);
    case 'table': {
      const ignoreCase = s['ignoreCase'] === true;
      const table = new Map<string, unknown>();
      for (const [k, v] of Object.entries(s['table'] as Record<string, unknown>)) table.set(ignoreCase ? k.toLowerCase() : k, v);
      const known = [...table.keys()].slice(0, 12).join(', ');
      const from = finish(cc, compileExpr(cc, s['from'] as ExprSpec, [...path, 'from']), s as CommonLike, path, forceRequired, requiredWhy);
      return (row, st) => {
        const v = from(row, st);
        if (isMissing(v)) return undefined;
        const k = typeof v === 'string' ? v : safeString(v);
        const hit = table.get(ignoreCase ? k.toLowerCase() : k);
        if (hit === undefined && !table.has(ignoreCase ? k.toLowerCase() : k)) {
          throw new RowFail('table_unknown', `${q(k)} is not in the mapping's table (known: ${known})`, k);
        }
        return hit;
      };
    }
    default:
      problem(cc, path, 'not an expression');
      return () => undefined;
  }
  return finish(cc, base, s as CommonLike, path, forceRequired, requiredWhy);
}

interface CommonLike {
  transforms?: TransformSpec[];
  default?: unknown;
  required?: boolean;
}

function finish(cc: CompileCtx, base: Eval, s: CommonLike | undefined, path: Array<string | number>, forceRequired: boolean, requiredWhy: string): Eval {
  let fns: TransformFn[] = [];
  try {
    fns = compileTransforms(s?.transforms, { timeZone: cc.timeZone }, [...path, 'transforms']);
  } catch (err) {
    if (err instanceof TransformSpecError) problem(cc, err.path, err.message);
    else throw err;
  }
  const dflt = s?.default;
  const hasDefault = dflt !== undefined && dflt !== null && dflt !== '';
  const required = forceRequired || s?.required === true;
  const why = requiredWhy ? ` (${requiredWhy})` : '';
  const n = fns.length;
  const f0 = fns[0];
  if (n === 0 && !hasDefault && !required) return base;
  if (n === 1 && f0 && !hasDefault && !required) {
    return (row, st) => {
      const v = base(row, st);
      return isMissing(v) ? v : f0(v);
    };
  }
  return (row, st) => {
    let v = base(row, st);
    for (let i = 0; i < n && !isMissing(v); i++) v = (fns[i] as TransformFn)(v);
    if (isMissing(v)) {
      if (hasDefault) return dflt;
      if (required) throw new RowFail('required', `is empty but required${why}`);
    }
    return v;
  };
}

function compileLookup(cc: CompileCtx, s: Record<string, unknown>, path: Array<string | number>, forceRequired: boolean, requiredWhy: string): Eval {
  const resource = s['lookup'] as RefResource;
  const by = s['by'] as string;
  const select = s['select'] as string | undefined;
  const whereSpec = s['where'] as Record<string, ExprSpec> | undefined;
  const readOnly = (READ_ONLY_RESOURCES as readonly string[]).includes(resource);
  const allowedBy = LOOKUP_BY[resource];
  if (!allowedBy.includes(by)) problem(cc, [...path, 'by'], `${resource} can be looked up by ${allowedBy.join(' or ')}, not '${by}'`);
  const from = finish(cc, compileExpr(cc, s['from'] as ExprSpec, [...path, 'from']), s as CommonLike, path, forceRequired, requiredWhy);
  if (!readOnly) {
    if (select) problem(cc, [...path, 'select'], `select works on read-only resources only (${READ_ONLY_RESOURCES.join(', ')})`);
    if (whereSpec) problem(cc, [...path, 'where'], `where works on read-only resources only (${READ_ONLY_RESOURCES.join(', ')})`);
    return (row, st) => {
      const v = from(row, st);
      if (isMissing(v)) return undefined;
      const ref: RefValue = { $ref: { resource, value: typeof v === 'string' ? v : safeString(v), by } };
      return ref;
    };
  }
  cc.needs.set(`${resource}\u0000${by}`, { resource, by });
  const where = whereSpec ? Object.entries(whereSpec).map(([k, e]) => ({ k, e: compileExpr(cc, e, [...path, 'where', k]) })) : undefined;
  if (!where && !select) {
    return (row, st) => {
      const v = from(row, st);
      if (isMissing(v)) return undefined;
      const value = typeof v === 'string' ? v : safeString(v);
      if (st.symbolic) return new LookupPlaceholder(resource, by, value);
      const id = st.ctx.refs.find(resource, by, value);
      if (id === undefined) throw new RowFail('lookup_not_found', `${resource} with ${by} ${q(value)} not found`, value);
      return id;
    };
  }
  return (row, st) => {
    const v = from(row, st);
    if (isMissing(v)) return undefined;
    const value = typeof v === 'string' ? v : safeString(v);
    if (st.symbolic) return new LookupPlaceholder(resource, by, value, select);
    const findAll = st.ctx.refs.findAll;
    if (!findAll) throw new RowFail('lookup_unsupported', `the reference cache cannot search ${resource} records (where/select need findAll)`, value);
    let recs = findAll.call(st.ctx.refs, resource, by, value);
    let whereText = '';
    if (where) {
      for (const w of where) {
        const wv = w.e(row, st);
        const want = wv instanceof LookupPlaceholder ? wv.label : matchKey(w.k, typeof wv === 'string' ? wv : safeString(wv));
        whereText += ` and ${w.k} ${q(keyText(wv) ?? '')}`;
        recs = recs.filter((r) => matchKey(w.k, typeof r[w.k] === 'string' || r[w.k] === null || r[w.k] === undefined ? r[w.k] : safeString(r[w.k])) === want);
      }
    }
    if (recs.length === 0) throw new RowFail('lookup_not_found', `${resource} with ${by} ${q(value)}${whereText} not found`, value);
    if (recs.length > 1) throw new RowFail('lookup_ambiguous', `${recs.length} ${resource} records have ${by} ${q(value)}${whereText}: narrow it with where`, value);
    const rec = recs[0] as Readonly<Record<string, unknown>>;
    const out = rec[select ?? 'id'];
    if (isMissing(out)) throw new RowFail('lookup_not_found', `${resource} with ${by} ${q(value)} has no ${select ?? 'id'}`, value);
    return out;
  };
}

// ---------------------------------------------------------------------------------------------
// Filters
// ---------------------------------------------------------------------------------------------

type Cond = (row: RawRow, st: EvalState) => boolean;

function compileCondition(cc: CompileCtx, spec: ConditionSpec, path: Array<string | number>): Cond {
  if ('all' in spec) {
    const list = spec.all.map((c, i) => compileCondition(cc, c, [...path, 'all', i]));
    return (row, st) => list.every((c) => c(row, st));
  }
  if ('any' in spec) {
    const list = spec.any.map((c, i) => compileCondition(cc, c, [...path, 'any', i]));
    return (row, st) => list.some((c) => c(row, st));
  }
  if ('not' in spec) {
    const c = compileCondition(cc, spec.not, [...path, 'not']);
    return (row, st) => !c(row, st);
  }
  const t = spec as TestConditionSpec;
  let valueSpec: ExprSpec;
  if (t.value !== undefined) valueSpec = t.value as ExprSpec;
  else if (t.col !== undefined) valueSpec = { col: t.col };
  else if (t.path !== undefined) valueSpec = { path: t.path };
  else valueSpec = cc.format === 'fixed-width' ? { field: t.field ?? '' } : (t.field ?? '');
  const get = finish(cc, compileExpr(cc, valueSpec, path), { transforms: t.transforms as TransformSpec[] | undefined }, path, false, '');
  const ic = t.ignoreCase;
  const norm = (v: unknown): string => {
    const s = v === undefined || v === null ? '' : typeof v === 'string' ? v : safeString(v);
    return ic ? s.toLowerCase() : s;
  };
  if (t.notEmpty) return (row, st) => !isMissing(get(row, st));
  if (t.empty) return (row, st) => isMissing(get(row, st));
  if (t.in || t.notIn) {
    const set = new Set((t.in ?? t.notIn ?? []).map(norm));
    const positive = t.in !== undefined;
    return (row, st) => set.has(norm(get(row, st))) === positive;
  }
  if (t.equals !== undefined || t.notEquals !== undefined) {
    const positive = t.equals !== undefined;
    const want = norm(positive ? t.equals : t.notEquals);
    return (row, st) => (norm(get(row, st)) === want) === positive;
  }
  if (t.regex !== undefined) {
    let re: RegExp;
    try {
      re = new RegExp(t.regex, ic ? 'i' : '');
    } catch (err) {
      problem(cc, [...path, 'regex'], `invalid regular expression: ${(err as Error).message}`);
      return () => true;
    }
    return (row, st) => re.test(norm(get(row, st)));
  }
  problem(cc, path, 'a condition needs a test');
  return () => true;
}

// ---------------------------------------------------------------------------------------------
// Field sets
// ---------------------------------------------------------------------------------------------

interface CompiledField {
  name: string;
  eval: Eval;
}

function compileFields(
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
    out.push({ name, eval: compileExpr(cc, expr, path, req, req ? `${targetLabel} requires ${name}` : '') });
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
class Issues {
  list: RowIssue[] | undefined;
  add(line: number, field: string | undefined, err: RowFail): void {
    const where = field ? `line ${line}: field ${field}: ` : `line ${line}: `;
    const issue: RowIssue = { code: err.code, message: `${where}${err.message}` };
    if (field) issue.field = field;
    if (err.value !== undefined) issue.value = err.value;
    (this.list ??= []).push(issue);
  }
  push(issue: RowIssue): void {
    (this.list ??= []).push(issue);
  }
}

function evalFields(fields: CompiledField[], implicit: Map<string, unknown>, row: RawRow, st: EvalState, issues: Issues, fieldPrefix = ''): Record<string, unknown> {
  const payload: Record<string, unknown> = {};
  for (const [k, v] of implicit) payload[k] = v;
  for (let i = 0; i < fields.length; i++) {
    const f = fields[i] as CompiledField;
    try {
      const v = f.eval(row, st);
      if (!isMissing(v)) payload[f.name] = v;
    } catch (err) {
      if (err instanceof RowFail) issues.add(st.line, fieldPrefix + f.name, err);
      else throw err;
    }
  }
  return payload;
}

// ---------------------------------------------------------------------------------------------
// Validation of the produced payload
// ---------------------------------------------------------------------------------------------

/**
 * The payload as validation sees it: RefValues and lookup placeholders replaced by PLACEHOLDER_UUID.
 * Copies only the objects and arrays that hold a placeholder; returns the input itself otherwise.
 */
function substitute(v: unknown): unknown {
  if (v === null || typeof v !== 'object') return v;
  if (v instanceof LookupPlaceholder || isRef(v)) return PLACEHOLDER_UUID;
  if (Array.isArray(v)) {
    let out: unknown[] | undefined;
    for (let i = 0; i < v.length; i++) {
      const x = v[i] as unknown;
      const y = substitute(x);
      if (y !== x) (out ??= v.slice())[i] = y;
    }
    return out ?? v;
  }
  const o = v as Record<string, unknown>;
  let out: Record<string, unknown> | undefined;
  for (const k in o) {
    const x = o[k];
    if (x === null || typeof x !== 'object') continue;
    const y = substitute(x);
    if (y !== x) (out ??= { ...o })[k] = y;
  }
  return out ?? o;
}

function valueAt(payload: unknown, path: ReadonlyArray<PropertyKey>): unknown {
  let cur: unknown = payload;
  for (const seg of path) {
    if (cur === null || typeof cur !== 'object') return undefined;
    cur = (cur as Record<PropertyKey, unknown>)[seg];
  }
  return cur;
}

function validate(
  schema: z.ZodType,
  fast: FastCheck | undefined,
  payload: Record<string, unknown>,
  lineOf: (path: ReadonlyArray<PropertyKey>) => number,
  targetLabel: string,
): RowIssue[] | undefined {
  const candidate = substitute(payload);
  if (fast !== undefined && fast(candidate)) return undefined;
  const r = schema.safeParse(candidate);
  if (r.success) return undefined;
  return r.error.issues.map((iss) => {
    const field = formatPath(iss.path);
    const raw = valueAt(payload, iss.path);
    const value = raw === undefined ? undefined : keyText(raw);
    const what = raw === undefined ? `is missing (${targetLabel})` : `${q(value ?? '')}: ${iss.message}`;
    const issue: RowIssue = { code: 'schema', field, message: `line ${lineOf(iss.path)}: field ${field}: ${what}` };
    if (raw === undefined && iss.message) issue.message += `: ${iss.message}`;
    if (value !== undefined) issue.value = value;
    return issue;
  });
}

// ---------------------------------------------------------------------------------------------
// Rejects of parse errors
// ---------------------------------------------------------------------------------------------

function errorRaw(item: ParsedErrorItem): RawRow {
  const raw: RawRow = { line: item.line, fields: {} };
  if (item.lineEnd !== undefined) raw.lineEnd = item.lineEnd;
  if (item.cells !== undefined) raw.cells = item.cells;
  if (item.text !== undefined) raw.text = item.text;
  if (item.recordType !== undefined) raw.recordType = item.recordType;
  return raw;
}

function errorIssue(item: ParsedErrorItem): RowIssue {
  const msg = item.issue.message;
  return { ...item.issue, message: /^line \d/.test(msg) ? msg : `line ${item.line}: ${msg}` };
}

function location(first: RawRow, last: RawRow, xml: boolean): SourceLocation {
  const loc: SourceLocation = { line: first.line };
  const end = last.lineEnd ?? last.line;
  if (end !== first.line) loc.lineEnd = end;
  if (xml && first.recordType !== undefined) loc.element = first.recordType;
  return loc;
}

// ---------------------------------------------------------------------------------------------
// compileMapping
// ---------------------------------------------------------------------------------------------

/** Compiles a validated model; throws MappingCompileError with every problem found. */
export function compileMapping(spec: MappingSpec, file: string): CompiledMapping {
  const target = spec.target;
  const tinfo = TARGET_INFO[target];
  const source = spec.source;
  const { names, label } = sourceNames(source);
  const cc: CompileCtx = { format: source.format, names, namesLabel: label, timeZone: spec.timeZone, problems: [], needs: new Map(), read: new Set() };
  // cross-option rules of the parsers (columns with a header, duplicate names...), when they export them
  const checkParse = (parseOptionsModule as unknown as { checkParseOptions?: (o: ParseOptions) => string[] }).checkParseOptions;
  for (const p of checkParse?.(source) ?? []) {
    const i = p.indexOf(': ');
    problem(cc, ['source', ...(i > 0 ? p.slice(0, i).split('.') : [])], i > 0 ? p.slice(i + 2) : p);
  }
  try {
    zoneOffsetFn(spec.timeZone);
  } catch (err) {
    if (err instanceof TransformSpecError) problem(cc, ['timeZone'], err.message);
  }

  const op = spec.op ?? defaultOp(target);
  if (!ALLOWED_OPS[target].includes(op)) problem(cc, ['op'], `${target} accepts op ${ALLOWED_OPS[target].join(' | ')}, not '${op}'`);

  const files = typeof spec.match.files === 'string' ? [spec.match.files] : spec.match.files;
  const globs: RegExp[] = [];
  files.forEach((g, i) => {
    try {
      globs.push(globToRegExp(g));
    } catch (err) {
      problem(cc, ['match', 'files', i], (err as Error).message);
    }
  });
  const channel = spec.match.channel;

  const info = shapeInfo(tinfo.schema);
  const itemsKey = ITEMS_KEY[target];
  const group = spec.group;
  if (itemsKey && !group) problem(cc, ['group'], `${target} is a document: add group {by, items: ${itemsKey}, itemFields} to build its ${itemsKey}`);
  if (!itemsKey && group) problem(cc, ['group'], `group makes documents (PickingList, PurchaseOrder), not ${target} records`);
  if (group && itemsKey && group.items !== itemsKey) problem(cc, ['group', 'items'], `${target} items are '${itemsKey}', not '${group.items}'`);

  const headerFields = compileFields(cc, spec.fields as Record<string, ExprSpec>, info, ['fields'], target, itemsKey ? [itemsKey] : []);
  const keyEval = spec.key !== undefined ? compileExpr(cc, spec.key as ExprSpec, ['key'], true, 'the natural key') : undefined;
  if (!keyEval) {
    const dk = DEFAULT_KEY[target];
    for (const alts of dk.parts) {
      const given = alts.some((a) => a === '' || a in spec.fields || info.implicit.has(a));
      if (!given) problem(cc, ['fields'], `the natural key of ${target} is ${dk.label}: map ${alts.join(' or ')} or set key`);
    }
  }
  const filter = spec.filter === undefined ? undefined : compileFilter(cc, spec.filter as ConditionSpec | ConditionSpec[]);

  let attachmentEval: Eval | undefined;
  if (target === 'PickingListAttachment') {
    if (spec.attachmentPath === undefined) problem(cc, ['attachmentPath'], 'PickingListAttachment needs attachmentPath: the file to attach, relative to the channel folder');
    else attachmentEval = compileExpr(cc, spec.attachmentPath as ExprSpec, ['attachmentPath'], true, 'the file to attach');
  } else if (spec.attachmentPath !== undefined) problem(cc, ['attachmentPath'], 'attachmentPath is for PickingListAttachment only');

  // documents
  let itemFields: CompiledField[] = [];
  let itemInfo: ShapeInfo | undefined;
  let groupByEval: Eval | undefined;
  let itemRecords: Set<string> | undefined;
  if (group && itemsKey) {
    const itemSchema = itemSchemaOf(target);
    if (itemSchema) {
      itemInfo = shapeInfo(itemSchema);
      if (group.explode) {
        if (source.format !== 'xml' && source.format !== 'json' && source.format !== 'jsonl') problem(cc, ['group', 'explode'], 'explode reads repeating elements of XML/JSON items');
        cc.explodePrefix = group.explode;
      }
      itemFields = compileFields(cc, group.itemFields as Record<string, ExprSpec>, itemInfo, ['group', 'itemFields'], `${target} item`);
      delete cc.explodePrefix;
    }
    const typed = group.headerRecord !== undefined || group.itemRecord !== undefined;
    if (typed) {
      if (source.format !== 'fixed-width') problem(cc, ['group', 'headerRecord'], 'headerRecord/itemRecord group the record types of fixed-width files');
      if (group.headerRecord === undefined || group.itemRecord === undefined) problem(cc, ['group'], 'give both headerRecord and itemRecord');
      itemRecords = new Set(typeof group.itemRecord === 'string' ? [group.itemRecord] : (group.itemRecord ?? []));
      if (source.format === 'fixed-width') {
        const types = new Set(source.records.map((r) => r.type));
        if (group.headerRecord !== undefined && !types.has(group.headerRecord)) problem(cc, ['group', 'headerRecord'], `'${group.headerRecord}' is not a record type of source.records (${[...types].join(', ')})`);
        for (const t of itemRecords) if (!types.has(t)) problem(cc, ['group', 'itemRecord'], `'${t}' is not a record type of source.records (${[...types].join(', ')})`);
      }
    } else if (group.by === undefined) problem(cc, ['group', 'by'], 'group needs by (the document key) or headerRecord/itemRecord');
    if (group.by !== undefined) groupByEval = compileExpr(cc, group.by as ExprSpec, ['group', 'by'], true, 'the document key');
  }

  if (cc.problems.length) throw new MappingCompileError(cc.problems);

  const name = spec.name;
  const xml = source.format === 'xml';
  const referenceNeeds = [...cc.needs.values()];
  const itemImplicit = itemInfo?.implicit ?? new Map<string, unknown>();
  const headerImplicit = info.implicit;
  const schema = tinfo.schema;
  const fastCheck = compileFastCheck(schema);
  const fileGlobs = globs;

  const recordKey = (payload: Record<string, unknown>, row: RawRow, st: EvalState, issues: Issues): string | undefined => {
    if (keyEval) {
      try {
        return keyText(keyEval(row, st));
      } catch (err) {
        if (err instanceof RowFail) issues.add(st.line, 'key', err);
        else throw err;
        return undefined;
      }
    }
    const k = defaultKey(target, payload);
    // a key part that failed is already reported by its field
    if (k === undefined && issues.list === undefined) issues.push({ code: 'key_missing', field: DEFAULT_KEY[target].label, message: `line ${st.line}: no natural key: ${DEFAULT_KEY[target].label} is empty` });
    return k;
  };

  const makeReject = (rows: RawRow[], issues: RowIssue[], key: string | undefined): MapOutput => {
    const first = rows[0] as RawRow;
    const reject: RejectedRow = { source: location(first, rows[rows.length - 1] as RawRow, xml), raw: rows, issues, mapping: name, target };
    if (key !== undefined) reject.key = key;
    return { ok: false, reject };
  };

  // ------------------------------------------------------------------ flat records
  function mapRow(row: RawRow, st: EvalState): MapOutput {
    const issues = new Issues();
    const payload = evalFields(headerFields, headerImplicit, row, st, issues);
    const key = recordKey(payload, row, st, issues);
    let attachmentPath: string | undefined;
    if (attachmentEval) {
      try {
        const a = attachmentEval(row, st);
        if (!isMissing(a)) attachmentPath = typeof a === 'string' ? a : safeString(a);
      } catch (err) {
        if (err instanceof RowFail) issues.add(st.line, 'attachmentPath', err);
        else throw err;
      }
    }
    if (issues.list === undefined) {
      const line = st.line;
      const v = validate(schema, fastCheck, payload, () => line, target);
      if (v) issues.list = v;
    }
    if (issues.list !== undefined) return makeReject([row], issues.list, key);
    const record: MappedRecord = {
      target,
      op,
      key: key as string,
      source: location(row, row, xml),
      payload,
      mapping: name,
      raw: [row],
    };
    if (attachmentPath !== undefined) record.attachmentPath = attachmentPath;
    return { ok: true, record };
  }

  // ------------------------------------------------------------------ documents
  interface Doc {
    groupKey: string;
    rows: RawRow[];
    header: Record<string, unknown> | undefined;
    headerRow: RawRow | undefined;
    items: Record<string, unknown>[];
    itemLines: number[];
    issues: Issues;
  }

  const newDoc = (groupKey: string): Doc => ({ groupKey, rows: [], header: undefined, headerRow: undefined, items: [], itemLines: [], issues: new Issues() });

  const sameValue = (a: unknown, b: unknown): boolean => {
    if (a === b) return true;
    if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) return false;
    return safeString(a) === safeString(b);
  };

  function addHeader(doc: Doc, row: RawRow, st: EvalState): void {
    const payload = evalFields(headerFields, headerImplicit, row, st, doc.issues);
    if (doc.header === undefined) {
      doc.header = payload;
      doc.headerRow = row;
      return;
    }
    if (!group?.headerMustAgree) return;
    const first = doc.header;
    for (const f of headerFields) {
      const a = first[f.name];
      const b = payload[f.name];
      if (!sameValue(a, b)) {
        doc.issues.push({
          code: 'header_mismatch',
          field: f.name,
          value: keyText(b) ?? '',
          message: `line ${st.line}: field ${f.name}: ${q(keyText(b) ?? '')} differs from ${q(keyText(a) ?? '')} on line ${doc.headerRow?.line ?? '?'} (first line of document ${q(doc.groupKey)}); header fields must agree on every line`,
        });
      }
    }
  }

  function addItems(doc: Doc, row: RawRow, st: EvalState): void {
    const explode = group?.explode;
    const rawList = explode ? row.fields[explode] : undefined;
    if (!explode || isMissing(rawList)) {
      doc.items.push(evalFields(itemFields, itemImplicit, row, st, doc.issues, `${itemsKey}[${doc.items.length}].`));
      doc.itemLines.push(st.line);
      return;
    }
    let list: unknown;
    try {
      list = JSON.parse(rawList as string);
    } catch {
      list = undefined;
    }
    if (!Array.isArray(list)) {
      doc.issues.push({ code: 'explode', field: explode, message: `line ${st.line}: ${explode} is not a list of elements` });
      return;
    }
    if (list.length === 0) {
      doc.items.push(evalFields(itemFields, itemImplicit, row, st, doc.issues, `${itemsKey}[${doc.items.length}].`));
      doc.itemLines.push(st.line);
      return;
    }
    for (const el of list) {
      const fields: Record<string, string> = { ...row.fields };
      if (el !== null && typeof el === 'object') {
        for (const [k, v] of Object.entries(el as Record<string, unknown>)) fields[`${explode}/${k}`] = typeof v === 'string' ? v : safeString(v);
      } else fields[explode] = typeof el === 'string' ? el : safeString(el);
      const derived: RawRow = { ...row, fields };
      doc.items.push(evalFields(itemFields, itemImplicit, derived, st, doc.issues, `${itemsKey}[${doc.items.length}].`));
      doc.itemLines.push(st.line);
    }
  }

  function flush(doc: Doc, st: EvalState): MapOutput {
    const first = doc.rows[0] as RawRow;
    const last = doc.rows[doc.rows.length - 1] as RawRow;
    if (doc.header === undefined) {
      // a header/detail document always has its header; a by-group has at least one row
      doc.header = {};
    }
    // the same line twice (an ERP export repeated a line) would double a quantity in the WMS silently
    const seenItems = new Map<string, number>();
    doc.items.forEach((item, i) => {
      const text = safeString(item);
      const earlier = seenItems.get(text);
      if (earlier !== undefined) {
        doc.issues.push({
          code: 'duplicate_item',
          message: `line ${doc.itemLines[i] ?? '?'}: repeats line ${doc.itemLines[earlier] ?? '?'} of document ${q(doc.groupKey)} (identical item): remove the repeated line, or map an item number (e.g. aux01) that tells them apart`,
        });
      } else seenItems.set(text, i);
    });
    const payload: Record<string, unknown> = { ...doc.header, [itemsKey as string]: doc.items };
    const savedLine = st.line;
    st.line = doc.headerRow?.line ?? first.line;
    const key = recordKey(payload, doc.headerRow ?? first, st, doc.issues);
    st.line = savedLine;
    if (doc.issues.list === undefined) {
      const headerLine = doc.headerRow?.line ?? first.line;
      const v = validate(
        schema,
        fastCheck,
        payload,
        (path) => (path[0] === itemsKey && typeof path[1] === 'number' ? (doc.itemLines[path[1]] ?? headerLine) : headerLine),
        target,
      );
      if (v) doc.issues.list = v;
    }
    if (doc.issues.list !== undefined) return makeReject(doc.rows, doc.issues.list, key);
    return {
      ok: true,
      record: { target, op, key: key as string, source: location(first, last, xml), payload, mapping: name, raw: doc.rows },
    };
  }

  function poison(doc: Doc, item: ParsedErrorItem): void {
    doc.rows.push(errorRaw(item));
    const base = errorIssue(item);
    doc.issues.push({ ...base, message: `${base.message} (the line could not be read and may belong to document ${q(doc.groupKey)}, so the whole document is held back)` });
  }

  async function* mapItems(items: AsyncIterable<ParsedItem>, ctx: MapContext): AsyncGenerator<MapOutput> {
    const st: EvalState = { ctx, symbolic: ctx.symbolicLookups === true, line: 0 };
    const stats = ctx.stats;
    if (!st.symbolic) {
      for (const need of referenceNeeds) {
        if (!ctx.refs.has(need.resource)) {
          throw new MappingError(`${file}: mapping ${name} looks up ${need.resource} by ${need.by}, but ${need.resource} was not loaded into the reference cache`);
        }
      }
    }
    const out = (o: MapOutput): MapOutput => {
      if (stats) {
        if (o.ok) stats.records++;
        else stats.rejects++;
      }
      return o;
    };
    const passes = (row: RawRow): boolean | MapOutput => {
      if (!filter) return true;
      try {
        return filter(row, st);
      } catch (err) {
        if (!(err instanceof RowFail)) throw err;
        const issues = new Issues();
        issues.add(row.line, 'filter', err);
        return makeReject([row], issues.list ?? [], undefined);
      }
    };

    if (!group) {
      for await (const item of items) {
        if (stats) stats.rows++;
        if (item.kind === 'error') {
          yield out(makeReject([errorRaw(item)], [errorIssue(item)], undefined));
          continue;
        }
        const row = item.row;
        st.line = row.line;
        const keep = passes(row);
        if (keep === false) {
          if (stats) stats.skipped++;
          continue;
        }
        if (keep !== true) {
          yield out(keep);
          continue;
        }
        yield out(mapRow(row, st));
      }
      return;
    }

    // header/detail record types (fixed-width)
    if (itemRecords) {
      const headerType = group.headerRecord;
      let cur: Doc | undefined;
      let skipping = false;
      for await (const item of items) {
        if (stats) stats.rows++;
        if (item.kind === 'error') {
          if (cur) poison(cur, item);
          else yield out(makeReject([errorRaw(item)], [errorIssue(item)], undefined));
          continue;
        }
        const row = item.row;
        st.line = row.line;
        const type = row.recordType ?? '';
        const isHeader = type === headerType;
        const isItem = itemRecords.has(type);
        if (!isHeader && !isItem) {
          if (stats) stats.skipped++;
          continue;
        }
        if (isHeader) {
          if (cur) yield out(flush(cur, st));
          cur = undefined;
          const keep = passes(row);
          if (keep === false) {
            skipping = true;
            if (stats) stats.skipped++;
            continue;
          }
          skipping = false;
          if (keep !== true) {
            // the filter could not be evaluated on the header: its document is rejected with its details
            cur = newDoc(`line ${row.line}`);
            cur.rows.push(row);
            if (!keep.ok) for (const i of keep.reject.issues) cur.issues.push(i);
            continue;
          }
          let gk = `line ${row.line}`;
          if (groupByEval) {
            try {
              gk = keyText(groupByEval(row, st)) ?? gk;
            } catch (err) {
              if (!(err instanceof RowFail)) throw err;
            }
          }
          cur = newDoc(gk);
          cur.rows.push(row);
          addHeader(cur, row, st);
          continue;
        }
        if (skipping) {
          if (stats) stats.skipped++;
          continue;
        }
        if (!cur) {
          yield out(
            makeReject([row], [{ code: 'orphan_item', message: `line ${row.line}: ${type} record before any ${headerType} record: it belongs to no document` }], undefined),
          );
          continue;
        }
        const keep = passes(row);
        if (keep === false) {
          if (stats) stats.skipped++;
          continue;
        }
        cur.rows.push(row);
        if (keep !== true) {
          for (const i of keep.ok ? [] : keep.reject.issues) cur.issues.push(i);
          continue;
        }
        addItems(cur, row, st);
      }
      if (cur) yield out(flush(cur, st));
      return;
    }

    // group by key
    const contiguous = group.contiguous;
    const byEval = groupByEval as Eval;
    let cur: Doc | undefined;
    const finished = new Map<string, number>();
    const open = new Map<string, Doc>();
    for await (const item of items) {
      if (stats) stats.rows++;
      if (item.kind === 'error') {
        if (contiguous && cur) poison(cur, item);
        else yield out(makeReject([errorRaw(item)], [errorIssue(item)], undefined));
        continue;
      }
      const row = item.row;
      st.line = row.line;
      const keep = passes(row);
      if (keep === false) {
        if (stats) stats.skipped++;
        continue;
      }
      let gk: string | undefined;
      let keyIssue: RowIssue | undefined;
      try {
        gk = keyText(byEval(row, st));
      } catch (err) {
        if (!(err instanceof RowFail)) throw err;
        const issues = new Issues();
        issues.add(row.line, 'group.by', err);
        keyIssue = issues.list?.[0];
      }
      if (gk === undefined) {
        const issues: RowIssue[] = keep === true ? [] : keep.ok ? [] : [...keep.reject.issues];
        issues.push(keyIssue ?? { code: 'required', field: 'group.by', message: `line ${row.line}: the document key (group.by) is empty` });
        if (contiguous && cur) {
          // most likely a damaged line of the open document: hold the document back with it
          cur.rows.push(row);
          for (const i of issues) cur.issues.push({ ...i, message: `${i.message} (the line may belong to document ${q(cur.groupKey)}, so the whole document is held back)` });
        } else yield out(makeReject([row], issues, undefined));
        continue;
      }
      let doc: Doc | undefined;
      if (contiguous) {
        if (cur && cur.groupKey === gk) doc = cur;
        else {
          if (cur) {
            yield out(flush(cur, st));
            finished.set(cur.groupKey, (cur.rows[cur.rows.length - 1] as RawRow).line);
            cur = undefined;
          }
          const endedAt = finished.get(gk);
          if (endedAt !== undefined) {
            yield out(
              makeReject(
                [row],
                [
                  {
                    code: 'group_not_contiguous',
                    field: 'group.by',
                    value: gk,
                    message: `line ${row.line}: document ${q(gk)} appears again after its lines ended at line ${endedAt}; list a document's lines together, or set group.contiguous: false`,
                  },
                ],
                undefined,
              ),
            );
            continue;
          }
          cur = newDoc(gk);
          doc = cur;
        }
      } else {
        doc = open.get(gk);
        if (!doc) {
          doc = newDoc(gk);
          open.set(gk, doc);
        }
      }
      doc.rows.push(row);
      if (keep !== true) {
        // the filter could not be evaluated: the row is kept in its document, which is rejected
        if (!keep.ok) for (const i of keep.reject.issues) doc.issues.push(i);
        continue;
      }
      addHeader(doc, row, st);
      addItems(doc, row, st);
    }
    if (cur) yield out(flush(cur, st));
    for (const doc of open.values()) yield out(flush(doc, st));
  }

  const compiled: CompiledMapping = {
    name,
    file,
    match: channel !== undefined ? { channel, files } : { files },
    source,
    target,
    op,
    referenceNeeds,
    columnsRead: source.format === 'delimited' ? [...cc.read] : [],
    spec,
    matches(ch: string, fileName: string): boolean {
      if (channel !== undefined && ch.toLowerCase() !== channel.toLowerCase()) return false;
      for (const g of fileGlobs) if (g.test(fileName)) return true;
      return false;
    },
    mapItems,
  };
  if (spec.description !== undefined) compiled.description = spec.description;
  return compiled;
}

function compileFilter(cc: CompileCtx, f: ConditionSpec | ConditionSpec[]): Cond {
  if (Array.isArray(f)) {
    const list = f.map((c, i) => compileCondition(cc, c, ['filter', i]));
    return (row, st) => {
      for (const c of list) if (!c(row, st)) return false;
      return true;
    };
  }
  return compileCondition(cc, f, ['filter']);
}
