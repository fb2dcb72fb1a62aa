/**
 * Scheduled pulls from the configuration, run when due (by `run --pulls` and by the watch loop).
 */
import { join } from 'node:path';
import type { AppContext } from './context.js';
import type { Logger } from '../shared/logger.js';
import { runDuePulls, type DuePullResult } from '../pull/index.js';
import { scheduledPullFromConfig } from '../pull/config.js';
import { loadMappingsDir } from '../map/index.js';
import { runScheduledReconciliation } from '../reconcile/stock.js';

export interface ScheduledPullsOutcome {
  done: Array<{ name: string; file: string | null; records: number }>;
  failed: Array<{ name: string; error: string }>;
  results: DuePullResult[];
}

export async function runScheduledPulls(ctx: AppContext, deps: { logger: Logger; now?: () => Date }): Promise<ScheduledPullsOutcome> {
  const out: ScheduledPullsOutcome = { done: [], failed: [], results: [] };
  await scheduledReconciliation(ctx, deps, out);
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
      fileMode: ctx.fileMode,
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

/** outbox.reconcileSchedule: the newest ERP stock file compared with the WMS when due (leader only). */
async function scheduledReconciliation(ctx: AppContext, deps: { logger: Logger; now?: () => Date }, out: ScheduledPullsOutcome): Promise<void> {
  const spec = ctx.config.outbox.reconcileSchedule;
  if (!spec) return;
  const leader = await ctx.journal.tryLeaderLock('scheduled-reconciliation');
  if (!leader) return;
  try {
    const { mappings } = await loadMappingsDir(ctx.config.mappingsDir);
    const r = await runScheduledReconciliation(ctx, spec, mappings, deps.logger, deps.now ? deps.now() : new Date());
    if (r.status === 'ran') out.done.push({ name: 'reconcile-stock', file: r.file ?? null, records: r.products ?? 0 });
    else if (r.status === 'failed' || r.status === 'no-file')
      out.failed.push({
        name: 'reconcile-stock',
        error: r.status === 'no-file' ? `no file matching ${spec.files} under ${spec.dir}` : `reconciliation of ${r.file} failed (see the log)`,
      });
  } catch (err) {
    out.failed.push({ name: 'reconcile-stock', error: (err as Error).message });
  } finally {
    await leader.release();
  }
}
