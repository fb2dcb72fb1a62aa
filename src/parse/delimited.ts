/**
 * Delimited text (CSV/TXT). Physical lines come from the shared line reader; a small RFC 4180 state
 * machine assembles them into logical records (a quoted field may span lines) and splits cells.
 *
 * Why not csv-parse's stream: with `skip_records_with_error` it resumes AFTER the damage (an unclosed
 * quote swallows every following line up to the next quote and those rows are lost), its `info.lines`
 * count CRLF files oddly, and its `raw` text drops the line feed. Row-level recovery ("report line 5,
 * carry on with line 6") and byte-faithful raw text need the record boundaries in our hands. The quoting
 * rules are csv-parse's defaults (a quote opens a field only at its start; "" is a literal quote; after a
 * closing quote only the delimiter or the end of the record may follow) and the tests check this parser
 * against csv-parse on random input. Lines with no quote character (the common case) take a fast path.
 */
import { InputError } from '../shared/errors.js';
import { cutFields, unknownRecordIssue } from './fixed-width.js';
import type { DelimitedOptions, DelimitedRecord } from './options.js';
import { RecordTypes, TrailerChecks } from './records.js';
import { controlIssue, encodingIssue, readLines, type PhysicalLine, type SourceStats } from './text-source.js';
import { ParseIssueCode, REJECT_REASON_COLUMN, type ParseFacts, type ParsedItem, type RawRow } from './types.js';

/** Result of splitting one logical record. */
export type SplitResult =
  | { ok: true; cells: string[] }
  /** the record is incomplete: a quoted field is still open at the end of the text */
  | { ok: 'open' }
  | { ok: false; message: string; /** 0-based offset in the text where the problem was seen */ at: number };

export interface SplitOptions {
  delimiter: string;
  quote: string | false;
  escape?: string | undefined;
  trim?: boolean | undefined;
}

const isSpace = (c: string | undefined, delimiter: string): boolean => (c === ' ' || c === '\t') && c !== delimiter;

/**
 * Splits the full text of one logical record (embedded line breaks included) into cells.
 * Pure; the parser calls it per record, tests call it directly.
 */
export function splitRecord(text: string, o: SplitOptions): SplitResult {
  const d = o.delimiter;
  const q = o.quote;
  if (q === false || text.indexOf(q) === -1) return { ok: true, cells: text.split(d) };
  const esc = o.escape ?? q;
  const trim = o.trim === true;
  const n = text.length;
  const cells: string[] = [];
  let i = 0;
  for (;;) {
    // at the start of a field
    let j = i;
    if (trim) while (j < n && isSpace(text[j], d)) j++;
    if (j < n && text[j] === q) {
      // quoted field
      let field = '';
      let k = j + 1;
      for (;;) {
        const nq = text.indexOf(q, k);
        const ne: number = esc === q ? -1 : text.indexOf(esc, k);
        if (ne !== -1 && (nq === -1 || ne < nq)) {
          const next: string | undefined = text[ne + 1];
          if (next === q || next === esc) {
            field += text.slice(k, ne) + next;
            k = ne + 2;
          } else {
            field += text.slice(k, ne + 1);
            k = ne + 1;
          }
          continue;
        }
        if (nq === -1) return { ok: 'open' };
        if (esc === q && text[nq + 1] === q) {
          field += text.slice(k, nq + 1);
          k = nq + 2;
          continue;
        }
        field += text.slice(k, nq);
        k = nq + 1;
        break;
      }
      if (trim) while (k < n && isSpace(text[k], d)) k++;
      cells.push(field);
      if (k === n) return { ok: true, cells };
      if (text[k] !== d) {
        return { ok: false, at: k, message: `unexpected ${JSON.stringify(text[k])} after the closing quote of field ${cells.length}` };
      }
      i = k + 1;
      continue;
    }
    // unquoted field
    const end = text.indexOf(d, i);
    const value = end === -1 ? text.slice(i) : text.slice(i, end);
    const qi = value.indexOf(q);
    if (qi !== -1) {
      return { ok: false, at: i + qi, message: `quote inside unquoted field ${cells.length + 1} (quote the whole field and double the inner quote)` };
    }
    cells.push(value);
    if (end === -1) return { ok: true, cells };
    i = end + 1;
  }
}

