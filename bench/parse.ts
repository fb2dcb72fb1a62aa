/**
 * Parser benchmark: csv-parse's own raw speed vs openParser on the same file, in the same run.
 *
 * A CSV of N rows x 12 columns (';', windows-1252, with accents and a quoted column) is generated in
 * a temp folder. Each measured phase runs in a CHILD process (this file, with a phase marker) so its
 * peak RSS (process.resourceUsage().maxRSS) is its own and phases do not pollute each other:
 * - decode-only: stream + iconv-lite decode, no parsing (the floor)
 * - csv-parse-arrays: stream + iconv decode + csv-parse streaming, records as arrays
 * - csv-parse-columns: the same with `columns: true` (objects keyed by header)
 * - openParser: wmsbridge's delimited parser (line numbers, raw text, cells + fields per row)
 *
 * Usage: `benchParse({ rows: 200_000 })`, or `node dist/bench/parse.js [rows]`.
 */
import { runJsonChild, type BenchResult } from './lib.js';
import { createReadStream, createWriteStream } from 'node:fs';
import { mkdtemp, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { once } from 'node:events';
import iconv from 'iconv-lite';
import { parse as csvParse } from 'csv-parse';
import { openParser } from '../src/parse/index.js';
import { parseMappingText, createStaticReferenceCache } from '../src/map/index.js';

/** a realistic product mapping: trims, EAN check digit, decimal numbers, refs and a map-time lookup */
const PRODUCT_MAPPING = `name: bench-produtos
match: { files: '*.csv' }
source: { format: delimited, delimiter: ';', encoding: windows-1252 }
target: Product
fields:
  code: { col: codigo, transforms: [trim] }
  codeERP: { col: codigo }
  name: { col: descricao, transforms: [trim] }
  barCode: { col: ean, transforms: [trim] }
  ncm: { col: ncm, transforms: [digitsOnly] }
  weight: { col: peso, transforms: [{ number: { decimal: '.', thousands: '' } }] }
  unitmeasurement: { col: unidade, transforms: [trim, upper] }
  brand: { col: fornecedor }
  categoryID: { ref: Category, from: { const: MERC } }
  familyID: { ref: Family, from: { const: GRAOS } }
  logisticsProfileID: { lookup: LogisticsProfile, by: mnemonic, from: { const: PADRAO } }
`;

const PHASE_FLAG = '--wmsbridge-bench-parse-phase';
const PHASES = ['decode-only', 'csv-parse-arrays', 'csv-parse-columns', 'openParser', 'parse+map'] as const;
type Phase = (typeof PHASES)[number];

interface PhaseResult {
  phase: Phase;
  rows: number;
  ms: number;
  maxRssMB: number;
}

const WORDS = ['Maçã', 'Feijão', 'Açúcar', 'Pão de queijo', 'Café “especial”', 'Óleo – soja', 'Limão…', 'Pêssego', 'Arroz', 'Melão'];

/** Writes the CSV (header + rows) in windows-1252 with backpressure; returns its size in bytes. */
async function generateCsv(path: string, rows: number): Promise<number> {
  const out = createWriteStream(path);
  const header = 'codigo;descricao;ean;ncm;unidade;preco;peso;estoque;fornecedor;cidade;obs;ativo\r\n';
  out.write(iconv.encode(header, 'win1252'));
  let batch = '';
  for (let i = 0; i < rows; i++) {
    const w = WORDS[i % WORDS.length]!;
    const quoted = i % 7 === 0 ? `"${w}; lote ${i}"` : w;
    batch +=
      `${String(i).padStart(8, '0')};${quoted};789${String(i).padStart(10, '0')};0${(i % 9) + 1}031019;UN;` +
      `${(i % 1000) / 10};${(i % 50) / 4};${i % 500};Fornecedor ${i % 97};São Paulo;${i % 3 === 0 ? 'observação' : ''};1\r\n`;
    if (batch.length > 256 * 1024) {
      if (!out.write(iconv.encode(batch, 'win1252'))) await once(out, 'drain');
      batch = '';
    }
  }
  if (batch) out.write(iconv.encode(batch, 'win1252'));
  out.end();
  await once(out, 'finish');
  return (await stat(path)).size;
}

async function runPhase(phase: Phase, file: string): Promise<number> {
  if (phase === 'parse+map') {
    const mapping = parseMappingText(PRODUCT_MAPPING, 'bench-produtos.yaml');
    const refs = createStaticReferenceCache({ LogisticsProfile: [{ id: '11111111-1111-4111-8111-111111111111', mnemonic: 'PADRAO' }] });
    let rows = 0;
    for await (const out of mapping.mapItems(openParser(file, mapping.source), { file: 'bench.csv', refs, now: new Date() })) {
      if (out.ok) rows++;
      else throw new Error(`unexpected reject at line ${out.reject.source.line}: ${out.reject.issues[0]?.message}`);
    }
    return rows;
  }
  if (phase === 'openParser') {
    let rows = 0;
    for await (const item of openParser(file, { format: 'delimited', delimiter: ';', encoding: 'windows-1252' })) {
      if (item.kind === 'row') rows++;
      else throw new Error(`unexpected error item at line ${item.line}: ${item.issue.message}`);
    }
    return rows;
  }
  const decoded = createReadStream(file, { highWaterMark: 64 * 1024 }).pipe(iconv.decodeStream('win1252'));
  if (phase === 'decode-only') {
    let lines = 0;
    for await (const chunk of decoded as AsyncIterable<string>) {
      for (let i = chunk.indexOf('\n'); i !== -1; i = chunk.indexOf('\n', i + 1)) lines++;
    }
    return lines - 1;
  }
  const parser = decoded.pipe(csvParse({ delimiter: ';', columns: phase === 'csv-parse-columns', bom: true }));
  let rows = 0;
  for await (const _ of parser) rows++;
  return phase === 'csv-parse-arrays' ? rows - 1 : rows;
}

/** Child process entry: runs one phase and prints its figures as JSON. */
async function childMain(phase: Phase, file: string): Promise<void> {
  const t0 = performance.now();
  const rows = await runPhase(phase, file);
  const ms = performance.now() - t0;
  const maxRssMB = process.resourceUsage().maxRSS / 1024; // maxRSS is in KiB
  const res: PhaseResult = { phase, rows, ms, maxRssMB };
  process.stdout.write(JSON.stringify(res) + '\n');
}

function spawnPhase(phase: Phase, file: string): Promise<PhaseResult> {
  // keep the loader flags (e.g. --import tsx when run from .ts)
  return runJsonChild<PhaseResult>(process.execPath, [...process.execArgv, fileURLToPath(import.meta.url), PHASE_FLAG, phase, file]);
}

export async function benchParse(opts: { rows: number; memoryFileMB?: number }): Promise<BenchResult> {
  const dir = await mkdtemp(join(tmpdir(), 'wmsbridge-bench-parse-'));
  try {
    const file = join(dir, 'bench.csv');
    const bytes = await generateCsv(file, opts.rows);
    const results: Partial<Record<Phase, PhaseResult>> = {};
    for (const phase of PHASES) {
      const r = await spawnPhase(phase, file);
      if (r.rows !== opts.rows) throw new Error(`bench phase ${phase} read ${r.rows} rows, expected ${opts.rows}`);
      results[phase] = r;
    }
    const rate = (p: Phase) => Math.round(opts.rows / (results[p]!.ms / 1000));
    const figures: Record<string, number | string> = {
      rows: opts.rows,
      columns: 12,
      fileMB: Number((bytes / 1024 / 1024).toFixed(1)),
    };
    for (const p of PHASES) {
      figures[`${p} rows/s`] = rate(p);
      figures[`${p} peak RSS MB`] = Number(results[p]!.maxRssMB.toFixed(1));
    }
    figures['openParser / csv-parse-arrays'] = Number((rate('openParser') / rate('csv-parse-arrays')).toFixed(2));
    figures['openParser / csv-parse-columns'] = Number((rate('openParser') / rate('csv-parse-columns')).toFixed(2));
    figures['parse+map / csv-parse-arrays'] = Number((rate('parse+map') / rate('csv-parse-arrays')).toFixed(2));
    figures['target parse+map ratio'] = 0.5;
    if (opts.memoryFileMB) {
      // memory must stay flat with file size: parse+map on a ~100 MB and a 10x larger file
      for (const mb of [opts.memoryFileMB, opts.memoryFileMB * 10]) {
        const big = join(dir, `mem-${mb}.csv`);
        const rowsFor = Math.round((mb * 1024 * 1024) / (bytes / opts.rows));
        const size = await generateCsv(big, rowsFor);
        const r = await spawnPhase('parse+map', big);
        figures[`parse+map ${Math.round(size / 1024 / 1024)} MB file peak RSS MB`] = Number(r.maxRssMB.toFixed(1));
        figures[`parse+map ${Math.round(size / 1024 / 1024)} MB file rows/s`] = Math.round(r.rows / (r.ms / 1000));
        await rm(big, { force: true });
      }
      const peaks = Object.entries(figures)
        .filter(([k]) => k.endsWith('file peak RSS MB'))
        .map(([, v]) => Number(v));
      if (peaks.length === 2) figures['peak RSS ratio (10x file / 1x file), target <= 1.2'] = Number((peaks[1]! / peaks[0]!).toFixed(2));
    }
    return {
      name: 'parse',
      figures,
      notes:
        'Each phase runs in its own child process (peak RSS is per phase). openParser does more per row than ' +
        'csv-parse: physical line numbers, raw text and cells for rejects, fields keyed by header, per-line ' +
        'recovery. parse+map adds a 11-field Product mapping (trims, number and digit transforms, two send-time refs, one ' +
        'map-time lookup) and the validation of every record against the interface schema. Memory: parse+map on a ' +
        'generated file and on one 10 times larger, each in its own process.',
    };
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

const isMain = process.argv[1] !== undefined && fileURLToPath(import.meta.url) === process.argv[1];
if (isMain) {
  if (process.argv[2] === PHASE_FLAG) {
    await childMain(process.argv[3] as Phase, process.argv[4]!);
  } else {
    const rows = Number(process.argv[2] ?? 200_000);
    const res = await benchParse({ rows });
    process.stdout.write(JSON.stringify(res, null, 2) + '\n');
  }
}
