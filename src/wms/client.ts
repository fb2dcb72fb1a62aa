/**
 * The WMS client: implements WmsClient (client-types.ts) over undici, in four layers:
 *
 * - transport.ts: one undici Pool, one attempt on the wire under its own timeout, and whether the request
 *   was completely sent before a failure (what makes a failed POST "in doubt");
 * - call-policy.ts: every call's attempts: Retry-After gate, token (auth.ts: one shared refresh and one
 *   replay on a 401), circuit breaker, concurrency slot, token bucket, retries decided by `decideRetry`
 *   (retry.ts); client-errors.ts makes the WmsError of each failure;
 * - client-shapes.ts and paging.ts: request and record schemas, reads of one record, sends, and list
 *   reads page by page (page base auto-detection, never a short read);
 * - client-methods.ts: the methods generated from the endpoint table; this file adds the calls that are
 *   not one plain endpoint (stock search, lock / unlock, sync, the attachment upload) and the options.
 *
 * See docs/CLIENT.md.
 */
import { ConfigError } from '../shared/errors.js';
import { silentLogger, type Logger } from '../shared/logger.js';
import { isValidTimeZone } from '../shared/time.js';
import { DEFAULT_USER_AGENT } from '../shared/version.js';
import type { WmsAvailability } from './breaker.js';
import { createCallPolicy, type CallPolicy } from './call-policy.js';
import type { Clock } from './clock.js';
import { buildMethods } from './client-methods.js';
import { createShapes, type Shapes } from './client-shapes.js';
import type { AttachmentInput, CallOptions, PageOptions, WmsClient, WmsClientStats } from './client-types.js';
import { DATE_TIMES_MODES, type DateTimesMode } from './datetimes.js';
import { ENDPOINTS } from './endpoints.js';
import { WmsError, WmsErrorCode, formatWmsMessage } from './errors.js';
import { encodeMultipart } from './multipart.js';
import { createPager, type Pager } from './paging.js';
import { DEFAULT_RETRY_POLICY } from './retry.js';
import * as S from './schemas.js';
import { authFailure } from './client-errors.js';
import { createTransport } from './transport.js';

export { LATENCY_BUCKETS_MS } from './call-policy.js';

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
  /**
   * the time the client reads for token expiry, the Retry-After window, retry sleeps and the breaker (clock.ts);
   * tests hand one they advance themselves @default realClock
   */
  clock?: Clock;
}

/** The options with their defaults, checked (ConfigError on a bad one). */
function settle(options: WmsClientOptions) {
  if (!options.baseUrl) throw new ConfigError('WMS client: baseUrl is required');
  if (!options.accessKeyID || !options.secretKey) throw new ConfigError('WMS client: accessKeyID and secretKey are required');
  let base: URL;
  try {
    base = new URL(options.baseUrl);
  } catch {
    throw new ConfigError(`WMS client: baseUrl is not a URL`);
  }
  if (base.protocol !== 'http:' && base.protocol !== 'https:') throw new ConfigError(`WMS client: baseUrl must be http(s) (got ${base.protocol})`);
  const timeoutMs = options.timeoutMs ?? 30_000;
  const pageSize = options.pageSize ?? 100;
  const dateTimes: DateTimesMode = options.dateTimes ?? 'utc';
  const timeZone = options.timeZone ?? 'America/Sao_Paulo';
  if (!(DATE_TIMES_MODES as readonly string[]).includes(dateTimes))
    throw new ConfigError(`WMS client: dateTimes must be one of ${DATE_TIMES_MODES.join(', ')}`);
  if (!isValidTimeZone(timeZone)) throw new ConfigError(`WMS client: timeZone "${timeZone}" is not an IANA time zone`);
  if (!Number.isInteger(pageSize) || pageSize < 1) throw new ConfigError(`WMS client: pageSize must be an integer >= 1`);
  if (!(timeoutMs > 0)) throw new ConfigError(`WMS client: timeoutMs must be > 0`);
  return {
    origin: base.origin,
    prefix: base.pathname.replace(/\/+$/, ''),
    userAgent: options.userAgent && options.userAgent.trim() !== '' ? options.userAgent : DEFAULT_USER_AGENT,
    concurrency: options.concurrency ?? 16,
    timeoutMs,
    retry: {
      retries: options.retry?.retries ?? DEFAULT_RETRY_POLICY.retries,
      baseDelayMs: options.retry?.baseDelayMs ?? DEFAULT_RETRY_POLICY.baseDelayMs,
      maxDelayMs: options.retry?.maxDelayMs ?? DEFAULT_RETRY_POLICY.maxDelayMs,
    },
    retryPostOn5xx: options.retryPostOn5xx ?? true,
    pageSize,
    pagingBase: options.pagingBase ?? 'auto',
    validateRequests: options.validateRequests ?? true,
    dateTimes,
    timeZone,
    maxResponseBytes: options.maxResponseBytes ?? 64 * 1024 * 1024,
    log: options.logger ?? silentLogger(),
  };
}

