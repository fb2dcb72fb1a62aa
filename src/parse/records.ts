/**
 * Multi-record files, the same for delimited and fixed-width text: which record type a line is (a literal at a
 * position, a cell value, a prefix or a pattern; declared order, "default" last: Spring Batch's
 * PatternMatchingCompositeLineMapper, Talend's tFileInputMultiSchema), and the trailer checks (counts, sums,
 * per-code counts) that make a truncated or damaged file fail as a whole. See docs/PARSERS.md.
 */
import { InputError } from '../shared/errors.js';
import type { DelimitedRecord, FixedRecord, RecordMatch, TrailerCheck } from './options.js';

type LineTest = (line: string, cells: readonly string[] | undefined) => boolean;

function compileOne(m: Exclude<RecordMatch, 'default' | unknown[]>): LineTest {
  if ('pattern' in m) {
    const re = new RegExp(m.pattern);
    return (line) => re.test(line);
  }
  if ('prefix' in m) {
    const prefix = m.prefix;
    return (line) => line.startsWith(prefix);
  }
  if ('col' in m) {
    const { col, value } = m;
    return (_line, cells) => cells !== undefined && cells[col] === value;
  }
  const { start, value } = m;
  return (line) => line.startsWith(value, start - 1);
}

/** A record match as a function of the line (and its cells, in a delimited file). */
export function compileMatch(m: RecordMatch): LineTest {
  if (m === 'default') return () => true;
  const tests = (Array.isArray(m) ? m : [m]).map(compileOne);
  if (tests.length === 1) return tests[0] as LineTest;
  return (line, cells) => tests.every((t) => t(line, cells));
}

/** The record types of a layout in matching order: declared order, then the "default" one. */
export class RecordTypes<R extends FixedRecord | DelimitedRecord> {
  private readonly ordered: Array<{ rec: R; test: LineTest }>;
  constructor(records: readonly R[]) {
    const sorted = [...records.filter((r) => r.match !== 'default'), ...records.filter((r) => r.match === 'default')];
    this.ordered = sorted.map((rec) => ({ rec, test: compileMatch(rec.match) }));
  }
  find(line: string, cells?: readonly string[]): R | undefined {
    for (const o of this.ordered) if (o.test(line, cells)) return o.rec;
    return undefined;
  }
}

// ---------------------------------------------------------------------------------------------
// trailers
// ---------------------------------------------------------------------------------------------

/** A decimal as an integer of 10^-scale units (bigint: totals of a large file never lose a cent). */
interface Decimal {
  units: bigint;
  scale: number;
}

type SumSpec = NonNullable<TrailerCheck['sums']>[number];

function readDecimal(raw: string, sum: Pick<SumSpec, 'scale' | 'decimal'>): Decimal | undefined {
  const t = raw.trim();
  if (sum.scale !== undefined) return /^-?\d+$/.test(t) ? { units: BigInt(t), scale: sum.scale } : undefined;
  const re = sum.decimal === ',' ? /^(-?)(\d+)(?:,(\d+))?$/ : /^(-?)(\d+)(?:\.(\d+))?$/;
  const m = re.exec(t);
  if (!m) return undefined;
  const frac = m[3] ?? '';
  return { units: BigInt(`${m[1]}${m[2]}${frac}`), scale: frac.length };
}

function align(a: Decimal, scale: number): bigint {
  return a.units * 10n ** BigInt(scale - a.scale);
}

function addDecimal(a: Decimal, b: Decimal): Decimal {
  const scale = Math.max(a.scale, b.scale);
  return { units: align(a, scale) + align(b, scale), scale };
}

function sameDecimal(a: Decimal, b: Decimal): boolean {
  const scale = Math.max(a.scale, b.scale);
  return align(a, scale) === align(b, scale);
}

function showDecimal(d: Decimal): string {
  const neg = d.units < 0n;
  const s = (neg ? -d.units : d.units).toString().padStart(d.scale + 1, '0');
  const text = d.scale === 0 ? s : `${s.slice(0, s.length - d.scale)}.${s.slice(s.length - d.scale)}`;
  return neg ? `-${text}` : text;
}

