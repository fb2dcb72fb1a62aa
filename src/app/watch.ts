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
import { createInboxWatcher, type InboxWatcher, type ReadyFile } from '../intake/watcher.js';
import { runOnce, verdictFields, type RunResult } from './run.js';
import { missingInboxFolders, watcherOptions } from './scan.js';
import { discoverChannels } from '../config/load.js';
import { runScheduledPulls } from './pulls.js';
import { helpOthers } from './help.js';
import { createWebhookReceiver, type WebhookReceiver } from '../webhook/index.js';
import { createRecordCounts, createRunMetrics, type RunMetrics } from './metrics.js';
import { assertSafeWebhookListen, webhooksOptionsFromConfig } from '../webhook/options.js';
import { errorMessage } from '../shared/errors.js';

/** how often watch checks that the inbox folders exist */
const INBOX_CHECK_MS = 1000;

export interface WatchHandle {
  /** resolves when the daemon has stopped */
  done: Promise<void>;
  /** asks the daemon to stop (what SIGTERM does) */
  stop(reason: string): void;
  metricsUrl: string | null;
  webhooksUrl: string | null;
}

/** What the daemon's parts share: the queue of ready files, the batch in progress, health. */
interface DaemonState {
  readonly queue: Map<string, ReadyFile>;
  running: Promise<void> | null;
  stopping: boolean;
  lastRunOk: boolean;
  lastRunAt: string | null;
  /** inbox folders found missing at the last check (an unmounted share): unhealthy while not empty */
  inboxMissing: string[];
}

export async function startWatch(ctx: AppContext, mappings: CompiledMapping[], opts: { pullIntervalMs?: number } = {}): Promise<WatchHandle> {
  const { config, logger } = ctx;
  const abort = new AbortController();
  const metrics: RunMetrics = createRunMetrics();
  const st: DaemonState = { queue: new Map<string, ReadyFile>(), running: null, stopping: false, lastRunOk: true, lastRunAt: null, inboxMissing: [] };
  const { queue } = st;
  let batchTimer: NodeJS.Timeout | null = null;

  function schedule(): void {
    if (batchTimer || st.stopping) return;
    batchTimer = setTimeout(() => {
      batchTimer = null;
      void drain();
    }, config.watch.batchDelayMs);
  }

  async function drain(resume = false): Promise<void> {
    if (st.running) {
      // a batch is in progress: run again when it ends
      await st.running;
      if (queue.size > 0) schedule();
      return;
    }
    const batch = [...queue.values()];
    queue.clear();
    if ((batch.length === 0 && !resume) || st.stopping) return;
    helper.yieldTo(); // this instance's own files first: helping stops taking batches (what it took is sent)
    st.running = (async () => {
      try {
        const result = await runWatchBatch(ctx, mappings, metrics, abort.signal, batch);
        st.lastRunOk = result.exitCode === 0;
        st.lastRunAt = new Date().toISOString();
        logger.info(verdictFields(result), result.logLine);
      } catch (err) {
        st.lastRunOk = false;
        logger.error({ err }, `batch failed: ${errorMessage(err)}`);
      } finally {
        st.running = null;
      }
    })();
    await st.running;
    if (queue.size > 0) schedule();
  }

  const pullTimer = startScheduledPulls(ctx, st, opts.pullIntervalMs ?? 60_000);

  // files another instance claimed and stopped renewing (it died), or this instance left unfinished:
  // looked for regularly, so nothing waits for the next drop to be resumed
  // A resume runs beside a batch in progress: that batch may be waiting for a dependency that is in
  // the stopped instance's files, which only a resume will send.
  const resumer = startResuming(ctx, st, async () => {
    if (!st.running) {
      await drain(true);
      return;
    }
    const result = await runWatchBatch(ctx, mappings, metrics, abort.signal, []);
    logger.info(verdictFields(result), `resumed: ${result.logLine}`);
  });

  // a shared journal: between its own batches the daemon sends batches of files other live instances are sending
  const helper = startHelping(ctx, st, mappings);

  const receiver = await startWebhookReceiver(ctx);

  const server = config.watch.metricsPort !== undefined ? await serveHealthAndMetrics(ctx, st, metrics, config.watch.metricsPort) : null;
  const metricsUrl = server ? server.url : null;

  // the inbox share: checked at start and then regularly (watchInbox)
  const inbox = await watchInbox(ctx, st, mappings, metrics, (f) => {
    queue.set(f.path, f);
    schedule();
  });

  let resolveDone!: () => void;
  const done = new Promise<void>((r) => (resolveDone = r));

  async function shutdown(reason: string): Promise<void> {
    logger.info({ reason }, 'stopping: finishing requests in flight; unsent records stay pending for the next start');
    if (batchTimer) clearTimeout(batchTimer);
    if (pullTimer) clearInterval(pullTimer);
    resumer.clear();
    helper.clear();
    await inbox.close();
    // the signal's name is the abort's reason: a batch stopped by it is interrupted (exit 130/143 in its summary), never delivered
    abort.abort(reason);
    if (st.running) await st.running.catch(() => {});
    await resumer.settled();
    await helper.settled();
    await receiver?.close().catch(() => {});
    if (server) await new Promise<void>((r) => server.server.close(() => r()));
    logger.info('stopped');
    resolveDone();
  }

  return {
    done,
    stop(reason) {
      if (st.stopping) return;
      st.stopping = true;
      void shutdown(reason);
    },
    metricsUrl,
    webhooksUrl: receiver ? `${receiver.url}${config.webhooks.basePath}` : null,
  };
}

