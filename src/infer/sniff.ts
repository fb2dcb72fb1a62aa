/**
 * Sniffing a sample file for `wmsbridge infer`: encoding, format (delimited, fixed-width, XML, JSON,
 * JSON Lines), and the format's options.
 *
 * Delimited dialects are chosen the CleverCSV way (van den Burg et al., 2018): every candidate dialect
 * (delimiter x quote) parses the sample; its *pattern score* rewards rows that agree on their number
 * of cells (sum over row shapes of N_k (L_k - 1) / L_k, divided by the number of shapes), its *type
 * score* is the share of cells that look like a known type (number, date, code, word...); the dialect
 * with the highest product wins. Fixed-width columns come from the positions that are blank on every
 * line, split further where digits turn into letters or a zero-padded number starts; a leading
 * record tag (0/1/9, H/D/T, HDR/DET/TRL) makes record types.
 */
import { open } from 'node:fs/promises';
import iconv from 'iconv-lite';
import { XMLParser } from 'fast-xml-parser';
import { InputError, errorMessage } from '../shared/errors.js';
import { openParser } from '../parse/index.js';
import type { ParseOptionsInput } from '../parse/options.js';
import type { RawRow } from '../parse/types.js';
import type { Encoding } from '../parse/options.js';

export type SniffedFormat = 'delimited' | 'fixed-width' | 'xml' | 'json' | 'jsonl' | 'xlsx';

/** The record types of a multi-record delimited file by role (values of the type cell). */
export interface MultiRecordRoles {
  header?: string;
  item?: string;
  lot?: string;
  trailer?: string;
  /** the type with the most lines: the data of a flat target */
  main: string;
}

export interface EncodingGuess {
  encoding: Encoding;
  bom: boolean;
  /** only ASCII bytes: every supported encoding reads the file alike */
  ascii: boolean;
  evidence: string;
}

export interface DelimitedDialect {
  delimiter: ';' | ',' | '|' | '\t';
  quote: '"' | false;
  header: boolean;
  score: number;
  /** the number of cells most rows have */
  columns: number;
  evidence: string;
  /** the runner-up dialect and its score, for the evidence */
  runnerUp?: string;
}

export interface FixedFieldGuess {
  name: string;
  start: number;
  length: number;
}
export interface FixedRecordGuess {
  type: string;
  /** the tag value at position 1 (length tagLength); undefined: a single record type */
  tag?: string;
  fields: FixedFieldGuess[];
  lines: number;
}
export interface FixedLayoutGuess {
  tagLength: number;
  records: FixedRecordGuess[];
  /** a first line of column titles aligned with the fields (skipped: it is not data) */
  titleLine: boolean;
  lineLength: number;
  /** trailer record count check, when a trailer holds the number of lines */
  trailer?: { type: string; countField: string; counts: 'all' | 'detail' };
  evidence: string;
}

export interface Sniffed {
  path: string;
  bytes: number;
  encoding: EncodingGuess;
  format: SniffedFormat;
  formatEvidence: string;
  delimited?: DelimitedDialect;
  fixed?: FixedLayoutGuess;
  xml?: { itemPath: string; nfe: boolean; evidence: string };
  json?: { itemPath?: string; evidence: string };
  /** decoded text of the sample (at most SAMPLE_BYTES) */
  text: string;
  /** leading comment lines (# or //) the parser skips (skipLines) */
  skipLines?: number;
  /** a delimited file whose first cell is a record type with its own number of cells (header/item lines) */
  multiRecord?: {
    types: Array<{ value: string; rows: number; cells: number }>;
    evidence: string;
    /** what each type is, from the order of the lines: a header opens a document, items follow it, lots follow an item, a trailer ends the file */
    roles?: MultiRecordRoles;
    /** a trailer cell that counts the lines */
    trailer?: { type: string; cell: number; counts: 'all' | string[]; offset?: number };
  };
  /** the sample is an Excel workbook: the sheet read and the row of its column names */
  xlsx?: { sheet: string; headerRow: number; evidence: string };
}

const SAMPLE_BYTES = 1024 * 1024;

/** A zip archive's first bytes: an .xlsx workbook is one */
const ZIP_MAGIC = Buffer.from([0x50, 0x4b, 0x03, 0x04]);

/** The rows of a sheet read to find its header row. */
const XLSX_SNIFF_ROWS = 40;

/** The first rows of one sheet (by position), or undefined when the workbook has no such sheet. */
async function sheetRows(path: string, sheet: number): Promise<RawRow[] | undefined> {
  const rows: RawRow[] = [];
  try {
    for await (const item of openParser(path, { format: 'xlsx', header: false, sheet } as ParseOptionsInput)) {
      if (item.kind === 'row') rows.push(item.row);
      if (rows.length >= XLSX_SNIFF_ROWS) break;
    }
  } catch (err) {
    if (sheet > 1) return undefined;
    throw new InputError(
      `${path} starts like a zip archive but is not a readable .xlsx workbook (${errorMessage(err)}); infer reads .xlsx, text, XML and JSON`,
    );
  }
  return rows;
}

/** A sheet's header row: the first row of distinct non-numeric names with a data row below that fills at least half as many cells. */
function sheetHeader(rows: RawRow[]): number {
  const filled = (r: RawRow) => Object.values(r.fields).filter((v) => String(v ?? '').trim() !== '');
  const isName = (v: string) => v.trim() !== '' && !/^[-+]?[\d.,]+$/.test(v.trim()) && !/^\d{2}\/\d{2}\/\d{4}/.test(v.trim());
  return rows.findIndex((r, i) => {
    const cells = filled(r).map(String);
    const next = rows[i + 1];
    return cells.length >= 2 && cells.every(isName) && new Set(cells).size === cells.length && !!next && filled(next).length >= Math.ceil(cells.length / 2);
  });
}

