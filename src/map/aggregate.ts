/**
 * One record per key where the target wants it: a stock position exported per lot or per warehouse while
 * StockSync takes one quantity per product and owner.
 *
 * - `aggregate: { sum: [quantity] }` in a mapping: the records of one natural key (the mapping's `key`, else the
 *   target's) become one record whose listed fields are the sums of theirs; every other field must be the same in
 *   all of them (else the key's rows are rejected together, naming the field and the lines). A key with a rejected
 *   row is rejected whole (its sum would be short), naming that row. The records are held until the end of the file
 *   (memory grows with the number of keys, not rows); each aggregate keeps all its rows (result line = the first,
 *   lineEnd = the last; rejects write every row back).
 * - Without `aggregate`, a target whose session cannot carry a key twice (StockSync: a WMS may refuse the whole
 *   chunk) rejects the second row of a key at map time, so `preview` and `run` say so before anything is sent.
 */
import type { RowIssue } from '../shared/errors.js';
import { SESSION_TARGETS, type Target } from '../wms/targets.js';
import type { MapOutput, MappedRecord } from './types.js';

export interface AggregateSpec {
  sum: string[];
}

/** Targets whose one session (file) must not carry the same key twice. */
const ONE_PER_KEY: ReadonlySet<Target> = new Set<Target>(SESSION_TARGETS);

interface Group {
  records: MappedRecord[];
  issues: RowIssue[];
}

/** Adds up numbers without the float noise of repeated additions (0.1 + 0.2 is 0.3). */
function addUp(values: readonly number[]): number {
  const s = values.reduce((a, b) => a + b, 0);
  return Number(s.toFixed(10));
}

function merge(key: string, g: Group, spec: AggregateSpec): MapOutput {
  const first = g.records[0]!;
  const last = g.records[g.records.length - 1]!;
  const raw = g.records.flatMap((r) => r.raw);
  const source = { line: first.source.line, ...(g.records.length > 1 ? { lineEnd: last.source.lineEnd ?? last.source.line } : {}) };
  const issues = [...g.issues];
  const payload: Record<string, unknown> = { ...first.payload };
  for (const f of spec.sum) {
    const values = g.records.map((r) => r.payload[f]).filter((v) => v !== undefined);
    const bad = values.find((v) => typeof v !== 'number');
    if (bad !== undefined)
      issues.push({
        code: 'aggregate_not_number',
        field: f,
        message: `line ${first.source.line}: field ${f}: cannot add up ${JSON.stringify(bad)} (not a number)`,
      });
    else if (values.length > 0) payload[f] = addUp(values as number[]);
  }
  const summed = new Set(spec.sum);
  for (const r of g.records.slice(1)) {
    for (const f of new Set([...Object.keys(first.payload), ...Object.keys(r.payload)])) {
      if (summed.has(f) || JSON.stringify(first.payload[f]) === JSON.stringify(r.payload[f])) continue;
      issues.push({
        code: 'aggregate_disagree',
        field: f,
        message: `line ${r.source.line}: field ${f}: ${JSON.stringify(r.payload[f])} differs from ${JSON.stringify(first.payload[f])} on line ${first.source.line} (rows of key '${key}' are added up into one record: every field but ${spec.sum.join(', ')} must agree)`,
      });
      break;
    }
  }
  if (issues.length > 0) return { ok: false, reject: { source, raw, issues, mapping: first.mapping, key, target: first.target } };
  return { ok: true, record: { ...first, source, payload, raw } };
}

/**
 * The mapping's outputs with the records of one key added up (`spec`), or, without a spec, the second record of a
 * key refused for targets whose session takes a key once. Rejects pass through as they come.
 */
export async function* aggregateOutputs(outputs: AsyncIterable<MapOutput>, spec: AggregateSpec | undefined, target: Target): AsyncGenerator<MapOutput> {
  if (spec === undefined) {
    if (!ONE_PER_KEY.has(target)) return yield* outputs;
    const seen = new Map<string, number>();
    for await (const out of outputs) {
      if (out.ok) {
        const at = seen.get(out.record.key);
        if (at !== undefined) {
          const r = out.record;
          const message = `line ${r.source.line}: key '${r.key}' appears again (first on line ${at}): one session cannot carry it twice; declare aggregate: { sum: [quantity] } in the mapping to add such rows up`;
          yield {
            ok: false,
            reject: { source: r.source, raw: r.raw, issues: [{ code: 'duplicate_key', message }], mapping: r.mapping, key: r.key, target: r.target },
          };
          continue;
        }
        seen.set(out.record.key, out.record.source.line);
      }
      yield out;
    }
    return;
  }
  const groups = new Map<string, Group>();
  for await (const out of outputs) {
    if (out.ok) {
      const g = groups.get(out.record.key);
      if (g) g.records.push(out.record);
      else groups.set(out.record.key, { records: [out.record], issues: [] });
      continue;
    }
    const key = out.reject.key;
    if (key !== undefined && key !== '') {
      const g = groups.get(key) ?? { records: [], issues: [] };
      groups.set(key, g);
      g.issues.push({
        code: 'aggregate_incomplete',
        message: `line ${out.reject.source.line} of key '${key}' was rejected: the rows of this key are not added up without it`,
      });
    }
    yield out;
  }
  for (const [key, g] of groups) {
    if (g.records.length === 0) continue;
    yield merge(key, g, spec);
  }
}
