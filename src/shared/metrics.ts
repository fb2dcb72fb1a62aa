/**
 * Prometheus metrics on prom-client (the client Node operators know; its exposition passes `promtool
 * check metrics`): a registry with counters, gauges and histograms with labels, counters whose value is
 * read from a component's own running totals, histograms rendered from a component's latency buckets,
 * the process metrics (collectDefaultMetrics) and `wmsbridge_build_info`. render() gives the body for
 * GET /metrics.
 *
 * Names follow Prometheus practice: counters end in `_total`, gauges do not, units are base units
 * (`_seconds`, `_bytes`).
 */
import { collectDefaultMetrics, Counter as PromCounter, Gauge as PromGauge, Histogram as PromHistogram, Registry } from 'prom-client';
import { VERSION } from './version.js';
import type { LatencySnapshot } from './latency.js';

export type Labels = Record<string, string | number>;

export interface Counter {
  inc(labels?: Labels, by?: number): void;
}
export interface Gauge {
  set(value: number, labels?: Labels): void;
  inc(labels?: Labels, by?: number): void;
  dec(labels?: Labels, by?: number): void;
}
export interface Histogram {
  observe(value: number, labels?: Labels): void;
}

export const DEFAULT_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];

export interface MetricsRegistry {
  counter(name: string, help: string, labelNames?: readonly string[]): Counter;
  gauge(name: string, help: string, labelNames?: readonly string[]): Gauge;
  histogram(name: string, help: string, buckets?: readonly number[], labelNames?: readonly string[]): Histogram;
  /** a counter whose value is a running total kept elsewhere (read at each scrape; never decreases) */
  sourcedCounter(name: string, help: string, read: () => number | undefined): void;
  /** a histogram in seconds rendered from a component's own latency buckets in ms (read at each scrape) */
  latencyHistogram(name: string, help: string, read: () => LatencySnapshot | undefined): void;
  /** the process metrics (CPU, memory, handles, event loop, GC) and wmsbridge_build_info{version,node} */
  processMetrics(): void;
  render(): Promise<string>;
  /** content type for the HTTP response */
  readonly contentType: string;
}

/** prom-client accepts a label object or a value first; our API always takes labels first. */
const labelsOf = (labels?: Labels): Record<string, string | number> => labels ?? {};

/**
 * A histogram whose series is a LatencySnapshot (per-bucket counts in ms kept by the component on its
 * hot path), exposed in seconds. prom-client renders it like its own histograms.
 */
class SnapshotHistogram extends PromHistogram {
  constructor(
    private readonly metricName: string,
    private readonly metricHelp: string,
    private readonly read: () => LatencySnapshot | undefined,
    registry: Registry,
  ) {
    super({ name: metricName, help: metricHelp, registers: [registry] });
  }

  private series(): Array<{ value: number; labels: Record<string, string | number>; metricName: string }> {
    const s = this.read();
    if (!s || s.bucketsMs.length === 0) return [];
    const values: Array<{ value: number; labels: Record<string, string | number>; metricName: string }> = [];
    let cum = 0;
    s.bucketsMs.forEach((le, i) => {
      cum += s.counts[i] ?? 0;
      values.push({ value: cum, labels: { le: le / 1000 }, metricName: `${this.metricName}_bucket` });
    });
    values.push({ value: s.count, labels: { le: '+Inf' }, metricName: `${this.metricName}_bucket` });
    values.push({ value: s.sumMs / 1000, labels: {}, metricName: `${this.metricName}_sum` });
    values.push({ value: s.count, labels: {}, metricName: `${this.metricName}_count` });
    return values;
  }

  // what the registry renders (the text exposition calls getForPromString, JSON calls get)
  async getForPromString(): Promise<{ name: string; help: string; type: 'histogram'; values: ReturnType<SnapshotHistogram['series']>; aggregator: 'sum' }> {
    return { name: this.metricName, help: this.metricHelp, type: 'histogram', values: this.series(), aggregator: 'sum' };
  }

  override async get(): ReturnType<PromHistogram['get']> {
    return (await this.getForPromString()) as unknown as Awaited<ReturnType<PromHistogram['get']>>;
  }
}

export function createMetricsRegistry(): MetricsRegistry {
  const registry = new Registry();
  const names = (labelNames: readonly string[]): string[] => [...labelNames];
  return {
    contentType: registry.contentType,
    counter(name, help, labelNames = []) {
      const c = new PromCounter({ name, help, labelNames: names(labelNames), registers: [registry] });
      return {
        inc: (labels, by = 1) => c.inc(labelsOf(labels), by),
      };
    },
    gauge(name, help, labelNames = []) {
      const g = new PromGauge({ name, help, labelNames: names(labelNames), registers: [registry] });
      return {
        set: (value, labels) => g.set(labelsOf(labels), value),
        inc: (labels, by = 1) => g.inc(labelsOf(labels), by),
        dec: (labels, by = 1) => g.dec(labelsOf(labels), by),
      };
    },
    histogram(name, help, buckets = DEFAULT_BUCKETS, labelNames = []) {
      const h = new PromHistogram({ name, help, buckets: [...buckets], labelNames: names(labelNames), registers: [registry] });
      return { observe: (value, labels) => h.observe(labelsOf(labels), value) };
    },
    sourcedCounter(name, help, read) {
      new PromCounter({
        name,
        help,
        registers: [registry],
        collect() {
          // the source is a running total of this process: shown as it is
          this.reset();
          const v = read();
          if (v !== undefined && v > 0) this.inc(v);
        },
      });
    },
    latencyHistogram(name, help, read) {
      new SnapshotHistogram(name, help, read, registry);
    },
    processMetrics() {
      collectDefaultMetrics({ register: registry });
      // prom-client's totals of active handles, requests and resources are gauges named _total, which
      // promtool refuses; the same figures by type stay (nodejs_active_handles{type=...}, ...)
      for (const name of ['nodejs_active_handles_total', 'nodejs_active_requests_total', 'nodejs_active_resources_total']) registry.removeSingleMetric(name);
      const info = new PromGauge({
        name: 'wmsbridge_build_info',
        help: 'Always 1; the version of wmsbridge and of Node.js in labels',
        labelNames: ['version', 'node'],
        registers: [registry],
      });
      info.set({ version: VERSION, node: process.versions.node }, 1);
    },
    async render() {
      // prom-client separates metric families with an empty line; one family after the other is enough
      return (await registry.metrics()).replace(/\n{2,}/g, '\n');
    },
  };
}
