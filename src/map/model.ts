/**
 * The mapping language: one zod model, the single source of truth for validation (loader), the JSON
 * Schema (editors: `wmsbridge schema`) and the documentation (docs/MAPPINGS.md). Every node carries a
 * `.describe()` text; defaults are declared here and nowhere else.
 *
 * A mapping is parsed ONCE by this model at load time and then compiled to plain functions
 * (compile.ts); no zod parsing of the mapping happens per row.
 */
import { z } from 'zod';
import { ParseOptionsSchema } from '../parse/options.js';
import { REF_RESOURCES, TARGET_INFO, TARGETS } from '../wms/targets.js';

// ---------------------------------------------------------------------------------------------
// Constants shared with the compiler
// ---------------------------------------------------------------------------------------------

/** Read-only resources: looked up at map time in the preloaded ReferenceCache. */
export const READ_ONLY_RESOURCES = ['Company', 'Branch', 'Warehouse', 'Dock', 'LogisticsProfile', 'MaterialStatus'] as const;
export type ReadOnlyResource = (typeof READ_ONLY_RESOURCES)[number];

/** Resources wmsbridge sends: a `ref`/`lookup` to them is resolved at send time (RefValue). */
export const SENDABLE_RESOURCES = REF_RESOURCES.filter((r) => !(READ_ONLY_RESOURCES as readonly string[]).includes(r)) as Exclude<
  (typeof REF_RESOURCES)[number],
  ReadOnlyResource
>[];

/** The `by` fields a lookup may use, per resource: reference data here, what targets send from their spec's `lookupBy`. */
export const LOOKUP_BY: Readonly<Record<(typeof REF_RESOURCES)[number], readonly string[]>> = {
  Company: ['name', 'cnpj', 'id'],
  Branch: ['name', 'cnpj', 'id'],
  Warehouse: ['codeERP', 'name', 'id'],
  Dock: ['name', 'id'],
  LogisticsProfile: ['mnemonic', 'name', 'id'],
  MaterialStatus: ['name', 'id'],
  ...(Object.fromEntries(Object.values(TARGET_INFO).flatMap((s) => (s.xref !== null && s.lookupBy ? [[s.xref, s.lookupBy]] : []))) as Record<
    Exclude<(typeof REF_RESOURCES)[number], ReadOnlyResource>,
    readonly string[]
  >),
};

export const TRANSFORM_NAMES = [
  'trim',
  'upper',
  'lower',
  'title',
  'stripZeros',
  'digitsOnly',
  'integer',
  'number',
  'date',
  'boolean',
  'uuid5',
  'cnpj',
  'ean',
  'ncm',
  'json',
] as const;

export const DEFAULT_TRUE_WORDS = ['S', 'Sim', 'Y', 'Yes', '1', 'true', 'T', 'V', 'Verdadeiro'];
export const DEFAULT_FALSE_WORDS = ['N', 'Nao', 'Não', 'No', '0', 'false', 'F', 'Falso'];
export const DEFAULT_TIME_ZONE = 'America/Sao_Paulo';

// ---------------------------------------------------------------------------------------------
// Transforms
// ---------------------------------------------------------------------------------------------

const Scalar = z.union([z.string(), z.number(), z.boolean(), z.null()]);
const JsonValue = z.json();

const BareTransform = z
  .enum(TRANSFORM_NAMES, {
    error: (iss) =>
      typeof iss.input === 'string'
        ? `unknown transform '${iss.input}'; expected one of ${TRANSFORM_NAMES.join(', ')}, padStart, replace, substring, map (or an object form)`
        : undefined,
  })
  .describe(
    'A transform with default options: trim, upper, lower, title, stripZeros (leading zeros), digitsOnly, integer, ' +
      "number (decimal ',' thousands '.'), date (dd/MM/yyyy), boolean, uuid5, cnpj, ean, ncm (8 digits), json.",
  );

const PadStart = z
  .strictObject({
    padStart: z.strictObject({
      length: z.number().int().min(1).max(1000).describe('Target length.'),
      char: z.string().length(1).default('0').describe('Pad character. @default "0"'),
    }),
  })
  .describe('Left-pads the text to `length` with `char` (longer text is kept as is).');

const Replace = z
  .strictObject({
    replace: z.strictObject({
      pattern: z.string().min(1).describe('JavaScript regular expression (compiled once, at load time).'),
      with: z.string().default('').describe('Replacement text; $1.. refer to groups. @default ""'),
      flags: z
        .string()
        .regex(/^[gimsuy]*$/, 'flags may only hold g i m s u y')
        .default('g')
        .describe('Regular expression flags. @default "g"'),
    }),
  })
  .describe('Replaces matches of a regular expression.');

