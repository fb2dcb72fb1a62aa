/**
 * `npm run bench`: every benchmark, one after the other (the machine has 2 cores; running them together
 * would measure contention), bounded in time. Writes docs/perf/results.json and docs/PERFORMANCE.md.
 *
 *   npm run bench                     everything
 *   npm run bench -- --only parse,e2e some of them
 *   npm run bench -- --quick          smaller sizes (a smoke run; figures not for publishing)
 */
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { cpus, totalmem } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { PROJECT_ROOT, type BenchResult } from './lib.js';
import { VERSION } from '../src/shared/version.js';

interface BenchDef {
  name: string;
  what: string;
  run: (quick: boolean) => Promise<BenchResult>;
}

const BENCHES: BenchDef[] = [
  {
    name: 'client',
    what: 'WMS client requests/s at concurrency 32, 0 and 20 ms latency (issue 2)',
    run: async (q) => (await import('./client.js')).benchClient({ seconds: q ? 2 : 5 }),
  },
  {
    name: 'parse',
    what: 'parse + map rows/s vs csv-parse raw on the same file, peak memory (issue 4)',
    run: async (q) => (await import('./parse.js')).benchParse(q ? { rows: 100_000 } : { rows: 1_000_000, memoryFileMB: 100 }),
  },
  {
    name: 'shapes',
    what: 'multi-record, xlsx and nested JSON: parse + map vs the raw reading library on the same file (issue 39)',
    run: async (q) => (await import('./shapes.js')).benchShapes({ orders: q ? 2000 : 20_000 }),
  },
  {
    name: 'e2e',
    what: "end-to-end records/s vs the Little's-law bound and a naive script (issue 5)",
    run: async (q) => (await import('./e2e.js')).benchEndToEnd(q ? { sizes: [1000], naiveRows: 100, memorySizes: [] } : { sizes: [2000, 20000] }),
  },
  {
    name: 'stream',
    what: 'first request after the claim of a 1 GB file, flat memory while it streams (issue 19)',
    run: async (q) => (await import('./stream.js')).benchStream(q ? { bigMb: 100, wholeFileMb: 10, windowS: 5, rows: 2000 } : {}),
  },
  {
    name: 'cluster',
    what: 'records/s with 1, 2 and 3 instances sharing a PostgreSQL journal (issue 10), and 1 vs 3 on one big file (issue 19)',
    run: async (q) => (await import('./cluster.js')).benchCluster(q ? { records: 1500, bigFileRecords: 3000, slowRecords: 600 } : {}),
  },
  {
    name: 'pull',
    what: 'stock export records/s and peak memory, 100k vs 1M records (issue 6)',
    run: async (q) => (await import('./pull.js')).benchPull(q ? { sizes: [20_000, 100_000], repeats: 1 } : {}),
  },
  {
    name: 'webhook',
    what: 'webhooks/s and p99 answer latency at the receiver (issue 7)',
    run: async (q) => (await import('./webhook.js')).benchWebhooks(q ? { events: 4000, durableEvents: 1000 } : {}),
  },
  {
    name: 'studio',
    what: 'the studio re-previewing a 10,000-row sample after an edit of its mapping (issue 44)',
    run: async (q) => (await import('./studio.js')).benchStudio(q ? { rows: 10_000, edits: 5 } : {}),
  },
];

/**
 * the targets the issues set, checked against the figures of the latest run of each suite; `floor`: the same figure for
 * the mapped durable pusher of the same run (bench/e2e.ts: a pusher that parses and maps with wmsbridge's own code and
 * journals durably, nothing else), where the target sits near what such a pusher reaches on the machine
 */
