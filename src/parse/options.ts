/**
 * Parser options: one zod schema per source format, a discriminated union on `format`.
 * The mapping model embeds `ParseOptionsSchema` (a mapping says how its files are read), so every
 * option carries a `.describe()` text and a default; unknown keys are refused (strict objects), so a
 * typo in a mapping file is a config error instead of a silently ignored option.
 *
 * `ParseOptionsInput` is what a mapping file may write (defaults optional); `ParseOptions` is the
 * resolved shape after `ParseOptionsSchema.parse()` (defaults filled in). See docs/PARSERS.md.
 */
import { z } from 'zod';

/** 1 MiB: the default longest physical line (characters) a text parser accepts before reporting 'line_too_long'. */
export const DEFAULT_MAX_LINE_LENGTH = 1024 * 1024;
/** 20 MiB: the default size limit of non-streaming formats (xml, json). */
export const DEFAULT_MAX_BYTES = 20 * 1024 * 1024;

export const Encoding = z
  .enum(['utf-8', 'windows-1252', 'iso-8859-1', 'utf-16le', 'utf-16be'])
  .describe(
    'Character encoding of the file. Decoded with iconv-lite (windows-1252 maps 0x80-0x9F to € ‚ „ … – — etc.; ' +
      'iso-8859-1 maps them to C1 controls). A byte order mark wins over this option: EF BB BF is UTF-8, FF FE UTF-16LE ' +
      '(Excel\'s "Unicode text"), FE FF UTF-16BE; it is stripped, and the rejects file is written back with it.',
  );
export type Encoding = z.infer<typeof Encoding>;

const MaxLineLength = z
  .number()
  .int()
  .positive()
  .default(DEFAULT_MAX_LINE_LENGTH)
  .describe('Longest physical line (in characters) accepted; a longer one is reported as a line_too_long error item. @default 1048576');

const MaxBytes = z
  .number()
  .int()
  .positive()
  .default(DEFAULT_MAX_BYTES)
  .describe('Largest file accepted (bytes): the whole file is held in memory. A larger file is refused with an InputError. @default 20971520 (20 MB)');

const SingleChar = z.string().length(1);

/** Slash path with no empty segment: 'nfeProc/NFe/infNFe/det'. */
const SlashPath = z
  .string()
  .min(1)
  .regex(/^[^/]+(\/[^/]+)*$/, 'must be a slash-separated path without leading/trailing slash (e.g. nfeProc/NFe/infNFe/det)');

// ---------------------------------------------------------------------------------------------
// fixed-width (CNAB 240/400, legacy layouts)
// ---------------------------------------------------------------------------------------------

export const FixedFieldSchema = z
  .strictObject({
    name: z.string().min(1).describe("Field name (the key in the row's fields)."),
    start: z.number().int().min(1).describe('1-based first character position.'),
    length: z.number().int().min(1).describe('Number of characters.'),
  })
  .describe('One field of a fixed-width record. Values are NOT trimmed (the mapping decides).');

const MatchAt = z.strictObject({
  start: z.number().int().min(1).describe('1-based position where the value must appear.'),
  value: z.string().min(1).describe('Literal text expected at that position (e.g. "0", "1", "9").'),
});

// -- multi-record files (record types in delimited and fixed-width files): src/parse/records.ts ------

const MatchCol = z.strictObject({
  col: z.number().int().min(0).describe('Delimited files: 0-based position of the cell holding the record type (SPED: 1, after the leading "|").'),
  value: z.string().describe('The cell value of this record type (e.g. "C", "C100").'),
});
const MatchPrefix = z.strictObject({
  prefix: z.string().min(1).describe('The line starts with this text (e.g. "I;", "|C170|", "314").'),
});
const MatchPattern = z.strictObject({
  pattern: z.string().min(1).describe('JavaScript regular expression tested on the whole line (e.g. "^3[0-9]{2}"); compiled once.'),
});
const MatchOne = z.union([MatchAt, MatchCol, MatchPrefix, MatchPattern]);

