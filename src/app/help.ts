/**
 * Helping (docs/SCALING.md, "Record batches"): with a shared journal, an instance with nothing of its own sends
 * claimed batches of files another LIVE instance owns, so one big file is sent by every instance. The owner still
 * does everything per file (in-doubt records, order-dependent and session targets, waiting for the helpers'
 * records before its next tier, the result, the report, the archive); a helper only claims pending records of a
 * shareable target (push/share.ts shareableTarget) of a file whose owner said it shares it (run-send.ts
 * FILE_META.share), once no live instance is still mapping a file and no record of a lower tier is left unsettled in the
 * files being worked on.
 */
import type { FileRow } from '../journal/types.js';
import type { HelpedFile } from '../outbox/types.js';
import { sourceColumnsOf, type CompiledMapping } from '../map/index.js';
import { FatalPushError, pushFiles } from '../push/pipeline.js';
import { shareableTarget } from '../push/share.js';
import { TARGET_INFO, TARGETS } from '../wms/targets.js';
import type { AppContext } from './context.js';
import { policyOf } from './run-send.js';
import { FILE_META } from '../journal/policy.js';
import { mayHoldDependencyOf, targetOfFile, type ClaimedElsewhere } from './run-state.js';
import { exists, inWorkFolder } from '../intake/claim.js';

/** How long a mapped file of a live owner may go without its share mark before a helper stops waiting for it. */
const SHARE_GRACE_MS = 2000;
/** How often a helper with nothing to take looks again while something may still become takeable. */
const HELP_POLL_MS = 250;
/**
 * How long a run waits for a file another instance claimed under it to show in the journal: the claimer moves the
 * file first and journals it once hashed (seconds for a large file). A claimer that died in between is waited for
 * this long at most.
 */
const CLAIMER_WAIT_MS = 30_000;

export interface HelpResult {
  /** records this instance settled for other instances' files */
  settled: number;
  /** the files helped with: records this instance settled of each (the owner's result file lists them) */
  perFile: HelpedFile[];
}

/**
 * Sends claimed batches of other live instances' files until nothing is left to take and nothing may become
 * takeable (no live instance still mapping a file, no shared file waiting for a lower tier). Returns at once
 * without a shared journal.
 */
export async function helpOthers(
  ctx: AppContext,
  opts: { mappings: CompiledMapping[]; signal?: AbortSignal; claimedElsewhere?: readonly ClaimedElsewhere[] },
): Promise<HelpResult> {
  const result: HelpResult = { settled: 0, perFile: [] };
  if (!ctx.shared) return result;
  // a file another instance claimed under this run may not be in the journal yet: without waiting for it, the help
  // found nothing to take and this run ended while that instance sent the whole file alone
  if (opts.claimedElsewhere?.length) await waitForClaimers(ctx, opts.claimedElsewhere, CLAIMER_WAIT_MS, opts.signal);
  const { journal, logger } = ctx;
  const owner = ctx.instanceId;
  const renew = setInterval(
    () => {
      journal.renewLeases(owner, ctx.leaseTtlMs).catch((err: unknown) => logger.warn({ err }, 'could not renew record claims'));
    },
    Math.max(500, Math.floor(ctx.leaseTtlMs / 3)),
  );
  renew.unref();
  const firstSeen = new Map<number, number>();
  const helped = new Map<number, HelpedFile>();
  try {
    while (!opts.signal?.aborted) {
      const live = await liveFilesOfOthers(ctx);
      if (live.length === 0) break;
      let sent = 0;
      let waiting = false;
      for (const f of live) {
        if (opts.signal?.aborted) break;
        const take = await takeable(ctx, opts.mappings, f, live, firstSeen);
        if (take === 'wait') waiting = true;
        if (take !== 'yes') continue;
        const n = await helpFile(ctx, f, opts.signal, sourceColumnsOf(opts.mappings));
        if (n === null) return result; // the credentials were refused: nothing can be sent
        // a file still streamed by its owner publishes more: nothing to take now is not the end
        if (f.status === 'claimed') waiting = true;
        sent += n;
        result.settled += n;
        if (n > 0) {
          const h = helped.get(f.id);
          if (h) h.records += n;
          else helped.set(f.id, { name: f.name, channel: f.channel, owner: f.owner ?? '?', records: n });
        }
      }
      if (sent === 0 && !waiting) break;
      if (sent === 0) await new Promise((r) => setTimeout(r, HELP_POLL_MS));
    }
  } finally {
    clearInterval(renew);
    result.perFile = [...helped.values()];
    if (result.settled > 0) logger.info({ records: result.settled, files: result.perFile.length }, 'helped other instances: sent records of their files');
  }
  return result;
}

