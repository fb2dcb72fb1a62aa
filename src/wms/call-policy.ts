/**
 * The client's call policy: what happens around one call's attempts on the wire (transport.ts).
 *
 * Every attempt: Retry-After gate -> token -> circuit breaker -> concurrency slot -> token bucket ->
 * attempt -> envelope check. Retries are decided by the pure `decideRetry` (retry.ts); a 401 triggers
 * one shared refresh and one replay (auth.ts), not counted as a retry; a connection failure feeds the
 * circuit breaker (breaker.ts), whose open circuit turns calls away unsent (outage classification).
 * See docs/CLIENT.md.
 */
import type { Logger } from '../shared/logger.js';
import { createLatencyRecorder, type LatencyRecorder } from '../shared/latency.js';
import { createAuthManager, type AuthManager } from './auth.js';
import { createCircuitBreaker, type CircuitBreaker } from './breaker.js';
import { answerError, authFailure, isSuccess, isUnauthorized, networkError, notSent, parseBody, type Envelope, type Scrub } from './client-errors.js';
import { withDateTimes, type DateTimesMode } from './datetimes.js';
import { ENDPOINTS, buildPath, type EndpointName } from './endpoints.js';
import { WmsError, WmsErrorCode } from './errors.js';
import { createSemaphore, createTokenBucket, type Semaphore, type TokenBucket } from './rate-limit.js';
import { MAX_RETRY_AFTER_MS, decideRetry, isIdempotent, parseRetryAfter, type RetryPolicy } from './retry.js';
import { AttemptFailure, type RawResponse, type Transport } from './transport.js';
import type { WriteHooks } from './client-types.js';
import { createTurnBatch } from './turn-batch.js';
import { realClock, type Clock } from './clock.js';

/** a token older than this when its answer came may have expired between being obtained and being checked */
const STALE_TOKEN_WAIT_MS = 250;

/** Upper bounds (ms) of the latency histogram; the counts array has one more slot for "above the last". */
export const LATENCY_BUCKETS_MS = [1, 2, 5, 10, 25, 50, 100, 250, 500, 1000, 2500, 5000, 10000, 30000];

export interface CallSpec {
  name: EndpointName;
  params?: Record<string, string>;
  query?: Record<string, string | number>;
  json?: unknown;
  raw?: { body: Buffer; contentType: string };
  idempotent?: boolean | undefined;
  signal?: AbortSignal | undefined;
  /** no retries at all (refresh: a refresh token may be single-use) */
  noRetry?: boolean;
  /** per-attempt hooks of a request that changes something: marked right before the write (WriteHooks) */
  write?: WriteHooks | undefined;
}

export interface CallPolicyOptions {
  transport: Transport;
  /** path prefix of the base URL ('' when none) */
  prefix: string;
  userAgent: string;
  accessKeyID: string;
  secretKey: string;
  concurrency: number;
  retry: RetryPolicy;
  retryPostOn5xx: boolean;
  requestsPerSecond?: number | undefined;
  dateTimes: DateTimesMode;
  timeZone: string;
  refreshSkewSeconds?: number | undefined;
  tokenTtlSeconds?: number | undefined;
  breaker?: { threshold?: number; cooldownMs?: number } | undefined;
  log: Logger;
  /** token expiry and age, the Retry-After gate, retry sleeps, the breaker's cool-down @default realClock */
  clock?: Clock | undefined;
}

export interface CallCounters {
  requests: number;
  retries: number;
  failures: number;
  /** requests handed to the transport before a 429 was read and held back unwritten (sent after the window) */
  held: number;
}

/** What the rest of the client builds on: `call`, and the state its stats and errors read. */
export interface CallPolicy {
  call(spec: CallSpec): Promise<Envelope>;
  auth: AuthManager;
  breaker: CircuitBreaker;
  latency: LatencyRecorder;
  counters: CallCounters;
  scrub: Scrub;
  log: Logger;
  close(): Promise<void>;
}

interface Throttle {
  /** a 429 (or a 503 with Retry-After) */
  throttled(retryAfterMs: number): void;
  /** an answer without throttling */
  answeredHealthy(): void;
  /** resolves once the Retry-After has passed (rejects when `signal` aborts meanwhile) */
  waitForGate(signal?: AbortSignal): Promise<void>;
  /** the WMS asked to wait, and the wait is not over */
  gated(): boolean;
}

