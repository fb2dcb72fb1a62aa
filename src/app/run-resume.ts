/**
 * Phase 1 of a run: resume. Files claimed or mapped by an earlier run (this process's, or, with a shared
 * journal, an instance whose lease expired) go on; their sends in flight at the crash become in doubt.
 * Records that failed or waited are queued again; files moved into a work folder but not journaled are
 * registered.
 */
import type { RecordRow } from '../journal/types.js';
import type { RefResource, Target } from '../wms/targets.js';
import { TARGETS } from '../wms/targets.js';
import { listClaimedLeftovers, resolveChannelFolders } from '../intake/claim.js';
import { isHeldOnDependency, reasonOfRecord } from '../shared/reason.js';
import type { AppContext } from './context.js';
import { claimedFromRow, listWaitingForWms, pickMapping, type RunState } from './run-state.js';
import { registerClaimed } from './run-intake.js';

/** a record that failed this many sends is left to a person (`wmsbridge resolve --retry`) */
export const MAX_AUTO_ATTEMPTS = 10;

export async function resume(run: RunState): Promise<void> {
  const known = await takeResumableFiles(run);
  await requeueRetries(run);
  await registerLeftovers(run, known);
}

/** Files left claimed or mapped whose lease this instance gets: their in-flight sends become in doubt. */
async function takeResumableFiles(run: RunState): Promise<Set<string>> {
  const { ctx, opts, owner, ttl, log } = run;
  const acquired = [];
  for (const row of await ctx.journal.listResumableFiles(owner)) {
    // another run of this process is on it (watch runs a batch of new files beside a resume batch);
    // taken synchronously, before the first await, so two runs of one process never share a file
    if (ctx.busyFiles.has(row.id)) continue;
    run.take(row.id);
    if (await ctx.journal.acquireFileLease(row.id, owner, ttl)) acquired.push(row);
    else run.release(row.id);
  }
  const inDoubt = acquired.length ? await ctx.journal.recoverInFlight(acquired.map((r) => r.id)) : 0;
  if (inDoubt > 0) log.warn({ count: inDoubt }, 'records were in flight when wmsbridge last stopped: in doubt, settling them by read-back or channel policy');
  const known = new Set<string>();
  for (const row of acquired) {
    known.add(row.path);
    const channel = run.channels.get(row.channel);
    if (!channel) {
      run.problems.push(`${row.name}: channel ${row.channel} is no longer configured; file left in ${row.path}`);
      continue;
    }
    const mapping = pickMapping(opts.mappings, channel, row.name);
    if (ctx.shared && row.owner !== owner) log.info({ file: row.name, from: row.owner }, 'resuming a file whose instance stopped renewing its lease');
    run.working.push({ row, claimed: claimedFromRow(row, channel), channel, mapping, startedMs: performance.now(), rows: 0 });
  }
  return known;
}

/**
 * Records that failed in an earlier run (the WMS was down, 5xx or 429 beyond the retries) are sent again, a
 * few runs at most: a nightly job recovers from a bad night without a person. Records held because a
 * dependency was not delivered are evaluated again too (sent as soon as the dependency is, held again
 * otherwise), and records held only because a dependency waited for the WMS (an outage, not their data).
 */
async function requeueRetries(run: RunState): Promise<void> {
  const { ctx, opts, log } = run;
  const journal = ctx.journal;
  const retry: RecordRow[] = [];
  for (const r of await journal.listRecords({ statuses: ['failed', 'held'], limit: 100_000 })) {
    if (r.status === 'failed' ? r.attempts < MAX_AUTO_ATTEMPTS : isHeldOnDependency(r) && (await dependencyMayBeDelivered(journal, r))) retry.push(r);
  }
  const inRetry = new Set(retry.map((r) => r.id));
  for (const r of await listWaitingForWms(journal)) if (!inRetry.has(r.id)) retry.push(r);
  if (retry.length === 0) return;
  const fileIds = new Set(retry.map((r) => r.fileId));
  const inRun = new Set(run.working.map((w) => w.row.id));
  const ids: number[] = [];
  for (const fileId of fileIds) {
    const row = await journal.getFile(fileId);
    const channel = row ? run.channels.get(row.channel) : undefined;
    if (!row || !channel || (row.status !== 'done' && !inRun.has(fileId))) continue;
    ids.push(...retry.filter((r) => r.fileId === fileId).map((r) => r.id));
    if (inRun.has(fileId)) continue;
    run.take(row.id);
    run.working.push({
      row: { ...row, status: 'mapped' },
      archived: true,
      claimed: claimedFromRow(row, channel),
      channel,
      mapping: pickMapping(opts.mappings, channel, row.name),
      startedMs: performance.now(),
      rows: 0,
    });
  }
  const n = await journal.requeue(ids);
  if (n > 0) log.info({ count: n }, 'records that failed or waited for a dependency in an earlier run are sent again');
}

/**
 * Whether the record a held record depends on is delivered now, or may be by this run (it failed or is held
 * itself and is retried): a dependency refused for good (rejected) keeps its dependants held, rather than
 * having them evaluated, and their file's result rewritten, by every nightly run (a fixed file that
 * delivers it lets them go from the next run on).
 */
async function dependencyMayBeDelivered(journal: AppContext['journal'], r: RecordRow): Promise<boolean> {
  const params = reasonOfRecord(r)?.params;
  const resource = params?.['resource'];
  const key = params?.['value'];
  if (typeof resource !== 'string' || key === undefined) return false;
  if (await journal.getXref(resource as RefResource, String(key))) return true;
  if (!(TARGETS as readonly string[]).includes(resource)) return false;
  // failed or held itself: retried by this run, before its dependants (tiers). Sent without a known id
  // (already-existed): its dependants wait for `resolve --mark-sent --wms-id`
  const latest = await journal.findLatest(resource as Target, String(key));
  return latest !== undefined && (latest.status === 'failed' || latest.status === 'held');
}

/**
 * Files claimed (moved to work) but not yet in the journal: a crash between the two steps. With a shared
 * journal another instance may be between those steps right now: only files claimed longer than a lease
 * ago are taken.
 */
async function registerLeftovers(run: RunState, known: Set<string>): Promise<void> {
  const { ctx, ttl } = run;
  const journaled = new Set((await ctx.journal.listFiles({ statuses: ['claimed', 'mapped'] })).map((f) => f.path));
  for (const channel of ctx.config.channels) {
    const folders = resolveChannelFolders(channel.dir);
    for (const c of await listClaimedLeftovers(folders.work, { channel: channel.name, inboxDir: channel.dir })) {
      if (known.has(c.workPath) || journaled.has(c.workPath)) continue;
      if (ctx.shared && Date.now() - Date.parse(c.claimedAt) < ttl) {
        // another instance is between its claim and its journal row: this run helps with it once it is journaled
        // (help.ts waitForClaimers), instead of finding nothing to take and ending while that instance sends it alone
        run.claimedElsewhere.push({ channel: channel.name, dir: channel.dir, name: c.name, workPath: c.workPath });
        continue;
      }
      await registerClaimed(run, c, channel);
    }
  }
}
