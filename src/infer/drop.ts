/**
 * `wmsbridge infer <folder>`: the mapping set of a whole drop. Every file of the folder (and of its
 * channel sub-folders, one level) is proposed like a single sample; a file another proposal of the set
 * already matches (a second NF-e) is left to it; a file whose type column splits it into two targets
 * (partners F/T) gets a mapping per target, each with its filter; the references between the proposals (a product's
 * category from the categories file, an order's product from the products file) and the order the
 * targets must be sent in follow; one summary says what is sure and what needs a person.
 */
import { readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { globToRegExp } from '../map/globs.js';
import { errorMessage } from '../shared/errors.js';
import { sniffFile } from './sniff.js';
import { propose, type FieldProposal, type Proposal } from './propose.js';

export interface DropFile {
  file: string;
  channel: string;
}

export interface DropReference {
  from: string;
  field: string;
  to: string;
  resource: string;
}

export interface DropResult {
  proposals: Array<{ file: string; proposal: Proposal }>;
  refused: Array<{ file: string; reason: string }>;
  covered: Array<{ file: string; by: string }>;
  references: DropReference[];
  /** mapping names, the referenced ones first */
  order: string[];
}

/** The files of a drop: its own files (channel '') and those of its sub-folders (channel = folder name). */
export async function dropFiles(dir: string): Promise<DropFile[]> {
  const out: DropFile[] = [];
  const entries = (await readdir(dir, { withFileTypes: true })).sort((a, b) => a.name.localeCompare(b.name));
  for (const e of entries) {
    if (e.name.startsWith('.')) continue;
    if (e.isFile()) out.push({ file: join(dir, e.name), channel: '' });
    else if (e.isDirectory()) {
      for (const f of (await readdir(join(dir, e.name), { withFileTypes: true })).sort((a, b) => a.name.localeCompare(b.name)))
        if (f.isFile() && !f.name.startsWith('.')) out.push({ file: join(dir, e.name, f.name), channel: e.name });
    }
  }
  return out;
}

function resourcesOf(expr: unknown, out: Set<string>): Set<string> {
  if (Array.isArray(expr)) for (const x of expr) resourcesOf(x, out);
  else if (expr && typeof expr === 'object') {
    const o = expr as Record<string, unknown>;
    if (typeof o['ref'] === 'string') out.add(o['ref']);
    if (typeof o['lookup'] === 'string') out.add(o['lookup']);
    for (const v of Object.values(o)) resourcesOf(v, out);
  }
  return out;
}

const fieldsOf = (p: Proposal): FieldProposal[] => [...p.fields, ...(p.group?.itemFields ?? []).map((f) => ({ ...f, field: `items.${f.field}` }))];

/** References between the proposals of a drop: a field that refers to (or looks up) a target another file of the drop holds. */
export function dropReferences(proposals: Array<{ proposal: Proposal }>): DropReference[] {
  const refs: DropReference[] = [];
  for (const { proposal: p } of proposals) {
    for (const f of fieldsOf(p)) {
      if (f.columns.length === 0) continue; // a constant placeholder refers to nothing of the drop
      for (const r of resourcesOf(f.expr, new Set())) {
        const to = proposals.find((o) => o.proposal.target === r && o.proposal !== p);
        if (to) refs.push({ from: p.name, field: f.field, to: to.proposal.name, resource: r });
      }
    }
  }
  return refs;
}

/** Mapping names in dependency order: a mapping after those it refers to (file order otherwise). */
export function dependencyOrder(names: string[], refs: DropReference[]): string[] {
  const order: string[] = [];
  const left = [...names];
  while (left.length) {
    const i = left.findIndex((n) => refs.every((r) => r.from !== n || r.to === n || order.includes(r.to) || !left.includes(r.to)));
    order.push(...left.splice(i < 0 ? 0 : i, 1)); // a cycle: the first left goes next
  }
  return order;
}

export async function proposeDrop(dir: string): Promise<DropResult> {
  const result: DropResult = { proposals: [], refused: [], covered: [], references: [], order: [] };
  for (const { file, channel } of await dropFiles(dir)) {
    const name = file.slice(file.lastIndexOf('/') + 1);
    const by = result.proposals.find(({ proposal: p }) => p.match.channel === channel && globToRegExp(p.match.files).test(name));
    if (by) {
      result.covered.push({ file, by: by.proposal.name });
      continue;
    }
    try {
      const sniffed = await sniffFile(file);
      const proposal = await propose(file, sniffed, { channel });
      if (result.proposals.some((x) => x.proposal.name === proposal.name)) proposal.name = `${proposal.name}-${channel || 'drop'}`;
      result.proposals.push({ file, proposal });
      // one file, several targets: a type column whose other rows are another target (partners F/T)
      for (const m of (proposal.filter?.evidence ?? '').matchAll(/wmsbridge infer --target (\w+)/g)) {
        if (result.proposals.some((x) => x.file === file && x.proposal.target === m[1])) continue;
        const other = await propose(file, sniffed, { channel, target: m[1]!, name: `${proposal.name}-${m[1]!.toLowerCase()}` });
        result.proposals.push({ file, proposal: other });
        // both read the file on purpose: declared in one of them, as check wants it
        proposal.sharesFilesWith = [...(proposal.sharesFilesWith ?? []), other.name];
      }
    } catch (err) {
      result.refused.push({ file, reason: errorMessage(err).replace(/^infer: /, '') });
    }
  }
  result.references = dropReferences(result.proposals);
  result.order = dependencyOrder(
    result.proposals.map((x) => x.proposal.name),
    result.references,
  );
  return result;
}
