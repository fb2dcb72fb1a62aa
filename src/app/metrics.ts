/**
 * What `watch` exposes on /metrics: files by status, records by outcome and status, WMS request
 * latency, retries, refreshes, held and in-doubt counts, runs, the journal's group commits, whether the
 * inbox is there, the process metrics and wmsbridge_build_info (README.md, "Monitoring", lists them).
 */
import type { FileStatus, JournalWriteStats, RecordStatus, RecordQueue } from '../journal/types.js';
import type { WmsClientStats } from '../wms/client-types.js';
import type { RunSummary } from '../outbox/types.js';
import { createMetricsRegistry } from '../shared/metrics.js';
import { RECORD_STATUSES } from '../journal/policy.js';

export interface MetricsState {
  recordsByStatus: Record<RecordStatus, number>;
  /** Journal.countFiles: every status, 0 when none */
  filesByStatus: Record<FileStatus, number>;
  client: WmsClientStats;
  queued: number;
  journal?: JournalWriteStats;
  /** false while an inbox folder is missing (share not mounted); omitted: not reported */
  inboxAvailable?: boolean;
}

export interface RunMetrics {
  /** records settled for good: by the WMS's answer, or rejected while mapping (`count` of them) */
  recordSettled(target: string, outcome: string, count?: number): void;
  recordRun(summary: RunSummary): void;
  /** an inbox entry not taken (symlink, FIFO, name not UTF-8, no mapping...), once per entry */
  recordRefused(kind: string): void;
  /** the exposition text for one scrape, the gauges set from `state` */
  render(state: MetricsState): Promise<string>;
  readonly contentType: string;
}

export function createRunMetrics(options: { processMetrics?: boolean } = {}): RunMetrics {
  const reg = createMetricsRegistry();
  // the state of the scrape being rendered: sourced counters and histograms read it
  let current: MetricsState | null = null;
  const settled = reg.counter(
    'wmsbridge_records_settled_total',
    'Records settled by this process, by target and final outcome (rejected: refused by the WMS or while mapping)',
    ['target', 'outcome'],
  );
  const refused = reg.counter(
    'wmsbridge_intake_refused_total',
    'Inbox entries not taken, by why (name-encoding, name-control, symlink, hardlink, not-regular, folder, no-mapping)',
    ['kind'],
  );
  const runs = reg.counter('wmsbridge_runs_total', 'Batches processed by this process, by outcome (ok, attention, outage, interrupted, fatal)', ['status']);
  const lastRun = reg.gauge('wmsbridge_last_run_timestamp_seconds', 'End of the last batch (unix time)');
  const filesG = reg.gauge('wmsbridge_files', 'Files in the journal by status', ['status']);
  const recordsG = reg.gauge('wmsbridge_records', 'Records in the journal by status (held and in_doubt need a person)', ['status']);
  const queuedG = reg.gauge('wmsbridge_files_queued', 'Ready files waiting for the next batch');
  const inboxG = reg.gauge('wmsbridge_inbox_available', '1 when every inbox folder exists, 0 when one is missing (share not mounted)');
  reg.sourcedCounter('wmsbridge_wms_requests_total', 'HTTP requests made to the WMS', () => current?.client.requests);
  reg.sourcedCounter('wmsbridge_wms_retries_total', 'Retried WMS requests', () => current?.client.retries);
  reg.sourcedCounter('wmsbridge_wms_token_refreshes_total', 'Token refreshes', () => current?.client.refreshes);
  reg.sourcedCounter('wmsbridge_wms_failures_total', 'WMS calls that failed after retries', () => current?.client.failures);
  reg.latencyHistogram('wmsbridge_wms_request_duration_seconds', 'WMS request latency in seconds', () => {
    const c = current?.client;
    return c && { bucketsMs: c.latencyBucketsMs, counts: c.latencyCounts, sumMs: c.latencySumMs, count: c.latencyCounts.reduce((a, b) => a + b, 0), maxMs: 0 };
  });
  reg.sourcedCounter('wmsbridge_journal_write_batches_total', "Group commits of the send loop's journal writes", () => current?.journal?.batches);
  reg.sourcedCounter(
    'wmsbridge_journal_writes_total',
    'Journal writes of the send loop (marks, settles, cross-references), committed in batches',
    () => current?.journal?.writes,
  );
  reg.latencyHistogram(
    'wmsbridge_journal_commit_duration_seconds',
    'Commit latency of a batch of journal writes in seconds (submitted to committed)',
    () => current?.journal?.commit,
  );
  if (options.processMetrics !== false) reg.processMetrics();
  return {
    contentType: reg.contentType,
    recordSettled(target, outcome, count = 1) {
      settled.inc({ target, outcome }, count);
    },
    recordRefused(kind) {
      refused.inc({ kind });
    },
    recordRun(summary) {
      runs.inc({ status: runStatus(summary) });
      lastRun.set(Math.round(Date.parse(summary.finishedAt) / 1000));
    },
    async render(state) {
      // every status is set each time (0 when absent), so a status that empties shows 0, not its last value
      for (const [status, n] of Object.entries(state.filesByStatus)) filesG.set(n, { status });
      for (const status of ['pending', 'sending', 'sent', 'rejected', 'failed', 'held', 'in_doubt'] as const)
        recordsG.set(state.recordsByStatus[status] ?? 0, { status });
      queuedG.set(state.queued);
      if (state.inboxAvailable !== undefined) inboxG.set(state.inboxAvailable ? 1 : 0);
      current = state;
      try {
        return await reg.render();
      } finally {
        current = null;
      }
    },
  };
}

