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
import type { Dispatcher } from 'undici';
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

export function createTransport(options: TransportOptions): Transport {
  const { origin, timeoutMs, maxResponseBytes } = options;
  const connect: Record<string, unknown> = {};
  if (options.tls?.rejectUnauthorized !== undefined) connect['rejectUnauthorized'] = options.tls.rejectUnauthorized;
  if (options.tls?.ca !== undefined) connect['ca'] = options.tls.ca;
  const connector = buildConnector({ ...connect, timeout: Math.min(timeoutMs, 10_000) });
  const pool = new Pool(origin, {
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

  const send = (
    method: string,
    path: string,
    headers: Record<string, string>,
    body: Buffer | undefined,
    signal?: AbortSignal,
    hold?: () => boolean,
  ): Promise<RawResponse> =>
    new Promise<RawResponse>((resolve, reject) => {
      let sent = false;
      let held = false;
      let done = false;
      let timedOut = false;
      let abortFn: ((err: Error) => void) | null = null;
      let pendingAbort: Error | null = null;
      let status = 0;
      let resHeaders: Record<string, string> = {};
      const chunks: Buffer[] = [];
      let received = 0;
      const abort = (err: Error) => {
        if (abortFn) abortFn(err);
        else pendingAbort = err;
      };
      const finish = (err: unknown, res?: RawResponse) => {
        if (done) return;
        done = true;
        clearTimeout(timer);
        if (signal) signal.removeEventListener('abort', onAbort);
        if (err !== null) reject(new AttemptFailure(err, sent, timedOut, signal?.aborted === true, held));
        else resolve(res!);
      };
      const stop = (err: Error) => {
        abort(err);
        finish(err);
      };
      const timer = setTimeout(() => {
        timedOut = true;
        stop(codedError(`no complete answer within ${timeoutMs} ms`, 'WMS_TIMEOUT'));
      }, timeoutMs);
      const onAbort = () => stop(codedError('aborted by the caller', 'ABORTED'));
      if (signal) {
        if (signal.aborted) {
          onAbort();
          return;
        }
        signal.addEventListener('abort', onAbort, { once: true });
      }
      const handler = {
        onConnect(abortRequest: (err?: Error) => void) {
          // called by undici right before it writes the request: the last moment it can stay unwritten. Thrown,
          // not aborted: undici then drops the request unwritten and keeps the socket (an abort destroys it)
          if (!pendingAbort && hold?.() === true) {
            held = true;
            throw codedError('held back unwritten: the WMS asked to wait (Retry-After)', 'WMS_HELD');
          }
          if (pendingAbort) abortRequest(pendingAbort);
          else abortFn = abortRequest;
        },
        onRequestSent() {
          sent = true;
        },
        onHeaders(statusCode: number, rawHeaders: Buffer[]) {
          if (statusCode < 200) return true; // 1xx informational
          status = statusCode;
          resHeaders = rawHeadersToObject(rawHeaders);
          return true;
        },
        onData(chunk: Buffer) {
          received += chunk.length;
          if (received > maxResponseBytes) {
            chunks.length = 0;
            stop(codedError(`answer larger than ${maxResponseBytes} bytes`, 'WMS_RESPONSE_TOO_LARGE'));
            return false;
          }
          chunks.push(chunk);
          return true;
        },
        onComplete() {
          finish(null, { status, headers: resHeaders, body: chunks.length === 1 ? chunks[0]! : chunks.length === 0 ? EMPTY : Buffer.concat(chunks) });
        },
        onError(err: Error) {
          finish(err);
        },
      } as Dispatcher.DispatchHandler & { onRequestSent(): void };
      try {
        pool.dispatch({ origin, path, method: method as Dispatcher.HttpMethod, headers, body: body ?? null }, handler);
      } catch (err) {
        finish(err);
      }
    });

  return { send, close: () => pool.close() };
}