const Substring = z
  .strictObject({
    substring: z.strictObject({
      start: z.number().int().min(0).describe('0-based first character.'),
      length: z.number().int().min(0).optional().describe('Number of characters. @default to the end'),
    }),
  })
  .describe('Keeps part of the text.');

const NumberOptions = z.strictObject({
  decimal: z.enum([',', '.']).default(',').describe("Decimal separator. @default ','"),
  thousands: z.enum(['.', ',', '', ' ']).optional().describe("Thousands separator ('' for none). @default '.' when decimal is ',', '' when decimal is '.'"),
  scale: z
    .number()
    .int()
    .min(0)
    .max(12)
    .optional()
    .describe('Implied decimal places of a digits-only value (fixed-width "000001234" with scale 2 is 12.34). @default none'),
});
const NumberT = z
  .strictObject({ number: NumberOptions })
  .describe("Parses a decimal number ('1.234,56'); a trailing minus ('12,50-') is accepted. 'abc' and '12,3,4' reject the row.");

const IntegerT = z
  .strictObject({
    integer: z.strictObject({
      thousands: z.enum(['.', ',', '', ' ']).default('').describe("Thousands separator. @default ''"),
    }),
  })
  .describe('Parses an integer (leading zeros allowed); anything else rejects the row.');

const DateT = z
  .strictObject({
    date: z.strictObject({
      format: z
        .string()
        .min(2)
        .default('dd/MM/yyyy')
        .describe(
          "Pattern with tokens yyyy yy MM dd HH mm ss (other characters are literal), 'iso' for ISO 8601 with an " +
            "offset, or 'excel' for an Excel date serial (45292 = 01/01/2024; a fraction is the time of day). yy is 20yy. " +
            "Examples: 'dd/MM/yyyy', 'yyyyMMdd', 'ddMMyy', 'dd/MM/yyyy HH:mm'. @default 'dd/MM/yyyy'",
        ),
      timeZone: z.string().optional().describe("IANA time zone of date-times without an offset. @default the mapping's timeZone"),
      output: z
        .enum(['auto', 'date', 'datetime'])
        .default('auto')
        .describe(
          "'date': YYYY-MM-DD. 'datetime': ISO 8601 UTC (YYYY-MM-DDTHH:mm:ss.000Z), a date-only value being midnight in " +
            "timeZone. 'auto': 'datetime' when the format has a time (HH) or is 'iso', else 'date'. @default 'auto'",
        ),
    }),
  })
  .describe('Parses a date; impossible dates (31/02/2024) reject the row.');

const BooleanT = z
  .strictObject({
    boolean: z.strictObject({
      true: z.array(z.string()).min(1).default(DEFAULT_TRUE_WORDS).describe('Words meaning true (case-insensitive).'),
      false: z.array(z.string()).min(1).default(DEFAULT_FALSE_WORDS).describe('Words meaning false (case-insensitive).'),
    }),
  })
  .describe('Parses a yes/no word; any other value rejects the row.');

const MapT = z
  .strictObject({
    map: z.strictObject({
      values: z.record(z.string(), JsonValue).describe('Source value -> output value (e.g. {A: 0, B: 2}).'),
      default: JsonValue.optional().describe('Output for a value not in `values` (then strict does not apply).'),
      strict: z.boolean().default(true).describe('Without a default: true rejects an unknown value, false passes it through unchanged. @default true'),
      ignoreCase: z.boolean().default(false).describe('Match source values case-insensitively. @default false'),
    }),
  })
  .describe('Translates codes through a table.');

const Uuid5T = z
  .strictObject({
    uuid5: z.strictObject({
      namespace: z
        .string()
        .regex(/^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$/)
        .optional()
        .describe('Namespace UUID. @default the wmsbridge namespace 62fa461d-b48e-5207-aba3-6d593f0bae60'),
    }),
  })
  .describe('Deterministic name-based UUID (v5) of the value: same input, same UUID on every run.');

const TruncateT = z
  .strictObject({ truncate: z.strictObject({ length: z.number().int().min(1).describe('Maximum length.') }) })
  .describe('Cuts the text to a maximum length.');

