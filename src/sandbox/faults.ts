/**
 * Fault injection of the sandbox's API (never on /__sandbox): the added latency (the service time: the
 * answer leaves latencyMs after the request arrived, reading the body included, so a client measured against
 * it sees the configured latency, not latency + overhead), and one draw per request that decides a
 * connection reset (before or after applying), a 429 with Retry-After, or a 500.
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
 * Requests arriving this soon after an injected 429 do not count as inside its Retry-After window: the
 * client may have sent them before the 429 reached it (see SandboxStats.retryAfter).
 */
export const RETRY_AFTER_GRACE_MS = 250;

export const FaultsBody = z.strictObject({
  latencyMs: z.number().finite().min(0).optional(),
  latencyJitterMs: z.number().finite().min(0).optional(),
  failRate: z.number().min(0).max(1).optional(),
  rate429: z.number().min(0).max(1).optional(),
  resetRate: z.number().min(0).max(1).optional(),
  tokenTtlSeconds: z.number().finite().positive().optional(),
});

export type FaultSettings = { latencyMs: number; latencyJitterMs: number; failRate: number; rate429: number; resetRate: number; tokenTtlSeconds: number };

/** What the draw decided for one request: nothing, a reset (before applying: no answer), one after applying, or an answer. */
export type FaultDecision = { kind: 'none' } | { kind: 'reset-before' } | { kind: 'reset-after' } | { kind: 'reply'; reply: Reply };

export interface Faults {
  /** the live settings (GET /__sandbox/faults answers them) */
  readonly settings: FaultSettings;
  /** changes some settings (ConfigError when invalid) */
  set(f: SandboxFaults): void;
  /** counts a request arriving inside the Retry-After window of the last injected 429 */
  arrived(at: number): void;
  /** waits the latency (from `arrived`), then draws this request's fault */
  decide(method: string, path: string, found: Found, arrived: number): Promise<FaultDecision>;
}

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

export function createFaults(seed: string, initial: SandboxFaults, state: () => SandboxState, log: Logger): Faults {
  const settings: FaultSettings = { latencyMs: 0, latencyJitterMs: 0, failRate: 0, rate429: 0, resetRate: 0, tokenTtlSeconds: 900 };
  const set = (f: SandboxFaults): void => {
    const r = FaultsBody.safeParse(f);
    if (!r.success) throw new ConfigError(`sandbox: invalid faults: ${formatProblems(zodProblems(r.error))}`);
    for (const [k, v] of Object.entries(r.data)) if (v !== undefined) (settings as Record<string, number>)[k] = v;
  };
  set(initial);
  const rng = createRng(`faults:${seed}`);
  let resetCount = 0;
  // the Retry-After window of the last injected 429 (performance.now() ms)
  let retryAfterFrom = -Infinity;
  let retryAfterUntil = -Infinity;

  return {
    settings,
    set,
    arrived(at) {
      if (at >= retryAfterFrom + RETRY_AFTER_GRACE_MS && at < retryAfterUntil) (state().stats.retryAfter ??= { windows: 0, inside: 0 }).inside++;
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
      if (draw < settings.resetRate + settings.rate429) {
        stats.faults.rate429++;
        (stats.retryAfter ??= { windows: 0, inside: 0 }).windows++;
        retryAfterFrom = performance.now();
        retryAfterUntil = retryAfterFrom + 1000;
        return { kind: 'reply', reply: fail(429, 'too many requests (injected)', null, { 'retry-after': '1' }) };
      }
      if (draw < settings.resetRate + settings.rate429 + settings.failRate) {
        stats.faults.failRate++;
        return { kind: 'reply', reply: fail(500, 'internal error (injected)') };
      }
      return { kind: 'none' };
    },
  };
}
