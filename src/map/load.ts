/**
 * Loading mapping files (YAML or JSON): parse, validate with the zod model, compile. Every problem is
 * reported as a MappingError naming the file, the path inside it, the problem and (YAML) the line,
 * before any data file is read.
 */
import { readFile, readdir } from 'node:fs/promises';
import { extname, join, relative, isAbsolute } from 'node:path';
import { LineCounter, parseDocument, isNode, type Document } from 'yaml';
import { z } from 'zod';
import { MappingError } from '../shared/errors.js';
import { compileMapping, formatPath, MappingCompileError, type CompiledMapping, type MappingProblem } from './compile.js';
import { MappingSchema, type MappingSpec } from './model.js';

export interface MappingIssue {
  path: string;
  message: string;
  line?: number;
}

function displayPath(path: string): string {
  if (!isAbsolute(path)) return path;
  const rel = relative(process.cwd(), path);
  return rel && !rel.startsWith('..') && !isAbsolute(rel) ? rel : path;
}

function mappingError(file: string, issues: MappingIssue[], cause?: unknown): MappingError {
  const shown = displayPath(file);
  const lines = issues.map((i) => `${shown}: ${i.path}: ${i.message}${i.line !== undefined ? ` (line ${i.line})` : ''}`);
  const message = lines.length <= 1 ? (lines[0] ?? `${shown}: invalid mapping`) : `${lines[0]} (and ${lines.length - 1} more)\n${lines.slice(1).join('\n')}`;
  return new MappingError(message, { cause, details: { file, issues } });
}

// ---------------------------------------------------------------------------------------------
// zod issues -> analyst messages (unions report the branch that fits the input best)
// ---------------------------------------------------------------------------------------------

type Issue = z.core.$ZodIssue;

function branchScore(issues: readonly Issue[]): number {
  let score = 0;
  for (const i of issues) {
    score += 1;
    if (i.path.length === 0 && (i.code === 'invalid_type' || i.code === 'invalid_value')) score += 100;
    if (i.code === 'invalid_type' && i.path.length === 1 && /received undefined/.test(i.message)) score += 10;
  }
  return score;
}

function flattenIssues(issues: readonly Issue[], base: PropertyKey[], out: Array<{ path: PropertyKey[]; message: string }>): void {
  for (const i of issues) {
    const path = [...base, ...i.path];
    if (i.code === 'invalid_union' && i.errors.length > 0) {
      let best = i.errors[0] as Issue[];
      let bestScore = branchScore(best);
      for (const b of i.errors.slice(1)) {
        const s = branchScore(b);
        if (s < bestScore) {
          best = b;
          bestScore = s;
        }
      }
      flattenIssues(best, path, out);
      continue;
    }
    let message = i.message;
    if (i.code === 'invalid_type' && /received undefined/.test(message)) message = `is required (${message.replace(/^Invalid input: /, '')})`;
    else if (i.code === 'unrecognized_keys') message = `unknown key${i.keys.length > 1 ? 's' : ''} ${i.keys.map((k) => `'${k}'`).join(', ')}`;
    else if (i.code === 'invalid_value' && 'values' in i && !/unknown transform/.test(message)) {
      message = `expected ${(i.values as unknown[]).map((v) => `'${String(v)}'`).join(' or ')}`;
    }
    out.push({ path, message: message.replace(/^Invalid input: /, '') });
  }
}

function lineOf(doc: Document | undefined, counter: LineCounter | undefined, path: ReadonlyArray<PropertyKey>): number | undefined {
  if (!doc || !counter) return undefined;
  for (let n = path.length; n >= 0; n--) {
    const node = doc.getIn(path.slice(0, n) as unknown[], true);
    if (isNode(node) && node.range) return counter.linePos(node.range[0]).line;
  }
  return undefined;
}

/** Validates and compiles an already-parsed mapping object (tests, tools). */
export function parseMapping(input: unknown, file: string, yamlDoc?: { doc: Document; counter: LineCounter }): CompiledMapping {
  const r = MappingSchema.safeParse(input);
  if (!r.success) {
    const flat: Array<{ path: PropertyKey[]; message: string }> = [];
    flattenIssues(r.error.issues, [], flat);
    // keep one message per path
    const seen = new Set<string>();
    const issues: MappingIssue[] = [];
    for (const f of flat) {
      const p = formatPath(f.path);
      const k = `${p}\u0000${f.message}`;
      if (seen.has(k)) continue;
      seen.add(k);
      const issue: MappingIssue = { path: p, message: f.message };
      const line = lineOf(yamlDoc?.doc, yamlDoc?.counter, f.path);
      if (line !== undefined) issue.line = line;
      issues.push(issue);
    }
    throw mappingError(file, issues, r.error);
  }
  try {
    return compileMapping(r.data as MappingSpec, file);
  } catch (err) {
    if (err instanceof MappingCompileError) {
      throw mappingError(
        file,
        err.problems.map((p: MappingProblem) => {
          const issue: MappingIssue = { path: formatPath(p.path), message: p.message };
          const line = lineOf(yamlDoc?.doc, yamlDoc?.counter, p.path);
          if (line !== undefined) issue.line = line;
          return issue;
        }),
      );
    }
    throw err;
  }
}

