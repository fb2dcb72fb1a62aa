/**
 * Excel workbooks beside the CSVs people open. Written with exceljs's streaming WorkbookWriter (rows are
 * committed as they are added, so a large sheet does not sit in memory) into an atomic outbox stream: the
 * .xlsx appears complete under its name, or not at all.
 *
 * Typed cells are the point: codes and EANs are text cells (format "@", so `000101` keeps its zeros and a
 * 13-digit EAN never becomes 7,89E+12), quantities are numbers, instants are dates shown in the outbox time
 * zone. Every sheet has its header row frozen and an auto-filter.
 */
import { Writable } from 'node:stream';
import type ExcelJS from 'exceljs';
import { wallClock } from '../shared/time.js';
import { createAtomicWriteStream, modeOption, outboxError } from './atomic.js';

/** 'auto': Date values as date-times, numbers as numbers, anything else as text */
export type XlsxType = 'text' | 'number' | 'integer' | 'date' | 'datetime' | 'auto';

export interface XlsxColumn {
  key: string;
  header: string;
  type: XlsxType;
  /** character width. @default from the header and the first rows' content (columnWidths) */
  width?: number;
}

export interface XlsxSheet {
  name: string;
  columns: readonly XlsxColumn[];
  rows: Iterable<Record<string, unknown>> | AsyncIterable<Record<string, unknown>>;
}

/**
 * Cell formats. A 'number' cell takes `#,##0` when its value is whole and `#,##0.###` otherwise: Excel shows
 * the decimal separator of `#,##0.###` even with no decimals left ("412," for 412), so one format cannot
 * show both 412 and 412,5 properly (numberFormat).
 */
const NUM_FMT: Record<XlsxType, string | undefined> = {
  text: '@',
  number: '#,##0.###',
  integer: '#,##0',
  date: 'dd/mm/yyyy',
  datetime: 'dd/mm/yyyy hh:mm',
  auto: undefined,
};

/** The format of one cell: a column's, or for numbers the whole-number one when the value is whole. */
export function numberFormat(type: XlsxType, value: ExcelJS.CellValue): string | undefined {
  if (type === 'auto') return value instanceof Date ? NUM_FMT.datetime : typeof value === 'string' ? '@' : undefined;
  if (type === 'number' && typeof value === 'number' && Number.isInteger(value)) return NUM_FMT.integer;
  return NUM_FMT[type];
}

/** rows sampled for the column widths (the header is written before the rows: a sheet streams) */
export const WIDTH_SAMPLE_ROWS = 500;
/** widest column, in characters: a long reason wraps its view at this width instead of pushing the others off */
export const MAX_COLUMN_WIDTH = 60;

/** How many characters a cell shows (roughly: digit groups, a date's dd/mm/yyyy hh:mm). */
function shownLength(v: ExcelJS.CellValue, type: XlsxType): number {
  if (v === null || v === undefined) return 0;
  if (v instanceof Date) return type === 'date' ? 10 : 16;
  if (typeof v === 'number') {
    const digits = Math.trunc(Math.abs(v)).toString().length;
    return digits + Math.floor((digits - 1) / 3) + (Number.isInteger(v) ? 0 : 4) + (v < 0 ? 1 : 0);
  }
  const text = typeof v === 'string' ? v : String(v as unknown);
  return Math.max(...text.split('\n').map((l) => l.length));
}

/**
 * Column widths from what the columns show: the header (bold, with the filter's button) and the cells of the
 * first rows, at least 8 and at most MAX_COLUMN_WIDTH characters; a column's own `width` wins.
 */
export function columnWidths(columns: readonly XlsxColumn[], rows: ReadonlyArray<readonly ExcelJS.CellValue[]>): number[] {
  return columns.map((c, i) => {
    if (c.width !== undefined) return c.width;
    const content = Math.max(0, ...rows.map((r) => shownLength(r[i] ?? null, c.type)));
    return Math.min(MAX_COLUMN_WIDTH, Math.max(8, c.header.length + 4, content + 2));
  });
}

/**
 * An instant as the Excel serial of its wall-clock time in `timeZone` (Excel dates have no zone): the cell
 * shows what a clock in that zone showed.
 */
function excelDate(v: unknown, timeZone: string, dateOnly: boolean): Date | null {
  if (v === null || v === undefined || v === '') return null;
  if (typeof v === 'string' && /^\d{4}-\d{2}-\d{2}$/.test(v)) return new Date(`${v}T00:00:00Z`); // a calendar date: no zone
  const d = v instanceof Date ? v : new Date(String(v));
  if (Number.isNaN(d.getTime())) return null;
  const w = wallClock(d.getTime(), timeZone);
  return new Date(Date.UTC(w.year, w.month - 1, w.day, dateOnly ? 0 : w.hour, dateOnly ? 0 : w.minute, dateOnly ? 0 : w.second));
}

function cellValue(v: unknown, type: XlsxType, timeZone: string): ExcelJS.CellValue {
  if (v === null || v === undefined) return null;
  switch (type) {
    case 'auto':
      if (v instanceof Date) return excelDate(v, timeZone, false);
      if (typeof v === 'number') return Number.isFinite(v) ? v : null;
      if (typeof v === 'boolean') return v;
      return cellValue(v, 'text', timeZone);
    case 'text':
      return typeof v === 'string' ? v : typeof v === 'object' ? JSON.stringify(v) : String(v);
    case 'number':
    case 'integer': {
      if (typeof v === 'number') return Number.isFinite(v) ? v : null;
      if (typeof v === 'bigint') return Number(v);
      const n = Number(String(v).replace(',', '.'));
      return String(v).trim() !== '' && Number.isFinite(n) ? n : String(v);
    }
    case 'date':
    case 'datetime':
      return excelDate(v, timeZone, type === 'date') ?? (typeof v === 'string' ? v : null);
  }
}

