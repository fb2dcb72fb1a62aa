/**
 * One pass of the main job: resume what an interrupted run left, take every ready file of every channel,
 * map it into the journal, send everything in dependency order, finish each file (result, rejects,
 * archive) and write the run report. `run` calls it once; `watch` calls it for each batch of files.
 */
import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';
import { join } from 'node:path';
import type { AppContext } from './context.js';
import type { ResolvedChannel } from '../config/load.js';
import type { FileRow, RecordResult, RecordRow } from '../journal/types.js';
import type { CompiledMapping } from '../map/index.js';
import { archiveFile, changedSinceClaim, claimFile, listClaimedLeftovers, moveToError, resolveChannelFolders, type ClaimedFile, type ReadyFile } from '../intake/claim.js';
import { mapFileToJournal } from './map-file.js';
import type { RefusedEntry } from '../intake/safety.js';
import { applyRetention } from './retention.js';
import { finishFile, type FileFigures } from './finish-file.js';
import { stockKeyLabeler } from './stock-labels.js';
import { pushFiles, FatalPushError, isWmsUnavailable, type ChannelPolicy, type PushStats } from '../push/pipeline.js';
import { isWaitingForWms } from '../push/refs.js';
import { emptyTotals, OUTCOMES, type FileSummary, type Outcome, type RunSummary } from '../outbox/types.js';
import { createI18n, type I18n } from '../i18n/index.js';
import { reconcileAfterSync } from '../reconcile/stock.js';
import { writeRunReport } from '../outbox/report.js';
import { VERSION } from '../shared/version.js';
import { errorMessage, isBridgeError } from '../shared/errors.js';
import { createProgress } from '../shared/progress.js';
import type { WmsClientStats } from '../wms/client-types.js';
import { TARGETS, type RefResource, type Target } from '../wms/targets.js';

export interface RunOptions {
  command: string;
  /** ready files to take (the one-shot scan, or a batch from the watcher) */
  ready: ReadyFile[];
  mappings: CompiledMapping[];
  dryRun?: boolean;
  /** process a file again even when its content was processed before */
  force?: boolean;
  signal?: AbortSignal;
  /** show progress bars on a terminal */
  progress?: boolean;
  onSettled?: (row: RecordRow, result: RecordResult) => void;
  /** problems found before the run (a mapping that did not load): logged, counted, exit 1 at least */
  problems?: string[];
  /** inbox entries the scan did not take (named in the report; refusals of possible data make exit 1) */
  refused?: RefusedEntry[];
}

export interface RunResult {
  exitCode: number;
  summary: RunSummary;
  report: { html: string; csv: string; json: string } | null;
  /** one line for the end of the command's output, in the outbox locale (what people read) */
  line: string;
  /** the same line in English, for the log (logs stay English for operators) */
  logLine: string;
}

interface Working {
  row: FileRow;
  /** a finished file taken up again to retry records that failed (its original is already archived) */
  archived?: boolean;
  claimed: ClaimedFile;
  channel: ResolvedChannel;
  mapping: CompiledMapping | null;
  error?: string;
  /** not mapped: a WMS lookup got no answer (the file stays claimed and is read again by the next run) */
  waitingForWms?: string;
  duplicateOf?: string;
  figures?: FileFigures;
  /** where the original went when the file is in error (the error/ folder) */
  errorPath?: string;
  startedMs: number;
  finishedMs?: number;
  rows: number;
}

/** exit codes of a run stopped by a signal, by the signal's name (the abort reason) */
export const INTERRUPT_EXIT_CODES: Record<string, number> = { SIGINT: 130, SIGTERM: 143 };

/** a record that failed this many sends is left to a person (`wmsbridge resolve --retry`) */
export const MAX_AUTO_ATTEMPTS = 10;

export function newRunId(now = new Date()): string {
  return `${now.toISOString().replace(/[-:]/g, '').replace(/\..*$/, '')}-${randomBytes(3).toString('hex')}`;
}

/** The mapping for a file: bound to its channel (explicitly or by match.channel) and matching its name. */
export function pickMapping(mappings: CompiledMapping[], channel: ResolvedChannel, fileName: string): CompiledMapping | null {
  const bound = channel.mappings ? mappings.filter((m) => channel.mappings!.includes(m.name)) : mappings;
  return bound.find((m) => m.matches(channel.name, fileName)) ?? null;
}

function policyOf(channel: ResolvedChannel, globalConcurrency: number): ChannelPolicy {
  return {
    inboxDir: channel.dir,
    concurrency: channel.concurrency && channel.concurrency < globalConcurrency ? channel.concurrency : undefined,
    inDoubt: channel.inDoubt,
    stockSyncChunkSize: channel.stockSyncChunkSize,
  };
}

