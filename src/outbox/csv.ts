/**
 * Streaming outbox writers: CSV (Excel-friendly by default), JSON Lines and JSON arrays. Every writer
 * streams through createAtomicWriteStream: the file appears complete under its final name on close(),
 * or not at all.
 *
 * CSV defaults are what Brazilian Excel opens with a double click: UTF-8 with BOM, ';' delimiter,
 * decimal comma, dd/MM/yyyy HH:mm:ss dates, CRLF. Cells that start with = + - @ TAB CR are prefixed
 * with ' (OWASP CSV injection guidance); numbers written from number values are never prefixed.
 */
import { wallClock } from '../shared/time.js';
import iconv from 'iconv-lite';
import type { z } from 'zod';
import { CsvFormatSchema } from '../shared/csv-format.js';
import { createAtomicWriteStream, type AtomicWriteDeps, type AtomicWriteOptions, type AtomicWriteStream } from './atomic.js';

export { CsvFormatSchema };
/** Resolved CSV format (every field filled in). */
export type CsvFormat = z.output<typeof CsvFormatSchema>;
/** What callers pass: every field optional. */
export type CsvFormatOptions = z.input<typeof CsvFormatSchema>;

export function resolveCsvFormat(format: CsvFormatOptions | undefined = {}): CsvFormat {
  return CsvFormatSchema.parse(format);
}

// ---------------------------------------------------------------------------------------------------
// cell formatting (pure)

const FORMULA_START = new Set(['=', '+', '-', '@', '\t', '\r']);
const ISO_DATE = /^(\d{4})-(\d{2})-(\d{2})$/;
const ISO_DATETIME = /^(\d{4})-(\d{2})-(\d{2})[T ](\d{2}):(\d{2})(?::(\d{2})(?:\.\d+)?)?(Z|[+-]\d{2}:?\d{2})?$/;

/** A number with the given decimal separator, no thousands separator, never in exponent notation. */
export function formatCsvNumber(n: number | bigint, decimalSeparator: ',' | '.' = ','): string {
  if (typeof n === 'bigint') return n.toString();
  if (!Number.isFinite(n)) return '';
  if (Object.is(n, -0)) n = 0;
  let s = String(n);
  if (/e/i.test(s)) {
    if (Number.isInteger(n)) s = BigInt(n).toString();
    else s = n.toFixed(20).replace(/0+$/, '').replace(/\.$/, '');
  }
  return decimalSeparator === '.' ? s : s.replace('.', decimalSeparator);
}

const pad2 = (n: number): string => (n < 10 ? `0${n}` : String(n));
function partsIn(date: Date, timeZone: string | undefined): Record<'year' | 'month' | 'day' | 'hour' | 'minute' | 'second', string> {
  const w = wallClock(date.getTime(), timeZone);
  return { year: String(w.year).padStart(4, '0'), month: pad2(w.month), day: pad2(w.day), hour: pad2(w.hour), minute: pad2(w.minute), second: pad2(w.second) };
}

/** Formats an instant as dd/MM/yyyy[ HH:mm:ss] in `timeZone` (default: the machine's), or ISO. */
export function formatCsvDate(date: Date, dateFormat: CsvFormat['dateFormat'], timeZone?: string): string {
  if (Number.isNaN(date.getTime())) return '';
  if (dateFormat === 'iso') return date.toISOString();
  const p = partsIn(date, timeZone);
  const day = `${p.day}/${p.month}/${p.year}`;
  return dateFormat === 'dd/MM/yyyy' ? day : `${day} ${p.hour}:${p.minute}:${p.second}`;
}

/**
 * Reformats an ISO date / date-time string; returns undefined when the string is not one. Date-only
 * strings stay date-only (no midnight is invented); date-times without an offset are wall-clock times
 * and are reformatted as written; with Z or an offset they are instants shown in `timeZone`.
 */
// exports repeat the same dates on many rows (lots, expiries): formatting each once keeps a long export from
// allocating Intl parts per row
const isoDateCache = new Map<string, string | undefined>();
const ISO_DATE_CACHE_MAX = 4096;

export function formatIsoDateString(s: string, dateFormat: CsvFormat['dateFormat'], timeZone?: string): string | undefined {
  const key = `${dateFormat}|${timeZone ?? ''}|${s}`;
  if (isoDateCache.has(key)) return isoDateCache.get(key);
  const out = formatIsoDateStringUncached(s, dateFormat, timeZone);
  if (isoDateCache.size >= ISO_DATE_CACHE_MAX) isoDateCache.clear();
  isoDateCache.set(key, out);
  return out;
}

function formatIsoDateStringUncached(s: string, dateFormat: CsvFormat['dateFormat'], timeZone?: string): string | undefined {
  if (dateFormat === 'iso') return ISO_DATE.test(s) || ISO_DATETIME.test(s) ? s : undefined;
  const d = ISO_DATE.exec(s);
  if (d) return `${d[3]}/${d[2]}/${d[1]}`;
  const m = ISO_DATETIME.exec(s);
  if (!m) return undefined;
  if (m[7]) {
    const date = new Date(s.replace(' ', 'T'));
    if (Number.isNaN(date.getTime())) return undefined;
    return formatCsvDate(date, dateFormat, timeZone);
  }
  const day = `${m[3]}/${m[2]}/${m[1]}`;
  return dateFormat === 'dd/MM/yyyy' ? day : `${day} ${m[4]}:${m[5]}:${m[6] ?? '00'}`;
}

