/**
 * Phase 5 of a run: finish each file with nothing left to send: its result CSV and rejects file, its
 * original to the dated archive (or the error folder with a reason file), and a stock reconciliation after
 * a synchronisation when the outbox asks for one.
 */
import { archiveFile, changedSinceClaim, moveToError } from '../intake/claim.js';
import { reconcileAfterSync } from '../reconcile/stock.js';
import { errorMessage } from '../shared/errors.js';
import { finishFile } from './finish-file.js';
import { stockKeyLabeler } from './stock-labels.js';
import type { RunState, Working } from './run-state.js';

export async function finishFiles(run: RunState): Promise<void> {
  const keyLabel = stockKeyLabeler(run.ctx.refCache, run.ctx.journal);
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
      await finishMapped(run, w, keyLabel);
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

async function finishMapped(run: RunState, w: Working, keyLabel: ReturnType<typeof stockKeyLabeler>): Promise<void> {
  const { ctx, opts, log } = run;
  const { journal, config } = ctx;
  // only the statuses that keep a file open: the (file, status) index visits those records, not all of a big file's
  const counts = await journal.countRecords({ fileIds: [w.row.id], statuses: ['pending', 'sending', 'in_doubt'] });
  const unfinished = (counts.pending ?? 0) + (counts.sending ?? 0) + (opts.dryRun ? 0 : (counts.in_doubt ?? 0));
  w.figures = await finishFile({
    file: w.row,
    mapping: w.mapping,
    journal,
    outboxDir: config.outboxDir,
    csv: config.outbox.csv,
    now: run.started,
    dryRun: opts.dryRun ?? false,
    logger: log,
    keyLabel,
  });
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
  if (config.outbox.reconcileStock && w.mapping?.target === 'StockSync' && (w.figures.outcomes.updated ?? 0) > 0) {
    await reconcileAfterSync(ctx, w.mapping, archived, log);
  }
}
