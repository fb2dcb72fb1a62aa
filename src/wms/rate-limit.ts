/**
 * Client-side limits: a concurrency cap (semaphore) and a token bucket for requests per second.
 * Both are FIFO so a steady stream of calls cannot starve an early one.
 */

/** A caller waiting in a FIFO queue; an abort takes it out of the queue and rejects it. */
interface Waiter {
  resolve: () => void;
  reject: (e: unknown) => void;
  signal?: AbortSignal;
  onAbort?: () => void;
}

function enqueue(queue: Waiter[], resolve: () => void, reject: (e: unknown) => void, signal: AbortSignal | undefined): void {
  const entry: Waiter = { resolve, reject };
  if (signal) {
    entry.signal = signal;
    entry.onAbort = () => {
      const i = queue.indexOf(entry);
      if (i >= 0) queue.splice(i, 1);
      reject(signal.reason);
    };
    signal.addEventListener('abort', entry.onAbort, { once: true });
  }
  queue.push(entry);
}

export interface Semaphore {
  acquire(signal?: AbortSignal): Promise<void>;
  release(): void;
  readonly inFlight: number;
  readonly waiting: number;
  /** the current limit (adaptive concurrency changes it between 1 and the initial max) */
  readonly limit: number;
  /** sets the limit; a lower one takes effect as requests finish (nothing in flight is cancelled) */
  setLimit(n: number): void;
}

export function createSemaphore(max: number): Semaphore {
  if (!Number.isInteger(max) || max < 1) throw new RangeError(`concurrency must be an integer >= 1 (got ${max})`);
  let inFlight = 0;
  let limit = max;
  const queue: Waiter[] = [];
  const wake = (): void => {
    while (inFlight < limit && queue.length > 0) {
      const next = queue.shift()!;
      if (next.signal && next.onAbort) next.signal.removeEventListener('abort', next.onAbort);
      inFlight++;
      next.resolve();
    }
  };
  return {
    get inFlight() {
      return inFlight;
    },
    get waiting() {
      return queue.length;
    },
    get limit() {
      return limit;
    },
    setLimit(n: number): void {
      limit = Math.max(1, Math.min(max, Math.floor(n)));
      wake();
    },
    acquire(signal?: AbortSignal): Promise<void> {
      if (signal?.aborted) return Promise.reject(signal.reason);
      if (inFlight < limit && queue.length === 0) {
        inFlight++;
        return Promise.resolve();
      }
      return new Promise<void>((resolve, reject) => {
        enqueue(queue, resolve, reject, signal);
      });
    },
    release(): void {
      if (inFlight > limit) {
        // the limit was lowered: this slot is not handed on
        inFlight--;
        return;
      }
      const next = queue.shift();
      if (next) {
        if (next.signal && next.onAbort) next.signal.removeEventListener('abort', next.onAbort);
        // the slot passes straight to the next waiter: inFlight is unchanged
        next.resolve();
        return;
      }
      inFlight = Math.max(0, inFlight - 1);
    },
  };
}

export interface TokenBucket {
  /** resolves when a token is available (immediately when the bucket has one) */
  take(signal?: AbortSignal): Promise<void>;
  close(): void;
}

export interface TokenBucketOptions {
  ratePerSecond: number;
  /** bucket size @default max(1, ratePerSecond) (one second's worth) */
  burst?: number;
  now?: () => number;
}

/**
 * Token bucket: `ratePerSecond` tokens per second, at most `burst` stored. Waiters are served in order;
 * one timer at a time wakes the head of the queue.
 */
export function createTokenBucket(options: TokenBucketOptions): TokenBucket {
  const rate = options.ratePerSecond;
  if (!(rate > 0) || !Number.isFinite(rate)) throw new RangeError(`requestsPerSecond must be a positive number (got ${rate})`);
  const burst = Math.max(1, options.burst ?? rate);
  const now = options.now ?? (() => performance.now());
  let tokens = burst;
  let last = now();
  let timer: NodeJS.Timeout | undefined;
  let closed = false;
  const queue: Waiter[] = [];

  const refill = () => {
    const t = now();
    tokens = Math.min(burst, tokens + ((t - last) / 1000) * rate);
    last = t;
  };
  const pump = () => {
    timer = undefined;
    refill();
    while (queue.length > 0 && tokens >= 1) {
      tokens -= 1;
      const w = queue.shift()!;
      if (w.signal && w.onAbort) w.signal.removeEventListener('abort', w.onAbort);
      w.resolve();
    }
    if (queue.length > 0 && !closed) {
      const waitMs = Math.max(1, Math.ceil(((1 - tokens) / rate) * 1000));
      timer = setTimeout(pump, waitMs);
    }
  };

  return {
    take(signal?: AbortSignal): Promise<void> {
      if (closed) return Promise.reject(new Error('rate limiter closed'));
      if (signal?.aborted) return Promise.reject(signal.reason);
      refill();
      if (queue.length === 0 && tokens >= 1) {
        tokens -= 1;
        return Promise.resolve();
      }
      return new Promise<void>((resolve, reject) => {
        enqueue(queue, resolve, reject, signal);
        if (!timer) pump();
      });
    },
    close(): void {
      closed = true;
      if (timer) clearTimeout(timer);
      timer = undefined;
      for (const w of queue.splice(0)) w.reject(new Error('rate limiter closed'));
    },
  };
}
