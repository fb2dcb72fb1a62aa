/**
 * From a sniffed sample to a proposed mapping: the target (file-name words and column names vote), a
 * column for every target field (name meaning from the dictionary x value type), the references the
 * target needs, placeholders with TODOs for required fields no column gives, and document grouping by
 * the column that repeats with a constant header. Every choice carries a confidence and its evidence.
 */
import { basename, dirname } from 'node:path';
import { openParser } from '../parse/index.js';
import type { ParseOptionsInput } from '../parse/options.js';
import type { RawRow } from '../parse/types.js';
import { TARGETS, TARGET_INFO, type Target } from '../wms/targets.js';
import type { z } from 'zod';
import { ConfigError } from '../shared/errors.js';
import type { Sniffed } from './sniff.js';
import { fileDecimalSeparator, profileColumn, type ColumnProfile, type ValueKind } from './types.js';
import { TARGETS_DICT, GENERIC_NAMES, fileNameWords, nameMatch, normName, type FieldDef, type TargetDef } from './dictionary.js';

export interface FieldProposal {
  field: string;
  expr: unknown;
  /** 0..1 */
  confidence: number;
  evidence: string;
  todo?: string;
  /** the columns it reads (for the summary) */
  columns: string[];
}

export interface Proposal {
  name: string;
  description: string;
  match: { channel: string; files: string };
  /** other mappings of the same drop that read the same files on purpose (one table, several targets) */
  sharesFilesWith?: string[];
  source: ParseOptionsInput;
  target: Target;
  targetConfidence: number;
  targetEvidence: string;
  filter?: { expr: unknown; evidence: string };
  group?: {
    by?: unknown;
    /** fixed-width documents: a header record starts a document, its detail records follow */
    headerRecord?: string;
    itemRecord?: string;
    /** delimited C/I/L: a lot record under an item makes one item per lot */
    lotRecord?: string;
    items: 'pickingItens' | 'purchaseOrderItens';
    explode?: string;
    contiguous: boolean;
    evidence: string;
    itemFields: FieldProposal[];
  };
  fields: FieldProposal[];
  attachmentPath?: FieldProposal;
  /** lines of evidence about the file itself (encoding, format) */
  sourceNotes: string[];
  /** columns no field reads */
  unused: string[];
  /** unread columns with a few code values: `map` / `table` / filter candidates */
  smallSets?: string[];
  rowsRead: number;
  parseErrors: number;
  decimal: ',' | '.';
}

export interface ProposeOptions {
  target?: string;
  channel?: string;
  name?: string;
}

const MAX_ROWS = 5000;

// ---------------------------------------------------------------------------------------------
// source options and rows
// ---------------------------------------------------------------------------------------------