/** One batch of the daemon (or a resume: no ready file): runOnce with the metrics' hooks, its figures recorded. */
async function runWatchBatch(ctx: AppContext, mappings: CompiledMapping[], metrics: RunMetrics, signal: AbortSignal, ready: ReadyFile[]): Promise<RunResult> {
  const result = await runOnce(ctx, {
    command: 'watch',
    ready,
    mappings,
    signal,
    onSettled: (row, res) => metrics.recordSettled(row.target, res.outcome),
    onMapRejected: (target, n) => metrics.recordSettled(target, 'rejected', n),
  });
  metrics.recordRun(result.summary);
  return result;
}

/** The inbox watcher of the channels (files ready go to `onReady`; refused and empty entries are counted and logged). */
function inboxWatcher(ctx: AppContext, st: DaemonState, mappings: CompiledMapping[], metrics: RunMetrics, onReady: (f: ReadyFile) => void): InboxWatcher {
  const { config, logger } = ctx;
  const w = createInboxWatcher(watcherOptions(config, {}, mappings), { logger });
  w.on('refused-entry', (r) => metrics.recordRefused(r.kind));
  w.on('ready-file', (f) => {
    if (st.stopping) return;
    onReady(f);
  });
  w.on('empty-file', (r) => logger.warn({ file: r.name, channel: r.channel, errorPath: r.errorPath }, 'empty file moved to the error folder'));
  return w;
}

/**
 * The inbox share: checked at start and then every INBOX_CHECK_MS. Missing (unmounted), the daemon is unhealthy
 * (st.inboxMissing), takes nothing, creates nothing, and starts watching by itself once the folders are back.
 */
