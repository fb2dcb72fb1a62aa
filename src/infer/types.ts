/**
 * Column typing for `wmsbridge infer`: what the values of one column are, with the share of values
 * that fit and a sentence of evidence. Inspired by frictionless-py's type inference (try every type on
 * every value, keep the most specific type most values fit) with Brazilian ERP types on top: CNPJ/CPF
 * and GTIN check digits, NCM, CEP, UF, S/N flags, dates with their format, decimal comma or dot with
 * thousands separators, implied decimals of fixed-width numbers, codes with leading zeros.
 */
import { isValidCnpj, isValidGtin } from '../map/checks.js';

export type ValueKind =
  'empty' | 'cnpj' | 'cpf' | 'gtin' | 'ncm' | 'cep' | 'uf' | 'date' | 'datetime' | 'flag' | 'integer' | 'decimal' | 'implied' | 'code' | 'text';

export interface ColumnType {
  kind: ValueKind;
  /** share of the non-empty values that fit the kind (0..1) */
  share: number;
  /** date/datetime: the `date` transform format */
  format?: string;
  /** decimal/implied: number transform options */
  decimal?: ',' | '.';
  thousands?: '' | '.' | ',';
  scale?: number;
  /** digits with leading zeros (codes): keep as text */
  leadingZeros?: boolean;
  /** cnpj/cep/ncm written with a mask (12.345.678/0001-95, 12020-000) */
  masked?: boolean;
  /** gtin: the lengths seen (8, 12, 13, 14) */
  lengths?: number[];
  evidence: string;
}

export interface ColumnProfile {
  /** column name (header), field name (fixed-width) or path (XML/JSON) */
  name: string;
  index: number;
  /** values as read, trimmed (empty ones included) */
  values: string[];
  nonEmpty: number;
  emptyShare: number;
  distinct: number;
  /** the distinct values when there are few (<= 12) */
  distinctValues?: string[];
  maxLength: number;
  /** values repeat in contiguous runs (document key candidate) */
  runs: number;
  type: ColumnType;
  /** fixed-width: position (1-based) and length */
  start?: number;
  length?: number;
}

export const UFS = new Set([
  'AC',
  'AL',
  'AP',
  'AM',
  'BA',
  'CE',
  'DF',
  'ES',
  'GO',
  'MA',
  'MT',
  'MS',
  'MG',
  'PA',
  'PB',
  'PR',
  'PE',
  'PI',
  'RJ',
  'RN',
  'RS',
  'RO',
  'RR',
  'SC',
  'SP',
  'SE',
  'TO',
]);

const FLAG_WORDS = new Set(['s', 'n', 'sim', 'nao', 'não', 'y', 'yes', 'no', 't', 'f', 'true', 'false', 'v']);

export function isValidCpf(digits: string): boolean {
  if (!/^\d{11}$/.test(digits) || /^(\d)\1{10}$/.test(digits)) return false;
  const dv = (n: number): number => {
    let sum = 0;
    for (let i = 0; i < n; i++) sum += (digits.charCodeAt(i) - 48) * (n + 1 - i);
    const r = (sum * 10) % 11;
    return r === 10 ? 0 : r;
  };
  return dv(9) === digits.charCodeAt(9) - 48 && dv(10) === digits.charCodeAt(10) - 48;
}

// ---------------------------------------------------------------------------------------------
// dates
// ---------------------------------------------------------------------------------------------

interface DateFormat {
  format: string;
  re: RegExp;
  /** group order: y, M, d, H, m, s (undefined groups absent) */
  order: Array<'y' | 'yy' | 'M' | 'd' | 'H' | 'm' | 's'>;
  time: boolean;
}

function fmt(format: string, re: string, order: DateFormat['order']): DateFormat {
  return { format, re: new RegExp(`^${re}$`), order, time: order.includes('H') };
}