export function createWmsClient(options: WmsClientOptions): WmsClient {
  const o = settle(options);
  const transport = createTransport({
    origin: o.origin,
    connections: o.concurrency,
    timeoutMs: o.timeoutMs,
    maxResponseBytes: o.maxResponseBytes,
    tls: options.tls,
  });
  const core = createCallPolicy({
    transport,
    prefix: o.prefix,
    userAgent: o.userAgent,
    accessKeyID: options.accessKeyID,
    secretKey: options.secretKey,
    concurrency: o.concurrency,
    retry: o.retry,
    retryPostOn5xx: o.retryPostOn5xx,
    requestsPerSecond: options.requestsPerSecond,
    dateTimes: o.dateTimes,
    timeZone: o.timeZone,
    refreshSkewSeconds: options.refreshSkewSeconds,
    tokenTtlSeconds: options.tokenTtlSeconds,
    breaker: options.breaker,
    log: o.log,
    clock: options.clock,
  });
  const shapes = createShapes(core, o.validateRequests);
  const pager = createPager(core, shapes, o.pageSize, o.pagingBase);
  const special = handWritten(core, shapes, pager);
  const client: WmsClient = {
    ...buildMethods(shapes, pager),
    ...special,
    availability(): WmsAvailability {
      return core.breaker.state();
    },
    stats(): WmsClientStats {
      const a = core.auth.stats();
      const l = core.latency.snapshot();
      return {
        requests: core.counters.requests,
        retries: core.counters.retries,
        refreshes: a.refreshes,
        authorizations: a.authorizations,
        failures: core.counters.failures,
        heldBack: core.counters.held,
        pagingBase: pager.knownBase() ?? null,
        latencyBucketsMs: l.bucketsMs,
        latencyCounts: l.counts,
        latencySumMs: l.sumMs,
      };
    },
    close: () => core.close(),
  };
  return client;
}

/** An envelope error raised on a 200 answer whose data says the operation failed. */
function envelopeFailure(name: 'lockStock' | 'unlockStock' | 'syncStock', what: string, envelopeError?: string): WmsError {
  const ep = ENDPOINTS[name];
  return new WmsError(WmsErrorCode.ENVELOPE, formatWmsMessage(ep.method, ep.path, `200 - ${what}`), {
    method: ep.method,
    path: ep.path,
    httpStatus: 200,
    envelopeCode: 200,
    ...(envelopeError !== undefined ? { envelopeError } : {}),
  });
}

/** The calls that are not one plain endpoint of the method table. */
function handWritten(core: CallPolicy, shapes: Shapes, pager: Pager) {
  const { requestBody, record } = shapes;

  const lockCall = async (name: 'lockStock' | 'unlockStock', body: S.StockLockRequest, opts?: CallOptions): Promise<S.StockLockResult> => {
    const json = requestBody(name, S.StockLockRequest, body, 'stock lock request');
    const env = await shapes.callWith({ name, json }, opts);
    const result = record(name, undefined, S.StockLockResult, 'StockLockResult', env['data']);
    const reason = result.error ? core.scrub(result.error) : '';
    // a valid request that matched nothing in the state it starts from (already in that status, or no such
    // lot): not refused data, an outcome of its own (the caller shows the reason, SPEC-NOTES)
    if (reason && result.stocksLocked === 0) return { ...result, error: reason };
    if (reason) {
      core.counters.failures++;
      throw envelopeFailure(name, `${reason} (stocksLocked ${result.stocksLocked})`, reason);
    }
    return result;
  };

  return {
    async authorize(): Promise<void> {
      try {
        await core.auth.authorize();
      } catch (err) {
        throw authFailure(core.scrub, err, ENDPOINTS.authorize.method, ENDPOINTS.authorize.path);
      }
    },
    async warmUp(): Promise<void> {
      await core.auth.getToken();
    },

    searchStock: (filters: S.StockSearchFilters, opts?: PageOptions) =>
      pager.paged('searchStock', S.StockRecord, 'Stock', opts, undefined, () =>
        requestBody('searchStock', S.StockSearchFilters, filters, 'stock search filters'),
      ),
    lockStock: async (body: S.StockLockRequest, opts?: CallOptions) => lockCall('lockStock', body, opts),
    unlockStock: async (body: S.StockLockRequest, opts?: CallOptions) => lockCall('unlockStock', body, opts),

    async syncStock(body: S.StockSyncRequest, opts?: CallOptions): Promise<S.StockSyncResult> {
      const json = requestBody('syncStock', S.StockSyncRequest, body, 'stock sync chunk');
      const result = await shapes.sendRequired('syncStock', json, S.StockSyncResult, 'StockSyncResult', opts);
      if (!result.success) {
        core.counters.failures++;
        throw envelopeFailure('syncStock', 'data.success is false');
      }
      return result;
    },

    async attachToPickingList(input: AttachmentInput, opts?: CallOptions): Promise<S.AttachmentRecord> {
      const fields = requestBody(
        'attachToPickingList',
        S.AttachmentRequest,
        {
          PickingListID: input.pickingListID,
          UserFileName: input.userFileName,
          ...(input.isPrintCheckout !== undefined ? { IsPrintCheckout: input.isPrintCheckout } : {}),
        },
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
      const mp = await encodeMultipart([
        { name: 'file', content: input.content, fileName: input.fileName, contentType: input.contentType ?? 'application/octet-stream' },
        { name: 'PickingListID', value: fields.PickingListID },
        { name: 'UserFileName', value: fields.UserFileName },
        ...(fields.IsPrintCheckout !== undefined ? [{ name: 'IsPrintCheckout', value: String(fields.IsPrintCheckout) }] : []),
      ]);
      const env = await shapes.callWith({ name: 'attachToPickingList', raw: { body: mp.body, contentType: mp.contentType } }, opts);
      return record('attachToPickingList', undefined, S.AttachmentRecord, 'PickingList attachment', env['data']);
    },
  };
}