/** Column names from header cells: trimmed, empty ones named column_<n>, duplicates suffixed _2, _3. */
export function resolveHeader(cells: string[]): { columns: string[]; renamed: Array<{ from: string; to: string }> } {
  const seen = new Map<string, number>();
  const used = new Set<string>();
  const columns: string[] = [];
  const renamed: Array<{ from: string; to: string }> = [];
  cells.forEach((cell, idx) => {
    let name = cell.trim();
    if (name === '') {
      name = `column_${idx + 1}`;
      renamed.push({ from: '', to: name });
    }
    const count = (seen.get(name) ?? 0) + 1;
    seen.set(name, count);
    if (used.has(name)) {
      let n = Math.max(count, 2);
      while (used.has(`${name}_${n}`)) n++;
      renamed.push({ from: name, to: `${name}_${n}` });
      name = `${name}_${n}`;
    }
    used.add(name);
    columns.push(name);
  });
  return { columns, renamed };
}

function joinText(lines: PhysicalLine[]): string {
  if (lines.length === 1) return lines[0]!.text;
  let s = '';
  for (let i = 0; i < lines.length; i++) {
    const l = lines[i]!;
    s += i === lines.length - 1 ? l.text : l.text + l.eol;
  }
  return s;
}

/** A logical record assembled from physical lines, or a problem met while assembling one. */
type Assembled = { kind: 'record'; lines: PhysicalLine[]; text: string; cells: string[] } | { kind: 'error'; item: ParsedItem };

/**
 * Reads a delimited file's physical lines into logical records (a quoted field may span lines): skipped,
 * empty and comment lines are passed over; a quote never closed (end of file, an over-long line, more
 * than maxLineLength characters) is reported at its first line and the lines after it are read again.
 * Returns the reader: undefined at the end of the file.
 */
function recordReader(path: string, o: DelimitedOptions, stats: SourceStats): () => Promise<Assembled | undefined> {
  const split: SplitOptions = { delimiter: o.delimiter, quote: o.quote, escape: o.escape, trim: o.trim };
  const source = readLines(path, { encoding: o.encoding, maxLineLength: o.maxLineLength }, stats, 'delimited');
  /** lines given back after a broken multi-line record, re-read before the source */
  let pending: PhysicalLine[] = [];
  let pendingAt = 0;
  const giveBack = (lines: PhysicalLine[]): void => {
    if (lines.length === 0) return;
    pending = pendingAt < pending.length ? [...lines, ...pending.slice(pendingAt)] : lines;
    pendingAt = 0;
  };
  const mayClose = (t: string): boolean => o.quote !== false && (t.indexOf(o.quote) !== -1 || (o.escape !== undefined && t.indexOf(o.escape) !== -1));
  let skipped = 0;
  /** the physical lines of the record being assembled */
  let rec: PhysicalLine[] = [];
  let recSize = 0;

  const next = async (): Promise<PhysicalLine | undefined> => {
    if (pendingAt < pending.length) return pending[pendingAt++];
    const r = await source.next();
    return r.done ? undefined : r.value;
  };

  const brokenQuote = (why: string): Assembled => {
    // Report only the first line of the broken record and give the others back to be re-read.
    const first = rec[0]!;
    giveBack(rec.slice(1));
    rec = [];
    recSize = 0;
    return { kind: 'error', item: { kind: 'error', line: first.line, text: first.text, issue: { code: ParseIssueCode.BAD_QUOTE, message: why } } };
  };
  const unbalanced = (): Assembled => brokenQuote(`quote opened at line ${rec[0]!.line} is not closed within ${o.maxLineLength} characters (unbalanced quote)`);

  return async function read(): Promise<Assembled | undefined> {
    for (;;) {
      const pl = await next();
      if (pl === undefined) {
        if (rec.length === 0) return undefined;
        return brokenQuote(`quote opened at line ${rec[0]!.line} is never closed (end of file)`);
      }
      if (rec.length === 0) {
        if (skipped < o.skipLines) {
          skipped++;
          continue;
        }
        if (pl.tooLong !== undefined) {
          const message = `line is ${pl.tooLong} characters long, above the limit of ${o.maxLineLength}`;
          return { kind: 'error', item: { kind: 'error', line: pl.line, issue: { code: ParseIssueCode.LINE_TOO_LONG, message } } };
        }
        if (pl.text.length === 0 && o.skipEmptyLines) continue;
        if (o.comment !== undefined && pl.text.startsWith(o.comment)) continue;
      } else if (pl.tooLong !== undefined) {
        giveBack([pl]);
        return brokenQuote(`quote opened at line ${rec[0]!.line} is not closed before an over-long line ${pl.line}`);
      }
      rec.push(pl);
      recSize += pl.text.length + pl.eol.length;
      // still inside a quoted field: a line without quote (or escape) characters cannot close it
      const stillOpen = rec.length > 1 && !mayClose(pl.text);
      const text = stillOpen ? '' : joinText(rec);
      const res = stillOpen ? undefined : splitRecord(text, split);
      if (res === undefined || res.ok === 'open') {
        if (pl.eol === '') continue; // end of file: handled on the next turn
        if (recSize > o.maxLineLength) return unbalanced();
        continue;
      }
      const lines = rec;
      rec = [];
      recSize = 0;
      if (res.ok === true) return { kind: 'record', lines, text, cells: res.cells };
      if (lines.length > 1) {
        rec = lines;
        return brokenQuote(`quote opened at line ${lines[0]!.line} is not closed properly: ${res.message} at line ${lines[lines.length - 1]!.line}`);
      }
      const issue = { code: ParseIssueCode.BAD_QUOTE, message: `${res.message} (column ${res.at + 1})` };
      return { kind: 'error', item: { kind: 'error', line: lines[0]!.line, text, issue } };
    }
  };
}

