/**
 * Phase 2 of a run: intake. Every ready file is claimed (dry runs read them in place) and journaled; the
 * same content dropped again is a duplicate under the channel's policy.
 */
import type { ResolvedChannel } from '../config/load.js';
import type { CompiledMapping } from '../map/index.js';
import { claimFile, resolveChannelFolders, type ClaimedFile, type ReadyFile } from '../intake/claim.js';
import { errorMessage } from '../shared/errors.js';
import { specOf } from '../wms/targets.js';
import { pickMapping, type RunState, type Working } from './run-state.js';

/** Pause between two claims of one batch when instances share a journal (see intake). */
const SHARED_CLAIM_SPREAD_MS = 150;

/**
 * Instances sharing a journal scan the same inbox at the same moment: each tries the files in its own
 * random order, so the claim race shares a drop out between them instead of the first scanner taking
 * everything. Their watchers see a drop up to a rescan interval apart, so an instance also pauses briefly
 * between two claims: the others, scanning meanwhile, take their share instead of finding the inbox empty.
 * Alone, files are taken in the order they were dropped (modification time, then name): record ids follow
 * it, and so does the order of operations on the same stock (push/sequence.ts).
 */
export async function intake(run: RunState): Promise<void> {
  const { ctx, opts } = run;
  const readyOrder = ctx.shared ? shuffled(opts.ready) : [...opts.ready].sort(byDropOrder);
  let claims = 0;
  for (const ready of readyOrder) {
    if (opts.signal?.aborted) break; // interrupted: what is not claimed stays in the inbox
    if (ctx.shared && claims > 0 && !opts.dryRun) await new Promise((r) => setTimeout(r, SHARED_CLAIM_SPREAD_MS));
    const channel = run.channels.get(ready.channel);
    if (!channel) continue;
    if (opts.dryRun) {
      await readInPlace(run, ready, channel);
      continue;
    }
    let claimed: ClaimedFile | null;
    let gone = false;
    try {
      claimed = await claimFile(ready, { logger: run.log, onGone: () => (gone = true) });
    } catch (err) {
      run.problems.push(`${ready.name}: could not be claimed: ${errorMessage(err)} (left in the inbox, retried next run)`);
      run.log.warn({ file: ready.name, err }, 'could not claim file; it stays in the inbox');
      continue;
    }
    if (!claimed) {
      // another instance took it (gone from the inbox): the help after this run's own files waits for it to show
      if (ctx.shared && gone) run.claimedElsewhere.push({ channel: channel.name, dir: channel.dir, name: ready.name });
      continue;
    }
    claims++;
    await registerClaimed(run, claimed, channel);
  }
  for (const w of run.working) run.take(w.row.id);
}

/** A dry run reads the file where it is: journaled under a dry-run hash, never claimed. */
async function readInPlace(run: RunState, ready: ReadyFile, channel: ResolvedChannel): Promise<void> {
  const row = await run.ctx.journal.addFile({
    channel: channel.name,
    name: ready.name,
    path: ready.path,
    size: ready.size,
    sha256: `dry-run:${ready.path}`,
    runId: run.runId,
    force: true,
  });
  const claimed: ClaimedFile = {
    channel: channel.name,
    name: ready.name,
    originalPath: ready.path,
    workPath: ready.path,
    size: ready.size,
    sha256: '',
    markers: [],
    claimedAt: run.started.toISOString(),
    folders: resolveChannelFolders(channel.dir),
  };
  run.working.push({ row, claimed, channel, mapping: pickMapping(run.opts.mappings, channel, ready.name), startedMs: performance.now(), rows: 0 });
}

/** A claimed file into the journal (a duplicate of an earlier one is noted) and into the run. */
export async function registerClaimed(run: RunState, c: ClaimedFile, channel: ResolvedChannel): Promise<void> {
  const { journal } = run.ctx;
  const mapping = pickMapping(run.opts.mappings, channel, c.name);
  // the channel's duplicate-file policy: operations files (locks, unlocks, syncs) dropped again are meant
  const force = (run.opts.force ?? false) || duplicatePolicy(channel, mapping) === 'process';
  const row = await journal.addFile({
    channel: channel.name,
    name: c.name,
    path: c.workPath,
    size: c.size,
    sha256: c.sha256,
    runId: run.runId,
    force,
    owner: run.owner,
    leaseTtlMs: run.ttl,
  });
  const w: Working = { row, claimed: c, channel, mapping, startedMs: performance.now(), rows: 0 };
  if (row.status === 'duplicate') {
    const first = row.duplicateOf !== null ? await journal.getFile(row.duplicateOf) : undefined;
    w.duplicateOf = first ? `${first.name} delivered on ${first.updatedAt ?? first.createdAt}` : 'an earlier file';
  }
  run.take(row.id);
  run.working.push(w);
}

/** A channel's duplicate-file policy; unset: the target's (its spec's `duplicates`: operations files are processed again). */
export function duplicatePolicy(channel: Pick<ResolvedChannel, 'duplicates'>, mapping: Pick<CompiledMapping, 'target'> | null): 'skip' | 'process' {
  if (channel.duplicates) return channel.duplicates;
  return specOf(mapping?.target)?.duplicates ?? 'skip';
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