export const RecordMatchSchema = z
  .union([MatchOne, z.array(MatchOne).min(1), z.literal('default')])
  .describe(
    'How a line is recognised as this record type: a literal at a position ({start, value}), a cell value ({col, value}, ' +
      'delimited files), a prefix ({prefix}), a regular expression ({pattern}), a list of these that must ALL match ' +
      '(CNAB240 segment P: "3" at 8 and "P" at 14), or "default" (any line no other type matched). Types are tried in ' +
      'declared order, "default" last.',
  );
export type RecordMatch = z.output<typeof RecordMatchSchema>;

export const FixedRecordSchema = z
  .strictObject({
    type: z.string().min(1).describe('Record type name, set as the row\'s recordType (e.g. "header", "detail", "trailer").'),
    match: RecordMatchSchema,
    fields: z.array(FixedFieldSchema).describe('Fields of this record type.'),
    occurs: z
      .strictObject({
        times: z.number().int().min(2).max(1000).describe('How many times the fields repeat on the line.'),
        every: z.number().int().min(1).describe('Characters from one occurrence to the next (the fields of occurrence n start (n-1)*every later).'),
      })
      .optional()
      .describe(
        'The fields repeat on one line (COBOL OCCURS; NOTFIS 314: four merchandise occurrences of 52 characters): each ' +
          'occurrence is a row of its own (same line); an occurrence after the first whose fields are all blank is left out. @default none',
      ),
  })
  .describe('A record type of a fixed-width file. Types are tried in order; "default" is tried last.');
export type FixedRecord = z.output<typeof FixedRecordSchema>;

const TrailerSum = z.strictObject({
  field: z.string().min(1).describe('Field (or column) of the trailer holding the declared total.'),
  of: z
    .strictObject({
      type: z.union([z.string().min(1), z.array(z.string().min(1)).min(1)]).describe('Record type(s) whose values are summed.'),
      field: z.string().min(1).describe('Field (or column) of those records summed.'),
    })
    .describe('What is summed.'),
  scale: z
    .number()
    .int()
    .min(0)
    .max(12)
    .optional()
    .describe('Implied decimal places of digits-only values (NOTFIS "000000001234" with scale 2 is 12.34). @default none: the decimal separator is read'),
  decimal: z.enum([',', '.']).default(',').describe("Decimal separator of values with one (thousands separators are not accepted). @default ','"),
});

const TrailerExtras = {
  since: z
    .string()
    .min(1)
    .optional()
    .describe(
      'Count and sum only the records from the last record of this type (included) up to the trailer: a block or document ' +
        'trailer (SPED C990 since C001; NOTFIS 318 since 310). @default the whole file',
    ),
  sums: z.array(TrailerSum).min(1).optional().describe('Totals the trailer declares, checked against the sum of the records it closes.'),
  perCode: z
    .strictObject({
      codeField: z.string().min(1).describe('Field of the trailer naming the record code it counts (SPED 9900: REG_BLC).'),
      code: z
        .union([
          z.strictObject({ col: z.number().int().min(0).describe('0-based cell holding the code (delimited).') }),
          z.strictObject({ start: z.number().int().min(1), length: z.number().int().min(1) }).describe('Position of the code (fixed-width).'),
        ])
        .describe('Where every line holds its record code.'),
    })
    .optional()
    .describe(
      'The trailer counts the lines of ONE record code, named in codeField (SPED 9900 |9900|C170|2|): checked at the end of ' +
        'the file against the lines whose code (read at `code`) is that one. countField is then the count of that code.',
    ),
};