export function sourceOptions(s: Sniffed): ParseOptionsInput {
  const enc = s.encoding.ascii ? {} : s.encoding.encoding === 'utf-8' ? {} : { encoding: s.encoding.encoding };
  switch (s.format) {
    case 'delimited': {
      const d = s.delimited!;
      const o: Record<string, unknown> = { format: 'delimited', delimiter: d.delimiter, ...enc };
      if (d.quote === false) o['quote'] = false;
      const m = s.multiRecord;
      if (m?.roles) {
        // record types by their first cell, each with its own cells named by position (c_2: cell 2 of a C line)
        if (s.skipLines && /^\s*#/.test(s.text)) o['comment'] = '#';
        else if (s.skipLines) o['skipLines'] = s.skipLines;
        o['header'] = false;
        o['records'] = m.types.map((t) => ({ type: t.value, match: { col: 0, value: t.value }, columns: recordColumns(t.value, t.cells) }));
        if (m.trailer) {
          o['trailer'] = {
            type: m.trailer.type,
            countField: recordColumns(m.trailer.type, m.trailer.cell + 1)[m.trailer.cell],
            counts: m.trailer.counts,
            ...(m.trailer.offset ? { offset: m.trailer.offset } : {}),
          };
        }
        return o as ParseOptionsInput;
      }
      if (s.skipLines) o['skipLines'] = s.skipLines;
      if (m) o['relaxColumnCount'] = true;
      if (!d.header) {
        o['header'] = false;
        o['columns'] = Array.from({ length: d.columns }, (_, i) => `coluna_${i + 1}`);
      }
      return o as ParseOptionsInput;
    }
    case 'fixed-width': {
      const f = s.fixed!;
      const records: Array<Record<string, unknown>> = [];
      if (f.titleLine) {
        const detail = f.records[0]!;
        const first = detail.fields[0]!;
        records.push({ type: 'titulo', match: { start: first.start, value: first.name }, fields: detail.fields });
      }
      for (const r of f.records) {
        records.push({ type: r.type, match: r.tag !== undefined ? { start: 1, value: r.tag } : 'default', fields: r.fields });
      }
      const o: Record<string, unknown> = { format: 'fixed-width', ...enc, records };
      if (f.trailer) o['trailer'] = f.trailer;
      return o as ParseOptionsInput;
    }
    case 'xml':
      return { format: 'xml', itemPath: s.xml!.itemPath, ...(s.encoding.encoding !== 'utf-8' ? enc : {}) } as ParseOptionsInput;
    case 'json':
      return { format: 'json', ...(s.json?.itemPath ? { itemPath: s.json.itemPath } : {}), ...enc } as ParseOptionsInput;
    case 'jsonl':
      return { format: 'jsonl', ...enc } as ParseOptionsInput;
    case 'xlsx': {
      const x = s.xlsx!;
      return { format: 'xlsx', sheet: x.sheet, ...(x.headerRow > 1 ? { headerRow: x.headerRow } : {}) } as ParseOptionsInput;
    }
  }
}

/** The cells of a record type named by position: `i_4` is cell 4 of an `I` line; cell 1, the type, is `tipo` in every type. */
export function recordColumns(type: string, cells: number): string[] {
  const slug = type.toLowerCase().replace(/[^a-z0-9]/g, '') || 'r';
  return Array.from({ length: cells }, (_, i) => (i === 0 ? 'tipo' : `${slug}_${i + 1}`));
}

async function readRows(path: string, source: ParseOptionsInput): Promise<{ rows: RawRow[]; errors: number }> {
  const rows: RawRow[] = [];
  let errors = 0;
  for await (const item of openParser(path, source)) {
    if (item.kind === 'row') rows.push(item.row);
    else errors++;
    if (rows.length >= MAX_ROWS) break;
  }
  return { rows, errors };
}

// ---------------------------------------------------------------------------------------------
// target
// ---------------------------------------------------------------------------------------------

const best0 = (scored: Array<{ score: number }>) => scored[0]?.score ?? 0;

/** A target from what the columns hold when neither the file name nor the column names say it. */
function targetFromContent(cols: ColumnProfile[]): { target: Target; evidence: string } | undefined {
  const has = (k: ValueKind) => cols.some((c) => c.type.kind === k);
  const units = cols.some((c) => share(c, (v) => UNITS.has(v.toUpperCase())) >= 0.9);
  const phones = cols.some((c) => share(c, (v) => PHONE.test(v)) >= 0.8);
  const rows = cols[0]?.values.length ?? 0;
  const repeating = cols.some((c) => c.emptyShare === 0 && c.distinct > 1 && c.distinct < rows * 0.7 && c.runs === c.distinct);
  if ((has('cnpj') || has('cpf')) && (has('date') || has('datetime')) && repeating && cols.some((c) => c.type.kind === 'decimal'))
    return {
      target: 'PickingList',
      evidence: 'the values hold a date, a CNPJ/CPF, a column repeating in runs (a document number) and decimal quantities: order lines',
    };
  if (has('cnpj') && (has('cep') || has('uf') || phones))
    return { target: 'Provider', evidence: 'the values hold CNPJs with valid check digits and addresses (CEP, UF, phones): partners' };
  if (has('gtin') || has('ncm') || (units && cols.some((c) => c.type.kind === 'text')))
    return { target: 'Product', evidence: 'the values hold barcodes, NCM codes or units of measure beside descriptions: products' };
  return undefined;
}

function chooseTarget(fileName: string, cols: ColumnProfile[], forced: string | undefined): { def: TargetDef; confidence: number; evidence: string } {
  if (forced) {
    const t = TARGETS.find((x) => x.toLowerCase() === forced.toLowerCase());
    if (!t) throw new ConfigError(`infer: --target '${forced}' is not a target; expected one of ${TARGETS.join(', ')}`);
    const def = TARGETS_DICT.find((d) => d.target === t);
    if (!def)
      throw new ConfigError(
        `infer: --target ${t} is not supported by infer yet (supported: ${TARGETS_DICT.map((d) => d.target).join(', ')}, PurchaseOrder from NF-e XML)`,
      );
    return { def, confidence: 1, evidence: `--target ${t}` };
  }
  const words = fileNameWords(fileName);
  const scored = TARGETS_DICT.map((def) => {
    const fileHit = words.find((w) => def.fileWords.includes(w));
    let colVote = 0;
    const hits: string[] = [];
    for (const c of cols) {
      const n = normName(c.name);
      if (def.prefixes.some((p) => n.startsWith(`${p}_`))) {
        colVote += 1;
        hits.push(c.name);
        continue;
      }
      let best = 0;
      for (const f of def.fields) for (const syn of f.names) best = Math.max(best, nameMatch(c.name, syn) * (GENERIC_NAMES.has(syn) ? 0.2 : 1));
      if (best >= 0.6) hits.push(c.name);
      colVote += best;
    }
    return { def, score: (fileHit ? 3 : 0) + colVote, fileHit, hits };
  }).sort((a, b) => b.score - a.score);
  const byContent = best0(scored) <= 0.5 ? targetFromContent(cols) : undefined;
  if (byContent) {
    const def = TARGETS_DICT.find((d) => d.target === byContent.target)!;
    return { def, confidence: 0.5, evidence: `no known file-name word or column name; ${byContent.evidence}` };
  }
  const best = scored[0]!;
  const second = scored[1]!;
  if (best.score <= 0.5) {
    throw new ConfigError(
      `infer: cannot tell what ${fileName} holds (no known file-name word or column name); say it with --target (${TARGETS_DICT.map((d) => d.target).join(', ')})`,
    );
  }
  const margin = best.score - second.score;
  const confidence = Math.min(0.99, 0.5 + margin / (best.score + 1));
  const evidence =
    `${best.fileHit ? `file name word '${best.fileHit}'` : 'no file-name word'}` +
    `${best.hits.length ? `; columns ${best.hits.slice(0, 6).join(', ')}${best.hits.length > 6 ? '...' : ''} mean ${best.def.target} fields` : ''}` +
    `; score ${best.score.toFixed(1)} versus ${second.def.target} ${second.score.toFixed(1)}`;
  return { def: best.def, confidence, evidence };
}

// ---------------------------------------------------------------------------------------------
// expressions
// ---------------------------------------------------------------------------------------------

type Reader = 'col' | 'field' | 'path';

function readerOf(s: Sniffed): Reader {
  return s.format === 'delimited' || s.format === 'xlsx' ? 'col' : s.format === 'fixed-width' ? 'field' : 'path';
}

function numberTransform(c: ColumnProfile, fileDecimal: ',' | '.'): unknown {
  const t = c.type;
  if (t.kind === 'implied') return { number: { decimal: ',', thousands: '', scale: t.scale ?? 0 } };
  if (t.kind === 'decimal') return { number: { decimal: t.decimal ?? fileDecimal, thousands: t.thousands ?? (t.decimal === ',' ? '.' : '') } };
  return { number: { decimal: fileDecimal, thousands: fileDecimal === ',' ? '.' : '' } };
}

function buildExpr(f: FieldDef, c: ColumnProfile, reader: Reader, fileDecimal: ',' | '.'): { expr: unknown; todo?: string } {
  const src = { [reader]: c.name } as Record<string, unknown>;
  const withT = (transforms: unknown[]) => ({ ...src, transforms });
  switch (f.kind) {
    case 'code':
      return { expr: withT(['trim']) };
    case 'text':
      return { expr: withT(['trim']) };
    case 'number':
      if (c.type.kind === 'implied' && !c.type.scale)
        return {
          expr: withT([numberTransform(c, fileDecimal)]),
          todo: 'implied decimals not visible in the sample (no trailing zeros shared): set scale from the layout',
        };
      return { expr: withT([numberTransform(c, fileDecimal)]) };
    case 'integer':
      return { expr: withT(['integer']) };
    case 'date':
    case 'datetime': {
      if (c.type.format) return { expr: withT([{ date: { format: c.type.format } }]) };
      return { expr: withT([{ date: { format: 'dd/MM/yyyy' } }]), todo: 'no date format fits most values: check the format' };
    }
    case 'cnpj':
      return { expr: withT(['cnpj']) };
    case 'document':
      return { expr: withT(['digitsOnly']) };
    case 'ean':
      return { expr: withT(['trim', 'ean']) };
    case 'ncm':
    case 'cep':
      return { expr: withT(['digitsOnly']) };
    case 'uf':
      return { expr: withT(['trim', 'upper']) };
    case 'boolean':
      return { expr: withT(['boolean']) };
    case 'ref':
      return { expr: { ref: f.ref, from: src, transforms: ['trim'] } };
    case 'lookup': {
      const e: Record<string, unknown> = { lookup: f.lookup!.resource, by: f.lookup!.by, from: src, transforms: ['trim'] };
      if (f.default) e['default'] = f.default;
      return { expr: e };
    }
    case 'map': {
      const seen = c.distinctValues ?? [];
      const values: Record<string, number> = {};
      const unknown: string[] = [];
      for (const v of seen) {
        const hit = Object.entries(f.map ?? {}).find(([k]) => k.toUpperCase() === v.toUpperCase());
        if (hit) values[hit[0]] = hit[1];
        else unknown.push(v);
      }
      // the full word list the dictionary knows, so values absent from the sample still map
      for (const [k, v] of Object.entries(f.map ?? {})) if (k.length > 1 && !(k in values)) values[k] = v;
      const e = withT(['trim', { map: { values, ignoreCase: true } }]);
      return unknown.length ? { expr: e, todo: `values ${unknown.join(', ')} have no ${f.field} code yet: add them to the map` } : { expr: e };
    }
  }
}

// ---------------------------------------------------------------------------------------------
// column -> field scores
// ---------------------------------------------------------------------------------------------

const UNNAMED = /^(campo|coluna)_\d+$/;

function typeFits(f: FieldDef, c: ColumnProfile): boolean {
  return !f.types || f.types.includes(c.type.kind);
}

function score(f: FieldDef, c: ColumnProfile, unnamed: boolean): { score: number; why: string } {
  let name = 0;
  let syn = '';
  // positional layouts: the names are ours (from the types), they mean nothing
  if (!unnamed) {
    f.names.forEach((s, i) => {
      const m = nameMatch(c.name, s) - (nameMatch(c.name, s) > 0 ? i * 0.005 : 0);
      if (m > name) {
        name = m;
        syn = s;
      }
    });
  }
  // a column always empty in the sample says nothing by its values: only an exact name places it
  if (c.type.kind === 'empty') return name >= 0.95 ? { score: 0.55, why: `column '${c.name}' is a known name for ${f.field}` } : { score: 0, why: '' };
  let sc = name;
  let why = name >= 0.95 ? `column '${c.name}' is a known name for ${f.field}` : name > 0 ? `column '${c.name}' resembles '${syn}'` : '';
  if (name > 0) sc += typeFits(f, c) ? 0.15 : -0.6;
  if (f.byType?.includes(c.type.kind)) {
    if (name === 0) {
      sc = 0.55;
      why = `no name match, but the values are ${c.type.kind.toUpperCase()}`;
    } else sc += 0.1;
  }
  if (name === 0 && !f.byType?.includes(c.type.kind)) {
    // no name says it (a positional layout, or names no dictionary knows): the values decide
    const content = contentGuess(f, c);
    if (content) ({ score: sc, why } = content);
    else if (unnamed && f.lookup?.resource === 'Owners' && c.type.kind === 'code' && c.type.leadingZeros && c.maxLength === 3 && c.distinct === 1) {
      // one owner per file is the common case; a varying short code is more often a warehouse (Protheus local 01, 02)
      sc = 0.5;
      why = `a 3-digit zero-padded code, the same on every line (${(c.distinctValues ?? []).join(', ')}): like an owner code`;
    }
  }
  return { score: sc, why };
}

/** Units of measure as ERPs write them (case ignored): a column of these is a unit column. */
const UNITS = new Set(
  'UN UND UNID UNIDADE CX CXA KG G GR MG T TON L LT ML M M2 M3 CM MM PC PÇ PCT PT FD DZ SC SACO RL GL BD BJ CJ KIT PAR PR TB FR AMP ENV BL CT MIL'.split(' '),
);
const PHONE = /^(\+?55\s?)?\(?0?\d{2}\)?[\s-]?9?\d{4}[\s-]?\d{4}$/;
const COMPANY_SUFFIX = /\b(LTDA|S\.?\/?A|ME|EPP|EIRELI|MEI|CIA)\.?$/i;
const STREET = /^(RUA|R\.|AV|AV\.|AVENIDA|ROD|ROD\.|RODOVIA|TRAVESSA|TV|ALAMEDA|AL\.|PRACA|PÇA|ESTRADA|EST\.|LARGO)\b/i;

function share(c: ColumnProfile, test: (v: string) => boolean): number {
  const vals = c.values.filter((v) => v !== '');
  return vals.length ? vals.filter(test).length / vals.length : 0;
}

/**
 * What a column's values say about a field when no name does: unique codes are a record's key, the
 * longest text its name (a company name ends in LTDA, S/A...), unit symbols a unit, phone numbers a
 * phone, street words an address, a code repeating across rows a reference (category, family), a
 * decimal number a quantity. Scores stay at 0.5-0.6: any name match beats them.
 */
function contentGuess(f: FieldDef, c: ColumnProfile): { score: number; why: string } | undefined {
  const k = c.type.kind;
  const rows = c.values.length;
  // codes: digits, short tokens, or dotted/dashed identifiers without spaces (01.003.0001)
  const codeLike = k === 'code' || k === 'integer' || (k === 'text' && c.maxLength <= 20 && share(c, (v) => !/\s/.test(v)) === 1);
  const words = share(c, (v) => /^[\p{L}][\p{L} .&/-]*$/u.test(v));
  if ((f.field === 'unitmeasurement' || f.field === 'symbol') && share(c, (v) => UNITS.has(v.toUpperCase())) >= 0.9)
    return { score: 0.62, why: `the values are units of measure (${(c.distinctValues ?? []).slice(0, 6).join(', ')})` };
  if (f.field === 'phone' && share(c, (v) => PHONE.test(v)) >= 0.8) return { score: 0.6, why: 'the values are phone numbers' };
  if ((f.field === 'address' || f.field === 'street') && k === 'text' && share(c, (v) => STREET.test(v)) >= 0.6)
    return { score: 0.6, why: 'the values start with street words (RUA, AV...)' };
  if (['name', 'socialName', 'clientName'].includes(f.field) && k === 'text') {
    const companies = share(c, (v) => COMPANY_SUFFIX.test(v));
    if (companies >= 0.5 && f.field !== 'name') return { score: 0.6, why: `${pct(companies)} of the values are company names (LTDA, S/A...)` };
    return { score: 0.5 + Math.min(0.04, c.maxLength / 1000), why: 'the longest text column (names are the usual text)' };
  }
  if (f.field === 'name' && k === 'code' && words >= 0.9 && c.distinct >= Math.max(2, rows * 0.8))
    return { score: 0.5, why: 'distinct words without digits: names' };
  if (f.firstCode && codeLike && c.emptyShare === 0 && c.distinct >= Math.max(2, rows * 0.8))
    return { score: 0.5, why: 'the first column of distinct codes (a record key)' };
  if (f.item && f.ref === 'Product' && codeLike && c.maxLength >= 3 && c.distinct >= 2)
    return { score: 0.5, why: 'codes of 3+ characters varying from row to row: the item product' };
  if (f.kind === 'ncm' && share(c, (v) => /^\d{8}$|^\d{4}\.\d{2}\.\d{2}$/.test(v)) >= 0.9) return { score: 0.56, why: '8 digits (9999.99.99): NCM codes' };
  if (f.field === 'brand' && (k === 'text' || k === 'code') && words >= 0.9 && c.distinct >= 2 && c.distinct <= rows * 0.5)
    return { score: 0.5, why: `a few words repeating across rows (${c.distinct} values): a brand` };
  if (f.kind === 'ref' && (f.ref === 'Category' || f.ref === 'Family') && codeLike && c.distinct >= 3 && c.distinct <= rows * 0.5)
    return { score: 0.5, why: `a code repeating across rows (${c.distinct} values over ${rows} rows): a reference to a ${f.ref}` };
  if (f.kind === 'number' && (k === 'implied' || k === 'decimal')) return { score: 0.52, why: 'a decimal number column' };
  // the words of a field's value map (BAIXA/NORMAL/ALTA/URGENTE: a priority; CIF/FOB: freight)
  if (f.kind === 'map' && f.map) {
    const words = new Set(
      Object.keys(f.map)
        .filter((w) => w.length > 1)
        .map((w) => w.toUpperCase()),
    );
    if (words.size >= 2 && share(c, (v) => words.has(v.toUpperCase())) >= 0.9)
      return { score: 0.56, why: `the values are ${f.field} words (${(c.distinctValues ?? []).slice(0, 4).join(', ')})` };
  }
  return undefined;
}

function pct(x: number): string {
  return `${Math.round(x * 100)}%`;
}

function evidenceOf(why: string, c: ColumnProfile): string {
  const empty = c.emptyShare > 0 ? `; empty in ${pct(c.emptyShare)} of rows` : '';
  // sample values only for short codes: names, CPFs and addresses of people do not belong in a mapping file
  const codeLike = ['code', 'flag', 'uf', 'integer'].includes(c.type.kind) && c.maxLength <= 12;
  const few =
    codeLike && c.distinctValues && c.distinct <= 6 && c.values.length > c.distinct ? `; ${c.distinct} distinct value(s): ${c.distinctValues.join(', ')}` : '';
  return `${why}; ${c.type.evidence}${empty}${few}`;
}

// ---------------------------------------------------------------------------------------------
// documents: the column that repeats with a constant header
// ---------------------------------------------------------------------------------------------

function groupsOf(key: ColumnProfile): Map<string, number[]> {
  const g = new Map<string, number[]>();
  key.values.forEach((v, i) => {
    if (!g.has(v)) g.set(v, []);
    g.get(v)!.push(i);
  });
  return g;
}

function constantWithin(c: ColumnProfile, groups: Map<string, number[]>): boolean {
  for (const idx of groups.values()) {
    const v = c.values[idx[0]!];
    if (idx.some((i) => c.values[i] !== v)) return false;
  }
  return true;
}

function findDocumentKey(
  cols: ColumnProfile[],
  preferred: ColumnProfile | undefined,
): { key: ColumnProfile; contiguous: boolean; evidence: string } | undefined {
  const rows = cols[0]?.values.length ?? 0;
  if (rows < 2) return preferred ? { key: preferred, contiguous: true, evidence: `one row: documents keyed by '${preferred.name}'` } : undefined;
  const candidates = cols.filter((c) => c.emptyShare === 0 && c.distinct > 1 && c.distinct < rows);
  let best: { key: ColumnProfile; header: number } | undefined;
  for (const k of candidates) {
    const g = groupsOf(k);
    const header = cols.filter((c) => c !== k && constantWithin(c, g)).length;
    const wins = !best || header > best.header || (header === best.header && (k === preferred || k.distinct > best.key.distinct));
    if (header >= 2 && wins) best = { key: k, header };
  }
  const key = preferred && (!best || constantWithin(best.key, groupsOf(preferred))) ? preferred : best?.key;
  if (!key) return undefined;
  const contiguous = key.runs === key.distinct;
  const header = cols.filter((c) => c !== key && constantWithin(c, groupsOf(key))).length;
  return {
    key,
    contiguous,
    evidence: `'${key.name}' repeats: ${key.distinct} document(s) over ${rows} rows, ${header} other column(s) constant within each (the header)${contiguous ? '; the rows of a document are consecutive' : "; a document's rows are not consecutive: contiguous false"}`,
  };
}

// ---------------------------------------------------------------------------------------------
// NF-e
// ---------------------------------------------------------------------------------------------

/**
 * Which NF-e are purchase orders: authorised ones (protNFe cStat 100, or 150 authorised late) when the
 * file carries its protocol, and normal ones (finNFe 1): a return (4) or a complementary/adjustment
 * NF-e (2, 3) is no ordinary receipt.
 */
function nfeFilter(rows: RawRow[]): Proposal['filter'] {
  const values = (p: string) => [...new Set(rows.map((r) => r.fields[p]).filter((v): v is string => typeof v === 'string' && v !== ''))];
  const cStat = values('/protNFe/infProt/cStat');
  const fin = values('/NFe/infNFe/ide/finNFe');
  const conds: unknown[] = [];
  const why: string[] = [];
  if (cStat.length) {
    conds.push({ path: '/protNFe/infProt/cStat', in: ['100', '150'] });
    why.push(`protNFe cStat 100/150 (authorised; a cancelled or denied NF-e is skipped; seen: ${cStat.join(', ')})`);
  }
  if (fin.length) {
    conds.push({ path: '/NFe/infNFe/ide/finNFe', equals: '1' });
    why.push(
      `finNFe 1 (normal; 4 devolução is a return, receiptType 1, in a mapping of its own; 2/3 complementar/ajuste carry no goods; seen: ${fin.join(', ')})`,
    );
  }
  if (!conds.length) return undefined;
  return { expr: conds.length === 1 ? conds[0] : conds, evidence: `keeps ${why.join(' and ')}` };
}

function nfeProposal(rows: RawRow[]): Pick<Proposal, 'fields' | 'group' | 'target' | 'targetEvidence' | 'targetConfidence' | 'filter'> {
  const has = (p: string) => rows.some((r) => r.fields[p] !== undefined && r.fields[p] !== '');
  const lots = has('prod/rastro');
  const dateIso = has('/NFe/infNFe/ide/dhEmi');
  const nfe = 'NF-e layout (Manual de Orientação do Contribuinte): the meaning of this path is fixed';
  const paths = (e: unknown): string[] => {
    if (Array.isArray(e)) return e.flatMap(paths);
    if (e && typeof e === 'object') {
      const o = e as Record<string, unknown>;
      const own = typeof o['path'] === 'string' ? [o['path']] : [];
      const tpl = typeof o['template'] === 'string' ? [...o['template'].matchAll(/\{([^}]+)\}/g)].map((m) => m[1]!) : [];
      return [
        ...own,
        ...tpl,
        ...Object.entries(o)
          .filter(([k]) => k !== 'transforms')
          .flatMap(([, v]) => paths(v)),
      ];
    }
    return [];
  };
  const f = (field: string, expr: unknown, evidence = nfe, confidence = 0.95, todo?: string): FieldProposal => ({
    field,
    expr,
    evidence,
    confidence,
    columns: paths(expr),
    ...(todo ? { todo } : {}),
  });
  const items: FieldProposal[] = [
    f(
      'productID',
      { ref: 'Product', from: { path: 'prod/cProd' } },
      `${nfe}: prod/cProd is the issuer's product code (the same as yours only when the issuer is your own ERP)`,
      0.7,
    ),
    lots
      ? f(
          'quantity',
          { coalesce: [{ path: 'prod/rastro/qLote' }, { path: 'prod/qCom' }], transforms: [{ number: { decimal: '.' } }] },
          `${nfe}: lots (rastro) carry their own quantity, else prod/qCom; NF-e numbers use '.'`,
        )
      : f('quantity', { path: 'prod/qCom', transforms: [{ number: { decimal: '.' } }] }, `${nfe}: prod/qCom, NF-e numbers use '.'`),
  ];
  if (lots) {
    items.push(f('lotNumber', { path: 'prod/rastro/nLote' }));
    // lot dates are bare dates in the NF-e and DateTime in the interface: midnight in the zone, as UTC
    const lotDate = `${nfe}: a bare yyyy-MM-dd, written as a DateTime (output: datetime) since a strict WMS refuses a bare date there`;
    items.push(f('manufacturingDate', { path: 'prod/rastro/dFab', transforms: [{ date: { format: 'yyyy-MM-dd', output: 'datetime' } }] }, lotDate));
    items.push(f('expirationDate', { path: 'prod/rastro/dVal', transforms: [{ date: { format: 'yyyy-MM-dd', output: 'datetime' } }] }, lotDate));
  }
  items.push(f('aux01', { path: '@nItem' }, `${nfe}: the item number`, 0.8));
  if (has('prod/NCM')) items.push(f('aux02', { path: 'prod/NCM' }, `${nfe}: the NCM, kept for reference`, 0.6));
  if (has('prod/cEAN')) items.push(f('aux03', { path: 'prod/cEAN' }, `${nfe}: the EAN, kept for reference`, 0.6));
  const fields: FieldProposal[] = [
    f('nf', { path: '/NFe/infNFe/ide/nNF' }),
    f(
      'codeERP',
      { path: '/NFe/infNFe/@Id', transforms: [{ replace: { pattern: '^NFe', with: 'PurchaseOrder:' } }, 'uuid5'] },
      'codeERP is typed Guid: a stable UUID v5 from the access key (decision D-CODEERP)',
    ),
    f('companyID', { lookup: 'Company', by: 'name', from: { const: 'TODO' } }, 'the receiving company', 0.2, 'the name of your company as the WMS knows it'),
    f('branchID', { lookup: 'Branch', by: 'name', from: { const: 'TODO' } }, 'the receiving branch', 0.2, 'the name of the receiving branch in the WMS'),
    f('warehouseID', { lookup: 'Warehouse', by: 'codeERP', from: { const: 'TODO' } }, 'the receiving warehouse', 0.2, 'the codeERP of the receiving warehouse'),
    f(
      'providerID',
      { ref: 'Provider', from: { path: '/NFe/infNFe/emit/CNPJ' } },
      `${nfe}: the issuer's CNPJ (send providers with codeERP = CNPJ, decision D-MAP-PROVIDER)`,
      0.8,
    ),
    f('ownersID', { lookup: 'Owners', by: 'code', from: { const: 'TODO' } }, 'the owner of the goods', 0.2, "the owner (depositante) code, e.g. '001'"),
    dateIso
      ? f('registrationDate', { path: '/NFe/infNFe/ide/dhEmi', transforms: [{ date: { format: 'iso' } }] }, `${nfe}: dhEmi is ISO 8601 with its offset`)
      : f('registrationDate', { path: '/NFe/infNFe/ide/dEmi', transforms: [{ date: { format: 'yyyy-MM-dd' } }] }, `${nfe}: dEmi (layouts before 3.10)`),
    f(
      'description',
      { template: 'NF-e {/NFe/infNFe/ide/nNF} série {/NFe/infNFe/ide/serie} de {/NFe/infNFe/emit/xNome}' },
      'number, series and issuer of the invoice',
      0.8,
    ),
    f('receiptType', { const: 0 }, '0 = standard receiving (1 = return)', 0.7),
  ];
  const filter = nfeFilter(rows);
  return {
    ...(filter ? { filter } : {}),
    target: 'PurchaseOrder',
    targetConfidence: 0.95,
    targetEvidence: 'an NF-e is an inbound invoice: one purchase order per invoice',
    fields,
    group: {
      by: { path: '/NFe/infNFe/@Id' },
      items: 'purchaseOrderItens',
      ...(lots ? { explode: 'prod/rastro' } : {}),
      contiguous: true,
      evidence: `one document per access key (/NFe/infNFe/@Id)${lots ? '; items with lots (prod/rastro) become one item per lot (explode)' : ''}`,
      itemFields: items,
    },
  };
}