/**
 * Returns once each file another instance claimed under this run is in the journal (a live file of another
 * instance), or no longer in the channel's work folder (finished, or never claimed: removed), or after `maxMs`.
 */
export async function waitForClaimers(
  ctx: Pick<AppContext, 'journal' | 'instanceId'>,
  claimed: readonly ClaimedElsewhere[],
  maxMs: number,
  signal?: AbortSignal,
): Promise<void> {
  const deadline = Date.now() + maxMs;
  let waiting = [...claimed];
  while (!signal?.aborted) {
    const live = await liveFilesOfOthers(ctx);
    const still: ClaimedElsewhere[] = [];
    for (const c of waiting) {
      if (live.some((f) => (c.workPath !== undefined ? f.path === c.workPath : f.channel === c.channel && f.name === c.name))) continue;
      if (c.workPath !== undefined ? await exists(c.workPath) : await inWorkFolder(c.dir, c.name)) still.push(c);
    }
    waiting = still;
    if (waiting.length === 0 || Date.now() >= deadline) return;
    await new Promise((r) => setTimeout(r, HELP_POLL_MS));
  }
}

/** Files in claimed/mapped another instance holds a live lease on. */
async function liveFilesOfOthers(ctx: Pick<AppContext, 'journal' | 'instanceId'>): Promise<FileRow[]> {
  const now = Date.now();
  return (await ctx.journal.listFiles({ statuses: ['claimed', 'mapped'] })).filter(
    (f) => f.owner !== null && f.owner !== ctx.instanceId && f.leaseUntil !== null && Date.parse(f.leaseUntil) > now,
  );
}

/**
 * Whether this instance may send batches of `f` now ('yes'), may later ('wait': an instance is still mapping a
 * file of a lower tier, the owner has not marked it shared yet, or a lower tier is still being sent), or never
 * ('no': an order-dependent or session target, a file its owner does not share).
 */
export async function takeable(
  ctx: Pick<AppContext, 'journal' | 'config'>,
  mappings: CompiledMapping[],
  f: FileRow,
  live: FileRow[],
  firstSeen: Map<number, number>,
): Promise<'yes' | 'wait' | 'no'> {
  const target = targetOfFile(ctx.config, mappings, f);
  // a file still being mapped may hold what this one refers to (the owner itself waits for it: run-send.ts)
  const tier = target ? TARGET_INFO[target].tier : null;
  if (live.some((g) => g.status === 'claimed' && g.id !== f.id && mayHoldDependencyOf(ctx.config, mappings, g, tier))) return 'wait';
  // a file its owner sends while it maps it (streamed) may be taken up to what it published
  if (f.status === 'claimed' && !(await streaming(ctx, f))) return 'wait';
  if (!target || !shareableTarget(target)) return 'no';
  if ((await ctx.journal.getMeta(FILE_META.share(f.id))) !== f.owner) {
    const seen = firstSeen.get(f.id) ?? Date.now();
    firstSeen.set(f.id, seen);
    return Date.now() - seen < SHARE_GRACE_MS ? 'wait' : 'no';
  }
  // tier order across instances: nothing of a lower tier is still to be sent in the files being worked on
  const lower = TARGETS.filter((t) => TARGET_INFO[t].tier < TARGET_INFO[target].tier);
  // asked of the files whose mapping is of a lower tier (or unknown here) only. Asked of every live file, the count
  // walked either a big file's pending records or the journal's history of the lower targets: 266 ms of PostgreSQL
  // a call with 1 M pending products and 1 M categories sent earlier (1.5 ms now), by every idle instance every second
  const holders = live.filter((g) => g.id !== f.id && mayHoldDependencyOf(ctx.config, mappings, g, TARGET_INFO[target].tier));
  if (lower.length === 0 || holders.length === 0) return 'yes';
  const c = await ctx.journal.countRecords({ fileIds: holders.map((g) => g.id), targets: lower, statuses: ['pending', 'sending', 'in_doubt'] });
  return c.pending + c.sending + c.in_doubt === 0 ? 'yes' : 'wait';
}