/** A batch's status for wmsbridge_runs_total, from its verdict (verdict.ts): ok, attention, outage, interrupted, fatal. */
function runStatus(summary: RunSummary): string {
  const kind = summary.verdict?.kind;
  if (kind === 'delivered' || kind === 'nothing') return 'ok';
  if (kind === 'attention' || kind === 'outage' || kind === 'interrupted') return kind;
  if (kind === 'config') return 'fatal';
  return summary.exitCode === 0 ? 'ok' : summary.exitCode === 1 ? 'attention' : 'fatal';
}

/** Records done with for good: nearly the whole journal (90 days of a busy share: millions), counted less often. */
const FINAL_STATUSES: readonly RecordStatus[] = ['sent', 'rejected', 'failed'];
/** Every other status (those that wait or need a person): counted at every scrape (small ranges of the status index). */
const LIVE_STATUSES: readonly RecordStatus[] = RECORD_STATUSES.filter((s) => !FINAL_STATUSES.includes(s));
/** how old the settled statuses' counts may be when a scrape shows them */
export const SETTLED_COUNTS_MAX_AGE_MS = 60_000;

/**
 * The journal's records by status for /metrics. The statuses that wait or need a person (pending, sending, held,
 * in_doubt) are counted at every scrape; sent, rejected and failed, which hold nearly every record of the journal, at
 * most once every SETTLED_COUNTS_MAX_AGE_MS: counting them is a walk of millions of index entries (PostgreSQL: 70-160
 * ms of three server processes for 2 M records, a parallel scan; SQLite: ~38 ns a record in slices), which every
 * scrape of every Prometheus server repeated. Concurrent scrapes share one recount.
 */
export function createRecordCounts(journal: RecordQueue, options: { now?: () => number } = {}): () => Promise<Record<RecordStatus, number>> {
  const now = options.now ?? Date.now;
  let settled: { at: number; counts: Promise<Record<RecordStatus, number>> } | null = null;
  return async () => {
    if (!settled || now() - settled.at >= SETTLED_COUNTS_MAX_AGE_MS) {
      const counts = journal.countRecords({ statuses: [...FINAL_STATUSES] });
      settled = { at: now(), counts };
      // a failed count is not kept: the next scrape tries again
      counts.catch(() => {
        if (settled?.counts === counts) settled = null;
      });
    }
    const [live, old] = await Promise.all([journal.countRecords({ statuses: [...LIVE_STATUSES] }), settled.counts]);
    const out = { ...live };
    for (const st of FINAL_STATUSES) out[st] = old[st];
    return out;
  };
}
