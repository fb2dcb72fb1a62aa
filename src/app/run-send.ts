/**
 * Phase 4 of a run: send, tier by tier across every file of the run (push/pipeline.ts), with the send
 * timeline for the report. Nothing is sent while a file could not be read because the WMS did not answer.
 */
import type { ResolvedChannel } from '../config/load.js';
import { createProgress } from '../shared/progress.js';
import { FatalPushError, pushFiles, type ChannelPolicy } from '../push/pipeline.js';
import type { RecordFeed } from '../push/feed.js';
import type { AppContext } from './context.js';
import type { RunState, Working } from './run-state.js';
import { FILE_META } from '../journal/policy.js';
import { TARGET_INFO } from '../wms/targets.js';
import { sourceColumnsOf, type CompiledMapping } from '../map/index.js';
import { mayHoldDependencyOf } from './run-state.js';
import { finishBehindSend } from './run-finish.js';

/** `streamed`: files being mapped while they are sent, and the feed their batches are published to */
export async function sendFiles(run: RunState, streamed?: { files: readonly Working[]; feed: RecordFeed }): Promise<void> {
  const { ctx, opts, log } = run;
  const { config } = ctx;
  let settled = 0;
  const toSend = run.working.filter((w) => (w.row.status === 'mapped' && !w.error) || streamed?.files.includes(w));
  if (ctx.shared && !opts.dryRun && toSend.length > 0) await waitForOthersMapping(ctx, log, opts.mappings, highestTier(toSend));
  // a file not read because the WMS did not answer may define what the others refer to: sending them now
  // would reject records for references the next run will have, so everything waits for that run
  const unread = run.working.filter((w) => w.waitingForWms).length;
  if (unread > 0 && toSend.length > 0)
    log.warn({ files: unread }, 'the WMS did not answer while files were read: nothing is sent this run, every record waits for the next one');
  if (!opts.dryRun && toSend.length > 0 && unread === 0) {
    const progress = opts.progress ? createProgress({ label: 'send' }) : null;
    let lastTick = 0;
    // a shared journal: other instances may send batches of these files (claims), of a streamed file what it published
    const share = ctx.shared ? { owner: run.owner, leaseTtlMs: run.ttl } : undefined;
    if (share) for (const w of toSend) await ctx.journal.setMeta(FILE_META.share(w.row.id), run.owner);
    const behind = finishBehindSend(run, toSend, streamed);
    try {
      run.pushed = await pushFiles({
        journal: ctx.journal,
        client: ctx.client,
        refCache: ctx.refCache,
        logger: log,
        files: toSend.map((w) => ({ id: w.row.id, name: w.row.name, sha256: w.row.sha256, policy: policyOf(w.channel, config.sending.concurrency) })),
        concurrency: config.sending.concurrency,
        batchSize: config.sending.batchSize,
        dependencyWaitMs: ctx.dependencyWaitMs,
        sourceColumns: sourceColumnsOf(opts.mappings),
        ...(opts.signal ? { signal: opts.signal } : {}),
        ...(streamed ? { feed: streamed.feed } : {}),
        ...(share ? { share } : {}),
        onSettled: (row, result) => {
          settled++;
          progress?.tick(1);
          const at = performance.now() - run.t0;
          if (at - lastTick >= 250) {
            run.timeline.push({ atMs: Math.round(at), settled });
            lastTick = at;
          }
          opts.onSettled?.(row, result);
          behind.settled();
        },
      });
    } catch (err) {
      if (!(err instanceof FatalPushError)) throw err;
      run.fatal = err;
      run.problems.push(err.message);
      log.error({ err }, 'sending stopped');
    } finally {
      progress?.done();
      await behind.stop();
    }
  }
  run.timeline.push({ atMs: Math.round(performance.now() - run.t0), settled });
}

export function policyOf(channel: ResolvedChannel, globalConcurrency: number): ChannelPolicy {
  return {
    inboxDir: channel.dir,
    concurrency: channel.concurrency && channel.concurrency < globalConcurrency ? channel.concurrency : undefined,
    inDoubt: channel.inDoubt,
    stockSyncChunkSize: channel.stockSyncChunkSize,
  };
}

/** The highest tier of the files to send (null: a file whose mapping is unknown, which may refer to anything). */
function highestTier(files: readonly Working[]): number | null {
  let tier = 0;
  for (const w of files) {
    if (!w.mapping) return null;
    tier = Math.max(tier, TARGET_INFO[w.mapping.target].tier);
  }
  return tier;
}

/**
 * With a shared journal, a record must not be sent before a dependency another instance is still mapping
 * has reached the journal: wait until no other live instance holds a file that is claimed but not mapped and may
 * hold what a file of `tier` refers to (run-state.ts mayHoldDependencyOf: a file streamed elsewhere, claimed for
 * hours, holds back only the files of a higher tier). At most `dependencyWaitMs`, then sent anyway (logged).
 */
export async function waitForOthersMapping(
  ctx: Pick<AppContext, 'journal' | 'instanceId' | 'dependencyWaitMs' | 'config'>,
  log: AppContext['logger'],
  mappings: CompiledMapping[],
  tier: number | null,
): Promise<void> {
  const deadline = Date.now() + Math.max(ctx.dependencyWaitMs, 1000);
  for (;;) {
    const now = Date.now();
    const others = (await ctx.journal.listFiles({ statuses: ['claimed'] })).filter(
      (f) =>
        f.owner !== null &&
        f.owner !== ctx.instanceId &&
        f.leaseUntil !== null &&
        Date.parse(f.leaseUntil) > now &&
        mayHoldDependencyOf(ctx.config, mappings, f, tier),
    );
    if (others.length === 0) return;
    if (now > deadline) {
      log.warn({ files: others.map((f) => f.name) }, 'other instances are still mapping files; sending anyway');
      return;
    }
    await new Promise((r) => setTimeout(r, 250));
  }
}
