/**
 * The webhook request handler: verification, kind resolution, idempotent durable storage. It answers
 * 200 {"received":true} only after the journal committed the event; everything slow (outbox files,
 * linking to source lines) happens later in the flusher (./flush.ts). It is a plain
 * `(req, res) => void` so it can be bound to node:http/https, mounted in another server, or driven
 * without a port (./inject.ts).
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { WebhookEventStored, WebhookInbox } from '../journal/types.js';
import type { Logger } from '../shared/logger.js';
import { errorMessage } from '../shared/errors.js';
import { computeDedupKey, extractEventId, extractLinkId } from './event.js';
import { KIND_HEADERS, WEBHOOK_KINDS, resolveKind, resolveKindName, type KindSource, type WebhookKind } from './kinds.js';
import { createSecretVerifier } from './secret.js';

/** What the test/fault hooks see of one request. */
export interface WebhookHookContext {
  kind: WebhookKind;
  dedupKey: string;
  eventId: string | undefined;
}

/**
 * Hooks for tests and fault injection (never needed in production).
 * - beforeStore: return an HTTP status (e.g. 500) to answer it instead of storing the event.
 * - afterStore: runs after the journal commit and before the answer (e.g. to crash the process there).
 */
export interface WebhookHooks {
  beforeStore?: (ctx: WebhookHookContext) => number | undefined | void | Promise<number | undefined | void>;
  afterStore?: (ctx: WebhookHookContext & { stored: boolean; id: number }) => void | Promise<void>;
}

export interface ResolvedHandlerOptions {
  basePath: string;
  secret: string | undefined;
  secretHeader: string;
  maxBodyBytes: number;
  kindFrom: readonly KindSource[];
  aliases: ReadonlyMap<string, WebhookKind>;
}

export interface WebhookHandlerDeps {
  journal: WebhookInbox;
  logger: Logger;
  hooks?: WebhookHooks;
}

export type WebhookHandler = (req: IncomingMessage, res: ServerResponse) => void;

const KINDS_TEXT = WEBHOOK_KINDS.join(', ');

// the answer to every stored event, built once (it is the hot path's only answer)
const RECEIVED_TEXT = JSON.stringify({ received: true });
const RECEIVED_HEADERS = {
  'content-type': 'application/json; charset=utf-8',
  'content-length': String(Buffer.byteLength(RECEIVED_TEXT)),
  'cache-control': 'no-store',
} as const;

function sendReceived(res: ServerResponse): void {
  if (res.headersSent || res.writableEnded) return;
  res.writeHead(200, RECEIVED_HEADERS);
  res.end(RECEIVED_TEXT);
}

function send(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  if (res.headersSent || res.writableEnded) return;
  const text = JSON.stringify(body);
  res.writeHead(status, {
    'content-type': 'application/json; charset=utf-8',
    'content-length': String(Buffer.byteLength(text)),
    'cache-control': 'no-store',
    ...headers,
  });
  res.end(text);
}

function refuse(res: ServerResponse, status: number, error: string, headers: Record<string, string> = {}): void {
  send(res, status, { received: false, error }, headers);
}

function header(req: IncomingMessage, name: string): string | undefined {
  const v = req.headers[name];
  return Array.isArray(v) ? v[0] : v;
}

/** application/json, optionally with charset=utf-8; anything else is refused (415). */
export function isJsonContentType(value: string | undefined): boolean {
  if (!value) return false;
  const [type, ...params] = value.split(';').map((s) => s.trim().toLowerCase());
  if (type !== 'application/json') return false;
  for (const p of params) {
    const [k, v] = p.split('=').map((s) => s.trim());
    if (k === 'charset' && v !== 'utf-8' && v !== 'utf8' && v !== '"utf-8"') return false;
  }
  return true;
}

/** A body over the limit is drained (read and dropped) up to this many times the limit before its 413. */
const DRAIN_FACTOR = 8;

/** too-large: read to its end and dropped; cut: still coming past the drain limit (answered at once, connection closed). */
type BodyResult = { ok: true; body: Buffer } | { ok: false; reason: 'too-large' | 'cut' | 'aborted' };

/**
 * Reads the body up to `limit` bytes; past it, keeps reading without keeping anything, and reports too-large at its
 * end, or `cut` as soon as more than `drainLimit` bytes came.
 */
