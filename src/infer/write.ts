/**
 * The proposal as a commented YAML mapping: the schema line for editors, what infer found about the
 * file, then every field with its confidence and evidence above it and TODO comments for what it could
 * not decide. `toMappingObject` is the same mapping as data: the YAML is checked to read back to it.
 */
import { parse as parseYaml } from 'yaml';
import { isDeepStrictEqual } from 'node:util';
import type { FieldProposal, Proposal } from './propose.js';

const RESERVED = new Set(['true', 'false', 'null', 'yes', 'no', 'on', 'off', 'y', 'n', '~']);

export function scalar(v: unknown): string {
  if (v === null) return 'null';
  if (typeof v === 'number' || typeof v === 'boolean') return String(v);
  const s = String(v);
  if (/^[A-Za-z_][A-Za-z0-9_-]*$/.test(s) && !RESERVED.has(s.toLowerCase())) return s;
  if (/[\r\n\t]/.test(s)) return JSON.stringify(s);
  return `'${s.replace(/'/g, "''")}'`;
}

/** Flow-style YAML of a JSON value ({ col: x, transforms: [trim] }). */
export function flow(v: unknown): string {
  if (Array.isArray(v)) return `[${v.map(flow).join(', ')}]`;
  if (v !== null && typeof v === 'object') {
    const e = Object.entries(v as Record<string, unknown>);
    return e.length ? `{ ${e.map(([k, x]) => `${scalar(k)}: ${flow(x)}`).join(', ')} }` : '{}';
  }
  return scalar(v);
}

function level(c: number): string {
  return c >= 0.8 ? 'high' : c >= 0.5 ? 'medium' : 'low';
}

function oneLine(s: string): string {
  return s.replace(/\s+/g, ' ').trim();
}

function comment(indent: string, text: string, width = 110): string[] {
  const words = oneLine(text).split(' ');
  const out: string[] = [];
  let line = '';
  for (const w of words) {
    if (line && indent.length + 2 + line.length + 1 + w.length > width) {
      out.push(`${indent}# ${line}`);
      line = `  ${w}`;
    } else line = line ? `${line} ${w}` : w;
  }
  if (line) out.push(`${indent}# ${line}`);
  return out;
}

function fieldLines(indent: string, f: FieldProposal): string[] {
  const out = comment(indent, `${level(f.confidence)} ${f.confidence.toFixed(2)}: ${f.evidence}`);
  if (f.todo) out.push(...comment(indent, `TODO: ${f.todo}`));
  out.push(`${indent}${scalar(f.field)}: ${flow(f.expr)}`);
  return out;
}

function fieldsObject(list: FieldProposal[]): Record<string, unknown> {
  const o: Record<string, unknown> = {};
  for (const f of list) o[f.field] = f.expr;
  return o;
}

export function toMappingObject(p: Proposal): Record<string, unknown> {
  const m: Record<string, unknown> = {
    name: p.name,
    description: p.description,
    match: p.match,
    ...(p.sharesFilesWith?.length ? { sharesFilesWith: p.sharesFilesWith } : {}),
    source: p.source,
    target: p.target,
  };
  if (p.filter) m['filter'] = p.filter.expr;
  if (p.group) {
    m['group'] = {
      ...(p.group.by !== undefined ? { by: p.group.by } : {}),
      ...(p.group.headerRecord ? { headerRecord: p.group.headerRecord, itemRecord: p.group.itemRecord } : {}),
      ...(p.group.lotRecord ? { lotRecord: p.group.lotRecord } : {}),
      items: p.group.items,
      ...(p.group.explode ? { explode: p.group.explode } : {}),
      contiguous: p.group.contiguous,
      headerMustAgree: true,
      itemFields: fieldsObject(p.group.itemFields),
    };
  }
  if (p.attachmentPath) m['attachmentPath'] = p.attachmentPath.expr;
  m['fields'] = fieldsObject(p.fields);
  return m;
}

