/**
 * Transforms, compiled once per mapping to plain functions `(value) => value`. A bad value throws a
 * RowFail (a row problem, not a crash): the compiler catches it per field and turns it into a RowIssue.
 * Regular expressions, Intl formatters and lookup tables are built here, at compile time.
 */
import type { MapReason } from '../shared/reason-codes.js';
import { isValidTimeZone, zoneOffsetMs } from '../shared/time.js';
import { cnpjCheckDigits, isValidCnpj, isValidGtin, uuid5, WMSBRIDGE_UUID_NAMESPACE } from './checks.js';
import { DEFAULT_FALSE_WORDS, DEFAULT_TRUE_WORDS, type TransformSpec } from './model.js';

/** A row-level failure: code + message without the "line N: field F:" prefix (added by the caller). */
export class RowFail extends Error {
  readonly code: MapReason;
  readonly value: string | undefined;
  /** the source column whose value failed, when known (spreadsheets: the message names the cell, map/cells.ts) */
  column: string | number | undefined;
  constructor(code: MapReason, message: string, value?: unknown) {
    super(message);
    this.code = code;
    this.value = value === undefined ? undefined : typeof value === 'string' ? value : safeString(value);
  }
}

export function safeString(v: unknown): string {
  if (typeof v === 'string') return v;
  try {
    return JSON.stringify(v) ?? String(v);
  } catch {
    return String(v);
  }
}

export type TransformFn = (value: unknown) => unknown;

/** Thrown at compile time for a transform that cannot work (bad regex, unknown time zone...). */
export class TransformSpecError extends Error {
  constructor(
    message: string,
    readonly path: Array<string | number>,
  ) {
    super(message);
  }
}

export interface TransformCompileOptions {
  /** the mapping's default IANA time zone */
  timeZone: string;
}

const str = (v: unknown): string => (typeof v === 'string' ? v : String(v));

/** Quote a value for a message: '12,3,4' (cut at 60 characters). */
export function q(v: unknown): string {
  const s = str(v);
  return `'${s.length > 60 ? `${s.slice(0, 59)}…` : s}'`;
}

export function compileTransform(spec: TransformSpec, options: TransformCompileOptions): TransformFn {
  if (typeof spec === 'string') {
    switch (spec) {
      case 'trim':
        return (v) => str(v).trim();
      case 'upper':
        return (v) => str(v).toUpperCase();
      case 'lower':
        return (v) => str(v).toLowerCase();
      case 'title':
        return (v) => titleCase(str(v));
      case 'stripZeros':
        return (v) => stripLeadingZeros(str(v));
      case 'digitsOnly':
        return (v) => str(v).replace(NON_DIGITS, '');
      case 'integer':
        return compileInteger('');
      case 'number':
        return compileNumber({ decimal: ',' });
      case 'date':
        return compileDate({ format: 'dd/MM/yyyy', output: 'auto' }, options, []);
      case 'boolean':
        return compileBoolean(DEFAULT_TRUE_WORDS, DEFAULT_FALSE_WORDS);
      case 'uuid5':
        return (v) => uuid5(str(v), WMSBRIDGE_UUID_NAMESPACE);
      case 'cnpj':
        return cnpjTransform;
      case 'ean':
        return eanTransform;
      case 'ncm':
        return ncmTransform;
      case 'json':
        return jsonTransform;
    }
  }
  if ('padStart' in spec) {
    const { length, char } = spec.padStart;
    return (v) => str(v).padStart(length, char);
  }
  if ('replace' in spec) {
    let re: RegExp;
    try {
      re = new RegExp(spec.replace.pattern, spec.replace.flags);
    } catch (err) {
      throw new TransformSpecError(`invalid regular expression: ${(err as Error).message}`, ['replace', 'pattern']);
    }
    const withText = spec.replace.with;
    return (v) => {
      re.lastIndex = 0;
      return str(v).replace(re, withText);
    };
  }
  if ('substring' in spec) {
    const { start, length } = spec.substring;
    return length === undefined ? (v) => str(v).slice(start) : (v) => str(v).slice(start, start + length);
  }
  if ('truncate' in spec) {
    const { length } = spec.truncate;
    return (v) => {
      const s = str(v);
      return s.length > length ? s.slice(0, length) : s;
    };
  }
  if ('number' in spec) return compileNumber(spec.number);
  if ('integer' in spec) return compileInteger(spec.integer.thousands);
  if ('date' in spec) return compileDate(spec.date, options, ['date']);
  if ('boolean' in spec) return compileBoolean(spec.boolean.true, spec.boolean.false);
  if ('map' in spec) return compileMap(spec.map);
  if ('uuid5' in spec) {
    const ns = spec.uuid5.namespace ?? WMSBRIDGE_UUID_NAMESPACE;
    return (v) => uuid5(str(v), ns);
  }
  throw new TransformSpecError(`unknown transform ${JSON.stringify(spec)}`, []);
}

