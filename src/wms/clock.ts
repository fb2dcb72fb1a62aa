/**
 * Time as the WMS client reads it: a token's expiry and age (auth.ts, call-policy.ts), the Retry-After
 * window and the sleeps before a retry (call-policy.ts), the circuit breaker's cool-down (breaker.ts).
 * Production uses `realClock` (Date.now, performance.now and setTimeout, as before the clock existed); a test
 * hands the client a clock it advances itself (test/helpers/manual-clock.ts) instead of sleeping. The
 * transport's per-attempt timeout, the token bucket and the latency histogram stay on real time: they
 * measure or bound the wire, not the WMS's instructions.
 */
export interface Clock {
  /** wall-clock milliseconds since the epoch (token expiry, an HTTP-date Retry-After, the breaker) */
  now(): number;
  /** monotonic milliseconds (the Retry-After gate, a token's age) */
  monotonic(): number;
  /** resolves after `ms` of this clock; rejects with the signal's reason when it aborts first */
  sleep(ms: number, signal?: AbortSignal): Promise<void>;
}

function realSleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (ms <= 0) return resolve();
    const t = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    const onAbort = () => {
      clearTimeout(t);
      reject(signal?.reason);
    };
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}

export const realClock: Clock = {
  now: () => Date.now(),
  monotonic: () => performance.now(),
  sleep: realSleep,
};
