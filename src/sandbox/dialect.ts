/**
 * Sandbox dialects: one knob per choice that ../shared/wms-interface.md leaves open ("not shown"), so
 * the client can be tested against WMSs that choose differently from the default sandbox. The default
 * preset is the sandbox's historical behaviour; `alt` takes every alternative choice.
 *
 * A dialect changes the wire only (and the seed owner's codeERP): the stored state stays canonical
 * (digits CNPJs as sent, UTC DateTimes), so /__sandbox/state and `sb.state` read the same in every
 * dialect. docs/SANDBOX.md "Dialects" describes each knob.
 */
import { ConfigError } from '../shared/errors.js';

export interface SandboxDialect {
  /** PagingIndex of the first page. 1: 1-based (default); 0: 0-based (PagingIndex 0 is the first page). */
  pagingBase: 0 | 1;
  /** CNPJs in answers: 'digits' as stored (default); 'masked' always formatted 00.000.000/0000-00. */
  cnpjFormat: 'digits' | 'masked';
  /**
   * What GET /Owners/codeerp/{code} matches: 'code' (default: `code`, then `codeERP`); 'codeERP' (only
   * `codeERP`; the seed owner's codeERP then differs from its code).
   */
  ownersCodeerpMatches: 'code' | 'codeERP';
  /** PickingList `type` and `separationType` required on create (false by default). */
  pickingListTypeRequired: boolean;
  /**
   * DateTimes: 'utc' (default) answers them as stored (UTC, trailing Z) and stores offset-less input
   * as sent; 'local' answers local wall time without an offset (UTC-03:00, Brasília) and reads
   * offset-less input as local time.
   */
  dateTimes: 'utc' | 'local';
  /**
   * A second create with the natural key of an existing record: 'accept' (default, a duplicate record
   * is created and counted) or 'refuse' (409, the message names the key and the existing id, and the
   * envelope's data is `{ id: <existing id> }`).
   */
  duplicates: 'accept' | 'refuse';
}

export type DialectKnob = keyof SandboxDialect;

/** Named presets. `default` is the sandbox's historical behaviour; `alt` takes every alternative. */
export const DIALECT_PRESETS: Readonly<Record<string, Readonly<SandboxDialect>>> = {
  default: { pagingBase: 1, cnpjFormat: 'digits', ownersCodeerpMatches: 'code', pickingListTypeRequired: false, dateTimes: 'utc', duplicates: 'accept' },
  alt: { pagingBase: 0, cnpjFormat: 'masked', ownersCodeerpMatches: 'codeERP', pickingListTypeRequired: true, dateTimes: 'local', duplicates: 'refuse' },
};

/** The values each knob accepts, in the order default, alternative. */
export const DIALECT_KNOBS: Readonly<Record<DialectKnob, readonly (string | number | boolean)[]>> = {
  pagingBase: [1, 0],
  cnpjFormat: ['digits', 'masked'],
  ownersCodeerpMatches: ['code', 'codeERP'],
  pickingListTypeRequired: [false, true],
  dateTimes: ['utc', 'local'],
  duplicates: ['accept', 'refuse'],
};

export const DEFAULT_DIALECT: Readonly<SandboxDialect> = DIALECT_PRESETS['default']!;

/**
 * One dialect per knob with only that knob changed, plus `alt` (everything changed): the matrix the
 * contract and e2e suites run. Names are `default`, `alt` and `<knob>=<value>`.
 */
export function dialectMatrix(): Array<{ name: string; dialect: SandboxDialect }> {
  const out: Array<{ name: string; dialect: SandboxDialect }> = [{ name: 'default', dialect: { ...DEFAULT_DIALECT } }];
  for (const [k, values] of Object.entries(DIALECT_KNOBS) as Array<[DialectKnob, readonly (string | number | boolean)[]]>) {
    const v = values[1]!;
    out.push({ name: `${k}=${String(v)}`, dialect: { ...DEFAULT_DIALECT, [k]: v } as SandboxDialect });
  }
  out.push({ name: 'alt', dialect: { ...DIALECT_PRESETS['alt']! } });
  return out;
}

function coerceKnob(knob: DialectKnob, raw: unknown, where: string): SandboxDialect[DialectKnob] {
  const allowed = DIALECT_KNOBS[knob];
  const s = typeof raw === 'string' ? raw.trim() : raw;
  for (const a of allowed) {
    if (a === s || String(a) === String(s)) return a as SandboxDialect[DialectKnob];
  }
  throw new ConfigError(`${where}: ${knob} must be one of ${allowed.map(String).join(', ')} (got ${JSON.stringify(raw)})`);
}

export type DialectSpec = string | (Partial<Record<DialectKnob, unknown>> & { preset?: string });

/**
 * Resolves a dialect from a preset name, a `k=v,k=v` list (optionally starting with a preset name:
 * `alt,duplicates=accept`), or an object `{ preset?, ...knobs }`. Unknown presets, knobs or values are a
 * ConfigError naming them and what is allowed.
 */
