/**
 * Spreadsheets (.xlsx): one sheet read as rows, streamed with exceljs's WorkbookReader (the sheet's XML is read
 * row by row; shared strings are held in memory, as Excel itself needs them).
 *
 * Cells are typed, and each type becomes the text a mapping reads with the usual transforms:
 * - a number: its digits, never an exponent (an EAN stored as a number, 7891234567895, stays 7891234567895, not
 *   7,89E+12), with a decimal comma (1234,5: what `number` reads by default); Excel keeps 15 significant digits,
 *   so a longer code must be a text cell;
 * - a date cell (a number with a date format): dd/MM/yyyy, or dd/MM/yyyy HH:mm:ss when it has a time of day
 *   (what `date` reads by default; an Excel serial in a cell without a date format: `date: {format: excel}`);
 * - text as is (rich text joined), a boolean as true/false, a formula as its cached result;
 * - an Excel error (#N/A, #VALUE!...): the row is a `cell_error` item naming the cell.
 *
 * Every row carries its sheet and the letter of each column (RawRow.sheet), so a value the mapping refuses is
 * named by its cell ("sheet Produtos, cell D7"). `text` is the row's typed cells as JSON: the rejects writer
 * writes them back as cells of the same types (outbox/rejects-xlsx.ts).
 */
import { createReadStream } from 'node:fs';
import { Transform } from 'node:stream';
import { InputError, errorMessage, type RowIssue } from '../shared/errors.js';
import { resolveHeader } from './delimited.js';
import type { XlsxOptions } from './options.js';
import { controlIssue, type SourceStats } from './text-source.js';
import { ParseIssueCode, REJECT_REASON_COLUMN, type ParsedItem, type ParseFacts, type RawRow, type SheetPlace } from './types.js';

/** A cell as the rejects workbook writes it back: text, number, boolean, a date ({ d: ISO }), or empty. */
export type TypedCell = string | number | boolean | { d: string } | null;

/** Column letter of a 1-based column number (1 -> A, 27 -> AA). */
export function columnLetter(n: number): string {
  let s = '';
  for (let x = n; x > 0; x = Math.floor((x - 1) / 26)) s = String.fromCharCode(65 + ((x - 1) % 26)) + s;
  return s;
}

/** A number as the digits a mapping reads: never an exponent, a decimal comma. */
export function numberText(n: number): string {
  if (!Number.isFinite(n)) return String(n);
  if (Number.isInteger(n)) return Math.abs(n) < 1e21 ? n.toFixed(0) : String(n);
  let s = String(n);
  if (s.includes('e')) s = n.toFixed(20).replace(/0+$/, '');
  return s.replace('.', ',');
}

const p2 = (n: number): string => String(n).padStart(2, '0');

/** An Excel date (exceljs gives the wall-clock time as UTC) as dd/MM/yyyy, with HH:mm:ss when it has a time. */
export function dateText(d: Date): string {
  const day = `${p2(d.getUTCDate())}/${p2(d.getUTCMonth() + 1)}/${String(d.getUTCFullYear()).padStart(4, '0')}`;
  const secs = d.getUTCHours() * 3600 + d.getUTCMinutes() * 60 + d.getUTCSeconds();
  return secs === 0 ? day : `${day} ${p2(d.getUTCHours())}:${p2(d.getUTCMinutes())}:${p2(d.getUTCSeconds())}`;
}

interface ReadCell {
  text: string;
  typed: TypedCell;
  /** an Excel error value (#N/A) */
  error?: string;
}

