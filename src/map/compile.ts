/**
 * Compiles a validated mapping (model.ts) to plain functions, once. Per row, mapping is: evaluate the
 * compiled field functions, build the payload, validate it against the target's schema. Everything
 * that can be decided at load time (field names, required fields, lookup fields, regexes, time zones,
 * date formats, source column names) is decided here and reported as a mapping error.
 *
 * The parts, by concern: evaluation.ts (shared state), expressions.ts (the expression compiler),
 * conditions.ts (filters), fields.ts (field sets against the target's schema), keys.ts (natural keys),
 * globs.ts (file and channel matching), validate.ts, plan.ts (the compiled plan, rejects), map-items.ts
 * (flat records) and documents.ts (grouping). What a target accepts comes from the target registry
 * (src/wms/targets/).
 */
import type { z } from 'zod';
import * as parseOptionsModule from '../parse/options.js';
import type { ParseOptions } from '../parse/options.js';
import { aggregateOutputs } from './aggregate.js';
import { TARGET_INFO, specOf, type RefResource, type Target } from '../wms/targets.js';
import type { MapContext, MapOutput, RecordOp } from './types.js';
import type { ParsedItem } from '../parse/types.js';
import type { ConditionSpec, ExprSpec, MappingSpec } from './model.js';
import { compileFastCheck } from './fast-check.js';
import { TransformSpecError, zoneOffsetFn } from './transforms.js';
import { problem, sourceNames, type CompileCtx, type Eval } from './evaluation.js';
import { compileExpr } from './expressions.js';
import { compileFilter } from './conditions.js';
import { compileFields, compileReading, itemSchemaOf, shapeInfo, shapeOf, type CompiledField, type ShapeInfo } from './fields.js';
import { checkDefaultKey } from './keys.js';
import { compileGlobs, fileMatcher } from './globs.js';
import { MappingCompileError } from './problems.js';
import { mapItems } from './map-items.js';
import { compileSkips } from './skips.js';
import { recordLevels, recordTypesOf } from './record-levels.js';
import { columnsOfField, type MappingPlan } from './plan.js';

export { formatPath, MappingCompileError, type MappingProblem } from './problems.js';
export { keyText, LookupPlaceholder, PLACEHOLDER_UUID } from './evaluation.js';
export { globToRegExp } from './globs.js';

export interface CompiledMapping {
  name: string;
  file: string;
  description?: string;
  match: { channel?: string; files: string[] };
  source: ParseOptions;
  target: Target;
  op: RecordOp;
  /** read-only references this mapping looks up at map time (preloaded by the pipeline) */
  referenceNeeds: Array<{ resource: RefResource; by: string }>;
  /**
   * column names the mapping reads by name from a delimited file (`col: name` and the plain-string
   * shorthand); the pipeline checks them against the file's header, so a wrong delimiter or a renamed
   * column is one clear file error, not a reject per row
   */
  columnsRead: string[];
  /**
   * the source column(s) a target field reads (`weight` -> `peso_bruto`; `pickingItens[3].quantity` -> `qtd`),
   * comma separated: what a reason names for the person who edits the file; undefined when no column feeds it
   */
  sourceColumns(field: string | undefined): string | undefined;
  matches(channel: string, fileName: string): boolean;
  /** maps parsed items (rows and parse errors) to records, documents and rejects, streaming */
  mapItems(items: AsyncIterable<ParsedItem>, ctx: MapContext): AsyncIterable<MapOutput>;
  /** the validated model, defaults filled in (for tools and docs); of the first mapping when several share a file */
  spec: MappingSpec;
  /** several mappings applied to one file (multi.ts composeMappings): each of them, in order */
  parts?: CompiledMapping[];
}

/**
 * The source column(s) a record's field reads, given the name of the mapping that made the record (the send
 * loop's PushOptions.sourceColumns).
 */
export function sourceColumnsOf(mappings: readonly CompiledMapping[]): (mapping: string, field: string) => string | undefined {
  const byName = new Map(mappings.map((m) => [m.name, m]));
  return (mapping, field) => byName.get(mapping)?.sourceColumns(field);
}

/** The op a mapping gets when it names none (the target registry's default). */
export function defaultOp(target: Target): RecordOp {
  return TARGET_INFO[target].defaultOp;
}

/** Cross-option rules of the parsers (columns with a header, duplicate names...), and the time zone. */
function checkSource(cc: CompileCtx, spec: MappingSpec): void {
  const checkParse = (parseOptionsModule as unknown as { checkParseOptions?: (o: ParseOptions) => string[] }).checkParseOptions;
  for (const p of checkParse?.(spec.source) ?? []) {
    const i = p.indexOf(': ');
    problem(cc, ['source', ...(i > 0 ? p.slice(0, i).split('.') : [])], i > 0 ? p.slice(i + 2) : p);
  }
  try {
    zoneOffsetFn(spec.timeZone);
  } catch (err) {
    if (err instanceof TransformSpecError) problem(cc, ['timeZone'], err.message);
  }
}

