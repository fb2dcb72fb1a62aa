/**
 * The WMS client: implements WmsClient (client-types.ts) over undici.
 *
 * Transport: one undici `Pool` (connections = concurrency) driven through `pool.dispatch` with a small
 * handler. That is the layer `pool.request` is built on; going one level down gives the one fact
 * `request` hides: `onRequestSent`, i.e. whether the request was completely written before a failure.
 * That fact decides whether a failed POST is "in doubt" (`mayHaveReachedServer`) or provably safe to
 * resend. It also sends a body with GET (GET /open/v1/Stock/search needs one; fetch refuses it).
 *
 * Every call: concurrency slot -> token bucket -> attempt -> envelope check -> schema check. Retries are
 * decided by the pure `decideRetry` (retry.ts); a 401 triggers one shared refresh and one replay
 * (auth.ts), not counted as a retry. See docs/CLIENT.md.
 */
import { Pool, type Dispatcher } from 'undici';
import type { z } from 'zod';
import type { Logger } from '../shared/logger.js';
import { silentLogger } from '../shared/logger.js';
import { DEFAULT_USER_AGENT } from '../shared/version.js';
import { ConfigError } from '../shared/errors.js';
import * as S from './schemas.js';
import { ENDPOINTS, buildPath, PAGING_INDEX, PAGING_LIMIT, type EndpointName } from './endpoints.js';
import type { AttachmentInput, CallOptions, PageOptions, WmsClient, WmsClientStats } from './client-types.js';
import { DATE_TIMES_MODES, withDateTimes, type DateTimesMode } from './datetimes.js';
import { isValidTimeZone } from '../shared/time.js';
import { WmsError, WmsErrorCode, codeForStatus, formatWmsMessage, type WmsErrorCode as WmsErrorCodeT } from './errors.js';
import { DEFAULT_RETRY_POLICY, decideRetry, isIdempotent, MAX_RETRY_AFTER_MS, parseRetryAfter, type RetryPolicy } from './retry.js';
import { createSemaphore, createTokenBucket, type TokenBucket } from './rate-limit.js';
import { createAuthManager } from './auth.js';
import { buildMultipart } from './multipart.js';
import { createLatencyRecorder } from '../shared/metrics.js';
import { createCircuitBreaker, type WmsAvailability } from './breaker.js';

export interface WmsClientOptions {
  /** Base URL of the WMS, e.g. https://wms.example.com (a path prefix is kept). */
  baseUrl: string;
  accessKeyID: string;
  secretKey: string;
  /** @default DEFAULT_USER_AGENT (src/shared/version.ts); the spec makes User-Agent mandatory */
  userAgent?: string;
  /** max requests in flight; also the Pool's connections @default 16 */
  concurrency?: number;
  /** token bucket rate; @default unlimited */
  requestsPerSecond?: number;
  /** per attempt, headers + body @default 30000 */
  timeoutMs?: number;
  /** @default { retries: 5, baseDelayMs: 200, maxDelayMs: 10000 } */
  retry?: { retries?: number; baseDelayMs?: number; maxDelayMs?: number };
  /** retry a 5xx (not 504) answered to a non-idempotent call @default true */
  retryPostOn5xx?: boolean;
  /** records per page (PagingLimit) @default 100 */
  pageSize?: number;
  /**
   * index of the first page: 0, 1, or 'auto' (the first list read asks PagingIndex 0 and decides from
   * the answer: refused or answered as page 1 = 1-based, else 0-based; kept for the client's life)
   * @default 'auto'
   */
  pagingBase?: 0 | 1 | 'auto';
  /** how DateTimes are written in send bodies (datetimes.ts) @default 'utc' */
  dateTimes?: DateTimesMode;
  /** the WMS's time zone for dateTimes 'local' / 'local-offset' @default 'America/Sao_Paulo' */
  timeZone?: string;
  /** refresh this long before a known expiry @default 30 */
  refreshSkewSeconds?: number;
  /** assumed token lifetime when the server does not say (a JWT's exp is read when the token is a JWT) */
  tokenTtlSeconds?: number;
  tls?: { rejectUnauthorized?: boolean; ca?: string };
  /** validate send bodies with the Create schemas before sending (refused locally: E_WMS_VALIDATION) @default true */
  validateRequests?: boolean;
  /** largest answer body accepted; a larger one is cut off: E_WMS_RESPONSE @default 67108864 (64 MiB) */
  maxResponseBytes?: number;
  /** circuit breaker over connection failures (src/wms/breaker.ts) @default { threshold: 5, cooldownMs: 30000 } */
  breaker?: { threshold?: number; cooldownMs?: number };
  logger?: Logger;
}

/** a token that waited longer than this between being obtained and sent may have expired in between */
const STALE_TOKEN_WAIT_MS = 250;

/** Upper bounds (ms) of the latency histogram; the counts array has one more slot for "above the last". */
export const LATENCY_BUCKETS_MS = [1, 2, 5, 10, 25, 50, 100, 250, 500, 1000, 2500, 5000, 10000, 30000];

interface RawResponse {
  status: number;
  headers: Record<string, string>;
  body: Buffer;
}

class AttemptFailure extends Error {
  constructor(
    readonly failure: unknown,
    readonly sent: boolean,
    readonly timedOut: boolean,
    readonly aborted: boolean,
  ) {
    super('attempt failed');
  }
}

interface CallSpec {
  name: EndpointName;
  params?: Record<string, string>;
  query?: Record<string, string | number>;
  json?: unknown;
  raw?: { body: Buffer; contentType: string };
  idempotent?: boolean;
  signal?: AbortSignal | undefined;
  /** no retries at all (refresh: a refresh token may be single-use) */
  noRetry?: boolean;
}

type Envelope = Record<string, unknown> & { code: number };

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

function isPlainObject(v: unknown): v is Record<string, unknown> {
  return v !== null && typeof v === 'object' && !Array.isArray(v);
}

