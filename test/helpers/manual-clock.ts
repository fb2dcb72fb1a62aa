/**
 * A clock the test moves itself (src/wms/clock.ts): the WMS client's token expiry, Retry-After window and retry
 * sleeps read it instead of real time, so a test advances it instead of sleeping. Starts at the real time;
 * `advance` moves the wall and the monotonic readings together and wakes the sleeps it passes. The sandbox
 * reads the same clock when started with `now: clock.now` (its token expiry).
 */
import type { Clock } from '../../src/wms/clock.js';

interface Sleeper {
  at: number;
  wake: () => void;
}

export interface ManualClock extends Clock {
  /** moves the clock `ms` forward, wakes the sleeps due, and lets the woken code run (one turn of the loop) */
  advance(ms: number): Promise<void>;
  /** sleeps not yet due */
  sleeping(): number;
  /** resolves once a sleep is pending (at once when one is): the event a test waits for instead of a time */
  nextSleep(): Promise<void>;
}

export function manualClock(): ManualClock {
  const wallStart = Date.now();
  const monoStart = performance.now();
  let elapsed = 0;
  let sleepers: Sleeper[] = [];
  let onSleep: Array<() => void> = [];
  const turn = (): Promise<void> => new Promise((r) => setImmediate(r));
  return {
    now: () => wallStart + elapsed,
    monotonic: () => monoStart + elapsed,
    sleep(ms: number, signal?: AbortSignal): Promise<void> {
      return new Promise((resolve, reject) => {
        if (ms <= 0) return resolve();
        const onAbort = () => {
          sleepers = sleepers.filter((s) => s !== sleeper);
          reject(signal?.reason);
        };
        const sleeper: Sleeper = {
          at: monoStart + elapsed + ms,
          wake: () => {
            signal?.removeEventListener('abort', onAbort);
            resolve();
          },
        };
        sleepers.push(sleeper);
        signal?.addEventListener('abort', onAbort, { once: true });
        const waiting = onSleep;
        onSleep = [];
        for (const w of waiting) w();
      });
    },
    async advance(ms: number): Promise<void> {
      elapsed += ms;
      const now = monoStart + elapsed;
      const due = sleepers.filter((s) => s.at <= now);
      sleepers = sleepers.filter((s) => s.at > now);
      for (const s of due) s.wake();
      await turn();
    },
    sleeping: () => sleepers.length,
    nextSleep: () => (sleepers.length > 0 ? Promise.resolve() : new Promise<void>((r) => onSleep.push(r))),
  };
}
