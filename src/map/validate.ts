/**
 * Validation of a produced payload against the target's schema, with RefValues and lookup placeholders
 * standing in as UUIDs, and issues that name the field, its value and its source line.
 */
import type { z } from 'zod';
import type { RowIssue } from '../shared/errors.js';
import { keyText, LookupPlaceholder, PLACEHOLDER_UUID } from './evaluation.js';
import type { FastCheck } from './fast-check.js';
import { formatPath } from './problems.js';
import { q } from './transforms.js';
import { isRef } from './types.js';

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

export function validate(
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