function readBody(req: IncomingMessage, limit: number, drainLimit: number): Promise<BodyResult> {
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    let size = 0;
    let settled = false;
    const done = (r: BodyResult): void => {
      if (settled) return;
      settled = true;
      resolve(r);
    };
    req.on('data', (chunk: Buffer) => {
      if (settled) return; // draining past the drain limit
      size += chunk.length;
      if (size > drainLimit) {
        done({ ok: false, reason: 'cut' });
        return;
      }
      if (size > limit) chunks.length = 0;
      else chunks.push(chunk);
    });
    req.on('end', () => done(size > limit ? { ok: false, reason: 'too-large' } : { ok: true, body: Buffer.concat(chunks, size) }));
    req.on('aborted', () => done({ ok: false, reason: 'aborted' }));
    req.on('error', () => done({ ok: false, reason: 'aborted' }));
  });
}

/** `/webhooks/a/b?x` -> ['a', 'b'] relative to basePath; undefined when outside basePath or undecodable. */
export function routeSegments(url: string, basePath: string): string[] | undefined {
  const q = url.indexOf('?');
  const pathname = q === -1 ? url : url.slice(0, q);
  if (pathname !== basePath && !pathname.startsWith(`${basePath}/`)) return undefined;
  try {
    return pathname
      .slice(basePath.length)
      .split('/')
      .filter((s) => s !== '')
      .map((s) => decodeURIComponent(s));
  } catch {
    return undefined;
  }
}

/** What every request of one handler is checked against: its options, its journal, and the secret's verifier. */
interface Receiving {
  options: ResolvedHandlerOptions;
  deps: WebhookHandlerDeps;
  verify: ((presented: string) => boolean) | undefined;
  /** the secret header's name, lower case */
  secretHeader: string;
}

/** A request answered here and now (a refusal, or the health check). */
type Answered = { answered: true };
const ANSWERED: Answered = { answered: true };

/** The health check, the method, the route's length: answered when the request is not a webhook POST to the route. */
function outsideRoute(req: IncomingMessage, res: ServerResponse, segments: string[]): Answered | undefined {
  if (segments.length === 1 && segments[0] === 'healthz') {
    if (req.method === 'GET' || req.method === 'HEAD') send(res, 200, { ok: true });
    else refuse(res, 405, 'method not allowed', { allow: 'GET, HEAD' });
    return ANSWERED;
  }
  if (req.method !== 'POST') {
    refuse(res, 405, 'method not allowed: webhooks are POST', { allow: 'POST' });
    return ANSWERED;
  }
  if (segments.length > 2) {
    refuse(res, 404, 'not found');
    return ANSWERED;
  }
  return undefined;
}

/**
 * The kind the route names, once the secret checks out. Route: /<base>, /<base>/<kind>, /<base>/<secret>,
 * /<base>/<secret>/<kind>; every secret presented (header, path) must match, and at least one must be presented.
 */
function routeKindOf(r: Receiving, req: IncomingMessage, res: ServerResponse, segments: string[]): { routeKind: string | undefined } | Answered {
  const headerSecret = header(req, r.secretHeader);
  let routeKind: string | undefined;
  let pathSecret: string | undefined;
  if (segments.length === 2) {
    if (!r.verify) {
      refuse(res, 404, 'not found');
      return ANSWERED;
    }
    pathSecret = segments[0];
    routeKind = segments[1];
  } else if (segments.length === 1) {
    const seg = segments[0] as string;
    if (r.verify && headerSecret === undefined && resolveKindName(seg, r.options.aliases) === undefined) pathSecret = seg;
    else routeKind = seg;
  }
  if (r.verify) {
    const presented = [headerSecret, pathSecret].filter((s): s is string => s !== undefined);
    let ok = presented.length > 0;
    for (const s of presented) ok = r.verify(s) && ok; // no short-circuit: same work either way
    if (!ok) {
      refuse(res, 401, 'unauthorized');
      return ANSWERED;
    }
  }
  return { routeKind };
}

/**
 * The body as a JSON object, or the request answered (415, 413, 400; nothing when the sender went away). A body
 * over the limit is read to its end and dropped before the 413, so the sender reads the answer instead of a broken
 * pipe mid-upload; past DRAIN_FACTOR times the limit it is answered at once and the connection closed.
 */
async function jsonBodyOf(r: Receiving, req: IncomingMessage, res: ServerResponse): Promise<{ raw: Buffer; payload: object } | Answered> {
  if (!isJsonContentType(header(req, 'content-type'))) {
    refuse(res, 415, 'unsupported media type: send Content-Type: application/json');
    return ANSWERED;
  }
  const { maxBodyBytes } = r.options;
  const tooLarge = `payload too large (limit ${maxBodyBytes} bytes)`;
  const drainLimit = maxBodyBytes * DRAIN_FACTOR;
  const declared = Number(header(req, 'content-length'));
  if (Number.isFinite(declared) && declared > drainLimit) {
    req.resume();
    refuse(res, 413, tooLarge, { connection: 'close' });
    return ANSWERED;
  }
  const read = await readBody(req, maxBodyBytes, drainLimit);
  if (!read.ok) {
    if (read.reason !== 'aborted') refuse(res, 413, tooLarge, read.reason === 'cut' ? { connection: 'close' } : {});
    return ANSWERED;
  }
  const raw = read.body;
  let payload: unknown;
  try {
    payload = JSON.parse(raw.toString('utf8'));
  } catch {
    refuse(res, 400, 'invalid JSON body');
    return ANSWERED;
  }
  if (payload === null || typeof payload !== 'object' || Array.isArray(payload)) {
    refuse(res, 400, 'invalid body: a JSON object is expected');
    return ANSWERED;
  }
  return { raw, payload };
}

