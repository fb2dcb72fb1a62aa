/**
 * Latency figures a component keeps itself (the journal's commits, the WMS calls), apart from the Prometheus
 * registry (shared/metrics.ts) so that recording them does not load prom-client.
 */

/**
 * Latency kept as per-bucket counts (cheap to update on a hot path, no registry needed), for a component
 * that reports its own figures: exposed in seconds by MetricsRegistry.latencyHistogram.
 */
export interface LatencySnapshot {
  /** upper bounds in ms */
  bucketsMs: number[];
  /** counts per bucket; one more than bucketsMs (the last one is above every bound) */
  counts: number[];
  sumMs: number;
  count: number;
  maxMs: number;
}

export interface LatencyRecorder {
  observe(ms: number): void;
  snapshot(): LatencySnapshot;
}

export function createLatencyRecorder(bucketsMs: readonly number[]): LatencyRecorder {
  const counts = new Array<number>(bucketsMs.length + 1).fill(0);
  let sumMs = 0;
  let count = 0;
  let maxMs = 0;
  return {
    observe(ms) {
      sumMs += ms;
      count++;
      if (ms > maxMs) maxMs = ms;
      let i = 0;
      while (i < bucketsMs.length && ms > bucketsMs[i]!) i++;
      counts[i]!++;
    },
    snapshot: () => ({ bucketsMs: [...bucketsMs], counts: [...counts], sumMs, count, maxMs }),
  };
}