/** A claimed file its owner is sending while it maps it (run-map.ts notes where its published batches end). */
async function streaming(ctx: Pick<AppContext, 'journal'>, f: FileRow): Promise<boolean> {
  return (await ctx.journal.getMeta(FILE_META.stream(f.id))) !== undefined;
}

/**
 * What a helper may claim of a file its owner still maps (streamed): the records up to its last published batch
 * (run-map.ts publishBatch writes it before the owner reads them); once mapped, every record. A claimed file with no
 * published batch: none.
 */
async function publishedBound(ctx: Pick<AppContext, 'journal'>, fileId: number): Promise<ReadonlyMap<number, number> | undefined> {
  const file = await ctx.journal.getFile(fileId);
  if (file?.status !== 'claimed') return undefined;
  const point = await ctx.journal.getMeta(FILE_META.stream(fileId));
  return new Map([[fileId, point === undefined ? 0 : (JSON.parse(point) as { lastId: number }).lastId]]);
}

/** Claimed batches of one file while its owner holds it; returns the records settled, null when sending stopped for good. */
async function helpFile(
  ctx: AppContext,
  f: FileRow,
  signal: AbortSignal | undefined,
  sourceColumns: (mapping: string, field: string) => string | undefined,
): Promise<number | null> {
  const { config, journal, logger } = ctx;
  const channel = config.channels.find((c) => c.name === f.channel)!;
  let settled = 0;
  // the file's owner still holds it: otherwise its records are for whoever resumes it. Mapped, or still being mapped
  // while its owner sends it (streamed)
  const mayTake = async (): Promise<boolean> => {
    const now = await journal.getFile(f.id);
    if (now === undefined || now.owner !== f.owner || now.leaseUntil === null || Date.parse(now.leaseUntil) <= Date.now()) return false;
    return now.status === 'mapped' || (now.status === 'claimed' && (await streaming(ctx, now)));
  };
  // once mapped, a file has every record it will have: no bound to ask for any more
  let mapped = f.status === 'mapped';
  const upTo = async (): Promise<ReadonlyMap<number, number> | undefined> => {
    if (mapped) return undefined;
    const bound = await publishedBound(ctx, f.id);
    mapped = bound === undefined;
    return bound;
  };
  try {
    await pushFiles({
      journal,
      client: ctx.client,
      refCache: ctx.refCache,
      logger: logger.child({ helping: f.owner, file: f.name }),
      files: [{ id: f.id, name: f.name, sha256: f.sha256, policy: policyOf(channel, config.sending.concurrency) }],
      concurrency: config.sending.concurrency,
      batchSize: config.sending.batchSize,
      dependencyWaitMs: ctx.dependencyWaitMs,
      sourceColumns,
      ...(signal ? { signal } : {}),
      share: { owner: ctx.instanceId, leaseTtlMs: ctx.leaseTtlMs, helper: { mayTake, upTo } },
      onSettled: () => settled++,
    });
  } catch (err) {
    if (!(err instanceof FatalPushError)) throw err;
    logger.error({ err }, 'helping stopped');
    return null;
  }
  return settled;
}
