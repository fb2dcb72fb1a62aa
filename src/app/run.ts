/**
 * One pass of the main job: resume what an interrupted run left, take every ready file of every channel,
 * map it into the journal, send everything in dependency order, finish each file (result, rejects,
 * archive) and write the run report. `run` calls it once; `watch` calls it for each batch of files.
 * Each phase is its own module (run-resume, run-intake, run-map, run-send, run-finish, run-report) working
 * on the run's state (run-state.ts).
 */
import type { AppContext } from './context.js';
import { startRun, type RunOptions } from './run-state.js';
import { resume } from './run-resume.js';
import { intake } from './run-intake.js';
import { mapFiles, mapStreamed } from './run-map.js';
import { createStreamFeed } from '../push/feed.js';
import { sendFiles } from './run-send.js';
import { finishFiles } from './run-finish.js';
import { helpOthers } from './help.js';
import { report, type RunResult } from './run-report.js';
import { startXlsxWorker } from '../outbox/xlsx-worker.js';

export type { RunOptions } from './run-state.js';
export { INTERRUPT_EXIT_CODES, summaryLine, verdictFields, webhooksSinceLastReport, type RunResult } from './run-report.js';

export async function runOnce(ctx: AppContext, opts: RunOptions): Promise<RunResult> {
  const run = startRun(ctx, opts);
  // the journal's writer thread starts while files are claimed and mapped, not at the first send (100-300 ms);
  // a failure here shows again, with its context, at the first write
  if (!opts.dryRun) ctx.journal.warmUp?.().catch(() => undefined);
  try {
    // 1. resume: files left claimed or mapped, records that failed or wait, claimed files not journaled
    if (!opts.dryRun) await resume(run);
    // 2. intake: claim every ready file (dry runs read them in place)
    await intake(run);
    // 3. map every claimed file into the journal; large files are mapped in step 4, while they are sent. When a file
    // will be sent, the client authorizes meanwhile (and opens its first connection): 30-40 ms less before the first request
    const sends = !opts.dryRun && run.working.some((w) => w.mapping && (w.row.status === 'claimed' || w.row.status === 'mapped'));
    if (sends) ctx.client.warmUp?.().catch(() => undefined);
    const streamed = await mapFiles(run);
    // the report's workbook thread loads exceljs during the send phase, where a core is half idle (started at the
    // finish, it took that core from the finish: +75 ms of finish, 3 alternated runs of 20k at 20 ms). A run with
    // nothing to send (an empty inbox, every few minutes from cron) has no such time to hide it in: written here
    if (sends) run.workbook = startXlsxWorker();
    // 4. send, tier by tier across every file of the run (and the streamed files' batches as they are published)
    if (streamed.length === 0) await sendFiles(run);
    else {
      const feed = createStreamFeed();
      for (const w of streamed) feed.add(w.row.id, w.mapping!.target);
      const done = await Promise.allSettled([mapStreamed(run, streamed, feed), sendFiles(run, { files: streamed, feed }).finally(() => feed.release())]);
      for (const d of done) if (d.status === 'rejected') throw d.reason;
    }
    // 4b. a shared journal: `run` also sends batches of files other live instances are sending (one big file is
    // shared by every instance); `watch` helps between its batches
    if (opts.command !== 'watch' && !opts.dryRun) {
      const helped = await helpOthers(ctx, {
        mappings: opts.mappings,
        claimedElsewhere: run.claimedElsewhere,
        ...(opts.signal ? { signal: opts.signal } : {}),
      });
      if (helped.settled > 0) run.helped = { records: helped.settled, files: helped.perFile };
    }
    // 5. finish: results, rejects, archive (only files with nothing left to send)
    await finishFiles(run);
    // 6. report, exit code, retention, the summary line
    return await report(run);
  } finally {
    // a run that stopped before its finish: the result files written behind the send are dropped (no-op once finished)
    await Promise.all(run.working.map((w) => w.finish?.abort()));
    run.close();
  }
}
