/**
 * Streaming benchmark (issue 19): how soon the first request leaves after a big file is claimed, and whether
 * memory stays flat while it is read and sent.
 *
 * A categories CSV of about 1 GB (100 MB with --quick) goes through `runOnce` in a child process against the
 * sandbox child with 20 ms added latency at concurrency 32. The child times the claim (the file journaled after
 * its rename and sha256) and the first settled record (its request left at most one WMS latency before), keeps
 * sending for a fixed window, samples its RSS, then stops the run (the signal a SIGTERM gives) and times the
 * stop. The same is measured on a smaller file read whole before sending (streaming off), where the first
 * request waits for the whole file to be mapped; and a 20,000-record drop is run both ways, for the whole run's
 * cost or gain from streaming.
 */
import { createWriteStream } from 'node:fs';
import { mkdir, mkdtemp, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { once } from 'node:events';
import {
  benchModuleCommand,
  CATEGORY_MAPPING,
  isMainModule,
  loadPipeline,
  printResult,
  round,
  runJsonChild,
  setSandboxFaults,
  startSandboxChild,
  type BenchResult,
} from './lib.js';

const CONCURRENCY = 32;
const LATENCY_MS = 20;

/** a workspace whose inbox holds one categories file of about `bytes` bytes (or exactly `rows` rows) */
async function makeWorkspace(size: { bytes?: number; rows?: number }, sandbox: { url: string; accessKeyID: string }, streamFrom: number): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'wmsbridge-bench-stream-'));
  await mkdir(join(dir, 'inbox', 'cadastros'), { recursive: true });
  await mkdir(join(dir, 'mappings'), { recursive: true });
  await writeFile(join(dir, 'mappings', 'categorias.yaml'), CATEGORY_MAPPING);
  const out = createWriteStream(join(dir, 'inbox', 'cadastros', 'CATEGORIAS_bench.csv'));
  let written = 0;
  let chunk: string[] = ['codigo;descricao;obs\r\n'];
  for (let i = 0; size.rows !== undefined ? i < size.rows : written < size.bytes!; i++) {
    const line = `BENCH${String(i).padStart(9, '0')};Categoria de teste ${i};gerada pelo benchmark de streaming\r\n`;
    written += line.length;
    chunk.push(line);
    if (chunk.length >= 20_000) {
      if (!out.write(chunk.join(''))) await once(out, 'drain');
      chunk = [];
    }
  }
  out.end(chunk.join(''));
  await once(out, 'close');
  const config = {
    inboxDir: 'inbox',
    outboxDir: 'outbox',
    mappingsDir: 'mappings',
    stateDir: 'state',
    journal: { kind: 'sqlite' },
    channels: [{ name: 'cadastros', readiness: { mode: 'stable', checks: 1, intervalMs: 10 } }],
    wms: { url: sandbox.url, accessKeyId: sandbox.accessKeyID, connections: CONCURRENCY },
    sending: { concurrency: CONCURRENCY, batchSize: 1000, streamFrom },
    log: { level: 'warn' },
  };
  await writeFile(join(dir, 'wmsbridge.config.json'), JSON.stringify(config, null, 2));
  return dir;
}

interface StreamFigures {
  fileMb: number;
  /** from the start of the run to the file journaled as claimed (renamed into work/, sha256 read) */
  claimS: number;
  /** from the claim to the first settled record (its request left at most one WMS latency before) */
  firstSettleAfterClaimS: number;
  /** records settled while the window was open, and per second over the window */
  settled: number;
  settledPerS: number;
  rssAtFirstSettleMb: number;
  /** highest RSS sampled during the window (every 250 ms) */
  peakRssMb: number;
  /** highest RSS sampled in the first and in the second half of the window: flat memory is a ratio of about 1 */
  peakRssFirstHalfMb: number;
  peakRssSecondHalfMb: number;
  /** RSS at the end of the window */
  rssAtEndMb: number;
  /** from the stop signal to the run's end (results and report written) */
  stopS: number;
  exitCode: number;
  /** whole run (no stop): wall seconds and records created */
  wholeS?: number;
  records?: number;
}

