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
   * reads as refused credentials only with a young token (call-policy.ts): the token handleUnauthorized hands over
   * may be one another request renewed a while ago.
   */
  ageMs(token: string): number;
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

export function createAuthManager(options: AuthManagerOptions, transport: AuthTransport): AuthManager {
  const now = options.now ?? Date.now;
  const skewMs = (options.refreshSkewSeconds ?? 30) * 1000;
  const log = options.logger;
  const counters: AuthStats = { authorizations: 0, refreshes: 0, refreshFailures: 0 };
  let held: Held | undefined;
  let flight: Promise<void> | undefined;

  const accept = (data: unknown, via: 'authorize' | 'refresh'): void => {
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
    const obtained = now();
    let expiresAt: number | undefined;
    const exp = jwtExpiry(token);
    const raw = data as Record<string, unknown>;
    const expiresIn = raw['expiresIn'] ?? raw['expires_in'];
    if (exp !== undefined) expiresAt = exp * 1000;
    else if (typeof expiresIn === 'number' && expiresIn > 0) expiresAt = obtained + expiresIn * 1000;
    else if (options.tokenTtlSeconds !== undefined && options.tokenTtlSeconds > 0) expiresAt = obtained + options.tokenTtlSeconds * 1000;
    let refreshAt: number | undefined;
    if (expiresAt !== undefined) {
      const lifetime = Math.max(0, expiresAt - obtained);
      refreshAt = expiresAt - Math.min(skewMs, lifetime / 2);
    }
    held = { token, refreshToken, refreshAt, obtained };
  };

  const doAuthorize = async (): Promise<void> => {
    counters.authorizations++;
    const data = await transport.authorize();
    accept(data, 'authorize');
    log?.debug({ op: 'authorize' }, 'wms: authorized');
  };

  const doRefreshOrAuthorize = async (): Promise<void> => {
    const rt = held?.refreshToken;
    if (rt) {
      counters.refreshes++;
      try {
        const data = await transport.refresh(rt);
        accept(data, 'refresh');
        log?.debug({ op: 'refresh' }, 'wms: token refreshed');
        return;
      } catch (err) {
        counters.refreshFailures++;
        log?.warn({ op: 'refresh', err: errSummary(err) }, 'wms: token refresh failed, authorizing again');
      }
    }
    await doAuthorize();
  };

  /** a known expiry is near: the token is renewed before it is used (getToken) or handed to a replay */
  const pastRefresh = (h: Held): boolean => h.refreshAt !== undefined && now() >= h.refreshAt;

  /** Runs `fn` as the single flight, or joins the one in progress. */
  const fly = (fn: () => Promise<void>): Promise<void> => {
    if (!flight) {
      flight = fn().finally(() => {
        flight = undefined;
      });
    }
    return flight;
  };

  const getToken = async (): Promise<string> => {
    for (let i = 0; i < 3; i++) {
      if (flight) await flight;
      if (!held) {
        await fly(doAuthorize);
        continue;
      }
      if (pastRefresh(held)) {
        await fly(doRefreshOrAuthorize);
        // use whatever the flight produced, even if its expiry is already near (very short ttl)
        if (held) return held.token;
        continue;
      }
      return held.token;
    }
    if (held) return held.token;
    throw new Error('no token after authorize');
  };

  return {
    getToken,
    async handleUnauthorized(usedToken: string): Promise<string> {
      if (flight) await flight;
      // someone else already renewed it: that token, unless it is itself past its refresh point (a renewal of a
      // while ago, with a short lifetime): the replay would carry an expiring token, be refused again at once,
      // and a second 401 that soon reads as refused credentials (call-policy.ts)
      if (held && held.token !== usedToken && !pastRefresh(held)) return held.token;
      await fly(doRefreshOrAuthorize);
      if (!held) throw new Error('no token after refresh');
      return held.token;
    },
    async authorize(): Promise<void> {
      if (flight) await flight;
      await fly(doAuthorize);
    },
    ageMs(token: string): number {
      return held && held.token === token ? Math.max(0, now() - held.obtained) : Infinity;
    },
    secrets(): string[] {
      return held ? [held.token, held.refreshToken] : [];
    },
    stats(): AuthStats {
      return { ...counters };
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
