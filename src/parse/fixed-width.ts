/**
 * Fixed-width text (CNAB 240/400, mainframe layouts): one record per physical line, its type found
 * by literals at fixed positions, its fields cut by 1-based start and length. Values are not trimmed
 * (leading zeros and blanks are data; the mapping decides). Right-trimmed lines are tolerated: a field
 * past the end of a short line reads what is there, or ''.
 */
import { InputError } from '../shared/errors.js';
import type { FixedRecord, FixedWidthOptions, RecordMatch } from './options.js';
import { controlIssue, encodingIssue, readLines, type SourceStats } from './text-source.js';
import { ParseIssueCode, type ParseFacts, type ParsedItem } from './types.js';

function matches(line: string, m: RecordMatch): boolean {
  if (m === 'default') return true;
  const list = Array.isArray(m) ? m : [m];
  for (const c of list) {
    if (line.startsWith(c.value, c.start - 1) === false) return false;
  }
  return true;
}

/** Record types in matching order: literal matches in declared order, then the 'default' one. */
function orderRecords(records: FixedRecord[]): FixedRecord[] {
  return [...records.filter((r) => r.match !== 'default'), ...records.filter((r) => r.match === 'default')];
}

/** Finds the record type of a line (pure; exported for tests and the mapping preview). */
export function matchRecord(line: string, records: FixedRecord[]): FixedRecord | undefined {
  for (const r of orderRecords(records)) if (matches(line, r.match)) return r;
  return undefined;
}

/** Cuts the fields of a record out of a line. */
export function cutFields(line: string, record: FixedRecord): Record<string, string> {
  const fields: Record<string, string> = {};
  for (const f of record.fields) fields[f.name] = line.slice(f.start - 1, f.start - 1 + f.length);
  return fields;
}

export async function* parseFixedWidth(path: string, o: FixedWidthOptions, facts: ParseFacts, stats: SourceStats): AsyncGenerator<ParsedItem> {
  const ordered = orderRecords(o.records);
  const trailer = o.trailer;
  // layout consistency (trailer type and field declared...) is checked by checkParseOptions in openParser
  let all = 0;
  let trailerSeen = false;
  const byType = new Map<string, number>();
  /** records of unknown type (no type) are counted under this key */
  const UNKNOWN = '\u0000unknown';
  const limit = o.lineLength !== undefined ? Math.min(o.lineLength, o.maxLineLength) : o.maxLineLength;
  for await (const pl of readLines(path, { encoding: o.encoding, maxLineLength: o.maxLineLength }, stats, 'fixed-width')) {
    if (pl.tooLong === undefined && pl.text.length === 0 && o.skipEmptyLines) continue;
    all++;
    const length = pl.tooLong ?? pl.text.length;
    if (length > limit) {
      byType.set(UNKNOWN, (byType.get(UNKNOWN) ?? 0) + 1);
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
    let rec: FixedRecord | undefined;
    for (const r of ordered) {
      if (matches(line, r.match)) {
        rec = r;
        break;
      }
    }
    if (rec === undefined) {
      byType.set(UNKNOWN, (byType.get(UNKNOWN) ?? 0) + 1);
      yield {
        kind: 'error',
        line: pl.line,
        text: line,
        issue: {
          code: ParseIssueCode.UNKNOWN_RECORD,
          value: line.slice(0, 20),
          message: `no record type of the layout matches this line (starts with ${JSON.stringify(line.slice(0, 20))})`,
        },
      };
      continue;
    }
    const fields = cutFields(line, rec);
    if (trailer && rec.type === trailer.type) {
      trailerSeen = true;
      const rawCount = fields[trailer.countField] ?? '';
      const t = rawCount.trim();
      if (!/^\d+$/.test(t)) {
        throw new InputError(`${path}:${pl.line}: trailer field ${trailer.countField} is not a count (value "${rawCount}")`, {
          details: { file: path, line: pl.line },
        });
      }
      const declared = Number(t);
      let counted: number;
      if (trailer.counts === 'all') counted = all;
      else if (trailer.counts === 'detail') {
        counted = 0;
        for (const [type, n] of byType) if (type !== 'header' && type !== trailer.type) counted += n;
      } else {
        counted = 0;
        for (const type of trailer.counts) counted += byType.get(type) ?? 0;
      }
      counted += trailer.offset;
      if (declared !== counted) {
        const what = Array.isArray(trailer.counts) ? trailer.counts.join('+') : trailer.counts;
        throw new InputError(
          `${path}:${pl.line}: trailer count mismatch: the trailer (${trailer.countField}) declares ${declared} records, ` +
            `the file has ${counted} (${what}${trailer.offset ? `, offset ${trailer.offset}` : ''}): the file may be truncated or damaged`,
          { details: { file: path, line: pl.line, declared, counted } },
        );
      }
    }
    byType.set(rec.type, (byType.get(rec.type) ?? 0) + 1);
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
    yield { kind: 'row', row: { line: pl.line, fields, recordType: rec.type, text: line } };
  }
  if (stats.newline !== undefined) facts.newline = stats.newline;
  if (trailer && !trailerSeen && all > 0) {
    throw new InputError(`${path}: no trailer record (type "${trailer.type}") found: the file may be truncated`, {
      details: { file: path },
    });
  }
}
