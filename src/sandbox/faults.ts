/**
 * Fault injection of the sandbox's API (never on /__sandbox): the added latency (the service time: the
 * answer leaves latencyMs after the request arrived, reading the body included, so a client measured against
 * it sees the configured latency, not latency + overhead), and one draw per request that decides a
 * connection reset (before or after applying; `resetAfterRate`: only after applying), a 429 with Retry-After, or
 * a 500.
 */
import { z } from 'zod';
import { ConfigError } from '../shared/errors.js';
import type { Logger } from '../shared/logger.js';
import { isMutating } from './api.js';
import { fail, type Reply } from './http-util.js';
import { createRng } from './ids.js';
import type { Found } from './routes.js';
import type { SandboxState } from './state.js';
import type { SandboxFaults } from './types.js';
import { formatProblems, zodProblems } from './validate.js';

/**
 * Requests arriving this soon after an injected 429 left do not count in SandboxStats.retryAfter.inside: a
 * client in another process may have written them before the 429 reached it. `strict` counts them too.
 */
export const RETRY_AFTER_GRACE_MS = 250;

/** the Retry-After windows kept for GET /__sandbox/retry-after */
const WINDOWS_KEPT = 1000;

/**
 * One Retry-After window as the WMS sees it: from when the 429 was written (`from`, ms on the sandbox's
 * clock, performance.now()) to `until`, with every API request that arrived inside it (`at`: when the sandbox
 * read it, ms after `from`). A request the sandbox reads in the loop turn that wrote the 429 is not counted:
 * its bytes were in the socket before the sandbox polled after the 429 (the poll phase follows the timers
 * phase that writes answers), so its client wrote it before it could read the 429. `open` turns true in the
 * check phase of that turn. Nor is the first request of a new connection (`firstOnConnection` counts them): the
 * sandbox reads it only once it has accepted the connection, which lags its bytes by tens of ms on a busy
 * machine (measured: written 8 ms before the 429 left, read 40 ms after), so when it arrived is unknown.
 */
export interface RetryAfterWindow {
  from: number;
  until: number;
  open: boolean;
  inside: Array<{ at: number; method: string; path: string }>;
  firstOnConnection: number;
}

export const FaultsBody = z.strictObject({
  latencyMs: z.number().finite().min(0).optional(),
  latencyJitterMs: z.number().finite().min(0).optional(),
  failRate: z.number().min(0).max(1).optional(),
  rate429: z.number().min(0).max(1).optional(),
  /** the Retry-After of an injected 429, in seconds (default 1) */
  retryAfterSeconds: z.number().int().min(1).max(3600).optional(),
  resetRate: z.number().min(0).max(1).optional(),
  resetAfterRate: z.number().min(0).max(1).optional(),
  tokenTtlSeconds: z.number().finite().positive().optional(),
});

export type FaultSettings = {
  latencyMs: number;
  latencyJitterMs: number;
  failRate: number;
  rate429: number;
  retryAfterSeconds: number;
  resetRate: number;
  resetAfterRate: number;
  tokenTtlSeconds: number;
};

/** What the draw decided for one request: nothing, a reset (before applying: no answer), one after applying, or an answer. */
export type FaultDecision = { kind: 'none' } | { kind: 'reset-before' } | { kind: 'reset-after' } | { kind: 'reply'; reply: Reply };

export interface Faults {
  /** the live settings (GET /__sandbox/faults answers them) */
  readonly settings: FaultSettings;
  /** changes some settings (ConfigError when invalid) */
  set(f: SandboxFaults): void;
  /** counts a request arriving inside the Retry-After window of an injected 429 */
  arrived(at: number, method: string, path: string, firstOnConnection: boolean): void;
  /** an injected 429 was written at `at`: its Retry-After window starts */
  throttleSent(at: number): void;
  /** the last WINDOWS_KEPT Retry-After windows, oldest first */
  windows(): readonly RetryAfterWindow[];
  /** forgets the windows (sandbox reset) */
  clearWindows(): void;
  /** waits the latency (from `arrived`), then draws this request's fault */
  decide(method: string, path: string, found: Found, arrived: number): Promise<FaultDecision>;
}

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