function sourceLines(p: Proposal): string[] {
  const src = p.source as Record<string, unknown>;
  const out = ['source:'];
  for (const [k, v] of Object.entries(src)) {
    if (k === 'records' && Array.isArray(v)) {
      out.push('  records:');
      for (const r of v as Array<Record<string, unknown>>) {
        out.push(`    - type: ${scalar(r['type'])}`);
        out.push(`      match: ${flow(r['match'])}`);
        if (Array.isArray(r['columns'])) out.push(`      columns: ${flow(r['columns'])}`);
        else {
          out.push('      fields:');
          for (const f of r['fields'] as unknown[]) out.push(`        - ${flow(f)}`);
        }
      }
    } else out.push(`  ${k}: ${flow(v)}`);
  }
  return out;
}

export interface WriteMeta {
  sampleName: string;
  schemaPath: string;
  now: Date;
}

export function toYaml(p: Proposal, meta: WriteMeta): string {
  const L: string[] = [];
  L.push(`# yaml-language-server: $schema=${meta.schemaPath}`);
  L.push('#');
  L.push(
    `# Inferred by \`wmsbridge infer\` from ${meta.sampleName} (${p.rowsRead} row(s) read${p.parseErrors ? `, ${p.parseErrors} parse error(s)` : ''}) on ${meta.now.toISOString().slice(0, 10)}.`,
  );
  L.push('# Review it before use: every field says its confidence (high >= 0.8, medium >= 0.5, low) and the evidence;');
  L.push('# TODO marks what infer could not decide. Then: wmsbridge check, and wmsbridge preview <this file> <sample>.');
  L.push('#');
  for (const n of p.sourceNotes) L.push(...comment('', n));
  L.push(...comment('', `target ${p.target} (${level(p.targetConfidence)} ${p.targetConfidence.toFixed(2)}): ${p.targetEvidence}`));
  if (p.unused.length) L.push(...comment('', `columns no field reads: ${p.unused.join(', ')}`));
  if (p.smallSets?.length) L.push(...comment('', `TODO: few values, a map, table or filter candidate: ${p.smallSets.join('; ')}`));
  L.push(`name: ${scalar(p.name)}`);
  L.push(`description: ${scalar(p.description)}`);
  L.push(`match: ${flow(p.match)}`);
  if (p.sharesFilesWith?.length) {
    L.push(...comment('', `the same files are read by ${p.sharesFilesWith.join(', ')} on purpose: one table, several targets, each with its filter`));
    L.push(`sharesFilesWith: ${flow(p.sharesFilesWith)}`);
  }
  L.push(...sourceLines(p));
  L.push(`target: ${p.target}`);
  if (p.filter) {
    L.push(...comment('', p.filter.evidence));
    L.push(`filter: ${flow(p.filter.expr)}`);
  }
  if (p.group) {
    L.push('group:');
    L.push(...comment('  ', p.group.evidence));
    if (p.group.by !== undefined) L.push(`  by: ${flow(p.group.by)}`);
    if (p.group.headerRecord) L.push(`  headerRecord: ${scalar(p.group.headerRecord)}`, `  itemRecord: ${scalar(p.group.itemRecord)}`);
    if (p.group.lotRecord) L.push(`  lotRecord: ${scalar(p.group.lotRecord)}`);
    L.push(`  items: ${p.group.items}`);
    if (p.group.explode) L.push(`  explode: ${scalar(p.group.explode)}`);
    L.push(`  contiguous: ${p.group.contiguous}`);
    L.push('  headerMustAgree: true');
    L.push('  itemFields:');
    for (const f of p.group.itemFields) L.push(...fieldLines('    ', f));
  }
  if (p.attachmentPath) L.push(...fieldLines('', p.attachmentPath));
  L.push('fields:');
  for (const f of p.fields) L.push(...fieldLines('  ', f));
  const text = `${L.join('\n')}\n`;
  // the text must read back to exactly the mapping object (a quoting slip would change a value silently)
  const back = parseYaml(text) as unknown;
  if (!isDeepStrictEqual(back, toMappingObject(p))) {
    throw new Error(
      `infer: internal error: the YAML written does not read back to the proposal (${JSON.stringify(back)} versus ${JSON.stringify(toMappingObject(p))})`,
    );
  }
  return text;
}
