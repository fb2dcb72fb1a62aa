/**
 * How well `wmsbridge infer` does on the corpus of test/fixtures/infer-corpus (issue 40): for every
 * file of its manifest (development and held-out parts), the mapping infer proposes is compared with
 * the written answer (answers.json):
 * - fields: per answer field, right when the proposal reads the same source columns (a fixed-width
 *   field by its start), through the same ref/lookup resource, with the answer's decimal separator,
 *   implied scale and date format when the answer names them; the score is right / answer fields
 *   (a field the answer does not list is not counted);
 * - dialect: format, encoding (the same decoded text), delimiter and header line (delimited),
 *   decimal separator and date format (when the answer has them);
 * - target: the proposed target is the answer's.
 * A file infer refuses scores 0 on all of them. Usage: `npm run infer:score` (builds first), or
 * `node dist/bench/infer-score.js [--verbose] [--hide-names] [--json FILE]`; `--hide-names` replaces the
 * header names of the delimited files by X01, X02...: what infer finds from the values alone.
 * Needs nothing else of the bench.
 */
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import iconv from 'iconv-lite';
import { sniffFile } from '../src/infer/sniff.js';
import { propose, sourceOptions } from '../src/infer/propose.js';
import { toMappingObject, toYaml } from '../src/infer/write.js';
import { parseMappingText } from '../src/map/load.js';
import { expressionFeatures, type Features } from '../test/fixtures/infer/score.js';

const ROOT = join(import.meta.dirname, '..', '..');
const CORPUS = join(ROOT, 'test', 'fixtures', 'infer-corpus');

interface AnswerField {
  col: string | string[];
  ref?: string;
  decimal?: string;
  scale?: number;
  dateFormat?: string;
}
interface Answer {
  file: string;
  erp: string;
  target: string;
  dialect: { format: string; encoding?: string; delimiter?: string; header?: boolean; decimal?: string; dateFormat?: string };
  fields: Record<string, AnswerField>;
}
interface FileScore {
  file: string;
  part: 'development' | 'held-out';
  erp: string;
  target: { expected: string; inferred?: string };
  fields: { right: number; total: number; wrong: string[] };
  dialect: { right: number; total: number; wrong: string[] };
  valid: boolean;
  error?: string;
}

type Obj = Record<string, unknown>;

/** field name -> '@start' of a fixed-width layout (detail records first) */
function fixedStarts(source: Obj): Map<string, string> {
  const out = new Map<string, string>();
  const recs = (source['records'] as Obj[] | undefined) ?? [];
  const ordered = [...recs.filter((r) => r['type'] === 'detail'), ...recs.filter((r) => r['type'] !== 'detail')];
  for (const r of ordered) for (const f of (r['fields'] as Obj[]) ?? []) if (!out.has(String(f['name']))) out.set(String(f['name']), `@${String(f['start'])}`);
  return out;
}

function features(expr: unknown, starts: Map<string, string>): Features {
  return expressionFeatures(expr, (name) => starts.get(name) ?? name);
}

function fieldsOf(m: Obj): Map<string, unknown> {
  const out = new Map<string, unknown>(Object.entries((m['fields'] as Obj | undefined) ?? {}));
  const g = m['group'] as Obj | undefined;
  if (g) {
    for (const [k, v] of Object.entries((g['itemFields'] as Obj | undefined) ?? {})) out.set(`items.${k}`, v);
    if (g['by'] !== undefined) out.set('group.by', g['by']);
  }
  return out;
}

function fieldVerdict(name: string, a: AnswerField, inferred: unknown, starts: Map<string, string>): string | undefined {
  if (inferred === undefined) return `${name}: missing`;
  const f = features(inferred, starts);
  const want = (Array.isArray(a.col) ? a.col : [a.col]).slice().sort().join('|');
  const got = [...f.sources].sort().join('|');
  const why: string[] = [];
  if (want !== got) why.push(`reads [${got || 'const'}], answer [${want}]`);
  if (a.ref && !f.resources.has(a.ref)) why.push(`no ref ${a.ref}`);
  if (a.decimal && f.decimal !== a.decimal) why.push(`decimal '${f.decimal ?? '-'}'`);
  if (a.scale !== undefined && f.scale !== a.scale) why.push(`scale ${f.scale ?? '-'}`);
  if (a.dateFormat && f.dateFormat !== a.dateFormat) why.push(`date ${f.dateFormat ?? '-'}`);
  return why.length ? `${name}: ${why.join(', ')}` : undefined;
}