/** One exceljs cell value as text and as the typed value the rejects workbook writes back. */
export function readCell(value: unknown): ReadCell {
  if (value === null || value === undefined) return { text: '', typed: null };
  if (typeof value === 'string') return { text: value, typed: value };
  if (typeof value === 'number') return { text: numberText(value), typed: value };
  if (typeof value === 'boolean') return { text: value ? 'true' : 'false', typed: value };
  if (value instanceof Date) {
    if (Number.isNaN(value.getTime())) return { text: '', typed: null };
    return { text: dateText(value), typed: { d: value.toISOString() } };
  }
  const o = value as Record<string, unknown>;
  if (Array.isArray(o['richText'])) {
    const text = (o['richText'] as Array<{ text?: string }>).map((r) => r.text ?? '').join('');
    return { text, typed: text };
  }
  if (typeof o['error'] === 'string') return { text: o['error'], typed: o['error'], error: o['error'] };
  if ('formula' in o || 'sharedFormula' in o) return readCell(o['result']);
  if (typeof o['text'] === 'string') return { text: o['text'], typed: o['text'] };
  return { text: '', typed: null };
}

interface SheetRow {
  number: number;
  cells: ReadCell[];
}

interface ExcelRow {
  number: number;
  values: unknown;
}

interface ExcelSheet extends AsyncIterable<ExcelRow> {
  name?: string;
}

/** The rows of the chosen sheet, with the names of every sheet of the workbook (tab order). */
async function* sheetRows(path: string, o: XlsxOptions, facts: ParseFacts, stats: SourceStats): AsyncGenerator<SheetRow> {
  const { default: WorkbookReader } = await import('exceljs/lib/stream/xlsx/workbook-reader.js');
  const input = createReadStream(path);
  // bytes counted on their way to the reader (a 'data' listener on the file would start it flowing before the reader pipes it)
  const counted = new Transform({
    transform(chunk: Buffer, _enc, cb) {
      stats.bytes += chunk.length;
      cb(null, chunk);
    },
  });
  const opened = new Promise<void>((resolve, reject) => {
    input.once('open', () => resolve());
    input.once('error', reject);
  });
  try {
    await opened;
  } catch (err) {
    input.destroy();
    throw new InputError(`cannot read ${path}: ${(err as NodeJS.ErrnoException).code ?? errorMessage(err)}`, { cause: err, details: { file: path } });
  }
  input.pipe(counted);
  const reader = new WorkbookReader(counted, { sharedStrings: 'cache', styles: 'cache', hyperlinks: 'ignore', worksheets: 'emit', entries: 'ignore' });
  const model = reader as unknown as { model?: { sheets?: Array<{ name: string }> } };
  let found = false;
  try {
    for await (const ws of reader as unknown as AsyncIterable<ExcelSheet>) {
      const names = (model.model?.sheets ?? []).map((s) => s.name);
      facts.sheetNames = names;
      const wanted = typeof o.sheet === 'number' ? names[o.sheet - 1] : o.sheet;
      if (ws.name === undefined || wanted === undefined || ws.name.toLowerCase() !== wanted.toLowerCase()) continue;
      found = true;
      facts.sheetName = ws.name;
      for await (const row of ws) {
        const values = Array.isArray(row.values) ? (row.values as unknown[]) : [];
        const cells: ReadCell[] = [];
        for (let c = 1; c < values.length; c++) cells.push(readCell(values[c]));
        yield { number: row.number, cells };
      }
      break;
    }
  } catch (err) {
    if (err instanceof InputError) throw err;
    throw new InputError(`${path}: not a readable XLSX workbook (${errorMessage(err)}); an .xls or .ods file must be saved as .xlsx first`, {
      cause: err,
      details: { file: path },
    });
  } finally {
    input.destroy();
    counted.destroy();
  }
  if (!found) {
    const list = (facts.sheetNames ?? []).map((s) => `"${s}"`).join(', ') || 'none';
    const which = typeof o.sheet === 'number' ? `no sheet at position ${o.sheet}` : `no sheet "${o.sheet}"`;
    throw new InputError(`${path}: ${which} (the workbook's sheets: ${list})`, { details: { file: path } });
  }
}

