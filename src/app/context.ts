/**
 * Composition root: builds the stages from the resolved configuration (logger, journal, WMS client or
 * the embedded sandbox, reference cache, mappings). The only module that knows them all.
 */
import { mkdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { ResolvedConfig } from '../config/load.js';
import { envLogger, isSharedJournal, journalSpecOf, NO_WMS_CONFIGURED, resolveWmsCredentials, SANDBOX_URL } from '../config/load.js';
import { ConfigError } from '../shared/errors.js';
import { hostname } from 'node:os';
import { randomBytes } from 'node:crypto';
import { openJournal } from '../journal/index.js';
import type { Journal, JournalUpkeep, MetaStore } from '../journal/types.js';
import type { Sandbox } from '../sandbox/index.js';
import type { Logger } from '../shared/logger.js';
import { createWmsClient } from '../wms/client.js';
import type { WmsClient } from '../wms/client-types.js';
import { createReferenceCache, type LoadableReferenceCache } from '../push/reference-cache.js';
import { outboxFileMode } from '../outbox/atomic.js';

export interface AppContext {
  config: ResolvedConfig;
  logger: Logger;
  journal: Journal;
  client: WmsClient;
  /** the embedded sandbox, when no WMS is configured */
  sandbox: Sandbox | null;
  refCache: LoadableReferenceCache;
  wmsUrl: string;
  /** mode of the files this instance writes to the outbox (outbox.fileMode), passed to every outbox writer */
  fileMode: number;
  /**
   * This instance's identity as the owner of file leases. With the embedded SQLite journal one process
   * owns the state folder (the state lock), so the owner is the constant 'local' and a restart resumes
   * its own files at once; with a shared journal it is unique per process.
   */
  instanceId: string;
  /** whether several instances share the journal (PostgreSQL) */
  shared: boolean;
  leaseTtlMs: number;
  dependencyWaitMs: number;
  /** ids of the files a run of this process is working on (two runs of one process never share a file) */
  busyFiles: Set<number>;
  close(): Promise<void>;
}

export interface ContextOptions {
  logger?: Logger;
  /** use an in-memory journal (dry runs) */
  memoryJournal?: boolean;
  /** don't start the sandbox or a client (commands that only read the journal) */
  offline?: boolean;
  /** with no WMS configured, use the embedded sandbox (demo); other commands need wms.url or --sandbox */
  sandboxByDefault?: boolean;
  /** the journal delivered to another WMS before: accept this one (--wms-changed) */
  wmsChanged?: boolean;
  /** the command only reads the WMS (reconcile): the journal's WMS is neither checked nor recorded */
  readOnly?: boolean;
}

/** Journal meta key: the WMS this journal delivers to (held records must never go to another one). */
export const JOURNAL_WMS_KEY = 'wms:target';

export async function createAppContext(config: ResolvedConfig, options: ContextOptions = {}): Promise<AppContext> {
  const logger = options.logger ?? envLogger({ level: config.log.level });
  await mkdir(config.stateDir, { recursive: true, mode: 0o700 });
  const fileMode = outboxFileMode(config.outbox.fileMode);
  const shared = isSharedJournal(config);
  if (!options.offline && !config.wms.url && !options.sandboxByDefault) throw new ConfigError(NO_WMS_CONFIGURED);
  if (shared && (!config.wms.url || config.wms.url === SANDBOX_URL) && !options.offline) {
    throw new ConfigError(
      'journal.kind postgres: several instances share the work, so they must talk to one WMS: set wms.url (each instance would otherwise start its own sandbox)',
    );
  }
  const journalSpec = options.memoryJournal ? { kind: 'sqlite' as const, path: ':memory:' } : journalSpecOf(config);
  const journal = await openJournal(journalSpec);
  let sandbox: Sandbox | null = null;
  let client: WmsClient | null = null;
  let wmsUrl = '';
  try {
    if (!options.offline) {
      const creds = resolveWmsCredentials(config);
      let baseUrl: string;
      let accessKeyID: string;
      let secretKey: string;
      if (creds) {
        ({ url: baseUrl, accessKeyID, secretKey } = creds);
      } else {
        // loaded only when it runs: a run against a real WMS does not pay for the sandbox's modules at start-up
        const { createSandbox } = await import('../sandbox/index.js');
        sandbox = await createSandbox({
          seed: config.sandbox.seed,
          latencyMs: config.sandbox.latencyMs,
          failRate: config.sandbox.failRate,
          rate429: config.sandbox.rate429,
          resetRate: config.sandbox.resetRate,
          tokenTtlSeconds: config.sandbox.tokenTtlSeconds,
          stateFile: config.sandbox.stateFile ?? join(config.stateDir, 'sandbox-state.json'),
          ...(config.sandbox.dialect !== undefined ? { dialect: config.sandbox.dialect } : {}),
          logger: logger.child({ component: 'sandbox' }),
        });
        ({ url: baseUrl, accessKeyID, secretKey } = sandbox);
        // asked for (--sandbox, wms.url: sandbox), or the default of a command that may use it (the demo)
        if (config.wms.url === SANDBOX_URL) logger.info({ url: sandbox.url }, 'using the embedded sandbox (as asked: --sandbox or wms.url: sandbox)');
        else logger.info({ url: sandbox.url }, 'no WMS configured: using the embedded sandbox');
      }
      const ca = config.wms.tls.caFile ? await readFile(config.wms.tls.caFile, 'utf8') : undefined;
      client = createWmsClient({
        baseUrl,
        accessKeyID,
        secretKey,
        ...(config.wms.userAgent ? { userAgent: config.wms.userAgent } : {}),
        concurrency: config.wms.connections,
        ...(config.wms.requestsPerSecond > 0 ? { requestsPerSecond: config.wms.requestsPerSecond } : {}),
        timeoutMs: config.wms.timeoutMs,
        retry: { retries: config.wms.retries },
        breaker: { threshold: config.wms.circuitBreaker.failures, cooldownMs: config.wms.circuitBreaker.cooldownMs },
        pageSize: config.wms.pageSize,
        pagingBase: config.wms.pagingBase,
        dateTimes: config.wms.dateTimes,
        timeZone: config.wms.timeZone,
        tls: { rejectUnauthorized: config.wms.tls.rejectUnauthorized, ...(ca ? { ca } : {}) },
        // the pipeline validates every payload against the same schemas just before sending
        validateRequests: false,
        logger: logger.child({ component: 'wms' }),
      });
      wmsUrl = baseUrl;
      if (!options.memoryJournal && !options.readOnly) await checkJournalWms(journal, sandbox ? SANDBOX_URL : baseUrl, options.wmsChanged === true, logger);
    }
  } catch (err) {
    await sandbox?.close();
    await journal.close();
    throw err;
  }
  const offlineClient = client ?? offlineWmsClient();
  return {
    config,
    logger,
    journal,
    client: offlineClient,
    sandbox,
    refCache: createReferenceCache(client),
    wmsUrl,
    fileMode,
    instanceId: shared ? `${hostname()}:${process.pid}:${randomBytes(3).toString('hex')}` : 'local',
    shared,
    leaseTtlMs: config.journal.kind === 'postgres' ? config.journal.leaseTtlMs : 30_000,
    dependencyWaitMs: config.journal.kind === 'postgres' ? config.journal.dependencyWaitMs : 0,
    busyFiles: new Set(),
    async close() {
      await client?.close();
      await sandbox?.close();
      await journal.close();
    },
  };
}

/**
 * The journal records the WMS it delivers to (the embedded sandbox as `sandbox`, whatever its port); a
 * command pointed at another WMS with the same journal is refused unless told (--wms-changed), so held
 * or failed records are never "sent" to the wrong one.
 */
async function checkJournalWms(journal: MetaStore & Pick<JournalUpkeep, 'location'>, target: string, changed: boolean, logger: Logger): Promise<void> {
  const known = await journal.getMeta(JOURNAL_WMS_KEY);
  if (known === target) return;
  if (known !== undefined && known !== null && !changed) {
    throw new ConfigError(
      `journal ${journal.location} delivers to ${known}, and this command is pointed at ${target}: its held, failed and pending records would go to another WMS. ` +
        'Use the right wms.url (or --sandbox), or pass --wms-changed if the WMS really moved',
    );
  }
  if (known) logger.warn({ from: known, to: target }, 'the journal now delivers to another WMS (--wms-changed)');
  await journal.setMeta(JOURNAL_WMS_KEY, target);
}

/** A client for commands that must not talk to the WMS: any call is a programming error. */
function offlineWmsClient(): WmsClient {
  return new Proxy({} as WmsClient, {
    get(_t, prop) {
      if (prop === 'close') return async () => {};
      if (prop === 'availability') return () => ({ circuitOpen: false, unavailableSince: null, consecutiveFailures: 0 });
      if (prop === 'stats')
        return () => ({ requests: 0, retries: 0, refreshes: 0, authorizations: 0, failures: 0, latencyBucketsMs: [], latencyCounts: [], latencySumMs: 0 });
      if (prop === 'then') return undefined;
      return () => {
        throw new Error(`offline: WmsClient.${String(prop)} called by a command that does not talk to the WMS`);
      };
    },
  });
}