/** What a trailer has counted and summed since its span began (the file, or its `since` record). */
interface Span {
  from: number;
  all: number;
  byType: Map<string, number>;
  sums: Decimal[];
}

const UNKNOWN = '\u0000unknown';

/** One record line as the trailer checks see it. */
export interface SeenRecord {
  line: number;
  /** undefined: a line no record type matched (or too long to read) */
  type: string | undefined;
  fields?: Readonly<Record<string, string>>;
  text?: string;
  cells?: readonly string[];
}

/**
 * The trailer checks of one file: call `see` for every record line in order (unknown ones too; never comments or
 * skipped lines), `end` after the last. A mismatch throws InputError naming the file, the trailer line, its record
 * type and field, and both numbers: the whole file fails (nothing of it is sent).
 */
export class TrailerChecks {
  private readonly list: TrailerCheck[];
  private readonly spans: Span[];
  private readonly seen: boolean[];
  private records = 0;
  /** per-code trailers (SPED 9900): the lines per code, and the counts the trailers declare */
  private readonly codeCounts = new Map<string, number>();
  private readonly declaredPerCode: Array<{ line: number; t: TrailerCheck; code: string; declared: number }> = [];

  constructor(
    private readonly path: string,
    trailer: TrailerCheck | TrailerCheck[] | undefined,
  ) {
    this.list = trailer === undefined ? [] : Array.isArray(trailer) ? trailer : [trailer];
    this.spans = this.list.map(() => this.newSpan(1));
    this.seen = this.list.map(() => false);
  }

  get active(): boolean {
    return this.list.length > 0;
  }

  private newSpan(from: number): Span {
    return { from, all: 0, byType: new Map(), sums: [] };
  }

  see(r: SeenRecord): void {
    if (this.list.length === 0) return;
    this.records++;
    this.countCode(r);
    this.list.forEach((t, i) => {
      if (t.since !== undefined && r.type === t.since) this.spans[i] = this.newSpan(r.line);
      const span = this.spans[i] as Span;
      span.all++;
      if (r.type === t.type) {
        this.seen[i] = true;
        this.check(t, span, r);
      }
      const key = r.type ?? UNKNOWN;
      span.byType.set(key, (span.byType.get(key) ?? 0) + 1);
      t.sums?.forEach((sum, k) => {
        const types = typeof sum.of.type === 'string' ? [sum.of.type] : sum.of.type;
        if (r.type === undefined || !types.includes(r.type)) return;
        const v = this.number(r, sum.of.field, sum, 'value');
        span.sums[k] = span.sums[k] === undefined ? v : addDecimal(span.sums[k], v);
      });
    });
  }

  private countCode(r: SeenRecord): void {
    for (const t of this.list) {
      if (!t.perCode) continue;
      const code = this.codeOf(t.perCode.code, r);
      if (code !== undefined) this.codeCounts.set(code, (this.codeCounts.get(code) ?? 0) + 1);
      return;
    }
  }

  private codeOf(at: NonNullable<TrailerCheck['perCode']>['code'], r: SeenRecord): string | undefined {
    if ('col' in at) return r.cells?.[at.col];
    return r.text?.slice(at.start - 1, at.start - 1 + at.length);
  }

  private number(r: SeenRecord, field: string, sum: Pick<SumSpec, 'scale' | 'decimal'>, what: string): Decimal {
    const raw = r.fields?.[field] ?? '';
    const v = readDecimal(raw, sum);
    if (v === undefined) {
      const form = sum.scale !== undefined ? `digits with ${sum.scale} implied decimals` : `a number with decimal '${sum.decimal}'`;
      throw new InputError(`${this.path}:${r.line}: record ${r.type ?? '?'}, field ${field}: ${what} ${JSON.stringify(raw)} is not ${form}`, {
        details: { file: this.path, line: r.line, recordType: r.type, field },
      });
    }
    return v;
  }