/** Candidate formats, most specific first (a value matching several goes to the first). */
export const DATE_FORMATS: DateFormat[] = [
  fmt('iso', '(\\d{4})-(\\d{2})-(\\d{2})T(\\d{2}):(\\d{2})(?::(\\d{2})(?:\\.\\d+)?)?(?:Z|[+-]\\d{2}:?\\d{2})', ['y', 'M', 'd', 'H', 'm', 's']),
  fmt("yyyy-MM-dd'T'HH:mm:ss", '(\\d{4})-(\\d{2})-(\\d{2})T(\\d{2}):(\\d{2}):(\\d{2})', ['y', 'M', 'd', 'H', 'm', 's']),
  fmt('yyyy-MM-dd HH:mm:ss', '(\\d{4})-(\\d{2})-(\\d{2}) (\\d{2}):(\\d{2}):(\\d{2})', ['y', 'M', 'd', 'H', 'm', 's']),
  fmt('yyyy-MM-dd HH:mm', '(\\d{4})-(\\d{2})-(\\d{2}) (\\d{2}):(\\d{2})', ['y', 'M', 'd', 'H', 'm']),
  fmt('dd/MM/yyyy HH:mm:ss', '(\\d{2})/(\\d{2})/(\\d{4}) (\\d{2}):(\\d{2}):(\\d{2})', ['d', 'M', 'y', 'H', 'm', 's']),
  fmt('dd/MM/yyyy HH:mm', '(\\d{2})/(\\d{2})/(\\d{4}) (\\d{2}):(\\d{2})', ['d', 'M', 'y', 'H', 'm']),
  fmt('yyyy-MM-dd', '(\\d{4})-(\\d{2})-(\\d{2})', ['y', 'M', 'd']),
  fmt('dd/MM/yyyy', '(\\d{2})/(\\d{2})/(\\d{4})', ['d', 'M', 'y']),
  fmt('dd-MM-yyyy', '(\\d{2})-(\\d{2})-(\\d{4})', ['d', 'M', 'y']),
  fmt('dd.MM.yyyy', '(\\d{2})\\.(\\d{2})\\.(\\d{4})', ['d', 'M', 'y']),
  fmt('dd/MM/yy', '(\\d{2})/(\\d{2})/(\\d{2})', ['d', 'M', 'yy']),
  fmt('yyyyMMddHHmmss', '(\\d{4})(\\d{2})(\\d{2})(\\d{2})(\\d{2})(\\d{2})', ['y', 'M', 'd', 'H', 'm', 's']),
  fmt('yyyyMMdd', '(\\d{4})(\\d{2})(\\d{2})', ['y', 'M', 'd']),
  fmt('ddMMyyyy', '(\\d{2})(\\d{2})(\\d{4})', ['d', 'M', 'y']),
];

function validDate(f: DateFormat, v: string): boolean {
  const m = f.re.exec(v);
  if (!m) return false;
  const parts: Record<string, number> = {};
  f.order.forEach((k, i) => {
    if (m[i + 1] !== undefined) parts[k] = Number(m[i + 1]);
  });
  const y = parts['y'] ?? (parts['yy'] !== undefined ? 2000 + parts['yy'] : NaN);
  const M = parts['M'] ?? NaN;
  const d = parts['d'] ?? NaN;
  // realistic ERP years only: an 8-digit code (NCM 10063021, CEP 12020000) is not a date
  if (!(y >= 1900 && y <= 2099) || M < 1 || M > 12 || d < 1) return false;
  const days = new Date(Date.UTC(y, M, 0)).getUTCDate();
  if (d > days) return false;
  if ((parts['H'] ?? 0) > 23 || (parts['m'] ?? 0) > 59 || (parts['s'] ?? 0) > 59) return false;
  return true;
}

// ---------------------------------------------------------------------------------------------
// numbers
// ---------------------------------------------------------------------------------------------

const INT_RE = /^-?\d+-?$/;
const COMMA_DEC_RE = /^-?(\d{1,3}(\.\d{3})+|\d+),\d+-?$/;
const DOT_DEC_RE = /^-?(\d{1,3}(,\d{3})+|\d+)\.\d+-?$/;
const COMMA_THOUSANDS_INT_RE = /^-?\d{1,3}(,\d{3})+$/;
const DOT_THOUSANDS_INT_RE = /^-?\d{1,3}(\.\d{3})+$/;

/** The file-wide decimal separator most numbers agree on (used to settle ambiguous columns). */
export function fileDecimalSeparator(columns: string[][]): { decimal: ',' | '.'; comma: number; dot: number } {
  let comma = 0;
  let dot = 0;
  for (const col of columns) {
    for (const raw of col) {
      const v = raw.trim();
      if (!v || v.length > 20) continue;
      if (/^-?\d[\d.]*,\d+-?$/.test(v) && COMMA_DEC_RE.test(v)) comma++;
      else if (/^-?\d[\d,]*\.\d+-?$/.test(v) && DOT_DEC_RE.test(v)) {
        // 1.234 alone may be thousands: count only values that cannot be a thousands group
        if (!/^-?\d{1,3}\.\d{3}$/.test(v)) dot++;
      }
    }
  }
  return { decimal: dot > comma ? '.' : ',', comma, dot };
}

function pct(x: number): string {
  return `${Math.round(x * 100)}%`;
}

