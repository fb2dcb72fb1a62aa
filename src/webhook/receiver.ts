/**
 * The webhook receiver: the request handler (./handler.ts) bound to node:http (or https), plus the
 * flush loop (./flush.ts) that moves stored events to the outbox every flushIntervalMs.
 */
import { createServer as createHttpServer, type Server } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import { readFile } from 'node:fs/promises';
import type { AddressInfo } from 'node:net';
import type { FileLedger, RecordQueue, WebhookInbox, JournalUpkeep } from '../journal/types.js';
import type { Logger } from '../shared/logger.js';
import { BridgeError, ErrorCode, errorMessage } from '../shared/errors.js';
import type { CsvFormatOptions } from '../outbox/csv.js';
import { createWebhookHandler, type WebhookHandler, type WebhookHooks } from './handler.js';
import { flushWebhookEvents } from './flush.js';
import { DEFAULT_KIND_FROM, resolveKindAliases, type KindSource } from './kinds.js';

export interface WebhookReceiverOptions {
  /** @default '127.0.0.1' */
  host?: string;
  /** 0 = a free port. @default 8787 */
  port?: number;
  /** @default '/webhooks' */
  basePath?: string;
  /**
   * Shared secret, accepted in the secretHeader header or as a path segment
   * (`/webhooks/<secret>/<kind>`). Unset: no authentication (bind to loopback or a private network).
   */
  secret?: string;
  /** @default 'X-Webhook-Secret' */
  secretHeader?: string;
  /** serve HTTPS with these PEM files (for direct exposure without a reverse proxy) */
  tls?: { certFile: string; keyFile: string };
  /** larger bodies are answered 413. @default 1048576 (1 MiB) */
  maxBodyBytes?: number;
  /** where the kind is taken from, in order. @default ['route', 'header', 'payload'] */
  kindFrom?: KindSource[];
  /** extra kind aliases (e.g. { recebimento: 'receipt' }); the Portuguese names are built in */
  kindAliases?: Record<string, string>;
  /** events land in <outboxDir>/webhooks/<kind>/ */
  outboxDir: string;
  /** cadence of the outbox flush loop (ms; 0 disables the loop: flush() only). @default 1000 */
  flushIntervalMs?: number;
  /** events per flush round. @default 500 */
  flushBatchSize?: number;
  /** format of the flattened CSV files. @default the outbox defaults (UTF-8 BOM, ';', decimal comma) */
  csvFormat?: CsvFormatOptions;
  /** mode of the outbox files (outbox.fileMode). @default DEFAULT_OUTBOX_FILE_MODE */
  fileMode?: number;
  /**
   * Slow-client limits: all request headers within `headersMs`, the whole request (body included) within
   * `requestMs`. @default { headersMs: 15000, requestMs: 30000 }
   */
  timeouts?: { headersMs?: number; requestMs?: number };
}

export interface WebhookReceiverDeps {
  journal: WebhookInbox & RecordQueue & FileLedger & Pick<JournalUpkeep, 'warmUp'>;
  logger: Logger;
  /** test/fault hooks (see WebhookHooks) */
  hooks?: WebhookHooks;
}

export interface WebhookReceiver {
  /** base URL of the server (`http://127.0.0.1:PORT`); webhooks go to `${url}${basePath}/<kind>` */
  url: string;
  /** stops accepting, waits for requests in flight, stops the loop, flushes once more */
  close(): Promise<void>;
  /** writes every undelivered event to the outbox now; resolves to how many were delivered */
  flush(): Promise<number>;
  /** the request handler, to mount in another server */
  handler: WebhookHandler;
}

function normalizeBasePath(p: string): string {
  const withSlash = p.startsWith('/') ? p : `/${p}`;
  return withSlash.length > 1 ? withSlash.replace(/\/+$/, '') : withSlash;
}

/** The request handler over the options, checked (ConfigError: a basePath of "/", a short secret, a bad alias). */
function handlerFor(options: WebhookReceiverOptions, deps: WebhookReceiverDeps): WebhookHandler {
  const basePath = normalizeBasePath(options.basePath ?? '/webhooks');
  if (basePath === '/') throw new BridgeError(ErrorCode.CONFIG, 'webhooks.basePath must not be "/"');
  if (options.secret !== undefined && options.secret.length < 8) {
    throw new BridgeError(ErrorCode.CONFIG, 'webhooks.secret is too short (at least 8 characters)');
  }
  let aliases;
  try {
    aliases = resolveKindAliases(options.kindAliases);
  } catch (err) {
    throw new BridgeError(ErrorCode.CONFIG, `webhooks.kindAliases: ${errorMessage(err)}`, { cause: err });
  }
  return createWebhookHandler(
    {
      basePath,
      secret: options.secret,
      secretHeader: options.secretHeader ?? 'X-Webhook-Secret',
      maxBodyBytes: options.maxBodyBytes ?? 1024 * 1024,
      kindFrom: options.kindFrom && options.kindFrom.length > 0 ? options.kindFrom : DEFAULT_KIND_FROM,
      aliases,
    },
    { journal: deps.journal, logger: deps.logger, ...(deps.hooks ? { hooks: deps.hooks } : {}) },
  );
}