// ---------------------------------------------------------------------------------------------
// the proposal
// ---------------------------------------------------------------------------------------------

/** Mapping name and file glob from the sample's name: PEDIDOS_20241105_1700.csv -> pedidos, PEDIDOS_*.csv. */
export function namesFromFile(fileName: string): { name: string; glob: string } {
  const ext = /\.[A-Za-z0-9]+$/.exec(fileName)?.[0] ?? '';
  const stem = fileName.slice(0, fileName.length - ext.length);
  let glob = stem.replace(/\d{4,}/g, '*').replace(/\*([_\-.]?\*)+/g, '*');
  if (glob === stem && /\d/.test(stem)) glob = stem.replace(/\d+/g, '*').replace(/\*([_\-.]?\*)+/g, '*');
  const name = normName(stem.replace(/\d{4,}.*$/, '').replace(/[_\-.]+$/, '')).replace(/_/g, '-') || 'inferido';
  return { name, glob: `${glob}${ext}` };
}

/** What the sample says before a target is chosen: its rows, its columns profiled, its decimal separator. */
interface Sample {
  path: string;
  s: Sniffed;
  source: ParseOptionsInput;
  fileName: string;
  reader: Reader;
  allRows: RawRow[];
  /** the rows that carry the data (fixed-width: the record type with the most lines) */
  rows: RawRow[];
  cols: ColumnProfile[];
  /** columns or fields without titles (named from what they hold) */
  unnamed: boolean;
  fd: ReturnType<typeof fileDecimalSeparator>;
  base: Pick<Proposal, 'name' | 'match' | 'source' | 'sourceNotes' | 'rowsRead' | 'parseErrors' | 'decimal'>;
}

