/**
 * Request validation helpers: zod issues and foreign-key problems become one "<field>: <reason>"
 * list, joined with "; " into the envelope's error text.
 */
import type { z } from 'zod';

export interface FieldProblem {
  field: string;
  reason: string;
}

export function pathString(path: ReadonlyArray<PropertyKey>): string {
  let out = '';
  for (const p of path) {
    if (typeof p === 'number') out += `[${p}]`;
    else out += out === '' ? String(p) : `.${String(p)}`;
  }
  return out;
}

export function zodProblems(error: z.ZodError): FieldProblem[] {
  const out: FieldProblem[] = [];
  for (const issue of error.issues) {
    const base = pathString(issue.path);
    if (issue.code === 'unrecognized_keys') {
      for (const k of issue.keys) out.push({ field: base ? `${base}.${k}` : k, reason: 'unknown field' });
      continue;
    }
    const missing = issue.code === 'invalid_type' && /received undefined$/.test(issue.message);
    out.push({ field: base || 'body', reason: missing ? 'required' : issue.message });
  }
  return out;
}

export function formatProblems(problems: FieldProblem[]): string {
  return problems.map((p) => `${p.field}: ${p.reason}`).join('; ');
}

export const GUID_RE = /^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$/;
