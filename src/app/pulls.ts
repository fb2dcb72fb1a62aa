/**
 * Scheduled pulls from the configuration, run when due (by `run --pulls` and by the watch loop).
 */
import { join } from 'node:path';
import type { AppContext } from './context.js';
import type { Logger } from '../shared/logger.js';
import { runDuePulls, type DuePullResult } from '../pull/index.js';
import { scheduledPullFromConfig } from '../pull/config.js';

export interface ScheduledPullsOutcome {
  done: Array<{ name: string; file: string | null; records: number }>;
  failed: Array<{ name: string; error: string }>;
  results: DuePullResult[];
}

export async function runScheduledPulls(ctx: AppContext, deps: { logger: Logger; now?: () => Date }): Promise<ScheduledPullsOutcome> {
  const out: ScheduledPullsOutcome = { done: [], failed: [], results: [] };
  if (ctx.config.pulls.length === 0) return out;
  const pulls = ctx.config.pulls.map((p) => scheduledPullFromConfig(p));
  // several instances (shared journal): only the leader runs the schedules, so each runs once
  const leader = await ctx.journal.tryLeaderLock('scheduled-pulls');
  if (!leader) {
    deps.logger.debug('scheduled pulls: another instance is the leader');
    return out;
  }
  let results: DuePullResult[];
  try {
    results = await runDuePulls(pulls, {
    client: ctx.client,
    journal: ctx.journal,
    logger: deps.logger,
    refCache: ctx.refCache,
    outDir: join(ctx.config.outboxDir, 'exports'),
    ...(deps.now ? { now: deps.now } : {}),
    });
  } finally {
    await leader.release();
  }
  out.results = results;
  for (const r of results) {
    if (r.status === 'ran') out.done.push({ name: r.name, file: r.file ?? null, records: r.records ?? 0 });
    else if (r.status === 'failed') out.failed.push({ name: r.name, error: r.error?.message ?? 'failed' });
  }
  return out;
}