/**
 * An Excel workbook, read through the pipeline's own XLSX input (exceljs, streamed): the first sheet (of
 * the first six) with a table, and its header row, the first row of distinct names with data below it
 * (banner rows above it are skipped; a tab of instructions has no such row).
 */
async function sniffXlsx(path: string, size: number): Promise<Sniffed> {
  let found: { rows: RawRow[]; header: number; index: number } | undefined;
  let first: RawRow[] | undefined;
  for (let index = 1; index <= 6 && !found; index++) {
    const rows = await sheetRows(path, index);
    if (!rows) break;
    first ??= rows;
    const header = sheetHeader(rows);
    if (header >= 0) found = { rows, header, index };
  }
  if (!first?.length) throw new InputError(`${path}: the first sheet of the workbook has no rows`);
  const rows = found?.rows ?? first;
  const sheet = rows[0]!.sheet?.name ?? String(found?.index ?? 1);
  const headerRow = rows[found?.header ?? 0]!.line;
  const tab = (found?.index ?? 1) === 1 ? 'the first tab' : `tab ${found!.index}: the tabs before it hold no table`;
  const evidence =
    `Excel workbook (zip, .xlsx): sheet '${sheet}' (${tab}), column names on row ${headerRow}` +
    `${headerRow > 1 ? ' (rows above it skipped: titles or an export banner)' : ''}${found ? '' : ' (no row of distinct names found: the first row is taken)'}; ` +
    'cells read typed (numbers as their digits with a decimal comma, dates dd/MM/yyyy)';
  return {
    path,
    bytes: size,
    encoding: { encoding: 'utf-8', bom: false, ascii: true, evidence: 'a workbook: its XML is UTF-8' },
    format: 'xlsx',
    formatEvidence: evidence,
    xlsx: { sheet, headerRow, evidence },
    text: '',
  };
}

// ---------------------------------------------------------------------------------------------
// encoding
// ---------------------------------------------------------------------------------------------

/** Strict UTF-8 validation (overlongs and surrogates refused); `truncatedOk` accepts a cut final sequence. */
function isUtf8(b: Buffer, truncatedOk: boolean): boolean {
  let i = 0;
  while (i < b.length) {
    const c = b[i]!;
    if (c < 0x80) {
      i++;
      continue;
    }
    let n: number;
    let min: number;
    if (c >= 0xc2 && c <= 0xdf) {
      n = 1;
      min = 0x80;
    } else if (c >= 0xe0 && c <= 0xef) {
      n = 2;
      min = 0x800;
    } else if (c >= 0xf0 && c <= 0xf4) {
      n = 3;
      min = 0x10000;
    } else return false;
    let cp = c & (0x3f >> n);
    for (let k = 1; k <= n; k++) {
      const d = b[i + k];
      if (d === undefined) return truncatedOk;
      if ((d & 0xc0) !== 0x80) return false;
      cp = (cp << 6) | (d & 0x3f);
    }
    if (cp < min || (cp >= 0xd800 && cp <= 0xdfff) || cp > 0x10ffff) return false;
    i += n + 1;
  }
  return true;
}

/** Encoding of a byte sample: BOMs, UTF-16, strict UTF-8, else Windows-1252 versus ISO-8859-1 from 0x80-0x9F. */
export function guessEncoding(b: Buffer, truncated = false): EncodingGuess {
  // Excel's "Unicode text": UTF-16 with its byte order mark (the parsers follow the BOM)
  if (b.length >= 2 && b[0] === 0xff && b[1] === 0xfe) return { encoding: 'utf-16le', bom: true, ascii: false, evidence: 'UTF-16LE byte order mark (FF FE)' };
  if (b.length >= 2 && b[0] === 0xfe && b[1] === 0xff) return { encoding: 'utf-16be', bom: true, ascii: false, evidence: 'UTF-16BE byte order mark (FE FF)' };
  const head = b.subarray(0, Math.min(b.length, 8192));
  let nulEven = 0;
  let nulOdd = 0;
  for (let i = 0; i < head.length; i++) {
    if (head[i] !== 0) continue;
    if (i % 2) nulOdd++;
    else nulEven++;
  }
  if (nulEven + nulOdd > 0) {
    if (head.length > 16 && (nulOdd > head.length / 4 || nulEven > head.length / 4)) {
      throw new InputError(
        'the sample looks like UTF-16 without a byte order mark (every other byte is NUL); convert it to UTF-8 first (iconv -f UTF-16LE -t UTF-8)',
      );
    }
    throw new InputError(`the sample looks binary (NUL byte in the first 8 KB); infer reads delimited or fixed-width text, XML and JSON`);
  }
  const bom = b.length >= 3 && b[0] === 0xef && b[1] === 0xbb && b[2] === 0xbf;
  let high = 0;
  let c1 = 0;
  let undefinedCp1252 = 0;
  for (const x of b) {
    if (x >= 0x80) high++;
    if (x >= 0x80 && x <= 0x9f) {
      c1++;
      if (x === 0x81 || x === 0x8d || x === 0x8f || x === 0x90 || x === 0x9d) undefinedCp1252++;
    }
  }
  if (bom) return { encoding: 'utf-8', bom: true, ascii: false, evidence: 'UTF-8 byte order mark (EF BB BF)' };
  if (high === 0) return { encoding: 'utf-8', bom: false, ascii: true, evidence: 'only ASCII bytes (every supported encoding reads it alike)' };
  if (isUtf8(b, truncated)) return { encoding: 'utf-8', bom: false, ascii: false, evidence: `${high} bytes above 0x7F, all in valid UTF-8 sequences` };
  if (c1 > 0 && undefinedCp1252 === 0) {
    return {
      encoding: 'windows-1252',
      bom: false,
      ascii: false,
      evidence: `not UTF-8; ${c1} byte(s) in 0x80-0x9F, printable in Windows-1252 (– “ ” €...), control codes in ISO-8859-1`,
    };
  }
  if (undefinedCp1252 > 0) {
    return {
      encoding: 'iso-8859-1',
      bom: false,
      ascii: false,
      evidence: `not UTF-8; byte(s) 0x81/0x8D/0x8F/0x90/0x9D are undefined in Windows-1252: ISO-8859-1`,
    };
  }
  return {
    encoding: 'windows-1252',
    bom: false,
    ascii: false,
    evidence: `not UTF-8 (${high} Latin-1 accented bytes); no byte in 0x80-0x9F, so Windows-1252 and ISO-8859-1 cannot be told apart from this sample: both read it alike; Windows-1252 chosen, the superset (it also reads – “ ” € if a later file has them)`,
  };
}

