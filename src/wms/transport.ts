/**
 * The client's transport: one undici `Pool` (connections = concurrency) driven through `pool.dispatch`
 * with a small handler. That is the layer `pool.request` is built on; going one level down gives the one
 * fact `request` hides: `onRequestSent`, i.e. whether the request was completely written before a
 * failure. That fact decides whether a failed POST is "in doubt" (`mayHaveReachedServer`) or provably
 * safe to resend. It also sends a body with GET (GET /open/v1/Stock/search needs one; fetch refuses it).
 *
 * One attempt = one request on the wire under the client's own timer (headers + body), with the answer
 * body bounded by `maxResponseBytes`. Policy (retries, auth, limits) is call-policy.ts.
 */
import type { Dispatcher, Pool as PoolType } from 'undici';
// the pool alone: undici's main entry also loads fetch, WebSocket and the cache (undici-pool.d.ts)
import Pool from 'undici/lib/dispatcher/pool.js';
import buildConnector from 'undici/lib/core/connect.js';

export interface TransportOptions {
  origin: string;
  /** the Pool's connections */
  connections: number;
  /** per attempt, headers + body */
  timeoutMs: number;
  maxResponseBytes: number;
  tls?: { rejectUnauthorized?: boolean; ca?: string } | undefined;
}

export interface RawResponse {
  status: number;
  headers: Record<string, string>;
  body: Buffer;
}

/** Why one attempt produced no answer; `sent`: the request had been written completely; `held`: not written at all (hold). */
export class AttemptFailure extends Error {
  constructor(
    readonly failure: unknown,
    readonly sent: boolean,
    readonly timedOut: boolean,
    readonly aborted: boolean,
    readonly held = false,
  ) {
    super('attempt failed');
  }
}

export interface Transport {
  /**
   * One attempt; rejects only with an AttemptFailure. `hold` is asked at the moment the request is about to be
   * written (undici's onConnect, after its idle-socket check): true aborts it unwritten (AttemptFailure.held),
   * so a request handed over before a 429 was read is not written inside the Retry-After window.
   */
  send(
    method: string,
    path: string,
    headers: Record<string, string>,
    body: Buffer | undefined,
    signal?: AbortSignal,
    hold?: () => boolean,
  ): Promise<RawResponse>;
  close(): Promise<void>;
}

const EMPTY = Buffer.alloc(0);

function rawHeadersToObject(raw: Buffer[] | string[] | null): Record<string, string> {
  const out: Record<string, string> = {};
  if (!raw) return out;
  for (let i = 0; i + 1 < raw.length; i += 2) {
    const k = raw[i]!.toString().toLowerCase();
    // only the headers the client reads
    if (k === 'retry-after' || k === 'content-type') out[k] = raw[i + 1]!.toString();
  }
  return out;
}

function codedError(message: string, code: string): Error {
  const err = new Error(message);
  (err as { code?: string }).code = code;
  return err;
}

/** The pool: connections = concurrency, pipelining 1, a new socket handed over in the check phase (see below). */
function createPool(options: TransportOptions): PoolType {
  const { origin, timeoutMs } = options;
  const connect: Record<string, unknown> = {};
  if (options.tls?.rejectUnauthorized !== undefined) connect['rejectUnauthorized'] = options.tls.rejectUnauthorized;
  if (options.tls?.ca !== undefined) connect['ca'] = options.tls.ca;
  const connector = buildConnector({ ...connect, timeout: Math.min(timeoutMs, 10_000) });
  return new Pool(origin, {
    connections: options.connections,
    pipelining: 1,
    // backstops; the client's own per-attempt timer (headers + body) fires first
    headersTimeout: timeoutMs + 1000,
    bodyTimeout: timeoutMs + 1000,
    keepAliveTimeout: 4000,
    // a new socket is handed over in the loop's check phase, like a reused one (undici's idle-socket check): its
    // first request is written after the poll phase that connected it, so a 429 read in that poll phase holds it
    // back (`hold`) instead of it being written inside the Retry-After window (issue 41)
    connect: (opts, callback) => connector(opts, (err, socket) => setImmediate(() => (err ? callback(err, null) : callback(null, socket!)))),
  });
}

/** One attempt between undici's callbacks and the caller's promise: what happened on the wire so far. */
interface Attempt {
  /** the request was completely written (onRequestSent) */
  sent: boolean;
  /** held back unwritten by `hold` */
  held: boolean;
  done: boolean;
  timedOut: boolean;
  /** undici's abort of this request, once it is on a socket */
  abortFn: ((err: Error) => void) | null;
  /** an abort asked before the request was on a socket: applied in onConnect */
  pendingAbort: Error | null;
  status: number;
  headers: Record<string, string>;
  chunks: Buffer[];
  received: number;
  timer: NodeJS.Timeout | undefined;
  signal: AbortSignal | undefined;
  onAbort: () => void;
  resolve: (res: RawResponse) => void;
  reject: (err: AttemptFailure) => void;
}