function claimedFromRow(row: FileRow, channel: ResolvedChannel): ClaimedFile {
  return {
    channel: row.channel,
    name: row.name,
    originalPath: join(channel.dir, row.name),
    workPath: row.path,
    size: row.size,
    sha256: row.sha256,
    markers: [],
    claimedAt: row.createdAt,
    folders: resolveChannelFolders(channel.dir),
  };
}

export async function runOnce(ctx: AppContext, opts: RunOptions): Promise<RunResult> {
  const { journal, logger, config } = ctx;
  const started = new Date();
  // the client lives as long as the process (watch runs many batches): this run's figures are differences
  const wmsAtStart = ctx.client.stats();
  const t0 = performance.now();
  const runId = newRunId(started);
  const log = logger.child({ runId });
  const channels = new Map(config.channels.map((c) => [c.name, c]));
  const timeline: Array<{ atMs: number; settled: number }> = [];
  let settled = 0;
  let lastTick = 0;
  const working: Working[] = [];
  const problems: string[] = [...(opts.problems ?? [])];

  // 1. resume: files claimed or mapped by an earlier run (this process's, or, with a shared journal, an
  // instance whose lease expired) go on; their sends in flight at the crash become in doubt
  const owner = ctx.instanceId;
  const ttl = ctx.leaseTtlMs;
  const renew = setInterval(() => {
    journal.renewLeases(owner, ttl).catch((err: unknown) => log.warn({ err }, 'could not renew file leases'));
  }, Math.max(500, Math.floor(ttl / 3)));
  renew.unref();
  // the files this run works on, marked busy for the process's other runs the moment they are taken
  const taken = new Set<number>();
  const take = (id: number): void => {
    taken.add(id);
    ctx.busyFiles.add(id);
  };
  const release = (id: number): void => {
    taken.delete(id);
    ctx.busyFiles.delete(id);
  };
  try {
  if (!opts.dryRun) {
    const acquired: FileRow[] = [];
    for (const row of await journal.listResumableFiles(owner)) {
      // another run of this process is on it (watch runs a batch of new files beside a resume batch);
      // taken synchronously, before the first await, so two runs of one process never share a file
      if (ctx.busyFiles.has(row.id)) continue;
      take(row.id);
      if (await journal.acquireFileLease(row.id, owner, ttl)) acquired.push(row);
      else release(row.id);
    }
    const inDoubt = acquired.length ? await journal.recoverInFlight(acquired.map((r) => r.id)) : 0;
    if (inDoubt > 0) log.warn({ count: inDoubt }, 'records were in flight when wmsbridge last stopped: in doubt, settling them by read-back or channel policy');
    const known = new Set<string>();
    for (const row of acquired) {
      known.add(row.path);
      const channel = channels.get(row.channel);
      if (!channel) {
        problems.push(`${row.name}: channel ${row.channel} is no longer configured; file left in ${row.path}`);
        continue;
      }
      const mapping = pickMapping(opts.mappings, channel, row.name);
      if (ctx.shared && row.owner !== owner) log.info({ file: row.name, from: row.owner }, 'resuming a file whose instance stopped renewing its lease');
      working.push({ row, claimed: claimedFromRow(row, channel), channel, mapping, startedMs: performance.now(), rows: 0 });
    }
    // records that failed in an earlier run (the WMS was down, 5xx or 429 beyond the retries) are sent
    // again, a few runs at most: a nightly job recovers from a bad night without a person
    // Records held because a dependency was not delivered are evaluated again too: sent as soon as the
    // dependency is (delivered since, by a later run or \`resolve\`), held again otherwise
    const retry: RecordRow[] = [];
    for (const r of await journal.listRecords({ statuses: ['failed', 'held'], limit: 100_000 })) {
      if (r.status === 'failed' ? r.attempts < MAX_AUTO_ATTEMPTS : isHeldOnDependency(r) && (await dependencyMayBeDelivered(journal, r))) retry.push(r);
    }
    // and records held only because a dependency waited for the WMS (an outage, not their data)
    const inRetry = new Set(retry.map((r) => r.id));
    for (const r of await listWaitingForWms(journal)) if (!inRetry.has(r.id)) retry.push(r);
    if (retry.length > 0) {
      const byFile = new Map<number, number>();
      for (const r of retry) byFile.set(r.fileId, (byFile.get(r.fileId) ?? 0) + 1);
      const inRun = new Set(working.map((w) => w.row.id));
      const ids: number[] = [];
      for (const [fileId] of byFile) {
        const row = await journal.getFile(fileId);
        const channel = row ? channels.get(row.channel) : undefined;
        if (!row || !channel || (row.status !== 'done' && !inRun.has(fileId))) continue;
        ids.push(...retry.filter((r) => r.fileId === fileId).map((r) => r.id));
        if (inRun.has(fileId)) continue;
        take(row.id);
        working.push({ row: { ...row, status: 'mapped' }, archived: true, claimed: claimedFromRow(row, channel), channel, mapping: pickMapping(opts.mappings, channel, row.name), startedMs: performance.now(), rows: 0 });
      }
      const n = await journal.requeue(ids);
      if (n > 0) log.info({ count: n }, 'records that failed or waited for a dependency in an earlier run are sent again');
    }
    // files claimed (moved to work) but not yet in the journal: a crash between the two steps. With a
    // shared journal another instance may be between those steps right now: only files claimed longer
    // than a lease ago are taken.
    const journaled = new Set((await journal.listFiles({ statuses: ['claimed', 'mapped'] })).map((f) => f.path));
    for (const channel of config.channels) {
      const folders = resolveChannelFolders(channel.dir);
      for (const c of await listClaimedLeftovers(folders.work, { channel: channel.name, inboxDir: channel.dir })) {
        if (known.has(c.workPath) || journaled.has(c.workPath)) continue;
        if (ctx.shared && Date.now() - Date.parse(c.claimedAt) < ttl) continue;
        await registerClaimed(c, channel);
      }
    }
  }
  async function registerClaimed(c: ClaimedFile, channel: ResolvedChannel): Promise<void> {
    const mapping = pickMapping(opts.mappings, channel, c.name);
    // the channel's duplicate-file policy: operations files (locks, unlocks, syncs) dropped again are meant
    const force = (opts.force ?? false) || duplicatePolicy(channel, mapping) === 'process';
    const row = await journal.addFile({ channel: channel.name, name: c.name, path: c.workPath, size: c.size, sha256: c.sha256, runId, force, owner, leaseTtlMs: ttl });
    const w: Working = { row, claimed: c, channel, mapping, startedMs: performance.now(), rows: 0 };
    if (row.status === 'duplicate') {
      const first = row.duplicateOf !== null ? await journal.getFile(row.duplicateOf) : undefined;
      w.duplicateOf = first ? `${first.name} delivered on ${first.updatedAt ?? first.createdAt}` : 'an earlier file';
    }
    take(row.id);
    working.push(w);
  }

  // 2. intake: claim every ready file (dry runs read them in place). Instances sharing a journal scan
  // the same inbox at the same moment: each tries the files in its own random order, so the claim race
  // shares a drop out between them instead of the first scanner taking everything. Their watchers see
  // a drop up to a rescan interval apart, so an instance also pauses briefly between two claims: the
  // others, scanning meanwhile, take their share instead of finding the inbox already empty.
  // Alone, files are taken in the order they were dropped (modification time, then name): record ids follow
  // it, and so does the order of operations on the same stock (push/sequence.ts)
  const readyOrder = ctx.shared ? shuffled(opts.ready) : [...opts.ready].sort(byDropOrder);
  let claims = 0;
  for (const ready of readyOrder) {
    if (opts.signal?.aborted) break; // interrupted: what is not claimed stays in the inbox
    if (ctx.shared && claims > 0 && !opts.dryRun) await new Promise((r) => setTimeout(r, SHARED_CLAIM_SPREAD_MS));
    const channel = channels.get(ready.channel);
    if (!channel) continue;
    if (opts.dryRun) {
      const row = await journal.addFile({ channel: channel.name, name: ready.name, path: ready.path, size: ready.size, sha256: `dry-run:${ready.path}`, runId, force: true });
      working.push({ row, claimed: { channel: channel.name, name: ready.name, originalPath: ready.path, workPath: ready.path, size: ready.size, sha256: '', markers: [], claimedAt: started.toISOString(), folders: resolveChannelFolders(channel.dir) }, channel, mapping: pickMapping(opts.mappings, channel, ready.name), startedMs: performance.now(), rows: 0 });
      continue;
    }
    let claimed: ClaimedFile | null;
    try {
      claimed = await claimFile(ready, { logger: log });
    } catch (err) {
      problems.push(`${ready.name}: could not be claimed: ${errorMessage(err)} (left in the inbox, retried next run)`);
      log.warn({ file: ready.name, err }, 'could not claim file; it stays in the inbox');
      continue;
    }
    if (!claimed) continue; // another instance took it
    claims++;
    await registerClaimed(claimed, channel);
  }

  for (const w of working) take(w.row.id);

  // 3. map every claimed file into the journal
  let wmsDownSince: string | null = null;
  for (const w of working) {
    if (w.row.status === 'duplicate') continue;
    if (!w.mapping) {
      const names = opts.mappings.filter((m) => !m.match.channel || m.match.channel === w.channel.name).map((m) => `${m.name} (${m.match.files.join(', ')})`);
      w.error = `no mapping matches channel "${w.channel.name}" and file name "${w.row.name}"${names.length ? `; mappings for this channel: ${names.join('; ')}` : '; no mapping is bound to this channel'}`;
      continue;
    }
    if (w.row.status !== 'claimed') continue;
    if (opts.signal?.aborted) continue; // interrupted: stays claimed, mapped by the next run
    await journal.deleteRecords(w.row.id); // a mapping interrupted by a crash starts over (nothing of it was sent)
    const progress = opts.progress ? createProgress({ label: `map ${w.row.name}` }) : null;
    try {
      await ctx.refCache.load(w.mapping.referenceNeeds.map((r) => r.resource));
      const res = await mapFileToJournal({
        fileId: w.row.id,
        path: w.claimed.workPath,
        fileName: w.row.name,
        mapping: w.mapping,
        journal,
        ctx: { file: w.row.name, refs: ctx.refCache, now: started },
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
        continue;
      }
      await journal.updateFile(w.row.id, { status: 'mapped' });
      w.row = { ...w.row, status: 'mapped' };
      log.info({ file: w.row.name, records: res.records, rejects: res.rejects, mapping: w.mapping.name }, 'file mapped');
    } catch (err) {
      if (isWmsUnavailable(err)) {
        // not the file's fault: it stays claimed in the work folder and is read again by the next run
        w.waitingForWms = errorMessage(err);
        wmsDownSince ??= ctx.client.availability?.().unavailableSince ?? new Date().toISOString();
        log.warn({ file: w.row.name, err }, 'file not read: a WMS lookup got no answer; the next run reads it again');
        continue;
      }
      // the file is named as dropped, not by its path in the work folder
      const asDropped = (m: string): string => m.split(w.claimed.workPath).join(w.row.name);
      w.error = asDropped(isBridgeError(err) ? err.message : `unexpected error: ${errorMessage(err)}`);
      log.error({ file: w.row.name, error: w.error, ...(isBridgeError(err) ? {} : { err }) }, 'file could not be read');
    } finally {
      progress?.done();
    }
  }

  // 4. send, tier by tier across every file of the run
  let fatal: unknown = null;
  let pushed: PushStats | null = null;
  const toSend = working.filter((w) => w.row.status === 'mapped' && !w.error);
  if (ctx.shared && !opts.dryRun && toSend.length > 0) await waitForOthersMapping(ctx, log);
  // a file not read because the WMS did not answer may define what the others refer to: sending them now
  // would reject records for references the next run will have, so everything waits for that run
  const unread = working.filter((w) => w.waitingForWms).length;
  if (unread > 0 && toSend.length > 0) log.warn({ files: unread }, 'the WMS did not answer while files were read: nothing is sent this run, every record waits for the next one');
  if (!opts.dryRun && toSend.length > 0 && unread === 0) {
    const progress = opts.progress ? createProgress({ label: 'send' }) : null;
    try {
      pushed = await pushFiles({
        journal,
        client: ctx.client,
        refCache: ctx.refCache,
        logger: log,
        files: toSend.map((w) => ({ id: w.row.id, name: w.row.name, sha256: w.row.sha256, policy: policyOf(w.channel, config.sending.concurrency) })),
        concurrency: config.sending.concurrency,
        batchSize: config.sending.batchSize,
        dependencyWaitMs: ctx.dependencyWaitMs,
        ...(opts.signal ? { signal: opts.signal } : {}),
        onSettled: (row, result) => {
          settled++;
          progress?.tick(1);
          const at = performance.now() - t0;
          if (at - lastTick >= 250) {
            timeline.push({ atMs: Math.round(at), settled });
            lastTick = at;
          }
          opts.onSettled?.(row, result);
        },
      });
    } catch (err) {
      if (!(err instanceof FatalPushError)) throw err;
      fatal = err;
      problems.push(err.message);
      log.error({ err }, 'sending stopped');
    } finally {
      progress?.done();
    }
  }
  timeline.push({ atMs: Math.round(performance.now() - t0), settled });

  // 5. finish: results, rejects, archive (only files with nothing left to send)
  const keyLabel = stockKeyLabeler(ctx.refCache, journal);
  for (const w of working) {
    if (w.waitingForWms) continue; // left claimed for the next run
    if (w.row.status === 'claimed' && !w.error && !opts.dryRun) continue; // not mapped (interrupted): the next run maps it
    try {
      if (w.row.status === 'duplicate') {
        if (!opts.dryRun) w.figures = undefined;
        if (!opts.dryRun) await archiveFile(w.claimed, started, { logger: log }).then((p) => journal.updateFile(w.row.id, { path: p }));
        continue;
      }
      if (w.error) {
        if (!opts.dryRun) {
          const moved = await moveToError(w.claimed, w.error, { runId, date: started, logger: log });
          w.errorPath = moved.path;
          await journal.updateFile(w.row.id, { status: 'error', error: w.error, path: moved.path });
          await journal.releaseFileLease(w.row.id, owner);
        }
        continue;
      }
      const counts = await journal.countRecords({ fileIds: [w.row.id] });
      const unfinished = (counts.pending ?? 0) + (counts.sending ?? 0) + (opts.dryRun ? 0 : counts.in_doubt ?? 0);
      w.figures = await finishFile({ file: w.row, mapping: w.mapping, journal, outboxDir: config.outboxDir, csv: config.outbox.csv, now: started, dryRun: opts.dryRun ?? false, logger: log, keyLabel });
      if (unfinished === 0 && !opts.dryRun && !w.archived) {
        // sending began from what was parsed; a file that changed since cannot be withdrawn: say so
        const changed = await changedSinceClaim(w.claimed);
        if (changed) {
          problems.push(`${w.row.name}: the file changed after it was read (${changed}); only what was read at claim was sent. The archived file holds more than was processed: drop the rest as a new file`);
          log.error({ file: w.row.name, change: changed }, 'file changed while its records were being sent');
        }
        const archived = await archiveFile(w.claimed, started, { logger: log });
        await journal.updateFile(w.row.id, { status: 'done', path: archived, runId });
        await journal.releaseFileLease(w.row.id, owner);
        // a stock file just synchronised: does the WMS now hold what it says? (outbox.reconcileStock)
        if (config.outbox.reconcileStock && w.mapping?.target === 'StockSync' && (w.figures.outcomes.updated ?? 0) > 0) {
          await reconcileAfterSync(ctx, w.mapping, archived, log);
        }
      }
    } catch (err) {
      problems.push(`${w.row.name}: ${errorMessage(err)}`);
      log.error({ file: w.row.name, err }, 'could not finish file');
    }
    w.finishedMs = performance.now();
  }

  // 6. report
  const finished = new Date();
  const summary = buildSummary({ runId, opts, ctx, started, finished, working, timeline, wmsAtStart });
  if (!opts.dryRun) {
    const webhooks = await webhooksSinceLastReport(journal);
    if (webhooks.length) summary.webhooks = webhooks;
  }
  let exitCode = 0;
  const attention = OUTCOMES.filter((o) => o === 'rejected' || o === 'failed' || o === 'held' || o === 'in-doubt').reduce((n, o) => n + (summary.totals[o] ?? 0), 0);
  // records left for a person by this run or an earlier one (held, in doubt, failed): the nightly job keeps
  // saying so (exit 1) until someone runs `wmsbridge resolve`
  const waitingHeld = opts.dryRun ? 0 : (await listWaitingForWms(journal)).length;
  const open = opts.dryRun ? 0 : (await countOpen(journal)) - waitingHeld;
  if (open > 0) summary.openRecords = open;
  if (opts.refused?.length) summary.skipped = opts.refused.map((r) => ({ channel: r.channel, name: r.name, reason: r.reason, kind: r.kind }));
  // an entry that may be data but is refused (symlink, hard link, FIFO, a name that is not UTF-8) needs a
  // person; a file no mapping claims, or a folder, is only named
  const refusedData = (opts.refused ?? []).filter((r) => r.kind !== 'no-mapping' && r.kind !== 'folder').length;
  if (attention > 0 || open > 0 || refusedData > 0 || working.some((w) => w.error) || problems.length > 0) exitCode = 1;
  // no-change is a warning, unless the channel asks for attention (a lot typo must stop the night)
  if (working.some((w) => w.channel.noChange === 'attention' && (w.figures?.outcomes['no-change'] ?? 0) > 0)) exitCode = 1;
  // the WMS was unavailable: what was not sent waits for the next run (exit 75, "try again later"), which
  // says more than exit 1 for a run that could not finish; the report still lists any rejects
  const downSince = pushed?.wmsUnavailable?.since ?? wmsDownSince;
  const pending = downSince && !opts.dryRun ? ((await journal.countRecords({ statuses: ['pending'] })).pending ?? 0) : 0;
  const waitingFiles = working.filter((w) => w.waitingForWms).length;
  // an outage is what leaves work for the next run: sends that were answered by dropped connections (in
  // doubt, for a person) open the circuit too, but leave nothing waiting, and stay exit 1
  if (downSince && !opts.dryRun && pending + waitingHeld + waitingFiles > 0) {
    summary.wmsUnavailable = {
      since: downSince,
      waitingRecords: pending + waitingHeld,
      waitingFiles,
      lastError: pushed?.wmsUnavailable?.lastError ?? working.find((w) => w.waitingForWms)?.waitingForWms ?? '',
    };
    // the report's one line for the outage (outbox language)
    summary.outage = { waiting: summary.wmsUnavailable.waitingRecords, since: downSince, cause: summary.wmsUnavailable.lastError, code: 'E_WMS_UNAVAILABLE' };
    exitCode = 75;
  }
  if (fatal) exitCode = 2;
  // interrupted by a signal (the command passes it as the abort reason): 130 SIGINT, 143 SIGTERM
  const interrupted = opts.signal?.aborted ? INTERRUPT_EXIT_CODES[String(opts.signal.reason)] : undefined;
  if (interrupted && !fatal) exitCode = interrupted;
  summary.exitCode = exitCode;
  let report: RunResult['report'] = null;
  try {
    report = await writeRunReport(config.outboxDir, summary, {
      csvFormat: { ...config.outbox.csv, timeZone: config.outbox.csv.timeZone ?? config.outbox.timeZone },
      timeZone: config.outbox.timeZone,
      locale: config.outbox.locale,
    });
  } catch (err) {
    problems.push(`report: ${errorMessage(err)}`);
    log.error({ err }, 'could not write the run report');
    if (exitCode === 0) exitCode = 1;
  }
  for (const p of problems) log.warn(p);
  if (!opts.dryRun) {
    try {
      await applyRetention({ config, journal, logger: log });
    } catch (err) {
      log.warn({ err: errorMessage(err) }, 'retention could not run');
    }
  }
  const line = summaryLine(summary, report?.html ?? null, problems.length, createI18n(config.outbox.locale, config.outbox.timeZone));
  const logLine = summaryLine(summary, report?.html ?? null, problems.length, createI18n('en', config.outbox.timeZone));
  return { exitCode, summary, report, line, logLine };
  } finally {
    clearInterval(renew);
    for (const id of taken) ctx.busyFiles.delete(id);
  }
}

/**
 * With a shared journal, a record must not be sent before a dependency another instance is still mapping
 * has reached the journal: wait until no other live instance holds a file that is claimed but not mapped.
 */
async function waitForOthersMapping(ctx: AppContext, log: AppContext['logger']): Promise<void> {
  const deadline = Date.now() + Math.max(ctx.dependencyWaitMs, 1000);
  for (;;) {
    const now = Date.now();
    const others = (await ctx.journal.listFiles({ statuses: ['claimed'] })).filter(
      (f) => f.owner !== null && f.owner !== ctx.instanceId && f.leaseUntil !== null && Date.parse(f.leaseUntil) > now,
    );
    if (others.length === 0) return;
    if (now > deadline) {
      log.warn({ files: others.map((f) => f.name) }, 'other instances are still mapping files; sending anyway');
      return;
    }
    await new Promise((r) => setTimeout(r, 250));
  }
}

function buildSummary(a: {
  runId: string;
  opts: RunOptions;
  ctx: AppContext;
  started: Date;
  finished: Date;
  working: Working[];
  timeline: RunSummary['timeline'];
  wmsAtStart: WmsClientStats;
}): RunSummary {
  const totals = emptyTotals();
  const files: FileSummary[] = [];
  const resources = new Map<string, Partial<Record<Outcome, number>>>();
  const reasons: FileFigures['reasons'] = new Map();
  const attention: RunSummary['attention'] = [];
  for (const w of a.working) {
    const f = w.figures;
    const status: FileSummary['status'] = w.row.status === 'duplicate' ? 'duplicate' : w.error ? 'error' : f && (f.outcomes.skipped ?? 0) > 0 && !a.opts.dryRun ? 'partial' : 'done';
    files.push({
      channel: w.channel.name,
      name: w.row.name,
      status,
      mapping: w.mapping?.name ?? null,
      target: w.mapping?.target ?? null,
      rows: w.rows || f?.records || 0,
      outcomes: f?.outcomes ?? {},
      ...(f?.resultFile ? { resultFile: f.resultFile } : {}),
      ...(f?.rejectsFile ? { rejectsFile: f.rejectsFile } : {}),
      ...(w.errorPath ? { archivedTo: w.errorPath } : {}),
      ...(w.error ? { error: w.error } : w.duplicateOf ? { error: `same content as ${w.duplicateOf}: skipped (channel duplicates: skip; set duplicates: process, or run with --force, to send it again)` } : {}),
      ...(w.finishedMs ? { durationMs: Math.round(w.finishedMs - w.startedMs) } : {}),
    });
    if (!f) continue;
    totals.records += f.records;
    for (const [o, n] of Object.entries(f.outcomes)) totals[o as Outcome] += n ?? 0;
    for (const [t, outs] of f.resources) {
      let r = resources.get(t);
      if (!r) resources.set(t, (r = {}));
      for (const [o, n] of Object.entries(outs)) r[o as Outcome] = (r[o as Outcome] ?? 0) + (n ?? 0);
    }
    for (const [k, v] of f.reasons) {
      const r = reasons.get(k);
      if (r) r.count += v.count;
      else reasons.set(k, { ...v });
    }
    for (const item of f.attention) if (attention.length < 1000) attention.push(item);
  }
  totals.files = files.length;
  const now = a.ctx.client.stats();
  const s0 = a.wmsAtStart;
  const requests = now.requests - s0.requests;
  const latencySumMs = now.latencySumMs - s0.latencySumMs;
  const answered = now.latencyCounts.reduce((x, y) => x + y, 0) - s0.latencyCounts.reduce((x, y) => x + y, 0);
  return {
    runId: a.runId,
    command: a.opts.command,
    dryRun: a.opts.dryRun ?? false,
    startedAt: a.started.toISOString(),
    finishedAt: a.finished.toISOString(),
    durationMs: a.finished.getTime() - a.started.getTime(),
    exitCode: 0,
    host: hostname(),
    version: VERSION,
    wms: {
      url: a.ctx.wmsUrl,
      sandbox: a.ctx.sandbox !== null,
      requests,
      retries: now.retries - s0.retries,
      refreshes: now.refreshes - s0.refreshes,
      failures: now.failures - s0.failures,
      ...(answered > 0 ? { meanLatencyMs: Math.round((latencySumMs / answered) * 10) / 10 } : {}),
    },
    totals,
    files,
    resources: [...resources].map(([target, outcomes]) => ({ target, outcomes })),
    errorReasons: [...reasons]
      .map(([, v]) => ({ reason: `${v.outcome}: ${v.text}`, count: v.count, example: v.example, outcome: v.outcome, ...(v.code ? { code: v.code, params: v.params ?? {} } : {}) }))
      .sort((x, y) => y.count - x.count),
    timeline: a.timeline,
    attention,
  };
}

/** Pause between two claims of one batch when instances share a journal (see step 2 of runOnce). */
const SHARED_CLAIM_SPREAD_MS = 150;

/** Held because a record it refers to was not delivered (not in doubt: those wait for a person). */
export function isHeldOnDependency(r: Pick<RecordRow, 'status' | 'outcome' | 'error'>): boolean {
  return r.status === 'held' && r.outcome === 'held' && /depends on /.test(r.error ?? '');
}

/**
 * Whether the record a held record depends on is delivered now, or may be by this run (it failed or is held
 * itself and is retried): a dependency refused for good (rejected) keeps its dependants held, rather than
 * having them evaluated, and their file's result rewritten, by every nightly run (a fixed file that
 * delivers it lets them go from the next run on).
 */
async function dependencyMayBeDelivered(journal: AppContext['journal'], r: RecordRow): Promise<boolean> {
  const m = /depends on (\w+) '([^']*)'/.exec(r.error ?? '');
  if (!m) return false;
  const [, resource, key] = m as unknown as [string, string, string];
  if (await journal.getXref(resource as RefResource, key)) return true;
  if (!(TARGETS as readonly string[]).includes(resource)) return false;
  // failed or held itself: retried by this run, before its dependants (tiers). Sent without a known id
  // (already-existed): its dependants wait for \`resolve --mark-sent --wms-id\`
  const latest = await journal.findLatest(resource as Target, key);
  return latest !== undefined && (latest.status === 'failed' || latest.status === 'held');
}