const TARGETS: Array<{ bench: string; figure: string; op: '>=' | '<='; target: number; what: string; floor?: string }> = [
  { bench: 'client', figure: 'ratio_to_bound_20ms', op: '>=', target: 0.95, what: 'client req/s at 20 ms, concurrency 32, / Little bound' },
  { bench: 'parse', figure: 'parse+map / csv-parse-arrays', op: '>=', target: 0.5, what: 'parse+map rows/s / csv-parse raw rows/s (1M rows)' },
  { bench: 'parse', figure: 'peak RSS ratio (10x file / 1x file), target <= 1.2', op: '<=', target: 1.2, what: 'parse+map peak RSS, 1 GB file / 100 MB file' },
  { bench: 'e2e', figure: 'ratio_to_bound_20000', op: '>=', target: 0.9, what: 'end-to-end records/s at 20 ms, concurrency 32, / Little bound' },
  {
    bench: 'e2e',
    figure: 'whole_run_ratio_to_pusher_20000',
    op: '>=',
    target: 0.9,
    what: 'whole run at 20 ms, concurrency 32, / a trivial concurrent pusher (issue 19)',
  },
  {
    bench: 'e2e',
    figure: 'c128_whole_run_ratio_to_bound_20000',
    op: '>=',
    target: 0.85,
    floor: 'c128_mapped_durable_pusher_ratio_to_bound_20000',
    what: 'whole run at 20 ms, concurrency 128, / Little bound (issue 19)',
  },
  {
    bench: 'e2e',
    figure: 'cpu_bound_whole_run_ratio_to_pusher_20000',
    op: '>=',
    target: 0.6,
    floor: 'cpu_bound_mapped_durable_pusher_ratio_to_pusher_20000',
    what: 'whole run with no added latency / the trivial pusher (issue 19)',
  },
  {
    bench: 'stream',
    figure: 'streamed_first_settle_after_claim_s',
    op: '<=',
    target: 1,
    what: 'first request settled after the claim of a 1 GB file, s (issue 19)',
  },
  {
    bench: 'stream',
    figure: 'streamed_peak_rss_ratio_second_to_first_half',
    op: '<=',
    target: 1.1,
    what: 'peak RSS while a 1 GB file streams, second half of a 20 s window / first half (issue 19)',
  },
  { bench: 'e2e', figure: 'peak_rss_ratio_200000_vs_20000', op: '<=', target: 1.2, what: 'end-to-end peak RSS, 200k records / 20k records' },
  {
    bench: 'cluster',
    figure: 'bigfile_speedup_3',
    op: '>=',
    target: 2.5,
    what: '3 instances / 1 on ONE 20,000-record file, 20 ms, concurrency 8 each, PostgreSQL journal (issue 19)',
  },
  { bench: 'pull', figure: 'peak_rss_ratio', op: '<=', target: 1.2, what: 'stock export peak RSS, 1M records / 100k records' },
  { bench: 'webhook', figure: 'durable webhooks/s', op: '>=', target: 5000, what: 'webhooks stored durably per second, 32 senders on loopback (issue 19)' },
  { bench: 'studio', figure: 'repreview_p50_ms', op: '<=', target: 300, what: 'studio: re-preview of a 10,000-row sample after an edit, median ms (issue 44)' },
  { bench: 'webhook', figure: 'durable p99 ms', op: '<=', target: 20, what: 'webhook answer p99 (ms), stored durably, 32 senders (issue 19)' },
];

function targetsTable(results: ReadonlyArray<BenchResult>): string {
  const rows = TARGETS.map((t) => {
    const v = results.find((r) => r.name === t.bench)?.figures[t.figure];
    const met = typeof v === 'number' ? (t.op === '>=' ? v >= t.target : v <= t.target) : undefined;
    const floor = t.floor ? results.find((r) => r.name === t.bench)?.figures[t.floor] : undefined;
    return `| ${t.what} | ${typeof v === 'number' ? v : 'not measured'} | ${t.op} ${t.target} | ${met === undefined ? '?' : met ? 'met' : '**not met**'} | ${typeof floor === 'number' ? floor : ''} |`;
  });
  return [
    '| target | measured | wanted | | a durable pusher that maps, same run |',
    '|---|---|---|---|---|',
    ...rows,
    '',
    "The last column: the same figure for the e2e bench's mapped durable pusher (wmsbridge's parser and mapping, a durable " +
      'journal row marked before its request and settled after, nothing else: no hash, references, schema check, ' +
      'cross-reference, results or report): what the least a durable tool that maps reaches on this machine that day.',
  ].join('\n');
}

function table(r: BenchResult): string {
  const rows = Object.entries(r.figures).map(([k, v]) => `| ${k} | ${typeof v === 'number' ? v.toLocaleString('en-US') : v} |`);
  return ['| figure | value |', '|---|---|', ...rows].join('\n');
}