export const TransformSchema = z
  .union([BareTransform, PadStart, Replace, Substring, NumberT, IntegerT, DateT, BooleanT, MapT, Uuid5T, TruncateT])
  .describe('One transform. Transforms run in order; an empty value stops the chain (then `default` applies).')
  .meta({ id: 'Transform' });
export type TransformSpec = z.output<typeof TransformSchema>;

// ---------------------------------------------------------------------------------------------
// Expressions
// ---------------------------------------------------------------------------------------------

const common = {
  transforms: z.array(TransformSchema).optional().describe('Transforms applied in order to the value.'),
  default: Scalar.optional().describe('Value used when the result is empty (missing column, empty cell, all-blank).'),
  required: z.boolean().optional().describe('An empty result rejects the row (fields the WMS requires are required automatically). @default false'),
};

const ColExpr = z
  .strictObject({
    col: z.union([z.string().min(1), z.number().int().min(0)]).describe('Column name (from the header or `source.columns`) or 0-based column index.'),
    ...common,
  })
  .describe('A column of a delimited file.');
const PathExpr = z
  .strictObject({
    path: z.string().min(1).describe("Flat path of an XML/JSON item ('prod/cProd', '@nItem'); '/...' reads the document level ('/NFe/infNFe/ide/nNF')."),
    ...common,
  })
  .describe('A value of an XML or JSON item.');
const FieldExpr = z
  .strictObject({ field: z.string().min(1).describe('Field name of a fixed-width record.'), ...common })
  .describe('A field of a fixed-width record.');
const ConstExpr = z.strictObject({ const: JsonValue.describe('The constant value.'), ...common }).describe('A constant.');
const TemplateExpr = z
  .strictObject({
    template: z
      .string()
      .min(1)
      .describe(
        'Text with {name} placeholders (column, field or path names); {$file}, {$line}, {$now} are the file name, line and ' +
          'run time. An empty placeholder makes the whole template empty. "{{" and "}}" are literal braces.',
      ),
    ...common,
  })
  .describe('Builds text from several source values.');

type ExprInput = string | { [k: string]: unknown };

const ExprRef: z.ZodType<ExprInput> = z.lazy(() => ExpressionSchema) as unknown as z.ZodType<ExprInput>;

const ConcatExpr = z
  .strictObject({
    concat: z.array(ExprRef).min(1).describe('Expressions whose non-empty values are joined.'),
    sep: z.string().default('').describe('Separator. @default ""'),
    ...common,
  })
  .describe('Joins the non-empty values of several expressions.');
const CoalesceExpr = z.strictObject({ coalesce: z.array(ExprRef).min(1).describe('Candidates, in order.'), ...common }).describe('The first non-empty value.');
const RefExpr = z
  .strictObject({
    ref: z.enum(SENDABLE_RESOURCES as [string, ...string[]]).describe('Resource wmsbridge sends (Category, Family, Product...).'),
    from: ExprRef.describe('Expression giving the natural key (codeERP, code...). `transforms`/`default` apply to it.'),
    ...common,
  })
  .describe(
    'The WMS id of a record wmsbridge sends, by its natural key: a placeholder resolved at send time from the ' +
      'cross-reference (a record of the same run is sent first).',
  );
const LookupExpr = z
  .strictObject({
    lookup: z.enum(REF_RESOURCES).describe('Resource to look up.'),
    by: z.string().min(1).describe('Field compared with the value (Warehouse: codeERP, Dock: name, LogisticsProfile: mnemonic...).'),
    from: ExprRef.describe('Expression giving the value. `transforms`/`default` apply to it.'),
    where: z
      .record(z.string(), ExprRef)
      .optional()
      .describe('Read-only resources: more equalities to narrow the match (Dock: {warehouseID: {lookup: Warehouse, ...}}).'),
    select: z
      .string()
      .min(1)
      .optional()
      .describe("Read-only resources: return this field of the record found instead of its id (Warehouse -> branchID). @default 'id'"),
    ...common,
  })
  .describe(
    'Read-only resources (Company, Branch, Warehouse, Dock, LogisticsProfile, MaterialStatus) are resolved at map time; ' +
      'not found rejects the row. Other resources give a placeholder resolved at send time.',
  );
const TableExpr = z
  .strictObject({
    table: z.record(z.string(), JsonValue).describe('Static table in the mapping: source value -> output value.'),
    from: ExprRef.describe('Expression giving the value looked up. `transforms`/`default` apply to it.'),
    ignoreCase: z.boolean().default(false).describe('Compare case-insensitively. @default false'),
    ...common,
  })
  .describe('A static table; a value not in it rejects the row.');

