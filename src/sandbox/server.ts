/**
 * The sandbox's HTTP side: node:http on 127.0.0.1, the firewall (User-Agent), content negotiation and
 * routing over ENDPOINTS (routes.ts), fault injection (faults.ts), Bearer authentication (auth.ts), the
 * dialect applied to answers (dialect.ts), the inspection API under /__sandbox/ (inspection.ts), and the
 * state file (persistence.ts). This file wires them and owns the server's life.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import { existsSync } from 'node:fs';
import { ConfigError } from '../shared/errors.js';
import { ENDPOINTS } from '../wms/endpoints.js';
import { silentLogger, type Logger } from '../shared/logger.js';
import { HANDLERS, isMutating, type ApiContext, type ApiRequest } from './api.js';
import { createSandboxAuth, type SandboxAuth } from './auth.js';
import { CODEERP_DIALECT_OWNER_CODEERP, parseDialect, presentData, rewritesAnswers, type SandboxDialect } from './dialect.js';
import { createFaults, type Faults } from './faults.js';
import { JSON_BODY_LIMIT, MULTIPART_BODY_LIMIT, readBody, send } from './http-io.js';
import { fail, unknownQueryParameters, type Reply } from './http-util.js';
import { deterministicUuid } from './ids.js';
import { createInspection, type Inspection } from './inspection.js';
import { createStateSaver, loadStateFile } from './persistence.js';
import { acceptsJson, findRoute, type Found } from './routes.js';
import { seedCredentials, seedState } from './seed.js';
import { StateIndex, type SandboxState } from './state.js';
import { refreshStatusNames } from './stock.js';
import type { Sandbox, SandboxOptions } from './types.js';
import { createWebhookEmitter } from './webhooks.js';

export { RETRY_AFTER_GRACE_MS } from './faults.js';

/** on close, requests in flight get this long before their connections are destroyed */
const CLOSE_GRACE_MS = 1_000;

/** Seed data as the dialect has it (the 'codeERP' Owners dialect gives the seed owner a codeERP unlike its code). */
function seedFor(seed: string, stockRecords: number, dialect: SandboxDialect): SandboxState {
  const s = seedState(seed, stockRecords);
  if (dialect.ownersCodeerpMatches === 'codeERP') for (const o of s.collections.Owners) o['codeERP'] = CODEERP_DIALECT_OWNER_CODEERP;
  return s;
}

/** The answer as this dialect writes it (field names, casing of values: dialect.ts). */
function inDialect(reply: Reply, dialect: SandboxDialect): Reply {
  if (rewritesAnswers(dialect) && reply.body && typeof reply.body === 'object' && 'data' in reply.body) {
    reply.body = { ...(reply.body as Record<string, unknown>), data: presentData((reply.body as { data: unknown }).data, dialect) };
  }
  return reply;
}

interface ApiDeps {
  state(): SandboxState;
  ctx: ApiContext;
  dialect: SandboxDialect;
  faults: Faults;
  auth: SandboxAuth;
  inspection: Inspection;
  log: Logger;
}

/** the requests outside the interface kept in SandboxStats.outsideInterface.last */
const OUTSIDE_KEPT = 20;

/**
 * A request the interface does not define (an unknown route, a method a route does not take, a query parameter
 * the interface does not give): refused, and counted in SandboxStats.outsideInterface (a client keeps it at 0).
 */
function outsideInterface(deps: ApiDeps, method: string, what: string, reply: Reply): Reply {
  const o = (deps.state().stats.outsideInterface ??= { count: 0, last: [] });
  o.count++;
  o.last = [...o.last, `${method} ${what}: ${reply.status}`].slice(-OUTSIDE_KEPT);
  return reply;
}