/** The outbox flush, serialised: the loop and flush() never write the same batch at once. */
function serialFlush(options: WebhookReceiverOptions, journal: WebhookReceiverDeps['journal'], logger: Logger): () => Promise<number> {
  let flushing: Promise<number> = Promise.resolve(0);
  const flushOptions = {
    outboxDir: options.outboxDir,
    ...(options.flushBatchSize !== undefined ? { batchSize: options.flushBatchSize } : {}),
    ...(options.csvFormat !== undefined ? { csvFormat: options.csvFormat } : {}),
    ...(options.fileMode !== undefined ? { fileMode: options.fileMode } : {}),
  };
  return (): Promise<number> => {
    const run = flushing.catch(() => 0).then(async () => (await flushWebhookEvents(flushOptions, { journal, logger })).delivered);
    flushing = run;
    return run;
  };
}

/**
 * The HTTP(S) server. A slow or stalled sender must not hold a connection forever. Node enforces both limits only
 * when it sweeps its connections (every 30 s by default), which let a sender hold one for twice the documented
 * time: the sweep runs every second, so a limit is kept to within a second.
 */
async function serverFor(options: WebhookReceiverOptions, handler: WebhookHandler): Promise<Server> {
  const headersMs = options.timeouts?.headersMs ?? 15_000;
  const requestMs = options.timeouts?.requestMs ?? 30_000;
  const limits = { headersTimeout: headersMs, requestTimeout: requestMs, connectionsCheckingInterval: Math.min(1000, headersMs) };
  let server: Server;
  if (options.tls) {
    let cert: Buffer;
    let key: Buffer;
    try {
      [cert, key] = await Promise.all([readFile(options.tls.certFile), readFile(options.tls.keyFile)]);
    } catch (err) {
      throw new BridgeError(ErrorCode.CONFIG, `webhooks.tls: cannot read the certificate or key file: ${errorMessage(err)}`, { cause: err });
    }
    server = createHttpsServer({ cert, key, ...limits }, handler) as unknown as Server;
  } else {
    server = createHttpServer(limits, handler);
  }
  server.keepAliveTimeout = 5_000;
  return server;
}

/** Listens on host:port (E_WEBHOOK when it cannot) and resolves to the server's base URL. */
async function listen(server: Server, options: WebhookReceiverOptions, host: string): Promise<string> {
  await new Promise<void>((resolve, reject) => {
    const onError = (err: NodeJS.ErrnoException): void => {
      reject(
        new BridgeError(ErrorCode.WEBHOOK, `webhook receiver: cannot listen on ${host}:${options.port ?? 8787}: ${err.code ?? err.message}`, { cause: err }),
      );
    };
    server.once('error', onError);
    server.listen(options.port ?? 8787, host, () => {
      server.off('error', onError);
      resolve();
    });
  });
  const address = server.address() as AddressInfo;
  const hostForUrl = address.family === 'IPv6' ? `[${address.address}]` : address.address;
  return `${options.tls ? 'https' : 'http'}://${hostForUrl}:${address.port}`;
}

/** Flushes every `interval` ms (0: never) until stopped; a failed round is logged and retried at the next. */
function flushLoop(flush: () => Promise<number>, interval: number, logger: Logger): { stop(): void } {
  let timer: NodeJS.Timeout | undefined;
  let stopped = false;
  const tick = (): void => {
    flush()
      .catch((err: unknown) => logger.warn({ err: errorMessage(err) }, 'webhook flush failed; will retry'))
      .finally(() => {
        if (!stopped) timer = setTimeout(tick, interval);
      });
  };
  if (interval > 0) timer = setTimeout(tick, interval);
  return {
    stop() {
      stopped = true;
      if (timer) clearTimeout(timer);
    },
  };
}

/** Stops accepting, lets the requests in flight finish (their events are committed and answered), flushes once more. */
async function closeReceiver(server: Server, loop: { stop(): void }, flush: () => Promise<number>, logger: Logger): Promise<void> {
  loop.stop();
  await new Promise<void>((resolve) => {
    // requests in flight finish; stragglers are cut
    const force = setTimeout(() => server.closeAllConnections(), 5_000);
    server.close(() => {
      clearTimeout(force);
      resolve();
    });
    server.closeIdleConnections();
  });
  try {
    await flush();
  } catch (err) {
    // nothing is lost: the events stay undelivered in the journal for the next start
    logger.warn({ err: errorMessage(err) }, 'webhook flush at close failed; the events stay in the journal');
  }
}

export async function createWebhookReceiver(options: WebhookReceiverOptions, deps: WebhookReceiverDeps): Promise<WebhookReceiver> {
  const { journal, logger } = deps;
  const host = options.host ?? '127.0.0.1';
  const handler = handlerFor(options, deps);
  const flush = serialFlush(options, journal, logger);
  const server = await serverFor(options, handler);

  // the journal's writer (SQLite: a thread started at the first write) is made ready before the first sender
  // is accepted: otherwise the first events wait for it, 100-300 ms (issue 19: the answer's p99)
  try {
    await journal.warmUp?.();
  } catch (err) {
    // not fatal here: the first event then fails or succeeds on its own, and is answered accordingly
    logger.warn({ err: errorMessage(err) }, 'webhook receiver: the journal could not warm up its writer');
  }
  const url = await listen(server, options, host);
  const loop = flushLoop(flush, options.flushIntervalMs ?? 1000, logger);

  let closing: Promise<void> | undefined;
  return {
    url,
    handler,
    flush,
    close() {
      closing ??= closeReceiver(server, loop, flush, logger);
      return closing;
    },
  };
}