/** RFC 4180 quoting: quote when the cell holds the delimiter, a quote, CR or LF; double inner quotes. */
export function quoteCsvCell(text: string, delimiter: string): string {
  if (text.includes(delimiter) || text.includes('"') || text.includes('\n') || text.includes('\r')) {
    return `"${text.replace(/"/g, '""')}"`;
  }
  return text;
}

/** OWASP: a text cell starting with = + - @ TAB CR gets a leading ' so spreadsheets show it as text. */
export function neutralizeFormula(text: string): string {
  return text.length > 0 && FORMULA_START.has(text[0]!) ? `'${text}` : text;
}

/** One value as CSV cell text (quoted when needed). */
export function formatCsvCell(value: unknown, format: CsvFormat, isDateColumn = false): string {
  let text: string;
  let fromText = true;
  if (value === null || value === undefined) return '';
  if (typeof value === 'number' || typeof value === 'bigint') {
    text = formatCsvNumber(value, format.decimalSeparator);
    fromText = false;
  } else if (typeof value === 'boolean') {
    text = value ? 'true' : 'false';
    fromText = false;
  } else if (value instanceof Date) {
    text = formatCsvDate(value, format.dateFormat, format.timeZone);
    fromText = false;
  } else if (typeof value === 'string') {
    const asDate = isDateColumn ? formatIsoDateString(value, format.dateFormat, format.timeZone) : undefined;
    if (asDate !== undefined) {
      text = asDate;
      fromText = false;
    } else text = value;
  } else {
    text = JSON.stringify(value) ?? '';
  }
  if (fromText && format.neutralizeFormulas) text = neutralizeFormula(text);
  return quoteCsvCell(text, format.delimiter);
}

/** One CSV line (without the line ending). */
export function formatCsvLine(cells: readonly unknown[], format: CsvFormat, dateColumns?: ReadonlySet<number>): string {
  let out = '';
  for (let i = 0; i < cells.length; i++) {
    if (i > 0) out += format.delimiter;
    out += formatCsvCell(cells[i], format, dateColumns?.has(i) ?? false);
  }
  return out;
}

// ---------------------------------------------------------------------------------------------------
// encoding

let cp1252Chars: Set<string> | undefined;
/** The characters windows-1252 can represent (the 5 undefined bytes excluded). */
function cp1252Set(): Set<string> {
  if (!cp1252Chars) {
    const b = Buffer.alloc(256);
    for (let i = 0; i < 256; i++) b[i] = i;
    cp1252Chars = new Set([...iconv.decode(b, 'win1252')].filter((c) => c !== '\ufffd'));
  }
  return cp1252Chars;
}

/**
 * Encodes text as windows-1252 with iconv-lite. The text is NFC-normalised first (a decomposed "ç"
 * becomes one character); each code point that cannot be represented (€ can, emoji and CJK cannot)
 * becomes one '?' and is counted.
 */
export function encodeWindows1252(text: string): { bytes: Buffer; replaced: number } {
  let s = text.normalize('NFC');
  let replaced = 0;
  if (/[\x80-\uffff]/.test(s)) {
    const ok = cp1252Set();
    let out = '';
    for (const ch of s) {
      if (ch.charCodeAt(0) < 0x80 || ok.has(ch)) out += ch;
      else {
        out += '?';
        replaced++;
      }
    }
    s = out;
  }
  return { bytes: iconv.encode(s, 'win1252'), replaced };
}

// ---------------------------------------------------------------------------------------------------
// writers

export type OutboxWriterOptions = AtomicWriteOptions;

/** Shared part of every streaming writer. */
interface TextSink {
  /** false when the caller should wait for drain() */
  writeText(text: string): boolean;
  drain(): Promise<void>;
  commit(): Promise<void>;
  abort(): Promise<void>;
  replaced(): number;
}