/** Compiles a transform list to one function (identity when empty). Stops at an empty value. */
export function compileTransforms(
  specs: readonly TransformSpec[] | undefined,
  options: TransformCompileOptions,
  basePath: Array<string | number>,
): TransformFn[] {
  const out: TransformFn[] = [];
  (specs ?? []).forEach((s, i) => {
    try {
      out.push(compileTransform(s, options));
    } catch (err) {
      if (err instanceof TransformSpecError) throw new TransformSpecError(err.message, [...basePath, i, ...err.path]);
      throw err;
    }
  });
  return out;
}

// ---------------------------------------------------------------------------------------------
// text
// ---------------------------------------------------------------------------------------------

const NON_DIGITS = /\D+/g;
const LOWER_WORDS = new Set(['de', 'da', 'do', 'das', 'dos', 'e', 'em', 'na', 'no', 'nas', 'nos', 'a', 'o', 'com', 'para', 'por']);

/** "DISTRIBUIDORA DE ALIMENTOS s.a." -> "Distribuidora de Alimentos S.a."; Portuguese particles stay lower case. */
export function titleCase(s: string): string {
  const words = s.toLowerCase().split(' ');
  for (let i = 0; i < words.length; i++) {
    const w = words[i] ?? '';
    if (w === '' || (i > 0 && LOWER_WORDS.has(w))) continue;
    words[i] = w.charAt(0).toUpperCase() + w.slice(1);
  }
  return words.join(' ');
}

export function stripLeadingZeros(s: string): string {
  let i = 0;
  while (i < s.length - 1 && s.charCodeAt(i) === 48) i++;
  return i === 0 ? s : s.slice(i);
}

// ---------------------------------------------------------------------------------------------
// numbers
// ---------------------------------------------------------------------------------------------

