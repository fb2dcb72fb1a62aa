/**
 * The daemon: files are processed as they arrive (collected for batchDelayMs so files dropped together
 * are sent in dependency order together), scheduled pulls run when due, webhooks are received, and
 * /healthz and /metrics are served. On stop (SIGTERM/SIGINT) no new record is picked; requests in
 * flight finish and are settled; what was not sent stays pending in the journal for the next start.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { AppContext } from './context.js';
import type { CompiledMapping } from '../map/index.js';
import { createInboxWatcher, type ReadyFile } from '../intake/watcher.js';
import { runOnce } from './run.js';
import { watcherOptions } from './scan.js';
import { runScheduledPulls } from './pulls.js';
import { createWebhookReceiver, type WebhookReceiver } from '../webhook/index.js';
import { createRunMetrics, type RunMetrics } from './metrics.js';
import { webhooksOptionsFromConfig } from '../webhook/options.js';
import { errorMessage } from '../shared/errors.js';

export interface WatchHandle {
  /** resolves when the daemon has stopped */
  done: Promise<void>;
  /** asks the daemon to stop (what SIGTERM does) */
  stop(reason: string): void;
  metricsUrl: string | null;
  webhooksUrl: string | null;
}

export async function startWatch(ctx: AppContext, mappings: CompiledMapping[], opts: { pullIntervalMs?: number } = {}): Promise<WatchHandle> {
  const { config, logger } = ctx;
  const abort = new AbortController();
  const metrics: RunMetrics = createRunMetrics();
  const queue = new Map<string, ReadyFile>();
  let batchTimer: NodeJS.Timeout | null = null;
  let running: Promise<void> | null = null;
  let stopping = false;
  let lastRunOk = true;
  let lastRunAt: string | null = null;

  const watcher = createInboxWatcher(watcherOptions(config, {}, mappings), { logger: logger.child({ component: 'intake' }) });
  watcher.on('refused-entry', (r) => metrics.recordRefused(r.kind));
  watcher.on('ready-file', (f) => {
    if (stopping) return;
    queue.set(f.path, f);
    schedule();
  });
  watcher.on('empty-file', (r) => logger.warn({ file: r.name, channel: r.channel, errorPath: r.errorPath }, 'empty file moved to the error folder'));

  function schedule(): void {
    if (batchTimer || stopping) return;
    batchTimer = setTimeout(() => {
      batchTimer = null;
      void drain();
    }, config.watch.batchDelayMs);
  }

  async function drain(resume = false): Promise<void> {
    if (running) {
      // a batch is in progress: run again when it ends
      await running;
      if (queue.size > 0) schedule();
      return;
    }
    const batch = [...queue.values()];
    queue.clear();
    if ((batch.length === 0 && !resume) || stopping) return;
    running = (async () => {
      try {
        const result = await runOnce(ctx, {
          command: 'watch',
          ready: batch,
          mappings,
          signal: abort.signal,
          onSettled: (row, res) => metrics.recordSettled(row.target, res.outcome),
        });
        metrics.recordRun(result.summary);
        lastRunOk = result.exitCode === 0;
        lastRunAt = new Date().toISOString();
        logger.info({ exitCode: result.exitCode }, result.logLine);
      } catch (err) {
        lastRunOk = false;
        logger.error({ err }, `batch failed: ${errorMessage(err)}`);
      } finally {
        running = null;
      }
    })();
    await running;
    if (queue.size > 0) schedule();
  }

  // scheduled pulls: checked every minute (each pull's own schedule decides; across several instances
  // only the leader runs them, see runScheduledPulls)
  let pulling = false;
  const pullTick = async (): Promise<void> => {
    if (stopping || pulling) return;
    pulling = true;
    try {
      const r = await runScheduledPulls(ctx, { logger });
      for (const p of r.done) logger.info({ pull: p.name, records: p.records, file: p.file }, 'scheduled pull written');
      for (const p of r.failed) logger.error({ pull: p.name }, `scheduled pull failed: ${p.error}`);
    } finally {
      pulling = false;
    }
  };
  const pullTimer = config.pulls.length
    ? setInterval(() => {
        pullTick().catch((err: unknown) => logger.error({ err }, 'scheduled pulls failed'));
      }, opts.pullIntervalMs ?? 60_000)
    : null;
  if (config.pulls.length) setTimeout(() => void pullTick().catch((err: unknown) => logger.error({ err }, 'scheduled pulls failed')), 1000).unref();

  // files another instance claimed and stopped renewing (it died), or this instance left unfinished:
  // looked for regularly, so nothing waits for the next drop to be resumed
  // A resume runs beside a batch in progress: that batch may be waiting for a dependency that is in
  // the stopped instance's files, which only a resume will send.
  let resuming: Promise<void> | null = null;
  const resumeTimer = setInterval(() => {
    if (stopping || resuming) return;
    resuming = (async () => {
      const files = (await ctx.journal.listResumableFiles(ctx.instanceId)).filter((f) => !ctx.busyFiles.has(f.id));
      if (files.length === 0 || stopping) return;
      if (!running) {
        await drain(true);
        return;
      }
      const result = await runOnce(ctx, { command: 'watch', ready: [], mappings, signal: abort.signal, onSettled: (row, res) => metrics.recordSettled(row.target, res.outcome) });
      metrics.recordRun(result.summary);
      logger.info({ exitCode: result.exitCode }, `resumed: ${result.logLine}`);
    })()
      .catch((err: unknown) => logger.warn({ err }, 'could not resume files'))
      .finally(() => {
        resuming = null;
      });
  }, Math.max(1000, Math.floor(ctx.leaseTtlMs / 2)));

  // webhooks
  let receiver: WebhookReceiver | null = null;
  if (config.webhooks.enabled) {
    // the same reading of the config as `wmsbridge webhooks`: a secret variable that is named but unset
    // stops start-up instead of serving without authentication
    const w = webhooksOptionsFromConfig(config, process.env);
    receiver = await createWebhookReceiver(
      {
        host: w.host,
        port: w.port,
        basePath: w.basePath,
        ...(w.secret ? { secret: w.secret } : {}),
        ...(w.tls ? { tls: w.tls } : {}),
        maxBodyBytes: w.maxBodyBytes,
        outboxDir: config.outboxDir,
        csvFormat: config.outbox.csv,
      },
      { journal: ctx.journal, logger: logger.child({ component: 'webhooks' }) },
    );
    logger.info({ url: `${receiver.url}${config.webhooks.basePath}` }, 'webhook receiver listening');
  }

  // /healthz and /metrics
  let server: Server | null = null;
  let metricsUrl: string | null = null;
  if (config.watch.metricsPort !== undefined) {
    server = createServer((req, res) => {
      const path = (req.url ?? '/').split('?')[0];
      if (req.method !== 'GET') {
        res.writeHead(405, { allow: 'GET' }).end();
        return;
      }
      if (path === '/healthz') {
        const body = JSON.stringify({ ok: !stopping, stopping, lastRunOk, lastRunAt, queued: queue.size, busy: running !== null });
        res.writeHead(stopping ? 503 : 200, { 'content-type': 'application/json' }).end(body);
        return;
      }
      if (path === '/metrics') {
        ctx.journal
          .countRecords({})
          .then(async (counts) => {
            const files = await ctx.journal.listFiles();
            const text = metrics.render({ recordsByStatus: counts, files, client: ctx.client.stats(), queued: queue.size, journal: ctx.journal.writeStats() });
            res.writeHead(200, { 'content-type': 'text/plain; version=0.0.4; charset=utf-8' }).end(text);
          })
          .catch((err: unknown) => {
            res.writeHead(500, { 'content-type': 'text/plain' }).end(`metrics unavailable: ${errorMessage(err)}\n`);
          });
        return;
      }
      res.writeHead(404, { 'content-type': 'text/plain' }).end('not found: try /healthz or /metrics\n');
    });
    await new Promise<void>((resolve, reject) => {
      server!.once('error', reject);
      server!.listen(config.watch.metricsPort, config.watch.metricsHost, () => resolve());
    });
    const a = server.address() as AddressInfo;
    metricsUrl = `http://${a.address}:${a.port}`;
    logger.info({ url: metricsUrl }, 'serving /healthz and /metrics');
  }

  await watcher.start();
  logger.info({ channels: config.channels.map((c) => c.name), polling: config.watch.usePolling }, 'watching the inbox');

  let resolveDone!: () => void;
  const done = new Promise<void>((r) => (resolveDone = r));

  async function shutdown(reason: string): Promise<void> {
    logger.info({ reason }, 'stopping: finishing requests in flight; unsent records stay pending for the next start');
    if (batchTimer) clearTimeout(batchTimer);
    if (pullTimer) clearInterval(pullTimer);
    clearInterval(resumeTimer);
    await watcher.close().catch(() => {});
    abort.abort();
    if (running) await running.catch(() => {});
    if (resuming) await resuming;
    await receiver?.close().catch(() => {});
    if (server) await new Promise<void>((r) => server!.close(() => r()));
    logger.info('stopped');
    resolveDone();
  }

  return {
    done,
    stop(reason) {
      if (stopping) return;
      stopping = true;
      void shutdown(reason);
    },
    metricsUrl,
    webhooksUrl: receiver ? `${receiver.url}${config.webhooks.basePath}` : null,
  };
}
