/**
 * What `watch` exposes on /metrics: files by status, records by outcome and status, WMS request
 * latency, retries, refreshes, held and in-doubt counts, runs, the journal's group commits.
 */
import type { FileRow, JournalWriteStats, RecordStatus } from '../journal/types.js';
import type { WmsClientStats } from '../wms/client-types.js';
import type { RunSummary } from '../outbox/types.js';
import { createMetricsRegistry, renderLatencyHistogram } from '../shared/metrics.js';

export interface RunMetrics {
  recordSettled(target: string, outcome: string): void;
  recordRun(summary: RunSummary): void;
  /** an inbox entry not taken (symlink, FIFO, name not UTF-8, no mapping...), once per entry */
  recordRefused(kind: string): void;
  render(state: { recordsByStatus: Record<RecordStatus, number>; files: FileRow[]; client: WmsClientStats; queued: number; journal?: JournalWriteStats }): string;
}

export function createRunMetrics(): RunMetrics {
  const reg = createMetricsRegistry();
  const settled = reg.counter('wmsbridge_records_settled_total', 'Records settled by this process, by target and outcome', ['target', 'outcome']);
  const refused = reg.counter('wmsbridge_intake_refused_total', 'Inbox entries not taken, by why (name-encoding, name-control, symlink, hardlink, not-regular, folder, no-mapping)', ['kind']);
  const runs = reg.counter('wmsbridge_runs_total', 'Batches processed by this process, by exit status', ['status']);
  const lastRun = reg.gauge('wmsbridge_last_run_timestamp_seconds', 'End of the last batch (unix time)');
  const filesG = reg.gauge('wmsbridge_files', 'Files in the journal by status', ['status']);
  const recordsG = reg.gauge('wmsbridge_records', 'Records in the journal by status (held and in_doubt need a person)', ['status']);
  const queuedG = reg.gauge('wmsbridge_files_queued', 'Ready files waiting for the next batch');
  const requests = reg.gauge('wmsbridge_wms_requests_total', 'HTTP requests made to the WMS');
  const retries = reg.gauge('wmsbridge_wms_retries_total', 'Retried WMS requests');
  const refreshes = reg.gauge('wmsbridge_wms_token_refreshes_total', 'Token refreshes');
  const failures = reg.gauge('wmsbridge_wms_failures_total', 'WMS calls that failed after retries');
  const batches = reg.gauge('wmsbridge_journal_write_batches_total', "Group commits of the send loop's journal writes");
  const writes = reg.gauge('wmsbridge_journal_writes_total', "Journal writes of the send loop (marks, settles, cross-references), committed in batches");
  return {
    recordSettled(target, outcome) {
      settled.inc({ target, outcome });
    },
    recordRefused(kind) {
      refused.inc({ kind });
    },
    recordRun(summary) {
      runs.inc({ status: summary.exitCode === 0 ? 'ok' : summary.exitCode === 1 ? 'attention' : 'fatal' });
      lastRun.set(Math.round(Date.parse(summary.finishedAt) / 1000));
    },
    render(state) {
      // every status is set each time (0 when absent), so a status that empties shows 0, not its last value
      const byStatus: Record<string, number> = { claimed: 0, mapped: 0, done: 0, error: 0, duplicate: 0 };
      for (const f of state.files) byStatus[f.status] = (byStatus[f.status] ?? 0) + 1;
      for (const [status, n] of Object.entries(byStatus)) filesG.set(n, { status });
      for (const status of ['pending', 'sending', 'sent', 'rejected', 'failed', 'held', 'in_doubt'] as const) recordsG.set(state.recordsByStatus[status] ?? 0, { status });
      queuedG.set(state.queued);
      const c = state.client;
      requests.set(c.requests);
      retries.set(c.retries);
      refreshes.set(c.refreshes);
      failures.set(c.failures);
      const j = state.journal;
      if (j) {
        batches.set(j.batches);
        writes.set(j.writes);
      }
      return (
        reg.render() +
        latencyHistogram(c) +
        (j ? renderLatencyHistogram('wmsbridge_journal_commit_duration_ms', 'Commit latency of a batch of journal writes in milliseconds (submitted to committed)', j.commit) : '')
      );
    },
  };
}

/** The client keeps its own latency buckets (per-bucket counts); rendered as a cumulative histogram. */
function latencyHistogram(c: WmsClientStats): string {
  const count = c.latencyCounts.reduce((a, b) => a + b, 0);
  return renderLatencyHistogram('wmsbridge_wms_request_duration_ms', 'WMS request latency in milliseconds', {
    bucketsMs: c.latencyBucketsMs,
    counts: c.latencyCounts,
    sumMs: c.latencySumMs,
    count,
    maxMs: 0,
  });
}
