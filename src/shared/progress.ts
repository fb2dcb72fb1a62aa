/**
 * A progress bar for long runs on a terminal: rows, rate (rows/s) and ETA, redrawn at most 10 times
 * per second. When the stream is not a TTY (cron, a log file, CI) it prints nothing at all.
 */
export interface ProgressOptions {
  /** @default process.stderr */
  stream?: NodeJS.WritableStream & { isTTY?: boolean; columns?: number };
  label: string;
  /** known total rows: enables the bar and the ETA */
  total?: number;
  /** injectable clock (ms) for tests. @default Date.now */
  now?: () => number;
}

export interface Progress {
  tick(n?: number): void;
  /** draws the final line (TTY) and stops */
  done(): void;
  readonly count: number;
}

const MIN_REDRAW_MS = 100;

export function formatEta(seconds: number): string {
  if (!Number.isFinite(seconds) || seconds < 0) return '--:--';
  const s = Math.round(seconds);
  const h = Math.floor(s / 3600);
  const m = Math.floor((s % 3600) / 60);
  const ss = String(s % 60).padStart(2, '0');
  return h > 0 ? `${h}:${String(m).padStart(2, '0')}:${ss}` : `${String(m).padStart(2, '0')}:${ss}`;
}

/** One progress line (pure, for tests). */
export function renderProgressLine(label: string, count: number, elapsedMs: number, total: number | undefined, width = 80): string {
  const rate = elapsedMs > 0 ? (count * 1000) / elapsedMs : 0;
  const rateText = `${rate >= 100 ? Math.round(rate) : rate.toFixed(1)} rows/s`;
  if (total === undefined || total <= 0) return `${label} ${count} rows ${rateText}`;
  const frac = Math.min(1, count / total);
  const eta = rate > 0 ? formatEta((total - count) / rate) : '--:--';
  const tail = ` ${count}/${total} ${(frac * 100).toFixed(0).padStart(3)}% ${rateText} ETA ${eta}`;
  const barW = Math.max(10, Math.min(40, width - label.length - tail.length - 4));
  const filled = Math.round(barW * frac);
  return `${label} [${'#'.repeat(filled)}${'-'.repeat(barW - filled)}]${tail}`;
}

export function createProgress(options: ProgressOptions): Progress {
  const stream = options.stream ?? process.stderr;
  const now = options.now ?? Date.now;
  const enabled = (stream as { isTTY?: boolean }).isTTY === true;
  const start = now();
  let count = 0;
  let lastDraw = -Infinity;
  let finished = false;
  const draw = (final: boolean): void => {
    const width = (stream as { columns?: number }).columns ?? 80;
    const line = renderProgressLine(options.label, count, now() - start, options.total, width).slice(0, Math.max(20, width - 1));
    stream.write(`\r\x1b[2K${line}${final ? '\n' : ''}`);
  };
  return {
    tick(n = 1) {
      if (finished) return;
      count += n;
      if (!enabled) return;
      const t = now();
      if (t - lastDraw >= MIN_REDRAW_MS) {
        lastDraw = t;
        draw(false);
      }
    },
    done() {
      if (finished) return;
      finished = true;
      if (enabled) draw(true);
    },
    get count() {
      return count;
    },
  };
}