/** Parses mapping text (YAML, or JSON when `json` is set). */
export function parseMappingText(text: string, file: string, json = false): CompiledMapping {
  if (json) {
    let obj: unknown;
    try {
      obj = JSON.parse(text) as unknown;
    } catch (err) {
      throw mappingError(file, [{ path: '(file)', message: `not valid JSON: ${(err as Error).message}` }], err);
    }
    return parseMapping(obj, file);
  }
  const counter = new LineCounter();
  const doc = parseDocument(text, { lineCounter: counter, prettyErrors: false, uniqueKeys: true });
  if (doc.errors.length > 0) {
    const issues = doc.errors.map((e) => {
      const pos = e.linePos?.[0] ?? counter.linePos(e.pos[0]);
      const issue: MappingIssue = { path: '(yaml)', message: `YAML ${e.code}: ${e.message.split('\n')[0] ?? ''}${pos ? ` at column ${pos.col}` : ''}` };
      if (pos) issue.line = pos.line;
      return issue;
    });
    throw mappingError(file, issues, doc.errors[0]);
  }
  let obj: unknown;
  try {
    // an alias bomb (billion laughs in YAML) is this mapping's error, not the process's
    obj = doc.toJS({ maxAliasCount: 100 }) as unknown;
  } catch (err) {
    throw mappingError(file, [{ path: '(yaml)', message: `cannot be read: ${(err as Error).message} (YAML aliases are limited to 100 expansions)` }], err);
  }
  if (obj === null || typeof obj !== 'object' || Array.isArray(obj)) {
    throw mappingError(file, [{ path: '(file)', message: 'a mapping file holds one object (name, match, source, target, fields...)' }]);
  }
  return parseMapping(obj, file, { doc, counter });
}

const MAPPING_EXTS = new Set(['.yaml', '.yml', '.json']);

export async function loadMappingFile(path: string): Promise<CompiledMapping> {
  const ext = extname(path).toLowerCase();
  if (!MAPPING_EXTS.has(ext)) throw mappingError(path, [{ path: '(file)', message: 'a mapping file ends in .yaml, .yml or .json' }]);
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (err) {
    throw mappingError(path, [{ path: '(file)', message: `cannot read: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}` }], err);
  }
  if (text.charCodeAt(0) === 0xfeff) text = text.slice(1);
  return parseMappingText(text, path, ext === '.json');
}

/**
 * Loads every *.yaml, *.yml, *.json of a folder (not recursive, sorted by name). A file that fails is
 * reported in `errors` and the others still load; two mappings with the same name are an error.
 */
export async function loadMappingsDir(dir: string): Promise<{ mappings: CompiledMapping[]; errors: MappingError[] }> {
  let names: string[];
  try {
    names = (await readdir(dir, { withFileTypes: true }))
      .filter((d) => d.isFile() && MAPPING_EXTS.has(extname(d.name).toLowerCase()) && !d.name.startsWith('.'))
      .map((d) => d.name)
      .sort();
  } catch (err) {
    return {
      mappings: [],
      errors: [
        mappingError(
          dir,
          [{ path: '(folder)', message: `cannot read the mappings folder: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}` }],
          err,
        ),
      ],
    };
  }
  const mappings: CompiledMapping[] = [];
  const errors: MappingError[] = [];
  const byName = new Map<string, string>();
  for (const n of names) {
    const path = join(dir, n);
    try {
      const m = await loadMappingFile(path);
      const other = byName.get(m.name);
      if (other !== undefined) {
        errors.push(mappingError(path, [{ path: 'name', message: `mapping name '${m.name}' is already used by ${displayPath(other)}` }]));
        continue;
      }
      byName.set(m.name, path);
      mappings.push(m);
    } catch (err) {
      // whatever went wrong is this file's error: the other mappings still load
      errors.push(
        err instanceof MappingError
          ? err
          : mappingError(path, [{ path: '(file)', message: `cannot be loaded: ${(err as Error)?.message ?? String(err)}` }], err),
      );
    }
  }
  return { mappings, errors };
}
