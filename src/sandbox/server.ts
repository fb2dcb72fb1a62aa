/**
 * The sandbox's HTTP side: node:http on 127.0.0.1, the firewall (User-Agent), content negotiation,
 * fault injection, Bearer authentication, routing over ENDPOINTS, the inspection API under
 * /__sandbox/, and the state file (atomic save: temp file in the same folder, then rename).
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import { randomBytes, timingSafeEqual, createHash } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { rename, writeFile, unlink } from 'node:fs/promises';
import { z } from 'zod';
import { ENDPOINTS, type EndpointName } from '../wms/endpoints.js';
import { AuthorizeRequest, RefreshTokenRequest } from '../wms/schemas.js';
import { ConfigError } from '../shared/errors.js';
import { silentLogger } from '../shared/logger.js';
import { HANDLERS, isMutating, isReply, jsonBody, type ApiContext, type ApiRequest } from './api.js';
import { CODEERP_DIALECT_OWNER_CODEERP, parseDialect, presentData, rewritesAnswers, type SandboxDialect } from './dialect.js';
import { runEvent } from './events.js';
import { fail, ok, type Reply } from './http-util.js';
import { createRng, deterministicUuid } from './ids.js';
import type { Sandbox, SandboxFaults, SandboxOptions } from './types.js';
import { seedCredentials, seedState } from './seed.js';
import { RESOURCES, StateIndex, isSandboxState, type Resource, type SandboxState } from './state.js';
import { refreshStatusNames, stockTotal } from './stock.js';
import { formatProblems, zodProblems } from './validate.js';

/**
 * Requests arriving this soon after an injected 429 do not count as inside its Retry-After window: the
 * client may have sent them before the 429 reached it (see SandboxStats.retryAfter).
 */
export const RETRY_AFTER_GRACE_MS = 250;
import { createWebhookEmitter } from './webhooks.js';

const JSON_BODY_LIMIT = 16 * 1024 * 1024;
const MULTIPART_BODY_LIMIT = 10 * 1024 * 1024 + 256 * 1024;
/** Past this, an oversized body is not even drained: the connection is closed. */
const DRAIN_LIMIT = 64 * 1024 * 1024;
const REFRESH_TTL_MS = 24 * 3600 * 1000;
const SAVE_DEBOUNCE_MS = 100;
/** on close, requests in flight get this long before their connections are destroyed */
const CLOSE_GRACE_MS = 1_000;

interface Route {
  name: EndpointName;
  method: string;
  segments: string[];
  anonymous: boolean;
}

function compileRoutes(): { literal: Map<string, Route>; templated: Route[]; paths: Map<string, Set<string>> } {
  const literal = new Map<string, Route>();
  const templated: Route[] = [];
  const paths = new Map<string, Set<string>>();
  for (const [name, def] of Object.entries(ENDPOINTS) as Array<[EndpointName, (typeof ENDPOINTS)[EndpointName]]>) {
    const route: Route = { name, method: def.method, segments: def.path.split('/'), anonymous: 'anonymous' in def && def.anonymous === true };
    if (def.path.includes('{')) templated.push(route);
    else literal.set(`${def.method} ${def.path}`, route);
    const methods = paths.get(def.path) ?? new Set<string>();
    methods.add(def.method);
    paths.set(def.path, methods);
  }
  return { literal, templated, paths };
}
const ROUTES = compileRoutes();

function matchTemplate(route: Route, segs: string[]): Record<string, string> | null {
  if (route.segments.length !== segs.length) return null;
  const params: Record<string, string> = {};
  for (let i = 0; i < segs.length; i++) {
    const t = route.segments[i]!;
    const s = segs[i]!;
    if (t.startsWith('{')) {
      if (s === '') return null;
      try {
        params[t.slice(1, -1)] = decodeURIComponent(s);
      } catch {
        return null;
      }
    } else if (t !== s) return null;
  }
  return params;
}