/** A channel's duplicate-file policy; unset: operations files are processed again, everything else skipped. */
export function duplicatePolicy(channel: Pick<ResolvedChannel, 'duplicates'>, mapping: Pick<CompiledMapping, 'target'> | null): 'skip' | 'process' {
  if (channel.duplicates) return channel.duplicates;
  const t = mapping?.target;
  return t === 'StockLock' || t === 'StockUnlock' || t === 'StockSync' ? 'process' : 'skip';
}

/** Drop order: modification time, then name (ERPs drop a nightly pair within the same second). */
export function byDropOrder(a: { mtimeMs: number; name: string }, b: { mtimeMs: number; name: string }): number {
  const ta = Math.floor(a.mtimeMs / 1000);
  const tb = Math.floor(b.mtimeMs / 1000);
  if (ta !== tb) return ta - tb;
  return a.name < b.name ? -1 : a.name > b.name ? 1 : 0;
}

function shuffled<T>(items: readonly T[]): T[] {
  const a = [...items];
  for (let i = a.length - 1; i > 0; i--) {
    const j = Math.floor(Math.random() * (i + 1));
    [a[i], a[j]] = [a[j]!, a[i]!];
  }
  return a;
}

const WEBHOOK_REPORT_KEY = 'report:last-webhook-id';