/** The row's problem, if any: a cell holding an Excel error, or a character that is not text. */
function rowIssue(cells: ReadCell[], place: SheetPlace, names: readonly string[], rowNumber: number, o: XlsxOptions): RowIssue | undefined {
  const bad = cells.findIndex((c) => c.error !== undefined);
  if (bad >= 0) {
    const field = names[bad] ?? columnLetter(bad + 1);
    return {
      code: ParseIssueCode.CELL_ERROR,
      field,
      value: cells[bad]!.error!,
      sheet: place.name,
      cell: `${columnLetter(bad + 1)}${rowNumber}`,
      message: `field ${field}: the cell holds the Excel error ${cells[bad]!.error!} (sheet ${place.name}, cell ${columnLetter(bad + 1)}${rowNumber})`,
    };
  }
  return controlIssue(
    cells.map((c) => c.text),
    names,
    o.allowControlCharacters,
  );
}

function lastText(cells: readonly ReadCell[]): string | undefined {
  for (let i = cells.length - 1; i >= 0; i--) if (cells[i]!.text.trim() !== '') return cells[i]!.text.trim();
  return undefined;
}

/** Streams one sheet of a workbook as ParsedItems: the header row names the columns, each row after it is a row. */
export async function* parseXlsx(path: string, o: XlsxOptions, facts: ParseFacts, stats: SourceStats): AsyncGenerator<ParsedItem> {
  let columns: string[] | undefined = o.header ? undefined : o.columns;
  let place: SheetPlace | undefined;
  let headerFound = false;
  const nameOf = (i: number): string => (columns !== undefined && i < columns.length ? columns[i]! : columnLetter(i + 1));
  const placeFor = (sheet: string, width: number): SheetPlace => {
    const letters: Record<string, string> = {};
    for (let i = 0; i < width; i++) letters[nameOf(i)] = columnLetter(i + 1);
    return { name: sheet, letters };
  };
  if (columns) facts.columns = columns;
  for await (const r of sheetRows(path, o, facts, stats)) {
    // a rejects workbook (outbox/rejects-xlsx.ts) has its header on row 1, ending with the reason column
    const rejectsHeader = o.header && columns === undefined && r.number === 1 && lastText(r.cells) === REJECT_REASON_COLUMN;
    if (r.number < o.headerRow && !rejectsHeader && !headerFound) continue;
    if (o.header && columns === undefined) {
      if (r.number > o.headerRow) throw new InputError(`${path}: sheet ${facts.sheetName ?? ''} has no header row at row ${o.headerRow} (it is empty)`);
      const header = r.cells.map((c) => c.text.trim());
      while (header.length > 0 && header[header.length - 1] === '') header.pop();
      const h = resolveHeader(header);
      facts.header = header;
      facts.columns = columns = h.columns;
      facts.renamedColumns = h.renamed;
      headerFound = true;
      continue;
    }
    const cells = r.cells;
    if (o.skipEmptyRows && cells.every((c) => c.text === '')) continue;
    if (place === undefined || cells.length > Object.keys(place.letters).length)
      place = placeFor(facts.sheetName ?? '', Math.max(cells.length, columns?.length ?? 0));
    const width = Math.max(cells.length, columns?.length ?? 0);
    const names: string[] = [];
    const fields: Record<string, string> = {};
    const texts: string[] = [];
    for (let i = 0; i < width; i++) {
      const name = nameOf(i);
      names.push(name);
      const text = cells[i]?.text ?? '';
      texts.push(text);
      fields[name] = text;
    }
    const text = JSON.stringify(cells.map((c) => c.typed));
    const issue = rowIssue(cells, place, names, r.number, o);
    if (issue) {
      yield { kind: 'error', line: r.number, text, cells: texts, issue };
      continue;
    }
    const row: RawRow = { line: r.number, fields, cells: texts, text, sheet: place };
    yield { kind: 'row', row };
  }
  if (o.header && columns === undefined) facts.columns = [];
}
