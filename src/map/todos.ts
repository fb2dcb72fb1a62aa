/**
 * What `wmsbridge infer` could not decide stays a TODO in the mapping it writes (a constant `TODO`, a
 * column named TODO, a template with `|TODO`): such a mapping is not finished. `check` and `preview`
 * fail on it and name every field that still holds one, so a guess never previews or checks as clean.
 */
import type { MappingSpec } from './model.js';

const TODO = /\bTODO\b/;

function holdsTodo(expr: unknown): boolean {
  if (typeof expr === 'string') return TODO.test(expr);
  if (Array.isArray(expr)) return expr.some(holdsTodo);
  if (expr && typeof expr === 'object') return Object.values(expr).some(holdsTodo);
  return false;
}

/** The mapping's fields (`fields.code`, `group.itemFields.productID`, `group.by`...) that hold a TODO. */
export function mappingTodos(spec: MappingSpec): string[] {
  const out: string[] = [];
  for (const [k, v] of Object.entries(spec.fields)) if (holdsTodo(v)) out.push(`fields.${k}`);
  if (spec.group) {
    if (holdsTodo(spec.group.by)) out.push('group.by');
    for (const [k, v] of Object.entries(spec.group.itemFields)) if (holdsTodo(v)) out.push(`group.itemFields.${k}`);
  }
  if (spec.attachmentPath !== undefined && holdsTodo(spec.attachmentPath)) out.push('attachmentPath');
  if (spec.filter !== undefined && holdsTodo(spec.filter)) out.push('filter');
  return out;
}