/** Implied decimal places of zero-padded fixed-width numbers: the most trailing zeros most values share. */
function impliedScale(values: string[]): { scale: number; share: number } {
  let best = { scale: 0, share: 1 };
  for (let k = 1; k <= 4; k++) {
    const zeros = '0'.repeat(k);
    const share = values.filter((v) => v.endsWith(zeros)).length / values.length;
    if (share >= 0.6) best = { scale: k, share };
  }
  return best;
}

export interface TypeOptions {
  /** the file's decimal separator (settles 1,010 versus 1.010) */
  fileDecimal?: ',' | '.';
  /** the values come from a fixed-width field (raw, untrimmed): zero-padded numbers may carry implied decimals */
  fixedWidth?: boolean;
  /** name of the column (a few types need it to settle: NCM versus CEP) */
  name?: string;
}

/** What every type detector reads: the trimmed non-empty values, the raw values, the options. */
interface TypeContext {
  /** trimmed, non-empty */
  vals: string[];
  /** as given (untrimmed for fixed-width) */
  values: string[];
  n: number;
  opts: TypeOptions;
  /** the column name, lower case */
  lname: string;
  count: (pred: (v: string) => boolean) => number;
}

const digitsOf = (v: string) => v.replace(/\D/g, '');

/** CNPJ (and CPF in the same column), or CPF alone: valid check digits. */
function typeCnpjCpf({ n, count }: TypeContext): ColumnType | undefined {
  const cnpjShape = (v: string) => /^\d{14}$/.test(v) || /^\d{2}\.\d{3}\.\d{3}\/\d{4}-\d{2}$/.test(v);
  const cnpjOk = count((v) => cnpjShape(v) && isValidCnpj(digitsOf(v)));
  const cpfShape = (v: string) => /^\d{11}$/.test(v) || /^\d{3}\.\d{3}\.\d{3}-\d{2}$/.test(v);
  const cpfOk = count((v) => cpfShape(v) && isValidCpf(digitsOf(v)));
  if ((cnpjOk + cpfOk) / n >= 0.8 && cnpjOk > 0) {
    const masked = count((v) => /[./-]/.test(v)) / n >= 0.5;
    return {
      kind: 'cnpj',
      share: (cnpjOk + cpfOk) / n,
      masked,
      evidence: `${masked ? 'masked ' : ''}CNPJ${cpfOk ? '/CPF' : ''}, valid check digits in ${pct((cnpjOk + cpfOk) / n)} of ${n} values`,
    };
  }
  if (cpfOk / n >= 0.8) return { kind: 'cpf', share: cpfOk / n, evidence: `CPF, valid check digits in ${pct(cpfOk / n)} of ${n} values` };
  return undefined;
}

/** GTIN (EAN-8/13, UPC-12, DUN-14): valid check digit, mostly 12+ digits. */
function typeGtin({ vals, n, count, lname }: TypeContext): ColumnType | undefined {
  const gtinOk = count((v) => isValidGtin(v));
  const long = count((v) => /^\d{12,14}$/.test(v));
  if (!(gtinOk / n >= 0.8 && long / n >= 0.5 && !/ncm|cep|cgc|cnpj/.test(lname))) return undefined;
  const lengths = [...new Set(vals.filter((v) => isValidGtin(v)).map((v) => v.length))].sort();
  const what = lengths.includes(14) && !lengths.includes(13) ? 'DUN-14/GTIN-14' : `GTIN-${lengths.join('/')}`;
  return {
    kind: 'gtin',
    share: gtinOk / n,
    lengths,
    evidence: `${lengths.join('/')} digits, valid ${what} check digit in ${pct(gtinOk / n)} of ${n} values`,
  };
}

/** Dates and date-times: most values must fit one format. */
function typeDate({ n, count }: TypeContext): ColumnType | undefined {
  let bestDate: { f: DateFormat; ok: number } | undefined;
  for (const f of DATE_FORMATS) {
    const ok = count((v) => validDate(f, v));
    if (ok > 0 && (!bestDate || ok > bestDate.ok)) bestDate = { f, ok };
  }
  if (!bestDate || bestDate.ok / n < 0.8) return undefined;
  const timeFmt = bestDate.f.time;
  return {
    kind: timeFmt ? 'datetime' : 'date',
    share: bestDate.ok / n,
    format: bestDate.f.format,
    evidence: `${timeFmt ? 'date-time' : 'date'} '${bestDate.f.format}' in ${pct(bestDate.ok / n)} of ${n} values`,
  };
}