export const ExpressionSchema = z
  .union([
    z.string().min(1).describe('Shorthand for {col: name} (delimited), {field: name} (fixed-width) or {path: name} (XML/JSON).'),
    ColExpr,
    PathExpr,
    FieldExpr,
    ConstExpr,
    TemplateExpr,
    ConcatExpr,
    CoalesceExpr,
    RefExpr,
    LookupExpr,
    TableExpr,
  ])
  .describe('How one value is computed from a source row.')
  .meta({ id: 'Expression' });

export type ColExprSpec = z.output<typeof ColExpr>;
export type PathExprSpec = z.output<typeof PathExpr>;
export type FieldExprSpec = z.output<typeof FieldExpr>;
export type ConstExprSpec = z.output<typeof ConstExpr>;
export type TemplateExprSpec = z.output<typeof TemplateExpr>;
export interface CommonSpec {
  transforms?: TransformSpec[] | undefined;
  default?: string | number | boolean | null | undefined;
  required?: boolean | undefined;
}
export type ExprSpec =
  | string
  | ColExprSpec
  | PathExprSpec
  | FieldExprSpec
  | ConstExprSpec
  | TemplateExprSpec
  | (CommonSpec & { concat: ExprSpec[]; sep: string })
  | (CommonSpec & { coalesce: ExprSpec[] })
  | (CommonSpec & { ref: string; from: ExprSpec })
  | (CommonSpec & {
      lookup: (typeof REF_RESOURCES)[number];
      by: string;
      from: ExprSpec;
      where?: Record<string, ExprSpec> | undefined;
      select?: string | undefined;
    })
  | (CommonSpec & { table: Record<string, unknown>; from: ExprSpec; ignoreCase: boolean });

// ---------------------------------------------------------------------------------------------
// Filters
// ---------------------------------------------------------------------------------------------

const TestSchema = {
  col: z
    .union([z.string().min(1), z.number().int().min(0)])
    .optional()
    .describe('Column tested (delimited).'),
  path: z.string().min(1).optional().describe('Path tested (XML/JSON).'),
  field: z.string().min(1).optional().describe('Field tested (fixed-width), or any source name.'),
  value: ExprRef.optional().describe('Any expression tested (instead of col/path/field).'),
  transforms: z.array(TransformSchema).optional().describe('Transforms applied before the test.'),
  in: z.array(Scalar).min(1).optional().describe('Keep the row when the value is one of these.'),
  notIn: z.array(Scalar).min(1).optional().describe('Keep the row when the value is none of these.'),
  equals: Scalar.optional().describe('Keep the row when the value equals this.'),
  notEquals: Scalar.optional().describe('Keep the row when the value differs from this.'),
  notEmpty: z.literal(true).optional().describe('Keep the row when the value is not empty.'),
  empty: z.literal(true).optional().describe('Keep the row when the value is empty.'),
  regex: z.string().min(1).optional().describe('Keep the row when the value matches this regular expression.'),
  ignoreCase: z.boolean().default(false).describe('Compare case-insensitively (in, notIn, equals, notEquals, regex). @default false'),
};
const TEST_OPS = ['in', 'notIn', 'equals', 'notEquals', 'notEmpty', 'empty', 'regex'] as const;
const SOURCES = ['col', 'path', 'field', 'value'] as const;

const ConditionRef: z.ZodType<unknown> = z.lazy(() => ConditionSchema);

const TestCondition = z
  .strictObject(TestSchema)
  .superRefine((c, ctx) => {
    const sources = SOURCES.filter((k) => (c as Record<string, unknown>)[k] !== undefined);
    if (sources.length !== 1) {
      ctx.addIssue({
        code: 'custom',
        message: `a condition names exactly one of col, path, field, value (found ${sources.length ? sources.join(', ') : 'none'})`,
      });
    }
    const ops = TEST_OPS.filter((k) => (c as Record<string, unknown>)[k] !== undefined);
    if (ops.length !== 1) {
      ctx.addIssue({ code: 'custom', message: `a condition has exactly one test of ${TEST_OPS.join(', ')} (found ${ops.length ? ops.join(', ') : 'none'})` });
    }
  })
  .describe('A test on one value, e.g. {col: tipo, in: [A, B]} or {col: codigo, notEmpty: true}.');

