/**
 * Token management for the WMS client.
 *
 * - authorize with accessKeyID/secretKey, keep token + refreshToken;
 * - refresh (POST /open/v1/refreshtoken {accessKeyID, dataRefreshToken}) shortly before expiry when the
 *   expiry is known (JWT `exp`, an `expiresIn` field in the answer, or options.tokenTtlSeconds), and
 *   when a request gets a 401;
 * - ONE flight at a time: however many requests need a new token, they all await the same promise
 *   (refresh tokens may be single-use, so two concurrent refreshes would burn each other);
 * - when the refresh fails (any reason: refused, single-use token already spent, network), fall back to a
 *   full authorize inside the same flight.
 * Tokens never appear in logs or error messages.
 */
import type { Logger } from '../shared/logger.js';
import { TokenPair } from './schemas.js';
import { ENDPOINTS } from './endpoints.js';
import { WmsError, WmsErrorCode, formatWmsMessage } from './errors.js';

export interface AuthTransport {
  /** POST /open/v1/authorize; resolves to the envelope's data */
  authorize(): Promise<unknown>;
  /** POST /open/v1/refreshtoken; resolves to the envelope's data */
  refresh(refreshToken: string): Promise<unknown>;
}

export interface AuthManagerOptions {
  /** refresh this long before a known expiry (at most half the token's lifetime) @default 30 */
  refreshSkewSeconds?: number;
  /** assumed lifetime when neither a JWT exp nor an expiresIn says it @default undefined (unknown) */
  tokenTtlSeconds?: number;
  now?: () => number;
  logger?: Logger;
}

export interface AuthStats {
  authorizations: number;
  refreshes: number;
  refreshFailures: number;
}

export interface AuthManager {
  /** a valid token (authorizes or refreshes first when needed) */
  getToken(): Promise<string>;
  /** a request carrying `usedToken` got a 401: refresh once (shared), resolve to the token to replay with */
  handleUnauthorized(usedToken: string): Promise<string>;
  /**
   * How long ago (ms) the manager obtained `token`; Infinity for a token it no longer holds. A replay's second 401
   * reads as refused credentials only with a token young when its answer came (call-policy.ts): the token a call
   * carries may be one another request renewed a while ago, whether the call took it, was handed it by
   * handleUnauthorized, or picked it up after waiting for its slot.
   */
  ageMs(token: string): number;
  /**
   * The newest token held, without a request: undefined while a flight is in progress, when none is held, or when
   * the held one is past its refresh point (getToken would renew it). A call picks it up right before its write,
   * after waiting for a slot: a token taken before the wait may have aged, or been replaced, meanwhile.
   */
  latest(): string | undefined;
  /** forces a fresh authorize */
  authorize(): Promise<void>;
  /** secrets currently held (token, refreshToken), for scrubbing text before it goes into an error */
  secrets(): string[];
  stats(): AuthStats;
}

interface Held {
  token: string;
  refreshToken: string;
  /** when it was obtained (now()) */
  obtained: number;
  /** ms epoch after which the client refreshes before use; undefined when the expiry is unknown */
  refreshAt: number | undefined;
}

/** Reads `exp` (seconds since epoch) from a JWT; undefined for anything else. */
export function jwtExpiry(token: string): number | undefined {
  const parts = token.split('.');
  if (parts.length !== 3 || !parts[1]) return undefined;
  try {
    const payload = JSON.parse(Buffer.from(parts[1], 'base64url').toString('utf8')) as unknown;
    if (payload && typeof payload === 'object' && typeof (payload as { exp?: unknown }).exp === 'number') {
      return (payload as { exp: number }).exp;
    }
  } catch {
    // not a JWT
  }
  return undefined;
}

/** When a token pair answered by authorize or refresh is to be renewed; throws E_WMS_RESPONSE when it holds no pair. */
function heldFrom(data: unknown, via: 'authorize' | 'refresh', obtained: number, skewMs: number, tokenTtlSeconds: number | undefined): Held {
  const parsed = TokenPair.safeParse(data);
  if (!parsed.success) {
    const ep = via === 'authorize' ? ENDPOINTS.authorize : ENDPOINTS.refreshToken;
    throw new WmsError(WmsErrorCode.RESPONSE, formatWmsMessage(ep.method, ep.path, 'answer holds no token/refreshToken in data'), {
      method: ep.method,
      path: ep.path,
      httpStatus: 200,
    });
  }
  const { token, refreshToken } = parsed.data;
  let expiresAt: number | undefined;
  const exp = jwtExpiry(token);
  const raw = data as Record<string, unknown>;
  const expiresIn = raw['expiresIn'] ?? raw['expires_in'];
  if (exp !== undefined) expiresAt = exp * 1000;
  else if (typeof expiresIn === 'number' && expiresIn > 0) expiresAt = obtained + expiresIn * 1000;
  else if (tokenTtlSeconds !== undefined && tokenTtlSeconds > 0) expiresAt = obtained + tokenTtlSeconds * 1000;
  let refreshAt: number | undefined;
  if (expiresAt !== undefined) {
    const lifetime = Math.max(0, expiresAt - obtained);
    refreshAt = expiresAt - Math.min(skewMs, lifetime / 2);
  }
  return { token, refreshToken, refreshAt, obtained };
}

