/**
 * `wmsbridge infer`, the work: a commented mapping proposed from one sample export (src/infer/), validated like
 * `check` and previewed with the sample (no WMS: read-only lookups stay unresolved); or, given a folder, one mapping
 * per kind of file of a drop. Never overwrites a file without `force`. cli/infer.ts parses the arguments.
 */
import { existsSync, statSync } from 'node:fs';
import { mkdir, rename, writeFile } from 'node:fs/promises';
import { basename, dirname, join, relative, resolve, sep } from 'node:path';
import { packageRoot } from '../shared/package-root.js';
import { ConfigError, errorMessage } from '../shared/errors.js';
import { loadMappingFile, loadMappingsDir } from '../map/load.js';
import { previewWith } from '../map/preview.js';
import { mappingTodos } from '../map/todos.js';
import { sniffFile } from '../infer/sniff.js';
import { propose } from '../infer/propose.js';
import { toYaml } from '../infer/write.js';
import { proposeDrop } from '../infer/drop.js';
import type { CommandIo } from './with-app.js';

/** What `wmsbridge infer` was given beside its sample. */
export interface InferOptions {
  target?: string;
  channel?: string;
  out?: string;
  name?: string;
  force?: boolean;
}

/** records + rejects the preview keeps in memory before it stops (a huge sample is not mapped whole) */
const PREVIEW_LIMIT = 20_000;

function schemaPathFor(out: string): string {
  const local = resolve('schemas', 'mapping.schema.json');
  const target = existsSync(local) ? local : join(packageRoot(), 'schemas', 'mapping.schema.json');
  return relative(dirname(resolve(out)), target)
    .split(sep)
    .join('/');
}

/**
 * Infers a mapping from `sample` (a file), or one per kind of file when it is a folder. Resolves to the exit code:
 * 0 written and the sample maps cleanly; 1 written, the preview has rejects or a field is a TODO; 2 refused.
 */
export async function runInfer(sample: string, values: InferOptions, io: CommandIo): Promise<number> {
  if (existsSync(sample) && statSync(sample).isDirectory()) return inferFolder(sample, values, io);
  return inferSample(sample, values, io);
}

async function inferSample(sample: string, values: InferOptions, io: CommandIo): Promise<number> {
  if (values.name !== undefined && !/^[A-Za-z0-9][A-Za-z0-9_.-]*$/.test(values.name)) {
    throw new ConfigError(`infer: --name '${values.name}': use letters, digits, _ . - (no spaces)`);
  }
  const sniffed = await sniffFile(sample);
  const p = await propose(sample, sniffed, {
    ...(values.target !== undefined ? { target: values.target } : {}),
    ...(values.channel !== undefined ? { channel: values.channel } : {}),
    ...(values.name !== undefined ? { name: values.name } : {}),
  });
  const out = values.out ?? join('mappings', `${p.name}.yaml`);
  if (existsSync(out) && !values.force) {
    io.stderr.write(`wmsbridge infer: ${out} exists; not overwritten (use --force, or --out another file)\n`);
    return 2;
  }
  const text = toYaml(p, { sampleName: basename(sample), schemaPath: schemaPathFor(out), now: new Date() });
  await mkdir(dirname(resolve(out)), { recursive: true });
  const tmp = `${out}.${process.pid}.tmp`;
  await writeFile(tmp, text, 'utf8');
  await rename(tmp, out);

  // what was decided
  const w = io.stdout;
  w.write(`infer ${basename(sample)} -> ${out}\n`);
  for (const n of p.sourceNotes) w.write(`  ${n}\n`);
  w.write(`  target: ${p.target} (${p.targetConfidence.toFixed(2)}): ${p.targetEvidence}\n`);
  if (p.group) w.write(`  documents: ${p.group.evidence}\n`);
  const all = [...p.fields, ...(p.group?.itemFields ?? []).map((f) => ({ ...f, field: `item ${f.field}` }))];
  const width = Math.min(30, Math.max(...all.map((f) => f.field.length)));
  for (const f of all) {
    const from = f.columns.length ? f.columns.join(', ') : '(constant)';
    w.write(`  ${f.field.padEnd(width)} <- ${from.padEnd(22)} ${f.confidence.toFixed(2)}${f.todo ? '  TODO' : ''}\n`);
  }
  if (p.unused.length) w.write(`  columns no field reads: ${p.unused.join(', ')}\n`);
  if (p.smallSets?.length) w.write(`  few values (map, table or filter candidates): ${p.smallSets.join('; ')}\n`);
  const todos = all.filter((f) => f.todo).length;

  // the same validation as `check`, on the new mapping
  let mapping;
  try {
    mapping = await loadMappingFile(out);
  } catch (err) {
    io.stderr.write(
      `wmsbridge infer: ${out} was written but does not validate yet; fix what it names (the TODOs first), then run wmsbridge check:\n${errorMessage(err)}\n`,
    );
    return 2;
  }
  const problems: string[] = [];
  const { mappings: others, errors } = await loadMappingsDir(dirname(resolve(out)));
  void errors;
  for (const m of others) {
    if (resolve(m.file) === resolve(out)) continue;
    if (m.name === mapping.name) problems.push(`mapping name '${m.name}' is already used by ${m.file}: rename it (--name)`);
    if (m.matches(mapping.match.channel ?? '', basename(sample)))
      problems.push(
        `${m.file} (${m.name}) matches ${basename(sample)} too: both would read it. If that is meant (one table, several targets, each with its filter), ` +
          `add sharesFilesWith: [${m.name}] to ${mapping.name}; otherwise narrow match.files (docs/MAPPINGS.md, One file, several mappings)`,
      );
  }
  if (!mapping.matches(mapping.match.channel ?? '', basename(sample)))
    problems.push(`match.files ${mapping.match.files.join(', ')} does not match ${basename(sample)}`);
  w.write(`check: ${out} is valid${problems.length ? `, with ${problems.length} warning(s):` : ''}\n`);
  for (const pr of problems) w.write(`  - ${pr}\n`);

  // preview of the sample, without a WMS
  const r = await previewWith(mapping, sample, { limit: PREVIEW_LIMIT });
  w.write(
    `preview: ${r.stats.rows} row(s) read, ${r.records.length} record(s), ${r.rejects.length} reject(s), ${r.stats.skipped} skipped` +
      `${r.truncated ? `, stopped after ${PREVIEW_LIMIT} outputs` : ''} (no WMS: read-only lookups are not resolved and print as <lookup ...>; refs resolve at send time)\n`,
  );
  for (const rej of r.rejects.slice(0, 20)) {
    const lines = rej.source.lineEnd ? `lines ${rej.source.line}-${rej.source.lineEnd}` : `line ${rej.source.line}`;
    w.write(`  REJECT ${lines}: ${rej.issues.map((i) => `${i.code}: ${i.message}`).join('; ')}\n`);
  }
  if (r.rejects.length > 20) w.write(`  ... and ${r.rejects.length - 20} more (wmsbridge preview ${out} ${sample})\n`);
  // a field infer could not decide is a TODO: check and preview fail on it, and so does infer
  const open = mappingTodos(mapping.spec);
  if (open.length) w.write(`FAIL: not finished, TODO in ${open.join(', ')}: check and preview fail until each is replaced\n`);
  w.write(`${todos ? `${todos} TODO(s) to review in ${out}` : `review ${out}`}, then: wmsbridge preview ${out} ${sample}\n`);
  return r.rejects.length > 0 || open.length > 0 ? 1 : 0;
}