/** Settles the attempt once: the answer, or an AttemptFailure saying whether the request was written. */
function finishAttempt(a: Attempt, err: unknown, res?: RawResponse): void {
  if (a.done) return;
  a.done = true;
  clearTimeout(a.timer);
  if (a.signal) a.signal.removeEventListener('abort', a.onAbort);
  if (err !== null) a.reject(new AttemptFailure(err, a.sent, a.timedOut, a.signal?.aborted === true, a.held));
  else a.resolve(res!);
}

/** Aborts the request on the wire (or before it gets there) and settles the attempt with `err`. */
function stopAttempt(a: Attempt, err: Error): void {
  if (a.abortFn) a.abortFn(err);
  else a.pendingAbort = err;
  finishAttempt(a, err);
}

/** undici's dispatch handler of one attempt: hold at the last moment, note the write, bound the answer body. */
function attemptHandler(a: Attempt, maxResponseBytes: number, hold: (() => boolean) | undefined): Dispatcher.DispatchHandler {
  return {
    onConnect(abortRequest: (err?: Error) => void) {
      // called by undici right before it writes the request: the last moment it can stay unwritten. Thrown,
      // not aborted: undici then drops the request unwritten and keeps the socket (an abort destroys it)
      if (!a.pendingAbort && hold?.() === true) {
        a.held = true;
        throw codedError('held back unwritten: the WMS asked to wait (Retry-After)', 'WMS_HELD');
      }
      if (a.pendingAbort) abortRequest(a.pendingAbort);
      else a.abortFn = abortRequest;
    },
    onRequestSent() {
      a.sent = true;
    },
    onHeaders(statusCode: number, rawHeaders: Buffer[]) {
      if (statusCode < 200) return true; // 1xx informational
      a.status = statusCode;
      a.headers = rawHeadersToObject(rawHeaders);
      return true;
    },
    onData(chunk: Buffer) {
      a.received += chunk.length;
      if (a.received > maxResponseBytes) {
        a.chunks.length = 0;
        stopAttempt(a, codedError(`answer larger than ${maxResponseBytes} bytes`, 'WMS_RESPONSE_TOO_LARGE'));
        return false;
      }
      a.chunks.push(chunk);
      return true;
    },
    onComplete() {
      const { chunks } = a;
      finishAttempt(a, null, {
        status: a.status,
        headers: a.headers,
        body: chunks.length === 1 ? chunks[0]! : chunks.length === 0 ? EMPTY : Buffer.concat(chunks),
      });
    },
    onError(err: Error) {
      finishAttempt(a, err);
    },
  } as Dispatcher.DispatchHandler & { onRequestSent(): void };
}

/** One attempt on the pool under the client's own timer (headers + body) and the caller's signal. */
function sendOnPool(
  pool: PoolType,
  options: TransportOptions,
  method: string,
  path: string,
  headers: Record<string, string>,
  body: Buffer | undefined,
  signal?: AbortSignal,
  hold?: () => boolean,
): Promise<RawResponse> {
  const { origin, timeoutMs, maxResponseBytes } = options;
  return new Promise<RawResponse>((resolve, reject) => {
    const a: Attempt = {
      sent: false,
      held: false,
      done: false,
      timedOut: false,
      abortFn: null,
      pendingAbort: null,
      status: 0,
      headers: {},
      chunks: [],
      received: 0,
      timer: undefined,
      signal,
      onAbort: () => stopAttempt(a, codedError('aborted by the caller', 'ABORTED')),
      resolve,
      reject,
    };
    a.timer = setTimeout(() => {
      a.timedOut = true;
      stopAttempt(a, codedError(`no complete answer within ${timeoutMs} ms`, 'WMS_TIMEOUT'));
    }, timeoutMs);
    if (signal) {
      if (signal.aborted) {
        a.onAbort();
        return;
      }
      signal.addEventListener('abort', a.onAbort, { once: true });
    }
    try {
      pool.dispatch({ origin, path, method: method as Dispatcher.HttpMethod, headers, body: body ?? null }, attemptHandler(a, maxResponseBytes, hold));
    } catch (err) {
      finishAttempt(a, err);
    }
  });
}

export function createTransport(options: TransportOptions): Transport {
  const pool = createPool(options);
  return {
    send: (method, path, headers, body, signal, hold) => sendOnPool(pool, options, method, path, headers, body, signal, hold),
    close: () => pool.close(),
  };
}