/**
 * Webhooks the WMS sent since the previous report, by kind, and how many of them concern something
 * wmsbridge sent (linked to the record, so to its file and line in the webhook outbox files).
 */
export async function webhooksSinceLastReport(journal: AppContext['journal']): Promise<NonNullable<RunSummary['webhooks']>> {
  const last = Number((await journal.getMeta(WEBHOOK_REPORT_KEY)) ?? '0');
  const byKind = new Map<string, { count: number; linked: number }>();
  let maxId = last;
  for (;;) {
    const events = await journal.listWebhookEvents({ afterId: maxId, limit: 1000 });
    for (const e of events) {
      const k = byKind.get(e.kind) ?? { count: 0, linked: 0 };
      k.count++;
      if (e.recordId !== null) k.linked++;
      byKind.set(e.kind, k);
      maxId = e.id;
    }
    if (events.length < 1000) break;
  }
  if (maxId > last) await journal.setMeta(WEBHOOK_REPORT_KEY, String(maxId));
  return [...byKind].map(([kind, v]) => ({ kind, ...v }));
}

/** Records held only because a dependency waited for the WMS: the next run sends them again. */
async function listWaitingForWms(journal: AppContext['journal']): Promise<RecordRow[]> {
  return (await journal.listRecords({ statuses: ['held'], limit: 100_000 })).filter((r) => isWaitingForWms(r.error));
}

