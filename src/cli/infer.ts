/**
 * `wmsbridge infer <sample-file> [--target T] [--channel C] [--out FILE] [--name N] [--force]`: writes a
 * commented mapping proposed from one sample export (src/infer/), validates it like `check`, and
 * previews the sample with it (no WMS: read-only lookups stay unresolved). Never overwrites a file
 * without --force. Exit 0 mapping written and the sample maps without rejects; 1 written, the
 * preview has rejects (data or TODOs need attention); 2 usage, unreadable sample, refused overwrite or
 * a mapping that does not validate.
 */
import { existsSync } from 'node:fs';
import { mkdir, rename, writeFile } from 'node:fs/promises';
import { basename, dirname, join, relative, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import { ConfigError, errorMessage } from '../shared/errors.js';
import { loadMappingFile, loadMappingsDir } from '../map/load.js';
import { previewWith } from '../map/preview.js';
import { sniffFile } from '../infer/sniff.js';
import { propose } from '../infer/propose.js';
import { toYaml } from '../infer/write.js';
import type { CliIo } from './types.js';
import { commandHelp, defineCommand, parseCommand } from './options.js';

export const INFER_COMMAND = defineCommand({
  name: 'infer',
  usage: '<sample-file> [options]',
  description: `Proposes a mapping from one sample export: sniffs the encoding, the format (delimited, fixed-width,
XML with NF-e recognised, JSON), types every column, picks the target and a column for every field
(TOTVS Protheus names and Portuguese words), and writes a commented YAML with a confidence and the
evidence per field and TODOs. Then validates it (like check) and previews the sample with it. No WMS
is needed: read-only lookups stay unresolved in the preview.`,
  common: [],
  options: {
    target: { type: 'string', arg: 'T', help: 'the target (Product, Provider, PickingList...): else chosen from the file name and columns' },
    channel: { type: 'string', arg: 'C', help: "inbox channel of match.channel: else the sample's inbox folder, else by target" },
    out: { type: 'string', arg: 'FILE', help: 'where to write: else mappings/<name>.yaml' },
    name: { type: 'string', arg: 'N', help: 'the mapping name: else from the file name (PRODUTOS_20241105.csv -> produtos)' },
    force: { type: 'boolean', help: 'overwrite --out when it exists' },
  },
  allowPositionals: true,
  footer: 'exit: 0 written and the sample maps cleanly; 1 written, the preview has rejects; 2 usage, sample or mapping error',
});

/** records + rejects the preview keeps in memory before it stops (a huge sample is not mapped whole) */
const PREVIEW_LIMIT = 20_000;

function packageRoot(): string {
  let dir = dirname(fileURLToPath(import.meta.url));
  for (let i = 0; i < 6; i++) {
    if (existsSync(join(dir, 'package.json'))) return dir;
    dir = dirname(dir);
  }
  return process.cwd();
}

function schemaPathFor(out: string): string {
  const local = resolve('schemas', 'mapping.schema.json');
  const target = existsSync(local) ? local : join(packageRoot(), 'schemas', 'mapping.schema.json');
  return relative(dirname(resolve(out)), target)
    .split(sep)
    .join('/');
}

export default async function infer(args: string[], io: CliIo): Promise<number> {
  const { values, positionals } = parseCommand(INFER_COMMAND, args);
  if (values.help) {
    io.stdout.write(commandHelp(INFER_COMMAND));
    return 0;
  }
  if (positionals.length !== 1) {
    io.stderr.write(`wmsbridge infer: expected one <sample-file>\n\n${commandHelp(INFER_COMMAND)}`);
    return 2;
  }
  const sample = positionals[0]!;
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
  w.write(`${todos ? `${todos} TODO(s) to review in ${out}` : `review ${out}`}, then: wmsbridge preview ${out} ${sample}\n`);
  return r.rejects.length > 0 ? 1 : 0;
}
