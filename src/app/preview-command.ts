/**
 * `wmsbridge preview`, the work: maps a data file with its mapping(s) and prints the records/documents it would
 * produce and its rejects, sending nothing. Read-only lookups print as `<lookup Warehouse codeERP=CD-SP01>` unless a
 * WMS is given (flags, WMS_URL / WMS_ACCESS_KEY_ID / WMS_SECRET_KEY, the config file's, or an embedded sandbox),
 * in which case a WMS client (or the sandbox) is built here, read and closed. cli/preview.ts parses the arguments.
 */
import { ConfigError, MappingError } from '../shared/errors.js';
import { isRef, type ReferenceCache } from '../map/types.js';
import { LookupPlaceholder } from '../map/compile.js';
import { loadMappingFile } from '../map/load.js';
import { composeMappings, sharingProblem } from '../map/multi.js';
import { linesText } from '../map/unsent.js';
import { basename } from 'node:path';
import { previewWith, type PreviewResult } from '../map/preview.js';
import { mappingTodos } from '../map/todos.js';
import type { RefResource } from '../wms/targets.js';
import { envValue, processEnv } from '../config/load.js';
import type { CommandIo } from './with-app.js';

function display(v: unknown): string {
  if (v instanceof LookupPlaceholder) return v.label;
  if (isRef(v)) return `<ref ${v.$ref.resource} ${v.$ref.by ? `${v.$ref.by}=` : ''}${v.$ref.value}>`;
  if (typeof v === 'string') return v;
  return JSON.stringify(v);
}

function jsonReplacer(_k: string, v: unknown): unknown {
  return isRef(v) ? `<ref ${v.$ref.resource} ${v.$ref.by ? `${v.$ref.by}=` : ''}${v.$ref.value}>` : v;
}

/** Multi-record files: the record types a record (or reject) was made of, in order ("C100, C170 x2"); '' otherwise. */
function recordTypes(r: PreviewResult, raw: ReadonlyArray<{ recordType?: string }>): string {
  const f = r.mapping.source.format;
  if (f !== 'delimited' && f !== 'fixed-width') return '';
  const n = new Map<string, number>();
  for (const row of raw) if (row.recordType !== undefined) n.set(row.recordType, (n.get(row.recordType) ?? 0) + 1);
  return [...n].map(([t, c]) => (c > 1 ? `${t} x${c}` : t)).join(', ');
}

/** --json: `recordTypes` (the record type of each source line, in order) for multi-record files. */
function typesOf(r: PreviewResult, raw: ReadonlyArray<{ recordType?: string }>): { recordTypes?: string[] } {
  if (recordTypes(r, raw) === '') return {};
  return { recordTypes: raw.map((x) => x.recordType ?? '?') };
}

function writeTable(r: PreviewResult, out: NodeJS.WritableStream): void {
  for (const rec of r.records) {
    const lines = rec.source.lineEnd ? `lines ${rec.source.line}-${rec.source.lineEnd}` : `line ${rec.source.line}`;
    const types = recordTypes(r, rec.raw);
    out.write(`${rec.target} ${rec.op} key=${rec.key} (${lines}${types ? `; records ${types}` : ''}) by ${rec.mapping}\n`);
    const entries = Object.entries(rec.payload);
    const width = Math.min(28, Math.max(...entries.map(([k]) => k.length)));
    for (const [k, v] of entries) {
      if (Array.isArray(v)) {
        out.write(`  ${k.padEnd(width)} ${v.length} item(s)\n`);
        v.forEach((item, i) => {
          const parts = Object.entries(item as Record<string, unknown>).map(([ik, iv]) => `${ik}=${display(iv)}`);
          out.write(`    [${i}] ${parts.join('  ')}\n`);
        });
      } else out.write(`  ${k.padEnd(width)} ${display(v)}\n`);
    }
    if (rec.attachmentPath !== undefined) out.write(`  ${'(file)'.padEnd(width)} ${rec.attachmentPath}\n`);
    out.write('\n');
  }
  for (const rej of r.rejects) {
    const lines = rej.source.lineEnd ? `lines ${rej.source.line}-${rej.source.lineEnd}` : `line ${rej.source.line}`;
    const types = recordTypes(r, rej.raw);
    out.write(`REJECT ${lines}${types ? ` (records ${types})` : ''}${rej.key !== undefined ? ` key=${rej.key}` : ''} by ${rej.mapping}\n`);
    for (const i of rej.issues) out.write(`  ${i.code}: ${i.message}\n`);
    out.write('\n');
  }
  for (const g of r.unsent.groups)
    out.write(
      g.kind === 'excluded'
        ? `EXCLUDED ${g.count} row(s) by ${g.mapping ?? ''}: ${g.reason ?? ''} (line(s) ${linesText(g)})\n`
        : `NOT SELECTED ${g.count} row(s) by any mapping (line(s) ${linesText(g)})\n`,
    );
}