async function countOpen(journal: AppContext['journal']): Promise<number> {
  const c = await journal.countRecords({ statuses: ['held', 'in_doubt', 'failed'] });
  return (c.held ?? 0) + (c.in_doubt ?? 0) + (c.failed ?? 0);
}

/** The one line `run` prints at the end, in the outbox locale (default pt-BR). */
export function summaryLine(s: RunSummary, reportPath: string | null, problems: number, i18n: I18n = createI18n()): string {
  const { t } = i18n;
  const parts = OUTCOMES.filter((o) => (s.totals[o] ?? 0) > 0).map((o) => `${i18n.num(s.totals[o])} ${i18n.outcome(o).toLowerCase()}`);
  const errors = s.files.filter((f) => f.status === 'error').length;
  const dups = s.files.filter((f) => f.status === 'duplicate').length;
  const head = `${t('line.files', { n: s.totals.files })}${errors ? t('line.inError', { n: errors }) : ''}${dups ? t('line.duplicate', { n: dups }) : ''}, ${t('line.records', { n: s.totals.records })}`;
  const dupFiles = s.files.filter((f) => f.status === 'duplicate');
  const skipped = dupFiles.length
    ? t('line.skipped', { n: dupFiles.length, list: `${dupFiles.slice(0, 3).map((f) => f.name).join(', ')}${dupFiles.length > 3 ? ', ...' : ''}` })
    : '';
  const tail = reportPath ? t('line.report', { path: reportPath }) : '';
  const open = s.openRecords ? t('line.open', { n: s.openRecords }) : '';
  // sub-folders (an attachments folder) are listed in the report, not counted in the line
  const notTakenN = (s.skipped ?? []).filter((x) => x.kind !== 'folder').length;
  const notTaken = notTakenN ? t('line.notTaken', { n: notTakenN }) : '';
  const outage = s.outage ? t('line.outage', { n: s.outage.waiting, since: s.outage.since ? i18n.dateTime(s.outage.since) : '?' }) : '';
  return `${s.dryRun ? t('line.dry') : ''}${head}${parts.length ? `: ${parts.join(', ')}` : ''}${skipped}${outage}${open}${notTaken}${problems ? t('line.problems', { n: problems }) : ''}${t('line.in', { s: i18n.num(Math.round(s.durationMs / 100) / 10, 1) })}${tail}`;
}


/** "the WMS was unreachable from hh:mm; N records wait for the next run" (local time of this host) */
export function wmsUnavailableLine(u: NonNullable<RunSummary['wmsUnavailable']>): string {
  const at = new Date(u.since);
  const hhmm = `${String(at.getHours()).padStart(2, '0')}:${String(at.getMinutes()).padStart(2, '0')}`;
  const files = u.waitingFiles ? ` (and ${u.waitingFiles} file(s) not read yet)` : '';
  return `the WMS was unreachable from ${hhmm}; ${u.waitingRecords} record(s) wait for the next run${files}`;
}
