/**
 * The expression compiler: a mapping's value expressions (col, path, field, const, template, concat,
 * coalesce, ref, lookup, table) to plain functions of a row, with transforms, `default` and `required`.
 */
import { LOOKUP_BY, READ_ONLY_RESOURCES, type ExprSpec, type TransformSpec } from './model.js';
import type { RefResource } from '../wms/targets.js';
import { checkName, isMissing, keyText, LookupPlaceholder, problem, type CompileCtx, type Eval } from './evaluation.js';
import { matchKey } from './identifiers.js';
import { columnOf, withColumn } from './cells.js';
import { compileTransforms, q, RowFail, safeString, TransformSpecError, type TransformFn } from './transforms.js';
import type { RefValue } from './types.js';

const EXPR_KEYS = ['col', 'path', 'field', 'const', 'template', 'concat', 'coalesce', 'ref', 'lookup', 'table'] as const;

function fieldReader(name: string): Eval {
  return (row) => row.fields[name];
}

function compileSourceName(cc: CompileCtx, kind: 'col' | 'path' | 'field' | 'short', name: string | number, path: Array<string | number>): Eval {
  const fmt = cc.format;
  const byCol = fmt === 'delimited' || fmt === 'xlsx';
  if (kind === 'col' && !byCol)
    problem(cc, path, `'col' reads delimited files and spreadsheets; this source is ${fmt}: use ${fmt === 'fixed-width' ? "'field'" : "'path'"}`);
  if (kind === 'field' && fmt !== 'fixed-width') problem(cc, path, `'field' reads fixed-width files; this source is ${fmt}: use ${byCol ? "'col'" : "'path'"}`);
  if (kind === 'path' && fmt !== 'xml' && fmt !== 'json' && fmt !== 'jsonl')
    problem(cc, path, `'path' reads XML/JSON files; this source is ${fmt}: use ${byCol ? "'col'" : "'field'"}`);
  if (typeof name === 'number') {
    const key = String(name);
    return (row) => (row.cells !== undefined ? row.cells[name] : row.fields[key]);
  }
  cc.reading?.add(name);
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
      if (!name.startsWith('$')) {
        checkName(cc, name, path);
        cc.reading?.add(name);
      } else if (!['$file', '$line', '$now'].includes(name)) problem(cc, path, `unknown placeholder {${name}} (known: {$file} {$line} {$now})`);
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
export function compileExpr(cc: CompileCtx, spec: ExprSpec, path: Array<string | number>, forceRequired = false, requiredWhy = ''): Eval {
  const e = compileExprOf(cc, spec, path, forceRequired, requiredWhy);
  // a spreadsheet's column: a value refused names its cell (Issues.add with the row's sheet)
  const column = cc.format === 'xlsx' ? columnOf(spec) : undefined;
  return column === undefined ? e : withColumn(e, column);
}

/** `template`: literal text and `{column}` (or `$file`, `$line`, `$now`); missing if any column is. */
function compileTemplate(cc: CompileCtx, template: string, path: Array<string | number>): Eval {
  const parts = parseTemplate(cc, template, path);
  return (row, st) => {
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
}

/** `concat` with `sep`: the parts that are not missing, joined. */
function compileConcat(cc: CompileCtx, s: Record<string, unknown>, path: Array<string | number>): Eval {
  const list = (s['concat'] as ExprSpec[]).map((e, i) => compileExpr(cc, e, [...path, 'concat', i]));
  const sep = (s['sep'] as string | undefined) ?? '';
  return (row, st) => {
    let out: string | undefined;
    for (const e of list) {
      const v = e(row, st);
      if (isMissing(v)) continue;
      const t = typeof v === 'string' ? v : safeString(v);
      out = out === undefined ? t : out + sep + t;
    }
    return out;
  };
}

/** `coalesce`: the first part that is not missing. */
function compileCoalesce(cc: CompileCtx, s: Record<string, unknown>, path: Array<string | number>): Eval {
  const list = (s['coalesce'] as ExprSpec[]).map((e, i) => compileExpr(cc, e, [...path, 'coalesce', i]));
  return (row, st) => {
    for (const e of list) {
      const v = e(row, st);
      if (!isMissing(v)) return v;
    }
    return undefined;
  };
}

/** `ref`: a reference to a resource wmsbridge sends, resolved at send time. */
function compileRef(cc: CompileCtx, s: Record<string, unknown>, path: Array<string | number>, forceRequired: boolean, requiredWhy: string): Eval {
  const resource = s['ref'] as RefResource;
  const from = finish(cc, compileExpr(cc, s['from'] as ExprSpec, [...path, 'from']), s as CommonLike, path, forceRequired, requiredWhy);
  return (row, st) => {
    const v = from(row, st);
    if (isMissing(v)) return undefined;
    const ref: RefValue = { $ref: { resource, value: typeof v === 'string' ? v : safeString(v) } };
    return ref;
  };
}

/** `table`: a static table of the mapping; a value it does not hold is a reject naming the known ones. */
function compileTable(cc: CompileCtx, s: Record<string, unknown>, path: Array<string | number>, forceRequired: boolean, requiredWhy: string): Eval {
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

/** The value before the common options (transforms, default, required) apply; undefined for an unknown kind. */
function compileBase(cc: CompileCtx, kind: string | undefined, s: Record<string, unknown>, path: Array<string | number>): Eval | undefined {
  switch (kind) {
    case 'col':
      return compileSourceName(cc, 'col', s['col'] as string | number, [...path, 'col']);
    case 'path':
      return compileSourceName(cc, 'path', s['path'] as string, [...path, 'path']);
    case 'field':
      return compileSourceName(cc, 'field', s['field'] as string, [...path, 'field']);
    case 'const': {
      const v = s['const'];
      return () => v;
    }
    case 'template':
      return compileTemplate(cc, s['template'] as string, [...path, 'template']);
    case 'concat':
      return compileConcat(cc, s, path);
    case 'coalesce':
      return compileCoalesce(cc, s, path);
    default:
      return undefined;
  }
}

function compileExprOf(cc: CompileCtx, spec: ExprSpec, path: Array<string | number>, forceRequired: boolean, requiredWhy: string): Eval {
  if (typeof spec === 'string') return finish(cc, compileSourceName(cc, 'short', spec, path), undefined, path, forceRequired, requiredWhy);
  const s = spec as Record<string, unknown>;
  const kind = EXPR_KEYS.filter((k) => k in s)[0];
  // ref, lookup and table apply the common options to their `from`, not to their result
  if (kind === 'ref') return compileRef(cc, s, path, forceRequired, requiredWhy);
  if (kind === 'lookup') return compileLookup(cc, s, path, forceRequired, requiredWhy);
  if (kind === 'table') return compileTable(cc, s, path, forceRequired, requiredWhy);
  const base = compileBase(cc, kind, s, path);
  if (!base) {
    problem(cc, path, 'not an expression');
    return () => undefined;
  }
  return finish(cc, base, s as CommonLike, path, forceRequired, requiredWhy);
}

export interface CommonLike {
  transforms?: TransformSpec[];
  default?: unknown;
  required?: boolean;
}

export function finish(cc: CompileCtx, base: Eval, s: CommonLike | undefined, path: Array<string | number>, forceRequired: boolean, requiredWhy: string): Eval {
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
    if (recs.length > 1)
      throw new RowFail('lookup_ambiguous', `${recs.length} ${resource} records have ${by} ${q(value)}${whereText}: narrow it with where`, value);
    const rec = recs[0] as Readonly<Record<string, unknown>>;
    const out = rec[select ?? 'id'];
    if (isMissing(out)) throw new RowFail('lookup_not_found', `${resource} with ${by} ${q(value)} has no ${select ?? 'id'}`, value);
    return out;
  };
}