/**
 * `wmsbridge infer <folder>`: one mapping per kind of file of a drop, written into --out (a folder,
 * default mappings/), with the references between them, the order to send them in, and one summary of
 * what is sure and what needs a person. Exit 0 when nothing does, 1 otherwise.
 */
async function inferFolder(dir: string, values: { out?: string; force?: boolean; target?: string; name?: string }, io: CommandIo): Promise<number> {
  if (values.target !== undefined || values.name !== undefined) throw new ConfigError('infer <folder>: --target and --name apply to one sample file');
  const outDir = values.out ?? 'mappings';
  const drop = await proposeDrop(dir);
  const w = io.stdout;
  const person: string[] = [];
  const lines: string[] = [];
  await mkdir(resolve(outDir), { recursive: true });
  for (const name of drop.order) {
    const { file, proposal: p } = drop.proposals.find((x) => x.proposal.name === name)!;
    const out = join(outDir, `${name}.yaml`);
    if (existsSync(out) && !values.force) {
      person.push(`${name}: ${out} exists, not overwritten (use --force, or another --out)`);
      continue;
    }
    await writeFile(out, toYaml(p, { sampleName: basename(file), schemaPath: schemaPathFor(out), now: new Date() }), 'utf8');
    const all = [...p.fields, ...(p.group?.itemFields ?? [])].filter((f) => f.columns.length > 0);
    const sure = all.filter((f) => f.confidence >= 0.8 && !f.todo).length;
    let todos: string[] = [];
    try {
      todos = mappingTodos((await loadMappingFile(out)).spec);
    } catch (err) {
      person.push(`${name}: does not validate yet: ${errorMessage(err).split('\n')[0]}`);
    }
    if (todos.length) person.push(`${name}: TODO in ${todos.join(', ')}`);
    if (p.filter && /NEEDS A PERSON/.test(p.filter.evidence)) person.push(`${name}: ${p.filter.evidence}`);
    lines.push(
      `  ${name.padEnd(24)} ${p.target.padEnd(22)} <- ${relative(dir, file)}: ${sure} field(s) sure, ${all.length - sure} guessed${p.filter ? ', filtered' : ''}${todos.length ? `, ${todos.length} TODO` : ''}`,
    );
  }
  for (const r of drop.refused) person.push(`${relative(dir, r.file)}: no mapping: ${r.reason}`);
  w.write(
    `infer ${dir}: ${new Set(drop.proposals.map((x) => x.file)).size + drop.refused.length + drop.covered.length} file(s), ${drop.proposals.length} mapping(s) in ${outDir}, ${drop.refused.length} refused, ${drop.covered.length} matched by another mapping of the set\n`,
  );
  w.write(`order (a mapping after those it refers to): ${drop.order.join(', ')}\n`);
  w.write(`mappings:\n${lines.join('\n')}\n`);
  for (const c of drop.covered) w.write(`  (${relative(dir, c.file)} is read by ${c.by} too)\n`);
  w.write(`references between the files:\n${drop.references.map((r) => `  ${r.from}.${r.field} -> ${r.to} (${r.resource})`).join('\n') || '  none'}\n`);
  w.write(person.length ? `needs a person (${person.length}):\n${person.map((x) => `  - ${x}`).join('\n')}\n` : 'needs a person: nothing\n');
  return person.length ? 1 : 0;
}