const mainRecord = (s: Sniffed) => [...s.fixed!.records].sort((a, b) => b.lines - a.lines)[0]!;

async function readSample(path: string, s: Sniffed, opts: ProposeOptions): Promise<Sample> {
  const source = sourceOptions(s);
  const { rows: allRows, errors } = await readRows(path, source);
  const reader = readerOf(s);
  const fileName = basename(path);
  const names = namesFromFile(fileName);
  const sourceNotes = [
    `encoding: ${s.encoding.ascii ? 'utf-8 (ASCII only)' : s.encoding.encoding}${s.encoding.bom ? ' with BOM' : ''}: ${s.encoding.evidence}`,
    `format: ${s.formatEvidence}`,
  ];
  // the rows that carry the data: fixed-width details (the record type with the most lines)
  let rows = allRows;
  if (s.format === 'fixed-width') {
    const main = mainRecord(s);
    rows = allRows.filter((r) => r.recordType === main.type);
  }
  const roles = s.format === 'delimited' ? s.multiRecord?.roles : undefined;
  if (roles) rows = allRows.filter((r) => r.recordType === roles.main);
  if (rows.length === 0)
    throw new ConfigError(`infer: ${fileName} gave no data rows with the sniffed options (${JSON.stringify(source)}); ${errors} parse error(s)`);
  // columns in file order
  const colNames: string[] = [];
  const seen = new Set<string>();
  for (const r of rows.slice(0, 200)) {
    for (const k of Object.keys(r.fields)) {
      if (seen.has(k)) continue;
      seen.add(k);
      colNames.push(k);
    }
  }
  const usable = colNames.filter((n) => !(n === 'tipo' && ((s.format === 'fixed-width' && s.fixed!.tagLength > 0) || roles)));
  const rawCols = usable.map((n) => rows.map((r) => r.fields[n] ?? ''));
  const fd = s.format === 'xml' || s.format === 'json' || s.format === 'jsonl' ? { decimal: '.' as const, comma: 0, dot: 0 } : fileDecimalSeparator(rawCols);
  const cols = usable.map((n, i) => {
    const p = profileColumn(n, i, rawCols[i]!, { fileDecimal: fd.decimal, fixedWidth: s.format === 'fixed-width' });
    if (s.format === 'fixed-width') {
      const f = mainRecord(s).fields.find((x) => x.name === n);
      if (f) {
        p.start = f.start;
        p.length = f.length;
      }
    }
    return p;
  });
  if (s.format === 'fixed-width') zeroPaddedCodes(cols);
  // unnamed fixed-width fields get names from their type, so the mapping reads well
  const unnamed = (s.format === 'fixed-width' && !s.fixed!.titleLine) || (s.format === 'delimited' && !s.delimited!.header);
  if (unnamed && s.format === 'fixed-width') renameFixedFields(s, cols, source);
  sourceNotes.push(
    `numbers: decimal separator '${fd.decimal}'${fd.comma + fd.dot ? ` (${fd.comma} value(s) with a decimal comma, ${fd.dot} with a decimal point)` : ' (no decimal values seen)'}`,
  );
  const base = {
    name: opts.name ?? names.name,
    match: { channel: opts.channel ?? '', files: names.glob },
    source,
    sourceNotes,
    rowsRead: allRows.length,
    parseErrors: errors,
    decimal: fd.decimal,
  };
  return { path, s, source, fileName, reader, allRows, rows, cols, unnamed, fd, base };
}