function escapeRe(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

function sepLabel(s: string): string {
  return s === '' ? 'none' : s === ' ' ? "' '" : `'${s}'`;
}

export function compileNumber(o: { decimal: ',' | '.'; thousands?: '.' | ',' | '' | ' ' | undefined; scale?: number | undefined }): TransformFn {
  const decimal = o.decimal;
  const thousands = o.thousands ?? (decimal === ',' ? '.' : '');
  if (thousands === decimal) throw new TransformSpecError(`thousands separator cannot equal the decimal separator '${decimal}'`, ['number', 'thousands']);
  const d = escapeRe(decimal);
  const intPart = thousands === '' ? '\\d+' : `(?:\\d{1,3}(?:${escapeRe(thousands)}\\d{3})+|\\d+)`;
  // sign in front or a trailing minus (ERP style "12,50-"); ",5" and "5," are accepted
  const re = new RegExp(`^([+-]?)(${intPart})?(?:${d}(\\d*))?(-?)$`);
  const scale = o.scale;
  const label = `(decimal '${decimal}' thousands ${sepLabel(thousands)})`;
  return (v) => {
    if (typeof v === 'number') return v;
    const s = str(v).trim();
    const m = re.exec(s);
    if (m === null || (m[2] === undefined && !m[3]) || (m[1] !== '' && m[4] !== '')) {
      throw new RowFail('invalid_number', `${q(v)} is not a number ${label}`, v);
    }
    let digits = m[2] ?? '0';
    if (thousands !== '' && digits.length > 3) digits = digits.split(thousands).join('');
    let frac = m[3] ?? '';
    if (scale !== undefined && scale > 0 && frac === '' && m[3] === undefined) {
      const all = digits.padStart(scale + 1, '0');
      frac = all.slice(all.length - scale);
      digits = all.slice(0, all.length - scale);
    }
    const n = Number(frac === '' ? digits : `${digits}.${frac}`);
    if (!Number.isFinite(n)) throw new RowFail('invalid_number', `${q(v)} is not a finite number`, v);
    // a number keeps 15 significant digits exactly: more would reach the WMS rounded (1e+23)
    const significant = `${digits}${frac}`.replace(/^0+/, '').replace(/0+$/, '').length;
    if (significant > 15)
      throw new RowFail(
        'imprecise_number',
        `${q(v)} has ${significant} significant digits, more than a number keeps exactly (15): it would be sent as ${n}`,
        v,
      );
    return m[1] === '-' || m[4] === '-' ? -n : n;
  };
}

export function compileInteger(thousands: '.' | ',' | '' | ' '): TransformFn {
  const re = thousands === '' ? /^([+-]?)(\d+)$/ : new RegExp(`^([+-]?)(\\d{1,3}(?:${escapeRe(thousands)}\\d{3})+|\\d+)$`);
  return (v) => {
    if (typeof v === 'number') {
      if (Number.isInteger(v)) return v;
      throw new RowFail('invalid_integer', `${q(v)} is not an integer`, v);
    }
    const m = re.exec(str(v).trim());
    if (m === null) throw new RowFail('invalid_integer', `${q(v)} is not an integer`, v);
    const digits = thousands === '' ? (m[2] ?? '') : (m[2] ?? '').split(thousands).join('');
    const n = Number(digits);
    if (!Number.isSafeInteger(n)) throw new RowFail('invalid_integer', `${q(v)} is too large for an integer`, v);
    return m[1] === '-' ? -n : n;
  };
}

// ---------------------------------------------------------------------------------------------
// dates
// ---------------------------------------------------------------------------------------------

type DateToken = 'yyyy' | 'yy' | 'MM' | 'dd' | 'HH' | 'mm' | 'ss';
interface DatePart {
  token: DateToken | null;
  start: number;
  length: number;
  literal?: string;
}

const TOKENS: DateToken[] = ['yyyy', 'yy', 'MM', 'dd', 'HH', 'mm', 'ss'];

/** Splits 'dd/MM/yyyy HH:mm' into fixed-position parts (all tokens have a fixed width). */
export function compileDateFormat(format: string): DatePart[] {
  const parts: DatePart[] = [];
  let i = 0;
  let pos = 0;
  const seen = new Set<string>();
  while (i < format.length) {
    const token = TOKENS.find((t) => format.startsWith(t, i));
    if (token) {
      const key = token === 'yy' ? 'yyyy' : token;
      if (seen.has(key)) throw new TransformSpecError(`date format '${format}' repeats ${token}`, ['format']);
      seen.add(key);
      parts.push({ token, start: pos, length: token.length });
      i += token.length;
      pos += token.length;
    } else {
      parts.push({ token: null, start: pos, length: 1, literal: format[i] ?? '' });
      i++;
      pos++;
    }
  }
  for (const need of ['yyyy', 'MM', 'dd']) {
    if (!seen.has(need)) throw new TransformSpecError(`date format '${format}' needs ${need === 'yyyy' ? 'yyyy or yy' : need}`, ['format']);
  }
  if (seen.has('mm') && !seen.has('HH')) throw new TransformSpecError(`date format '${format}' has minutes (mm) without hours (HH)`, ['format']);
  return parts;
}

function daysInMonth(y: number, m: number): number {
  return m === 2 ? (y % 4 === 0 && (y % 100 !== 0 || y % 400 === 0) ? 29 : 28) : [4, 6, 9, 11].includes(m) ? 30 : 31;
}

const p2 = (n: number): string => (n < 10 ? `0${n}` : String(n));
const p4 = (n: number): string => String(n).padStart(4, '0');

/** A function giving the UTC offset (ms) of an IANA zone at an instant; the zone is checked once. */
export function zoneOffsetFn(timeZone: string): (utcMs: number) => number {
  if (!isValidTimeZone(timeZone)) throw new TransformSpecError(`unknown time zone '${timeZone}' (use an IANA name like America/Sao_Paulo)`, ['timeZone']);
  return (utcMs) => zoneOffsetMs(utcMs, timeZone);
}

/** Converts a wall-clock time in a zone to a UTC instant (DST gaps move forward, overlaps take the first). */
export function wallToUtc(wallMs: number, offsetOf: (utcMs: number) => number): number {
  const o1 = offsetOf(wallMs);
  let utc = wallMs - o1;
  const o2 = offsetOf(utc);
  if (o2 !== o1) utc = wallMs - o2;
  return utc;
}

const ISO_RE = /^(\d{4})-(\d{2})-(\d{2})(?:[T ](\d{2}):(\d{2})(?::(\d{2})(?:\.(\d{1,9}))?)?)?\s*(Z|[+-]\d{2}:?\d{2})?$/;

type EmitDate = (y: number, mo: number, d: number, h: number, mi: number, s: number, hasTime: boolean, offsetMs: number | undefined) => string;

/** Excel's day 0 (serials count days from 1899-12-30, which absorbs Excel's 1900 leap-year bug from 1 March 1900) */
const EXCEL_EPOCH_MS = Date.UTC(1899, 11, 30);

/**
 * `date: {format: excel}`: an Excel date serial (45292 is 01/01/2024; a fraction is the time of day), as a
 * spreadsheet cell without a date format holds it. A wall-clock date-time in the transform's time zone.
 */
function excelSerialDate(emit: EmitDate, output: 'auto' | 'date' | 'datetime'): TransformFn {
  return (v) => {
    const t = str(v).trim().replace(',', '.');
    const n = /^\d{1,6}(\.\d+)?$/.test(t) ? Number(t) : NaN;
    if (!(n >= 1 && n < 2958466)) throw new RowFail('invalid_date', `${q(v)} is not an Excel date serial (days since 1899-12-30, e.g. 45292)`, v);
    const d = new Date(EXCEL_EPOCH_MS + Math.round(n * 86_400) * 1000);
    const hasTime = output === 'datetime' || (output === 'auto' && !Number.isInteger(n));
    return emit(d.getUTCFullYear(), d.getUTCMonth() + 1, d.getUTCDate(), d.getUTCHours(), d.getUTCMinutes(), d.getUTCSeconds(), hasTime, undefined);
  };
}

type CheckDate = (v: unknown, y: number, mo: number, d: number, h: number, mi: number, s: number) => void;

/** The date transform's output: `yyyy-MM-dd` for a date, else the UTC instant of the wall-clock time in the zone (or at the offset read). */
function dateEmitter(output: 'auto' | 'date' | 'datetime', offsetOf: (utcMs: number) => number): EmitDate {
  return (y, mo, d, h, mi, s, hasTime, offsetMs) => {
    const asDate = output === 'date' || (output === 'auto' && !hasTime);
    if (asDate) return `${p4(y)}-${p2(mo)}-${p2(d)}`;
    const wall = Date.UTC(y, mo - 1, d, h, mi, s);
    const utc = offsetMs !== undefined ? wall - offsetMs : wallToUtc(wall, offsetOf);
    return new Date(utc).toISOString();
  };
}

/** Rejects a calendar date or time of day that does not exist (31/02, 25:00). */
function dateChecker(fmtLabel: string): CheckDate {
  return (v, y, mo, d, h, mi, s) => {
    if (mo < 1 || mo > 12 || d < 1 || d > daysInMonth(y, mo) || h > 23 || mi > 59 || s > 59 || y < 1000) {
      throw new RowFail('invalid_date', `${q(v)} is not a valid date (${fmtLabel})`, v);
    }
  };
}

/** `date: {format: iso}`: ISO 8601, with or without a time, `Z` or an offset. */
function isoDate(emit: EmitDate, check: CheckDate, output: 'auto' | 'date' | 'datetime'): TransformFn {
  return (v) => {
    const m = ISO_RE.exec(str(v).trim());
    if (m === null) throw new RowFail('invalid_date', `${q(v)} is not an ISO 8601 date`, v);
    const y = Number(m[1]),
      mo = Number(m[2]),
      d = Number(m[3]);
    const hasTime = m[4] !== undefined;
    const h = Number(m[4] ?? 0),
      mi = Number(m[5] ?? 0),
      s = Number(m[6] ?? 0);
    check(v, y, mo, d, h, mi, s);
    let off: number | undefined;
    const z = m[8];
    if (z === 'Z') off = 0;
    else if (z !== undefined) {
      const sign = z[0] === '-' ? -1 : 1;
      const digits = z.slice(1).replace(':', '');
      off = sign * (Number(digits.slice(0, 2)) * 60 + Number(digits.slice(2, 4))) * 60_000;
    }
    return emit(y, mo, d, h, mi, s, hasTime || output === 'datetime', off);
  };
}

/** A date in a pattern (`dd/MM/yyyy`, `yyyyMMdd`...): fixed positions, digits only where a token is. */
function patternDate(parts: DatePart[], fmtLabel: string, emit: EmitDate, check: CheckDate): TransformFn {
  const total = parts.reduce((n, p) => n + p.length, 0);
  const hasTime = parts.some((p) => p.token === 'HH');
  return (v) => {
    const s0 = str(v).trim();
    if (s0.length !== total) throw new RowFail('invalid_date', `${q(v)} is not a date in the format ${fmtLabel}`, v);
    let y = 0,
      mo = 0,
      d = 0,
      h = 0,
      mi = 0,
      s = 0;
    for (const p of parts) {
      if (p.token === null) {
        if (s0[p.start] !== p.literal) throw new RowFail('invalid_date', `${q(v)} is not a date in the format ${fmtLabel}`, v);
        continue;
      }
      let n = 0;
      for (let i = p.start; i < p.start + p.length; i++) {
        const c = s0.charCodeAt(i) - 48;
        if (c < 0 || c > 9) throw new RowFail('invalid_date', `${q(v)} is not a date in the format ${fmtLabel}`, v);
        n = n * 10 + c;
      }
      switch (p.token) {
        case 'yyyy':
          y = n;
          break;
        case 'yy':
          y = 2000 + n;
          break;
        case 'MM':
          mo = n;
          break;
        case 'dd':
          d = n;
          break;
        case 'HH':
          h = n;
          break;
        case 'mm':
          mi = n;
          break;
        case 'ss':
          s = n;
          break;
      }
    }
    check(v, y, mo, d, h, mi, s);
    return emit(y, mo, d, h, mi, s, hasTime, undefined);
  };
}

/** Runs a spec check, its error's path placed under `basePath`. */
function atPath<T>(basePath: Array<string | number>, fn: () => T, sub: (err: TransformSpecError) => Array<string | number>): T {
  try {
    return fn();
  } catch (err) {
    if (err instanceof TransformSpecError) throw new TransformSpecError(err.message, [...basePath, ...sub(err)]);
    throw err;
  }
}

export function compileDate(
  o: { format: string; timeZone?: string | undefined; output: 'auto' | 'date' | 'datetime' },
  options: TransformCompileOptions,
  basePath: Array<string | number>,
): TransformFn {
  const tz = o.timeZone ?? options.timeZone;
  const offsetOf = atPath(
    basePath,
    () => zoneOffsetFn(tz),
    () => ['timeZone'],
  );
  const emit = dateEmitter(o.output, offsetOf);
  const check = dateChecker(o.format);
  if (o.format === 'excel') return excelSerialDate(emit, o.output);
  if (o.format === 'iso') return isoDate(emit, check, o.output);
  const parts = atPath(
    basePath,
    () => compileDateFormat(o.format),
    (err) => err.path,
  );
  return patternDate(parts, o.format, emit, check);
}

// ---------------------------------------------------------------------------------------------
// booleans, maps
// ---------------------------------------------------------------------------------------------

export function compileBoolean(trueWords: readonly string[], falseWords: readonly string[]): TransformFn {
  const table = new Map<string, boolean>();
  for (const w of falseWords) table.set(w.trim().toLowerCase(), false);
  for (const w of trueWords) table.set(w.trim().toLowerCase(), true);
  const expected = `${trueWords.join('/')} or ${falseWords.join('/')}`;
  return (v) => {
    if (typeof v === 'boolean') return v;
    const b = table.get(str(v).trim().toLowerCase());
    if (b === undefined) throw new RowFail('invalid_boolean', `${q(v)} is not a yes/no value (expected ${expected})`, v);
    return b;
  };
}

function compileMap(o: { values: Record<string, unknown>; default?: unknown; strict: boolean; ignoreCase: boolean }): TransformFn {
  const table = new Map<string, unknown>();
  for (const [k, val] of Object.entries(o.values)) table.set(o.ignoreCase ? k.toLowerCase() : k, val);
  const hasDefault = o.default !== undefined;
  const known = Object.keys(o.values).slice(0, 12).join(', ');
  return (v) => {
    const k = o.ignoreCase ? str(v).toLowerCase() : str(v);
    if (table.has(k)) return table.get(k);
    if (hasDefault) return o.default;
    if (o.strict) throw new RowFail('unknown_value', `${q(v)} is not a known value (known: ${known})`, v);
    return v;
  };
}

// ---------------------------------------------------------------------------------------------
// check digits, JSON
// ---------------------------------------------------------------------------------------------

function cnpjTransform(v: unknown): string {
  const digits = str(v).replace(NON_DIGITS, '');
  if (digits.length !== 14) throw new RowFail('invalid_cnpj', `${q(v)} is not a CNPJ (14 digits expected, found ${digits.length})`, v);
  if (!isValidCnpj(digits)) {
    const expected = cnpjCheckDigits(digits.slice(0, 12));
    throw new RowFail('invalid_cnpj', `${q(v)} is not a valid CNPJ (check digits should be ${expected})`, v);
  }
  return digits;
}

function eanTransform(v: unknown): string {
  const digits = str(v).trim();
  if (!/^\d+$/.test(digits) || ![8, 12, 13, 14].includes(digits.length)) {
    throw new RowFail('invalid_ean', `${q(v)} is not a GTIN/EAN (8, 12, 13 or 14 digits)`, v);
  }
  if (!isValidGtin(digits)) throw new RowFail('invalid_ean', `${q(v)} has a wrong GTIN/EAN check digit`, v);
  return digits;
}

/**
 * NCM (Mercosur fiscal classification): exactly 8 digits; dots, spaces and dashes of a formatted NCM
 * (`1905.90.20`) are dropped. A letter is refused (`19O59020`: a letter O for a zero), so the WMS never
 * sees it.
 */
function ncmTransform(v: unknown): string {
  const raw = str(v).trim();
  const digits = raw.replace(/[.\s-]/g, '');
  if (!/^\d+$/.test(digits)) throw new RowFail('invalid_ncm', `${q(v)} is not an NCM: only digits (8), found ${q(digits.replace(/\d/g, '') || raw)}`, v);
  if (digits.length !== 8) throw new RowFail('invalid_ncm', `${q(v)} is not an NCM: 8 digits expected, found ${digits.length}`, v);
  return digits;
}

function jsonTransform(v: unknown): unknown {
  if (typeof v !== 'string') return v;
  try {
    return JSON.parse(v) as unknown;
  } catch (err) {
    throw new RowFail('invalid_json', `${q(v)} is not valid JSON (${(err as Error).message})`, v);
  }
}
