/**
 * Waits on events, not on time. A test that must see something happen waits for that thing (a log line of
 * the process, a state it can read) with a generous upper bound that only fails a broken behaviour; a test
 * that must prove something did NOT happen waits for a later positive event (the process logged that it
 * looked again and still held back) and then looks, instead of sleeping "long enough".
 */
import type { Readable } from 'node:stream';

/**
 * Checks `check` until it answers a value (not undefined/false), polling every `everyMs` (default 20): the
 * poll interval of a wait on a condition, not a guess at how long something takes. Fails with `what` (and
 * `detail()`, e.g. a log tail) after `timeoutMs` (default 30 s).
 */
export async function waitFor<T>(
  what: string,
  check: () => T | undefined | false | Promise<T | undefined | false>,
  o: { timeoutMs?: number; everyMs?: number; detail?: () => string } = {},
): Promise<T> {
  const deadline = Date.now() + (o.timeoutMs ?? 30_000);
  for (;;) {
    const v = await check();
    if (v !== undefined && v !== false) return v;
    if (Date.now() > deadline) throw new Error(`timed out after ${o.timeoutMs ?? 30_000} ms waiting for ${what}${o.detail ? `\n${o.detail()}` : ''}`);
    await new Promise((r) => setTimeout(r, o.everyMs ?? 20)); // poll interval of a wait on a condition
  }
}

/** One line of a process's log: pino's JSON object (WMSBRIDGE_LOG_PRETTY=0), or `{ msg: line }` when not JSON. */
export type LogLine = Record<string, unknown> & { msg?: string };

export interface LogWatch {
  /** every complete line so far, in order */
  readonly lines: readonly LogLine[];
  /** the last 40,000 characters, for failure messages */
  tail(): string;
  /** how many lines so far: pass it as `from` to wait only for lines logged after this moment */
  mark(): number;
  /** lines from index `from` that match */
  count(match: (l: LogLine) => boolean, from?: number): number;
  /**
   * Resolves once `n` (default 1) lines from index `from` (default 0) match, with the last of them; rejects after
   * `timeoutMs` (default 30 s) or when the stream ends first, naming `what` with the log's tail.
   */
  waitFor(what: string, match: (l: LogLine) => boolean, o?: { from?: number; n?: number; timeoutMs?: number }): Promise<LogLine>;
}

/** Follows a process's log stream (its stderr) line by line, so a test can wait for a line. */
export function watchLog(stream: Readable): LogWatch {
  const lines: LogLine[] = [];
  let partial = '';
  let tail = '';
  let ended = false;
  const listeners = new Set<() => void>();
  const notify = (): void => {
    for (const l of [...listeners]) l();
  };
  stream.on('data', (d: Buffer | string) => {
    const text = d.toString();
    tail = (tail + text).slice(-40_000);
    const parts = (partial + text).split('\n');
    partial = parts.pop() ?? '';
    for (const p of parts) {
      if (!p.trim()) continue;
      try {
        const v: unknown = JSON.parse(p);
        lines.push(v !== null && typeof v === 'object' ? (v as LogLine) : { msg: p });
      } catch {
        lines.push({ msg: p });
      }
    }
    if (parts.length) notify();
  });
  stream.on('close', () => ((ended = true), notify()));
  stream.on('end', () => ((ended = true), notify()));
  const count = (match: (l: LogLine) => boolean, from = 0): number => lines.slice(from).filter(match).length;
  return {
    lines,
    tail: () => tail,
    mark: () => lines.length,
    count,
    waitFor(what, match, o = {}) {
      const n = o.n ?? 1;
      const timeoutMs = o.timeoutMs ?? 30_000;
      return new Promise((resolve, reject) => {
        const done = (): void => {
          listeners.delete(check);
          clearTimeout(timer);
        };
        const check = (): void => {
          const found = lines.slice(o.from ?? 0).filter(match);
          if (found.length >= n) {
            done();
            resolve(found[n - 1]!);
          } else if (ended) {
            done();
            reject(new Error(`the log ended before ${what} (${found.length} of ${n} lines)\n${tail.slice(-3000)}`));
          }
        };
        const timer = setTimeout(() => {
          done();
          reject(new Error(`timed out after ${timeoutMs} ms waiting for ${what} (${count(match, o.from ?? 0)} of ${n} lines)\n${tail.slice(-3000)}`));
        }, timeoutMs);
        listeners.add(check);
        check();
      });
    },
  };
}