/**
 * Two zero-padded numbers in one fixed-width record, one with implied decimals seen (shared trailing zeros)
 * and one without: the one without, distinct on most lines, is a zero-padded code (a product `0000041780`),
 * not a second quantity.
 */
function zeroPaddedCodes(cols: ColumnProfile[]): void {
  const implied = cols.filter((c) => c.type.kind === 'implied');
  if (implied.length < 2 || !implied.some((c) => (c.type.scale ?? 0) > 0)) return;
  for (const c of implied) {
    if ((c.type.scale ?? 0) > 0 || c.distinct < c.values.length * 0.8) continue;
    c.type = {
      kind: 'code',
      share: 1,
      leadingZeros: true,
      evidence: `zero-padded digits without shared trailing zeros, distinct on ${pct(c.distinct / c.values.length)} of the lines, beside a number with implied decimals: a code (kept as text)`,
    };
  }
}

/** How the rows form documents: header records (fixed-width) with their profiled fields, or a key column that repeats. */
interface DocumentShape {
  fixedDoc: boolean;
  headerRec: NonNullable<Sniffed['fixed']>['records'][number] | undefined;
  headerCols: ColumnProfile[];
  /** the fields of a lot record under an item (delimited C/I/L) */
  lotCols: ColumnProfile[];
  /** item columns that repeat their header line's value (the document link) */
  linkCols: Set<string>;
  doc: ReturnType<typeof findDocumentKey>;
  groups: Map<string, number[]> | undefined;
}

/** A delimited record type as the fixed-width guesses describe one (its cells, without the type cell). */
function delimitedRecord(s: Sniffed, type: string): NonNullable<Sniffed['fixed']>['records'][number] {
  const t = s.multiRecord!.types.find((x) => x.value === type)!;
  const fields = recordColumns(type, t.cells)
    .slice(1)
    .map((name) => ({ name, start: 0, length: 0 }));
  return { type, tag: type, fields, lines: t.rows };
}

/** Profiles the fields of one record type from its lines. */
function recordCols(sample: Sample, rec: NonNullable<Sniffed['fixed']>['records'][number]): ColumnProfile[] {
  const fixed = sample.s.format === 'fixed-width';
  const rows = sample.allRows.filter((r) => r.recordType === rec.type);
  return rec.fields
    .filter((f) => f.name !== 'tipo')
    .map((f, i) => {
      const p = profileColumn(
        f.name,
        i,
        rows.map((r) => r.fields[f.name] ?? ''),
        { fileDecimal: sample.fd.decimal, fixedWidth: fixed },
      );
      if (fixed) {
        p.start = f.start;
        p.length = f.length;
      }
      return p;
    });
}

function documentShape(sample: Sample, def: TargetDef): DocumentShape {
  const { s, cols, unnamed } = sample;
  // documents of header records (fixed-width H/D, delimited C/I lines): one header record per document, its items after it
  const roles = s.format === 'delimited' ? s.multiRecord?.roles : undefined;
  const headerRec =
    s.format === 'fixed-width' ? s.fixed!.records.find((r) => r.type === 'header') : roles?.header && roles.item ? delimitedRecord(s, roles.header) : undefined;
  const fixedDoc =
    !!def.document && ((s.format === 'fixed-width' && s.fixed!.tagLength > 0 && (headerRec?.lines ?? 0) >= 2) || (!!roles?.item && roles.item === roles.main));
  let headerCols: ColumnProfile[] = [];
  let lotCols: ColumnProfile[] = [];
  if (fixedDoc) {
    headerCols = recordCols(sample, headerRec!);
    if (unnamed && s.format === 'fixed-width') renameFixedFields(s, headerCols, sample.source, 'header');
    if (roles?.lot) lotCols = recordCols(sample, delimitedRecord(s, roles.lot));
  }
  const linkCols = fixedDoc && roles?.header ? parentLinks(sample, roles.header, roles.main) : new Set<string>();
  // documents: find the key first, header fields must be constant within a document
  let doc: ReturnType<typeof findDocumentKey>;
  let groups: Map<string, number[]> | undefined;
  if (def.document && !fixedDoc) {
    const keyDef = def.fields.find((f) => f.field === def.document!.key)!;
    const pref = cols
      .map((c) => ({ c, s: score(keyDef, c, unnamed).score }))
      .filter((x) => x.s >= 0.6)
      .sort((a, b) => b.s - a.s)[0]?.c;
    doc = findDocumentKey(cols, pref);
    if (doc) groups = groupsOf(doc.key);
  }
  return { fixedDoc, headerRec, headerCols, lotCols, linkCols, doc, groups };
}

/**
 * Item columns that repeat a value of their header line (the order number on every item line): the link
 * to the document, not an item's own value (never its product).
 */
function parentLinks(sample: Sample, header: string, item: string): Set<string> {
  const hits = new Map<string, number>();
  let parent: Record<string, string> | undefined;
  let items = 0;
  for (const r of sample.allRows) {
    if (r.recordType === header) parent = r.fields as Record<string, string>;
    else if (r.recordType === item && parent) {
      items++;
      const mine = new Set(
        Object.entries(parent)
          .filter(([k, v]) => k !== 'tipo' && String(v ?? '').trim() !== '')
          .map(([, v]) => String(v).trim()),
      );
      for (const [k, v] of Object.entries(r.fields)) if (k !== 'tipo' && mine.has(String(v ?? '').trim())) hits.set(k, (hits.get(k) ?? 0) + 1);
    }
  }
  return new Set([...hits].filter(([, n]) => items > 0 && n / items >= 0.9).map(([k]) => k));
}

type Assignment = Map<string, { c: ColumnProfile; score: number; why: string }>;

/**
 * Fields told by a column's relation to another column of the same file: a short name contained in
 * the company name of the same row is the fantasy name; a text column beside the UF column is the
 * city; the small number after a street is the street number.
 */
function relatedColumnPairs(def: TargetDef, cols: ColumnProfile[]): Array<{ f: FieldDef; c: ColumnProfile; score: number; why: string }> {
  const out: Array<{ f: FieldDef; c: ColumnProfile; score: number; why: string }> = [];
  const field = (n: string) => def.fields.find((f) => f.field === n && !f.item);
  const fantasy = field('fantasyName');
  if (fantasy) {
    for (const c of cols) {
      if (c.type.kind !== 'text' && c.type.kind !== 'code') continue;
      for (const o of cols) {
        if (o === c || o.type.kind !== 'text') continue;
        const pairsSeen = c.values.filter((v, i) => v !== '' && (o.values[i] ?? '') !== '');
        const inside = c.values.filter((v, i) => v !== '' && v !== o.values[i] && (o.values[i] ?? '').toUpperCase().includes(v.toUpperCase())).length;
        if (pairsSeen.length && inside / pairsSeen.length >= 0.6) {
          out.push({
            f: fantasy,
            c,
            score: 0.58,
            why: `its values are part of '${o.name}' on the same row (${pct(inside / pairsSeen.length)}): a short or fantasy name`,
          });
          break;
        }
      }
    }
  }
  const uf = cols.find((c) => c.type.kind === 'uf');
  const city = field('city');
  if (uf && city) {
    for (const c of cols.filter((x) => Math.abs(x.index - uf.index) === 1 && x.type.kind === 'text' && share(x, (v) => !/\d/.test(v)) >= 0.9))
      out.push({ f: city, c, score: 0.55, why: `text without digits beside the UF column '${uf.name}': the city` });
  }
  const number = field('number');
  const street = cols.find((c) => c.type.kind === 'text' && share(c, (v) => STREET.test(v)) >= 0.6);
  if (number && street) {
    const next = cols.find((c) => c.index === street.index + 1 && (c.type.kind === 'integer' || c.type.kind === 'code') && c.maxLength <= 6);
    if (next) out.push({ f: number, c: next, score: 0.55, why: `a short number right after the street column '${street.name}'` });
  }
  return out;
}