export const TrailerCheckSchema = z
  .strictObject({
    type: z.string().min(1).default('trailer').describe('Record type of the trailer line. @default "trailer"'),
    countField: z
      .string()
      .min(1)
      .optional()
      .describe(
        'Field of the trailer holding the record count (digits; spaces and leading zeros allowed). @default none: no count is checked (a trailer of sums only, NOTFIS 318)',
      ),
    counts: z
      .union([z.enum(['detail', 'all']), z.array(z.string().min(1)).min(1)])
      .default('all')
      .describe(
        'What the count counts. "all": every physical record of the file up to and including the trailer (CNAB240 ' +
          '"quantidade de registros", CNAB400 trailer sequence number). "detail": every record before the trailer whose ' +
          'type is neither the trailer type nor "header". A list: records of those types. @default "all"',
      ),
    offset: z.number().int().default(0).describe('Added to the counted number before comparing. @default 0'),
    ...TrailerExtras,
  })
  .describe('Trailer count check: a mismatch makes the whole file fail (InputError naming the trailer line and both numbers).');

export type TrailerCheck = z.output<typeof TrailerCheckSchema>;

/** One trailer check, or several (SPED: 9999 for the file, C990 for block C, 9900 per record type). */
const TrailersSchema = z
  .union([TrailerCheckSchema, z.array(TrailerCheckSchema).min(1)])
  .describe('Trailer checks: one, or a list (each with its own type). A mismatch fails the whole file (nothing of it is sent).');

export const FixedWidthOptionsSchema = z
  .strictObject({
    format: z.literal('fixed-width'),
    encoding: Encoding.default('utf-8').describe('Character encoding of the file; positions count characters. @default "utf-8"'),
    records: z.array(FixedRecordSchema).min(1).describe('Record types; a line matching none is an unknown_record error item.'),
    lineLength: z
      .number()
      .int()
      .positive()
      .optional()
      .describe('Expected line length (e.g. 240, 400). Longer lines are line_too_long error items; shorter (right-trimmed) lines are tolerated. @default none'),
    skipEmptyLines: z.boolean().default(true).describe('Skip empty lines (a trailing blank line, a final EOF marker line). @default true'),
    trailer: TrailersSchema.optional(),
    comment: SingleChar.optional().describe('A line starting with this character is a comment and skipped (not counted by trailers). @default none'),
    allowControlCharacters: z
      .boolean()
      .default(false)
      .describe(
        'Accept control characters (tab, escape, C1 controls) and bidirectional overrides (U+202E...) inside fields. NUL is never accepted. When false, such a line is a control_character error item naming the field. @default false',
      ),
    maxLineLength: MaxLineLength,
  })
  .describe('Fixed-width text (CNAB, mainframe layouts), read line by line.');
export type FixedWidthOptions = z.output<typeof FixedWidthOptionsSchema>;

/**
 * A record type of a multi-record delimited file: the same declaration as a fixed-width record type, with
 * its cells named by `columns` (by position) or, for a mixed file, cut from the line by `fields`.
 */
export const DelimitedRecordSchema = z
  .strictObject({
    type: z.string().min(1).describe('Record type name, set as the row\'s recordType (e.g. "C", "I", "C100").'),
    match: RecordMatchSchema,
    columns: z
      .array(z.string())
      .optional()
      .describe(
        'Names of the cells by position ("" leaves a cell unnamed: SPED\'s empty cell before the first "|"). Cells past the ' +
          'list are keyed by their 0-based index. Also the expected cell count unless relaxColumnCount. @default none: cells keyed "0", "1"...',
      ),
    fields: z.array(FixedFieldSchema).optional().describe('Mixed files: fields cut from the line by position instead of split by the delimiter.'),
  })
  .describe('A record type of a delimited file. Types are tried in order; "default" is tried last.');
export type DelimitedRecord = z.output<typeof DelimitedRecordSchema>;

// ---------------------------------------------------------------------------------------------
// delimited (CSV, TXT with ; , | or TAB)
// ---------------------------------------------------------------------------------------------

