/**
 * What `watch` exposes on /metrics: files by status, records by outcome and status, WMS request
 * latency, retries, refreshes, held and in-doubt counts, runs.
 */
import type { FileRow, RecordStatus } from '../journal/types.js';
import type { WmsClientStats } from '../wms/client-types.js';
import type { RunSummary } from '../outbox/types.js';
import { createRegistry } from '../shared/metrics.js';

export interface RunMetrics {
  recordSettled(target: string, outcome: string): void;
  recordRun(summary: RunSummary): void;
  render(state: { recordsByStatus: Record<RecordStatus, number>; files: FileRow[]; client: WmsClientStats; queued: number }): string;
}

export function createRunMetrics(): RunMetrics {
  const reg = createRegistry();
  const settled = reg.counter('wmsbridge_records_settled_total', 'Records settled by this process, by target and outcome');
  const runs = reg.counter('wmsbridge_runs_total', 'Batches processed by this process, by exit status');
  const lastRun = reg.gauge('wmsbridge_last_run_timestamp_seconds', 'End of the last batch (unix time)');
  const filesG = reg.gauge('wmsbridge_files', 'Files in the journal by status');
  const recordsG = reg.gauge('wmsbridge_records', 'Records in the journal by status (held and in_doubt need a person)');
  const queuedG = reg.gauge('wmsbridge_files_queued', 'Ready files waiting for the next batch');
  const requests = reg.gauge('wmsbridge_wms_requests_total', 'HTTP requests made to the WMS');
  const retries = reg.gauge('wmsbridge_wms_retries_total', 'Retried WMS requests');
  const refreshes = reg.gauge('wmsbridge_wms_token_refreshes_total', 'Token refreshes');
  const failures = reg.gauge('wmsbridge_wms_failures_total', 'WMS calls that failed after retries');
  let latency: ReturnType<typeof reg.histogram> | null = null;
  return {
    recordSettled(target, outcome) {
      settled.inc({ target, outcome });
    },
    recordRun(summary) {
      runs.inc({ status: summary.exitCode === 0 ? 'ok' : summary.exitCode === 1 ? 'attention' : 'fatal' });
      lastRun.set({}, Math.round(Date.parse(summary.finishedAt) / 1000));
    },
    render(state) {
      filesG.reset();
      const byStatus: Record<string, number> = { claimed: 0, mapped: 0, done: 0, error: 0, duplicate: 0 };
      for (const f of state.files) byStatus[f.status] = (byStatus[f.status] ?? 0) + 1;
      for (const [status, n] of Object.entries(byStatus)) filesG.set({ status }, n);
      recordsG.reset();
      for (const [status, n] of Object.entries(state.recordsByStatus)) recordsG.set({ status }, n ?? 0);
      queuedG.set({}, state.queued);
      const c = state.client;
      requests.set({}, c.requests);
      retries.set({}, c.retries);
      refreshes.set({}, c.refreshes);
      failures.set({}, c.failures);
      if (!latency && c.latencyBucketsMs.length) latency = reg.histogram('wmsbridge_wms_request_duration_ms', 'WMS request latency in milliseconds', c.latencyBucketsMs);
      latency?.load({}, c.latencyCounts, c.latencySumMs);
      return reg.render();
    },
  };
}
