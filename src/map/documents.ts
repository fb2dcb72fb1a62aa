/**
 * Grouping: documents (picking lists, purchase orders) built from several rows, by header/detail record
 * types (record-groups.ts) or by a document key (contiguous or not); header fields, items (exploded from XML/JSON
 * repeating elements), duplicate items, and a line that could not be read holding its document back.
 */
import type { ParsedErrorItem, RawRow } from '../parse/types.js';
import type { RowIssue } from '../shared/errors.js';
import { isMissing, keyText, type EvalState } from './evaluation.js';
import { evalFields, Issues } from './fields.js';
import { recordKey } from './keys.js';
import { checkReferenceNeeds, errorIssue, errorRaw, location, makeReject, parseErrorReject, type Items, type MapRun, type MappingPlan } from './plan.js';
import { q, RowFail, safeString } from './transforms.js';
import type { MapOutput } from './types.js';
import { validate } from './validate.js';

export interface Doc {
  groupKey: string;
  rows: RawRow[];
  header: Record<string, unknown> | undefined;
  headerRow: RawRow | undefined;
  items: Record<string, unknown>[];
  itemLines: number[];
  issues: Issues;
}

export const newDoc = (groupKey: string): Doc => ({
  groupKey,
  rows: [],
  header: undefined,
  headerRow: undefined,
  items: [],
  itemLines: [],
  issues: new Issues(),
});

const sameValue = (a: unknown, b: unknown): boolean => {
  if (a === b) return true;
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) return false;
  return safeString(a) === safeString(b);
};

function addHeader(plan: MappingPlan, doc: Doc, row: RawRow, st: EvalState): void {
  const payload = evalFields(plan.headerFields, plan.headerImplicit, row, st, doc.issues);
  if (doc.header === undefined) {
    doc.header = payload;
    doc.headerRow = row;
    return;
  }
  if (!plan.group?.headerMustAgree) return;
  const first = doc.header;
  for (const f of plan.headerFields) {
    const a = first[f.name];
    const b = payload[f.name];
    if (!sameValue(a, b)) {
      doc.issues.push({
        code: 'header_mismatch',
        field: f.name,
        value: keyText(b) ?? '',
        message: `line ${st.line}: field ${f.name}: ${q(keyText(b) ?? '')} differs from ${q(keyText(a) ?? '')} on line ${doc.headerRow?.line ?? '?'} (first line of document ${q(doc.groupKey)}); header fields must agree on every line`,
      });
    }
  }
}

function addItem(plan: MappingPlan, doc: Doc, row: RawRow, st: EvalState): void {
  doc.items.push(evalFields(plan.itemFields, plan.itemImplicit, row, st, doc.issues, `${plan.itemsKey}[${doc.items.length}].`));
  doc.itemLines.push(st.line);
}

export function addItems(plan: MappingPlan, doc: Doc, row: RawRow, st: EvalState): void {
  const explode = plan.group?.explode;
  const rawList = explode ? row.fields[explode] : undefined;
  if (!explode || isMissing(rawList)) {
    addItem(plan, doc, row, st);
    return;
  }
  let list: unknown;
  try {
    list = JSON.parse(rawList as string);
  } catch {
    list = undefined;
  }
  if (!Array.isArray(list)) {
    doc.issues.push({ code: 'explode', field: explode, message: `line ${st.line}: ${explode} is not a list of elements` });
    return;
  }
  if (list.length === 0) {
    addItem(plan, doc, row, st);
    return;
  }
  for (const el of list) {
    const fields: Record<string, string> = { ...row.fields };
    if (el !== null && typeof el === 'object') {
      for (const [k, v] of Object.entries(el as Record<string, unknown>)) fields[`${explode}/${k}`] = typeof v === 'string' ? v : safeString(v);
    } else fields[explode] = typeof el === 'string' ? el : safeString(el);
    addItem(plan, doc, { ...row, fields }, st);
  }
}

/** the same line twice (an ERP export repeated a line) would double a quantity in the WMS silently */
function checkDuplicateItems(doc: Doc): void {
  const seenItems = new Map<string, number>();
  doc.items.forEach((item, i) => {
    const text = safeString(item);
    const earlier = seenItems.get(text);
    if (earlier !== undefined) {
      doc.issues.push({
        code: 'duplicate_item',
        message: `line ${doc.itemLines[i] ?? '?'}: repeats line ${doc.itemLines[earlier] ?? '?'} of document ${q(doc.groupKey)} (identical item): remove the repeated line, or map an item number (e.g. aux01) that tells them apart`,
      });
    } else seenItems.set(text, i);
  });
}

/** A finished document: its record, or its reject with every row. */
export function flush(plan: MappingPlan, doc: Doc, st: EvalState): MapOutput {
  const first = doc.rows[0] as RawRow;
  const last = doc.rows[doc.rows.length - 1] as RawRow;
  // a header/detail document always has its header; a by-group has at least one row
  if (doc.header === undefined) doc.header = {};
  checkDuplicateItems(doc);
  const itemsKey = plan.itemsKey as string;
  const payload: Record<string, unknown> = { ...doc.header, [itemsKey]: doc.items };
  const savedLine = st.line;
  st.line = doc.headerRow?.line ?? first.line;
  const key = recordKey(plan.target, plan.keyEval, payload, doc.headerRow ?? first, st, doc.issues);
  st.line = savedLine;
  if (doc.issues.list === undefined) {
    const headerLine = doc.headerRow?.line ?? first.line;
    const lineOf = (path: ReadonlyArray<PropertyKey>): number =>
      path[0] === itemsKey && typeof path[1] === 'number' ? (doc.itemLines[path[1]] ?? headerLine) : headerLine;
    const v = validate(plan.schema, plan.fastCheck, payload, lineOf, plan.target);
    if (v) doc.issues.list = v;
  }
  if (doc.issues.list !== undefined) return makeReject(plan, doc.rows, doc.issues.list, key);
  return {
    ok: true,
    record: { target: plan.target, op: plan.op, key: key as string, source: location(first, last, plan.xml), payload, mapping: plan.name, raw: doc.rows },
  };
}