export const DelimitedOptionsSchema = z
  .strictObject({
    format: z.literal('delimited'),
    delimiter: z.enum([';', ',', '|', '\t']).default(';').describe('Field separator: ";" "," "|" or TAB ("\\t"). @default ";"'),
    quote: z
      .union([SingleChar, z.literal(false)])
      .default('"')
      .describe('Quote character, or false when the file never quotes (e.g. SPED: a " is then plain text). @default "\\""'),
    escape: SingleChar.optional().describe('Escape character inside quoted fields. @default the quote character (a doubled quote "" is a literal quote)'),
    header: z
      .boolean()
      .default(true)
      .describe('Whether the first (non-skipped) line holds the column names. Names are trimmed; duplicates get _2, _3... @default true'),
    columns: z
      .array(z.string().min(1))
      .min(1)
      .optional()
      .describe(
        'Column names when there is no header (header: false). Without them, fields are keyed "0", "1", ... ' +
          'Refused together with header: true (checkParseOptions). Also the expected column count.',
      ),
    skipLines: z
      .number()
      .int()
      .nonnegative()
      .default(0)
      .describe('Number of leading physical lines to skip before the header/first row (titles, export banners). @default 0'),
    skipEmptyLines: z.boolean().default(true).describe('Skip lines that are empty (or only whitespace-free empty). @default true'),
    comment: SingleChar.optional().describe('A line starting with this character is a comment and skipped. @default none'),
    trim: z.boolean().default(false).describe('Trim spaces around every cell value (cells kept raw for rejects). @default false'),
    encoding: Encoding.default('utf-8').describe('Character encoding of the file. @default "utf-8"'),
    relaxColumnCount: z
      .boolean()
      .default(false)
      .describe(
        'Accept rows with fewer/more cells than the header or declared columns (e.g. SPED EFD, whose record types ' +
          'differ in length). When false, such a row is a ragged_row error item ("expected 12 columns, found 9"). @default false',
      ),
    allowControlCharacters: z
      .boolean()
      .default(false)
      .describe(
        'Accept control characters (tab, escape, C1 controls) and bidirectional overrides (U+202E...) inside fields. NUL is never accepted. When false, such a row is a control_character error item naming the field. @default false',
      ),
    maxLineLength: MaxLineLength,
    records: z
      .array(DelimitedRecordSchema)
      .min(1)
      .optional()
      .describe(
        'Multi-record file (SPED, orders with header and item lines): record types, each recognised by a cell value, a prefix ' +
          'or a pattern, with its own columns (or fixed-width fields). Needs header: false. A line no type matches is an ' +
          'unknown_record error item. @default none: every line is a row of the same columns',
      ),
    trailer: TrailersSchema.optional().describe('Trailer checks (counts, sums) of a multi-record file; needs records.'),
  })
  .describe('Delimited text (CSV / TXT), streamed line by line.');
export type DelimitedOptions = z.output<typeof DelimitedOptionsSchema>;

// ---------------------------------------------------------------------------------------------
// xml (NF-e and friends)
// ---------------------------------------------------------------------------------------------

/** NF-e det children that may repeat: always arrays so one lot and two lots look alike. */
export const DEFAULT_XML_REPEAT = ['prod/rastro', 'prod/DI', 'prod/DI/adi', 'prod/detExport', 'prod/med', 'prod/arma'];

export const XmlOptionsSchema = z
  .strictObject({
    format: z.literal('xml'),
    itemPath: z
      .union([SlashPath, z.array(SlashPath).min(1)])
      .describe(
        'Path (element names, namespace prefixes removed) from the document root to the repeating item element, ' +
          'e.g. "nfeProc/NFe/infNFe/det". A list gives alternatives, tried in order; the first that exists is used.',
      ),
    rootOptional: z
      .boolean()
      .default(true)
      .describe(
        'The first segment of itemPath may be absent (an NFe without its nfeProc envelope). Document-level paths ' +
          '("/NFe/infNFe/ide/nNF") never include that optional root. @default true',
      ),
    repeat: z
      .array(SlashPath)
      .default(DEFAULT_XML_REPEAT)
      .describe(
        'Item-relative paths of children that may repeat; they always get the indexed scheme (prod/rastro[0]/nLote) even ' +
          'when only one is present. @default ["prod/rastro","prod/DI","prod/DI/adi","prod/detExport","prod/med","prod/arma"]',
      ),
    maxBytes: MaxBytes,
    encoding: Encoding.optional().describe('Character encoding. @default the encoding of the XML declaration, else utf-8'),
  })
  .describe('XML document(s) with a repeating item element. Not streaming: bounded by maxBytes. DOCTYPE/ENTITY refused.');