/** The target's document shape against the mapping's group. */
function checkGroup(cc: CompileCtx, spec: MappingSpec): void {
  const target = spec.target;
  const itemsKey = TARGET_INFO[target].items;
  const group = spec.group;
  if (itemsKey && !group) problem(cc, ['group'], `${target} is a document: add group {by, items: ${itemsKey}, itemFields} to build its ${itemsKey}`);
  if (!itemsKey && group) problem(cc, ['group'], `group makes documents (PickingList, PurchaseOrder), not ${target} records`);
  if (group && itemsKey && group.items !== itemsKey) problem(cc, ['group', 'items'], `${target} items are '${itemsKey}', not '${group.items}'`);
}

function compileAttachment(cc: CompileCtx, spec: MappingSpec): Eval | undefined {
  if (specOf(spec.target)?.send.kind === 'attachment') {
    if (spec.attachmentPath === undefined)
      problem(cc, ['attachmentPath'], 'PickingListAttachment needs attachmentPath: the file to attach, relative to the channel folder');
    else {
      const path = compileReading(cc, () => compileExpr(cc, spec.attachmentPath as ExprSpec, ['attachmentPath'], true, 'the file to attach'));
      cc.attachmentColumns = path.columns;
      return path.eval;
    }
  } else if (spec.attachmentPath !== undefined) problem(cc, ['attachmentPath'], 'attachmentPath is for PickingListAttachment only');
  return undefined;
}

interface DocumentParts {
  itemFields: CompiledField[];
  itemInfo: ShapeInfo | undefined;
  groupByEval: Eval | undefined;
  groupByColumns: string[];
  itemRecords: Set<string> | undefined;
  lotRecords?: Set<string> | undefined;
  contextRecords?: Set<string> | undefined;
}

/** A document's group: item fields against the items' schema, record types (multi-record files) or the document key. */
function compileDocument(cc: CompileCtx, spec: MappingSpec): DocumentParts {
  const parts: DocumentParts = { itemFields: [], itemInfo: undefined, groupByEval: undefined, groupByColumns: [], itemRecords: undefined };
  const group = spec.group;
  const target = spec.target;
  const source = spec.source;
  if (!group || !TARGET_INFO[target].items) return parts;
  const itemSchema = itemSchemaOf(target);
  if (itemSchema) {
    parts.itemInfo = shapeInfo(itemSchema);
    if (group.explode) {
      if (source.format !== 'xml' && source.format !== 'json' && source.format !== 'jsonl')
        problem(cc, ['group', 'explode'], 'explode reads repeating elements of XML/JSON items');
      cc.explodePrefix = group.explode;
    }
    parts.itemFields = compileFields(cc, group.itemFields as Record<string, ExprSpec>, parts.itemInfo, ['group', 'itemFields'], `${target} item`);
    delete cc.explodePrefix;
  }
  const typed = group.headerRecord !== undefined || group.itemRecord !== undefined;
  if (typed) {
    const recordTypes = recordTypesOf(source);
    if (recordTypes === undefined)
      problem(
        cc,
        ['group', 'headerRecord'],
        source.format === 'delimited'
          ? 'headerRecord/itemRecord name record types: declare them in source.records (each with its match and columns) and set source.header: false'
          : `headerRecord/itemRecord group the record types of multi-record files (delimited or fixed-width source.records), not ${source.format}`,
      );
    if (group.headerRecord === undefined || group.itemRecord === undefined) problem(cc, ['group'], 'give both headerRecord and itemRecord');
    Object.assign(parts, recordLevels(cc, group, recordTypes));
  } else {
    if (group.by === undefined) problem(cc, ['group', 'by'], 'group needs by (the document key) or headerRecord/itemRecord');
    if (group.lotRecord !== undefined || group.contextRecords !== undefined)
      problem(cc, ['group'], 'lotRecord and contextRecords are levels of a multi-record group: give headerRecord and itemRecord too');
  }
  if (group.by !== undefined) {
    const by = compileReading(cc, () => compileExpr(cc, group.by as ExprSpec, ['group', 'by'], true, 'the document key'));
    parts.groupByEval = by.eval;
    parts.groupByColumns = by.columns;
  }
  return parts;
}