function createTextSink(
  path: string,
  encoding: CsvFormat['encoding'],
  options: AtomicWriteOptions,
  deps: AtomicWriteDeps,
): TextSink {
  const out: AtomicWriteStream = createAtomicWriteStream(path, options, deps);
  let replaced = 0;
  let error: unknown;
  out.stream.on('error', (err) => {
    error ??= err;
  });
  if (encoding === 'utf-8-bom') out.stream.write(Buffer.from([0xef, 0xbb, 0xbf]));
  return {
    writeText(text) {
      if (error) throw error;
      if (encoding === 'windows-1252') {
        const enc = encodeWindows1252(text);
        replaced += enc.replaced;
        return out.stream.write(enc.bytes);
      }
      return out.stream.write(Buffer.from(text, 'utf8'));
    },
    drain() {
      if (error) return Promise.reject(error);
      if (!out.stream.writableNeedDrain) return Promise.resolve();
      return new Promise<void>((resolve, reject) => {
        const onDrain = (): void => {
          out.stream.off('error', onError);
          out.stream.off('close', onClose);
          resolve();
        };
        const onError = (err: unknown): void => {
          out.stream.off('drain', onDrain);
          out.stream.off('close', onClose);
          reject(err);
        };
        const onClose = (): void => onError(error ?? new Error(`outbox: ${path} closed while waiting for drain`));
        out.stream.once('drain', onDrain);
        out.stream.once('error', onError);
        out.stream.once('close', onClose);
      });
    },
    async commit() {
      await out.commit();
    },
    abort: () => out.abort(),
    replaced: () => replaced,
  };
}

export interface CsvWriterOptions extends OutboxWriterOptions {
  /** the header, and the order of cells taken from each row object */
  columns: readonly string[];
  format?: CsvFormatOptions;
  /** columns whose ISO date strings are reformatted with format.dateFormat (Date values always are) */
  dateColumns?: readonly string[];
  /** write the header line. @default true */
  header?: boolean;
}

export interface CsvWriter {
  /**
   * Appends one row (keys not in `columns` are ignored, missing ones are empty). Returns false when the
   * internal buffer is full: `await writer.drain()` before writing more (backpressure).
   */
  write(row: Record<string, unknown>): boolean;
  /** resolves when the buffer has room again (at once when it has) */
  drain(): Promise<void>;
  /** flushes, fsyncs and renames into place. `replacedChars`: characters written as '?' (windows-1252) */
  close(): Promise<{ rows: number; replacedChars: number }>;
  /** discards the file (nothing appears under the final name) */
  abort(): Promise<void>;
}

/** A streaming CSV file that appears atomically on close(). */
export function createCsvWriter(path: string, options: CsvWriterOptions, deps: AtomicWriteDeps = {}): CsvWriter {
  const format = resolveCsvFormat(options.format);
  const columns = [...options.columns];
  const dateSet = new Set(options.dateColumns ?? []);
  const dateIdx = new Set(columns.map((c, i) => (dateSet.has(c) ? i : -1)).filter((i) => i >= 0));
  const sink = createTextSink(path, format.encoding, options, deps);
  let rows = 0;
  let closed = false;
  if (options.header !== false) sink.writeText(formatCsvLine(columns, format) + format.lineEnding);
  return {
    write(row) {
      if (closed) throw new Error(`csv writer for ${path} is closed`);
      rows++;
      return sink.writeText(formatCsvLine(columns.map((c) => row[c]), format, dateIdx) + format.lineEnding);
    },
    drain: () => sink.drain(),
    async close() {
      if (closed) throw new Error(`csv writer for ${path} is already closed`);
      closed = true;
      await sink.commit();
      return { rows, replacedChars: sink.replaced() };
    },
    async abort() {
      closed = true;
      await sink.abort();
    },
  };
}

export interface JsonWriter {
  /** appends one value; false means `await drain()` before writing more */
  write(value: unknown): boolean;
  drain(): Promise<void>;
  close(): Promise<{ rows: number }>;
  abort(): Promise<void>;
}

/** JSON Lines (one JSON value per line, UTF-8, '\n'), written atomically. */
export function createJsonlWriter(path: string, options: OutboxWriterOptions = {}, deps: AtomicWriteDeps = {}): JsonWriter {
  const sink = createTextSink(path, 'utf-8', options, deps);
  let rows = 0;
  let closed = false;
  return {
    write(value) {
      if (closed) throw new Error(`jsonl writer for ${path} is closed`);
      rows++;
      return sink.writeText(`${JSON.stringify(value) ?? 'null'}\n`);
    },
    drain: () => sink.drain(),
    async close() {
      if (closed) throw new Error(`jsonl writer for ${path} is already closed`);
      closed = true;
      await sink.commit();
      return { rows };
    },
    async abort() {
      closed = true;
      await sink.abort();
    },
  };
}

/** A JSON array streamed as '[', items separated by ',\n', ']' (UTF-8), written atomically. */
export function createJsonArrayWriter(path: string, options: OutboxWriterOptions = {}, deps: AtomicWriteDeps = {}): JsonWriter {
  const sink = createTextSink(path, 'utf-8', options, deps);
  let rows = 0;
  let closed = false;
  sink.writeText('[');
  return {
    write(value) {
      if (closed) throw new Error(`json writer for ${path} is closed`);
      const text = `${rows === 0 ? '\n' : ',\n'}${JSON.stringify(value) ?? 'null'}`;
      rows++;
      return sink.writeText(text);
    },
    drain: () => sink.drain(),
    async close() {
      if (closed) throw new Error(`json writer for ${path} is already closed`);
      closed = true;
      sink.writeText(rows === 0 ? ']\n' : '\n]\n');
      await sink.commit();
      return { rows };
    },
    async abort() {
      closed = true;
      await sink.abort();
    },
  };
}