/** The reply of a request that got past the firewall and the faults: routing, auth, the handler. */
function route(
  deps: ApiDeps,
  req: IncomingMessage,
  method: string,
  path: string,
  query: URLSearchParams | null,
  found: Found,
  body: Buffer | 'too-large',
  limit: number,
): Reply {
  if (!found) return outsideInterface(deps, method, path, fail(404, `route not found: ${method} ${path}`));
  if ('allowed' in found)
    return outsideInterface(deps, method, path, fail(405, `method ${method} not allowed on ${path}`, null, { allow: found.allowed.join(', ') }));
  if (body === 'too-large') return fail(413, `body: larger than the limit of ${limit} bytes`, null, { connection: 'close' });
  const name = found.route.name;
  const strict = unknownQueryParameters(query, ENDPOINTS[name].response === 'list');
  if (strict) return outsideInterface(deps, method, `${path}?${query?.toString() ?? ''}`, strict);
  const apiReq: ApiRequest = { params: found.params, query, body, contentType: req.headers['content-type'] };
  if (name === 'authorize') return deps.auth.authorize(apiReq);
  if (name === 'refreshToken') return deps.auth.refresh(apiReq);
  return deps.auth.checkBearer(req.headers['authorization']) ?? HANDLERS[name](deps.ctx, apiReq);
}

/** the sockets that have had an API request (the first request of a connection is told apart: faults.ts) */
const answeredSockets = new WeakSet<object>();

/** Counts the request and checks what every request needs (User-Agent, Accept); false when answered already. */
function admit(deps: ApiDeps, req: IncomingMessage, res: ServerResponse, arrived: number): boolean {
  deps.state().stats.requests++;
  deps.inspection.wire.request(req.socket);
  const first = !answeredSockets.has(req.socket);
  answeredSockets.add(req.socket);
  deps.faults.arrived(arrived, req.method ?? 'GET', req.url ?? '/', first);
  // API requests being handled at once (arrival to answer written or connection gone): lets a test see
  // that a client keeps to its concurrency
  const concurrency = deps.inspection.concurrency;
  concurrency.current++;
  if (concurrency.current > concurrency.peak) concurrency.peak = concurrency.current;
  res.once('close', () => concurrency.current--);
  const ua = req.headers['user-agent'];
  let refusal: Reply | undefined;
  if (ua === undefined || ua.trim() === '') refusal = fail(403, 'User-Agent header is required');
  else if (!acceptsJson(req.headers['accept'])) refusal = fail(406, 'Accept must allow application/json');
  if (refusal === undefined) return true;
  req.resume();
  send(res, refusal);
  return false;
}

function createApiHandler(deps: ApiDeps) {
  const { log } = deps;
  return async (req: IncomingMessage, res: ServerResponse, method: string, path: string, query: URLSearchParams | null): Promise<void> => {
    const arrived = performance.now();
    if (!admit(deps, req, res, arrived)) return;
    // a changing request's way over the wire (test-only: GET /__sandbox/wire)
    const wired = isMutating(method) ? deps.inspection.wire.begin(req.socket, res, method, path, arrived) : undefined;
    const found = findRoute(method, path);
    const limit = found && 'route' in found && found.route.name === 'attachToPickingList' ? MULTIPART_BODY_LIMIT : JSON_BODY_LIMIT;
    const body = await readBody(req, limit);
    if (body === 'aborted') return;
    if (wired) deps.inspection.wire.body(wired, body);
    const fault = await deps.faults.decide(method, path, found, arrived);
    if (fault.kind === 'reset-before') {
      if (wired) deps.inspection.wire.reset(wired, 'reset-before', null);
      req.socket.destroy();
      return;
    }
    if (fault.kind === 'reply') {
      if (wired) deps.inspection.wire.answer(wired, fault.reply.status);
      send(res, fault.reply);
      // its Retry-After window opens once the 429 is written: what arrives from now on came after it left
      if (fault.reply.status === 429) deps.faults.throttleSent(performance.now());
      return;
    }
    const reply = route(deps, req, method, path, query, found, body, limit);
    if (body === 'too-large') reply.headers = { ...(reply.headers ?? {}), connection: 'close' };
    if (isMutating(method)) deps.inspection.recordArrival(method, path, reply.status, body);
    if (fault.kind === 'reset-after') {
      deps.state().stats.faults.resetAfter++;
      if (wired) deps.inspection.wire.reset(wired, 'reset-after', reply.status);
      log.debug({ method, path, status: reply.status }, 'fault: connection reset after applying');
      req.socket.destroy();
      return;
    }
    inDialect(reply, deps.dialect);
    if (reply.status >= 500) log.warn({ method, path, status: reply.status }, 'sandbox error');
    else log.debug({ method, path, status: reply.status }, 'sandbox request');
    if (wired) deps.inspection.wire.answer(wired, reply.status);
    send(res, reply);
  };
}

