/**
 * What the studio's page asks for: the files it was given with their mapping and state, a sample as a grid,
 * infer's draft, the preview of a mapping text against a sample (the same records, rejects and messages as
 * `wmsbridge preview`: map/preview.ts's previewWith), saving a mapping into the mappings folder, and check.
 */
import { lstat, readFile, rename, stat, unlink, writeFile } from 'node:fs/promises';
import { basename, dirname, extname, join, relative, resolve } from 'node:path';
import { LookupPlaceholder } from '../map/compile.js';
import { loadMappingsDir, parseMappingText } from '../map/load.js';
import { previewWith, type PreviewResult } from '../map/preview.js';
import { mappingTodos } from '../map/todos.js';
import { isRef, type ReferenceCache } from '../map/types.js';
import type { CompiledMapping } from '../map/compile.js';
import { dropFiles } from '../infer/drop.js';
import { sniffFile } from '../infer/sniff.js';
import { propose } from '../infer/propose.js';
import { toYaml } from '../infer/write.js';
import { errorMessage, MappingError } from '../shared/errors.js';
import type { ParsedItem, ParseOptions } from '../parse/index.js';
import { mappingPath } from './security.js';
import { sampleGrid } from './sample.js';

/** records + rejects a preview keeps (a 10,000-row sample is previewed whole) */
export const PREVIEW_LIMIT = 20_000;
/** records + rejects sent to the page (the counts are of all of them) */
const SHOWN = 500;

export interface StudioDeps {
  /** the file or folder the studio was given: the only data it reads */
  root: string;
  /** the configured mappings folder: the only place it writes */
  mappingsDir: string;
  /** read-only reference data for lookups, from the embedded sandbox (never the configured WMS) */
  references?: (resources: string[]) => Promise<ReferenceCache>;
  /** `wmsbridge check` of the whole configuration */
  check?: () => Promise<{ code: number; output: string }>;
  /** `wmsbridge doctor` of the configured WMS: its read-only probes (login, reads, paging), never a write */
  doctor?: () => Promise<{ code: number; output: string }>;
  /** the mapping JSON schema */
  schema: () => unknown;
  /** "try it": the sample's records sent to a throw-away embedded sandbox, each answer (app/studio-try.ts) */
  tryIt?: (sample: { path: string; channel: string }, mappingName: string, text: string) => Promise<unknown>;
  /** the parsed items of the sample being edited (items-cache.ts): kept between previews */
  items?: (path: string, source: ParseOptions) => AsyncIterable<ParsedItem>;
}

export interface SampleFile {
  id: string;
  path: string;
  channel: string;
}

/** The files the studio may read: the one it was given, or those of the folder (and its channel sub-folders). */
export async function sampleFiles(root: string): Promise<SampleFile[]> {
  const st = await stat(root);
  if (st.isFile()) return [{ id: basename(root), path: resolve(root), channel: basename(dirname(resolve(root))) }];
  // the folder's own files are in the channel the folder is named after (inbox/cadastros), as infer decides
  return (await dropFiles(root)).map((f) => ({
    id: relative(root, f.file).split('\\').join('/'),
    path: resolve(f.file),
    channel: f.channel || basename(resolve(root)),
  }));
}

export async function fileById(deps: StudioDeps, id: unknown): Promise<SampleFile | undefined> {
  if (typeof id !== 'string') return undefined;
  return (await sampleFiles(deps.root)).find((f) => f.id === id);
}

async function mappingFor(deps: StudioDeps, f: SampleFile): Promise<CompiledMapping | undefined> {
  const { mappings } = await loadMappingsDir(deps.mappingsDir);
  // the channel's mapping, else one whose file pattern takes the name (a sample outside the inbox)
  return mappings.find((m) => m.matches(f.channel, basename(f.path))) ?? mappings.find((m) => m.matches(m.match.channel ?? '', basename(f.path)));
}