async function decoded(path: string, encoding: string | undefined): Promise<string> {
  const text = iconv.decode(await readFile(path), encoding ?? 'utf-8');
  return text.charCodeAt(0) === 0xfeff ? text.slice(1) : text;
}

async function dialectChecks(path: string, ans: Answer, m: Obj | undefined): Promise<{ right: number; total: number; wrong: string[] }> {
  const d = ans.dialect;
  const checks: Array<[string, boolean]> = [];
  const s = (m?.['source'] as Obj | undefined) ?? {};
  checks.push(['format', s['format'] === d.format]);
  if (d.format !== 'xml')
    checks.push(['encoding', m !== undefined && (await decoded(path, d.encoding)) === (await decoded(path, s['encoding'] as string | undefined))]);
  if (d.delimiter !== undefined) checks.push(['delimiter', s['delimiter'] === d.delimiter]);
  if (d.header !== undefined) checks.push(['header', (s['header'] !== false) === d.header]);
  const all = m ? [...fieldsOf(m).values()].map((v) => features(v, new Map())) : [];
  if (d.decimal !== undefined) {
    const decs = new Set(all.map((f) => f.decimal).filter((x) => x !== undefined));
    checks.push(['decimal', decs.size === 1 && decs.has(d.decimal)]);
  }
  if (d.dateFormat !== undefined) checks.push(['date format', all.some((f) => f.dateFormat === d.dateFormat)]);
  return { right: checks.filter((c) => c[1]).length, total: checks.length, wrong: checks.filter((c) => !c[1]).map((c) => c[0]) };
}

/**
 * The same file with its header names replaced by meaningless ones (X01, X02...) and the answer
 * re-keyed: what infer finds from the values alone. Delimited files with a header line only.
 */
async function hideNames(ans: Answer, dir: string): Promise<{ ans: Answer; path: string } | undefined> {
  const d = ans.dialect;
  if (d.format !== 'delimited' || !d.header || !d.delimiter) return undefined;
  const src = join(CORPUS, ans.file);
  const text = await decoded(src, d.encoding);
  const nl = text.indexOf('\n');
  const names = text
    .slice(0, nl)
    .split(d.delimiter)
    .map((n) => n.replace(/^"|"$/g, ''));
  const hidden = names.map((_, i) => `X${String(i + 1).padStart(2, '0')}`);
  const path = join(dir, basename(src).replace(/(\.[a-z]+)$/i, '_hidden$1'));
  await writeFile(path, iconv.encode(`${hidden.join(d.delimiter)}${text.slice(nl)}`, d.encoding ?? 'utf-8'));
  const rename = (c: string) => hidden[names.indexOf(c)] ?? c;
  const fields = Object.fromEntries(Object.entries(ans.fields).map(([k, v]) => [k, { ...v, col: Array.isArray(v.col) ? v.col.map(rename) : rename(v.col) }]));
  return { ans: { ...ans, fields }, path };
}

async function scoreFile(ans: Answer, part: FileScore['part'], at?: string): Promise<FileScore> {
  const path = at ?? join(CORPUS, ans.file);
  const total = Object.keys(ans.fields).length;
  const base = { file: ans.file, part, erp: ans.erp };
  let m: Obj | undefined;
  let error: string | undefined;
  let valid = false;
  let sourceOnly: Obj | undefined;
  try {
    const sniffed = await sniffFile(path);
    sourceOnly = { source: sourceOptions(sniffed) };
    const p = await propose(path, sniffed);
    m = toMappingObject(p) as Obj;
    try {
      parseMappingText(toYaml(p, { sampleName: basename(path), schemaPath: 'mapping.schema.json', now: new Date() }), `${basename(path)}.yaml`);
      valid = true;
    } catch {
      valid = false;
    }
  } catch (err) {
    error = (err as Error).message.split('\n')[0];
  }
  // a refused proposal: the dialect is still what the sniffer found (decimal and date formats are wrong)
  const dialect = await dialectChecks(path, ans, m ?? sourceOnly);
  if (!m)
    return {
      ...base,
      target: { expected: ans.target },
      fields: { right: 0, total, wrong: [`refused: ${error}`] },
      dialect,
      valid,
      ...(error ? { error } : {}),
    };
  const starts = fixedStarts(m['source'] as Obj);
  const got = fieldsOf(m);
  const wrong: string[] = [];
  for (const [name, a] of Object.entries(ans.fields)) {
    const w = fieldVerdict(name, a, got.get(name), starts);
    if (w) wrong.push(w);
  }
  return { ...base, target: { expected: ans.target, inferred: String(m['target']) }, fields: { right: total - wrong.length, total, wrong }, dialect, valid };
}