  private count(r: SeenRecord, t: TrailerCheck, field: string): number {
    const raw = r.fields?.[field] ?? '';
    if (!/^\d+$/.test(raw.trim())) {
      throw new InputError(`${this.path}:${r.line}: trailer field ${field} is not a count (value "${raw}")`, {
        details: { file: this.path, line: r.line, recordType: t.type, field },
      });
    }
    return Number(raw.trim());
  }

  private check(t: TrailerCheck, span: Span, r: SeenRecord): void {
    const countField = t.countField;
    if (t.perCode && countField !== undefined) {
      const code = (r.fields?.[t.perCode.codeField] ?? '').trim();
      this.declaredPerCode.push({ line: r.line, t, code, declared: this.count(r, t, countField) });
      return;
    }
    const scope = t.since !== undefined ? `the ${t.since} block from line ${span.from}` : 'the file';
    if (countField !== undefined) this.checkCount(t, span, r, countField, scope);
    this.checkSums(t, span, r, scope);
  }

  private checkCount(t: TrailerCheck, span: Span, r: SeenRecord, countField: string, scope: string): void {
    const declared = this.count(r, t, countField);
    let counted: number;
    if (t.counts === 'all') counted = span.all;
    else if (t.counts === 'detail') {
      counted = 0;
      for (const [type, n] of span.byType) if (type !== 'header' && type !== t.type) counted += n;
    } else {
      counted = 0;
      for (const type of t.counts) counted += span.byType.get(type) ?? 0;
    }
    counted += t.offset;
    if (declared !== counted) {
      const what = Array.isArray(t.counts) ? t.counts.join('+') : t.counts;
      throw new InputError(
        `${this.path}:${r.line}: trailer count mismatch: the trailer ${t.type} (${countField}) declares ${declared} records, ` +
          `${scope} has ${counted} (${what}${t.offset ? `, offset ${t.offset}` : ''}): the file may be truncated or damaged`,
        { details: { file: this.path, line: r.line, recordType: t.type, field: countField, declared, counted } },
      );
    }
  }

  private checkSums(t: TrailerCheck, span: Span, r: SeenRecord, scope: string): void {
    t.sums?.forEach((sum, k) => {
      const declaredSum = this.number(r, sum.field, sum, 'declared total');
      const actual = span.sums[k] ?? { units: 0n, scale: 0 };
      if (sameDecimal(declaredSum, actual)) return;
      const of = typeof sum.of.type === 'string' ? sum.of.type : sum.of.type.join('+');
      throw new InputError(
        `${this.path}:${r.line}: trailer sum mismatch: the trailer ${t.type} (${sum.field}) declares ${showDecimal(declaredSum)}, ` +
          `the ${of} records of ${scope} add up to ${showDecimal(actual)} (field ${sum.of.field}): the file may be truncated or damaged`,
        { details: { file: this.path, line: r.line, recordType: t.type, field: sum.field } },
      );
    });
  }

  /** At the end of the file: every declared trailer was seen, and per-code counts agree. */
  end(): void {
    if (this.records === 0) return;
    this.list.forEach((t, i) => {
      if (!this.seen[i]) {
        throw new InputError(`${this.path}: no trailer record (type "${t.type}") found: the file may be truncated`, { details: { file: this.path } });
      }
    });
    for (const d of this.declaredPerCode) {
      const counted = this.codeCounts.get(d.code) ?? 0;
      if (counted + d.t.offset !== d.declared) {
        throw new InputError(
          `${this.path}:${d.line}: trailer count mismatch: the trailer ${d.t.type} (${d.t.countField}) declares ${d.declared} ` +
            `records of code ${d.code}, the file has ${counted}: the file may be truncated or damaged`,
          { details: { file: this.path, line: d.line, recordType: d.t.type, field: d.t.countField, declared: d.declared, counted } },
        );
      }
    }
  }
}