// ---------------------------------------------------------------------------------------------
// delimited: CleverCSV-style data consistency
// ---------------------------------------------------------------------------------------------

const DELIMITERS = [';', ',', '|', '\t'] as const;

/** Splits records with one dialect (quoted line breaks joined); enough for scoring and header detection. */
export function splitRecords(text: string, delimiter: string, quote: string | false, maxRecords = 400): string[][] {
  const out: string[][] = [];
  let row: string[] = [];
  let cell = '';
  let inQuote = false;
  let atStart = true;
  let wasQuoted = false;
  for (let i = 0; i < text.length && out.length < maxRecords; i++) {
    const ch = text[i]!;
    if (inQuote) {
      if (ch === quote) {
        if (text[i + 1] === quote) {
          cell += ch;
          i++;
        } else inQuote = false;
      } else cell += ch;
      continue;
    }
    if (quote !== false && ch === quote && atStart) {
      inQuote = true;
      atStart = false;
      wasQuoted = true;
      continue;
    }
    if (ch === delimiter) {
      row.push(cell);
      cell = '';
      atStart = true;
      wasQuoted = false;
      continue;
    }
    if (ch === '\r' || ch === '\n') {
      if (ch === '\r' && text[i + 1] === '\n') i++;
      row.push(cell);
      if (!(row.length === 1 && row[0] === '' && !wasQuoted)) out.push(row);
      row = [];
      cell = '';
      atStart = true;
      wasQuoted = false;
      continue;
    }
    cell += ch;
    atStart = false;
  }
  if ((cell !== '' || row.length > 0) && out.length < maxRecords) {
    row.push(cell);
    out.push(row);
  }
  return out;
}