/** A complete record after the header as a row, or the reason it is not one. */
function recordItem(
  r: Extract<Assembled, { kind: 'record' }>,
  o: DelimitedOptions,
  facts: ParseFacts,
  columns: string[] | undefined,
  expected: number,
  encoding: DelimitedOptions['encoding'],
): ParsedItem {
  const { lines, text, cells } = r;
  const first = lines[0]!;
  const last = lines[lines.length - 1]!;
  const loc = lines.length > 1 ? { line: first.line, lineEnd: last.line } : { line: first.line };
  if (!o.relaxColumnCount && cells.length !== expected) {
    return { kind: 'error', ...loc, text, cells, issue: { code: ParseIssueCode.RAGGED_ROW, message: `expected ${expected} columns, found ${cells.length}` } };
  }
  const encodingProblem = encodingIssue(text, encoding);
  if (encodingProblem) return { kind: 'error', ...loc, text, cells, issue: encodingProblem };
  // a row equal to the header (the reason column a rejects file adds aside: a re-dropped rejects file
  // holding such a row must be refused again, not read as data)
  if (
    facts.header &&
    cells.length === facts.header.length &&
    cells.every((c, i) => c.trim() === facts.header![i] || facts.header![i] === REJECT_REASON_COLUMN)
  ) {
    return {
      kind: 'error',
      ...loc,
      text,
      cells,
      issue: { code: ParseIssueCode.REPEATED_HEADER, message: 'the row repeats the header line (two exports joined into one file?)' },
    };
  }
  // in a tab-separated file a tab inside a field was quoted on purpose, like a ';' in a ';' file
  const control = controlIssue(cells, columns ?? [], o.allowControlCharacters, o.delimiter === '\t');
  if (control) return { kind: 'error', ...loc, text, cells, issue: control };
  // a byte-order mark inside the file (files concatenated by the ERP) is not data
  if (text.includes('\uFEFF')) for (let c = 0; c < cells.length; c++) cells[c] = cells[c]!.replace(/\uFEFF/g, '');
  const fields: Record<string, string> = {};
  for (let c = 0; c < cells.length; c++) {
    const key = columns !== undefined && c < columns.length ? columns[c]! : String(c);
    fields[key] = o.trim ? cells[c]!.trim() : cells[c]!;
  }
  const row: RawRow = { ...loc, fields, cells, text };
  return { kind: 'row', row };
}