export const ConditionSchema = z
  .union([
    TestCondition,
    z.strictObject({ all: z.array(ConditionRef).min(1).describe('Every condition holds.') }),
    z.strictObject({ any: z.array(ConditionRef).min(1).describe('At least one condition holds.') }),
    z.strictObject({ not: ConditionRef.describe('The condition does not hold.') }),
  ])
  .describe('A row condition.')
  .meta({ id: 'Condition' });

export type TestConditionSpec = z.output<typeof TestCondition>;
export type ConditionSpec = TestConditionSpec | { all: ConditionSpec[] } | { any: ConditionSpec[] } | { not: ConditionSpec };

const FilterSchema = z
  .union([ConditionSchema, z.array(ConditionSchema).min(1)])
  .describe('Rows to keep: a condition, or a list that must all hold. Rows not kept are skipped (counted, not rejected).');

// ---------------------------------------------------------------------------------------------
// Grouping (documents)
// ---------------------------------------------------------------------------------------------

const FieldsSchema = z.record(z.string(), ExpressionSchema);

/** Multi-record files: the levels below an item and the records every level may read (src/map/record-groups.ts). */
const RecordGroupKeys = {
  lotRecord: z
    .union([z.string().min(1), z.array(z.string().min(1)).min(1)])
    .optional()
    .describe(
      'Multi-record files: record type(s) of the lines under an item (lots, grades): each becomes its own item, reading its ' +
        "own fields and its item's as '<itemRecord>/<field>'. An item without any gives one item.",
    ),
  contextRecords: z
    .array(z.string().min(1))
    .min(1)
    .optional()
    .describe(
      "Multi-record files: record types read by the lines after them as '<type>/<field>' (SPED 0000, NOTFIS 311 shipper and " +
        '312 recipient), until the next record of the same type. Record types of no level are skipped (counted).',
    ),
};

export const GroupSchema = z
  .strictObject({
    by: ExpressionSchema.optional().describe(
      "Document key: rows with the same value form one document (e.g. the order number, or '/NFe/infNFe/@Id'). Not needed with headerRecord/itemRecord.",
    ),
    headerRecord: z
      .string()
      .min(1)
      .optional()
      .describe(
        'Multi-record files (source.records, delimited or fixed-width): record type of the header line that starts a document (header fields are read from it).',
      ),
    itemRecord: z
      .union([z.string().min(1), z.array(z.string().min(1)).min(1)])
      .optional()
      .describe('Multi-record files: record type(s) of the item lines that follow their header (item fields are read from them).'),
    ...RecordGroupKeys,
    items: z.enum(['pickingItens', 'purchaseOrderItens']).describe('The target field holding the items.'),
    itemFields: FieldsSchema.describe('Item field -> expression, evaluated on every row (or exploded element) of the document.'),
    explode: z
      .string()
      .min(1)
      .optional()
      .describe(
        "Path of a repeating element of the item ('prod/rastro'): each element becomes its own item, whose values are read " +
          "as '<explode>/<child>' ('prod/rastro/nLote'). An item without any element gives one item.",
      ),
    contiguous: z
      .boolean()
      .default(true)
      .describe(
        'true: the rows of a document are consecutive (streaming; a key reappearing later is rejected). false: documents ' +
          'are buffered until the end of the file (memory grows with the number of documents). @default true',
      ),
    headerMustAgree: z
      .boolean()
      .default(true)
      .describe('Header fields are computed on every row and must agree; otherwise the whole document is rejected. @default true'),
  })
  .describe('Makes documents (PickingList, PurchaseOrder): `fields` are the header, `itemFields` the items.');

// ---------------------------------------------------------------------------------------------
// Aggregation (one record per key: stock per lot or per warehouse summed per product) -- map/aggregate.ts
// ---------------------------------------------------------------------------------------------

export const AggregateSchema = z
  .strictObject({
    sum: z.array(z.string().min(1)).min(1).describe('Target fields added up over the records of one key (e.g. [quantity]); every other field must agree.'),
  })
  .describe(
    "Records with the same natural key (`key`, else the target's: product|owner for StockSync) become one record whose " +
      '`sum` fields are added up: a stock position per lot or per warehouse sent as one quantity per product. Filter the ' +
      'rows first (e.g. one warehouse) with `filter`. A key with a rejected row is rejected whole. Held until the end of the file.',
  );

// ---------------------------------------------------------------------------------------------
// One file, several mappings; rows that must not be sent (issue 39: multi.ts, unsent.ts)
// ---------------------------------------------------------------------------------------------

const MAPPING_NAME = /^[A-Za-z0-9][A-Za-z0-9_.-]*$/;