/** Which source names feed each target field (MappingPlan.sourceColumns). */
function fieldSources(
  headerFields: CompiledField[],
  itemsKey: string | undefined,
  doc: DocumentParts,
  keyColumns: string[] | undefined,
  attachmentColumns: string[] | undefined,
): Map<string, string[]> {
  const out = new Map<string, string[]>();
  for (const f of headerFields) out.set(f.name, f.columns);
  for (const f of doc.itemFields) out.set(`${itemsKey}[].${f.name}`, f.columns);
  if (keyColumns) out.set('key', keyColumns);
  if (doc.groupByEval) out.set('group.by', doc.groupByColumns);
  // the attachment's path: what the send loop names `file` when it refuses the path
  if (attachmentColumns) out.set('file', attachmentColumns);
  return out;
}

/** `aggregate.sum`: fields the mapping gives, numbers of the target, and no documents (their items are not added up). */
function checkAggregate(cc: CompileCtx, spec: MappingSpec): void {
  const agg = spec.aggregate;
  if (agg === undefined) return;
  if (spec.group !== undefined) problem(cc, ['aggregate'], 'aggregate adds up flat records; a document (group) has its items instead');
  const shape = shapeOf(TARGET_INFO[spec.target].schema) as Record<string, z.ZodType | undefined>;
  agg.sum.forEach((f, i) => {
    if (!(f in spec.fields)) problem(cc, ['aggregate', 'sum', i], `'${f}' is not a field of this mapping (fields: ${Object.keys(spec.fields).join(', ')})`);
    else if (shape[f]?.safeParse(1).success === false) problem(cc, ['aggregate', 'sum', i], `'${f}' is not a number in ${spec.target}: it cannot be added up`);
  });
}

/** Compiles a validated model; throws MappingCompileError with every problem found. */
export function compileMapping(spec: MappingSpec, file: string): CompiledMapping {
  const target = spec.target;
  const tinfo = TARGET_INFO[target];
  const source = spec.source;
  const { names, label } = sourceNames(source);
  const cc: CompileCtx = { format: source.format, names, namesLabel: label, timeZone: spec.timeZone, problems: [], needs: new Map(), read: new Set() };
  checkSource(cc, spec);
  const op = spec.op ?? defaultOp(target);
  if (!tinfo.ops.includes(op)) problem(cc, ['op'], `${target} accepts op ${tinfo.ops.join(' | ')}, not '${op}'`);
  const files = typeof spec.match.files === 'string' ? [spec.match.files] : spec.match.files;
  const globs = compileGlobs(cc, files);
  const channel = spec.match.channel;
  checkGroup(cc, spec);

  const info = shapeInfo(tinfo.schema);
  const itemsKey = tinfo.items ?? undefined;
  const headerFields = compileFields(cc, spec.fields as Record<string, ExprSpec>, info, ['fields'], target, itemsKey ? [itemsKey] : []);
  const key = spec.key !== undefined ? compileReading(cc, () => compileExpr(cc, spec.key as ExprSpec, ['key'], true, 'the natural key')) : undefined;
  const keyEval = key?.eval;
  if (!keyEval) checkDefaultKey(cc, target, spec.fields, info);
  const filter = spec.filter === undefined ? undefined : compileFilter(cc, spec.filter as ConditionSpec | ConditionSpec[]);
  const skips = compileSkips(cc, spec);
  const attachmentEval = compileAttachment(cc, spec);
  const doc = compileDocument(cc, spec);
  checkAggregate(cc, spec);

  if (cc.problems.length) throw new MappingCompileError(cc.problems);

  const plan: MappingPlan = {
    name: spec.name,
    file,
    target,
    op,
    xml: source.format === 'xml',
    headerFields,
    headerImplicit: info.implicit,
    keyEval,
    attachmentEval,
    filter,
    schema: tinfo.schema,
    fastCheck: compileFastCheck(tinfo.schema),
    referenceNeeds: [...cc.needs.values()],
    group: spec.group,
    itemsKey,
    itemFields: doc.itemFields,
    itemImplicit: doc.itemInfo?.implicit ?? new Map<string, unknown>(),
    groupByEval: doc.groupByEval,
    itemRecords: doc.itemRecords,
    sourceColumns: fieldSources(headerFields, itemsKey, doc, key?.columns, cc.attachmentColumns),
    skips,
    lotRecords: doc.lotRecords,
    contextRecords: doc.contextRecords,
  };
  const compiled: CompiledMapping = {
    name: plan.name,
    file,
    match: channel !== undefined ? { channel, files } : { files },
    source,
    target,
    op,
    referenceNeeds: plan.referenceNeeds,
    columnsRead: source.format === 'delimited' || source.format === 'xlsx' ? [...cc.read] : [],
    sourceColumns: (field) => columnsOfField(plan.sourceColumns, field),
    spec,
    matches: fileMatcher(channel, globs),
    mapItems: (items, ctx) => aggregateOutputs(mapItems(plan, items, ctx), spec.aggregate, target),
  };
  if (spec.description !== undefined) compiled.description = spec.description;
  return compiled;
}