export type XmlOptions = z.output<typeof XmlOptionsSchema>;

// ---------------------------------------------------------------------------------------------
// json / jsonl
// ---------------------------------------------------------------------------------------------

export const JsonOptionsSchema = z
  .strictObject({
    format: z.literal('json'),
    itemPath: z
      .union([SlashPath, z.array(SlashPath).min(1)])
      .optional()
      .describe(
        'Slash path of object keys from the top level to the array of items (e.g. "data/items"); it may cross arrays ' +
          '("pedidos/itens": the items of every order, each row also carrying its order\'s fields as "/pedidos/numero"). ' +
          "A list reads the items of each path, one after the other (each row's recordType names its path): how " +
          'mappings sharing one file at different levels read it (departamentos -> Category, departamentos/secoes -> Family). ' +
          '@default none: the top level is the array',
      ),
    maxBytes: MaxBytes,
    encoding: Encoding.default('utf-8').describe('Character encoding. @default "utf-8"'),
  })
  .describe('A JSON document: a top-level array of items, or an object with itemPath to one. Not streaming: bounded by maxBytes.');
export type JsonOptions = z.output<typeof JsonOptionsSchema>;

export const JsonlOptionsSchema = z
  .strictObject({
    format: z.literal('jsonl'),
    encoding: Encoding.default('utf-8').describe('Character encoding. @default "utf-8"'),
    skipEmptyLines: z.boolean().default(true).describe('Skip blank lines. @default true'),
    maxLineLength: MaxLineLength,
  })
  .describe('JSON Lines: one JSON object per line, streamed. A line that is not an object is an error item.');
export type JsonlOptions = z.output<typeof JsonlOptionsSchema>;

// ---------------------------------------------------------------------------------------------
// xlsx (spreadsheets: Bling, Omie, Tiny exports; a workbook saved by hand) -- see src/parse/xlsx.ts
// ---------------------------------------------------------------------------------------------

export const XlsxOptionsSchema = z
  .strictObject({
    format: z.literal('xlsx'),
    sheet: z
      .union([z.string().min(1), z.number().int().min(1)])
      .default(1)
      .describe('The sheet to read: its name (as on its tab, e.g. "Produtos") or its 1-based position among the tabs. @default 1 (the first tab)'),
    headerRow: z
      .number()
      .int()
      .min(1)
      .default(1)
      .describe('Row number (as Excel shows it) of the column names; the rows above it (titles, export banners) are skipped. @default 1'),
    header: z
      .boolean()
      .default(true)
      .describe('Whether headerRow holds the column names. false: columns are named by `columns`, else by their letter (A, B, ...). @default true'),
    columns: z
      .array(z.string().min(1))
      .min(1)
      .optional()
      .describe('Column names for a sheet without a header row (header: false), from column A on. Refused with header: true.'),
    skipEmptyRows: z.boolean().default(true).describe('Skip rows whose cells are all empty. @default true'),
    allowControlCharacters: z
      .boolean()
      .default(false)
      .describe('Accept control characters (tab, escape...) and bidirectional overrides inside cells; a line break in a cell is always text. @default false'),
  })
  .describe(
    'An Excel workbook (.xlsx), streamed row by row. Cells are typed: a number is read as its digits (an EAN never becomes 7,89E+12) with a ' +
      'decimal comma (1234,5: what the number transform reads by default), a date cell as dd/MM/yyyy (dd/MM/yyyy HH:mm:ss with a time), ' +
      'a cell holding an Excel error (#N/A) rejects its row naming the cell.',
  );
