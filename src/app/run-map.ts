/**
 * Phase 3 of a run: map every claimed file into the journal (parsed as a stream, records and rejects in
 * batches). A file that changed while it was read has its records withdrawn; a file whose WMS lookups got
 * no answer stays claimed for the next run.
 */
import { changedSinceClaim } from '../intake/claim.js';
import { errorMessage, isBridgeError } from '../shared/errors.js';
import { createProgress } from '../shared/progress.js';
import { isWmsUnavailable } from '../push/decide.js';
import { mapFileToJournal } from './map-file.js';
import type { RunState, Working } from './run-state.js';

export async function mapFiles(run: RunState): Promise<void> {
  for (const w of run.working) {
    if (w.row.status === 'duplicate') continue;
    if (!w.mapping) {
      w.error = noMappingMessage(run, w);
      continue;
    }
    if (w.row.status !== 'claimed') continue;
    if (run.opts.signal?.aborted) continue; // interrupted: stays claimed, mapped by the next run
    await mapOne(run, w);
  }
}

function noMappingMessage(run: RunState, w: Working): string {
  const names = run.opts.mappings.filter((m) => !m.match.channel || m.match.channel === w.channel.name).map((m) => `${m.name} (${m.match.files.join(', ')})`);
  return `no mapping matches channel "${w.channel.name}" and file name "${w.row.name}"${names.length ? `; mappings for this channel: ${names.join('; ')}` : '; no mapping is bound to this channel'}`;
}

async function mapOne(run: RunState, w: Working): Promise<void> {
  const { ctx, opts, log } = run;
  const { journal, config } = ctx;
  const mapping = w.mapping!;
  await journal.deleteRecords(w.row.id); // a mapping interrupted by a crash starts over (nothing of it was sent)
  const progress = opts.progress ? createProgress({ label: `map ${w.row.name}` }) : null;
  try {
    await ctx.refCache.load(mapping.referenceNeeds.map((r) => r.resource));
    const res = await mapFileToJournal({
      fileId: w.row.id,
      path: w.claimed.workPath,
      fileName: w.row.name,
      mapping,
      journal,
      ctx: { file: w.row.name, refs: ctx.refCache, now: run.started },
      batchSize: config.sending.batchSize,
      ...(progress ? { onRow: () => progress.tick(1) } : {}),
    });
    w.rows = res.rows;
    // a claimed file is exactly what was parsed: a writer that went on writing into it must not get
    // half of it delivered. Nothing of this file was sent yet: its records are withdrawn
    const changed = opts.dryRun ? null : await changedSinceClaim(w.claimed);
    if (changed) {
      await journal.deleteRecords(w.row.id);
      w.rows = 0;
      w.error = `${w.row.name}: the file changed while it was being read (${changed}): another process is still writing it. None of its records were sent; drop it again once the export is complete (for an ERP that pauses while writing, use readiness marker or rename)`;
      log.error({ file: w.row.name, change: changed }, 'file changed after it was claimed; its records are withdrawn');
      return;
    }
    await journal.updateFile(w.row.id, { status: 'mapped' });
    w.row = { ...w.row, status: 'mapped' };
    log.info({ file: w.row.name, records: res.records, rejects: res.rejects, mapping: mapping.name }, 'file mapped');
  } catch (err) {
    if (isWmsUnavailable(err)) {
      // not the file's fault: it stays claimed in the work folder and is read again by the next run
      w.waitingForWms = errorMessage(err);
      run.wmsDownSince ??= ctx.client.availability?.().unavailableSince ?? new Date().toISOString();
      log.warn({ file: w.row.name, err }, 'file not read: a WMS lookup got no answer; the next run reads it again');
      return;
    }
    // the file is named as dropped, not by its path in the work folder
    const asDropped = (m: string): string => m.split(w.claimed.workPath).join(w.row.name);
    w.error = asDropped(isBridgeError(err) ? err.message : `unexpected error: ${errorMessage(err)}`);
    log.error({ file: w.row.name, error: w.error, ...(isBridgeError(err) ? {} : { err }) }, 'file could not be read');
  } finally {
    progress?.done();
  }
}
