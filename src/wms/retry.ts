/**
 * Retry decisions: one pure function, tested without a network (test/unit/wms-retry.test.ts).
 *
 * Rules (docs/CLIENT.md "Retries and idempotency"):
 * - never: validation (400/422), auth (401/403, after the one replay the client does itself), a response
 *   that does not fit the schema, other 4xx, or when the retry budget is spent;
 * - 429, 503 and 408: the server answered and refused, nothing took effect: retried for every method,
 *   honouring Retry-After (seconds or HTTP date) even beyond maxDelayMs, up to 60 s;
 * - other 5xx: retried for idempotent calls; for non-idempotent calls only when `retryPostOn5xx`
 *   (default true: a 5xx is a completed answer saying the server failed). 502 and 504 to a non-idempotent
 *   call are never retried: a gateway answered, and the upstream may have applied (or still be applying) it;
 * - network errors and timeouts: retried for idempotent calls; for non-idempotent calls only when the
 *   request provably did not reach the server (`mayHaveReachedServer === false`).
 * Delays: exponential backoff with full jitter: random() * min(maxDelayMs, baseDelayMs * 2^(attempt-1)).
 */
import { WmsError, WmsErrorCode } from './errors.js';

export interface RetryPolicy {
  /** retries after the first attempt @default 5 */
  retries: number;
  /** @default 200 */
  baseDelayMs: number;
  /** @default 10000 */
  maxDelayMs: number;
}

export const DEFAULT_RETRY_POLICY: Readonly<RetryPolicy> = { retries: 5, baseDelayMs: 200, maxDelayMs: 10_000 };

/** Retry-After is honoured beyond maxDelayMs, but never beyond this. */
export const MAX_RETRY_AFTER_MS = 60_000;

export interface RetryDecisionOptions {
  /** overrides the method's default idempotency (GET, HEAD, PUT, DELETE, OPTIONS are idempotent) */
  idempotent?: boolean;
  /** retry a 5xx (other than 504) answered to a non-idempotent call @default true */
  retryPostOn5xx?: boolean;
  /** random source in [0, 1) for the jitter @default Math.random */
  random?: () => number;
}

const IDEMPOTENT_METHODS = new Set(['GET', 'HEAD', 'PUT', 'DELETE', 'OPTIONS']);

export function isIdempotent(method: string, override?: boolean): boolean {
  return override ?? IDEMPOTENT_METHODS.has(method.toUpperCase());
}

/** Full-jitter exponential backoff for the given attempt (1 = the first attempt failed). */
export function backoffDelay(attempt: number, policy: RetryPolicy, random: () => number = Math.random): number {
  const exp = policy.baseDelayMs * 2 ** Math.max(0, attempt - 1);
  const cap = Math.min(policy.maxDelayMs, exp);
  return Math.floor(random() * cap);
}

/**
 * Parses a Retry-After header: delay-seconds (non-negative integer) or an HTTP date. Returns ms, or
 * undefined when absent or unparsable. A date in the past gives 0.
 */
export function parseRetryAfter(value: string | string[] | undefined | null, nowMs: number = Date.now()): number | undefined {
  const raw = Array.isArray(value) ? value[0] : value;
  if (raw === undefined || raw === null) return undefined;
  const v = raw.trim();
  if (v === '') return undefined;
  if (/^\d+$/.test(v)) return Number(v) * 1000;
  if (/^[+-]?\d*\.?\d+$/.test(v)) return undefined; // negative or fractional: not valid delay-seconds
  const at = Date.parse(v);
  if (Number.isNaN(at)) return undefined;
  return Math.max(0, at - nowMs);
}

/** The status a decision is based on: HTTP status, or the envelope code under an HTTP 2xx. */
function effectiveStatus(err: WmsError): number | undefined {
  if (err.httpStatus === undefined) return undefined;
  if (err.httpStatus >= 200 && err.httpStatus < 300) return err.envelopeCode;
  return err.httpStatus;
}

/**
 * Decides whether the failed attempt number `attempt` (1-based) of a call should be retried, and after
 * how long. Returns the delay in ms, or undefined to give up. Pure (apart from `opts.random`).
 */
export function decideRetry(err: unknown, attempt: number, policy: RetryPolicy, method: string, opts: RetryDecisionOptions = {}): number | undefined {
  if (!(err instanceof WmsError)) return undefined;
  if (attempt > policy.retries) return undefined;
  const random = opts.random ?? Math.random;
  const idempotent = isIdempotent(method, opts.idempotent);

  switch (err.code) {
    case WmsErrorCode.VALIDATION:
    case WmsErrorCode.AUTH:
    case WmsErrorCode.RESPONSE:
      return undefined;
    case WmsErrorCode.NETWORK:
    case WmsErrorCode.TIMEOUT:
      if (!idempotent && err.mayHaveReachedServer) return undefined;
      return backoffDelay(attempt, policy, random);
    default:
      break;
  }

  const status = effectiveStatus(err);
  if (status === undefined) return undefined;
  if (status === 429 || status === 503 || status === 408) {
    if (err.retryAfterMs !== undefined) return Math.min(err.retryAfterMs, MAX_RETRY_AFTER_MS);
    return backoffDelay(attempt, policy, random);
  }
  if (status >= 500 && status <= 599) {
    if (!idempotent) {
      if (status === 502 || status === 504) return undefined;
      if (opts.retryPostOn5xx === false) return undefined;
    }
    return backoffDelay(attempt, policy, random);
  }
  return undefined;
}