async function wmsReferences(values: PreviewCommandOptions, resources: string[]): Promise<ReferenceCache | undefined> {
  if (values.sandbox === true) {
    if (values.wmsUrl !== undefined) throw new ConfigError('preview: --sandbox and --wms-url name two WMS: choose one');
    // an embedded sandbox for the lookups only: started, read, closed
    const { createSandbox } = await import('../sandbox/index.js');
    const sb = await createSandbox({ port: 0 });
    try {
      return await loadReferences(sb.url, sb.accessKeyID, sb.secretKey, resources);
    } finally {
      await sb.close();
    }
  }
  const url = values.wmsUrl ?? envValue('WMS_URL');
  const key = values.accessKeyId ?? envValue('WMS_ACCESS_KEY_ID');
  const secret = values.secretKey ?? envValue('WMS_SECRET_KEY');
  if (!url && !key && !secret) {
    // none on the command line: the WMS of the config file (--config, or ./wmsbridge.config.* when there is one)
    const { findConfigFile, loadConfig, resolveWmsCredentials } = await import('../config/load.js');
    const file = values.configFile;
    if (file === undefined && findConfigFile(process.cwd(), processEnv()) === null) return undefined;
    const creds = resolveWmsCredentials(await loadConfig(file !== undefined ? { file } : {}));
    if (!creds) return undefined;
    return loadReferences(creds.url, creds.accessKeyID, creds.secretKey, resources);
  }
  if (!url || !key || !secret)
    throw new ConfigError('preview: resolving lookups needs the WMS URL, access key id and secret key (flags or WMS_URL, WMS_ACCESS_KEY_ID, WMS_SECRET_KEY)');
  return loadReferences(url, key, secret, resources);
}

/** The reference data of `resources` read once from a WMS (or a sandbox) through a client closed after it. */
export async function loadReferences(url: string, key: string, secret: string, resources: string[]): Promise<ReferenceCache> {
  // the WMS client and the reference cache belong to the pipeline; loaded only when asked for
  const { createWmsClient } = await import('../wms/client.js');
  const { createReferenceCache } = await import('../push/reference-cache.js');
  const client = createWmsClient({ baseUrl: url, accessKeyID: key, secretKey: secret });
  const cache = createReferenceCache(client);
  try {
    await cache.load(resources as RefResource[]);
  } finally {
    await (client as unknown as { close?: () => Promise<void> }).close?.();
  }
  return cache;
}

/** What `wmsbridge preview` was asked: the mapping files, then the data file, and where lookups resolve. */
export interface PreviewCommandOptions {
  /** the mapping files, then the data file */
  paths: string[];
  limit?: number;
  json?: boolean;
  /** resolve read-only lookups against an embedded sandbox */
  sandbox?: boolean;
  wmsUrl?: string;
  accessKeyId?: string;
  secretKey?: string;
  /** the config file whose WMS resolves lookups (else ./wmsbridge.config.* when present) */
  configFile?: string;
}

/**
 * Maps the data file with the mappings, sending nothing, and writes the records, rejects and rows not sent to
 * io.stdout (a table, or JSON lines), the counts to io.stderr. Resolves to the exit code: 0 no rejects, 1 rejects,
 * 2 a mapping left unfinished (a TODO of infer).
 */
export async function runPreviewCommand(options: PreviewCommandOptions, io: CommandIo): Promise<number> {
  const { paths, limit } = options;
  const dataPath = paths[paths.length - 1]!;
  const parts = [];
  for (const p of paths.slice(0, -1)) parts.push(await loadMappingFile(p));
  const problem = parts.length > 1 ? sharingProblem(parts) : null;
  if (problem !== null) throw new MappingError(`${basename(dataPath)}: ${problem}`);
  const mapping = composeMappings(parts, basename(dataPath));
  const refs = await wmsReferences(options, [...new Set(mapping.referenceNeeds.map((n) => n.resource))]);
  const r = await previewWith(mapping, dataPath, { ...(limit !== undefined ? { limit } : {}), ...(refs ? { refs } : {}) });
  if (options.json) {
    for (const rec of r.records) {
      io.stdout.write(
        `${JSON.stringify({ kind: 'record', mapping: rec.mapping, target: rec.target, op: rec.op, key: rec.key, source: rec.source, ...typesOf(r, rec.raw), payload: rec.payload, ...(rec.attachmentPath !== undefined ? { attachmentPath: rec.attachmentPath } : {}) }, jsonReplacer)}\n`,
      );
    }
    for (const rej of r.rejects) {
      io.stdout.write(
        `${JSON.stringify({ kind: 'reject', mapping: rej.mapping, source: rej.source, ...typesOf(r, rej.raw), key: rej.key, issues: rej.issues })}\n`,
      );
    }
    for (const g of r.unsent.groups) io.stdout.write(`${JSON.stringify({ ...g, kind: g.kind === 'excluded' ? 'excluded' : 'not-selected' })}\n`);
  } else writeTable(r, io.stdout);
  const s = r.stats;
  io.stderr.write(
    `preview ${mapping.name} (${(mapping.parts ?? [mapping]).map((m) => m.target).join(', ')}): ${s.rows} row(s) read, ${r.records.length} record(s), ${r.rejects.length} reject(s), ${s.skipped} not selected, ${s.excluded ?? 0} excluded${r.truncated ? `, stopped at --limit ${limit}` : ''}\n`,
  );
  // a mapping with a TODO left by infer is a guess: its records may all share a placeholder key
  const mappingPaths = paths.slice(0, -1);
  const unfinished = (mapping.parts ?? [mapping])
    .map((m, i) => ({ path: mappingPaths[i] ?? m.name, todos: mappingTodos(m.spec) }))
    .filter((m) => m.todos.length);
  for (const m of unfinished) io.stderr.write(`FAIL: ${m.path} is not finished: TODO in ${m.todos.join(', ')}; replace each TODO, then preview again\n`);
  if (unfinished.length) return 2;
  return r.rejects.length > 0 ? 1 : 0;
}