/** A cell that looks like a known type (CleverCSV's type score; text words count, as its alphanumeric type). */
function knownCell(v: string): boolean {
  const t = v.trim();
  if (t === '') return true;
  if (/^-?[\d.,]+-?$/.test(t) && /\d/.test(t)) return true; // numbers (any separators), codes with leading zeros
  if (/^\d{1,4}[/.-]\d{1,2}[/.-]\d{1,4}( \d{1,2}:\d{2}(:\d{2})?)?$/.test(t)) return true; // dates
  if (/^\d{4}-\d{2}-\d{2}T[\d:.+-Z]+$/.test(t)) return true;
  if (/^[\p{L}\p{N}][\p{L}\p{N} ._\-/()&º°ª'’+:#,]*$/u.test(t) && !/[;|\t"]/.test(t)) return true; // words, names, codes
  if (/^[^@\s]+@[^@\s]+\.[^@\s]+$/.test(t)) return true; // e-mail
  return false;
}

export function dialectScore(text: string, delimiter: string, quote: string | false): { score: number; pattern: number; type: number; columns: number } {
  const rows = splitRecords(text, delimiter, quote, 200);
  if (rows.length === 0) return { score: 0, pattern: 0, type: 0, columns: 0 };
  const shapes = new Map<number, number>();
  for (const r of rows) shapes.set(r.length, (shapes.get(r.length) ?? 0) + 1);
  let p = 0;
  for (const [len, count] of shapes) p += (count * (len - 1)) / len;
  p /= shapes.size;
  // CleverCSV: a dialect giving one cell per row still gets a tiny pattern score, so ties are broken by types
  if (p === 0) p = 1e-3 / rows.length;
  let cells = 0;
  let known = 0;
  for (const r of rows) {
    for (const c of r) {
      cells++;
      if (knownCell(c)) known++;
    }
  }
  const type = cells ? known / cells : 0;
  let columns = 0;
  let best = -1;
  for (const [len, count] of shapes) {
    if (count > best) {
      best = count;
      columns = len;
    }
  }
  return { score: p * type, pattern: p, type, columns };
}

function looksLikeHeader(rows: string[][]): boolean {
  if (rows.length < 2) return rows.length === 1 && rows[0]!.every((c) => /^[A-Za-z_][\w .-]*$/.test(c.trim()));
  const first = rows[0]!.map((c) => c.trim());
  if (first.some((c) => c === '')) return false;
  if (new Set(first).size !== first.length) return false;
  const numericOrDate = (v: string) => /^-?[\d.,/: -]+$/.test(v) && /\d/.test(v);
  if (first.some(numericOrDate)) return false;
  const rest = rows.slice(1, 60);
  // a column whose data are numbers/dates while its first cell is a word: a header
  for (let c = 0; c < first.length; c++) {
    const col = rest.map((r) => (r[c] ?? '').trim()).filter((v) => v !== '');
    if (col.length && col.filter(numericOrDate).length / col.length >= 0.8) return true;
  }
  // identifier-like names that never appear again in their column
  const ident = first.every((c) => /^[\p{L}_][\p{L}\p{N}_ .-]*$/u.test(c) && c.length <= 40);
  const repeated = first.some((c, i) => rest.some((r) => (r[i] ?? '').trim() === c));
  return ident && !repeated;
}

export function sniffDelimited(text: string): DelimitedDialect {
  const scored: Array<{ delimiter: (typeof DELIMITERS)[number]; quote: '"' | false; score: number; pattern: number; type: number; columns: number }> = [];
  for (const d of DELIMITERS) {
    for (const q of ['"', false] as const) scored.push({ delimiter: d, quote: q, ...dialectScore(text, d, q) });
  }
  // highest score; ties: more columns, then quoting on (the parser's default), then ; , | TAB order
  scored.sort((a, b) => b.score - a.score || b.columns - a.columns || (a.quote === b.quote ? 0 : a.quote ? -1 : 1));
  const best = scored[0]!;
  const second = scored.find((s) => s.delimiter !== best.delimiter);
  const rows = splitRecords(text, best.delimiter, best.quote, 100);
  const header = looksLikeHeader(rows);
  const show = (d: string) => (d === '\t' ? 'TAB' : `'${d}'`);
  const usesQuotes = best.quote !== false && /(^|[;,|\t])"/m.test(text);
  const dialect: DelimitedDialect = {
    delimiter: best.delimiter,
    quote: usesQuotes || best.quote === false ? best.quote : '"',
    header,
    score: best.score,
    columns: best.columns,
    evidence:
      `delimiter ${show(best.delimiter)}: ${best.columns} columns, data consistency ${best.score.toFixed(2)} ` +
      `(row-shape ${best.pattern.toFixed(2)} x typed cells ${(best.type * 100).toFixed(0)}%)` +
      (second ? `; next best ${show(second.delimiter)} ${second.score.toFixed(2)}` : '') +
      `; ${header ? 'first line is a header' : 'no header line'}`,
  };
  if (second) dialect.runnerUp = `${show(second.delimiter)} ${second.score.toFixed(2)}`;
  // a file that never opens a field with a quote but has quotes inside fields (1/2" PVC) never quotes:
  // quote: false, else the parser reports every such line as bad_quote
  const esc = best.delimiter === '|' ? '\\|' : best.delimiter === '\t' ? '\\t' : best.delimiter;
  const opensQuoted = new RegExp(`(^|${esc})"`, 'm').test(text);
  if (!opensQuoted && text.includes('"')) {
    dialect.quote = false;
    dialect.evidence += '; quotes only inside fields: the file never quotes (quote: false)';
  }
  return dialect;
}

// ---------------------------------------------------------------------------------------------
// fixed-width
// ---------------------------------------------------------------------------------------------

function isDigit(c: string | undefined): boolean {
  return c !== undefined && c >= '0' && c <= '9';
}
function isLetter(c: string | undefined): boolean {
  return c !== undefined && /\p{L}/u.test(c);
}

/** Field boundaries of lines of one record type: blank columns, digit->letter turns, zero-padded starts. */
export function fixedBoundaries(lines: string[], from: number, width: number): number[] {
  const starts: number[] = [];
  const blank = (p: number) => lines.every((l) => (l[p] ?? ' ') === ' ');
  const constant = (p: number) => lines.every((l) => l[p] === lines[0]![p]);
  let inField = false;
  for (let p = from; p < width; p++) {
    if (blank(p)) {
      inField = false;
      continue;
    }
    if (!inField) {
      starts.push(p);
      inField = true;
      continue;
    }
    const prevDigit = lines.every((l) => isDigit(l[p - 1]));
    // digits followed by letters (or by blanks on the lines where an optional text field is empty)
    const curLetter = lines.every((l) => isLetter(l[p]) || (l[p] ?? ' ') === ' ') && lines.some((l) => isLetter(l[p]));
    if (prevDigit && curLetter) {
      starts.push(p);
      continue;
    }
    // a number shorter on some lines (a CPF left-aligned in a CNPJ field) followed by text on every line
    const prevDigitOrBlank = lines.every((l) => isDigit(l[p - 1]) || (l[p - 1] ?? ' ') === ' ') && lines.some((l) => isDigit(l[p - 1]));
    if (prevDigitOrBlank && lines.every((l) => isLetter(l[p]))) {
      starts.push(p);
      continue;
    }
    // "...01" + "001..." : a constant non-zero digit followed by constant zeros starts a zero-padded field
    if (prevDigit && constant(p - 1) && lines[0]![p - 1] !== '0' && constant(p) && constant(p + 1) && lines[0]![p] === '0' && lines[0]![p + 1] === '0') {
      starts.push(p);
      continue;
    }
    // a sign column (+/- on every line) is a field of its own, after a number and before what follows
    // (a '+' on some line: a constant '-' is a mask, CD-SP01, 12-3)
    const sign = (q: number) =>
      lines.every((l) => l[q] === '+' || l[q] === '-') &&
      lines.some((l) => l[q] === '+') &&
      (lines.every((l) => isDigit(l[q - 1])) || lines.every((l) => isDigit(l[q + 1])));
    if (sign(p) || sign(p - 1)) {
      starts.push(p);
      continue;
    }
    // "...41780" + "0000007178134": a varying digit followed by 4+ zeros on every line, then digits, starts a zero-padded number
    if (
      prevDigit &&
      lines.some((l) => l[p - 1] !== '0') &&
      [0, 1, 2, 3].every((k) => lines.every((l) => l[p + k] === '0')) &&
      lines.every((l) => isDigit(l[p + 4]))
    ) {
      starts.push(p);
      continue;
    }
    // a text field left-justified next to a field padded on the left with spaces is separated by the blank above
  }
  const extra = datesInDigitRuns(lines, from, width);
  const all = [
    ...new Set([
      ...starts,
      ...extra,
      ...maskedCodeStarts(
        lines,
        [...new Set([...starts, ...extra])].sort((a, b) => a - b),
        width,
      ),
    ]),
  ].sort((a, b) => a - b);
  // text with blanks inside: a short segment, empty on most lines, one blank column after a text field,
  // is the end of the longer values of that field ("... ESPERANÇA LTDA"), not a field of its own
  const seg = (i: number) => lines.map((l) => l.slice(all[i], i + 1 < all.length ? all[i + 1] : width));
  for (let i = 1; i < all.length; i++) {
    const cur = seg(i);
    const prev = seg(i - 1);
    const emptyShare = cur.filter((v) => v.trim() === '').length / lines.length;
    const prevText = prev.some((v) => /\p{L}{2,}/u.test(v) && / \S/.test(v.trim()));
    const prevEnd = Math.max(...prev.map((v) => v.trimEnd().length)) + all[i - 1]!;
    if (emptyShare >= 0.5 && prevText && all[i]! - prevEnd === 1 && cur.every((v) => !/\d/.test(v))) {
      all.splice(i, 1);
      i--;
    }
  }
  return all;
}

/**
 * A date inside a run of digits (order 012301 + date 20241105): 8 positions that are a date on every line
 * (yyyyMMdd tried at every offset first: 0123|01202411 would read as the ddMMyyyy 23/01/2024).
 */
function datesInDigitRuns(lines: string[], from: number, width: number): number[] {
  const allDigits = (p: number) => lines.every((l) => isDigit(l[p]));
  const extra: number[] = [];
  for (let p = from; p < width; p++) {
    if (!allDigits(p)) continue;
    let e = p;
    while (e < width && allDigits(e)) e++;
    if (e - p > 8) {
      for (const ymd of [true, false]) {
        let found = -1;
        for (let o = p; o + 8 <= e && found < 0; o++) if (lines.every((l) => isCompactDate(l.slice(o, o + 8), ymd))) found = o;
        if (found >= 0) {
          if (found > p) extra.push(found);
          if (found + 8 < e) extra.push(found + 8);
          break;
        }
      }
    }
    p = e;
  }
  return extra;
}

/**
 * A masked code (`02.01`) right after a longer run of digits (a zero-padded product `0000041780`): the
 * punctuation is constant on every line, and the mask's left part is as long as its right part, so the
 * code starts that many digits before the punctuation.
 */
function maskedCodeStarts(lines: string[], starts: number[], width: number): number[] {
  const out: number[] = [];
  const digits = (q: number) => lines.every((l) => isDigit(l[q]));
  for (let p = 1; p < width; p++) {
    const c = lines[0]![p];
    if (c === undefined || !'./-'.includes(c) || !lines.every((l) => l[p] === c)) continue;
    const a = [...starts].reverse().find((x) => x <= p);
    if (a === undefined) continue;
    let r = 0;
    while (p + 1 + r < width && digits(p + 1 + r) && !starts.includes(p + 1 + r)) r++;
    let left = 0;
    while (p - 1 - left >= a && digits(p - 1 - left)) left++;
    if (r >= 1 && r <= 4 && left === p - a && left > r + 2) out.push(p - r);
  }
  return out;
}

/** yyyyMMdd (ymd) or ddMMyyyy, years 1990-2099: a real calendar date. */
function isCompactDate(v: string, ymd: boolean): boolean {
  const ok = (y: number, m: number, d: number) => y >= 1990 && y <= 2099 && m >= 1 && m <= 12 && d >= 1 && d <= new Date(Date.UTC(y, m, 0)).getUTCDate();
  if (!/^\d{8}$/.test(v)) return false;
  return ymd ? ok(+v.slice(0, 4), +v.slice(4, 6), +v.slice(6, 8)) : ok(+v.slice(4, 8), +v.slice(2, 4), +v.slice(0, 2));
}

function titleTokens(line: string): Array<{ name: string; start: number }> | undefined {
  const toks: Array<{ name: string; start: number }> = [];
  const re = /\S+/g;
  let m: RegExpExecArray | null;
  while ((m = re.exec(line))) toks.push({ name: m[0], start: m.index });
  if (toks.length < 2) return undefined;
  if (!toks.every((t) => /^[A-Za-z][A-Za-z0-9_]*$/.test(t.name))) return undefined;
  // identifier-like titles: ERP field names (A2_COD) or lower-case words; plain upper-case prose is data
  const identish = toks.filter((t) => /_/.test(t.name) || /^[a-z]/.test(t.name)).length;
  return identish / toks.length >= 0.6 ? toks : undefined;
}

export function sniffFixedWidth(text: string): FixedLayoutGuess {
  const all = text.split(/\r\n|\n|\r/).map((l) => l.replace(/\s+$/, ''));
  const lines = all.filter((l) => l !== '');
  const width = Math.max(...lines.map((l) => l.length));
  const rawWidth = Math.max(...text.split(/\r\n|\n|\r/).map((l) => l.length));
  const titles = titleTokens(lines[0] ?? '');
  const data = titles ? lines.slice(1) : lines;
  const evidence: string[] = [`${data.length} lines, up to ${width} characters, no delimiter`];
  // record tags: a first character (or 3 letters) that takes few values, with the first or last line different
  let tagLength = 0;
  if (!titles && data.length >= 3) {
    const tag3 = data.map((l) => l.slice(0, 3));
    const set3 = new Set(tag3);
    if (tag3.every((t) => /^[A-Z]{3}$/.test(t)) && set3.size >= 2 && set3.size <= 6) tagLength = 3;
    else {
      const tag1 = data.map((l) => l[0] ?? '');
      const counts = new Map<string, number>();
      for (const t of tag1) counts.set(t, (counts.get(t) ?? 0) + 1);
      const major = [...counts.entries()].sort((a, b) => b[1] - a[1])[0]![0];
      if (
        counts.size >= 2 &&
        counts.size <= 6 &&
        (tag1[0] !== major || tag1[tag1.length - 1] !== major) &&
        [...counts.keys()].every((k) => /[A-Z0-9]/.test(k))
      ) {
        tagLength = 1;
      }
    }
  }
  const groups = new Map<string, string[]>();
  for (const l of data) {
    const tag = tagLength ? l.slice(0, tagLength) : '';
    if (!groups.has(tag)) groups.set(tag, []);
    groups.get(tag)!.push(l);
  }
  const records: FixedRecordGuess[] = [];
  const detailTag = [...groups.entries()].sort((a, b) => b[1].length - a[1].length)[0]![0];
  for (const [tag, ls] of groups) {
    const w = Math.max(...ls.map((l) => l.length));
    let starts: number[];
    if (titles) {
      // titles placed a little off their column (a report that centres or indents them) snap to the data's boundaries
      const data = fixedBoundaries(ls, 0, w);
      starts = titles.map((t) => {
        const near = data.filter((d) => Math.abs(d - t.start) <= 2).sort((a, b) => Math.abs(a - t.start) - Math.abs(b - t.start))[0];
        return near ?? t.start;
      });
      starts = starts.map((st, i) => (i > 0 && st <= starts[i - 1]! ? titles[i]!.start : st));
    } else starts = fixedBoundaries(ls, tagLength, w);
    const fields: FixedFieldGuess[] = [];
    if (tagLength) fields.push({ name: 'tipo', start: 1, length: tagLength });
    starts.forEach((s, i) => {
      const end = i + 1 < starts.length ? starts[i + 1]! : Math.max(w, titles ? width : w);
      fields.push({ name: titles ? titles[i]!.name : `campo_${s + 1}`, start: s + 1, length: Math.max(1, end - s) });
    });
    let type = 'detail';
    if (tagLength) {
      const first = data[0]!.slice(0, tagLength);
      const last = data[data.length - 1]!.slice(0, tagLength);
      if (tag === detailTag) type = 'detail';
      else if (tag === first)
        type = 'header'; // one file header, or one header per document (H/D orders)
      else if (tag === last && ls.length === 1) type = 'trailer';
      else type = `registro_${tag}`;
    }
    records.push({ type, ...(tagLength ? { tag } : {}), fields, lines: ls.length });
  }
  if (titles) evidence.push(`first line holds ${titles.length} column titles aligned with the fields`);
  if (tagLength)
    evidence.push(
      `record types from the first ${tagLength === 1 ? 'character' : '3 characters'}: ${records.map((r) => `'${r.tag}' ${r.type} (${r.lines})`).join(', ')}`,
    );
  evidence.push('field boundaries from columns blank on every line, digits turning into letters and zero-padded numbers starting');
  const guess: FixedLayoutGuess = { tagLength, records, titleLine: !!titles, lineLength: rawWidth, evidence: evidence.join('; ') };
  // trailer count: a digits-only field of the trailer equal to the number of lines (or of details)
  const trailer = records.find((r) => r.type === 'trailer');
  if (trailer) {
    const tl = data[data.length - 1]!;
    for (const f of trailer.fields.slice(1)) {
      const v = tl.slice(f.start - 1, f.start - 1 + f.length).trim();
      if (!/^\d+$/.test(v)) continue;
      const n = Number(v);
      if (n === data.length) guess.trailer = { type: 'trailer', countField: f.name, counts: 'all' };
      else if (n === (groups.get(detailTag)?.length ?? -1)) guess.trailer = { type: 'trailer', countField: f.name, counts: 'detail' };
      if (guess.trailer) {
        f.name = 'registros';
        guess.trailer.countField = 'registros';
        break;
      }
    }
  }
  return guess;
}

// ---------------------------------------------------------------------------------------------
// XML / JSON
// ---------------------------------------------------------------------------------------------

/** The repeating element with the most instances (its path from the root, namespace prefixes removed). */
export function sniffXmlItemPath(text: string): { itemPath: string; nfe: boolean; evidence: string } {
  const parser = new XMLParser({ ignoreAttributes: true, removeNSPrefix: true, parseTagValue: false, processEntities: false });
  let doc: Record<string, unknown>;
  try {
    doc = parser.parse(text) as Record<string, unknown>;
  } catch (err) {
    throw new InputError(`the sample is not well-formed XML: ${(err as Error).message}`);
  }
  const root = Object.keys(doc).find((k) => k !== '?xml');
  if (!root) throw new InputError('the sample XML has no root element');
  const nfe = /^(nfeProc|NFe|enviNFe)$/.test(root) && /<infNFe[\s>]/.test(text) && /<det[\s>]/.test(text);
  if (nfe) {
    return {
      itemPath: 'nfeProc/NFe/infNFe/det',
      nfe: true,
      evidence: `NF-e recognised (root <${root}>, <infNFe> with <det> items): item path nfeProc/NFe/infNFe/det (the nfeProc envelope is optional)`,
    };
  }
  let best: { path: string; count: number; depth: number } = { path: root, count: 1, depth: 0 };
  const walk = (node: unknown, path: string, depth: number) => {
    if (node === null || typeof node !== 'object') return;
    for (const [k, v] of Object.entries(node as Record<string, unknown>)) {
      const p = `${path}/${k}`;
      if (Array.isArray(v)) {
        if (v.length > best.count || (v.length === best.count && depth + 1 < best.depth)) best = { path: p, count: v.length, depth: depth + 1 };
        for (const e of v.slice(0, 3)) walk(e, p, depth + 1);
      } else walk(v, p, depth + 1);
    }
  };
  walk(doc[root], root, 0);
  return { itemPath: best.path, nfe: false, evidence: `the element repeated most is ${best.path} (${best.count} times)` };
}

export function sniffJson(text: string): { format: 'json' | 'jsonl'; itemPath?: string; evidence: string } {
  const t = text.trim();
  try {
    const v = JSON.parse(t) as unknown;
    if (Array.isArray(v)) return { format: 'json', evidence: `a JSON array of ${v.length} items` };
    if (v && typeof v === 'object') {
      let best: { path: string; n: number } | undefined;
      const walk = (node: unknown, path: string, depth: number) => {
        if (!node || typeof node !== 'object' || depth > 4) return;
        for (const [k, x] of Object.entries(node as Record<string, unknown>)) {
          const p = path ? `${path}/${k}` : k;
          if (Array.isArray(x) && x.some((e) => e && typeof e === 'object')) {
            if (!best || x.length > best.n) best = { path: p, n: x.length };
          } else if (x && typeof x === 'object' && !Array.isArray(x)) walk(x, p, depth + 1);
        }
      };
      walk(v, '', 0);
      if (best) return { format: 'json', itemPath: best.path, evidence: `a JSON object; the largest array of objects is at ${best.path} (${best.n} items)` };
      throw new InputError('the JSON sample holds no array of objects to read items from');
    }
  } catch (err) {
    if (err instanceof InputError) throw err;
    const lines = t.split(/\r?\n/).filter((l) => l.trim() !== '');
    const ok = lines.filter((l) => {
      try {
        const o = JSON.parse(l) as unknown;
        return o !== null && typeof o === 'object' && !Array.isArray(o);
      } catch {
        return false;
      }
    }).length;
    if (lines.length && ok / lines.length >= 0.9) return { format: 'jsonl', evidence: `JSON Lines: ${ok} of ${lines.length} lines are objects` };
    throw new InputError(`the sample starts like JSON but is not valid JSON: ${(err as Error).message}`);
  }
  throw new InputError('the JSON sample holds no items');
}

// ---------------------------------------------------------------------------------------------
// the whole file
// ---------------------------------------------------------------------------------------------

export async function sniffFile(path: string): Promise<Sniffed> {
  // the first SAMPLE_BYTES only: a sample of millions of lines is not read whole
  let sample: Buffer;
  let size: number;
  try {
    const fh = await open(path, 'r');
    try {
      size = (await fh.stat()).size;
      const b = Buffer.alloc(Math.min(size, SAMPLE_BYTES));
      const { bytesRead } = await fh.read(b, 0, b.length, 0);
      sample = b.subarray(0, bytesRead);
    } finally {
      await fh.close();
    }
  } catch (err) {
    throw new InputError(`cannot read ${path}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`);
  }
  if (sample.length === 0) throw new InputError(`${path} is empty: infer needs a sample with data`);
  if (sample.subarray(0, 4).equals(ZIP_MAGIC)) return sniffXlsx(path, size);
  const truncated = size > sample.length;
  const encoding = guessEncoding(sample, truncated);
  // an odd byte cut off a UTF-16 sample is not decoded
  let text = iconv.decode(encoding.encoding.startsWith('utf-16') ? sample.subarray(0, sample.length & ~1) : sample, encoding.encoding);
  if (text.charCodeAt(0) === 0xfeff) text = text.slice(1);
  if (truncated) text = text.slice(0, text.lastIndexOf('\n') + 1 || text.length);
  const s: Sniffed = { path, bytes: size, encoding, format: 'delimited', formatEvidence: '', text };
  const first = text.trimStart()[0];
  if (first === '<') {
    s.format = 'xml';
    // the XML declaration names its encoding; the parser follows it
    const declared = /^\s*<\?xml[^>]*encoding=["']([^"']+)["']/i.exec(text)?.[1]?.toLowerCase();
    if (declared && /^(iso-8859-1|latin1|windows-1252|cp1252)$/.test(declared)) {
      s.encoding = {
        ...s.encoding,
        encoding: declared.startsWith('iso') || declared === 'latin1' ? 'iso-8859-1' : 'windows-1252',
        evidence: `XML declaration says ${declared}`,
      };
    }
    s.xml = sniffXmlItemPath(text);
    s.formatEvidence = `XML; ${s.xml.evidence}`;
    return s;
  }
  if (first === '{' || first === '[') {
    const j = sniffJson(text);
    s.format = j.format;
    s.json = { ...(j.itemPath ? { itemPath: j.itemPath } : {}), evidence: j.evidence };
    s.formatEvidence = j.evidence;
    return s;
  }
  // leading comment lines (# export banner, // generated by...) are skipped, then the rest is sniffed
  const all = text.split(/\r\n|\n|\r/);
  let comments = 0;
  while (comments < all.length && /^\s*(#|\/\/)/.test(all[comments]!)) comments++;
  if (comments > 0 && comments < all.length) {
    s.skipLines = comments;
    text = all.slice(comments).join('\n');
  }
  const d = sniffDelimited(text);
  const lines = text.split(/\r\n|\n|\r/).filter((l) => l.trim() !== '');
  const withDelim = lines.filter((l) => l.includes(d.delimiter)).length;
  // fixed-width files may hold a delimiter character inside their text (an address "RUA X, 12"): a header
  // line without it, or lines of one length with few cells, say fixed-width
  const lengths = new Map<number, number>();
  for (const l of lines) lengths.set(l.length, (lengths.get(l.length) ?? 0) + 1);
  const sameLength = Math.max(...lengths.values()) / lines.length >= 0.9 && (lines[0]?.length ?? 0) >= 20;
  const headerWithout = d.header === false && !(lines[0] ?? '').includes(d.delimiter) && lines.length > 2;
  if (
    d.columns <= 1 ||
    withDelim / Math.max(1, lines.length) < 0.5 ||
    headerWithout ||
    (sameLength && d.columns <= 3 && !(lines[0] ?? '').includes(d.delimiter))
  ) {
    s.format = 'fixed-width';
    s.fixed = sniffFixedWidth(text);
    s.formatEvidence = `fixed-width: ${s.fixed.evidence}`;
    return s;
  }
  s.delimited = d;
  s.formatEvidence = `delimited: ${d.evidence}${comments ? `; ${comments} comment line(s) first, skipped (skipLines)` : ''}`;
  const multi = recordTypes(splitRecords(text, d.delimiter, d.quote).filter((r) => !/^\s*#/.test(r[0] ?? '')));
  if (multi) s.multiRecord = multi;
  return s;
}

/** A first cell taking 2-4 short values, each with its own number of cells: record types (H header / I item lines). */
function recordTypes(rows: string[][]): Sniffed['multiRecord'] {
  if (rows.length < 3) return undefined;
  const by = new Map<string, { rows: number; cells: Set<number> }>();
  for (const r of rows) {
    const v = (r[0] ?? '').trim();
    if (v.length === 0 || v.length > 4) return undefined;
    const e = by.get(v) ?? { rows: 0, cells: new Set<number>() };
    e.rows++;
    e.cells.add(r.length);
    by.set(v, e);
    if (by.size > 4) return undefined;
  }
  if (by.size < 2 || [...by.values()].some((e) => e.cells.size !== 1)) return undefined;
  const types = [...by].map(([value, e]) => ({ value, rows: e.rows, cells: [...e.cells][0]! }));
  if (new Set(types.map((t) => t.cells)).size < 2) return undefined;
  const seq = rows.map((r) => (r[0] ?? '').trim());
  const roles = recordRoles(seq, types);
  const trailer = roles.trailer ? trailerCount(rows, seq, roles.trailer) : undefined;
  return {
    types,
    evidence: `the first cell is a record type: ${types.map((t) => `'${t.value}' ${t.rows} line(s) of ${t.cells} cells`).join(', ')}`,
    roles,
    ...(trailer ? { trailer } : {}),
  };
}

/**
 * Roles of record types from the order of the lines: a type on the last line only is the trailer; of the
 * others, in order of first appearance, the first opens documents (header), the next is their items, and a
 * third whose every line follows an item (or another of its lines) is the item's lots.
 */
export function recordRoles(seq: string[], types: Array<{ value: string; rows: number }>): MultiRecordRoles {
  const last = seq[seq.length - 1]!;
  const trailer = types.find((t) => t.value === last && t.rows === 1 && seq[0] !== last)?.value;
  const order = [...new Set(seq)].filter((v) => v !== trailer);
  const main = [...types].filter((t) => t.value !== trailer).sort((a, b) => b.rows - a.rows)[0]!.value;
  const roles: MultiRecordRoles = { main, ...(trailer ? { trailer } : {}) };
  if (order.length < 2) return roles;
  const [header, item, lot] = order as [string, string, string | undefined];
  // a header opens a document: an item line never comes before the first header line
  if (seq.indexOf(item) < seq.indexOf(header)) return roles;
  roles.header = header;
  roles.item = item;
  if (lot && seq.every((v, i) => v !== lot || seq[i - 1] === item || seq[i - 1] === lot)) roles.lot = lot;
  return roles;
}

/** A trailer cell holding the number of lines of the file (or of one record type). */
function trailerCount(rows: string[][], seq: string[], type: string): NonNullable<Sniffed['multiRecord']>['trailer'] {
  const t = rows[seq.lastIndexOf(type)]!;
  for (let i = 1; i < t.length; i++) {
    const v = (t[i] ?? '').trim();
    if (!/^\d+$/.test(v)) continue;
    const n = Number(v);
    if (n === seq.length) return { type, cell: i, counts: 'all' };
    // the lines before the trailer (it does not count itself)
    if (n === seq.length - 1) return { type, cell: i, counts: 'all', offset: -1 };
    const of = [...new Set(seq)].find((x) => x !== type && seq.filter((y) => y === x).length === n);
    if (of) return { type, cell: i, counts: [of] };
  }
  return undefined;
}