/**
 * Back-pressure from the WMS: a 429 (or a 503 with Retry-After) pauses every request of this client until
 * the Retry-After has passed (the WMS firewall knows clients by User-Agent, not by request), and halves
 * the requests in flight; answers without throttling raise it again by one per `limit` answers (AIMD).
 */
function createThrottle(slots: Semaphore, concurrency: number, log: Logger, clock: Clock): Throttle {
  let gateUntil = 0;
  let healthyAnswers = 0;
  return {
    throttled(retryAfterMs) {
      gateUntil = Math.max(gateUntil, clock.monotonic() + retryAfterMs);
      healthyAnswers = 0;
      const before = slots.limit;
      slots.setLimit(Math.ceil(before / 2));
      if (slots.limit !== before)
        log.info({ concurrency: slots.limit, retryAfterMs }, 'wms: throttled by the WMS: pausing every request and lowering the concurrency');
    },
    answeredHealthy() {
      if (slots.limit >= concurrency) return;
      if (++healthyAnswers >= slots.limit) {
        healthyAnswers = 0;
        slots.setLimit(slots.limit + 1);
      }
    },
    async waitForGate(signal) {
      for (let wait = gateUntil - clock.monotonic(); wait > 0; wait = gateUntil - clock.monotonic()) await clock.sleep(Math.ceil(wait), signal);
    },
    gated: () => gateUntil > clock.monotonic(),
  };
}

/** The Retry-After (ms) of an answer that throttles (a 429, or a 503 with Retry-After), else undefined. */
function throttleOf(r: RawResponse, nowMs: number): number | undefined {
  const ra = parseRetryAfter(r.headers['retry-after'], nowMs);
  if (r.status === 429 || (r.status === 503 && ra !== undefined)) return Math.min(ra ?? 1000, MAX_RETRY_AFTER_MS);
  return undefined;
}

/** One call as it goes on the wire, the same for every attempt. */
interface Prepared {
  spec: CallSpec;
  method: string;
  path: string;
  wirePath: string;
  idempotent: boolean;
  anonymous: boolean;
  body: Buffer | undefined;
  contentType: string | undefined;
}

/** The 401 state of one call across its attempts. */
interface Replay {
  /** consecutive 401s of this call: one means the token expired (refresh and replay, not a retry); two in
   * a row, the second with a token fresh from the refresh, mean the credentials are refused */
  consecutive401: number;
  token: string | undefined;
}

/** What one attempt came to: an envelope, a failure (maybe retried), or an attempt that does not count. */
type Outcome = { kind: 'ok'; env: Envelope } | { kind: 'failed'; error: WmsError; unauthorized: boolean } | { kind: 'again' };

/** What one attempt works with: the call policy's state. */
interface Machinery {
  o: CallPolicyOptions;
  clock: Clock;
  slots: Semaphore;
  throttle: Throttle;
  bucket: TokenBucket | undefined;
  counters: CallCounters;
  breaker: CircuitBreaker;
  latency: LatencyRecorder;
  scrub: Scrub;
  /** this client's answers of one loop turn, handed on after the requests they released are written */
  afterTurn: () => Promise<void>;
  /** counts a failure and throws it */
  fail(err: WmsError): never;
  closed(): boolean;
  auth(): AuthManager;
}

/**
 * One attempt of a call: gate, token, breaker, slot, rate limit, the request, and what its answer means. `sending`
 * is marked per attempt right before the write, after the gate, the slot and any retry sleep (issue 41).
 */
async function attemptOnce(m: Machinery, req: Prepared, attempt: number, replay: Replay): Promise<Outcome> {
  try {
    await m.throttle.waitForGate(req.spec.signal);
  } catch {
    m.fail(notSent(req.method, req.path, attempt - 1, 'ABORTED', 'aborted by the caller while the WMS asked to wait (Retry-After)'));
  }
  let token = await takeToken(m, req, replay);
  if (!(await enterSlot(m, req, attempt))) return { kind: 'again' };
  const hooks = req.spec.write;
  if (hooks) await markBeforeWrite(m, hooks);
  // the wait for the slot and the mark took time: the newest token held goes out (one renewed meanwhile)
  if (token !== undefined) token = m.auth().latest() ?? token;
  const headers: Record<string, string> = { 'user-agent': m.o.userAgent, accept: 'application/json' };
  if (token !== undefined) headers['authorization'] = `Bearer ${token}`;
  if (req.contentType) headers['content-type'] = req.contentType;
  const { res, failure } = await exchange(m, req, headers);
  if (res) return afterAttempt(hooks, await judgeAnswer(m, req, res, attempt, token, replay));
  return failedOnTheWire(m, req, failure!, attempt, hooks);
}