type Handler = (req: IncomingMessage, res: ServerResponse, method: string, path: string, query: URLSearchParams | null) => Promise<void>;

/** The node:http server, listening; its URL and its open sockets (closed on close). */
async function listen(
  options: SandboxOptions,
  api: Handler,
  inspection: Handler,
  log: Logger,
): Promise<{ server: ReturnType<typeof createServer>; sockets: Set<Socket>; url: string }> {
  const sockets = new Set<Socket>();
  const server = createServer((req, res) => {
    const url = req.url ?? '/';
    const q = url.indexOf('?');
    const path = q < 0 ? url : url.slice(0, q);
    const query = q < 0 ? null : new URLSearchParams(url.slice(q + 1));
    const method = req.method ?? 'GET';
    const work = path.startsWith('/__sandbox/') ? inspection(req, res, method, path, query) : api(req, res, method, path, query);
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
  return { server, sockets, url: `http://${host}:${addr.port}` };
}

export async function startSandboxServer(options: SandboxOptions): Promise<Sandbox> {
  const log = options.logger ?? silentLogger();
  const seed = String(options.seed ?? 1);
  const creds = seedCredentials(seed);
  const accessKeyID = options.accessKeyID ?? creds.accessKeyID;
  const secretKey = options.secretKey ?? creds.secretKey;
  const maxPageSize = options.maxPageSize ?? 500;
  const dialect: SandboxDialect = parseDialect(options.dialect, 'sandbox: dialect');
  const seedData = (): SandboxState => seedFor(seed, options.stockRecords ?? 0, dialect);
  if (!Number.isInteger(maxPageSize) || maxPageSize < 1) throw new ConfigError(`sandbox: maxPageSize must be a positive integer (got ${maxPageSize})`);
  const { latencyMs, latencyJitterMs, failRate, rate429, retryAfterSeconds, resetRate, resetAfterRate, tokenTtlSeconds } = options;
  const faults = createFaults(
    seed,
    { latencyMs, latencyJitterMs, failRate, rate429, retryAfterSeconds, resetRate, resetAfterRate, tokenTtlSeconds },
    () => state,
    log,
  );

  const stateFile = options.stateFile;
  let state: SandboxState;
  const loaded = loadStateFile(stateFile);
  if (loaded) {
    state = loaded;
    if (options.stockRecords !== undefined) state.synthetic.count = options.stockRecords;
    log.info({ file: stateFile }, 'sandbox state loaded');
  } else {
    state = seedData();
  }
  refreshStatusNames(state);
  const saver = createStateSaver(stateFile, () => state, log);
  const ctx: ApiContext = {
    state,
    index: new StateIndex(state),
    maxPageSize,
    dialect,
    newId: () => deterministicUuid(ctx.state.seed, `rec:${ctx.state.nextSeq++}`),
    changed: () => saver.changed(),
  };
  const replaceState = (s: SandboxState): void => {
    state = s;
    ctx.state = s;
    ctx.index = new StateIndex(s);
    refreshStatusNames(s);
    ctx.changed();
  };

  const hooks = createWebhookEmitter({ url: options.webhookUrl, retryDelaysMs: options.webhookRetryDelaysMs ?? [1000, 5000, 15000], logger: log });
  const auth = createSandboxAuth(
    accessKeyID,
    secretKey,
    () => faults.settings.tokenTtlSeconds,
    () => state,
    options.now,
  );
  const inspection = createInspection({ state: () => state, ctx, faults, hooks, reset: () => replaceState(seedData()) });
  const api = createApiHandler({ state: () => state, ctx, dialect, faults, auth, inspection, log });
  const { server, sockets, url } = await listen(options, api, inspection.handle, log);
  if (stateFile && !existsSync(stateFile)) {
    try {
      await saver.write();
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
    setFaults: (f) => faults.set(f),
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
        await saver.flush();
        log.info({ url }, 'sandbox WMS closed');
      })();
      return closing;
    },
  };
}