/** exceljs's streaming workbook writer, loaded once (the first load costs ~80 ms: exceljs and archiver) */
export async function loadWorkbookWriter(): Promise<typeof import('exceljs/lib/stream/xlsx/workbook-writer.js').default> {
  // the writer alone, when a workbook is written: exceljs's main entry takes ~1 s to load (exceljs-writer.d.ts)
  return (await import('exceljs/lib/stream/xlsx/workbook-writer.js')).default;
}

/** One iterator over a sheet's rows, sync or async. */
function iterate(rows: XlsxSheet['rows']): AsyncIterator<Record<string, unknown>> | Iterator<Record<string, unknown>> {
  return Symbol.asyncIterator in rows ? rows[Symbol.asyncIterator]() : rows[Symbol.iterator]();
}

/** How a workbook is written: writeXlsx here, or the same on the workbook thread (xlsx-worker.ts). */
export type XlsxWrite = (path: string, sheets: readonly XlsxSheet[], options: XlsxWriteOptions) => Promise<number[]>;

/** The dates' zone, and the file's mode (outbox.fileMode; default DEFAULT_OUTBOX_FILE_MODE). */
export interface XlsxWriteOptions {
  timeZone: string;
  mode?: number;
}

/** Writes a workbook atomically at `path`; returns the number of data rows per sheet. */
export async function writeXlsx(path: string, sheets: readonly XlsxSheet[], options: XlsxWriteOptions): Promise<number[]> {
  const WorkbookWriter = await loadWorkbookWriter();
  const out = createAtomicWriteStream(path, modeOption(options.mode));
  // a failure of the file (a missing folder, a full disk) must end the workbook: the stream is destroyed and
  // never drains, and exceljs does not report what its destination refused (the write waited forever)
  let failure: unknown = null;
  let failed!: (err: unknown) => void;
  const failedP = new Promise<never>((_, reject) => (failed = reject));
  failedP.catch(() => undefined);
  const fail = (err: unknown): void => {
    failure ??= err;
    failed(failure);
  };
  out.stream.on('error', fail);
  // exceljs ends the stream it is given; the atomic stream must be ended by commit() (which renames it), so
  // exceljs writes through a forwarder whose end is a no-op for the file
  let zipDone!: () => void;
  const finished = new Promise<void>((r) => (zipDone = r));
  const forward = new Writable({
    write(chunk: Buffer, _enc, cb) {
      if (failure !== null || out.stream.destroyed) return cb(); // dropped: the workbook has failed (reported by failedP)
      if (out.stream.write(chunk)) return cb();
      const drained = (): void => {
        out.stream.off('close', closed);
        cb();
      };
      const closed = (): void => {
        out.stream.off('drain', drained);
        fail(out.stream.errored ?? new Error('the file was closed while the workbook was written'));
        cb();
      };
      out.stream.once('drain', drained);
      out.stream.once('close', closed);
    },
    final(cb) {
      zipDone();
      cb();
    },
  });
  forward.on('error', fail);
  const wb = new WorkbookWriter({ stream: forward, useStyles: true, useSharedStrings: false });
  wb.creator = 'wmsbridge';
  const counts: number[] = [];
  try {
    for (const sheet of sheets) {
      // Excel refuses sheet names over 31 characters or with []:*?/\
      const name = sheet.name.replace(/[[\]:*?/\\]/g, ' ').slice(0, 31);
      const ws = wb.addWorksheet(name, { views: [{ state: 'frozen', ySplit: 1 }] });
      // the first rows are read before the header is written: the widths come from them
      const rows = iterate(sheet.rows);
      const head: ExcelJS.CellValue[][] = [];
      for (let next = await rows.next(); ; next = await rows.next()) {
        if (next.done) break;
        head.push(sheet.columns.map((c) => cellValue(next.value[c.key], c.type, options.timeZone)));
        if (head.length >= WIDTH_SAMPLE_ROWS) break;
      }
      const widths = columnWidths(sheet.columns, head);
      ws.columns = sheet.columns.map((c, i) => ({
        header: c.header,
        key: c.key,
        width: widths[i]!,
        ...(NUM_FMT[c.type] ? { style: { numFmt: NUM_FMT[c.type]! } } : {}),
      }));
      ws.getRow(1).font = { bold: true };
      ws.autoFilter = { from: { row: 1, column: 1 }, to: { row: 1, column: Math.max(1, sheet.columns.length) } };
      ws.getRow(1).commit();
      let n = 0;
      const add = (values: ExcelJS.CellValue[]): void => {
        const row = ws.addRow(values);
        sheet.columns.forEach((c, i) => {
          const cell = row.getCell(i + 1);
          const f = numberFormat(c.type, cell.value);
          if (f) cell.numFmt = f;
        });
        row.commit();
        n++;
        if (failure !== null) throw failure; // a long export stops at the failure, not at its end
      };
      try {
        for (const values of head) add(values);
        if (head.length >= WIDTH_SAMPLE_ROWS) {
          for (let next = await rows.next(); !next.done; next = await rows.next()) add(sheet.columns.map((c) => cellValue(next.value[c.key], c.type, options.timeZone)));
        }
      } catch (err) {
        await rows.return?.(); // a generator of rows (an export's pages) is closed, as for await would
        throw err;
      }
      ws.commit();
      counts.push(n);
    }
    await Promise.race([wb.commit().then(() => finished), failedP]);
    if (failure !== null) throw failure;
    await out.commit();
  } catch (err) {
    await out.abort().catch(() => {});
    throw outboxError(path, err, 'writing');
  }
  return counts;
}