async function watchInbox(
  ctx: AppContext,
  st: DaemonState,
  mappings: CompiledMapping[],
  metrics: RunMetrics,
  onReady: (f: ReadyFile) => void,
): Promise<{ close(): Promise<void> }> {
  const { config, logger } = ctx;
  let watcher = inboxWatcher(ctx, st, mappings, metrics, onReady);
  st.inboxMissing = await missingInboxFolders(config);
  let watching = false;
  const startWatching = async (): Promise<void> => {
    if (config.channelsDiscovered && config.channels.length === 0) {
      // the channels are the inbox's sub-folders: found now that the inbox is there
      config.channels = await discoverChannels(config.inboxDir);
      await watcher.close();
      watcher = inboxWatcher(ctx, st, mappings, metrics, onReady);
    }
    await watcher.start();
    watching = true;
    logger.info({ channels: config.channels.map((c) => c.name), polling: config.watch.usePolling }, 'watching the inbox');
  };
  if (st.inboxMissing.length === 0) await startWatching();
  else logger.error({ missing: st.inboxMissing }, 'inbox folder missing (share not mounted?): waiting for it; /healthz reports unhealthy');
  let checkingInbox = false;
  const inboxTimer = setInterval(() => {
    if (st.stopping || checkingInbox) return;
    checkingInbox = true;
    void (async () => {
      const now = await missingInboxFolders(config);
      logger.trace({ missing: now }, 'inbox folders checked');
      if (now.length > 0 && st.inboxMissing.length === 0)
        logger.error({ missing: now }, 'inbox folder gone (share unmounted?): /healthz reports unhealthy until it is back');
      if (now.length === 0 && st.inboxMissing.length > 0) logger.info('inbox folder back');
      st.inboxMissing = now;
      if (now.length === 0 && !watching && !st.stopping) await startWatching();
    })()
      .catch((err: unknown) => logger.warn({ err }, 'could not check the inbox folders'))
      .finally(() => {
        checkingInbox = false;
      });
  }, INBOX_CHECK_MS);
  return {
    async close() {
      clearInterval(inboxTimer);
      await watcher.close().catch(() => {});
    },
  };
}

/**
 * Scheduled pulls: checked every `intervalMs` (each pull's own schedule decides; across several
 * instances only the leader runs them, see runScheduledPulls), and once a second after start.
 */
function startScheduledPulls(ctx: AppContext, st: DaemonState, intervalMs: number): NodeJS.Timeout | null {
  const { config, logger } = ctx;
  if (config.pulls.length === 0) return null;
  let pulling = false;
  const pullTick = async (): Promise<void> => {
    if (st.stopping || pulling) return;
    pulling = true;
    try {
      const r = await runScheduledPulls(ctx, { logger });
      for (const p of r.done) logger.info({ pull: p.name, records: p.records, file: p.file }, 'scheduled pull written');
      for (const p of r.failed) logger.error({ pull: p.name }, `scheduled pull failed: ${p.error}`);
    } finally {
      pulling = false;
    }
  };
  const tick = (): void => {
    pullTick().catch((err: unknown) => logger.error({ err }, 'scheduled pulls failed'));
  };
  setTimeout(tick, 1000).unref();
  return setInterval(tick, intervalMs);
}

/** The webhook receiver inside the daemon (webhooks.enabled), or null. */
async function startWebhookReceiver(ctx: AppContext): Promise<WebhookReceiver | null> {
  const { config, logger } = ctx;
  if (!config.webhooks.enabled) return null;
  // the same reading of the config as `wmsbridge webhooks`: a secret variable that is named but unset
  // stops start-up instead of serving without authentication
  const w = webhooksOptionsFromConfig(config);
  assertSafeWebhookListen(w.host, w.secret, config.webhooks.insecure);
  const receiver = await createWebhookReceiver(
    {
      host: w.host,
      port: w.port,
      basePath: w.basePath,
      ...(w.secret ? { secret: w.secret } : {}),
      ...(w.tls ? { tls: w.tls } : {}),
      maxBodyBytes: w.maxBodyBytes,
      outboxDir: config.outboxDir,
      csvFormat: config.outbox.csv,
      fileMode: ctx.fileMode,
    },
    { journal: ctx.journal, logger: logger.child({ component: 'webhooks' }) },
  );
  logger.info({ url: `${receiver.url}${config.webhooks.basePath}` }, 'webhook receiver listening');
  return receiver;
}