/** Each file with the mapping that reads it and its state: mapped, todo, rejects, unmapped or error. */
export async function listFiles(deps: StudioDeps): Promise<unknown[]> {
  const out = [];
  for (const f of await sampleFiles(deps.root)) {
    const m = await mappingFor(deps, f);
    if (!m) {
      out.push({ id: f.id, channel: f.channel, state: 'unmapped' });
      continue;
    }
    const todos = mappingTodos(m.spec);
    let state = todos.length ? 'todo' : 'mapped';
    let counts = {};
    try {
      const r = await previewWith(m, f.path, { limit: 2000 });
      counts = { records: r.records.length, rejects: r.rejects.length, rows: r.stats.rows };
      if (!todos.length && r.rejects.length) state = 'rejects';
    } catch (err) {
      state = 'error';
      counts = { problem: errorMessage(err) };
    }
    out.push({ id: f.id, channel: f.channel, state, mapping: { name: m.name, file: basename(m.file) }, todos, ...counts });
  }
  return out;
}

/** The existing mapping of a file (its text), or infer's proposal as a first draft. */
export async function draftFor(deps: StudioDeps, f: SampleFile): Promise<{ fileName: string; text: string; from: 'mapping' | 'infer'; notes: string[] }> {
  const m = await mappingFor(deps, f);
  if (m) return { fileName: basename(m.file), text: await readFile(m.file, 'utf8'), from: 'mapping', notes: [] };
  let p;
  try {
    p = await propose(f.path, await sniffFile(f.path), f.channel ? { channel: f.channel } : {});
  } catch (err) {
    return skeleton(f, errorMessage(err));
  }
  const text = toYaml(p, { sampleName: basename(f.path), schemaPath: schemaPathFrom(deps.mappingsDir), now: new Date() });
  return {
    fileName: `${p.name}.yaml`,
    text,
    from: 'infer',
    notes: [...p.sourceNotes, `target: ${p.target} (${p.targetConfidence.toFixed(2)}): ${p.targetEvidence}`],
  };
}

/** What infer cannot propose (an XLSX workbook, a file NEEDING A PERSON): a skeleton to write by hand, and why. */
function skeleton(f: SampleFile, why: string): { fileName: string; text: string; from: 'infer'; notes: string[] } {
  const base = basename(f.path);
  const name =
    base
      .replace(/\.[^.]*$/, '')
      .replace(/[^A-Za-z0-9_.-]+/g, '-')
      .toLowerCase() || 'mapping';
  const format = extname(base).toLowerCase() === '.xlsx' ? 'xlsx' : 'delimited';
  const text = [
    `# infer proposed no mapping for ${base}:`,
    ...why.split('\n').map((l) => `#   ${l}`),
    '# TODO: write it by hand (docs/MAPPINGS.md): the target, then a field per column',
    `name: ${name}`,
    `match: { channel: ${f.channel || 'TODO'}, files: '${base.replace(/'/g, "''")}' }`,
    'source:',
    `  format: ${format}`,
    'target: TODO',
    'fields: {}',
    '',
  ].join('\n');
  return { fileName: `${name}.yaml`, text, from: 'infer', notes: [why] };
}

function schemaPathFrom(mappingsDir: string): string {
  const local = resolve('schemas', 'mapping.schema.json');
  return relative(resolve(mappingsDir), local).split('\\').join('/');
}

/** A payload as JSON: lookups not resolved print as preview prints them (<lookup ...>, <ref ...>). */
function plain(v: unknown): unknown {
  if (v instanceof LookupPlaceholder) return v.label;
  if (isRef(v)) return `<ref ${v.$ref.resource} ${v.$ref.by ? `${v.$ref.by}=` : ''}${v.$ref.value}>`;
  if (Array.isArray(v)) return v.map(plain);
  if (v && typeof v === 'object') return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, plain(x)]));
  return v;
}

/** Where each field comes from: field path (items[].x for item fields) -> source columns. */
function fieldColumns(m: CompiledMapping, r: PreviewResult): Record<string, string[]> {
  const out: Record<string, string[]> = {};
  const add = (field: string) => {
    if (field in out) return;
    const cols = m.sourceColumns(field);
    out[field] = cols ? cols.split(',').map((c) => c.trim()) : [];
  };
  for (const rec of r.records.slice(0, 50)) {
    for (const [k, v] of Object.entries(rec.payload)) {
      add(k);
      if (Array.isArray(v)) for (const item of v.slice(0, 5)) if (item && typeof item === 'object') for (const ik of Object.keys(item)) add(`${k}[].${ik}`);
    }
  }
  add('key');
  return out;
}

