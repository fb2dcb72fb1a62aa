/**
 * The studio's re-preview (issue 44): after an edit of the mapping, the time until the page has the records and
 * rejects of a 10,000-row sample (the HTTP request of the page: parse the YAML, compile, map the whole sample,
 * lookups resolved against the embedded sandbox). Target: 300 ms.
 */
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { request } from 'node:http';
import { join } from 'node:path';
import { tmpdir } from 'node:os';
import iconv from 'iconv-lite';
import { PROJECT_ROOT, type BenchResult } from './lib.js';
import { openStudio } from '../src/app/studio.js';

function post(port: number, token: string, path: string, body: unknown): Promise<string> {
  return new Promise((resolve, reject) => {
    const req = request(
      { host: '127.0.0.1', port, path, method: 'POST', headers: { host: `127.0.0.1:${port}`, 'x-studio-token': token, 'content-type': 'application/json' } },
      (res) => {
        let out = '';
        res.setEncoding('utf8');
        res.on('data', (d: string) => (out += d));
        res.on('end', () => (res.statusCode === 200 ? resolve(out) : reject(new Error(`${res.statusCode}: ${out.slice(0, 300)}`))));
      },
    );
    req.on('error', reject);
    req.end(JSON.stringify(body));
  });
}

/** A 10,000-row SB1 products export (Windows-1252, ';'), built from the 20 rows of the infer fixture. */
async function bigSample(dir: string, rows: number): Promise<string> {
  const src = iconv.decode(await readFile(join(PROJECT_ROOT, 'test', 'fixtures', 'infer', 'SB1_PRODUTOS_20241105.csv')), 'windows-1252');
  const [header, ...lines] = src.split(/\r?\n/).filter((l) => l.trim() !== '');
  const out = [header!];
  for (let i = 0; i < rows; i++) {
    const cells = lines[i % lines.length]!.split(';');
    cells[1] = String(100000 + i).padEnd(15);
    cells[11] = '2';
    out.push(cells.join(';'));
  }
  await mkdir(join(dir, 'inbox', 'cadastros'), { recursive: true });
  const file = join(dir, 'inbox', 'cadastros', 'SB1_PRODUTOS_20241105.csv');
  await writeFile(file, iconv.encode(`${out.join('\r\n')}\r\n`, 'windows-1252'));
  return file;
}

const pct = (xs: number[], p: number) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor((xs.length - 1) * p))]!;

export async function benchStudio(o: { rows?: number; edits?: number } = {}): Promise<BenchResult> {
  const rows = o.rows ?? 10_000;
  const edits = o.edits ?? 20;
  const dir = await mkdtemp(join(tmpdir(), 'wmsbridge-bench-studio-'));
  try {
    await bigSample(dir, rows);
    await mkdir(join(dir, 'mappings'));
    const studio = await openStudio({ path: join(dir, 'inbox'), mappingsDir: join(dir, 'mappings') });
    try {
      const file = 'cadastros/SB1_PRODUTOS_20241105.csv';
      const draftRes = await new Promise<string>((resolve, reject) => {
        const req = request(
          {
            host: '127.0.0.1',
            port: studio.port,
            path: `/api/draft?file=${encodeURIComponent(file)}`,
            headers: { host: `127.0.0.1:${studio.port}`, 'x-studio-token': studio.token },
          },
          (res) => {
            let out = '';
            res.on('data', (d: Buffer) => (out += d.toString()));
            res.on('end', () => resolve(out));
          },
        );
        req.on('error', reject);
        req.end();
      });
      const draft = (JSON.parse(draftRes) as { text: string }).text.replace('{ const: TODO }', '{ const: GERAL }');
      // the first preview loads the sandbox's reference data once; then each edit is one re-preview
      const first = JSON.parse(await post(studio.port, studio.token, '/api/preview', { file, text: draft })) as { stats: { rows: number; records: number } };
      const times: number[] = [];
      for (let i = 0; i < edits; i++) {
        const text =
          draft.replace('name: { col: B1_DESC, transforms: [trim] }', `name: { col: B1_DESC, transforms: [trim${i % 2 ? ', upper' : ''}] }`) +
          `\n# edit ${i}\n`;
        const t0 = performance.now();
        await post(studio.port, studio.token, '/api/preview', { file, text });
        times.push(performance.now() - t0);
      }
      const r = (x: number) => Math.round(x);
      return {
        name: 'studio',
        figures: {
          rows: first.stats.rows,
          records: first.stats.records,
          edits,
          repreview_p50_ms: r(pct(times, 0.5)),
          repreview_p95_ms: r(pct(times, 0.95)),
          repreview_max_ms: r(Math.max(...times)),
        },
        notes: `the page's request after an edit: YAML parsed, compiled, ${rows} rows mapped, lookups against the embedded sandbox (loaded once)`,
      };
    } finally {
      await studio.close();
    }
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  benchStudio().then((r) => console.log(JSON.stringify(r, null, 2)));
}