export function poison(doc: Doc, item: ParsedErrorItem): void {
  doc.rows.push(errorRaw(item));
  const base = errorIssue(item);
  doc.issues.push({
    ...base,
    message: `${base.message} (the line could not be read and may belong to document ${q(doc.groupKey)}, so the whole document is held back)`,
  });
}

/** A header record opens a document (or, filtered out, skips its details). */
export function openByHeader(run: MapRun, row: RawRow): { doc: Doc | undefined; skipping: boolean } {
  const { plan, st, stats } = run;
  const keep = run.passes(row);
  if (keep === false) {
    if (stats) stats.skipped++;
    return { doc: undefined, skipping: true };
  }
  if (keep !== true) {
    // the filter could not be evaluated on the header: its document is rejected with its details
    const doc = newDoc(`line ${row.line}`);
    doc.rows.push(row);
    if (!keep.ok) for (const i of keep.reject.issues) doc.issues.push(i);
    return { doc, skipping: false };
  }
  let gk = `line ${row.line}`;
  if (plan.groupByEval) {
    try {
      gk = keyText(plan.groupByEval(row, st)) ?? gk;
    } catch (err) {
      if (!(err instanceof RowFail)) throw err;
    }
  }
  const doc = newDoc(gk);
  doc.rows.push(row);
  addHeader(plan, doc, row, st);
  return { doc, skipping: false };
}

/** The document key of a row (group.by), or the issues of a row without one. */
function groupKeyOf(run: MapRun, row: RawRow, keep: true | MapOutput): { gk: string } | { issues: RowIssue[] } {
  const byEval = run.plan.groupByEval as NonNullable<MappingPlan['groupByEval']>;
  let gk: string | undefined;
  let keyIssue: RowIssue | undefined;
  try {
    gk = keyText(byEval(row, run.st));
  } catch (err) {
    if (!(err instanceof RowFail)) throw err;
    const issues = new Issues();
    issues.add(row.line, 'group.by', err);
    keyIssue = issues.list?.[0];
  }
  if (gk !== undefined) return { gk };
  const issues: RowIssue[] = keep === true ? [] : keep.ok ? [] : [...keep.reject.issues];
  issues.push(keyIssue ?? { code: 'required', field: 'group.by', message: `line ${row.line}: the document key (group.by) is empty` });
  return { issues };
}

function notContiguous(plan: MappingPlan, row: RawRow, gk: string, endedAt: number): MapOutput {
  const message = `line ${row.line}: document ${q(gk)} appears again after its lines ended at line ${endedAt}; list a document's lines together, or set group.contiguous: false`;
  return makeReject(plan, [row], [{ code: 'group_not_contiguous', field: 'group.by', value: gk, message }], undefined);
}

/** Rows grouped by the document key: contiguous (one open document) or not (every document open until the end). */
export async function* mapGroupedByKey(run: MapRun, items: Items): AsyncGenerator<MapOutput> {
  checkReferenceNeeds(run);
  const { plan, st, stats } = run;
  const contiguous = plan.group?.contiguous;
  let cur: Doc | undefined;
  const finished = new Map<string, number>();
  const open = new Map<string, Doc>();
  for await (const item of items) {
    if (stats) stats.rows++;
    if (item.kind === 'error') {
      if (contiguous && cur) poison(cur, item);
      else yield run.out(parseErrorReject(plan, item));
      continue;
    }
    const row = item.row;
    st.line = row.line;
    const keep = run.passes(row);
    if (keep === false) {
      if (stats) stats.skipped++;
      continue;
    }
    const k = groupKeyOf(run, row, keep);
    if ('issues' in k) {
      if (contiguous && cur) {
        // most likely a damaged line of the open document: hold the document back with it
        cur.rows.push(row);
        for (const i of k.issues)
          cur.issues.push({ ...i, message: `${i.message} (the line may belong to document ${q(cur.groupKey)}, so the whole document is held back)` });
      } else yield run.out(makeReject(plan, [row], k.issues, undefined));
      continue;
    }
    const gk = k.gk;
    let doc: Doc | undefined;
    if (contiguous) {
      if (cur && cur.groupKey === gk) doc = cur;
      else {
        if (cur) {
          yield run.out(flush(plan, cur, st));
          finished.set(cur.groupKey, (cur.rows[cur.rows.length - 1] as RawRow).line);
          cur = undefined;
        }
        const endedAt = finished.get(gk);
        if (endedAt !== undefined) {
          yield run.out(notContiguous(plan, row, gk, endedAt));
          continue;
        }
        doc = cur = newDoc(gk);
      }
    } else {
      doc = open.get(gk);
      if (!doc) open.set(gk, (doc = newDoc(gk)));
    }
    doc.rows.push(row);
    if (keep !== true) {
      // the filter could not be evaluated: the row is kept in its document, which is rejected
      if (!keep.ok) for (const i of keep.reject.issues) doc.issues.push(i);
      continue;
    }
    addHeader(plan, doc, row, st);
    addItems(plan, doc, row, st);
  }
  if (cur) yield run.out(flush(plan, cur, st));
  for (const doc of open.values()) yield run.out(flush(plan, doc, st));
}
