/**
 * Pull benchmark: export 100,000 and 1,000,000 stock records to CSV from a sandbox seeded with that many
 * synthetic records, at the largest page size the sandbox allows (500).
 *
 * The sandbox runs as its own child process (`wmsbridge sandbox --port 0 --stock-records N`, read its
 * JSON line), and each export runs in ANOTHER child process (this file with `--child`), which reports
 * process.resourceUsage().maxRSS: the peak memory of the exporting process alone. Streaming means the
 * peak must not grow with the number of records: the ratio of the two peaks is the figure to watch
 * (target <= 1.2). Client, sandbox and writer share the machine's cores, so records/s is a floor.
 *
 * Run alone: `npm run build && node dist/bench/pull.js` (or `node --import tsx bench/pull.ts`).
 */
import { startSandboxChild, stopChild, type BenchResult, type SandboxChild } from './lib.js';
import { spawn } from 'node:child_process';
import { mkdtemp, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { runPullCommand } from '../src/cli/pull.js';
import { silentLogger } from '../src/shared/logger.js';

export interface BenchPullOptions {
  /** record counts to export, each from its own sandbox. @default [100000, 1000000] */
  sizes?: number[];
  /** page size asked of the WMS (the sandbox's maximum). @default 500 */
  pageSize?: number;
  /** exports per size; the median peak is reported. @default 3 */
  repeats?: number;
}

const here = fileURLToPath(import.meta.url);
const fromTs = here.endsWith('.ts');
const SECRET_ENV = 'WMSBRIDGE_BENCH_SECRET';

function nodeArgs(script: string): string[] {
  return fromTs ? ['--import', 'tsx', script] : [script];
}

const round = (n: number, digits = 1): number => Math.round(n * 10 ** digits) / 10 ** digits;

interface ChildReport {
  records: number;
  durationMs: number;
  maxRssKb: number;
  bytes: number;
}

/** Runs one export in a child process (this file with --child) and returns what it reports. */
async function exportInChild(sb: SandboxChild, pageSize: number, dir: string): Promise<ChildReport> {
  const child = spawn(process.execPath, [...nodeArgs(here), '--child', sb.url, sb.accessKeyID, String(pageSize), dir], {
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, [SECRET_ENV]: sb.secretKey, WMSBRIDGE_LOG_LEVEL: 'warn', WMSBRIDGE_LOG_PRETTY: '0' },
  });
  let stdout = '';
  let stderr = '';
  child.stdout?.on('data', (d: Buffer) => (stdout += d.toString()));
  child.stderr?.on('data', (d: Buffer) => (stderr = (stderr + d.toString()).slice(-4000)));
  const code = await new Promise<number | null>((resolve) => child.once('exit', (c) => resolve(c)));
  if (code !== 0) throw new Error(`export child exited ${String(code)}: ${stderr}`);
  return JSON.parse(stdout.trim().split('\n').pop() ?? '{}') as ChildReport;
}

/** The child side: one export through runPullCommand, then its own peak RSS on stdout. */
async function childMain(args: string[]): Promise<void> {
  const [url, accessKeyID, pageSize, dir] = args;
  const secretKey = process.env[SECRET_ENV];
  if (!url || !accessKeyID || !pageSize || !dir || !secretKey) throw new Error('usage: pull.js --child URL KEY PAGE_SIZE DIR (secret in env)');
  const r = await runPullCommand({
    what: 'stock',
    format: 'csv',
    pageSize: Number(pageSize),
    outDir: join(dir, 'exports'),
    stateDir: join(dir, 'state'),
    wms: { url, accessKeyID, secretKey },
    logger: silentLogger(),
  });
  const bytes = r.file ? (await stat(r.file)).size : 0;
  const report: ChildReport = { records: r.records, durationMs: r.durationMs, maxRssKb: process.resourceUsage().maxRSS, bytes };
  process.stdout.write(`${JSON.stringify(report)}\n`);
}

export async function benchPull(options: BenchPullOptions = {}): Promise<BenchResult> {
  const sizes = options.sizes ?? [100_000, 1_000_000];
  const pageSize = options.pageSize ?? 500;
  const repeats = options.repeats ?? 3;
  const figures: Record<string, number | string> = { pageSize, repeats };
  const peaks: number[] = [];
  const work = await mkdtemp(join(tmpdir(), 'wmsbridge-bench-pull-'));
  try {
    for (const n of sizes) {
      const sb = await startSandboxChild(['--stock-records', String(n)]);
      try {
        // each size is exported `repeats` times (each in its own process) and the median run is reported:
        // one process's peak RSS depends on when V8 happens to collect, the median does much less
        const runs: Awaited<ReturnType<typeof exportInChild>>[] = [];
        for (let i = 0; i < repeats; i++) {
          const dir = join(work, `${n}-${i}`);
          const one = await exportInChild(sb, pageSize, dir);
          // the sandbox's few seeded stock records come on top of the N synthetic ones
          if (one.records < n) throw new Error(`exported ${one.records} records, expected at least ${n}`);
          runs.push(one);
          await rm(dir, { recursive: true, force: true });
        }
        runs.sort((a, b) => a.maxRssKb - b.maxRssKb);
        const r = runs[Math.floor(runs.length / 2)]!;
        const dir = join(work, String(n));
        const label = n >= 1_000_000 && n % 1_000_000 === 0 ? `${n / 1_000_000}M` : n >= 1000 && n % 1000 === 0 ? `${n / 1000}k` : String(n);
        figures[`records_per_s_${label}`] = Math.round((r.records / r.durationMs) * 1000);
        figures[`records_${label}`] = r.records;
        figures[`duration_s_${label}`] = round(r.durationMs / 1000, 2);
        figures[`peak_rss_mb_${label}`] = round(r.maxRssKb / 1024);
        figures[`file_mb_${label}`] = round(r.bytes / 1024 / 1024);
        peaks.push(r.maxRssKb);
        await rm(dir, { recursive: true, force: true });
      } finally {
        await stopChild(sb.child);
      }
    }
  } finally {
    await rm(work, { recursive: true, force: true });
  }
  if (peaks.length >= 2) figures['peak_rss_ratio'] = round(peaks[peaks.length - 1]! / peaks[0]!, 2);
  return {
    name: 'pull',
    figures,
    notes:
      `stock export to CSV (UTF-8 BOM, ;) at PagingLimit ${pageSize}; sandbox and exporter in separate child processes; ` +
      'peak_rss is the exporting process alone (resourceUsage().maxRSS), the median of `repeats` exports per size; peak_rss_ratio = largest / smallest export, target <= 1.2',
  };
}

if (process.argv[1] && pathToFileURL(process.argv[1]).href === import.meta.url) {
  const args = process.argv.slice(2);
  if (args[0] === '--child') {
    childMain(args.slice(1)).then(
      () => (process.exitCode = 0),
      (err: unknown) => {
        process.stderr.write(`${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
        process.exitCode = 1;
      },
    );
  } else {
    benchPull().then(
      (r) => process.stdout.write(`${JSON.stringify(r, null, 2)}\n`),
      (err: unknown) => {
        process.stderr.write(`${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
        process.exitCode = 1;
      },
    );
  }
}