/** child: the real pipeline, in-process; stops `windowMs` after the first settled record (0: runs to the end) */
async function childRun(dir: string, windowMs: number): Promise<StreamFigures> {
  const { mappings, ctx, runOnce, scan } = await loadPipeline(dir);
  const journal = ctx.journal;
  // the claim's moment: the file is journaled right after its rename and hash (bench instrumentation only)
  let claimedAt = 0;
  const addFile = journal.addFile.bind(journal);
  journal.addFile = async (f) => {
    const row = await addFile(f);
    claimedAt ||= performance.now();
    return row;
  };
  const fileMb = round((await stat(join(dir, 'inbox', 'cadastros', 'CATEGORIAS_bench.csv'))).size / 2 ** 20, 1);
  const rss = (): number => round(process.memoryUsage.rss() / 2 ** 20, 1);
  const abort = new AbortController();
  let firstAt = 0;
  let settled = 0;
  let rssAtFirst = 0;
  let peak = 0;
  let stopAt = 0;
  const samples: Array<[number, number]> = [];
  const sampler = setInterval(() => {
    if (!firstAt) return;
    const r = rss();
    peak = Math.max(peak, r);
    samples.push([performance.now(), r]);
  }, 250);
  try {
    const t0 = performance.now();
    const ready = await scan();
    let windowEnd = 0;
    const result = await runOnce(ctx, {
      command: 'bench',
      ready,
      mappings,
      signal: abort.signal,
      onSettled: () => {
        if (stopAt) return;
        settled++;
        if (!firstAt) {
          firstAt = performance.now();
          rssAtFirst = rss();
          peak = rssAtFirst;
          if (windowMs > 0) {
            setTimeout(() => {
              windowEnd = settled;
              peak = Math.max(peak, rss());
              stopAt = performance.now();
              abort.abort();
            }, windowMs);
          }
        }
      },
    });
    const end = performance.now();
    const windowS = ((stopAt || end) - firstAt) / 1000;
    const half = firstAt + ((stopAt || end) - firstAt) / 2;
    const peakOf = (xs: Array<[number, number]>): number => xs.reduce((m, [, r]) => Math.max(m, r), 0);
    return {
      fileMb,
      claimS: round((claimedAt - t0) / 1000, 2),
      firstSettleAfterClaimS: round((firstAt - claimedAt) / 1000, 3),
      settled: windowEnd || settled,
      settledPerS: round((windowEnd || settled) / windowS),
      rssAtFirstSettleMb: rssAtFirst,
      peakRssMb: peak,
      peakRssFirstHalfMb: peakOf(samples.filter(([t]) => t <= half)),
      peakRssSecondHalfMb: peakOf(samples.filter(([t]) => t > half && t <= (stopAt || end))),
      rssAtEndMb: rss(),
      stopS: stopAt ? round((end - stopAt) / 1000, 2) : 0,
      exitCode: result.exitCode,
      ...(windowMs > 0 ? {} : { wholeS: round((end - t0) / 1000, 2), records: result.summary.totals.created }),
    };
  } finally {
    clearInterval(sampler);
    await ctx.close();
  }
}