/** Finds the route; `allowed` lists the methods of the path when only the method is wrong. */
function findRoute(method: string, path: string): { route: Route; params: Record<string, string> } | { allowed: string[] } | null {
  const lit = ROUTES.literal.get(`${method} ${path}`);
  if (lit) return { route: lit, params: {} };
  const segs = path.split('/');
  for (const r of ROUTES.templated) {
    if (r.method !== method) continue;
    const params = matchTemplate(r, segs);
    if (params) return { route: r, params };
  }
  const allowed = new Set<string>();
  for (const r of [...ROUTES.literal.values(), ...ROUTES.templated]) {
    if (r.method === method) continue;
    if (r.segments.join('/') === path || matchTemplate(r, segs)) allowed.add(r.method);
  }
  return allowed.size ? { allowed: [...allowed] } : null;
}

function acceptsJson(accept: string | undefined): boolean {
  if (accept === undefined || accept.trim() === '') return true;
  for (const part of accept.split(',')) {
    const t = part.split(';')[0]!.trim().toLowerCase();
    if (t === 'application/json' || t === 'application/*' || t === '*/*' || t.endsWith('+json')) return true;
  }
  return false;
}

const FaultsBody = z.strictObject({
  latencyMs: z.number().finite().min(0).optional(),
  latencyJitterMs: z.number().finite().min(0).optional(),
  failRate: z.number().min(0).max(1).optional(),
  rate429: z.number().min(0).max(1).optional(),
  resetRate: z.number().min(0).max(1).optional(),
  tokenTtlSeconds: z.number().finite().positive().optional(),
});

function sameSecret(a: string, b: string): boolean {
  const ha = createHash('sha256').update(a).digest();
  const hb = createHash('sha256').update(b).digest();
  return timingSafeEqual(ha, hb);
}

