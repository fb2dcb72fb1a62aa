/**
 * A progress line for long files on a terminal: rows, rate, ETA (when the total is known), redrawn at
 * most 10 times a second. When the stream is not a TTY (cron, systemd, a pipe) it prints nothing.
 */
export interface ProgressOptions {
  stream?: NodeJS.WriteStream;
  label: string;
  total?: number;
}

export interface Progress {
  tick(n?: number): void;
  done(): void;
}

function fmtDuration(s: number): string {
  if (!Number.isFinite(s) || s < 0) return '?';
  const m = Math.floor(s / 60);
  return m > 0 ? `${m}m${String(Math.round(s % 60)).padStart(2, '0')}s` : `${Math.round(s)}s`;
}

export function createProgress(options: ProgressOptions): Progress {
  const stream = options.stream ?? process.stderr;
  if (!stream.isTTY) return { tick() {}, done() {} };
  const t0 = performance.now();
  let count = 0;
  let lastDraw = 0;
  let drawn = false;
  const draw = (final: boolean) => {
    const now = performance.now();
    if (!final && now - lastDraw < 100) return;
    lastDraw = now;
    const secs = (now - t0) / 1000;
    const rate = secs > 0 ? count / secs : 0;
    let bar = '';
    let eta = '';
    if (options.total && options.total > 0) {
      const frac = Math.min(1, count / options.total);
      const width = 24;
      const full = Math.round(frac * width);
      bar = ` [${'#'.repeat(full)}${'.'.repeat(width - full)}] ${Math.round(frac * 100)}%`;
      eta = final ? '' : ` eta ${fmtDuration((options.total - count) / (rate || 1))}`;
    }
    const cols = stream.columns ?? 100;
    const line = `${options.label}${bar} ${count.toLocaleString('en-US')} rows ${Math.round(rate).toLocaleString('en-US')}/s${eta}`.slice(0, cols - 1);
    stream.write(`\r\x1b[2K${line}${final ? '\n' : ''}`);
    drawn = true;
  };
  return {
    tick(n = 1) {
      count += n;
      draw(false);
    },
    done() {
      if (drawn || count > 0) draw(true);
    },
  };
}