async function main(): Promise<void> {
  const { values } = parseArgs({ options: { only: { type: 'string' }, quick: { type: 'boolean' } } });
  const only = values.only ? new Set(values.only.split(',')) : null;
  const quick = values.quick === true;
  const results: Array<BenchResult & { durationS: number; error?: string }> = [];
  for (const b of BENCHES) {
    if (only && !only.has(b.name)) continue;
    process.stderr.write(`bench ${b.name}: ${b.what} ...\n`);
    const t0 = performance.now();
    try {
      const r = await b.run(quick);
      const durationS = Math.round((performance.now() - t0) / 100) / 10;
      // entries are keyed by the suite's own name (a bench may call itself differently)
      results.push({ ...r, name: b.name, durationS });
      process.stderr.write(`${table(r)}\n\n`);
    } catch (err) {
      const durationS = Math.round((performance.now() - t0) / 100) / 10;
      results.push({ name: b.name, figures: {}, durationS, error: String((err as Error).stack ?? err) });
      process.stderr.write(`bench ${b.name} failed: ${String(err)}\n`);
    }
  }
  const machine = {
    cpus: cpus().length,
    cpuModel: cpus()[0]?.model ?? '?',
    memoryGiB: Math.round(totalmem() / 2 ** 30),
    node: process.version,
    platform: process.platform,
  };
  const perfDir = join(PROJECT_ROOT, 'docs', 'perf');
  const stamp = quick ? 'results-quick.json' : 'results.json';
  // `--only` runs replace their own entries and keep the others' (each entry says when it was measured)
  const now = new Date().toISOString();
  type Entry = BenchResult & { durationS: number; error?: string; date?: string };
  let merged: Entry[] = results.map((r) => ({ ...r, date: now }));
  if (only) {
    try {
      const previous = JSON.parse(await readFile(join(perfDir, stamp), 'utf8')) as { results?: Entry[]; date?: string };
      const kept = (previous.results ?? []).filter((r) => !only.has(r.name)).map((r) => ({ ...r, date: r.date ?? previous.date }));
      merged = BENCHES.map((b) => merged.find((r) => r.name === b.name) ?? kept.find((r) => r.name === b.name)).filter((r): r is Entry => r !== undefined);
    } catch {
      // no earlier results: this run's only
    }
  }
  const doc = {
    date: now,
    version: VERSION,
    quick,
    machine,
    command: `npm run bench${values.only ? ` -- --only ${values.only}` : ''}${quick ? ' -- --quick' : ''}`,
    results: merged,
  };
  await mkdir(perfDir, { recursive: true });
  await writeFile(join(perfDir, stamp), `${JSON.stringify(doc, null, 2)}\n`);
  if (!quick) {
    const md = [
      '# Performance',
      '',
      `Measured by \`npm run bench\` (each section says when; the latest command was \`${doc.command}\`) on ${machine.cpus} cores (${machine.cpuModel}), ${machine.memoryGiB} GiB, Node ${machine.node}, wmsbridge ${VERSION}.`,
      'Every figure is a ratio or a rate measured in ONE run, with its baseline measured in the same run (the machine is',
      'noisy: compare ratios, not absolute rates, across machines). Raw results: [perf/results.json](perf/results.json).',
      '',
      '## Targets',
      '',
      targetsTable(merged),
      '',
      ...merged.flatMap((r) => [
        `## ${r.name}`,
        '',
        r.error ? `**failed:** \`${r.error.split('\n')[0]}\`` : table(r),
        '',
        r.notes ? `${r.notes}` : '',
        '',
        `(measured ${r.date?.slice(0, 16).replace('T', ' ') ?? '?'} UTC in ${r.durationS} s)`,
        '',
      ]),
    ].join('\n');
    await writeFile(join(PROJECT_ROOT, 'docs', 'PERFORMANCE.md'), md);
  }
  process.stderr.write(`written: docs/perf/${stamp}${quick ? '' : ' and docs/PERFORMANCE.md'}\n`);
  if (results.some((r) => r.error)) process.exitCode = 1;
}

void main();
