/**
 * The sandbox's authentication: POST /open/v1/authorize and /open/v1/refreshtoken (single-use refresh
 * tokens, 24 h), and the Bearer check of every other endpoint. Tokens live in memory only: a restarted
 * sandbox asks its clients to authorize again.
 */
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import { AuthorizeRequest, RefreshTokenRequest } from '../wms/schemas.js';
import { isReply, jsonBody, type ApiRequest } from './api.js';
import { fail, ok, type Reply } from './http-util.js';
import type { SandboxState } from './state.js';
import { formatProblems, zodProblems } from './validate.js';

const REFRESH_TTL_MS = 24 * 3600 * 1000;

export interface SandboxAuth {
  authorize(req: ApiRequest): Reply;
  refresh(req: ApiRequest): Reply;
  /** null when the Authorization header carries a live token, else the 401 */
  checkBearer(header: string | undefined): Reply | null;
}

function sameSecret(a: string, b: string): boolean {
  const ha = createHash('sha256').update(a).digest();
  const hb = createHash('sha256').update(b).digest();
  return timingSafeEqual(ha, hb);
}

export function createSandboxAuth(
  accessKeyID: string,
  secretKey: string,
  tokenTtlSeconds: () => number,
  state: () => SandboxState,
  now: () => number = Date.now,
): SandboxAuth {
  const tokens = new Map<string, number>(); // token -> expiresAt (ms)
  const refreshTokens = new Map<string, { expiresAt: number; used: boolean }>();
  const issuePair = (): { token: string; refreshToken: string } => {
    const at = now();
    if (tokens.size > 10_000) for (const [t, exp] of tokens) if (exp + 3_600_000 < at) tokens.delete(t);
    if (refreshTokens.size > 10_000) for (const [t, r] of refreshTokens) if (r.used || r.expiresAt < at) refreshTokens.delete(t);
    const token = randomBytes(24).toString('base64url');
    const refreshToken = randomBytes(32).toString('base64url');
    tokens.set(token, at + tokenTtlSeconds() * 1000);
    refreshTokens.set(refreshToken, { expiresAt: at + REFRESH_TTL_MS, used: false });
    return { token, refreshToken };
  };
  const authFail = (error: string): Reply => {
    state().stats.authFailures++;
    return fail(401, error, null, { 'www-authenticate': 'Bearer' });
  };
  return {
    authorize(req) {
      const raw = jsonBody(req);
      if (isReply(raw)) return raw;
      const r = AuthorizeRequest.safeParse(raw);
      if (!r.success) return fail(400, formatProblems(zodProblems(r.error)));
      if (!sameSecret(r.data.accessKeyID, accessKeyID) || !sameSecret(r.data.secretKey, secretKey)) return authFail('invalid credentials');
      state().stats.authorizations++;
      return ok(issuePair());
    },
    refresh(req) {
      const raw = jsonBody(req);
      if (isReply(raw)) return raw;
      const r = RefreshTokenRequest.safeParse(raw);
      if (!r.success) return fail(400, formatProblems(zodProblems(r.error)));
      if (!sameSecret(r.data.accessKeyID, accessKeyID)) return authFail('invalid credentials');
      const rt = refreshTokens.get(r.data.dataRefreshToken);
      if (!rt) return authFail('invalid refresh token');
      if (rt.used) return authFail('refresh token already used');
      if (rt.expiresAt <= now()) return authFail('refresh token expired');
      rt.used = true;
      state().stats.refreshes++;
      return ok(issuePair());
    },
    checkBearer(header) {
      const m = header ? /^Bearer\s+(\S+)\s*$/i.exec(header) : null;
      if (!m) return authFail('invalid token');
      const exp = tokens.get(m[1]!);
      if (exp === undefined) return authFail('invalid token');
      if (exp <= now()) return authFail('token expired');
      return null;
    },
  };
}