/** The lines of a YAML text holding a TODO (infer leaves them where a person must decide). */
function todoLines(text: string): number[] {
  return text.split('\n').flatMap((l, i) => (/\bTODO\b/.test(l.replace(/#.*$/, '')) ? [i + 1] : []));
}

export interface PreviewAnswer {
  ok: boolean;
  issues?: Array<{ path: string; message: string; line?: number }>;
  records?: unknown[];
  rejects?: unknown[];
  unsent?: unknown[];
  stats?: unknown;
  todos?: string[];
  todoLines: number[];
  fieldColumns?: Record<string, string[]>;
  truncated?: boolean;
  ms?: number;
}

/** Preview of a mapping text against a sample: validation issues (with their lines), or records and rejects. */
export async function previewText(deps: StudioDeps, f: SampleFile, text: string, fileName = 'studio.yaml'): Promise<PreviewAnswer> {
  const t0 = performance.now();
  let m: CompiledMapping;
  try {
    m = parseMappingText(text, fileName, fileName.endsWith('.json'));
  } catch (err) {
    if (err instanceof MappingError) {
      const details = (err.details ?? {}) as { issues?: PreviewAnswer['issues'] };
      return { ok: false, issues: details.issues ?? [{ path: '(file)', message: err.message }], todoLines: todoLines(text) };
    }
    throw err;
  }
  const resources = [...new Set(m.referenceNeeds.map((n) => n.resource))];
  const refs = resources.length && deps.references ? await deps.references(resources) : undefined;
  let r: PreviewResult;
  try {
    r = await previewWith(m, f.path, { limit: PREVIEW_LIMIT, ...(refs ? { refs } : {}), ...(deps.items ? { items: deps.items } : {}) });
  } catch (err) {
    return { ok: false, issues: [{ path: 'source', message: errorMessage(err) }], todoLines: todoLines(text) };
  }
  const types = (raw: ReadonlyArray<{ recordType?: string }>) =>
    raw.some((x) => x.recordType !== undefined) ? { recordTypes: raw.map((x) => x.recordType ?? '?') } : {};
  return {
    ok: true,
    records: r.records.slice(0, SHOWN).map((rec) => ({
      target: rec.target,
      op: rec.op,
      key: rec.key,
      source: rec.source,
      lines: rec.raw.map((x) => x.line),
      ...types(rec.raw),
      payload: plain(rec.payload),
      ...(rec.attachmentPath !== undefined ? { attachmentPath: rec.attachmentPath } : {}),
    })),
    rejects: r.rejects.slice(0, SHOWN).map((rej) => ({
      source: rej.source,
      lines: rej.raw.map((x) => x.line),
      ...types(rej.raw),
      key: rej.key,
      issues: rej.issues.map((i) => ({ code: i.code, message: i.message, ...(i.field !== undefined ? { field: i.field } : {}) })),
    })),
    unsent: r.unsent.groups,
    stats: { ...r.stats, records: r.records.length, rejects: r.rejects.length },
    todos: mappingTodos(m.spec),
    todoLines: todoLines(text),
    fieldColumns: fieldColumns(m, r),
    truncated: r.truncated,
    ms: Math.round(performance.now() - t0),
  };
}

/**
 * Writes a mapping into the mappings folder, atomically (a temporary file in the same folder, then rename), only
 * when it validates; never through a symbolic link, never elsewhere (mappingPath refuses any other name).
 */
export async function saveMapping(deps: StudioDeps, name: unknown, text: unknown): Promise<{ path: string }> {
  const path = mappingPath(deps.mappingsDir, name);
  if (typeof text !== 'string' || text.length > 2_000_000) throw new MappingError('the mapping text is missing or larger than 2 MB');
  parseMappingText(text, path, path.endsWith('.json'));
  try {
    if ((await lstat(path)).isSymbolicLink()) throw new MappingError(`${basename(path)} is a symbolic link: the studio does not write through it`);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
  }
  const tmp = join(dirname(path), `.${basename(path)}.${process.pid}.${Date.now()}.tmp`);
  try {
    await writeFile(tmp, text, { encoding: 'utf8', flag: 'wx' });
    await rename(tmp, path);
  } catch (err) {
    await unlink(tmp).catch(() => undefined);
    throw err;
  }
  return { path };
}

export { sampleGrid };