function summary(label: string, list: FileScore[]): string {
  const sum = (f: (s: FileScore) => number) => list.reduce((a, s) => a + f(s), 0);
  const fr = sum((s) => s.fields.right);
  const ft = sum((s) => s.fields.total);
  const dr = sum((s) => s.dialect.right);
  const dt = sum((s) => s.dialect.total);
  const tr = list.filter((s) => s.target.inferred === s.target.expected).length;
  const v = list.filter((s) => s.valid).length;
  return `${label.padEnd(12)} files ${String(list.length).padStart(2)}  fields ${fr}/${ft} = ${(fr / ft).toFixed(3)}  dialect ${dr}/${dt} = ${(dr / dt).toFixed(3)}  target ${tr}/${list.length}  valid mappings ${v}/${list.length}`;
}

export async function inferScore(opts: { verbose?: boolean; hideNames?: boolean } = {}): Promise<{ files: FileScore[]; lines: string[] }> {
  const answers = JSON.parse(await readFile(join(CORPUS, 'answers.json'), 'utf8')) as Answer[];
  const manifest = JSON.parse(await readFile(join(CORPUS, 'manifest.json'), 'utf8')) as { development: string[]; heldOut: string[] };
  const files: FileScore[] = [];
  const tmp = opts.hideNames ? await mkdtemp(join(tmpdir(), 'infer-score-')) : undefined;
  for (const [part, list] of [
    ['development', manifest.development],
    ['held-out', manifest.heldOut],
  ] as const) {
    for (const f of list) {
      const ans = answers.find((a) => a.file === f);
      if (!ans) throw new Error(`manifest names ${f}, answers.json has no answer for it`);
      if (!opts.hideNames) files.push(await scoreFile(ans, part));
      else {
        const h = await hideNames(ans, tmp!);
        if (h) files.push(await scoreFile(h.ans, part, h.path));
      }
    }
  }
  if (tmp) await rm(tmp, { recursive: true, force: true });
  const lines: string[] = [];
  if (opts.hideNames) lines.push('column names hidden (X01, X02...): delimited files with a header line only');
  for (const s of files) {
    const t = s.target.inferred === s.target.expected ? s.target.expected : `${s.target.inferred ?? 'none'} (answer ${s.target.expected})`;
    lines.push(
      `${s.part === 'held-out' ? 'H' : 'D'} ${s.file.replace(/^files\//, '').padEnd(60)} ${t.padEnd(16)} fields ${s.fields.right}/${s.fields.total}  dialect ${s.dialect.right}/${s.dialect.total}${s.valid ? '' : '  INVALID'}${s.dialect.wrong.length ? `  (dialect wrong: ${s.dialect.wrong.join(', ')})` : ''}`,
    );
    if (opts.verbose) for (const w of s.fields.wrong) lines.push(`      - ${w}`);
  }
  lines.push('');
  lines.push(
    summary(
      'development',
      files.filter((s) => s.part === 'development'),
    ),
  );
  lines.push(
    summary(
      'held-out',
      files.filter((s) => s.part === 'held-out'),
    ),
  );
  return { files, lines };
}

if (process.argv[1] && import.meta.filename === process.argv[1]) {
  const args = process.argv.slice(2);
  const r = await inferScore({ verbose: args.includes('--verbose') || args.includes('-v'), hideNames: args.includes('--hide-names') });
  process.stdout.write(`${r.lines.join('\n')}\n`);
  const j = args.indexOf('--json');
  if (j >= 0 && args[j + 1]) await writeFile(args[j + 1]!, JSON.stringify(r.files, null, 2));
}