/** The token for this attempt: the one a 401 refresh handed over, else the current one (renewed first when due). */
async function takeToken(m: Machinery, req: Prepared, replay: Replay): Promise<string | undefined> {
  if (req.anonymous) return undefined;
  try {
    if (replay.token !== undefined) return replay.token;
    return await m.auth().getToken();
  } catch (err) {
    return m.fail(authFailure(m.scrub, err, req.method, req.path));
  } finally {
    replay.token = undefined;
  }
}

/** Breaker, slot, rate limit: true with a slot held, false when the WMS asked to wait meanwhile (no slot). */
async function enterSlot(m: Machinery, req: Prepared, attempt: number): Promise<boolean> {
  const { method, path, spec } = req;
  const { breaker, slots, bucket, fail } = m;
  if (!breaker.allow()) {
    const st = breaker.state();
    const why = `not sent: the WMS is unreachable (${st.consecutiveFailures} connection failures in a row since ${st.unavailableSince ?? 'now'}; circuit open)`;
    fail(notSent(method, path, attempt - 1, 'CIRCUIT_OPEN', why, { mayHaveReachedServer: false }));
  }
  try {
    await slots.acquire(spec.signal);
  } catch {
    fail(notSent(method, path, attempt - 1, 'ABORTED', 'aborted by the caller while waiting for a slot'));
  }
  if (bucket) {
    try {
      await bucket.take(spec.signal);
    } catch {
      slots.release();
      const why = m.closed() ? 'CLOSED' : 'ABORTED';
      fail(notSent(method, path, attempt - 1, why, `${why === 'CLOSED' ? 'client closed' : 'aborted by the caller'} while waiting for the rate limit`));
    }
  }
  if (m.throttle.gated()) {
    // the WMS asked to wait while this call waited for a slot: wait outside the slot, with a fresh token
    slots.release();
    return false;
  }
  return true;
}

/** The mark before the write, inside the slot: a slot given back when the mark fails (the journal's error is the call's). */
async function markBeforeWrite(m: Machinery, hooks: WriteHooks): Promise<void> {
  try {
    await hooks.beforeWrite();
  } catch (err) {
    m.slots.release();
    throw err;
  }
}

/**
 * The attempt on the wire, inside the slot `enterSlot` took. The slot is given back as soon as the answer is in; a
 * 2xx answer is then handed on with the turn's other answers, after the requests their slots released are
 * written (turn-batch.ts); any other answer (a 429 or 503 to throttle on, a 401 to refresh) is judged at once.
 * A throttling answer closes the client-wide gate BEFORE its slot is released: the call the slot passes to
 * sees the gate closed in `enterSlot` (issue 41: it used to leave before the 429 was judged). A request handed to
 * the transport earlier but not yet written is held back unwritten by the transport (`hold`).
 */
async function exchange(m: Machinery, req: Prepared, headers: Record<string, string>): Promise<{ res?: RawResponse; failure?: AttemptFailure }> {
  const { counters, latency, slots, throttle } = m;
  const started = performance.now();
  counters.requests++;
  let inSlot = true;
  const leaveSlot = (): void => {
    if (!inSlot) return;
    inSlot = false;
    latency.observe(performance.now() - started);
    slots.release();
  };
  try {
    const res = await m.o.transport.send(req.method, req.wirePath, headers, req.body, req.spec.signal, throttle.gated);
    const retryAfterMs = throttleOf(res, m.clock.now());
    if (retryAfterMs !== undefined) throttle.throttled(retryAfterMs);
    leaveSlot();
    if (res.status >= 200 && res.status < 300) await m.afterTurn();
    return { res };
  } catch (err) {
    // send only rejects with AttemptFailure
    return { failure: err instanceof AttemptFailure ? err : new AttemptFailure(err, false, false, false) };
  } finally {
    leaveSlot();
  }
}