/** The event's kind from the route, a kind header or the payload (in the configured order), or the 404 naming the kinds. */
function kindOf(r: Receiving, req: IncomingMessage, res: ServerResponse, routeKind: string | undefined, payload: object): WebhookKind | undefined {
  let kindHeader: string | undefined;
  for (const h of KIND_HEADERS) {
    const v = header(req, h);
    if (v !== undefined && v.trim() !== '') {
      kindHeader = v;
      break;
    }
  }
  const resolution = resolveKind({ route: routeKind, header: kindHeader, payload }, r.options.kindFrom, r.options.aliases);
  if (resolution.ok) return resolution.kind;
  const why = resolution.reason === 'missing' ? 'no webhook kind given' : `unknown webhook kind "${resolution.given.slice(0, 60)}" (from ${resolution.source})`;
  refuse(res, 404, `${why}; kinds: ${KINDS_TEXT}`);
  return undefined;
}

/** Stores the event (idempotently, by its dedup key) and answers 200 once the journal committed it; 500 when it did not. */
async function storeEvent(r: Receiving, req: IncomingMessage, res: ServerResponse, kind: WebhookKind, raw: Buffer, payload: object): Promise<void> {
  const { journal, logger, hooks } = r.deps;
  const eventId = extractEventId(req.headers, payload);
  const dedupKey = computeDedupKey(kind, raw, eventId);
  const ctx: WebhookHookContext = { kind, dedupKey, eventId };
  if (hooks?.beforeStore) {
    const status = await hooks.beforeStore(ctx);
    if (typeof status === 'number' && status !== 200) return refuse(res, status, 'refused by fault hook');
  }
  // the journaled record that created the document (its WMS id in the payload) is looked up by the journal in
  // the insert's own transaction: no query of its own on this event loop (issue 19)
  const linkWmsId = extractLinkId(payload) ?? null;
  let result: WebhookEventStored;
  try {
    result = await journal.addWebhookEvent({ dedupKey, kind, body: raw.toString('utf8'), linkWmsId });
  } catch (err) {
    logger.error({ kind, dedupKey, err: errorMessage(err) }, 'webhook: not stored (journal failed); answering 500 so the sender resends');
    return refuse(res, 500, 'not stored, please resend');
  }
  if (hooks?.afterStore) await hooks.afterStore({ ...ctx, ...result });
  // answer first: the event is committed; the log lines are not the sender's wait
  sendReceived(res);
  logger.info(
    { kind, dedupKey, id: result.id, stored: result.stored, linked: result.recordId !== null },
    result.stored ? 'webhook received' : 'webhook resent: already stored',
  );
  logger.debug({ kind, dedupKey, bytes: raw.length, payload }, 'webhook payload');
}

/** One request: route, secret, body, kind, then the durable store and the answer. */
async function handle(r: Receiving, req: IncomingMessage, res: ServerResponse): Promise<void> {
  const segments = routeSegments(req.url ?? '/', r.options.basePath);
  if (segments === undefined) return refuse(res, 404, 'not found');
  if (outsideRoute(req, res, segments)) return;
  const route = routeKindOf(r, req, res, segments);
  if ('answered' in route) return;
  const body = await jsonBodyOf(r, req, res);
  if ('answered' in body) return;
  const kind = kindOf(r, req, res, route.routeKind, body.payload);
  if (kind === undefined) return;
  await storeEvent(r, req, res, kind, body.raw, body.payload);
}

export function createWebhookHandler(options: ResolvedHandlerOptions, deps: WebhookHandlerDeps): WebhookHandler {
  const r: Receiving = {
    options,
    deps,
    verify: options.secret !== undefined ? createSecretVerifier(options.secret) : undefined,
    secretHeader: options.secretHeader.toLowerCase(),
  };
  return (req, res) => {
    handle(r, req, res).catch((err: unknown) => {
      deps.logger.error({ err: errorMessage(err) }, 'webhook: unexpected error');
      refuse(res, 500, 'internal error');
    });
  };
}