/** Streams a delimited file as ParsedItems. `facts` is filled while reading (header, columns, newline). */
export async function* parseDelimited(path: string, o: DelimitedOptions, facts: ParseFacts, stats: SourceStats): AsyncGenerator<ParsedItem> {
  const read = recordReader(path, o, stats);
  let columns: string[] | undefined = o.header ? undefined : o.columns;
  let expected: number | undefined = columns?.length;
  let headerDone = !o.header;
  if (columns) facts.columns = columns;
  // a multi-record file (records): every record is read with the layout of its type (records.ts)
  const trailers = o.records ? new TrailerChecks(path, o.trailer) : undefined;
  const typed = o.records ? typedRecordReader(o, o.records, trailers as TrailerChecks) : undefined;
  for (let r = await read(); r !== undefined; r = await read()) {
    if (r.kind === 'error') {
      if (!headerDone) throw headerError(path, r.item);
      if (trailers && r.item.kind === 'error') trailers.see({ line: r.item.line, type: undefined });
      yield r.item;
      continue;
    }
    if (!headerDone) {
      headerDone = true;
      const h = resolveHeader(r.cells);
      facts.header = r.cells.map((c) => c.trim());
      facts.columns = h.columns;
      facts.renamedColumns = h.renamed;
      columns = h.columns;
      expected = columns.length;
      continue;
    }
    if (typed) {
      yield typed(r);
      continue;
    }
    if (expected === undefined) expected = r.cells.length;
    yield recordItem(r, o, facts, columns, expected, stats.encoding ?? o.encoding);
  }
  trailers?.end();
  if (facts.newline === undefined && stats.newline !== undefined) facts.newline = stats.newline;
  if (o.header && !headerDone) {
    // an empty file (or only skipped lines): no header, no rows; not an error
    facts.columns = [];
  }
}

/**
 * Rows of a multi-record file: the record type of each record (its cells, its prefix or a pattern), its cells named
 * by the type's columns (or cut by its fields in a mixed file), the trailer checks fed with every record.
 */
function typedRecordReader(
  o: DelimitedOptions,
  records: DelimitedRecord[],
  trailers: TrailerChecks,
): (r: Extract<Assembled, { kind: 'record' }>) => ParsedItem {
  const types = new RecordTypes(records);
  return (r) => {
    const { lines, text, cells } = r;
    const first = lines[0]!;
    const loc = lines.length > 1 ? { line: first.line, lineEnd: lines[lines.length - 1]!.line } : { line: first.line };
    const rec = types.find(text, cells);
    if (rec === undefined) {
      trailers.see({ ...loc, type: undefined, text, cells });
      return { kind: 'error', ...loc, text, cells, issue: unknownRecordIssue(text) };
    }
    const fields: Record<string, string> = {};
    if (rec.fields) Object.assign(fields, cutFields(text, { fields: rec.fields }));
    else {
      const names = rec.columns;
      for (let c = 0; c < cells.length; c++) {
        const name = names !== undefined && c < names.length && names[c] !== '' ? names[c]! : String(c);
        fields[name] = o.trim ? cells[c]!.trim() : cells[c]!;
      }
    }
    trailers.see({ ...loc, type: rec.type, fields, text, cells });
    const recordType = rec.type;
    if (rec.fields === undefined && rec.columns !== undefined && !o.relaxColumnCount && cells.length !== rec.columns.length) {
      const message = `record ${rec.type}: expected ${rec.columns.length} columns, found ${cells.length}`;
      return { kind: 'error', ...loc, text, cells, recordType, issue: { code: ParseIssueCode.RAGGED_ROW, message } };
    }
    const encodingProblem = encodingIssue(text, o.encoding);
    if (encodingProblem) return { kind: 'error', ...loc, text, cells, recordType, issue: encodingProblem };
    const names = Object.keys(fields);
    const control = controlIssue(
      names.map((n) => fields[n] ?? ''),
      names,
      o.allowControlCharacters,
      o.delimiter === '\t',
    );
    if (control) return { kind: 'error', ...loc, text, cells, recordType, issue: control };
    return { kind: 'row', row: { ...loc, fields, cells, recordType, text } };
  };
}

function headerError(path: string, item: ParsedItem): InputError {
  if (item.kind !== 'error') return new InputError(`${path}: bad header`);
  return new InputError(`${path}:${item.line}: the header line cannot be read: ${item.issue.message}`, {
    details: { file: path, line: item.line },
  });
}