/** An answer: success, a 401 to replay after one refresh, or the error it means. */
async function judgeAnswer(m: Machinery, req: Prepared, r: RawResponse, attempt: number, token: string | undefined, replay: Replay): Promise<Outcome> {
  m.breaker.answered();
  // a throttling answer closed the gate in `exchange`, before its slot was released
  if (throttleOf(r, m.clock.now()) === undefined && r.status < 500) m.throttle.answeredHealthy();
  const env = parseBody(r);
  if (isSuccess(r, env)) return { kind: 'ok', env };
  const unauthorized = !req.anonymous && isUnauthorized(r, env) && token !== undefined;
  // a second 401 means refused credentials only when the token was young when the answer came; the WMS checked it
  // somewhere between its renewal and the answer, so one obtained longer than the stale bound before (however it
  // reached this attempt: taken, handed over by a refresh, picked up after the slot; it waited for a slot or a
  // Retry-After, or the answer was slow) may simply have expired meanwhile: refreshed again (bounded)
  const aged = (): boolean => m.auth().ageMs(token!) > STALE_TOKEN_WAIT_MS;
  if (unauthorized && (replay.consecutive401 === 0 || (replay.consecutive401 < 3 && aged()))) {
    await refreshForReplay(m, req, r, token!, replay);
    return { kind: 'again' }; // the replay is not a retry
  }
  return { kind: 'failed', error: answerError(m.scrub, req.method, req.path, r, env, attempt, req.idempotent, m.clock.now()), unauthorized };
}

/** A 401 on a token that may have expired: one shared refresh, and the token (and its age) the replay goes with. */
async function refreshForReplay(m: Machinery, req: Prepared, r: RawResponse, token: string, replay: Replay): Promise<void> {
  replay.consecutive401++;
  m.o.log.debug({ op: req.spec.name, status: r.status }, 'wms: 401, refreshing the token and replaying once');
  try {
    replay.token = await m.auth().handleUnauthorized(token);
  } catch (err) {
    m.fail(authFailure(m.scrub, err, req.method, req.path));
  }
}

/** An attempt without an answer: held back unwritten (not a request), aborted (thrown), or a failure to retry or not. */
async function failedOnTheWire(m: Machinery, req: Prepared, failure: AttemptFailure, attempt: number, hooks: WriteHooks | undefined): Promise<Outcome> {
  if (failure.held) {
    // never written: not a request, not a retry; it waits for the gate like any other call
    m.counters.requests--;
    m.counters.held++;
    await hooks?.notApplied('held back unwritten: the WMS asked to wait (Retry-After)');
    return { kind: 'again' };
  }
  const error = networkError(m.scrub, req.method, req.path, failure, attempt, req.idempotent);
  if (failure.aborted) {
    if (hooks && !error.mayHaveReachedServer) await hooks.notApplied(error.message);
    m.fail(error);
  }
  if (error.code === WmsErrorCode.NETWORK || error.code === WmsErrorCode.TIMEOUT) m.breaker.connectionFailed();
  return afterAttempt(hooks, { kind: 'failed', error, unauthorized: false });
}

/** An attempt that provably applied nothing clears its mark (the answer says so, or nothing was written). */
async function afterAttempt(hooks: WriteHooks | undefined, outcome: Outcome): Promise<Outcome> {
  if (!hooks || outcome.kind === 'ok') return outcome;
  if (outcome.kind === 'again') await hooks.notApplied('a 401: the token was refused before anything was applied');
  else if (!outcome.error.mayHaveReachedServer) await hooks.notApplied(outcome.error.message);
  return outcome;
}

/** The call as it goes on the wire: method, path with its query, body (DateTimes written as configured). */
function prepareCall(o: CallPolicyOptions, spec: CallSpec, closed: boolean): Prepared {
  const ep = ENDPOINTS[spec.name];
  const method: string = ep.method;
  const path = buildPath(ep.path, spec.params);
  if (closed) throw notSent(method, path, 0, 'CLOSED', 'client is closed');
  let qs = '';
  if (spec.query) {
    const sp = new URLSearchParams();
    for (const [k, v] of Object.entries(spec.query)) sp.set(k, String(v));
    qs = `?${sp.toString()}`;
  }
  const anonymous = 'anonymous' in ep && ep.anonymous === true;
  let body: Buffer | undefined;
  let contentType: string | undefined;
  if (spec.raw) {
    body = spec.raw.body;
    contentType = spec.raw.contentType;
  } else if (spec.json !== undefined) {
    body = Buffer.from(JSON.stringify(anonymous || o.dateTimes === 'utc' ? spec.json : withDateTimes(spec.json, o.dateTimes, o.timeZone)), 'utf8');
    contentType = 'application/json';
  }
  return { spec, method, path, wirePath: o.prefix + path + qs, idempotent: isIdempotent(method, spec.idempotent), anonymous, body, contentType };
}

