/**
 * Phase 5 of a run: finish each file with nothing left to send: its result CSV and rejects file, its
 * original to the dated archive (or the error folder with a reason file), and a stock reconciliation after
 * a synchronisation when the outbox asks for one.
 */
import { archiveFile, changedSinceClaim, moveToError } from '../intake/claim.js';
import { reconcileAfterSync } from '../reconcile/stock.js';
import { errorMessage } from '../shared/errors.js';
import { sentAsSession } from '../wms/targets.js';
import { createFileFinish, type FileFinishOptions } from './finish-file.js';
import { stockKeyLabeler, type KeyLabeler } from './stock-labels.js';
import { createI18n } from '../i18n/index.js';
import type { RunState, Working } from './run-state.js';
import type { RecordFeed } from '../push/feed.js';

/** a step of the result files written behind the send loop: after this many settles, or this long after the last step */
const FOLLOW_EVERY = 1000;
const FOLLOW_MS = 1000;

/** one stock labeler per run (it reads the products' cross-reference once) */
const labelers = new WeakMap<RunState, KeyLabeler>();
function keyLabelOf(run: RunState): KeyLabeler {
  let l = labelers.get(run);
  if (!l) labelers.set(run, (l = stockKeyLabeler(run.ctx.refCache, run.ctx.journal)));
  return l;
}

function finishOptions(run: RunState, w: Working): FileFinishOptions {
  const { config } = run.ctx;
  return {
    file: w.row,
    mapping: w.mapping,
    journal: run.ctx.journal,
    outboxDir: config.outboxDir,
    csv: config.outbox.csv,
    fileMode: run.ctx.fileMode,
    now: run.started,
    dryRun: run.opts.dryRun ?? false,
    logger: run.log,
    keyLabel: keyLabelOf(run),
    shared: run.ctx.shared,
    i18n: createI18n(config.outbox.locale, config.outbox.timeZone),
  };
}

/**
 * The result files of the files being sent, written behind the send loop: every FOLLOW_EVERY settles (or FOLLOW_MS
 * after the last step when fewer settled since), each file's records settled for good since the last step
 * (finish-file.ts follow), so the finish after the send only writes the last ones (a 20,000-record run: ~0.4 s less
 * after its last request; a 1 GB export: minutes). A streamed file is followed up to what it published. With a shared
 * journal (PostgreSQL) only sent and rejected records are taken behind: another instance's run may put a held
 * record back as it starts. Steps run one at a time; `stop` waits for the one in progress.
 */
export function finishBehindSend(
  run: RunState,
  files: readonly Working[],
  streamed?: { files: readonly Working[]; feed: RecordFeed },
): { settled(): void; stop(): Promise<void> } {
  if (run.opts.dryRun) return { settled: () => undefined, stop: () => Promise.resolve() };
  const followed = files.filter((w) => w.mapping);
  let count = 0;
  let lastStep = 0;
  let lastAt = performance.now();
  let step: Promise<void> | null = null;
  let stopped = false;
  const followAll = async (): Promise<void> => {
    const bounds = streamed?.feed.bounds();
    for (const w of followed) {
      if (stopped) return;
      w.finish ??= createFileFinish(finishOptions(run, w));
      const upTo = streamed?.files.includes(w) ? (bounds?.get(w.row.id) ?? 0) : undefined;
      // a failed step fails the file's finish, which says so (finishFiles): nothing to add here
      await w.finish.follow(upTo).catch(() => undefined);
    }
  };
  return {
    settled() {
      count++;
      if (step || stopped) return;
      if (count - lastStep < FOLLOW_EVERY && performance.now() - lastAt < FOLLOW_MS) return;
      lastStep = count;
      lastAt = performance.now();
      step = followAll().finally(() => (step = null));
    },
    async stop() {
      stopped = true;
      await step;
    },
  };
}

export async function finishFiles(run: RunState): Promise<void> {
  // a file not finished here drops what was written behind its send (its temp files): runOnce's finally aborts it
  for (const w of run.working) {
    if (w.waitingForWms) continue; // left claimed for the next run
    // not mapped (interrupted): the next run maps it; a streamed file interrupted after publishing records has
    // results for what was sent (its original stays claimed: the next run reads on after what was published)
    if (w.row.status === 'claimed' && !w.error && !run.opts.dryRun && !w.streamed) continue;
    try {
      if (w.row.status === 'duplicate') {
        await finishDuplicate(run, w);
        continue;
      }
      if (w.error) {
        await finishInError(run, w);
        continue;
      }
      await finishMapped(run, w);
    } catch (err) {
      run.problems.push(`${w.row.name}: ${errorMessage(err)}`);
      run.log.error({ file: w.row.name, err }, 'could not finish file');
    }
    w.finishedMs = performance.now();
  }
}

async function finishDuplicate(run: RunState, w: Working): Promise<void> {
  if (run.opts.dryRun) return;
  w.figures = undefined;
  const p = await archiveFile(w.claimed, run.started, { logger: run.log });
  await run.ctx.journal.updateFile(w.row.id, { path: p });
}

async function finishInError(run: RunState, w: Working): Promise<void> {
  if (run.opts.dryRun) return;
  const moved = await moveToError(w.claimed, w.error!, { runId: run.runId, date: run.started, logger: run.log });
  w.errorPath = moved.path;
  await run.ctx.journal.updateFile(w.row.id, { status: 'error', error: w.error!, path: moved.path });
  await run.ctx.journal.releaseFileLease(w.row.id, run.owner);
}

async function finishMapped(run: RunState, w: Working): Promise<void> {
  const { ctx, opts, log } = run;
  const { journal, config } = ctx;
  // only the statuses that keep a file open: the (file, status) index visits those records, not all of a big file's
  const counts = await journal.countRecords({ fileIds: [w.row.id], statuses: ['pending', 'sending', 'in_doubt'] });
  const unfinished = (counts.pending ?? 0) + (counts.sending ?? 0) + (opts.dryRun ? 0 : (counts.in_doubt ?? 0));
  // what was written behind the send loop (finishBehindSend), and the rest
  w.figures = await (w.finish ?? createFileFinish(finishOptions(run, w))).complete();
  if (unfinished > 0 || opts.dryRun || w.archived || w.row.status === 'claimed') return;
  // a streamed file whose mapping stopped before its end (run-map.ts): what was read is sent, the original goes to the error folder
  if (w.row.error) {
    w.error = w.row.error;
    await finishInError(run, w);
    return;
  }
  // sending began from what was parsed; a file that changed since cannot be withdrawn: say so
  const changed = await changedSinceClaim(w.claimed);
  if (changed) {
    run.problems.push(
      `${w.row.name}: the file changed after it was read (${changed}); only what was read at claim was sent. The archived file holds more than was processed: drop the rest as a new file`,
    );
    log.error({ file: w.row.name, change: changed }, 'file changed while its records were being sent');
  }
  const archived = await archiveFile(w.claimed, run.started, { logger: log });
  await journal.updateFile(w.row.id, { status: 'done', path: archived, runId: run.runId });
  await journal.releaseFileLease(w.row.id, run.owner);
  // a stock file just synchronised: does the WMS now hold what it says? (outbox.reconcileStock)
  if (config.outbox.reconcileStock && w.mapping && sentAsSession(w.mapping.target) && (w.figures.outcomes.updated ?? 0) > 0) {
    await reconcileAfterSync(ctx, w.mapping, archived, log);
  }
}