/** Greedy assignment of columns to the target's fields, best pairs first. */
function assignColumns(sample: Sample, def: TargetDef, shape: DocumentShape): { byField: Assignment; usedCols: Set<string> } {
  const { cols, unnamed } = sample;
  const { groups, doc } = shape;
  const pairs: Array<{ f: FieldDef; c: ColumnProfile; score: number; why: string }> = [];
  for (const f of def.fields) {
    if (f.sameAs) continue;
    for (const c of shape.fixedDoc && !f.item ? shape.headerCols : cols) {
      if (f.item && shape.linkCols.has(c.name)) continue;
      const scored = score(f, c, unnamed);
      const why = scored.why;
      let sc = scored.score;
      if (groups && !f.item && c !== doc?.key && !constantWithin(c, groups)) sc -= 1; // a header field must agree within a document
      if (groups && f.item && constantWithin(c, groups) && c.distinct < c.values.length && doc && doc.key.distinct < c.values.length) sc -= 0.2;
      if (sc >= 0.5) pairs.push({ f, c, score: sc, why });
    }
  }
  pairs.push(...relatedColumnPairs(def, shape.fixedDoc ? (sample.s.format === 'delimited' ? shape.headerCols : []) : cols));
  pairs.sort((a, b) => b.score - a.score || def.fields.indexOf(a.f) - def.fields.indexOf(b.f));
  const byField: Assignment = new Map();
  const usedCols = new Set<string>();
  const usedProfiles = new Set<ColumnProfile>();
  for (const p of pairs) {
    if (byField.has(p.f.field) || usedProfiles.has(p.c)) continue;
    // the document key may also be a header field (order = pedido)
    byField.set(p.f.field, p);
    if (!(doc && p.c === doc.key)) {
      usedProfiles.add(p.c);
      usedCols.add(p.c.name);
    }
  }
  return { byField, usedCols };
}

/** A proposal per field of the target: from its column, else its placeholder; required text as TODO; derived fields. */
function fieldProposals(sample: Sample, def: TargetDef, byField: Assignment): { header: FieldProposal[]; items: FieldProposal[] } {
  const header: FieldProposal[] = [];
  const items: FieldProposal[] = [];
  const conf = (sc: number) => Math.max(0.05, Math.min(0.99, sc >= 1 ? 0.9 + Math.min(0.09, (sc - 1) * 0.3) : sc * 0.85));
  for (const f of def.fields) {
    const list = f.item ? items : header;
    const src = f.sameAs ? byField.get(f.sameAs) : byField.get(f.field);
    if (src) {
      const built = buildExpr(f.sameAs ? { ...def.fields.find((x) => x.field === f.sameAs)!, field: f.field } : f, src.c, sample.reader, sample.fd.decimal);
      const evidence = f.sameAs
        ? `the same column as ${f.sameAs} ('${src.c.name}')${def.target === 'Provider' ? ': NF-e name their issuer by CNPJ, so providers are keyed by it (D-MAP-PROVIDER)' : ''}`
        : evidenceOf(src.why, src.c);
      list.push({
        field: f.field,
        expr: built.expr,
        confidence: conf(src.score),
        evidence,
        columns: [src.c.name],
        ...(built.todo ? { todo: built.todo } : {}),
      });
    } else if (f.placeholder) {
      list.push({ field: f.field, expr: f.placeholder.expr, confidence: 0.1, evidence: 'no column found', todo: f.placeholder.todo, columns: [] });
    }
  }
  // text fields the WMS requires that no column gives: a TODO constant, so the mapping validates and says so
  for (const field of requiredTextFields(def.target)) {
    if (header.some((h) => h.field === field)) continue;
    header.push({
      field,
      expr: { const: 'TODO' },
      confidence: 0.05,
      evidence: 'no column found',
      todo: `${def.target} requires ${field}: map the column that holds it`,
      columns: [],
    });
  }
  // fields derived from others
  if (['Provider', 'ShippingCompany', 'PickingList'].includes(def.target) && (hasColumn(header, 'state') || hasColumn(header, 'city'))) {
    header.push({
      field: 'country',
      expr: { const: 'Brasil' },
      confidence: 0.6,
      evidence: 'Brazilian states (UF) and cities: the country is Brasil',
      columns: [],
    });
  }
  return { header, items };
}

const hasColumn = (header: FieldProposal[], n: string): boolean => header.some((h) => h.field === n && h.columns.length > 0);

/** A picking list's header: the order and its codeERP from the document key, placeholders, the address in one line, the types. */
function documentHeader(reader: Reader, header: FieldProposal[], keyCol: ColumnProfile): void {
  const order = header.find((h) => h.field === 'order');
  if (!order || order.columns[0] !== keyCol.name) {
    const i = header.findIndex((h) => h.field === 'order');
    const o = {
      field: 'order',
      expr: { [reader]: keyCol.name, transforms: ['trim'] },
      confidence: 0.6,
      evidence: `the document key '${keyCol.name}'`,
      columns: [keyCol.name],
    };
    if (i >= 0) header[i] = o;
    else header.unshift(o);
  }
  header.splice(1, 0, {
    field: 'codeERP',
    expr: { template: `PickingList:{${keyCol.name}}`, transforms: ['uuid5'] },
    confidence: 0.9,
    evidence: 'codeERP is typed Guid: a stable UUID v5 from the order number (decision D-CODEERP)',
    columns: [keyCol.name],
  });
  const place = (field: string, expr: unknown, todo: string) => {
    if (!header.some((h) => h.field === field)) header.push({ field, expr, confidence: 0.1, evidence: 'no column found', todo, columns: [] });
  };
  place('companyID', { lookup: 'Company', by: 'name', from: { const: 'TODO' } }, 'the name of your company as the WMS knows it');
  place(
    'branchID',
    { lookup: 'Branch', by: 'name', from: { const: 'TODO' } },
    'the name of the shipping branch in the WMS (a table by warehouse when there are several)',
  );
  place('ownerID', { lookup: 'Owners', by: 'code', from: { const: 'TODO' } }, "the owner (depositante) code, e.g. '001'");
  const street = header.find((h) => h.field === 'street');
  if (street && hasColumn(header, 'city')) {
    const parts = ['street', 'number', 'district', 'city', 'state'].map((n) => header.find((h) => h.field === n)?.columns[0]);
    if (parts[0] && parts[3]) {
      const tpl = `{${parts[0]}}${parts[1] ? `, {${parts[1]}}` : ''}${parts[2] ? ` - {${parts[2]}}` : ''} - {${parts[3]}}${parts[4] ? `/{${parts[4]}}` : ''}`;
      header.push({
        field: 'clientAddress',
        expr: { template: tpl },
        confidence: 0.6,
        evidence: 'the address in one line, from its parts',
        columns: parts.filter((x): x is string => !!x),
      });
    }
  }
  header.push({ field: 'type', expr: { const: 0 }, confidence: 0.6, evidence: '0 = sales order', columns: [] });
  header.push({ field: 'separationType', expr: { const: 0 }, confidence: 0.6, evidence: '0 = standard separation', columns: [] });
}

/** A document's group (header/detail records, or rows by key), its header completed. */
function proposeGroup(sample: Sample, def: TargetDef, shape: DocumentShape, header: FieldProposal[], items: FieldProposal[]): Proposal['group'] {
  if (!def.document) return undefined;
  const { fixedDoc, doc, headerRec } = shape;
  const order = header.find((h) => h.field === 'order');
  const keyCol = doc?.key ?? (order?.columns[0] ? (fixedDoc ? shape.headerCols : sample.cols).find((c) => c.name === order.columns[0]) : undefined);
  if (!keyCol)
    throw new ConfigError(`infer: ${def.target} is a document, but no column repeats like an order number; say which rows form a document by editing group.by`);
  documentHeader(sample.reader, header, keyCol);
  if (!items.some((i) => i.field === 'productID'))
    throw new ConfigError(`infer: no column looks like the product of an order item; use a column named produto (or C6_PRODUTO)`);
  if (!items.some((i) => i.field === 'quantity'))
    throw new ConfigError(`infer: no column looks like the quantity of an order item; use a column named quantidade (or C6_QTDVEN)`);
  const s = sample.s;
  const roles = s.format === 'delimited' ? s.multiRecord?.roles : undefined;
  if (fixedDoc && roles?.header && roles.item) {
    const lot = roles.lot ? lotItemFields(roles.item, roles.lot, shape.lotCols, items, sample.fd.decimal) : undefined;
    const count = (t: string) => s.multiRecord!.types.find((x) => x.value === t)?.rows ?? 0;
    return {
      headerRecord: roles.header,
      itemRecord: roles.item,
      ...(lot ? { lotRecord: roles.lot } : {}),
      items: def.document.items,
      contiguous: true,
      evidence:
        `a '${roles.header}' line opens each document (${count(roles.header)} documents), the '${roles.item}' lines after it are its items (${count(roles.item)})` +
        (lot ? `; '${roles.lot}' lines after an item are its lots (${count(roles.lot!)}: one item per lot; ${lot.evidence})` : ''),
      itemFields: lot?.items ?? items,
    };
  }
  return fixedDoc
    ? {
        headerRecord: 'header',
        itemRecord: 'detail',
        items: def.document.items,
        contiguous: true,
        evidence: `a '${headerRec!.tag}' header record starts each document (${headerRec!.lines} documents), the '${s.fixed!.records.find((r) => r.type === 'detail')?.tag}' detail records after it are its items`,
        itemFields: items,
      }
    : {
        by: { [sample.reader]: keyCol.name, transforms: ['trim'] },
        items: def.document.items,
        contiguous: doc?.contiguous ?? true,
        evidence: doc?.evidence ?? `documents keyed by '${keyCol.name}'`,
        itemFields: items,
      };
}