/** After a failed attempt: waits the retry's delay, or throws the error when it is not retried. */
async function retryOrThrow(m: Machinery, req: Prepared, error: WmsError, attempt: number): Promise<void> {
  const { spec, idempotent } = req;
  const { o } = m;
  const delay =
    spec.noRetry || m.closed() || m.breaker.state().circuitOpen
      ? undefined
      : decideRetry(error, attempt, o.retry, req.method, { idempotent, retryPostOn5xx: o.retryPostOn5xx });
  if (delay === undefined) {
    if (error.mayHaveReachedServer && !idempotent) o.log.warn({ op: spec.name, attempt, code: error.code }, 'wms: send in doubt, not retried');
    m.fail(error);
  }
  m.counters.retries++;
  o.log.debug({ op: spec.name, attempt, code: error.code, status: error.httpStatus, delayMs: delay }, 'wms: attempt failed, will retry');
  try {
    await m.clock.sleep(delay!, spec.signal);
  } catch {
    m.fail(error);
  }
}

/** Every attempt of one call until an answer, an error not retried, or the retries run out. */
async function callWithRetries(m: Machinery, req: Prepared): Promise<Envelope> {
  const replay: Replay = { consecutive401: 0, token: undefined };
  for (let attempt = 1; ; attempt++) {
    const outcome = await attemptOnce(m, req, attempt, replay);
    if (outcome.kind === 'ok') return outcome.env;
    if (outcome.kind === 'again') {
      attempt--; // waited for the gate, or replayed after a 401: not a retry
      continue;
    }
    // anything but a 401 (a 500, a reset...) ends a run of 401s: a later 401 is a new expiry
    if (!outcome.unauthorized) replay.consecutive401 = 0;
    await retryOrThrow(m, req, outcome.error, attempt);
  }
}

/** The token manager, authorizing and refreshing through the policy's own calls (`call`). */
function createPolicyAuth(o: CallPolicyOptions, clock: Clock, call: (spec: CallSpec) => Promise<Envelope>): AuthManager {
  return createAuthManager(
    {
      ...(o.refreshSkewSeconds !== undefined ? { refreshSkewSeconds: o.refreshSkewSeconds } : {}),
      ...(o.tokenTtlSeconds !== undefined ? { tokenTtlSeconds: o.tokenTtlSeconds } : {}),
      now: clock.now,
      logger: o.log,
    },
    {
      authorize: async () => {
        const env = await call({ name: 'authorize', json: { accessKeyID: o.accessKeyID, secretKey: o.secretKey }, idempotent: true });
        return env['data'];
      },
      refresh: async (refreshToken: string) => {
        const env = await call({ name: 'refreshToken', json: { accessKeyID: o.accessKeyID, dataRefreshToken: refreshToken }, noRetry: true });
        return env['data'];
      },
    },
  );
}

/** Secrets never leave the client: the secret key and the tokens held, replaced in any text that could. */
function createScrub(secretKey: string, auth: () => AuthManager): Scrub {
  return (text: string): string => {
    let out = text;
    for (const secret of [secretKey, ...auth().secrets()]) {
      if (secret && secret.length >= 4 && out.includes(secret)) out = out.split(secret).join('[redacted]');
    }
    return out;
  };
}

export function createCallPolicy(o: CallPolicyOptions): CallPolicy {
  const clock = o.clock ?? realClock;
  const slots = createSemaphore(o.concurrency);
  const bucket: TokenBucket | undefined = o.requestsPerSecond !== undefined ? createTokenBucket({ ratePerSecond: o.requestsPerSecond }) : undefined;
  const counters: CallCounters = { requests: 0, retries: 0, failures: 0, held: 0 };
  let closed = false;
  const m: Machinery = {
    o,
    clock,
    slots,
    throttle: createThrottle(slots, o.concurrency, o.log, clock),
    bucket,
    counters,
    breaker: createCircuitBreaker({ ...(o.breaker ?? {}), now: clock.now }),
    latency: createLatencyRecorder(LATENCY_BUCKETS_MS),
    scrub: createScrub(o.secretKey, () => auth),
    afterTurn: createTurnBatch(),
    fail: (err: WmsError): never => {
      counters.failures++;
      throw err;
    },
    closed: () => closed,
    auth: () => auth,
  };
  const call = async (spec: CallSpec): Promise<Envelope> => callWithRetries(m, prepareCall(o, spec, closed));
  const auth = createPolicyAuth(o, clock, call);

  return {
    call,
    auth,
    breaker: m.breaker,
    latency: m.latency,
    counters,
    scrub: m.scrub,
    log: o.log,
    async close() {
      if (closed) return;
      closed = true;
      bucket?.close();
      await o.transport.close();
    },
  };
}
