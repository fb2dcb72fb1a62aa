/**
 * A tiny Prometheus registry (text exposition format 0.0.4), no dependency: counters, gauges and
 * histograms with labels; render() gives the body for GET /metrics.
 */

export type Labels = Record<string, string | number>;

const NAME = /^[a-zA-Z_:][a-zA-Z0-9_:]*$/;
const LABEL = /^[a-zA-Z_][a-zA-Z0-9_]*$/;

/** Label values: backslash, double quote and line feed are escaped. */
export function escapeLabelValue(v: string): string {
  return v.replace(/\\/g, '\\\\').replace(/"/g, '\\"').replace(/\n/g, '\\n');
}
/** HELP text: backslash and line feed are escaped. */
export function escapeHelp(v: string): string {
  return v.replace(/\\/g, '\\\\').replace(/\n/g, '\\n');
}
export function formatMetricValue(n: number): string {
  if (Number.isNaN(n)) return 'NaN';
  if (n === Infinity) return '+Inf';
  if (n === -Infinity) return '-Inf';
  return String(n);
}

function labelKey(names: readonly string[], labels: Labels = {}): string[] {
  for (const k of Object.keys(labels)) if (!names.includes(k)) throw new Error(`metrics: unknown label "${k}"`);
  return names.map((n) => String(labels[n] ?? ''));
}
function renderLabels(names: readonly string[], values: readonly string[], extra?: [string, string]): string {
  const parts = names.map((n, i) => `${n}="${escapeLabelValue(values[i] ?? '')}"`);
  if (extra) parts.push(`${extra[0]}="${escapeLabelValue(extra[1])}"`);
  return parts.length ? `{${parts.join(',')}}` : '';
}

export interface Counter { inc(labels?: Labels, by?: number): void; get(labels?: Labels): number }
export interface Gauge { set(value: number, labels?: Labels): void; inc(labels?: Labels, by?: number): void; dec(labels?: Labels, by?: number): void; get(labels?: Labels): number }
export interface Histogram { observe(value: number, labels?: Labels): void }

interface Metric { name: string; render(): string[] }

export const DEFAULT_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];

export interface MetricsRegistry {
  counter(name: string, help: string, labelNames?: readonly string[]): Counter;
  gauge(name: string, help: string, labelNames?: readonly string[]): Gauge;
  histogram(name: string, help: string, buckets?: readonly number[], labelNames?: readonly string[]): Histogram;
  render(): string;
  /** content type for the HTTP response */
  readonly contentType: string;
}