export type XlsxOptions = z.output<typeof XlsxOptionsSchema>;

// ---------------------------------------------------------------------------------------------
// the union
// ---------------------------------------------------------------------------------------------

export const ParseOptionsSchema = z
  .discriminatedUnion('format', [DelimitedOptionsSchema, FixedWidthOptionsSchema, XmlOptionsSchema, JsonOptionsSchema, JsonlOptionsSchema, XlsxOptionsSchema])
  .describe('How a source file is read: format and its options.');

/** Resolved options (defaults filled in). */
export type ParseOptions = z.output<typeof ParseOptionsSchema>;
/** What a mapping file may write (defaults optional). */
export type ParseOptionsInput = z.input<typeof ParseOptionsSchema>;

/**
 * Consistency rules across options that the schema cannot express without refinements (kept out of the
 * zod objects so they stay extendable). Returns problems as "key: message"; [] when consistent.
 * `openParser` refuses options with problems (ConfigError); mapping validation should call it too.
 */
export function checkParseOptions(o: ParseOptions): string[] {
  const problems: string[] = [];
  switch (o.format) {
    case 'delimited': {
      if (o.header && o.columns) problems.push('columns: only apply with header: false (the header names the columns)');
      if (o.columns) {
        const dup = o.columns.filter((c, i) => o.columns!.indexOf(c) !== i);
        if (dup.length) problems.push(`columns: duplicate names ${[...new Set(dup)].join(', ')}`);
      }
      if (o.quote === o.delimiter) problems.push('quote: must differ from the delimiter');
      if (o.escape !== undefined && o.escape === o.delimiter) problems.push('escape: must differ from the delimiter');
      if (o.comment !== undefined && (o.comment === o.delimiter || o.comment === o.quote)) {
        problems.push('comment: must differ from the delimiter and the quote');
      }
      if (o.records) {
        if (o.header) problems.push('records: a multi-record file has no header line: set header: false');
        if (o.columns) problems.push('columns: each record type names its own columns (records[].columns)');
        checkRecordTypes(o.records, o.trailer, 'delimited', problems);
      } else if (o.trailer) problems.push('trailer: trailer checks need record types (records)');
      break;
    }
    case 'fixed-width': {
      o.records.forEach((r, i) => {
        if (o.lineLength !== undefined) {
          const extra = r.occurs ? (r.occurs.times - 1) * r.occurs.every : 0;
          for (const f of r.fields) {
            if (f.start - 1 + f.length + extra > o.lineLength) {
              const what = extra ? ` (its occurrence ${r.occurs?.times ?? ''})` : '';
              problems.push(`records.${i}.fields: field ${f.name}${what} ends at ${f.start - 1 + f.length + extra}, past lineLength ${o.lineLength}`);
            }
          }
        }
      });
      checkRecordTypes(o.records, o.trailer, 'fixed-width', problems);
      break;
    }
    case 'xlsx': {
      if (o.header && o.columns) problems.push('columns: only apply with header: false (the header row names the columns)');
      if (o.columns) {
        const dup = o.columns.filter((c, i) => o.columns!.indexOf(c) !== i);
        if (dup.length) problems.push(`columns: duplicate names ${[...new Set(dup)].join(', ')}`);
      }
      break;
    }
    default:
      break;
  }
  return problems;
}

type AnyRecord = { type: string; match: RecordMatch; fields?: Array<{ name: string }> | undefined; columns?: string[] | undefined };
type AnyTrailer = z.output<typeof TrailerCheckSchema>;

/** The names a record type's rows hold, or undefined when its cells are keyed by position only. */
function recordNames(r: AnyRecord): string[] | undefined {
  if (r.columns === undefined && r.fields === undefined) return undefined;
  return [...(r.columns ?? []).filter((c) => c !== ''), ...(r.fields ?? []).map((f) => f.name)];
}

