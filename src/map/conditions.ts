/**
 * Filters: a mapping's `filter` conditions (all / any / not, and tests on a value) compiled to predicates.
 */
import { isMissing, problem, type CompileCtx, type Cond } from './evaluation.js';
import { compileExpr, finish } from './expressions.js';
import type { ConditionSpec, ExprSpec, TestConditionSpec, TransformSpec } from './model.js';
import { safeString } from './transforms.js';

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

export function compileFilter(cc: CompileCtx, f: ConditionSpec | ConditionSpec[], base: Array<string | number> = ['filter']): Cond {
  if (Array.isArray(f)) {
    const list = f.map((c, i) => compileCondition(cc, c, [...base, i]));
    return (row, st) => {
      for (const c of list) if (!c(row, st)) return false;
      return true;
    };
  }
  return compileCondition(cc, f, base);
}