/** NCM / CEP: 8 digits (a name settles which) or their masks. */
function typeNcmCep({ n, count, lname }: TypeContext): ColumnType | undefined {
  const ncmMasked = count((v) => /^\d{4}\.\d{2}\.\d{2}$/.test(v));
  const cepMasked = count((v) => /^\d{5}-\d{3}$/.test(v));
  const eight = count((v) => /^\d{8}$/.test(v));
  if ((ncmMasked + eight) / n >= 0.9 && (ncmMasked > 0 || /ncm|posipi|pos_ipi|classif/.test(lname))) {
    return {
      kind: 'ncm',
      share: (ncmMasked + eight) / n,
      masked: ncmMasked > 0,
      evidence: `NCM: 8 digits${ncmMasked ? ' (masked 9999.99.99)' : ''} in ${pct((ncmMasked + eight) / n)} of ${n} values`,
    };
  }
  if ((cepMasked + eight) / n >= 0.9 && (cepMasked > 0 || /cep/.test(lname))) {
    return {
      kind: 'cep',
      share: (cepMasked + eight) / n,
      masked: cepMasked > 0,
      evidence: `CEP: 8 digits${cepMasked ? ' (masked 99999-999)' : ''} in ${pct((cepMasked + eight) / n)} of ${n} values`,
    };
  }
  return undefined;
}

/** Brazilian state codes. */
function typeUf({ n, count }: TypeContext): ColumnType | undefined {
  const uf = count((v) => UFS.has(v.toUpperCase()));
  if (uf / n >= 0.9 && count((v) => v.length === 2) === n)
    return { kind: 'uf', share: uf / n, evidence: `Brazilian state (UF) in ${pct(uf / n)} of ${n} values` };
  return undefined;
}

/** S/N, Sim/Não, Y/N, T/F, true/false: two values at most. */
function typeFlag({ vals, n, count }: TypeContext): ColumnType | undefined {
  const flags = count((v) => FLAG_WORDS.has(v.toLowerCase()));
  const flagDistinct = new Set(vals.map((v) => v.toLowerCase())).size;
  if (flags === n && flagDistinct <= 2 && !count((v) => /^\d$/.test(v))) {
    return { kind: 'flag', share: 1, evidence: `yes/no flag (${[...new Set(vals)].slice(0, 4).join('/')})` };
  }
  return undefined;
}

/** Fixed-width zero-padded digits of one length >= 9: numbers with implied decimals. */
function typeImplied({ values, n, count, opts }: TypeContext): ColumnType | undefined {
  if (!opts.fixedWidth || count((v) => INT_RE.test(v)) !== n) return undefined;
  // trailing blanks are the gap before the next field; leading zeros are the padding that matters
  const rawDigits = values.map((v) => v.trimEnd()).filter((v) => /^\d+$/.test(v));
  const lens = new Set(rawDigits.map((v) => v.length));
  const padded = rawDigits.filter((v) => /^00/.test(v)).length;
  if (!(lens.size === 1 && rawDigits.length === n && (rawDigits[0]?.length ?? 0) >= 9 && padded / n >= 0.8)) return undefined;
  const { scale, share } = impliedScale(rawDigits);
  return {
    kind: 'implied',
    share: 1,
    decimal: ',',
    thousands: '',
    scale,
    evidence:
      `${rawDigits[0]?.length}-digit zero-padded numbers; ` +
      (scale > 0
        ? `the last ${scale} digits are zero in ${pct(share)} of ${n} values: read as ${scale} implied decimals`
        : 'no trailing zeros shared: read without implied decimals'),
  };
}

/** Digits only: a code when leading zeros are common (kept as text), else an integer. */
function typeInteger({ vals, n, count }: TypeContext): ColumnType | undefined {
  if (count((v) => INT_RE.test(v)) !== n) return undefined;
  const lead = count((v) => /^0\d/.test(v));
  if (lead / n >= 0.2) {
    const lens = [...new Set(vals.map((v) => v.length))];
    return {
      kind: 'code',
      share: 1,
      leadingZeros: true,
      evidence: `digits with leading zeros in ${pct(lead / n)} of ${n} values (${lens.length === 1 ? `${lens[0]} characters, ` : ''}kept as text)`,
    };
  }
  return { kind: 'integer', share: 1, evidence: `integers in all ${n} values` };
}