export function createMetricsRegistry(): MetricsRegistry {
  const metrics = new Map<string, Metric>();
  const check = (name: string, labelNames: readonly string[]): void => {
    if (!NAME.test(name)) throw new Error(`metrics: invalid metric name "${name}"`);
    if (metrics.has(name)) throw new Error(`metrics: "${name}" is already registered`);
    for (const l of labelNames) if (!LABEL.test(l) || l.startsWith('__') || l === 'le') throw new Error(`metrics: invalid label name "${l}"`);
  };
  const header = (name: string, help: string, type: string): string[] => [`# HELP ${name} ${escapeHelp(help)}`, `# TYPE ${name} ${type}`];

  function scalar(name: string, help: string, labelNames: readonly string[], type: 'counter' | 'gauge'): Counter & Gauge {
    check(name, labelNames);
    const values = new Map<string, { lv: string[]; v: number }>();
    const slot = (labels?: Labels): { lv: string[]; v: number } => {
      const lv = labelKey(labelNames, labels);
      const k = JSON.stringify(lv);
      let s = values.get(k);
      if (!s) values.set(k, (s = { lv, v: 0 }));
      return s;
    };
    metrics.set(name, {
      name,
      render: () => {
        const lines = header(name, help, type);
        if (values.size === 0 && labelNames.length === 0) lines.push(`${name} 0`);
        for (const s of values.values()) lines.push(`${name}${renderLabels(labelNames, s.lv)} ${formatMetricValue(s.v)}`);
        return lines;
      },
    });
    return {
      inc(labels, by = 1) {
        if (type === 'counter' && by < 0) throw new Error(`metrics: counter ${name} cannot decrease`);
        slot(labels).v += by;
      },
      dec(labels, by = 1) {
        slot(labels).v -= by;
      },
      set(value, labels) {
        slot(labels).v = value;
      },
      get(labels) {
        return values.get(JSON.stringify(labelKey(labelNames, labels)))?.v ?? 0;
      },
    };
  }

  return {
    contentType: 'text/plain; version=0.0.4; charset=utf-8',
    counter: (name, help, labelNames = []) => {
      const c = scalar(name, help, labelNames, 'counter');
      return { inc: c.inc, get: c.get };
    },
    gauge: (name, help, labelNames = []) => scalar(name, help, labelNames, 'gauge'),
    histogram(name, help, buckets = DEFAULT_BUCKETS, labelNames = []) {
      check(name, labelNames);
      const bs = [...buckets].filter((b) => Number.isFinite(b)).sort((a, b) => a - b);
      const series = new Map<string, { lv: string[]; counts: number[]; sum: number; count: number }>();
      metrics.set(name, {
        name,
        render: () => {
          const lines = header(name, help, 'histogram');
          const all = series.size === 0 && labelNames.length === 0 ? [{ lv: [], counts: bs.map(() => 0), sum: 0, count: 0 }] : [...series.values()];
          for (const s of all) {
            // buckets are stored per interval and rendered cumulative
            let cum = 0;
            bs.forEach((b, i) => {
              cum += s.counts[i] ?? 0;
              lines.push(`${name}_bucket${renderLabels(labelNames, s.lv, ['le', formatMetricValue(b)])} ${cum}`);
            });
            lines.push(`${name}_bucket${renderLabels(labelNames, s.lv, ['le', '+Inf'])} ${s.count}`);
            lines.push(`${name}_sum${renderLabels(labelNames, s.lv)} ${formatMetricValue(s.sum)}`);
            lines.push(`${name}_count${renderLabels(labelNames, s.lv)} ${s.count}`);
          }
          return lines;
        },
      });
      return {
        observe(value, labels) {
          const lv = labelKey(labelNames, labels);
          const k = JSON.stringify(lv);
          let s = series.get(k);
          if (!s) series.set(k, (s = { lv, counts: bs.map(() => 0), sum: 0, count: 0 }));
          const i = bs.findIndex((b) => value <= b);
          if (i >= 0) s.counts[i]! += 1;
          s.sum += value;
          s.count += 1;
        },
      };
    },
    render() {
      const lines: string[] = [];
      for (const m of metrics.values()) lines.push(...m.render());
      return lines.length ? `${lines.join('\n')}\n` : '';
    },
  };
}

/**
 * Latency kept as per-bucket counts (cheap to update on a hot path, no registry needed), for a component
 * that reports its own figures: rendered as a cumulative Prometheus histogram by renderLatencyHistogram.
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

/** A LatencySnapshot as a cumulative histogram named `name` (empty when nothing was observed yet). */
export function renderLatencyHistogram(name: string, help: string, s: LatencySnapshot): string {
  if (s.bucketsMs.length === 0) return '';
  const lines = [`# HELP ${name} ${escapeHelp(help)}`, `# TYPE ${name} histogram`];
  let cum = 0;
  s.bucketsMs.forEach((le, i) => {
    cum += s.counts[i] ?? 0;
    lines.push(`${name}_bucket{le="${formatMetricValue(le)}"} ${cum}`);
  });
  lines.push(`${name}_bucket{le="+Inf"} ${s.count}`, `${name}_sum ${formatMetricValue(s.sumMs)}`, `${name}_count ${s.count}`);
  return `${lines.join('\n')}\n`;
}
