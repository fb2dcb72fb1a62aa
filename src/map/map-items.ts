/**
 * Mapping parsed items with a compiled plan, streaming: flat records one per row, documents by grouping
 * (documents.ts); parse errors and rows the filter could not judge become rejects.
 */
import { isMissing, type EvalState } from './evaluation.js';
import { evalFields, Issues } from './fields.js';
import { mapGroupedByKey } from './documents.js';
import { mapRecordTypes } from './record-groups.js';
import { recordKey } from './keys.js';
import { checkReferenceNeeds, location, makeReject, parseErrorReject, type Items, type MapRun, type MappingPlan } from './plan.js';
import { RowFail, safeString } from './transforms.js';
import type { MapContext, MappedRecord, MapOutput } from './types.js';
import type { RawRow } from '../parse/types.js';
import { validate } from './validate.js';

/** One row to one record (or its reject). */
function mapRow(plan: MappingPlan, row: RawRow, st: EvalState): MapOutput {
  const issues = new Issues();
  const payload = evalFields(plan.headerFields, plan.headerImplicit, row, st, issues);
  const key = recordKey(plan.target, plan.keyEval, payload, row, st, issues);
  let attachmentPath: string | undefined;
  if (plan.attachmentEval) {
    try {
      const a = plan.attachmentEval(row, st);
      if (!isMissing(a)) attachmentPath = typeof a === 'string' ? a : safeString(a);
    } catch (err) {
      if (err instanceof RowFail) issues.add(st.line, 'attachmentPath', err);
      else throw err;
    }
  }
  if (issues.list === undefined) {
    const line = st.line;
    const v = validate(plan.schema, plan.fastCheck, payload, () => line, plan.target);
    if (v) issues.list = v;
  }
  if (issues.list !== undefined) return makeReject(plan, [row], issues.list, key);
  const record: MappedRecord = {
    target: plan.target,
    op: plan.op,
    key: key as string,
    source: location(row, row, plan.xml),
    payload,
    mapping: plan.name,
    raw: [row],
  };
  if (attachmentPath !== undefined) record.attachmentPath = attachmentPath;
  return { ok: true, record };
}

async function* mapFlat(run: MapRun, items: Items): AsyncGenerator<MapOutput> {
  checkReferenceNeeds(run);
  const { plan, st, stats } = run;
  for await (const item of items) {
    if (stats) stats.rows++;
    if (item.kind === 'error') {
      yield run.out(parseErrorReject(plan, item));
      continue;
    }
    const row = item.row;
    st.line = row.line;
    const keep = run.passes(row);
    if (keep === false) {
      if (stats) stats.skipped++;
      continue;
    }
    if (keep !== true) {
      yield run.out(keep);
      continue;
    }
    const skip = excludedBy(run, row);
    if (skip !== undefined) {
      if (skip !== null) yield run.out(skip);
      continue;
    }
    yield run.out(mapRow(plan, row, st));
  }
}

/**
 * The first `skip` rule that excludes the row: told to the context's sink (undefined: no rule excludes it, null:
 * excluded), or the row's reject when a rule could not be evaluated.
 */
function excludedBy(run: MapRun, row: RawRow): MapOutput | null | undefined {
  const { plan, st } = run;
  for (const rule of plan.skips) {
    try {
      if (!rule.when(row, st)) continue;
    } catch (err) {
      if (!(err instanceof RowFail)) throw err;
      const issues = new Issues();
      issues.add(row.line, 'skip', err);
      return makeReject(plan, [row], issues.list ?? [], undefined);
    }
    if (run.stats) run.stats.excluded = (run.stats.excluded ?? 0) + 1;
    st.ctx.unsent?.excluded(row.line, plan.name, rule.reason, row.lineEnd, plan.target);
    return null;
  }
  return undefined;
}

/** Maps parsed items (rows and parse errors) to records, documents and rejects, streaming. */
export function mapItems(plan: MappingPlan, items: Items, ctx: MapContext): AsyncGenerator<MapOutput> {
  const st: EvalState = { ctx, symbolic: ctx.symbolicLookups === true, line: 0 };
  const stats = ctx.stats;
  const filter = plan.filter;
  const run: MapRun = {
    plan,
    st,
    stats,
    out(o) {
      if (stats) {
        if (o.ok) stats.records++;
        else stats.rejects++;
      }
      return o;
    },
    passes(row) {
      if (!filter) return true;
      try {
        const kept = filter(row, st);
        if (!kept) ctx.unsent?.notSelected(row.line, row.lineEnd);
        return kept;
      } catch (err) {
        if (!(err instanceof RowFail)) throw err;
        const issues = new Issues();
        issues.add(row.line, 'filter', err);
        return makeReject(plan, [row], issues.list ?? [], undefined);
      }
    },
  };
  if (!plan.group) return mapFlat(run, items);
  if (plan.itemRecords) return mapRecordTypes(run, items);
  return mapGroupedByKey(run, items);
}