export function parseDialect(spec: DialectSpec | undefined, where = 'dialect'): SandboxDialect {
  if (spec === undefined) return { ...DEFAULT_DIALECT };
  let preset = 'default';
  const overrides: Array<[string, unknown]> = [];
  if (typeof spec === 'string') {
    const parts = spec
      .split(',')
      .map((p) => p.trim())
      .filter((p) => p !== '');
    parts.forEach((p, i) => {
      const eq = p.indexOf('=');
      if (eq < 0) {
        if (i !== 0) throw new ConfigError(`${where}: "${p}" must be knob=value (a preset name may only come first)`);
        preset = p;
      } else overrides.push([p.slice(0, eq).trim(), p.slice(eq + 1)]);
    });
  } else {
    for (const [k, v] of Object.entries(spec)) {
      if (k === 'preset') preset = String(v);
      else overrides.push([k, v]);
    }
  }
  const base = DIALECT_PRESETS[preset];
  if (!base) throw new ConfigError(`${where}: unknown preset "${preset}" (presets: ${Object.keys(DIALECT_PRESETS).join(', ')})`);
  const d: SandboxDialect = { ...base };
  for (const [k, v] of overrides) {
    if (!(k in DIALECT_KNOBS)) throw new ConfigError(`${where}: unknown knob "${k}" (knobs: ${Object.keys(DIALECT_KNOBS).join(', ')})`);
    (d as unknown as Record<string, unknown>)[k] = coerceKnob(k as DialectKnob, v, where);
  }
  return d;
}

/** `k=v,...` for every knob that differs from the default; `default` when none does; `alt` when it is alt. */
export function formatDialect(d: SandboxDialect): string {
  const alt = DIALECT_PRESETS['alt']!;
  if ((Object.keys(DIALECT_KNOBS) as DialectKnob[]).every((k) => d[k] === alt[k])) return 'alt';
  const diff = (Object.keys(DIALECT_KNOBS) as DialectKnob[]).filter((k) => d[k] !== DEFAULT_DIALECT[k]).map((k) => `${k}=${String(d[k])}`);
  return diff.length ? diff.join(',') : 'default';
}

// ------------------------------------------------------------------------------------------------
// wire transforms
// ------------------------------------------------------------------------------------------------

/** Offset of the 'local' dialect: Brasília, UTC-03:00 (no daylight saving since 2019). */
export const LOCAL_OFFSET_MINUTES = -180;

const UTC_DT = /^(\d{4}-\d{2}-\d{2})T(\d{2}:\d{2}(?::\d{2}(?:\.\d{1,7})?)?)Z$/;
const NAIVE_DT = /^(\d{4}-\d{2}-\d{2})[T ](\d{2}:\d{2}(?::\d{2}(?:\.\d{1,7})?)?)$/;

function pad(n: number, w = 2): string {
  return String(n).padStart(w, '0');
}

/** `2026-01-10T03:00:00Z` -> `2026-01-10T00:00:00` (local wall time, no offset). */
export function utcToLocal(v: string): string {
  const ms = Date.parse(v);
  if (!Number.isFinite(ms)) return v;
  const d = new Date(ms + LOCAL_OFFSET_MINUTES * 60_000);
  return `${d.getUTCFullYear()}-${pad(d.getUTCMonth() + 1)}-${pad(d.getUTCDate())}T${pad(d.getUTCHours())}:${pad(d.getUTCMinutes())}:${pad(d.getUTCSeconds())}`;
}

/** `2026-01-10T00:00:00` (local) -> `2026-01-10T03:00:00.000Z`. */
export function localToUtc(v: string): string {
  const m = NAIVE_DT.exec(v);
  if (!m) return v;
  const ms = Date.parse(`${m[1]}T${m[2]}Z`);
  if (!Number.isFinite(ms)) return v;
  return new Date(ms - LOCAL_OFFSET_MINUTES * 60_000).toISOString();
}

export function maskCnpj(v: string): string {
  const digits = v.replace(/\D/g, '');
  if (digits.length !== 14) return v;
  return `${digits.slice(0, 2)}.${digits.slice(2, 5)}.${digits.slice(5, 8)}/${digits.slice(8, 12)}-${digits.slice(12)}`;
}

function deepMap(v: unknown, f: (key: string, s: string) => string, key = ''): unknown {
  if (typeof v === 'string') return f(key, v);
  if (Array.isArray(v)) return v.map((x) => deepMap(x, f, key));
  if (v && typeof v === 'object') {
    const out: Record<string, unknown> = {};
    for (const [k, x] of Object.entries(v)) out[k] = deepMap(x, f, k);
    return out;
  }
  return v;
}

/** Whether answers need rewriting at all in this dialect (the default dialect sends state as stored). */
export function rewritesAnswers(d: SandboxDialect): boolean {
  return d.cnpjFormat === 'masked' || d.dateTimes === 'local';
}

/** The `data` of an API answer as this dialect shows it (CNPJs masked, DateTimes local). */
export function presentData(data: unknown, d: SandboxDialect): unknown {
  if (!rewritesAnswers(d) || data === null || data === undefined) return data;
  return deepMap(data, (key, s) => {
    if (d.cnpjFormat === 'masked' && key.toLowerCase() === 'cnpj') return maskCnpj(s);
    if (d.dateTimes === 'local' && UTC_DT.test(s)) return utcToLocal(s);
    return s;
  });
}

/** A validated create/update body as this dialect stores it (offset-less DateTimes read as local time). */
export function normalizeInput<T>(data: T, d: SandboxDialect): T {
  if (d.dateTimes !== 'local') return data;
  return deepMap(data, (_key, s) => (NAIVE_DT.test(s) ? localToUtc(s) : s)) as T;
}

/** The seed owner's codeERP in the 'codeERP' Owners dialect (differs from its code "001"). */
export const CODEERP_DIALECT_OWNER_CODEERP = 'ERP-001';