export async function benchStream(options: { bigMb?: number; wholeFileMb?: number; windowS?: number; rows?: number } = {}): Promise<BenchResult> {
  const bigMb = options.bigMb ?? 1024;
  const wholeFileMb = options.wholeFileMb ?? 20;
  const windowS = options.windowS ?? 20;
  const rows = options.rows ?? 20_000;
  const sb = await startSandboxChild(['--latency-ms', String(LATENCY_MS)]);
  const figures: Record<string, number | string> = { concurrency: CONCURRENCY, latency_ms: LATENCY_MS };
  const dirs: string[] = [];
  try {
    await setSandboxFaults(sb.url, { latencyMs: LATENCY_MS });
    const { cmd, args } = benchModuleCommand('stream');
    const child = async (dir: string, window: number): Promise<StreamFigures> =>
      runJsonChild<StreamFigures>(cmd, [...args, '--child', dir, String(window)], { WMS_SECRET_KEY: sb.secretKey }, 900_000);
    const drop = async (size: { bytes?: number; rows?: number }, streamFrom: number): Promise<string> => {
      const dir = await makeWorkspace(size, sb, streamFrom);
      dirs.push(dir);
      return dir;
    };
    const clean = async (): Promise<void> => {
      for (const d of dirs.splice(0)) await rm(d, { recursive: true, force: true });
    };
    // 1. the big file, streamed (the default streamFrom)
    {
      const f = await child(await drop({ bytes: bigMb * 2 ** 20 }, 32 * 2 ** 20), windowS * 1000);
      figures['streamed_file_mb'] = f.fileMb;
      figures['streamed_claim_s'] = f.claimS;
      figures['streamed_first_settle_after_claim_s'] = f.firstSettleAfterClaimS;
      figures[`streamed_settled_in_${windowS}s`] = f.settled;
      figures['streamed_settled_per_s'] = f.settledPerS;
      figures['streamed_ratio_to_bound'] = round(f.settledPerS / (CONCURRENCY / (LATENCY_MS / 1000)), 3);
      figures['streamed_rss_at_first_settle_mb'] = f.rssAtFirstSettleMb;
      figures['streamed_peak_rss_mb'] = f.peakRssMb;
      figures['streamed_peak_rss_ratio_to_first_settle'] = round(f.peakRssMb / f.rssAtFirstSettleMb, 2);
      figures['streamed_peak_rss_first_half_mb'] = f.peakRssFirstHalfMb;
      figures['streamed_peak_rss_second_half_mb'] = f.peakRssSecondHalfMb;
      figures['streamed_peak_rss_ratio_second_to_first_half'] = round(f.peakRssSecondHalfMb / Math.max(1, f.peakRssFirstHalfMb), 2);
      figures['streamed_stop_s'] = f.stopS;
      await clean();
    }
    // 2. a smaller file read whole before sending (streaming off): the first request waits for the whole file
    {
      const f = await child(await drop({ bytes: wholeFileMb * 2 ** 20 }, 2 ** 40), 2000);
      figures['whole_file_mb'] = f.fileMb;
      figures['whole_file_first_settle_after_claim_s'] = f.firstSettleAfterClaimS;
      figures['whole_file_peak_rss_mb'] = f.peakRssMb;
      await clean();
    }
    // 3. a 20,000-record drop run to the end both ways, same sandbox, alternated
    {
      const streamed = await child(await drop({ rows }, 0), 0);
      const whole = await child(await drop({ rows }, 2 ** 40), 0);
      figures[`drop_${rows}_streamed_whole_run_s`] = streamed.wholeS ?? 0;
      figures[`drop_${rows}_whole_file_whole_run_s`] = whole.wholeS ?? 0;
      figures[`drop_${rows}_streamed_records`] = streamed.records ?? 0;
      figures[`drop_${rows}_whole_run_ratio_streamed_to_whole_file`] = round((whole.wholeS ?? 0) / Math.max(0.001, streamed.wholeS ?? 0), 3);
      await clean();
    }
    return {
      name: 'stream',
      figures,
      notes:
        `A categories CSV of about ${bigMb} MB through the whole pipeline (run in a child process, SQLite journal synchronous=FULL, ` +
        `concurrency ${CONCURRENCY}) against the sandbox child with ${LATENCY_MS} ms added latency. streamed_claim_s: from the start of ` +
        'the run to the file journaled as claimed (renamed into work/ and its sha256 read whole); streamed_first_settle_after_claim_s: ' +
        'from the claim to the first settled record (its request left at most one WMS latency before). The run keeps sending for ' +
        `${windowS} s while the file is still read, RSS sampled every 250 ms (flat memory: the peak of the window's second half over ` +
        'its first half is about 1; the first half includes warm-up: connections, JIT, caches), ' +
        `then is stopped as by SIGTERM (stop_s: until results and report are written). whole_file_*: a ${wholeFileMb} MB file with ` +
        'streaming off (sending.streamFrom above its size): its first request waits for the whole file to be mapped. drop_*: a ' +
        `${rows.toLocaleString('en-US')}-record drop run to the end with streamFrom 0 and with streaming off (ratio > 1: streaming was faster).`,
    };
  } finally {
    await sb.close();
    for (const d of dirs) await rm(d, { recursive: true, force: true });
  }
}

if (isMainModule(import.meta.url)) {
  const argv = process.argv.slice(2);
  if (argv[0] === '--child') printResult(childRun(argv[1]!, Number(argv[2] ?? 0)));
  else printResult(benchStream(), { indent: true });
}
