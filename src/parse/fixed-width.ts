/**
 * Fixed-width text (CNAB 240/400, mainframe layouts): one record per physical line, its type found
 * by literals at fixed positions, its fields cut by 1-based start and length. Values are not trimmed
 * (leading zeros and blanks are data; the mapping decides). Right-trimmed lines are tolerated: a field
 * past the end of a short line reads what is there, or ''.
 */
import type { RowIssue } from '../shared/errors.js';
import type { FixedRecord, FixedWidthOptions } from './options.js';
import { RecordTypes, TrailerChecks } from './records.js';
import { controlIssue, encodingIssue, readLines, type SourceStats } from './text-source.js';
import { ParseIssueCode, type ParseFacts, type ParsedItem } from './types.js';

/** Finds the record type of a line (pure; exported for tests and the mapping preview). */
export function matchRecord(line: string, records: FixedRecord[]): FixedRecord | undefined {
  return new RecordTypes(records).find(line);
}

/** Cuts the fields of a record out of a line (`shift`: characters to the right, for a repeated occurrence). */
export function cutFields(line: string, record: Pick<FixedRecord, 'fields'>, shift = 0): Record<string, string> {
  const fields: Record<string, string> = {};
  for (const f of record.fields) fields[f.name] = line.slice(f.start - 1 + shift, f.start - 1 + shift + f.length);
  return fields;
}

/** The fields of each occurrence of a record whose fields repeat (`occurs`); blank ones after the first left out. */
function occurrences(line: string, rec: FixedRecord, first: Record<string, string>): Array<Record<string, string>> {
  const all = [first];
  if (!rec.occurs) return all;
  for (let i = 1; i < rec.occurs.times; i++) {
    const f = cutFields(line, rec, i * rec.occurs.every);
    if (Object.values(f).some((v) => v.trim() !== '')) all.push(f);
  }
  return all;
}

export async function* parseFixedWidth(path: string, o: FixedWidthOptions, facts: ParseFacts, stats: SourceStats): AsyncGenerator<ParsedItem> {
  const types = new RecordTypes(o.records);
  // layout consistency (trailer type and field declared...) is checked by checkParseOptions in openParser
  const trailers = new TrailerChecks(path, o.trailer);
  const limit = o.lineLength !== undefined ? Math.min(o.lineLength, o.maxLineLength) : o.maxLineLength;
  for await (const pl of readLines(path, { encoding: o.encoding, maxLineLength: o.maxLineLength }, stats, 'fixed-width')) {
    if (pl.tooLong === undefined && pl.text.length === 0 && o.skipEmptyLines) continue;
    if (pl.tooLong === undefined && o.comment !== undefined && pl.text.startsWith(o.comment)) continue;
    const length = pl.tooLong ?? pl.text.length;
    if (length > limit) {
      trailers.see({ line: pl.line, type: undefined });
      yield {
        kind: 'error',
        line: pl.line,
        ...(pl.tooLong === undefined ? { text: pl.text } : {}),
        issue: {
          code: ParseIssueCode.LINE_TOO_LONG,
          message:
            o.lineLength !== undefined
              ? `line is ${length} characters long, above the layout's ${o.lineLength}`
              : `line is ${length} characters long, above the limit of ${o.maxLineLength}`,
        },
      };
      continue;
    }
    const line = pl.text;
    const rec = types.find(line);
    if (rec === undefined) {
      trailers.see({ line: pl.line, type: undefined, text: line });
      yield { kind: 'error', line: pl.line, text: line, issue: unknownRecordIssue(line) };
      continue;
    }
    const fields = cutFields(line, rec);
    trailers.see({ line: pl.line, type: rec.type, fields, text: line });
    const encodingProblem = encodingIssue(line, stats.encoding ?? o.encoding);
    if (encodingProblem) {
      yield { kind: 'error', line: pl.line, text: line, recordType: rec.type, issue: encodingProblem };
      continue;
    }
    const names = Object.keys(fields);
    const control = controlIssue(
      names.map((n) => String(fields[n] ?? '')),
      names,
      o.allowControlCharacters,
    );
    if (control) {
      yield { kind: 'error', line: pl.line, text: line, recordType: rec.type, issue: control };
      continue;
    }
    for (const f of occurrences(line, rec, fields)) yield { kind: 'row', row: { line: pl.line, fields: f, recordType: rec.type, text: line } };
  }
  if (stats.newline !== undefined) facts.newline = stats.newline;
  trailers.end();
}

/** A line no record type of the layout matches (delimited and fixed-width alike). */
export function unknownRecordIssue(line: string): RowIssue {
  return {
    code: ParseIssueCode.UNKNOWN_RECORD,
    value: line.slice(0, 20),
    message: `no record type of the layout matches this line (starts with ${JSON.stringify(line.slice(0, 20))})`,
  };
}