/** An expression's columns read from the item record (`I/i_4`), so a lot line under the item reads its item's values. */
function fromItemRecord(expr: unknown, item: string): unknown {
  if (Array.isArray(expr)) return expr.map((x) => fromItemRecord(x, item));
  if (!expr || typeof expr !== 'object') return expr;
  const o: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(expr as Record<string, unknown>)) {
    if (k === 'col' && typeof v === 'string') o[k] = `${item}/${v}`;
    else if (k === 'template' && typeof v === 'string') o[k] = v.replace(/\{([^}$]+)\}/g, `{${item}/$1}`);
    else o[k] = fromItemRecord(v, item);
  }
  return o;
}

/**
 * Lot records under an item (one item per lot): the item fields read their item (`I/...`); the lot number is
 * the lot line's code that varies most, the quantity the lot's number when it has one (the item's otherwise).
 */
function lotItemFields(
  item: string,
  lot: string,
  lotCols: ColumnProfile[],
  items: FieldProposal[],
  decimal: ',' | '.',
): { items: FieldProposal[]; evidence: string } | undefined {
  const out = items.map((f) => ({ ...f, expr: fromItemRecord(f.expr, item), columns: f.columns.map((c) => `${item}/${c}`) }));
  const lotNo = lotCols
    .filter((c) => (c.type.kind === 'code' || c.type.kind === 'text') && c.emptyShare === 0 && !/^\d+$/.test(c.values[0] ?? ''))
    .sort((a, b) => b.distinct - a.distinct)[0];
  const qty = lotCols.filter((c) => c.type.kind === 'decimal' || c.type.kind === 'integer').sort((a, b) => b.distinct - a.distinct)[0];
  if (!lotNo) return undefined;
  const why: string[] = [];
  const put = (f: FieldProposal) => {
    const i = out.findIndex((x) => x.field === f.field);
    if (i >= 0) out[i] = f;
    else out.push(f);
  };
  put({
    field: 'lotNumber',
    expr: { col: lotNo.name, transforms: ['trim'] },
    confidence: 0.6,
    evidence: `the '${lot}' line's code that varies most ('${lotNo.name}'): the lot`,
    columns: [lotNo.name],
  });
  why.push(`lot number '${lotNo.name}'`);
  const q = out.find((x) => x.field === 'quantity');
  if (qty && q) {
    const transforms = [qty.type.kind === 'decimal' ? numberTransform(qty, decimal) : { number: { decimal, thousands: decimal === ',' ? '.' : '' } }];
    put({
      ...q,
      expr: { coalesce: [{ col: qty.name }, { col: q.columns[0] }], transforms },
      evidence: `the lot's quantity '${qty.name}', else the item's ('${q.columns[0]}')`,
      columns: [qty.name, ...q.columns],
    });
    why.push(`quantity '${qty.name}'`);
  }
  return { items: out, evidence: why.join(', ') };
}

/** An attachment list: the file column, and the picking list it goes to (by order, with the owner to fill in). */
function proposeAttachment(sample: Sample, header: FieldProposal[], usedCols: Set<string>): FieldProposal {
  const { cols, reader } = sample;
  const file = cols.find((c) => /arquivo|caminho|file|anexo/.test(normName(c.name)));
  const ped = cols.find((c) => /pedido|c5_num|order/.test(normName(c.name)));
  if (!file) throw new ConfigError('infer: an attachment list needs a column with the file path (arquivo)');
  header.unshift({
    field: 'PickingListID',
    expr: { ref: 'PickingList', from: { template: `{${ped?.name ?? 'TODO'}}|TODO` } },
    confidence: ped ? 0.4 : 0.1,
    evidence: `a picking list's natural key is 'order|owner code'${ped ? `; the order is column '${ped.name}'` : ''}`,
    todo: "replace TODO after '|' with the owner (depositante) code of the orders, e.g. '001'",
    columns: ped ? [ped.name] : [],
  });
  usedCols.add(file.name);
  if (ped) usedCols.add(ped.name);
  return {
    field: 'attachmentPath',
    expr: { [reader]: file.name, transforms: ['trim'] },
    confidence: 0.8,
    evidence: `column '${file.name}': the file to upload, relative to the channel folder`,
    columns: [file.name],
  };
}

/** Columns no field reads, and among them small sets of codes (what a `map` to an interface code or a `table` could start from). */
function unreadColumns(cols: ColumnProfile[], headerCols: ColumnProfile[], readCols: Set<string>): { unused: string[]; smallSets: string[] } {
  const unusedCols = [...cols, ...headerCols].filter((c) => !readCols.has(c.name) && c.type.kind !== 'empty');
  const smallSets = unusedCols
    .filter(
      (c) =>
        c.distinctValues &&
        c.distinct >= 2 &&
        c.distinct <= 6 &&
        c.values.length > c.distinct &&
        ['code', 'flag', 'integer'].includes(c.type.kind) &&
        c.maxLength <= 4,
    )
    .map((c) => `${c.name} (${c.distinctValues!.join(', ')})`);
  return { unused: unusedCols.map((c) => c.name), smallSets };
}

export async function propose(path: string, s: Sniffed, opts: ProposeOptions = {}): Promise<Proposal> {
  const sample = await readSample(path, s, opts);
  const { base, cols, fileName, reader } = sample;
  if (s.format === 'xml' && s.xml?.nfe && (!opts.target || opts.target.toLowerCase() === 'purchaseorder')) {
    const p = nfeProposal(sample.rows);
    return {
      ...base,
      match: { channel: opts.channel ?? defaultChannel(path, 'notas'), files: '*.xml' },
      description: `NF-e (XML) -> PurchaseOrder; inferred from ${fileName}`,
      ...p,
      unused: [],
    };
  }
  const chosen = chooseTarget(fileName, cols, opts.target);
  const def = chosen.def;
  const shape = documentShape(sample, def);
  const { byField, usedCols } = assignColumns(sample, def, shape);
  const { header, items } = fieldProposals(sample, def, byField);
  if (s.multiRecord && def.document && !shape.fixedDoc)
    throw new ConfigError(
      `infer: ${fileName} NEEDS A PERSON: a multi-record file (${s.multiRecord.evidence}${s.skipLines ? `, after ${s.skipLines} comment line(s)` : ''}): ` +
        `${def.target} documents from header and item lines need the record-type declarations of the mapping language; no mapping written`,
    );
  const group = proposeGroup(sample, def, shape, header, items);
  // required fields of records without a column and without a placeholder
  const attachmentPath = def.target === 'PickingListAttachment' ? proposeAttachment(sample, header, usedCols) : undefined;
  const readCols = new Set([...header, ...items].flatMap((h) => h.columns));
  if (shape.doc) readCols.add(shape.doc.key.name);
  for (const c of usedCols) readCols.add(c);
  const filter = shape.fixedDoc ? undefined : s.multiRecord ? multiRecordFilter(s, cols, reader) : proposeFilter(cols, reader, s, def.target);
  for (const c of cols) if (filter && JSON.stringify(filter.expr).includes(JSON.stringify(c.name))) readCols.add(c.name);
  const { unused, smallSets } = unreadColumns(cols, shape.headerCols, readCols);
  return {
    ...base,
    match: { channel: opts.channel ?? defaultChannel(path, def.channel), files: base.match.files },
    description: `${def.target} from ${fileName} (inferred)`,
    target: def.target,
    targetConfidence: chosen.confidence,
    targetEvidence: chosen.evidence,
    fields: header,
    ...(group ? { group } : {}),
    ...(attachmentPath ? { attachmentPath } : {}),
    ...(filter ? { filter } : {}),
    unused,
    ...(smallSets.length ? { smallSets } : {}),
  };
}

/** Top-level fields of a target's schema that are required and take text (the ones a TODO constant can stand in for). */
function requiredTextFields(target: Target): string[] {
  const shape = (TARGET_INFO[target].schema as unknown as { shape?: Record<string, z.ZodType> }).shape ?? {};
  return Object.entries(shape)
    .filter(([, t]) => !t.safeParse(undefined).success && t.safeParse('TODO').success)
    .map(([k]) => k);
}

/** An "active" flag column: keep the active rows (inactive ones are skipped and counted). */
/**
 * A delimited file with record types (header and item lines of different lengths): one mapping reads
 * one record type today; which one, and how the header lines join their items, needs a person. The
 * filter is a TODO so check and preview fail until it is decided.
 */