/** First few zod issues, `path: message; ...`. */
export function formatZodIssues(error: z.ZodError, max = 3): string {
  const issues = error.issues.slice(0, max).map((i) => `${i.path.length ? i.path.join('.') : '(root)'}: ${i.message}`);
  const more = error.issues.length > max ? `; (+${error.issues.length - max} more)` : '';
  return issues.join('; ') + more;
}

export function createWmsClient(options: WmsClientOptions): WmsClient {
  if (!options.baseUrl) throw new ConfigError('WMS client: baseUrl is required');
  if (!options.accessKeyID || !options.secretKey) throw new ConfigError('WMS client: accessKeyID and secretKey are required');
  let base: URL;
  try {
    base = new URL(options.baseUrl);
  } catch {
    throw new ConfigError(`WMS client: baseUrl is not a URL`);
  }
  if (base.protocol !== 'http:' && base.protocol !== 'https:') throw new ConfigError(`WMS client: baseUrl must be http(s) (got ${base.protocol})`);
  const origin = base.origin;
  const prefix = base.pathname.replace(/\/+$/, '');
  const userAgent = options.userAgent && options.userAgent.trim() !== '' ? options.userAgent : DEFAULT_USER_AGENT;
  const concurrency = options.concurrency ?? 16;
  const timeoutMs = options.timeoutMs ?? 30_000;
  const policy: RetryPolicy = {
    retries: options.retry?.retries ?? DEFAULT_RETRY_POLICY.retries,
    baseDelayMs: options.retry?.baseDelayMs ?? DEFAULT_RETRY_POLICY.baseDelayMs,
    maxDelayMs: options.retry?.maxDelayMs ?? DEFAULT_RETRY_POLICY.maxDelayMs,
  };
  const retryPostOn5xx = options.retryPostOn5xx ?? true;
  const defaultPageSize = options.pageSize ?? 100;
  const pagingBase = options.pagingBase ?? 'auto';
  /** the page base in use: the configured one, or what the first list read found out ('auto') */
  let knownBase: 0 | 1 | undefined = pagingBase === 'auto' ? undefined : pagingBase;
  /** 'auto' found 0 because PagingIndex 0 was answered, but no read has yet seen a second page: a lenient
   * 1-based server reading 0 as 1 looks the same until then */
  let zeroUnconfirmed = false;
  const validateRequests = options.validateRequests ?? true;
  const dateTimes: DateTimesMode = options.dateTimes ?? 'utc';
  const wmsTimeZone = options.timeZone ?? 'America/Sao_Paulo';
  if (!(DATE_TIMES_MODES as readonly string[]).includes(dateTimes)) throw new ConfigError(`WMS client: dateTimes must be one of ${DATE_TIMES_MODES.join(', ')}`);
  if (!isValidTimeZone(wmsTimeZone)) throw new ConfigError(`WMS client: timeZone "${wmsTimeZone}" is not an IANA time zone`);
  const maxResponseBytes = options.maxResponseBytes ?? 64 * 1024 * 1024;
  const log = options.logger ?? silentLogger();
  if (!Number.isInteger(defaultPageSize) || defaultPageSize < 1) throw new ConfigError(`WMS client: pageSize must be an integer >= 1`);
  if (!(timeoutMs > 0)) throw new ConfigError(`WMS client: timeoutMs must be > 0`);

  const connect: Record<string, unknown> = {};
  if (options.tls?.rejectUnauthorized !== undefined) connect['rejectUnauthorized'] = options.tls.rejectUnauthorized;
  if (options.tls?.ca !== undefined) connect['ca'] = options.tls.ca;
  const pool = new Pool(origin, {
    connections: concurrency,
    pipelining: 1,
    // backstops; the client's own per-attempt timer (headers + body) fires first
    headersTimeout: timeoutMs + 1000,
    bodyTimeout: timeoutMs + 1000,
    connectTimeout: Math.min(timeoutMs, 10_000),
    keepAliveTimeout: 4000,
    connect,
  });
  const slots = createSemaphore(concurrency);
  // back-pressure from the WMS: a 429 (or a 503 with Retry-After) pauses every request of this client until
  // the Retry-After has passed (the WMS firewall knows clients by User-Agent, not by request), and halves
  // the requests in flight; answers without throttling raise it again by one per `limit` answers (AIMD)
  let gateUntil = 0;
  let healthyAnswers = 0;
  const throttled = (retryAfterMs: number): void => {
    gateUntil = Math.max(gateUntil, performance.now() + retryAfterMs);
    healthyAnswers = 0;
    const before = slots.limit;
    slots.setLimit(Math.ceil(before / 2));
    if (slots.limit !== before) log.info({ concurrency: slots.limit, retryAfterMs }, 'wms: throttled by the WMS: pausing every request and lowering the concurrency');
  };
  const answeredHealthy = (): void => {
    if (slots.limit >= concurrency) return;
    if (++healthyAnswers >= slots.limit) {
      healthyAnswers = 0;
      slots.setLimit(slots.limit + 1);
    }
  };
  const waitForGate = async (signal?: AbortSignal): Promise<void> => {
    for (let wait = gateUntil - performance.now(); wait > 0; wait = gateUntil - performance.now()) await sleep(Math.ceil(wait), signal);
  };
  const bucket: TokenBucket | undefined =
    options.requestsPerSecond !== undefined ? createTokenBucket({ ratePerSecond: options.requestsPerSecond }) : undefined;

  const counters = { requests: 0, retries: 0, failures: 0 };
  const breaker = createCircuitBreaker(options.breaker ?? {});
  const latency = createLatencyRecorder(LATENCY_BUCKETS_MS);
  const observe = (ms: number) => latency.observe(ms);
  let closed = false;

  // ------------------------------------------------------------------------------------------
  // secrets never leave the client
  // ------------------------------------------------------------------------------------------
  const scrub = (text: string): string => {
    let out = text;
    for (const secret of [options.secretKey, ...auth.secrets()]) {
      if (secret && secret.length >= 4 && out.includes(secret)) out = out.split(secret).join('[redacted]');
    }
    return out;
  };

  // ------------------------------------------------------------------------------------------
  // one attempt on the wire
  // ------------------------------------------------------------------------------------------
  const sendOnce = (method: string, path: string, headers: Record<string, string>, body: Buffer | undefined, signal?: AbortSignal): Promise<RawResponse> =>
    new Promise<RawResponse>((resolve, reject) => {
      let sent = false;
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
        if (err !== null) reject(new AttemptFailure(err, sent, timedOut, signal?.aborted === true));
        else resolve(res!);
      };
      const timer = setTimeout(() => {
        timedOut = true;
        const err = new Error(`no complete answer within ${timeoutMs} ms`);
        (err as { code?: string }).code = 'WMS_TIMEOUT';
        abort(err);
        finish(err);
      }, timeoutMs);
      const onAbort = () => {
        const err = new Error('aborted by the caller');
        (err as { code?: string }).code = 'ABORTED';
        abort(err);
        finish(err);
      };
      if (signal) {
        if (signal.aborted) {
          onAbort();
          return;
        }
        signal.addEventListener('abort', onAbort, { once: true });
      }
      const handler: Dispatcher.DispatchHandler & { onRequestSent(): void } = {
        onConnect(abortRequest: (err?: Error) => void) {
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
            const err = new Error(`answer larger than ${maxResponseBytes} bytes`);
            (err as { code?: string }).code = 'WMS_RESPONSE_TOO_LARGE';
            chunks.length = 0;
            abort(err);
            finish(err);
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

  // ------------------------------------------------------------------------------------------
  // errors
  // ------------------------------------------------------------------------------------------
  const networkError = (method: string, path: string, f: AttemptFailure, attempts: number, idempotent: boolean): WmsError => {
    const cause = f.failure as { code?: string; message?: string } | undefined;
    const netCode = f.aborted ? 'ABORTED' : cause?.code ?? 'UNKNOWN';
    if (netCode === 'WMS_RESPONSE_TOO_LARGE') {
      return new WmsError(WmsErrorCode.RESPONSE, formatWmsMessage(method, path, cause?.message ?? 'answer too large'), {
        method,
        path,
        attempts,
        mayHaveReachedServer: true,
        networkCode: netCode,
      });
    }
    const timeout =
      f.timedOut || netCode === 'UND_ERR_HEADERS_TIMEOUT' || netCode === 'UND_ERR_BODY_TIMEOUT';
    const code = timeout ? WmsErrorCode.TIMEOUT : WmsErrorCode.NETWORK;
    const what = timeout
      ? `timeout (${scrub(cause?.message ?? 'no answer')})`
      : `network error ${netCode} (${scrub(cause?.message ?? 'no message')})`;
    const inDoubt = f.sent && !idempotent ? '; the request was sent completely: in doubt' : '';
    return new WmsError(code, formatWmsMessage(method, path, what + inDoubt), {
      method,
      path,
      attempts,
      mayHaveReachedServer: f.sent,
      networkCode: netCode,
      // the undici error is kept as cause: it holds no headers, tokens or bodies
      cause: f.failure instanceof Error ? sanitizeCause(f.failure) : undefined,
    });
  };

  const sanitizeCause = (err: Error): Error => {
    const e = new Error(scrub(err.message));
    e.name = err.name;
    (e as { code?: unknown }).code = (err as { code?: unknown }).code;
    return e;
  };

  const answerError = (method: string, path: string, res: RawResponse, envelope: Record<string, unknown> | undefined, attempts: number, idempotent: boolean): WmsError => {
    const envelopeCode = typeof envelope?.['code'] === 'number' ? (envelope['code'] as number) : undefined;
    const envelopeMessage = typeof envelope?.['message'] === 'string' ? scrub(envelope['message'] as string) : undefined;
    const envelopeError = typeof envelope?.['error'] === 'string' ? scrub(envelope['error'] as string) : undefined;
    let code: WmsErrorCodeT = codeForStatus(res.status, envelopeCode);
    const is2xx = res.status >= 200 && res.status < 300;
    if (is2xx && envelope === undefined) code = WmsErrorCode.RESPONSE;
    let text = envelopeError || envelopeMessage;
    if (!text) {
      const snippet = res.body.subarray(0, 200).toString('utf8').replace(/\s+/g, ' ').trim();
      text = envelope === undefined ? (snippet ? `non-JSON answer: ${scrub(snippet)}` : 'empty answer') : 'no error text';
    }
    const statusText = is2xx && envelopeCode !== undefined ? `${envelopeCode} (HTTP ${res.status})` : envelopeCode !== undefined && envelopeCode !== res.status ? `${res.status} (envelope ${envelopeCode})` : `${res.status}`;
    const retryAfterMs = parseRetryAfter(res.headers['retry-after']);
    // a gateway timeout / bad gateway to a non-idempotent call: the upstream may have applied it
    const inDoubt = !idempotent && (res.status === 502 || res.status === 504);
    // a refusal that names a record (a 409 conflict's existing record): its id, for the caller
    const data = envelope?.['data'];
    const answerId = data !== null && typeof data === 'object' && typeof (data as Record<string, unknown>)['id'] === 'string' ? ((data as Record<string, unknown>)['id'] as string) : undefined;
    return new WmsError(code, formatWmsMessage(method, path, `${statusText} - ${text}`), {
      ...(answerId !== undefined ? { answerId } : {}),
      method,
      path,
      httpStatus: res.status,
      ...(envelopeCode !== undefined ? { envelopeCode } : {}),
      ...(envelopeMessage !== undefined ? { envelopeMessage } : {}),
      ...(envelopeError !== undefined ? { envelopeError } : {}),
      ...(retryAfterMs !== undefined ? { retryAfterMs } : {}),
      attempts,
      mayHaveReachedServer: inDoubt,
    });
  };

  const parseBody = (res: RawResponse): Record<string, unknown> | undefined => {
    if (res.body.length === 0) return undefined;
    try {
      const v = JSON.parse(res.body.toString('utf8')) as unknown;
      return isPlainObject(v) ? v : undefined;
    } catch {
      return undefined;
    }
  };

  const isSuccess = (res: RawResponse, env: Record<string, unknown> | undefined): env is Envelope =>
    res.status >= 200 && res.status < 300 && env !== undefined && env['code'] === 200 && (env['error'] === undefined || env['error'] === null || env['error'] === '');

  const isUnauthorized = (res: RawResponse, env: Record<string, unknown> | undefined): boolean =>
    res.status === 401 || (res.status >= 200 && res.status < 300 && env?.['code'] === 401);

  const sleep = (ms: number, signal?: AbortSignal): Promise<void> =>
    new Promise((resolve, reject) => {
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

  // ------------------------------------------------------------------------------------------
  // a call: attempts, retries, the 401 replay
  // ------------------------------------------------------------------------------------------
  const call = async (spec: CallSpec): Promise<Envelope> => {
    const ep = ENDPOINTS[spec.name];
    const method: string = ep.method;
    const path = buildPath(ep.path, spec.params);
    if (closed) throw new WmsError(WmsErrorCode.NETWORK, formatWmsMessage(method, path, 'client is closed'), { method, path, attempts: 0, networkCode: 'CLOSED' });
    let qs = '';
    if (spec.query) {
      const sp = new URLSearchParams();
      for (const [k, v] of Object.entries(spec.query)) sp.set(k, String(v));
      qs = `?${sp.toString()}`;
    }
    const wirePath = prefix + path + qs;
    const idempotent = isIdempotent(method, spec.idempotent);
    const anonymous = 'anonymous' in ep && ep.anonymous === true;
    let body: Buffer | undefined;
    let contentType: string | undefined;
    if (spec.raw) {
      body = spec.raw.body;
      contentType = spec.raw.contentType;
    } else if (spec.json !== undefined) {
      body = Buffer.from(JSON.stringify(anonymous || dateTimes === 'utc' ? spec.json : withDateTimes(spec.json, dateTimes, wmsTimeZone)), 'utf8');
      contentType = 'application/json';
    }
    let attempt = 0;
    // consecutive 401s of this call: one means the token expired (refresh and replay, not a retry); two in
    // a row, the second with a token fresh from the refresh, mean the credentials are refused
    let consecutive401 = 0;
    let replayToken: string | undefined;
    let replayTokenAt = 0;
    for (;;) {
      attempt++;
      try {
        await waitForGate(spec.signal);
      } catch {
        counters.failures++;
        throw new WmsError(WmsErrorCode.NETWORK, formatWmsMessage(method, path, 'aborted by the caller while the WMS asked to wait (Retry-After)'), {
          method,
          path,
          attempts: attempt - 1,
          networkCode: 'ABORTED',
        });
      }
      let token: string | undefined;
      let tokenAt = 0;
      if (!anonymous) {
        try {
          if (replayToken !== undefined) tokenAt = replayTokenAt;
          else {
            token = await auth.getToken();
            tokenAt = performance.now();
          }
          token = replayToken ?? token;
        } catch (err) {
          counters.failures++;
          throw authFailure(err, method, path);
        }
        replayToken = undefined;
      }
      const headers: Record<string, string> = { 'user-agent': userAgent, accept: 'application/json' };
      if (token !== undefined) headers['authorization'] = `Bearer ${token}`;
      if (contentType) headers['content-type'] = contentType;

      let res: RawResponse | undefined;
      let failure: AttemptFailure | undefined;
      if (!breaker.allow()) {
        counters.failures++;
        const st = breaker.state();
        throw new WmsError(
          WmsErrorCode.NETWORK,
          formatWmsMessage(method, path, `not sent: the WMS is unreachable (${st.consecutiveFailures} connection failures in a row since ${st.unavailableSince ?? 'now'}; circuit open)`),
          { method, path, attempts: attempt - 1, networkCode: 'CIRCUIT_OPEN', mayHaveReachedServer: false },
        );
      }
      try {
        await slots.acquire(spec.signal);
      } catch {
        counters.failures++;
        throw new WmsError(WmsErrorCode.NETWORK, formatWmsMessage(method, path, 'aborted by the caller while waiting for a slot'), {
          method,
          path,
          attempts: attempt - 1,
          networkCode: 'ABORTED',
        });
      }
      if (bucket) {
        try {
          await bucket.take(spec.signal);
        } catch {
          slots.release();
          counters.failures++;
          const why = closed ? 'CLOSED' : 'ABORTED';
          throw new WmsError(WmsErrorCode.NETWORK, formatWmsMessage(method, path, `${why === 'CLOSED' ? 'client closed' : 'aborted by the caller'} while waiting for the rate limit`), {
            method,
            path,
            attempts: attempt - 1,
            networkCode: why,
          });
        }
      }
      if (gateUntil > performance.now()) {
        // the WMS asked to wait while this call waited for a slot: wait outside the slot, with a fresh token
        slots.release();
        attempt--;
        continue;
      }
      const started = performance.now();
      counters.requests++;
      try {
        res = await sendOnce(method, wirePath, headers, body, spec.signal);
      } catch (err) {
        // sendOnce only rejects with AttemptFailure
        failure = err instanceof AttemptFailure ? err : new AttemptFailure(err, false, false, false);
      } finally {
        observe(performance.now() - started);
        slots.release();
      }

      let error: WmsError;
      let unauthorized = false;
      if (failure) {
        error = networkError(method, path, failure, attempt, idempotent);
        if (failure.aborted) {
          counters.failures++;
          throw error;
        }
        if (error.code === WmsErrorCode.NETWORK || error.code === WmsErrorCode.TIMEOUT) breaker.connectionFailed();
      } else {
        breaker.answered();
        const r = res!;
        const ra = parseRetryAfter(r.headers['retry-after']);
        if (r.status === 429 || (r.status === 503 && ra !== undefined)) throttled(Math.min(ra ?? 1000, MAX_RETRY_AFTER_MS));
        else if (r.status < 500) answeredHealthy();
        const env = parseBody(r);
        if (isSuccess(r, env)) return env;
        unauthorized = !anonymous && isUnauthorized(r, env) && token !== undefined;
        if (unauthorized) {
          // a second 401 means refused credentials only when the fresh token went out at once; one that
          // waited (for a slot, or a Retry-After) may simply have expired meanwhile: refreshed again (bounded)
          const waited = started - tokenAt > STALE_TOKEN_WAIT_MS;
          if (consecutive401 === 0 || (waited && consecutive401 < 3)) {
            consecutive401++;
            attempt--; // the replay is not a retry
            log.debug({ op: spec.name, status: r.status }, 'wms: 401, refreshing the token and replaying once');
            try {
              replayToken = await auth.handleUnauthorized(token!);
              replayTokenAt = performance.now();
            } catch (err) {
              counters.failures++;
              throw authFailure(err, method, path);
            }
            continue;
          }
        }
        error = answerError(method, path, r, env, attempt, idempotent);
      }
      // anything but a 401 (a 500, a reset...) ends a run of 401s: a later 401 is a new expiry
      if (!unauthorized) consecutive401 = 0;

      const delay = spec.noRetry || closed || breaker.state().circuitOpen ? undefined : decideRetry(error, attempt, policy, method, { idempotent, retryPostOn5xx });
      if (delay === undefined) {
        counters.failures++;
        if (error.mayHaveReachedServer && !idempotent) log.warn({ op: spec.name, attempt, code: error.code }, 'wms: send in doubt, not retried');
        throw error;
      }
      counters.retries++;
      log.debug({ op: spec.name, attempt, code: error.code, status: error.httpStatus, delayMs: delay }, 'wms: attempt failed, will retry');
      try {
        await sleep(delay, spec.signal);
      } catch {
        counters.failures++;
        throw error;
      }
    }
  };

  const authFailure = (err: unknown, method: string, path: string): WmsError => {
    if (err instanceof WmsError) {
      if (err.code === WmsErrorCode.AUTH) return err;
      // the token could not be obtained: keep the underlying kind (network, timeout, ...) but say why
      return new WmsError(err.code as WmsErrorCodeT, formatWmsMessage(method, path, `could not obtain a token: ${err.message}`), {
        method,
        path,
        attempts: 0,
        ...(err.httpStatus !== undefined ? { httpStatus: err.httpStatus } : {}),
        ...(err.networkCode !== undefined ? { networkCode: err.networkCode } : {}),
        cause: err,
      });
    }
    return new WmsError(WmsErrorCode.AUTH, formatWmsMessage(method, path, `could not obtain a token: ${scrub(String((err as Error)?.message ?? err))}`), {
      method,
      path,
      attempts: 0,
    });
  };

  const auth = createAuthManager(
    {
      ...(options.refreshSkewSeconds !== undefined ? { refreshSkewSeconds: options.refreshSkewSeconds } : {}),
      ...(options.tokenTtlSeconds !== undefined ? { tokenTtlSeconds: options.tokenTtlSeconds } : {}),
      logger: log,
    },
    {
      authorize: async () => {
        const env = await call({ name: 'authorize', json: { accessKeyID: options.accessKeyID, secretKey: options.secretKey }, idempotent: true });
        return env['data'];
      },
      refresh: async (refreshToken: string) => {
        const env = await call({ name: 'refreshToken', json: { accessKeyID: options.accessKeyID, dataRefreshToken: refreshToken }, noRetry: true });
        return env['data'];
      },
    },
  );

  // ------------------------------------------------------------------------------------------
  // validation helpers
  // ------------------------------------------------------------------------------------------
  const requestBody = <T extends z.ZodType>(name: EndpointName, schema: T, body: unknown, label: string): z.output<T> => {
    if (!validateRequests) return body as z.output<T>;
    const parsed = schema.safeParse(body);
    if (parsed.success) return parsed.data;
    const ep = ENDPOINTS[name];
    counters.failures++;
    throw new WmsError(WmsErrorCode.VALIDATION, formatWmsMessage(ep.method, ep.path, `invalid ${label}, not sent - ${formatZodIssues(parsed.error)}`), {
      method: ep.method,
      path: ep.path,
      attempts: 0,
      details: { local: true, issues: parsed.error.issues.slice(0, 10).map((i) => ({ path: i.path.join('.'), message: i.message })) },
    });
  };

  const responseError = (name: EndpointName, params: Record<string, string> | undefined, label: string, what: string, details?: Record<string, unknown>): WmsError => {
    const ep = ENDPOINTS[name];
    const path = buildPath(ep.path, params);
    return new WmsError(WmsErrorCode.RESPONSE, formatWmsMessage(ep.method, path, `answer does not fit ${label} - ${what}`), {
      method: ep.method,
      path,
      httpStatus: 200,
      envelopeCode: 200,
      ...(details ? { details } : {}),
    });
  };

  const record = <T extends z.ZodType>(name: EndpointName, params: Record<string, string> | undefined, schema: T, label: string, data: unknown): z.output<T> => {
    const parsed = schema.safeParse(data);
    if (parsed.success) return parsed.data;
    counters.failures++;
    throw responseError(name, params, label, formatZodIssues(parsed.error));
  };

  // ------------------------------------------------------------------------------------------
  // shapes of calls
  // ------------------------------------------------------------------------------------------
  const pagingError = (name: EndpointName, params: Record<string, string> | undefined, what: string, details?: Record<string, unknown>): WmsError => {
    const ep = ENDPOINTS[name];
    const path = buildPath(ep.path, params);
    counters.failures++;
    return new WmsError(WmsErrorCode.PAGING, formatWmsMessage(ep.method, path, what), { method: ep.method, path, ...(details ? { details } : {}) });
  };
  const baseSetting = (): string => (pagingBase === 'auto' ? `wms.pagingBase auto (found ${String(knownBase)})` : `wms.pagingBase ${pagingBase}`);

  /**
   * Every record of a list endpoint, page by page. The page base is the configured one or, with 'auto',
   * found by asking PagingIndex 0 first (see pagingBase). A read that collects fewer records than the
   * WMS's own `count` is an E_WMS_PAGING error naming wms.pagingBase, never a short or empty result.
   */
  async function* paged<T extends z.ZodType>(
    name: EndpointName,
    schema: T,
    label: string,
    opts: PageOptions | undefined,
    params?: Record<string, string>,
    jsonBody?: () => unknown,
  ): AsyncGenerator<z.output<T>> {
    const json = jsonBody ? jsonBody() : undefined;
    const size = opts?.pageSize ?? defaultPageSize;
    /** probing: the base is unknown and PagingIndex 0 is being asked to find it */
    let probing = knownBase === undefined;
    /** tentative: 0 was accepted as the first page; a repeat at index 1 means 0 was read as 1 */
    let tentative = knownBase === 0 && zeroUnconfirmed;
    let index: number = knownBase ?? 0;
    let previous: string | undefined;
    let expected: number | undefined;
    let collected = 0;
    const finish = (): void => {
      if (expected !== undefined && collected < expected) {
        throw pagingError(
          name,
          params,
          `read ${collected} of the ${expected} ${label} records the WMS counts (first PagingIndex ${String(knownBase ?? index)}, ${baseSetting()}): the WMS numbers its pages differently or ignores PagingIndex; check wms.pagingBase (auto, 0 or 1), or run \`wmsbridge doctor\``,
          { collected, count: expected, pagingBase: pagingBase, detectedBase: knownBase },
        );
      }
    };
    for (let pageNo = 1; ; pageNo++) {
      let env: Envelope;
      try {
        env = await call({
          name,
          ...(params ? { params } : {}),
          query: { ...(opts?.query ?? {}), [PAGING_INDEX]: index, [PAGING_LIMIT]: size },
          ...(json !== undefined ? { json } : {}),
          signal: opts?.signal,
        });
      } catch (err) {
        if (probing && err instanceof WmsError && (err.code === WmsErrorCode.VALIDATION || err.httpStatus === 404)) {
          // PagingIndex 0 refused: pages are 1-based
          counters.failures--;
          log.debug({ op: name }, 'wms: PagingIndex 0 refused; pages are 1-based');
          knownBase = 1;
          probing = false;
          index = 1;
          pageNo--;
          continue;
        }
        if (pageNo === 1 && index === 0 && pagingBase === 0 && err instanceof WmsError && err.code === WmsErrorCode.VALIDATION) {
          throw pagingError(name, params, `the WMS refuses PagingIndex 0 (${err.envelopeError ?? err.message}): its pages are 1-based; set wms.pagingBase to auto or 1`);
        }
        throw err;
      }
      const data = env['data'] ?? [];
      if (!Array.isArray(data)) {
        counters.failures++;
        throw responseError(name, params, `a list of ${label}`, 'data is not an array', { page: index });
      }
      if (pageNo === 1 && typeof env['count'] === 'number' && Number.isFinite(env['count'])) expected = env['count'] as number;
      if (probing) {
        probing = false;
        const echoed = env['pagingIndex'];
        if (echoed === 1) {
          // PagingIndex 0 answered as page 1: 1-based (a lenient server clamps 0)
          knownBase = 1;
          index = 1;
        } else if (data.length === 0 && expected !== undefined && expected > 0) {
          // nothing before page 1 although records exist: 1-based; ask page 1
          knownBase = 1;
          index = 1;
          pageNo--;
          continue;
        } else {
          knownBase = 0;
          tentative = true;
          zeroUnconfirmed = true;
        }
        log.debug({ op: name, pagingBase: knownBase }, 'wms: page base found');
      }
      if (data.length === 0) return finish();
      const fingerprint = `${data.length}|${JSON.stringify(data[0])}|${JSON.stringify(data[data.length - 1])}`;
      if (fingerprint === previous) {
        if (tentative && pageNo === 2) {
          // PagingIndex 0 and 1 answer the same page: a 1-based server reading 0 as 1
          knownBase = 1;
          tentative = false;
          zeroUnconfirmed = false;
          log.debug({ op: name }, 'wms: PagingIndex 0 and 1 answer the same page; pages are 1-based');
          index++;
          pageNo--;
          continue;
        }
        counters.failures++;
        throw responseError(name, params, `a list of ${label}`, `page ${index} repeats the previous page (server ignores ${PAGING_INDEX}?)`, { page: index });
      }
      previous = fingerprint;
      const items: Array<z.output<T>> = new Array(data.length);
      for (let i = 0; i < data.length; i++) {
        const parsed = schema.safeParse(data[i]);
        if (!parsed.success) {
          counters.failures++;
          throw responseError(name, params, label, `page ${index}, data[${i}]: ${formatZodIssues(parsed.error)}`, { page: index });
        }
        items[i] = parsed.data;
      }
      collected += items.length;
      for (const item of items) yield item;
      const totalPages = typeof env['totalPages'] === 'number' ? (env['totalPages'] as number) : undefined;
      if (totalPages !== undefined) {
        if (pageNo >= totalPages) return finish();
      } else if (data.length < size) {
        return finish();
      }
      if (pageNo >= 2 && tentative) {
        tentative = false;
        zeroUnconfirmed = false; // a second, different page: 0-based for sure
      }
      index++;
    }
  }

  const isNotFound = (err: unknown): boolean =>
    err instanceof WmsError && (err.httpStatus === 404 || (err.httpStatus !== undefined && err.httpStatus < 300 && err.envelopeCode === 404));

  /** A read of one record: null when the WMS answers 404 (or data is null). */
  const getOne = async <T extends z.ZodType>(name: EndpointName, params: Record<string, string>, schema: T, label: string, opts?: CallOptions): Promise<z.output<T> | null> => {
    let env: Envelope;
    try {
      env = await call({ name, params, signal: opts?.signal, ...(opts?.idempotent !== undefined ? { idempotent: opts.idempotent } : {}) });
    } catch (err) {
      if (isNotFound(err)) {
        counters.failures--; // a 404 on a by-id/by-code read is an answer, not a failure
        return null;
      }
      throw err;
    }
    const data = env['data'];
    if (data === null || data === undefined) return null;
    // some servers wrap a single record in a one-element array
    const one = Array.isArray(data) ? (data.length === 0 ? null : data[0]) : data;
    if (one === null) return null;
    return record(name, params, schema, label, one);
  };

  /** A send whose answer the spec shows: the record is required. */
  const sendRequired = async <T extends z.ZodType>(name: EndpointName, json: unknown, schema: T, label: string, opts?: CallOptions): Promise<z.output<T>> => {
    const env = await call({ name, json, signal: opts?.signal, ...(opts?.idempotent !== undefined ? { idempotent: opts.idempotent } : {}) });
    return record(name, undefined, schema, label, env['data']);
  };

  /** A send whose answer the spec does not show: the record if data holds one that fits, else null. */
  const sendOptional = async <T extends z.ZodType>(name: EndpointName, json: unknown, schema: T, opts?: CallOptions): Promise<z.output<T> | null> => {
    const env = await call({ name, json, signal: opts?.signal, ...(opts?.idempotent !== undefined ? { idempotent: opts.idempotent } : {}) });
    const data = env['data'];
    if (!isPlainObject(data)) return null;
    const parsed = schema.safeParse(data);
    if (parsed.success) return parsed.data;
    log.debug({ op: name }, 'wms: answer data does not fit the record schema; returning null');
    return null;
  };

  const lockCall = async (name: 'lockStock' | 'unlockStock', body: S.StockLockRequest, opts?: CallOptions): Promise<S.StockLockResult> => {
    const json = requestBody(name, S.StockLockRequest, body, 'stock lock request');
    const env = await call({ name, json, signal: opts?.signal, ...(opts?.idempotent !== undefined ? { idempotent: opts.idempotent } : {}) });
    const result = record(name, undefined, S.StockLockResult, 'StockLockResult', env['data']);
    const reason = result.error ? scrub(result.error) : '';
    // a valid request that matched nothing in the state it starts from (already in that status, or no such
    // lot): not refused data, an outcome of its own (the caller shows the reason, SPEC-NOTES)
    if (reason && result.stocksLocked === 0) return { ...result, error: reason };
    if (reason) {
      const ep = ENDPOINTS[name];
      counters.failures++;
      throw new WmsError(WmsErrorCode.ENVELOPE, formatWmsMessage(ep.method, ep.path, `200 - ${reason} (stocksLocked ${result.stocksLocked})`), {
        method: ep.method,
        path: ep.path,
        httpStatus: 200,
        envelopeCode: 200,
        envelopeError: reason,
      });
    }
    return result;
  };

  const client: WmsClient = {
    async authorize() {
      try {
        await auth.authorize();
      } catch (err) {
        throw authFailure(err, ENDPOINTS.authorize.method, ENDPOINTS.authorize.path);
      }
    },

    listConversionFactors: (opts) => paged('listConversionFactors', S.ConversionFactorRecord, 'ConversionFactor', opts),
    getConversionFactor: (id, opts) => getOne('getConversionFactor', { id }, S.ConversionFactorRecord, 'ConversionFactor', opts),
    createConversionFactor: async (body, opts) =>
      sendOptional('createConversionFactor', requestBody('createConversionFactor', S.ConversionFactorCreate, body, 'ConversionFactor'), S.ConversionFactorRecord, opts),
    updateConversionFactor: async (body, opts) =>
      sendOptional('updateConversionFactor', requestBody('updateConversionFactor', S.ConversionFactorUpdate, body, 'ConversionFactor update'), S.ConversionFactorRecord, opts),
    async deleteConversionFactor(id, opts) {
      await call({ name: 'deleteConversionFactor', params: { id }, signal: opts?.signal, ...(opts?.idempotent !== undefined ? { idempotent: opts.idempotent } : {}) });
    },

    listStock: (opts) => paged('listStock', S.StockRecord, 'Stock', opts),
    searchStock: (filters, opts) => paged('searchStock', S.StockRecord, 'Stock', opts, undefined, () => requestBody('searchStock', S.StockSearchFilters, filters, 'stock search filters')),
    lockStock: async (body, opts) => lockCall('lockStock', body, opts),
    unlockStock: async (body, opts) => lockCall('unlockStock', body, opts),
    async syncStock(body, opts) {
      const json = requestBody('syncStock', S.StockSyncRequest, body, 'stock sync chunk');
      const result = await sendRequired('syncStock', json, S.StockSyncResult, 'StockSyncResult', opts);
      if (!result.success) {
        const ep = ENDPOINTS.syncStock;
        counters.failures++;
        throw new WmsError(WmsErrorCode.ENVELOPE, formatWmsMessage(ep.method, ep.path, '200 - data.success is false'), {
          method: ep.method,
          path: ep.path,
          httpStatus: 200,
          envelopeCode: 200,
        });
      }
      return result;
    },

    listShippingCompanies: (opts) => paged('listShippingCompanies', S.ShippingCompanyRecord, 'ShippingCompany', opts),
    getShippingCompany: (id, opts) => getOne('getShippingCompany', { id }, S.ShippingCompanyRecord, 'ShippingCompany', opts),
    getShippingCompanyByErp: (codeERP, opts) => getOne('getShippingCompanyByErp', { codeERP }, S.ShippingCompanyRecord, 'ShippingCompany', opts),
    createShippingCompany: async (body, opts) =>
      sendOptional('createShippingCompany', requestBody('createShippingCompany', S.ShippingCompanyCreate, body, 'ShippingCompany'), S.ShippingCompanyRecord, opts),
    updateShippingCompany: async (body, opts) =>
      sendOptional('updateShippingCompany', requestBody('updateShippingCompany', S.ShippingCompanyUpdate, body, 'ShippingCompany update'), S.ShippingCompanyRecord, opts),

    listProviders: (opts) => paged('listProviders', S.ProviderRecord, 'Provider', opts),
    getProvider: (id, opts) => getOne('getProvider', { id }, S.ProviderRecord, 'Provider', opts),
    getProviderByErp: (codeERP, opts) => getOne('getProviderByErp', { codeERP }, S.ProviderRecord, 'Provider', opts),
    createProvider: async (body, opts) => sendOptional('createProvider', requestBody('createProvider', S.ProviderCreate, body, 'Provider'), S.ProviderRecord, opts),
    updateProvider: async (body, opts) => sendOptional('updateProvider', requestBody('updateProvider', S.ProviderUpdate, body, 'Provider update'), S.ProviderRecord, opts),

    listOwners: (opts) => paged('listOwners', S.OwnerRecord, 'Owners', opts),
    getOwner: (id, opts) => getOne('getOwner', { id }, S.OwnerRecord, 'Owners', opts),
    getOwnerByCode: (code, opts) => getOne('getOwnerByCode', { code }, S.OwnerRecord, 'Owners', opts),
    createOwner: async (body, opts) => sendOptional('createOwner', requestBody('createOwner', S.OwnerCreate, body, 'Owners'), S.OwnerRecord, opts),

    listInventories: (opts) => paged('listInventories', S.InventoryRecord, 'Inventory', opts),
    listFinishedInventories: (opts) => paged('listFinishedInventories', S.InventoryRecord, 'Inventory', opts),
    getInventory: (id, opts) => getOne('getInventory', { id }, S.InventoryRecord, 'Inventory', opts),

    listMaterialStatuses: (opts) => paged('listMaterialStatuses', S.MaterialStatusRecord, 'MaterialStatus', opts),
    getMaterialStatus: (id, opts) => getOne('getMaterialStatus', { id }, S.MaterialStatusRecord, 'MaterialStatus', opts),
    listDocks: (opts) => paged('listDocks', S.DockRecord, 'Dock', opts),
    listDocksOfWarehouse: (warehouseID, opts) => paged('listDocksOfWarehouse', S.DockRecord, 'Dock', opts, { warehouseID }),
    listWarehouses: (opts) => paged('listWarehouses', S.WarehouseRecord, 'Warehouse', opts),
    listBranches: (opts) => paged('listBranches', S.BranchRecord, 'Branch', opts),
    listLogisticsProfiles: (opts) => paged('listLogisticsProfiles', S.LogisticsProfileRecord, 'LogisticsProfile', opts),
    listCompanies: (opts) => paged('listCompanies', S.CompanyRecord, 'Company', opts),
    listSubWarehouses: (warehouseId, opts) => paged('listSubWarehouses', S.SubWarehouseRecord, 'SubWarehouse', opts, { warehouseId }),

    createPickingList: async (body, opts) =>
      sendRequired('createPickingList', requestBody('createPickingList', S.PickingListCreate, body, 'PickingList'), S.PickingListRecord, 'PickingList', opts),
    createPurchaseOrder: async (body, opts) =>
      sendRequired('createPurchaseOrder', requestBody('createPurchaseOrder', S.PurchaseOrderCreate, body, 'PurchaseOrder'), S.PurchaseOrderRecord, 'PurchaseOrder', opts),
    createProduct: async (body, opts) => sendRequired('createProduct', requestBody('createProduct', S.ProductCreate, body, 'Product'), S.ProductRecord, 'Product', opts),
    createUnitMeasurement: async (body, opts) =>
      sendRequired('createUnitMeasurement', requestBody('createUnitMeasurement', S.UnitMeasurementCreate, body, 'UnitMeasurement'), S.UnitMeasurementRecord, 'UnitMeasurement', opts),
    createFamily: async (body, opts) => sendRequired('createFamily', requestBody('createFamily', S.FamilyCreate, body, 'Family'), S.FamilyRecord, 'Family', opts),
    createCategory: async (body, opts) => sendRequired('createCategory', requestBody('createCategory', S.CategoryCreate, body, 'Category'), S.CategoryRecord, 'Category', opts),

    async attachToPickingList(input: AttachmentInput, opts?: CallOptions) {
      const fields = requestBody(
        'attachToPickingList',
        S.AttachmentRequest,
        { PickingListID: input.pickingListID, UserFileName: input.userFileName, ...(input.isPrintCheckout !== undefined ? { IsPrintCheckout: input.isPrintCheckout } : {}) },
        'attachment',
      );
      if (!Buffer.isBuffer(input.content)) {
        const ep = ENDPOINTS.attachToPickingList;
        throw new WmsError(WmsErrorCode.VALIDATION, formatWmsMessage(ep.method, ep.path, 'invalid attachment, not sent - content must be a Buffer'), {
          method: ep.method,
          path: ep.path,
          attempts: 0,
          details: { local: true },
        });
      }
      const mp = buildMultipart([
        { name: 'file', content: input.content, fileName: input.fileName, contentType: input.contentType ?? 'application/octet-stream' },
        { name: 'PickingListID', value: fields.PickingListID },
        { name: 'UserFileName', value: fields.UserFileName },
        ...(fields.IsPrintCheckout !== undefined ? [{ name: 'IsPrintCheckout', value: String(fields.IsPrintCheckout) }] : []),
      ]);
      const env = await call({
        name: 'attachToPickingList',
        raw: { body: mp.body, contentType: mp.contentType },
        signal: opts?.signal,
        ...(opts?.idempotent !== undefined ? { idempotent: opts.idempotent } : {}),
      });
      return record('attachToPickingList', undefined, S.AttachmentRecord, 'PickingList attachment', env['data']);
    },

    availability(): WmsAvailability {
      return breaker.state();
    },

    stats(): WmsClientStats {
      const a = auth.stats();
      const l = latency.snapshot();
      return {
        requests: counters.requests,
        retries: counters.retries,
        refreshes: a.refreshes,
        authorizations: a.authorizations,
        failures: counters.failures,
        pagingBase: knownBase ?? null,
        latencyBucketsMs: l.bucketsMs,
        latencyCounts: l.counts,
        latencySumMs: l.sumMs,
      };
    },

    async close() {
      if (closed) return;
      closed = true;
      bucket?.close();
      await pool.close();
    },
  };
  return client;
}
