/**
 * Documents of multi-record files (delimited or fixed-width, source.records): a header record opens a document,
 * item records add its items, lot records under an item become items of their own (order -> item -> lot), and
 * context records (a file or shipper header) stay readable by the lines after them. Every line reads its own fields
 * by name and the fields of the records above it as '<type>/<field>' (the header's, its item's, the context's).
 *
 * Nothing is lost: an item or lot before the record it belongs to, and a line no record type matches (a parse
 * error item), are rejects naming their line and record type; a damaged line inside a document holds the whole
 * document back.
 */
import type { RawRow } from '../parse/types.js';
import { addItems, flush, openByHeader, poison, type Doc } from './documents.js';
import { checkReferenceNeeds, makeReject, parseErrorReject, type Items, type MapRun } from './plan.js';
import { q } from './transforms.js';
import type { MapOutput } from './types.js';

const NONE: ReadonlySet<string> = new Set();

/** The latest record of each type above the current line (context, header, item), read as '<type>/<field>'. */
class Scope {
  private readonly rows = new Map<string, RawRow>();
  set(type: string, row: RawRow): void {
    this.rows.delete(type);
    this.rows.set(type, row);
  }
  drop(types: ReadonlySet<string>): void {
    for (const t of types) this.rows.delete(t);
  }
  /** the row with its own fields, plus every record in scope (and its own) under '<type>/<field>' */
  enrich(row: RawRow): RawRow {
    const fields: Record<string, string> = {};
    for (const [type, r] of this.rows) if (r !== row) for (const k in r.fields) fields[`${type}/${k}`] = r.fields[k] as string;
    const own = row.recordType;
    if (own !== undefined) for (const k in row.fields) fields[`${own}/${k}`] = row.fields[k] as string;
    Object.assign(fields, row.fields);
    return { ...row, fields };
  }
}

/** An item line waiting for its lots: without any it becomes one item when the next item, header or the end comes. */
interface PendingItem {
  row: RawRow;
  skipped: boolean;
  lots: number;
}

function orphan(run: MapRun, row: RawRow, what: string): MapOutput {
  const type = row.recordType ?? '?';
  const message = `line ${row.line}: ${type} record before any ${what} record: it belongs to no document`;
  return makeReject(run.plan, [row], [{ code: 'orphan_item', recordType: type, expected: what, message }], undefined);
}

/** Header / item / lot / context record types: documents at any depth, streaming (one open document). */
export async function* mapRecordTypes(run: MapRun, items: Items): AsyncGenerator<MapOutput> {
  checkReferenceNeeds(run);
  const { plan, st, stats } = run;
  const headerType = plan.group?.headerRecord ?? '';
  const itemTypes = plan.itemRecords ?? NONE;
  const lotTypes = plan.lotRecords ?? NONE;
  const contextTypes = plan.contextRecords ?? NONE;
  const below = new Set([...itemTypes, ...lotTypes]);
  const itemNames = [...itemTypes].join('/');
  const scope = new Scope();
  let cur: Doc | undefined;
  let skipping = false;
  let pending: PendingItem | undefined;
  const skip = (): void => {
    if (stats) stats.skipped++;
  };
  const closeItem = (): void => {
    if (cur && pending && !pending.skipped && pending.lots === 0) {
      st.line = pending.row.line;
      addItems(plan, cur, pending.row, st);
    }
    pending = undefined;
  };
  for await (const item of items) {
    if (stats) stats.rows++;
    if (item.kind === 'error') {
      if (cur) poison(cur, item);
      else yield run.out(parseErrorReject(plan, item));
      continue;
    }
    const row = item.row;
    st.line = row.line;
    const type = row.recordType ?? '';
    if (contextTypes.has(type)) {
      scope.set(type, row);
      continue;
    }
    if (type === headerType) {
      closeItem();
      if (cur) yield run.out(flush(plan, cur, st));
      scope.drop(below);
      scope.set(type, row);
      st.line = row.line;
      ({ doc: cur, skipping } = openByHeader(run, scope.enrich(row)));
      continue;
    }
    const isItem = itemTypes.has(type);
    if (!isItem && !lotTypes.has(type)) {
      skip();
      continue;
    }
    if (skipping) {
      skip();
      continue;
    }
    if (!cur) {
      yield run.out(orphan(run, row, headerType));
      continue;
    }
    if (isItem) {
      closeItem();
      scope.drop(lotTypes);
      scope.set(type, row);
      // the occurrences of a repeated record (occurs) share their line: kept once for the rejects
      if (cur.rows[cur.rows.length - 1]?.line !== row.line) cur.rows.push(row);
      const enriched = scope.enrich(row);
      const keep = run.passes(enriched);
      if (keep === false) skip();
      else if (keep !== true) for (const i of keep.ok ? [] : keep.reject.issues) cur.issues.push(i);
      pending = { row: enriched, skipped: keep !== true, lots: 0 };
      continue;
    }
    // a lot line: its own item, reading its item's fields
    if (cur.rows[cur.rows.length - 1]?.line !== row.line) cur.rows.push(row);
    if (!pending) {
      cur.issues.push({
        code: 'orphan_item',
        recordType: type,
        expected: itemNames,
        message: `line ${row.line}: ${type} record before any ${itemNames} record of document ${q(cur.groupKey)}: it belongs to no item`,
      });
      continue;
    }
    pending.lots++;
    if (pending.skipped) {
      skip();
      continue;
    }
    const enriched = scope.enrich(row);
    const keep = run.passes(enriched);
    if (keep === false) skip();
    else if (keep !== true) for (const i of keep.ok ? [] : keep.reject.issues) cur.issues.push(i);
    else addItems(plan, cur, enriched, st);
  }
  closeItem();
  if (cur) yield run.out(flush(plan, cur, st));
}