/** GET /healthz (200, or 503 while stopping or an inbox folder is missing) and GET /metrics. */
async function serveHealthAndMetrics(ctx: AppContext, st: DaemonState, metrics: RunMetrics, port: number): Promise<{ server: Server; url: string }> {
  const { config, logger } = ctx;
  const recordCounts = createRecordCounts(ctx.journal);
  const server = createServer((req, res) => {
    const path = (req.url ?? '/').split('?')[0];
    if (req.method !== 'GET') {
      res.writeHead(405, { allow: 'GET' }).end();
      return;
    }
    if (path === '/healthz') {
      const ok = !st.stopping && st.inboxMissing.length === 0;
      const body = JSON.stringify({
        ok,
        stopping: st.stopping,
        lastRunOk: st.lastRunOk,
        lastRunAt: st.lastRunAt,
        queued: st.queue.size,
        busy: st.running !== null,
        ...(st.inboxMissing.length ? { inboxMissing: st.inboxMissing } : {}),
      });
      res.writeHead(ok ? 200 : 503, { 'content-type': 'application/json' }).end(body);
      return;
    }
    if (path === '/metrics') {
      recordCounts()
        .then(async (counts) => {
          const text = await metrics.render({
            recordsByStatus: counts,
            filesByStatus: await ctx.journal.countFiles(),
            client: ctx.client.stats(),
            queued: st.queue.size,
            journal: ctx.journal.writeStats(),
            inboxAvailable: st.inboxMissing.length === 0,
          });
          res.writeHead(200, { 'content-type': metrics.contentType }).end(text);
        })
        .catch((err: unknown) => {
          res.writeHead(500, { 'content-type': 'text/plain' }).end(`metrics unavailable: ${errorMessage(err)}\n`);
        });
      return;
    }
    res.writeHead(404, { 'content-type': 'text/plain' }).end('not found: try /healthz or /metrics\n');
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, config.watch.metricsHost, () => resolve());
  });
  const a = server.address() as AddressInfo;
  const url = `http://${a.address}:${a.port}`;
  logger.info({ url }, 'serving /healthz and /metrics');
  return { server, url };
}

/** How often an idle daemon with a shared journal looks for other instances' files to help with. */
const HELP_CHECK_MS = 1000;

/**
 * Helping other instances (help.ts), while no batch of this daemon's runs: looked for every second; a batch that
 * starts stops the help session from taking more (yieldTo).
 */
function startHelping(ctx: AppContext, st: DaemonState, mappings: CompiledMapping[]): { clear(): void; yieldTo(): void; settled(): Promise<void> } {
  let helping: Promise<void> | null = null;
  let abort: AbortController | null = null;
  const timer = ctx.shared
    ? setInterval(() => {
        if (st.stopping || helping || st.running || st.inboxMissing.length > 0) return;
        const a = (abort = new AbortController());
        helping = helpOthers(ctx, { mappings, signal: a.signal })
          .then(() => undefined)
          .catch((err: unknown) => ctx.logger.warn({ err }, 'could not help other instances'))
          .finally(() => {
            helping = null;
          });
      }, HELP_CHECK_MS)
    : null;
  return {
    clear() {
      if (timer) clearInterval(timer);
      abort?.abort();
    },
    yieldTo: () => abort?.abort(),
    settled: async () => {
      if (helping) await helping;
    },
  };
}

/**
 * Looks at start and then regularly (every half lease) for files to resume: another instance claimed them and stopped
 * renewing, or this one left them unfinished. `resume` runs when there are some.
 */
function startResuming(ctx: AppContext, st: DaemonState, resume: () => Promise<void>): { clear(): void; settled(): Promise<void> } {
  let resuming: Promise<void> | null = null;
  const tick = (): void => {
    if (st.stopping || resuming || st.inboxMissing.length > 0) return;
    resuming = (async () => {
      const files = (await ctx.journal.listResumableFiles(ctx.instanceId)).filter((f) => !ctx.busyFiles.has(f.id));
      if (files.length === 0 || st.stopping) return;
      await resume();
    })()
      .catch((err: unknown) => ctx.logger.warn({ err }, 'could not resume files'))
      .finally(() => {
        resuming = null;
      });
  };
  const timer = setInterval(tick, Math.max(1000, Math.floor(ctx.leaseTtlMs / 2)));
  // what this instance left unfinished (a stop mid-send) resumes at start, not half a lease later (issue 42)
  const first = setImmediate(tick);
  return {
    clear: () => {
      clearInterval(timer);
      clearImmediate(first);
    },
    settled: async () => {
      if (resuming) await resuming;
    },
  };
}
