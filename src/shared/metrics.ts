/**
 * A tiny Prometheus registry (text exposition format 0.0.4): counters, gauges and histograms with
 * labels. No dependency: /metrics in watch mode is the only consumer.
 */
type Labels = Record<string, string>;

function escapeLabel(v: string): string {
  return v.replace(/\\/g, '\\\\').replace(/\n/g, '\\n').replace(/"/g, '\\"');
}

function labelText(labels: Labels, extra?: Labels): string {
  const all = { ...labels, ...(extra ?? {}) };
  const parts = Object.entries(all).map(([k, v]) => `${k}="${escapeLabel(v)}"`);
  return parts.length ? `{${parts.join(',')}}` : '';
}

function keyOf(labels: Labels): string {
  return JSON.stringify(Object.entries(labels).sort());
}

function fmt(n: number): string {
  if (n === Infinity) return '+Inf';
  if (n === -Infinity) return '-Inf';
  return Number.isNaN(n) ? 'NaN' : String(n);
}

interface Metric {
  render(): string;
}

export interface Counter {
  inc(labels?: Labels, by?: number): void;
}
export interface Gauge {
  set(labels: Labels, value: number): void;
  /** drops every series (a gauge recomputed from scratch) */
  reset(): void;
}
export interface Histogram {
  observe(labels: Labels, value: number): void;
  /** loads a whole histogram at once (buckets as upper bounds with per-bucket counts, not cumulative) */
  load(labels: Labels, bucketCounts: number[], sum: number): void;
}

export interface Registry {
  counter(name: string, help: string): Counter;
  gauge(name: string, help: string): Gauge;
  histogram(name: string, help: string, buckets: number[]): Histogram;
  render(): string;
}

export function createRegistry(): Registry {
  const metrics: Metric[] = [];
  const header = (name: string, help: string, type: string) => `# HELP ${name} ${help.replace(/\\/g, '\\\\').replace(/\n/g, '\\n')}\n# TYPE ${name} ${type}\n`;
  return {
    counter(name, help) {
      const series = new Map<string, { labels: Labels; value: number }>();
      metrics.push({
        render: () => header(name, help, 'counter') + [...series.values()].map((s) => `${name}${labelText(s.labels)} ${fmt(s.value)}\n`).join(''),
      });
      return {
        inc(labels = {}, by = 1) {
          const k = keyOf(labels);
          const s = series.get(k);
          if (s) s.value += by;
          else series.set(k, { labels, value: by });
        },
      };
    },
    gauge(name, help) {
      const series = new Map<string, { labels: Labels; value: number }>();
      metrics.push({
        render: () => header(name, help, 'gauge') + [...series.values()].map((s) => `${name}${labelText(s.labels)} ${fmt(s.value)}\n`).join(''),
      });
      return {
        set(labels, value) {
          series.set(keyOf(labels), { labels, value });
        },
        reset() {
          series.clear();
        },
      };
    },
    histogram(name, help, buckets) {
      const bounds = [...buckets].sort((a, b) => a - b);
      const series = new Map<string, { labels: Labels; counts: number[]; sum: number; count: number }>();
      const get = (labels: Labels) => {
        const k = keyOf(labels);
        let s = series.get(k);
        if (!s) series.set(k, (s = { labels, counts: new Array<number>(bounds.length + 1).fill(0), sum: 0, count: 0 }));
        return s;
      };
      metrics.push({
        render: () => {
          let out = header(name, help, 'histogram');
          for (const s of series.values()) {
            let cum = 0;
            bounds.forEach((b, i) => {
              cum += s.counts[i] ?? 0;
              out += `${name}_bucket${labelText(s.labels, { le: fmt(b) })} ${cum}\n`;
            });
            out += `${name}_bucket${labelText(s.labels, { le: '+Inf' })} ${s.count}\n`;
            out += `${name}_sum${labelText(s.labels)} ${fmt(s.sum)}\n${name}_count${labelText(s.labels)} ${s.count}\n`;
          }
          return out;
        },
      });
      return {
        observe(labels, value) {
          const s = get(labels);
          const i = bounds.findIndex((b) => value <= b);
          s.counts[i < 0 ? bounds.length : i]!++;
          s.sum += value;
          s.count++;
        },
        load(labels, bucketCounts, sum) {
          const s = get(labels);
          s.counts = bounds.map((_, i) => bucketCounts[i] ?? 0).concat([bucketCounts[bounds.length] ?? 0]);
          s.sum = sum;
          s.count = bucketCounts.reduce((a, b) => a + b, 0);
        },
      };
    },
    render: () => metrics.map((m) => m.render()).join(''),
  };
}