function multiRecordFilter(s: Sniffed, cols: ColumnProfile[], reader: Reader): Proposal['filter'] {
  const m = s.multiRecord!;
  if (m.roles) {
    // record types declared: the lines of the type with the most lines are the records (the others skipped, counted)
    const main = m.roles.main;
    const others = m.types.filter((t) => t.value !== main).map((t) => `'${t.value}' (${t.rows} line(s))`);
    return {
      expr: { [reader]: 'tipo', equals: main },
      evidence: `${m.evidence}: keeps the '${main}' lines${others.length ? `; ${others.join(', ')} are skipped (counted, not rejected)` : ''}`,
    };
  }
  const col = cols[0]?.name ?? 'coluna_1';
  return {
    expr: { [reader]: col, equals: 'TODO' },
    evidence: `NEEDS A PERSON: a multi-record file (${m.evidence}); keep one record type per mapping (replace TODO by ${m.types.map((t) => `'${t.value}'`).join(' or ')}); header lines joined to their items need the record-type declarations of the mapping language`,
  };
}

/** Values of a partner type column and the role they mean (F/T, Fornecedor/Transportador; S/C as SAP's CardType). */
const ROLES: Record<string, 'Provider' | 'ShippingCompany' | 'customer'> = {
  F: 'Provider',
  FORNECEDOR: 'Provider',
  FORNECEDORES: 'Provider',
  T: 'ShippingCompany',
  TRANSPORTADOR: 'ShippingCompany',
  TRANSPORTADORA: 'ShippingCompany',
  C: 'customer',
  CLIENTE: 'customer',
};

/**
 * A partners file holding several kinds (a type column F/T, Fornecedor/Transportador, SAP's S/C):
 * keep the rows of the target's kind; the others are another target (said in the evidence).
 */
function roleFilter(cols: ColumnProfile[], reader: Reader, target: Target): Proposal['filter'] | undefined {
  if (target !== 'Provider' && target !== 'ShippingCompany') return undefined;
  for (const c of cols) {
    const vals = (c.distinctValues ?? []).filter((v) => v !== '');
    if (vals.length < 2 || vals.length > 4) continue;
    const up = vals.map((v) => v.toUpperCase());
    const sap = up.includes('S') && up.includes('C') && up.every((v) => ['S', 'C', 'L'].includes(v));
    const role = (v: string) => (sap && v === 'S' ? 'Provider' : ROLES[v]);
    if (!up.every((v) => role(v))) continue;
    const keep = vals.filter((v) => role(v.toUpperCase()) === target);
    if (!keep.length) continue;
    const count = (v: string) => c.values.filter((x) => x === v).length;
    const others = vals
      .filter((v) => !keep.includes(v))
      .map(
        (v) =>
          `${v} (${count(v)} rows: ${role(v.toUpperCase()) === 'customer' ? 'customers' : `${role(v.toUpperCase())}, wmsbridge infer --target ${role(v.toUpperCase())}`})`,
      );
    return {
      expr: keep.length === 1 ? { [reader]: c.name, equals: keep[0] } : { [reader]: c.name, in: keep },
      evidence: `column '${c.name}' says the partner's kind: keeps ${keep.map((v) => `${v} (${count(v)} rows)`).join(', ')}; skips ${others.join(', ')}`,
    };
  }
  return undefined;
}

/**
 * A hierarchy in one file (a group table with a parent column whose values are codes of the same
 * file, and a level column 1, 2...): Category keeps the top level, Family the levels below it.
 */
function levelFilter(cols: ColumnProfile[], reader: Reader, target: Target): Proposal['filter'] | undefined {
  if (target !== 'Category' && target !== 'Family') return undefined;
  const rows = cols[0]?.values.length ?? 0;
  const keys = cols.filter((c) => c.emptyShare === 0 && c.distinct === rows && rows >= 3);
  for (const key of keys) {
    const codes = new Set(key.values);
    const parent = cols.find((p) => {
      if (p === key) return false;
      const refs = p.values.filter((v) => v !== '' && !/^0+$/.test(v));
      return refs.length >= 1 && refs.length < rows && refs.every((v) => codes.has(v));
    });
    if (!parent) continue;
    const top = (i: number) => parent.values[i] === '' || /^0+$/.test(parent.values[i]!);
    const level = cols.find((l) => {
      if (l === key || l === parent || l.type.kind !== 'integer' || l.distinct < 2 || l.distinct > 6) return false;
      const topLevels = new Set(l.values.filter((_, i) => top(i)));
      const below = new Set(l.values.filter((_, i) => !top(i)));
      return topLevels.size === 1 && ![...below].some((v) => topLevels.has(v));
    });
    const why = `'${parent.name}' refers to '${key.name}' of the same file (a parent: a hierarchy)`;
    if (level) {
      const topValue = level.values[level.values.findIndex((_, i) => top(i))]!;
      return target === 'Category'
        ? {
            expr: { [reader]: level.name, equals: topValue },
            evidence: `${why}; level column '${level.name}': keeps the top level ${topValue}, the levels below are families (wmsbridge infer --target Family, their category is '${parent.name}')`,
          }
        : {
            expr: { [reader]: level.name, notEquals: topValue },
            evidence: `${why}; level column '${level.name}': keeps the levels below the top ${topValue} (the categories); a family's category is '${parent.name}'`,
          };
    }
    return target === 'Category'
      ? {
          expr: {
            any: [
              { [reader]: parent.name, empty: true },
              { [reader]: parent.name, regex: '^0+$' },
            ],
          },
          evidence: `${why}: keeps the rows without a parent`,
        }
      : { expr: { [reader]: parent.name, notEmpty: true }, evidence: `${why}: keeps the rows with a parent` };
  }
  return undefined;
}

function proposeFilter(cols: ColumnProfile[], reader: Reader, s: Sniffed, target: Target): Proposal['filter'] | undefined {
  const selection = roleFilter(cols, reader, target) ?? levelFilter(cols, reader, target);
  if (selection) return selection;
  if (s.format === 'fixed-width' && s.fixed!.tagLength > 0) {
    const main = [...s.fixed!.records].sort((a, b) => b.lines - a.lines)[0]!;
    const others = s.fixed!.records.filter((r) => r !== main).map((r) => `'${r.tag}' ${r.type}`);
    return {
      expr: { field: 'tipo', equals: main.tag },
      evidence: `keeps the '${main.tag}' ${main.type} records${others.length ? `; ${others.join(', ')} are skipped (counted, not rejected)` : ''}`,
    };
  }
  if (s.format === 'fixed-width' && s.fixed!.titleLine) {
    const first = s.fixed!.records[0]!.fields[0]!;
    return {
      expr: { field: first.name, transforms: ['trim'], notEquals: first.name },
      evidence: 'the first line holds the column titles: this filter skips it',
    };
  }
  for (const c of cols) {
    const n = normName(c.name);
    const vals = (c.distinctValues ?? []).map((v) => v.toUpperCase());
    if (/^(ativo|ativa|situacao|status)$/.test(n) && vals.length >= 1 && vals.length <= 3 && (vals.includes('S') || vals.includes('A'))) {
      const keep = vals.includes('S') ? ['S', 'Sim'] : ['A'];
      return {
        expr: keep.length === 1 ? { [reader]: c.name, equals: keep[0] } : { [reader]: c.name, in: keep, ignoreCase: true },
        evidence: `column '${c.name}' (${vals.join('/')}) marks active rows: the others are skipped`,
      };
    }
    if (/_msblql$/.test(n) && vals.length >= 1 && vals.every((v) => v === '1' || v === '2' || v === '')) {
      return { expr: { not: { [reader]: c.name, equals: '1' } }, evidence: `Protheus '${c.name}' = 1 means blocked: blocked rows are skipped` };
    }
  }
  return undefined;
}

function defaultChannel(path: string, fallback: string): string {
  const parent = basename(dirname(path));
  const grand = basename(dirname(dirname(path)));
  return grand === 'inbox' && parent ? parent : fallback;
}

/** Fixed-width fields without titles: names from what they hold (codigo, quantidade, data...). */
function renameFixedFields(s: Sniffed, cols: ColumnProfile[], source: ParseOptionsInput, type?: string): void {
  const taken = new Set<string>(['tipo', 'registros']);
  const word: Partial<Record<ValueKind, string>> = {
    cnpj: 'cnpj',
    cpf: 'cpf',
    gtin: 'ean',
    ncm: 'ncm',
    cep: 'cep',
    uf: 'uf',
    date: 'data',
    datetime: 'data_hora',
    flag: 'indicador',
    integer: 'numero',
    decimal: 'valor',
    implied: 'quantidade',
    code: 'codigo',
    text: 'texto',
    empty: 'vazio',
  };
  const renames = new Map<string, string>();
  for (const c of cols) {
    if (!UNNAMED.test(c.name)) continue;
    let w = word[c.type.kind] ?? 'campo';
    if (c.type.kind === 'code' && c.maxLength <= 3 && c.distinct <= 3 && c.type.leadingZeros) w = 'codigo_curto';
    let n = w;
    for (let k = 2; taken.has(n); k++) n = `${w}_${k}`;
    taken.add(n);
    renames.set(c.name, n);
    c.name = n;
  }
  const main = type ?? [...s.fixed!.records].sort((a, b) => b.lines - a.lines)[0]!.type;
  const o = source as unknown as { records: Array<{ type: string; fields: Array<{ name: string }> }> };
  for (const r of o.records) {
    if (r.type !== main) continue;
    r.fields = r.fields.map((f) => ({ ...f, name: renames.get(f.name) ?? f.name }));
  }
}
