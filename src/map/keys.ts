/**
 * Natural keys: the target's default key (src/wms/targets/: parts of the payload, alternatives first
 * non-empty wins, joined by '|') or the mapping's `key` expression.
 */
import { TARGET_INFO, type Target } from '../wms/targets.js';
import { keyText, problem, type CompileCtx, type Eval, type EvalState } from './evaluation.js';
import type { Issues, ShapeInfo } from './fields.js';
import { RowFail } from './transforms.js';
import type { RawRow } from '../parse/types.js';

/** The target's natural key of a payload (used when the mapping has no `key`); undefined when a part is empty. */
export function defaultKey(target: Target, payload: Record<string, unknown>): string | undefined {
  const spec = TARGET_INFO[target].key;
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

/** A mapping without `key` must give every part of the target's natural key (a field, or an implicit value). */
export function checkDefaultKey(cc: CompileCtx, target: Target, fields: Readonly<Record<string, unknown>>, info: ShapeInfo): void {
  const dk = TARGET_INFO[target].key;
  for (const alts of dk.parts) {
    const given = alts.some((a) => a === '' || a in fields || info.implicit.has(a));
    if (!given) problem(cc, ['fields'], `the natural key of ${target} is ${dk.label}: map ${alts.join(' or ')} or set key`);
  }
}

/** A record's key: the mapping's `key` expression, else the target's natural key of the payload (issues say why not). */
export function recordKey(
  target: Target,
  keyEval: Eval | undefined,
  payload: Record<string, unknown>,
  row: RawRow,
  st: EvalState,
  issues: Issues,
): string | undefined {
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
  const label = TARGET_INFO[target].key.label;
  // a key part that failed is already reported by its field
  if (k === undefined && issues.list === undefined)
    issues.push({ code: 'key_missing', field: label, message: `line ${st.line}: no natural key: ${label} is empty` });
  return k;
}
