/**
 * The WMS's availability as one client sees it: a circuit breaker over connection failures.
 *
 * A run of `threshold` consecutive attempts that got no answer at all (connection refused or reset,
 * timeout, DNS) opens the circuit: every call then fails at once with E_WMS_NETWORK / CIRCUIT_OPEN
 * (nothing is sent, so nothing is in doubt), instead of each record burning its own retries against a WMS
 * that is down. After `cooldownMs` one call is let through as a probe: an answer closes the circuit, a
 * failure opens it again. Any HTTP answer (even a 4xx or 5xx) proves the WMS reachable and resets the run.
 *
 * `unavailableSince` is the time of the first failure of the current run of failures, kept until an
 * answer arrives: what the run report shows ("the WMS was unreachable from hh:mm").
 */

export interface CircuitBreakerOptions {
  /** consecutive connection failures that open the circuit @default 5 */
  threshold?: number;
  /** how long the circuit stays open before one probe is let through @default 30000 */
  cooldownMs?: number;
  now?: () => number;
}

export interface WmsAvailability {
  /** the circuit is open: calls fail at once without reaching the WMS */
  circuitOpen: boolean;
  /** ISO time of the first connection failure not followed by an answer yet; null when the WMS answers */
  unavailableSince: string | null;
  /** consecutive connection failures so far */
  consecutiveFailures: number;
}

export interface CircuitBreaker {
  /** whether a call may go out now (false: the circuit is open and no probe is due) */
  allow(): boolean;
  /** an attempt got an HTTP answer */
  answered(): void;
  /** an attempt got no answer (connection refused/reset, timeout) */
  connectionFailed(): void;
  state(): WmsAvailability;
}

export function createCircuitBreaker(options: CircuitBreakerOptions = {}): CircuitBreaker {
  const threshold = options.threshold ?? 5;
  const cooldownMs = options.cooldownMs ?? 30_000;
  if (!Number.isInteger(threshold) || threshold < 1) throw new RangeError(`circuit breaker threshold must be an integer >= 1 (got ${threshold})`);
  const now = options.now ?? Date.now;
  let failures = 0;
  let since: number | null = null;
  let openedAt: number | null = null;
  let probing = false;
  return {
    allow() {
      if (openedAt === null) return true;
      if (probing) return false;
      if (now() - openedAt >= cooldownMs) {
        probing = true; // one probe at a time; its outcome closes or re-opens the circuit
        return true;
      }
      return false;
    },
    answered() {
      failures = 0;
      since = null;
      openedAt = null;
      probing = false;
    },
    connectionFailed() {
      failures++;
      since ??= now();
      if (failures >= threshold || probing) openedAt = now();
      probing = false;
    },
    state() {
      return {
        circuitOpen: openedAt !== null,
        unavailableSince: since === null ? null : new Date(since).toISOString(),
        consecutiveFailures: failures,
      };
    },
  };
}