function checkMatch(m: RecordMatch, at: string, format: 'delimited' | 'fixed-width', problems: string[]): void {
  if (m === 'default') return;
  for (const one of Array.isArray(m) ? m : [m]) {
    if ('col' in one && format !== 'delimited') problems.push(`${at}.match: {col, value} reads a cell of a delimited file; use {start, value} or {prefix}`);
    if ('pattern' in one) {
      try {
        new RegExp(one.pattern);
      } catch (err) {
        problems.push(`${at}.match.pattern: not a regular expression (${(err as Error).message})`);
      }
    }
  }
}

/** Rules of record types and trailers, the same for delimited and fixed-width files. */
function checkRecordTypes(records: AnyRecord[], trailer: AnyTrailer | AnyTrailer[] | undefined, format: 'delimited' | 'fixed-width', problems: string[]): void {
  const types = new Set<string>();
  records.forEach((r, i) => {
    types.add(r.type);
    const names = recordNames(r) ?? [];
    const dup = names.filter((n, k) => names.indexOf(n) !== k);
    if (dup.length) problems.push(`records.${i}.fields: duplicate field names ${[...new Set(dup)].join(', ')} in type "${r.type}"`);
    if (r.columns !== undefined && r.fields !== undefined)
      problems.push(`records.${i}: give columns (split by the delimiter) or fields (cut by position), not both`);
    checkMatch(r.match, `records.${i}`, format, problems);
  });
  if (records.filter((r) => r.match === 'default').length > 1) problems.push('records: at most one record type may match "default"');
  const list = trailer === undefined ? [] : Array.isArray(trailer) ? trailer : [trailer];
  list.forEach((t, i) => {
    const at = Array.isArray(trailer) ? `trailer.${i}` : 'trailer';
    const recs = records.filter((r) => r.type === t.type);
    const has = (name: string): boolean => recs.every((r) => recordNames(r)?.includes(name) ?? /^\d+$/.test(name));
    if (recs.length === 0) problems.push(`${at}.type: the layout declares no record type "${t.type}"`);
    else {
      if (t.countField === undefined) {
        if (!t.sums || t.perCode)
          problems.push(`${at}.countField: give the field of the trailer holding the count${t.perCode ? ' of the code' : ' (or sums)'}`);
      } else if (!has(t.countField)) problems.push(`${at}.countField: record type "${t.type}" has no field "${t.countField}"`);
      for (const sum of t.sums ?? []) if (!has(sum.field)) problems.push(`${at}.sums: record type "${t.type}" has no field "${sum.field}"`);
      if (t.perCode && !has(t.perCode.codeField)) problems.push(`${at}.perCode.codeField: record type "${t.type}" has no field "${t.perCode.codeField}"`);
    }
    const known = (c: string, where: string): void => {
      if (!types.has(c)) problems.push(`${at}.${where}: no record type "${c}"`);
    };
    if (Array.isArray(t.counts)) for (const c of t.counts) known(c, 'counts');
    if (t.since !== undefined) known(t.since, 'since');
    for (const sum of t.sums ?? []) {
      for (const c of typeof sum.of.type === 'string' ? [sum.of.type] : sum.of.type) {
        known(c, 'sums.of.type');
        const r = records.find((x) => x.type === c);
        const names = r ? recordNames(r) : undefined;
        if (names && !names.includes(sum.of.field)) problems.push(`${at}.sums.of.field: record type "${c}" has no field "${sum.of.field}"`);
      }
    }
    if (t.perCode) {
      const code = t.perCode.code;
      if ('col' in code && format !== 'delimited') problems.push(`${at}.perCode.code: {col} reads a cell of a delimited file; use {start, length}`);
      if ('start' in code && format !== 'fixed-width') problems.push(`${at}.perCode.code: {start, length} is for fixed-width files; use {col}`);
    }
  });
}