/** The manager's state: the token held, the one flight (authorize or refresh) in progress, the counts. */
interface Tokens {
  options: AuthManagerOptions;
  transport: AuthTransport;
  now: () => number;
  skewMs: number;
  counters: AuthStats;
  held: Held | undefined;
  flight: Promise<void> | undefined;
}

async function doAuthorize(t: Tokens): Promise<void> {
  t.counters.authorizations++;
  const data = await t.transport.authorize();
  t.held = heldFrom(data, 'authorize', t.now(), t.skewMs, t.options.tokenTtlSeconds);
  t.options.logger?.debug({ op: 'authorize' }, 'wms: authorized');
}

/** A refresh with the refresh token held; any failure falls back to a full authorize in the same flight. */
async function doRefreshOrAuthorize(t: Tokens): Promise<void> {
  const rt = t.held?.refreshToken;
  const log = t.options.logger;
  if (rt) {
    t.counters.refreshes++;
    try {
      const data = await t.transport.refresh(rt);
      t.held = heldFrom(data, 'refresh', t.now(), t.skewMs, t.options.tokenTtlSeconds);
      log?.debug({ op: 'refresh' }, 'wms: token refreshed');
      return;
    } catch (err) {
      t.counters.refreshFailures++;
      log?.warn({ op: 'refresh', err: errSummary(err) }, 'wms: token refresh failed, authorizing again');
    }
  }
  await doAuthorize(t);
}

/** a known expiry is near: the token is renewed before it is used (getToken) or handed to a replay */
function pastRefresh(t: Tokens, h: Held): boolean {
  return h.refreshAt !== undefined && t.now() >= h.refreshAt;
}

/** Runs `fn` as the single flight, or joins the one in progress. */
function fly(t: Tokens, fn: (t: Tokens) => Promise<void>): Promise<void> {
  if (!t.flight) {
    t.flight = fn(t).finally(() => {
      t.flight = undefined;
    });
  }
  return t.flight;
}

async function getToken(t: Tokens): Promise<string> {
  for (let i = 0; i < 3; i++) {
    if (t.flight) await t.flight;
    if (!t.held) {
      await fly(t, doAuthorize);
      continue;
    }
    if (pastRefresh(t, t.held)) {
      await fly(t, doRefreshOrAuthorize);
      // use whatever the flight produced, even if its expiry is already near (very short ttl)
      if (t.held) return t.held.token;
      continue;
    }
    return t.held.token;
  }
  if (t.held) return t.held.token;
  throw new Error('no token after authorize');
}

async function handleUnauthorized(t: Tokens, usedToken: string): Promise<string> {
  if (t.flight) await t.flight;
  // someone else already renewed it: that token, unless it is itself past its refresh point (a renewal of a
  // while ago, with a short lifetime): the replay would carry an expiring token, be refused again at once,
  // and a second 401 that soon reads as refused credentials (call-policy.ts)
  if (t.held && t.held.token !== usedToken && !pastRefresh(t, t.held)) return t.held.token;
  await fly(t, doRefreshOrAuthorize);
  if (!t.held) throw new Error('no token after refresh');
  return t.held.token;
}

export function createAuthManager(options: AuthManagerOptions, transport: AuthTransport): AuthManager {
  const t: Tokens = {
    options,
    transport,
    now: options.now ?? Date.now,
    skewMs: (options.refreshSkewSeconds ?? 30) * 1000,
    counters: { authorizations: 0, refreshes: 0, refreshFailures: 0 },
    held: undefined,
    flight: undefined,
  };
  return {
    getToken: () => getToken(t),
    handleUnauthorized: (usedToken: string) => handleUnauthorized(t, usedToken),
    async authorize(): Promise<void> {
      if (t.flight) await t.flight;
      await fly(t, doAuthorize);
    },
    latest(): string | undefined {
      return !t.flight && t.held && !pastRefresh(t, t.held) ? t.held.token : undefined;
    },
    ageMs(token: string): number {
      return t.held && t.held.token === token ? Math.max(0, t.now() - t.held.obtained) : Infinity;
    },
    secrets(): string[] {
      return t.held ? [t.held.token, t.held.refreshToken] : [];
    },
    stats(): AuthStats {
      return { ...t.counters };
    },
  };
}

function errSummary(err: unknown): Record<string, unknown> {
  if (err && typeof err === 'object') {
    const e = err as { code?: unknown; message?: unknown };
    return { code: e.code, message: e.message };
  }
  return { message: String(err) };
}