export function createFaults(seed: string, initial: SandboxFaults, state: () => SandboxState, log: Logger): Faults {
  const settings: FaultSettings = {
    latencyMs: 0,
    latencyJitterMs: 0,
    failRate: 0,
    rate429: 0,
    retryAfterSeconds: 1,
    resetRate: 0,
    resetAfterRate: 0,
    tokenTtlSeconds: 900,
  };
  const set = (f: SandboxFaults): void => {
    const r = FaultsBody.safeParse(f);
    if (!r.success) throw new ConfigError(`sandbox: invalid faults: ${formatProblems(zodProblems(r.error))}`);
    for (const [k, v] of Object.entries(r.data)) if (v !== undefined) (settings as Record<string, number>)[k] = v;
  };
  set(initial);
  const rng = createRng(`faults:${seed}`);
  let resetCount = 0;
  // the Retry-After windows of the injected 429s, from when each 429 was written (performance.now() ms)
  let windows: RetryAfterWindow[] = [];

  return {
    settings,
    set,
    arrived(at, method, path, firstOnConnection) {
      // the latest window holding the arrival (windows overlap when 429s follow each other): counted once
      for (let i = windows.length - 1; i >= 0 && i >= windows.length - 50; i--) {
        const w = windows[i]!;
        if (!w.open || at < w.from || at >= w.until) continue;
        if (firstOnConnection) {
          w.firstOnConnection++;
          return;
        }
        const stats = (state().stats.retryAfter ??= { windows: 0, inside: 0, strict: 0 });
        stats.strict = (stats.strict ?? 0) + 1;
        if (at >= w.from + RETRY_AFTER_GRACE_MS) stats.inside++;
        w.inside.push({ at: Math.round((at - w.from) * 1000) / 1000, method, path });
        return;
      }
    },
    throttleSent(at) {
      (state().stats.retryAfter ??= { windows: 0, inside: 0, strict: 0 }).windows++;
      const w: RetryAfterWindow = { from: at, until: at + settings.retryAfterSeconds * 1000, open: false, inside: [], firstOnConnection: 0 };
      windows.push(w);
      setImmediate(() => (w.open = true));
      if (windows.length > WINDOWS_KEPT * 1.25) windows = windows.slice(-WINDOWS_KEPT);
    },
    windows: () => windows,
    clearWindows() {
      windows = [];
    },
    async decide(method, path, found, arrived) {
      const jitter = settings.latencyJitterMs > 0 ? rng() * settings.latencyJitterMs : 0;
      if (settings.latencyMs + jitter > 0) await sleep(Math.max(0, settings.latencyMs + jitter - (performance.now() - arrived)));
      const stats = state().stats;
      const draw = rng();
      if (draw < settings.resetRate) {
        if (isMutating(method) && found && 'route' in found && !found.route.anonymous && resetCount++ % 2 === 1) return { kind: 'reset-after' };
        stats.faults.resetBefore++;
        log.debug({ method, path }, 'fault: connection reset before applying');
        return { kind: 'reset-before' };
      }
      const changes = isMutating(method) && found && 'route' in found && !found.route.anonymous;
      if (draw < settings.resetRate + settings.resetAfterRate) {
        // a reset after applying: the WMS did the work, the client gets no answer (a read has nothing to apply)
        if (changes) return { kind: 'reset-after' };
        stats.faults.resetBefore++;
        return { kind: 'reset-before' };
      }
      const rest = draw - settings.resetAfterRate;
      if (rest < settings.resetRate + settings.rate429) {
        stats.faults.rate429++;
        // the window opens when the 429 is written (throttleSent), not now: a request arriving meanwhile
        // was in flight before the client could know
        return { kind: 'reply', reply: fail(429, 'too many requests (injected)', null, { 'retry-after': String(settings.retryAfterSeconds) }) };
      }
      if (rest < settings.resetRate + settings.rate429 + settings.failRate) {
        stats.faults.failRate++;
        return { kind: 'reply', reply: fail(500, 'internal error (injected)') };
      }
      return { kind: 'none' };
    },
  };
}