/** Decimal numbers: which separator, settled by the file's majority when a column fits both. */
function typeDecimal({ n, count, opts }: TypeContext): ColumnType | undefined {
  const commaDec = count((v) => COMMA_DEC_RE.test(v));
  const dotDec = count((v) => DOT_DEC_RE.test(v));
  const commaThousandsInt = count((v) => COMMA_THOUSANDS_INT_RE.test(v));
  const dotThousandsInt = count((v) => DOT_THOUSANDS_INT_RE.test(v));
  const numeric = (pred: (v: string) => boolean) => count((v) => INT_RE.test(v) || pred(v));
  const commaAll = numeric((v) => COMMA_DEC_RE.test(v) || DOT_THOUSANDS_INT_RE.test(v));
  const dotAll = numeric((v) => DOT_DEC_RE.test(v) || COMMA_THOUSANDS_INT_RE.test(v));
  if (commaAll / n < 0.95 && dotAll / n < 0.95) return undefined;
  // fixed-width '01.02', '02.01': a masked code with a leading zero on most lines, not a number
  if (opts.fixedWidth && count((v) => /^0\d[.,]\d+$/.test(v)) / n >= 0.8) return undefined;
  let decimal: ',' | '.';
  if (commaAll === dotAll) decimal = opts.fileDecimal ?? ',';
  else if (commaAll / n >= 0.95 && dotAll / n >= 0.95) decimal = commaDec >= dotDec ? ',' : '.';
  else decimal = commaAll > dotAll ? ',' : '.';
  // ambiguous columns (every value like 1.234 or 1,234) follow the file
  if (commaDec + dotDec === commaThousandsInt + dotThousandsInt && opts.fileDecimal) decimal = opts.fileDecimal;
  const thousandsSeen = decimal === ',' ? count((v) => /\d\.\d{3}(,|$)/.test(v)) : count((v) => /\d,\d{3}(\.|$)/.test(v));
  return {
    kind: 'decimal',
    share: (decimal === ',' ? commaAll : dotAll) / n,
    decimal,
    thousands: decimal === ',' ? '.' : thousandsSeen ? ',' : '',
    evidence: `decimal numbers with '${decimal}' as decimal separator${thousandsSeen ? ` and '${decimal === ',' ? '.' : ','}' thousands` : ''} in ${pct((decimal === ',' ? commaAll : dotAll) / n)} of ${n} values`,
  };
}

/** Codes: short tokens without spaces (CD-SP01, T001, MERC). */
function typeToken({ vals, n, count }: TypeContext): ColumnType | undefined {
  const tokens = count((v) => /^[A-Za-z0-9][A-Za-z0-9._\-/]*$/.test(v) && v.length <= 20);
  if (tokens / n >= 0.9 && count((v) => /[A-Za-z]/.test(v)) > 0) {
    return {
      kind: 'code',
      share: tokens / n,
      evidence: `codes without spaces (${[...new Set(vals)].slice(0, 3).join(', ')}${new Set(vals).size > 3 ? '...' : ''})`,
    };
  }
  return undefined;
}

/** The detectors in the order they are tried: the first that fits wins. */
const TYPE_DETECTORS: Array<(ctx: TypeContext) => ColumnType | undefined> = [
  typeCnpjCpf,
  typeGtin,
  typeDate,
  typeNcmCep,
  typeUf,
  typeFlag,
  typeImplied,
  typeInteger,
  typeDecimal,
  typeToken,
];

/** Types one column from its values (trimmed values; `raw` untrimmed for fixed-width). */
export function typeColumn(values: string[], opts: TypeOptions = {}): ColumnType {
  const vals = values.map((v) => v.trim()).filter((v) => v !== '');
  const n = vals.length;
  if (n === 0) return { kind: 'empty', share: 1, evidence: 'always empty in the sample' };
  const ctx: TypeContext = { vals, values, n, opts, lname: (opts.name ?? '').toLowerCase(), count: (pred) => vals.filter(pred).length };
  for (const detect of TYPE_DETECTORS) {
    const t = detect(ctx);
    if (t) return t;
  }
  return { kind: 'text', share: 1, evidence: `text, up to ${Math.max(...vals.map((v) => v.length))} characters` };
}

/** Profiles a column: empties, distinct values, contiguous runs, type. */
export function profileColumn(name: string, index: number, raw: string[], opts: TypeOptions = {}): ColumnProfile {
  const values = raw.map((v) => v.trim());
  const nonEmpty = values.filter((v) => v !== '').length;
  const distinctSet = new Set(values.filter((v) => v !== ''));
  let runs = 0;
  for (let i = 0; i < values.length; i++) if (i === 0 || values[i] !== values[i - 1]) runs++;
  const p: ColumnProfile = {
    name,
    index,
    values,
    nonEmpty,
    emptyShare: values.length ? 1 - nonEmpty / values.length : 1,
    distinct: distinctSet.size,
    maxLength: Math.max(0, ...values.map((v) => v.length)),
    runs,
    type: typeColumn(opts.fixedWidth ? raw : values, { ...opts, name }),
  };
  if (distinctSet.size <= 12) p.distinctValues = [...distinctSet];
  return p;
}