export async function startSandboxServer(options: SandboxOptions): Promise<Sandbox> {
  const log = options.logger ?? silentLogger();
  const seed = String(options.seed ?? 1);
  const creds = seedCredentials(seed);
  const accessKeyID = options.accessKeyID ?? creds.accessKeyID;
  const secretKey = options.secretKey ?? creds.secretKey;
  const maxPageSize = options.maxPageSize ?? 500;
  const dialect: SandboxDialect = parseDialect(options.dialect, 'sandbox: dialect');
  /** seed data as this dialect has it (the 'codeERP' Owners dialect gives the seed owner a codeERP unlike its code) */
  const seedData = (): SandboxState => {
    const s = seedState(seed, options.stockRecords ?? 0);
    if (dialect.ownersCodeerpMatches === 'codeERP') for (const o of s.collections.Owners) o['codeERP'] = CODEERP_DIALECT_OWNER_CODEERP;
    return s;
  };
  if (!Number.isInteger(maxPageSize) || maxPageSize < 1) throw new ConfigError(`sandbox: maxPageSize must be a positive integer (got ${maxPageSize})`);
  const faults = { latencyMs: 0, latencyJitterMs: 0, failRate: 0, rate429: 0, resetRate: 0, tokenTtlSeconds: 900 };
  const setFaults = (f: SandboxFaults): void => {
    const r = FaultsBody.safeParse(f);
    if (!r.success) throw new ConfigError(`sandbox: invalid faults: ${formatProblems(zodProblems(r.error))}`);
    for (const [k, v] of Object.entries(r.data)) if (v !== undefined) (faults as Record<string, number>)[k] = v;
  };
  setFaults({
    latencyMs: options.latencyMs,
    latencyJitterMs: options.latencyJitterMs,
    failRate: options.failRate,
    rate429: options.rate429,
    resetRate: options.resetRate,
    tokenTtlSeconds: options.tokenTtlSeconds,
  });

  // ---------------------------------------------------------------- state and persistence
  let state: SandboxState;
  const stateFile = options.stateFile;
  if (stateFile && existsSync(stateFile)) {
    let parsed: unknown;
    try {
      parsed = JSON.parse(readFileSync(stateFile, 'utf8'));
    } catch (err) {
      throw new ConfigError(`sandbox: state file ${stateFile} is not valid JSON`, { cause: err });
    }
    if (!isSandboxState(parsed)) throw new ConfigError(`sandbox: ${stateFile} is not a sandbox state file (refusing to overwrite it)`);
    state = parsed;
    if (options.stockRecords !== undefined) state.synthetic.count = options.stockRecords;
    log.info({ file: stateFile }, 'sandbox state loaded');
  } else {
    state = seedData();
  }
  refreshStatusNames(state);

  let saveTimer: NodeJS.Timeout | null = null;
  let saving: Promise<void> = Promise.resolve();
  let saveCount = 0;
  /** temp file in the same folder, then rename: atomic within one filesystem */
  const writeStateFile = async (file: string): Promise<void> => {
    const tmp = `${file}.${process.pid}.${++saveCount}.tmp`;
    try {
      await writeFile(tmp, JSON.stringify(state));
      await rename(tmp, file);
    } catch (err) {
      await unlink(tmp).catch(() => undefined);
      throw err;
    }
  };
  const saveNow = (): Promise<void> => {
    if (!stateFile) return Promise.resolve();
    saving = saving.then(() =>
      writeStateFile(stateFile).catch((err: unknown) => {
        log.error({ err, file: stateFile }, 'sandbox state not saved');
      }),
    );
    return saving;
  };

  const ctx: ApiContext = {
    state,
    index: new StateIndex(state),
    maxPageSize,
    dialect,
    newId: () => deterministicUuid(ctx.state.seed, `rec:${ctx.state.nextSeq++}`),
    changed: () => {
      if (!stateFile || saveTimer) return;
      saveTimer = setTimeout(() => {
        saveTimer = null;
        void saveNow();
      }, SAVE_DEBOUNCE_MS);
    },
  };
  const replaceState = (s: SandboxState): void => {
    state = s;
    ctx.state = s;
    ctx.index = new StateIndex(s);
    refreshStatusNames(s);
    ctx.changed();
  };

  const hooks = createWebhookEmitter({ url: options.webhookUrl, retryDelaysMs: options.webhookRetryDelaysMs ?? [1000, 5000, 15000], logger: log });

  // ---------------------------------------------------------------- auth
  const tokens = new Map<string, number>(); // token -> expiresAt (ms)
  const refreshTokens = new Map<string, { expiresAt: number; used: boolean }>();
  const issuePair = (): { token: string; refreshToken: string } => {
    const now = Date.now();
    if (tokens.size > 10_000) for (const [t, exp] of tokens) if (exp + 3_600_000 < now) tokens.delete(t);
    if (refreshTokens.size > 10_000) for (const [t, r] of refreshTokens) if (r.used || r.expiresAt < now) refreshTokens.delete(t);
    const token = randomBytes(24).toString('base64url');
    const refreshToken = randomBytes(32).toString('base64url');
    tokens.set(token, now + faults.tokenTtlSeconds * 1000);
    refreshTokens.set(refreshToken, { expiresAt: now + REFRESH_TTL_MS, used: false });
    return { token, refreshToken };
  };
  const authFail = (error: string): Reply => {
    state.stats.authFailures++;
    return fail(401, error, null, { 'www-authenticate': 'Bearer' });
  };
  const authorize = (req: ApiRequest): Reply => {
    const raw = jsonBody(req);
    if (isReply(raw)) return raw;
    const r = AuthorizeRequest.safeParse(raw);
    if (!r.success) return fail(400, formatProblems(zodProblems(r.error)));
    if (!sameSecret(r.data.accessKeyID, accessKeyID) || !sameSecret(r.data.secretKey, secretKey)) return authFail('invalid credentials');
    state.stats.authorizations++;
    return ok(issuePair());
  };
  const refresh = (req: ApiRequest): Reply => {
    const raw = jsonBody(req);
    if (isReply(raw)) return raw;
    const r = RefreshTokenRequest.safeParse(raw);
    if (!r.success) return fail(400, formatProblems(zodProblems(r.error)));
    if (!sameSecret(r.data.accessKeyID, accessKeyID)) return authFail('invalid credentials');
    const rt = refreshTokens.get(r.data.dataRefreshToken);
    if (!rt) return authFail('invalid refresh token');
    if (rt.used) return authFail('refresh token already used');
    if (rt.expiresAt <= Date.now()) return authFail('refresh token expired');
    rt.used = true;
    state.stats.refreshes++;
    return ok(issuePair());
  };
  const checkBearer = (header: string | undefined): Reply | null => {
    const m = header ? /^Bearer\s+(\S+)\s*$/i.exec(header) : null;
    if (!m) return authFail('invalid token');
    const exp = tokens.get(m[1]!);
    if (exp === undefined) return authFail('invalid token');
    if (exp <= Date.now()) return authFail('token expired');
    return null;
  };

  // ---------------------------------------------------------------- faults
  const rng = createRng(`faults:${seed}`);
  let resetCount = 0;

  // ---------------------------------------------------------------- request plumbing
  const sockets = new Set<Socket>();

  function send(res: ServerResponse, reply: Reply): void {
    const body = JSON.stringify(reply.body);
    const headers: Record<string, string | number> = {
      'content-type': 'application/json; charset=utf-8',
      'content-length': Buffer.byteLength(body),
      ...(reply.headers ?? {}),
    };
    res.writeHead(reply.status, headers);
    res.end(body);
  }

  /**
   * Reads the body up to `limit`. A declared Content-Length over the limit resolves 'too-large' unread;
   * a chunked body past the limit is drained (up to DRAIN_LIMIT, then the socket is destroyed).
   */
  function readBody(req: IncomingMessage, limit: number): Promise<Buffer | 'too-large' | 'aborted'> {
    return new Promise((resolve) => {
      const declared = Number(req.headers['content-length'] ?? NaN);
      if (Number.isFinite(declared) && declared > limit) {
        // refused unread: the answer carries Connection: close, so the unread body dies with the socket
        resolve('too-large');
        return;
      }
      const chunks: Buffer[] = [];
      let size = 0;
      let tooLarge = false;
      req.on('data', (c: Buffer) => {
        size += c.length;
        if (size > DRAIN_LIMIT) {
          req.socket.destroy();
          return;
        }
        if (size > limit) {
          tooLarge = true;
          chunks.length = 0;
        } else if (!tooLarge) chunks.push(c);
      });
      req.on('end', () => resolve(tooLarge ? 'too-large' : chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks)));
      req.on('error', () => resolve('aborted'));
      req.on('close', () => {
        if (!req.complete) resolve('aborted');
      });
    });
  }

  const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));
  // the Retry-After window of the last injected 429 (performance.now() ms)
  let retryAfterFrom = -Infinity;
  let retryAfterUntil = -Infinity;

  async function handleApi(req: IncomingMessage, res: ServerResponse, method: string, path: string, query: URLSearchParams | null): Promise<void> {
    const arrived = performance.now();
    state.stats.requests++;
    if (arrived >= retryAfterFrom + RETRY_AFTER_GRACE_MS && arrived < retryAfterUntil) (state.stats.retryAfter ??= { windows: 0, inside: 0 }).inside++;
    // API requests being handled at once (arrival to answer written or connection gone): lets a test see
    // that a client keeps to its concurrency
    concurrency.current++;
    if (concurrency.current > concurrency.peak) concurrency.peak = concurrency.current;
    res.once('close', () => concurrency.current--);
    const ua = req.headers['user-agent'];
    if (ua === undefined || ua.trim() === '') {
      req.resume();
      send(res, fail(403, 'User-Agent header is required'));
      return;
    }
    if (!acceptsJson(req.headers['accept'])) {
      req.resume();
      send(res, fail(406, 'Accept must allow application/json'));
      return;
    }
    const found = findRoute(method, path);
    const limit = found && 'route' in found && found.route.name === 'attachToPickingList' ? MULTIPART_BODY_LIMIT : JSON_BODY_LIMIT;
    const body = await readBody(req, limit);
    if (body === 'aborted') return;

    // faults: one draw per request decides reset / 429 / 500 (never on /__sandbox)
    // the added latency is the service time: the answer leaves latencyMs after the request arrived (reading
    // the body included), so a client measured against it sees the configured latency, not latency + overhead
    const jitter = faults.latencyJitterMs > 0 ? rng() * faults.latencyJitterMs : 0;
    if (faults.latencyMs + jitter > 0) await sleep(Math.max(0, faults.latencyMs + jitter - (performance.now() - arrived)));
    let resetAfter = false;
    const draw = rng();
    if (draw < faults.resetRate) {
      if (isMutating(method) && found && 'route' in found && !found.route.anonymous && resetCount++ % 2 === 1) {
        resetAfter = true;
      } else {
        state.stats.faults.resetBefore++;
        log.debug({ method, path }, 'fault: connection reset before applying');
        req.socket.destroy();
        return;
      }
    } else if (draw < faults.resetRate + faults.rate429) {
      state.stats.faults.rate429++;
      (state.stats.retryAfter ??= { windows: 0, inside: 0 }).windows++;
      retryAfterFrom = performance.now();
      retryAfterUntil = retryAfterFrom + 1000;
      send(res, fail(429, 'too many requests (injected)', null, { 'retry-after': '1' }));
      return;
    } else if (draw < faults.resetRate + faults.rate429 + faults.failRate) {
      state.stats.faults.failRate++;
      send(res, fail(500, 'internal error (injected)'));
      return;
    }

    let reply: Reply;
    if (!found) reply = fail(404, `route not found: ${method} ${path}`);
    else if ('allowed' in found) reply = fail(405, `method ${method} not allowed on ${path}`, null, { allow: found.allowed.join(', ') });
    else if (body === 'too-large') reply = fail(413, `body: larger than the limit of ${limit} bytes`, null, { connection: 'close' });
    else {
      const apiReq: ApiRequest = { params: found.params, query, body, contentType: req.headers['content-type'] };
      const route = found.route;
      if (route.name === 'authorize') reply = authorize(apiReq);
      else if (route.name === 'refreshToken') reply = refresh(apiReq);
      else {
        reply = checkBearer(req.headers['authorization']) ?? HANDLERS[route.name](ctx, apiReq);
      }
    }
    if (body === 'too-large') reply.headers = { ...(reply.headers ?? {}), connection: 'close' };
    if (isMutating(method)) recordArrival(method, path, reply.status, body);
    if (resetAfter) {
      state.stats.faults.resetAfter++;
      log.debug({ method, path, status: reply.status }, 'fault: connection reset after applying');
      req.socket.destroy();
      return;
    }
    if (rewritesAnswers(dialect) && reply.body && typeof reply.body === 'object' && 'data' in reply.body) {
      reply.body = { ...(reply.body as Record<string, unknown>), data: presentData((reply.body as { data: unknown }).data, dialect) };
    }
    if (reply.status >= 500) log.warn({ method, path, status: reply.status }, 'sandbox error');
    else log.debug({ method, path, status: reply.status }, 'sandbox request');
    send(res, reply);
  }

  // ---------------------------------------------------------------- inspection API
  const concurrency = { current: 0, peak: 0 };

  /**
   * The changing requests in the order the sandbox applied them (handlers apply synchronously, so this is
   * the order of their effects), with the JSON body when small: a test checks the order a client keeps.
   * Bounded to the last ARRIVALS_KEPT; GET /__sandbox/arrivals?path=<prefix>.
   */
  const ARRIVALS_KEPT = 20_000;
  let arrivals: Array<{ seq: number; method: string; path: string; status: number; body: unknown }> = [];
  let arrivalSeq = 0;
  function recordArrival(method: string, path: string, status: number, body: Buffer | 'too-large'): void {
    let parsed: unknown = null;
    if (body !== 'too-large' && body.length > 0 && body.length <= 4096 && body[0] === 0x7b) {
      try {
        parsed = JSON.parse(body.toString('utf8'));
      } catch {
        parsed = null;
      }
    }
    arrivals.push({ seq: ++arrivalSeq, method, path, status, body: parsed });
    if (arrivals.length > ARRIVALS_KEPT * 1.25) arrivals = arrivals.slice(-ARRIVALS_KEPT);
  }

  function counts(): unknown {
    const records: Record<string, number> = {};
    for (const r of RESOURCES) records[r] = state.collections[r].length;
    records['Stock'] = stockTotal(state);
    const duplicates: Record<string, string[]> = {};
    for (const [res, byKey] of Object.entries(state.creations)) {
      const d = Object.entries(byKey)
        .filter(([, n]) => n > 1)
        .map(([k]) => k);
      if (d.length) duplicates[res] = d;
    }
    return { records, creations: state.creations, duplicates, updates: state.updates, deletes: state.deletes, stats: state.stats, concurrency: { ...concurrency } };
  }

  async function handleInspection(req: IncomingMessage, res: ServerResponse, method: string, path: string, query: URLSearchParams | null): Promise<void> {
    const body = await readBody(req, JSON_BODY_LIMIT);
    if (body === 'aborted') return;
    const plain = (status: number, data: unknown): void => send(res, { status, body: data });
    let parsed: unknown = undefined;
    if (body === 'too-large') {
      send(res, { status: 413, body: { ok: false, error: `body: larger than the limit of ${JSON_BODY_LIMIT} bytes` }, headers: { connection: 'close' } });
      return;
    }
    if (method === 'POST' && body.length > 0) {
      try {
        parsed = JSON.parse(body.toString('utf8'));
      } catch {
        plain(400, { ok: false, error: 'body: invalid JSON' });
        return;
      }
    }
    const key = `${method} ${path}`;
    if (key === 'GET /__sandbox/state') {
      const resource = query?.get('resource');
      if (!resource) return plain(200, state);
      if (resource === 'Stock') return plain(200, { stored: state.stock, synthetic: { ...state.synthetic } });
      if (resource === 'SyncSession') return plain(200, state.syncSessions);
      if ((RESOURCES as readonly string[]).includes(resource)) return plain(200, state.collections[resource as Resource]);
      return plain(404, { ok: false, error: `unknown resource "${resource}" (${[...RESOURCES, 'Stock', 'SyncSession'].join(', ')})` });
    }
    if (key === 'GET /__sandbox/counts') return plain(200, counts());
    if (key === 'GET /__sandbox/arrivals') {
      const prefix = query?.get('path') ?? '';
      return plain(200, arrivals.filter((a) => a.path.startsWith(prefix)));
    }
    if (key === 'POST /__sandbox/reset') {
      replaceState(seedData());
      concurrency.peak = concurrency.current;
      arrivals = [];
      return plain(200, { ok: true });
    }
    if (key === 'GET /__sandbox/faults') return plain(200, faults);
    if (key === 'POST /__sandbox/faults') {
      const r = FaultsBody.safeParse(parsed ?? {});
      if (!r.success) return plain(400, { ok: false, error: formatProblems(zodProblems(r.error)) });
      setFaults(r.data);
      return plain(200, { ok: true, faults });
    }
    if (key === 'POST /__sandbox/stock') {
      const r = z.strictObject({ count: z.number().int().min(0).max(50_000_000) }).safeParse(parsed ?? {});
      if (!r.success) return plain(400, { ok: false, error: formatProblems(zodProblems(r.error)) });
      state.synthetic.count = r.data.count;
      ctx.changed();
      return plain(200, { ok: true, stock: stockTotal(state) });
    }
    if (key === 'POST /__sandbox/stock/quantity') {
      // sets a product's stored stock (first record; the product's other records of the owner become 0), as if
      // someone had counted and adjusted it in the warehouse: reconciliation tests use it
      const r = z
        .strictObject({ productCode: z.string().min(1).optional(), productId: z.string().min(1).optional(), quantity: z.number().min(0) })
        .refine((b) => b.productCode !== undefined || b.productId !== undefined, 'productCode or productId is required')
        .safeParse(parsed ?? {});
      if (!r.success) return plain(400, { ok: false, error: formatProblems(zodProblems(r.error)) });
      const rows = state.stock.filter((row) => (r.data.productId ? row.productId.toLowerCase() === r.data.productId.toLowerCase() : row.productCode === r.data.productCode));
      if (rows.length === 0) return plain(404, { ok: false, error: `no stored stock for product ${r.data.productId ?? r.data.productCode}` });
      rows.forEach((row, i) => (row.quantity = i === 0 ? r.data.quantity : 0));
      ctx.changed();
      return plain(200, { ok: true, records: rows.length });
    }
    if (key === 'GET /__sandbox/webhooks') return plain(200, hooks.deliveries());
    if (method === 'POST' && path.startsWith('/__sandbox/events/')) {
      const r = runEvent(path.slice('/__sandbox/events/'.length), parsed ?? {}, ctx, hooks);
      return plain(r.status, r.body);
    }
    return plain(404, { ok: false, error: `unknown inspection route ${method} ${path}` });
  }

  // ---------------------------------------------------------------- server
  const server = createServer((req, res) => {
    const url = req.url ?? '/';
    const q = url.indexOf('?');
    const path = q < 0 ? url : url.slice(0, q);
    const query = q < 0 ? null : new URLSearchParams(url.slice(q + 1));
    const method = req.method ?? 'GET';
    const work = path.startsWith('/__sandbox/') ? handleInspection(req, res, method, path, query) : handleApi(req, res, method, path, query);
    work.catch((err: unknown) => {
      log.error({ err, method, path }, 'sandbox handler crashed');
      if (!res.headersSent) send(res, fail(500, 'internal error'));
      else res.destroy();
    });
  });
  server.keepAliveTimeout = 5_000;
  server.on('connection', (s: Socket) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  server.on('clientError', (_err, socket) => {
    if (socket.writable) socket.end('HTTP/1.1 400 Bad Request\r\nConnection: close\r\n\r\n');
    else socket.destroy();
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, options.host ?? '127.0.0.1', () => {
      server.off('error', reject);
      resolve();
    });
  });
  const addr = server.address();
  if (addr === null || typeof addr === 'string') throw new Error('sandbox: server has no TCP address');
  const host = addr.family === 'IPv6' ? `[${addr.address}]` : addr.address;
  const url = `http://${host}:${addr.port}`;
  if (stateFile && !existsSync(stateFile)) {
    try {
      await writeStateFile(stateFile);
    } catch (err) {
      await new Promise<void>((r) => server.close(() => r()));
      throw new ConfigError(`sandbox: cannot write the state file ${stateFile}: ${err instanceof Error ? err.message : String(err)}`, { cause: err });
    }
  }
  log.info({ url }, 'sandbox WMS listening');

  let closing: Promise<void> | null = null;
  return {
    url,
    accessKeyID,
    secretKey,
    get state() {
      return state;
    },
    dialect,
    setFaults,
    seedStock(n: number) {
      if (!Number.isInteger(n) || n < 0) throw new ConfigError(`sandbox: seedStock needs a non-negative integer (got ${n})`);
      state.synthetic.count = n;
      ctx.changed();
    },
    reset() {
      replaceState(seedData());
    },
    close() {
      closing ??= (async () => {
        await hooks.close();
        await new Promise<void>((resolve) => {
          server.close(() => resolve());
          // idle keep-alive connections go now; requests in flight get a moment to finish
          server.closeIdleConnections();
          const force = setTimeout(() => {
            for (const s of sockets) s.destroy();
          }, CLOSE_GRACE_MS);
          force.unref();
        });
        if (saveTimer) {
          clearTimeout(saveTimer);
          saveTimer = null;
        }
        await saveNow();
        log.info({ url }, 'sandbox WMS closed');
      })();
      return closing;
    },
  };
}
