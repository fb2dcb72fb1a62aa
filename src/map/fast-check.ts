/**
 * A fast pre-check compiled from a zod schema: `check(value)` is true only when zod would certainly
 * accept the value. The mapping validates every record; on the hot path the pre-check answers in a
 * fraction of zod's time, and zod runs only when the pre-check says no (to produce its messages).
 *
 * Conservative by construction: any schema node or check this compiler does not know makes the whole
 * schema unsupported (undefined), and then zod validates every record as before.
 */
import type { z } from 'zod';

export type FastCheck = (v: unknown) => boolean;

interface Def {
  type: string;
  checks?: Array<{ _zod: { def: Record<string, unknown> } }>;
  innerType?: z.ZodType;
  options?: z.ZodType[];
  values?: unknown[];
  entries?: Record<string, unknown>;
  element?: z.ZodType;
  shape?: Record<string, z.ZodType>;
  catchall?: z.ZodType;
  pattern?: RegExp;
}

const defOf = (s: z.ZodType): Def => (s as unknown as { _zod: { def: Def } })._zod.def;

type Step = { tx: (x: unknown) => unknown } | { test: (x: unknown) => boolean };

function lengthOf(x: unknown): number {
  return typeof x === 'string' || Array.isArray(x) ? x.length : -1;
}

/** Checks shared by strings, numbers and arrays; undefined when one is unknown. */
function steps(def: Def): Step[] | undefined {
  const out: Step[] = [];
  for (const c of def.checks ?? []) {
    const d = c._zod.def;
    switch (d['check']) {
      case 'overwrite':
        if (typeof d['tx'] !== 'function') return undefined;
        out.push({ tx: d['tx'] as (x: unknown) => unknown });
        break;
      case 'min_length': {
        const min = d['minimum'] as number;
        out.push({ test: (x) => lengthOf(x) >= min });
        break;
      }
      case 'max_length': {
        const max = d['maximum'] as number;
        out.push({ test: (x) => lengthOf(x) >= 0 && lengthOf(x) <= max });
        break;
      }
      case 'length_equals': {
        const n = d['length'] as number;
        out.push({ test: (x) => lengthOf(x) === n });
        break;
      }
      case 'string_format': {
        if (d['format'] !== 'regex' || !(d['pattern'] instanceof RegExp)) return undefined;
        const re = d['pattern'];
        out.push({
          test: (x) => {
            re.lastIndex = 0;
            return re.test(x as string);
          },
        });
        break;
      }
      case 'greater_than': {
        const v = d['value'] as number;
        out.push(d['inclusive'] ? { test: (x) => (x as number) >= v } : { test: (x) => (x as number) > v });
        break;
      }
      case 'less_than': {
        const v = d['value'] as number;
        out.push(d['inclusive'] ? { test: (x) => (x as number) <= v } : { test: (x) => (x as number) < v });
        break;
      }
      default:
        return undefined;
    }
  }
  return out;
}

function withSteps(base: (x: unknown) => boolean, list: Step[]): FastCheck {
  if (list.length === 0) return base;
  return (v) => {
    if (!base(v)) return false;
    let x = v;
    for (const s of list) {
      if ('tx' in s) x = s.tx(x);
      else if (!s.test(x)) return false;
    }
    return true;
  };
}

export function compileFastCheck(schema: z.ZodType): FastCheck | undefined {
  const d = defOf(schema);
  switch (d.type) {
    case 'string': {
      const s = steps(d);
      return s && withSteps((v) => typeof v === 'string', s);
    }
    case 'number': {
      const s = steps(d);
      return s && withSteps((v) => typeof v === 'number' && Number.isFinite(v), s);
    }
    case 'boolean':
      return d.checks?.length ? undefined : (v) => typeof v === 'boolean';
    case 'literal': {
      const values = d.values ?? [];
      return (v) => values.includes(v);
    }
    case 'enum': {
      const values = Object.values(d.entries ?? {});
      return (v) => values.includes(v);
    }
    case 'union': {
      const opts = (d.options ?? []).map(compileFastCheck);
      if (opts.some((o) => o === undefined)) return undefined;
      const list = opts as FastCheck[];
      return (v) => list.some((o) => o(v));
    }
    case 'optional':
    case 'default': {
      const inner = d.innerType && compileFastCheck(d.innerType);
      return inner && ((v) => v === undefined || inner(v));
    }
    case 'array': {
      const el = d.element && compileFastCheck(d.element);
      const s = steps(d);
      if (!el || !s) return undefined;
      return withSteps((v) => Array.isArray(v) && v.every(el), s);
    }
    case 'object': {
      if (d.checks?.length || !d.shape) return undefined;
      const strict = d.catchall !== undefined && defOf(d.catchall).type === 'never';
      if (d.catchall !== undefined && !strict) return undefined;
      const keys = Object.keys(d.shape);
      const preds: FastCheck[] = [];
      for (const k of keys) {
        const p = compileFastCheck(d.shape[k] as z.ZodType);
        if (!p) return undefined;
        preds.push(p);
      }
      const known = new Set(keys);
      return (v) => {
        if (v === null || typeof v !== 'object' || Array.isArray(v)) return false;
        const o = v as Record<string, unknown>;
        for (let i = 0; i < keys.length; i++) if (!(preds[i] as FastCheck)(o[keys[i] as string])) return false;
        if (strict) for (const k in o) if (!known.has(k)) return false;
        return true;
      };
    }
    default:
      return undefined;
  }
}