export const SkipRuleSchema = z
  .strictObject({
    when: z.union([ConditionSchema, z.array(ConditionSchema).min(1)]).describe('The rows this rule excludes: a condition, or a list that must all hold.'),
    reason: z.string().min(1).max(200).describe("Why these rows are not sent (shown in the result file and the report, e.g. 'negative stock position')."),
  })
  .describe('A declared skip: rows the mapping selects but must not send, counted and listed with the reason (not rejects).');

/** Keys of the mapping model for several mappings on one file and for rows not sent (spread into MappingSchema). */
const ROW_SELECTION_KEYS = {
  sharesFilesWith: z
    .array(z.string().regex(MAPPING_NAME, 'a mapping name'))
    .min(1)
    .optional()
    .describe(
      'Other mappings that read the same files on purpose (one table, several targets: categories and families, ' +
        'providers and carriers). A file taken by several mappings is an error unless one of each pair names the other here. ' +
        'Each mapping keeps its own `filter`; a row no mapping selects is listed as not selected.',
    ),
  skip: z
    .array(SkipRuleSchema)
    .min(1)
    .optional()
    .describe('Rows not to send, each rule with its reason: evaluated after `filter`, listed in the result file and the report as excluded.'),
  onRejected: z
    .enum(['hold', 'sendValid'])
    .optional()
    .describe(
      "StockSync only: 'hold' (the safe default) sends nothing of a file with a rejected row until a person decides " +
        "(`wmsbridge resolve --send-valid`); 'sendValid' sends the valid rows' session as the business rule. @default 'hold'",
    ),
};

// ---------------------------------------------------------------------------------------------
// The mapping
// ---------------------------------------------------------------------------------------------

export const RECORD_OPS = ['create', 'update', 'upsert', 'delete'] as const;

export const MappingSchema = z
  .strictObject({
    $schema: z.string().optional().describe('JSON Schema reference for editors (ignored).'),
    name: z
      .string()
      .regex(/^[A-Za-z0-9][A-Za-z0-9_.-]*$/, 'use letters, digits, _ . - (no spaces)')
      .describe('Unique name of the mapping (reports, journal, rejects).'),
    description: z.string().optional().describe('What this mapping is for (free text).'),
    match: z
      .strictObject({
        channel: z.string().min(1).optional().describe('Inbox channel (sub-folder name) the files arrive in. @default any channel'),
        files: z
          .union([z.string().min(1), z.array(z.string().min(1)).min(1)])
          .describe("Glob(s) on the file name, case-insensitive: * ? [abc] {a,b} (e.g. 'PRODUTOS_*.csv')."),
      })
      .describe('Which files this mapping reads.'),
    source: ParseOptionsSchema,
    target: z.enum(TARGETS).describe('What every record (or document) becomes in the WMS.'),
    op: z
      .enum(RECORD_OPS)
      .optional()
      .describe(
        'Operation. ConversionFactor: create|update|upsert; ShippingCompany, Provider: create|update|upsert; ' +
          'ConversionFactorDelete: delete; others: create. @default upsert for ShippingCompany, Provider, ConversionFactor; delete for ConversionFactorDelete; create otherwise',
      ),
    key: ExpressionSchema.optional().describe(
      "Natural key of a record (unique per target). @default codeERP (Category, Family, Provider, ShippingCompany, ConversionFactor), codeERP or symbol (UnitMeasurement), code (Product, Owners), 'order|owner' (PickingList), 'nf|provider' (PurchaseOrder), product|warehouse|lot|status (StockLock/Unlock), product|owner (StockSync), id (ConversionFactorDelete), pickingList|fileName (PickingListAttachment)",
    ),
    filter: FilterSchema.optional(),
    timeZone: z
      .string()
      .default(DEFAULT_TIME_ZONE)
      .describe("IANA time zone of the source's date-times (used by `date` transforms). @default 'America/Sao_Paulo'"),
    fields: FieldsSchema.describe('Target field -> expression. With `group`, the document header fields.'),
    group: GroupSchema.optional(),
    aggregate: AggregateSchema.optional(),
    attachmentPath: ExpressionSchema.optional().describe(
      'PickingListAttachment: path of the file to attach, relative to the channel folder (e.g. {col: arquivo}).',
    ),
    ...ROW_SELECTION_KEYS,
  })
  .describe('A wmsbridge mapping: how one kind of ERP file becomes WMS records.');

export type MappingSpec = z.output<typeof MappingSchema>;
export type MappingInput = z.input<typeof MappingSchema>;
