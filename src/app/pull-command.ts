/**
 * `wmsbridge pull <what>`, the composition: one export from the WMS into the outbox (default ./outbox/exports),
 * with the WMS client (or an in-process sandbox) and the journal it opens and closes. runPullCommand(options) is
 * reusable by config-driven callers; cli/pull.ts only turns argv and the environment into those options.
 */
import { mkdir } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import type { CsvFormatOptions } from '../outbox/csv.js';
import { openJournal } from '../journal/index.js';
import { runPull } from '../pull/run.js';
import { isPullKind, PULL_KINDS, type PullFormat, type PullRequest, type PullResult, type RefCacheRefresher } from '../pull/types.js';
import { createSandbox, type Sandbox } from '../sandbox/index.js';
import { ConfigError } from '../shared/errors.js';
import { envLogger, loadConfig, NO_WMS_CONFIGURED, resolveWmsCredentials, SANDBOX_URL } from '../config/load.js';
import type { Logger } from '../shared/logger.js';
import { createWmsClient } from '../wms/client.js';
import type { StockSearchFilters } from '../wms/schemas.js';

export { isPullKind, PULL_FORMATS, PULL_KINDS, type PullFormat } from '../pull/types.js';
export type { CsvFormatOptions, StockSearchFilters };

export interface PullCommandOptions {
  what: string;
  /** @default 'csv' */
  format?: PullFormat;
  csv?: CsvFormatOptions;
  filters?: StockSearchFilters;
  doneFile?: boolean;
  force?: boolean;
  fileName?: string;
  pageSize?: number;
  /** mode of the export file (config outbox.fileMode). @default 0o640 */
  fileMode?: number;
  /** the outbox folder; the file goes to <outboxDir>/exports. @default './outbox' */
  outboxDir?: string;
  /** the exports folder itself (overrides outboxDir) */
  outDir?: string;
  /** state folder holding journal.db. @default './state' */
  stateDir?: string;
  /** folder relative paths are resolved against. @default process.cwd() */
  cwd?: string;
  /**
   * The WMS to read. Without it an in-process sandbox is started (createSandbox(), seed 1) and closed
   * after the export.
   */
  wms?: { url: string; accessKeyID: string; secretKey: string; userAgent?: string };
  /** sandbox seed when no WMS is given. @default 1 */
  sandboxSeed?: number | string;
  /** sandbox state file when no WMS is given (the state `run` left there), see docs/SANDBOX.md */
  sandboxStateFile?: string;
  logger?: Logger;
  refCache?: RefCacheRefresher;
  now?: () => Date;
  /** aborts the export (its temp file is removed, nothing appears) */
  signal?: AbortSignal;
}

export interface PullCommandResult extends PullResult {
  what: string;
  wms: { url: string; sandbox: boolean };
}

/** Runs one pull end to end: WMS client (or in-process sandbox), journal, export file. */
export async function runPullCommand(options: PullCommandOptions): Promise<PullCommandResult> {
  if (!isPullKind(options.what)) {
    throw new ConfigError(`pull: unknown kind "${options.what}" (expected one of ${PULL_KINDS.join(', ')})`);
  }
  const cwd = resolve(options.cwd ?? process.cwd());
  const outDir = options.outDir !== undefined ? resolve(cwd, options.outDir) : join(resolve(cwd, options.outboxDir ?? 'outbox'), 'exports');
  const stateDir = resolve(cwd, options.stateDir ?? 'state');
  const logger = options.logger ?? envLogger();
  const request: PullRequest = { what: options.what, outDir };
  if (options.format !== undefined) request.format = options.format;
  if (options.csv !== undefined) request.csv = options.csv;
  if (options.filters !== undefined) request.filters = options.filters;
  if (options.doneFile !== undefined) request.doneFile = options.doneFile;
  if (options.force !== undefined) request.force = options.force;
  if (options.fileName !== undefined) request.fileName = options.fileName;
  if (options.pageSize !== undefined) request.pageSize = options.pageSize;
  if (options.fileMode !== undefined) request.fileMode = options.fileMode;
  if (options.signal !== undefined) request.signal = options.signal;

  let sandbox: Sandbox | undefined;
  const closers: Array<() => Promise<void>> = [];
  try {
    let wms = options.wms;
    if (!wms) {
      sandbox = await createSandbox({
        port: 0,
        seed: options.sandboxSeed ?? 1,
        ...(options.sandboxStateFile !== undefined ? { stateFile: resolve(cwd, options.sandboxStateFile) } : {}),
        logger: logger.child({ component: 'sandbox' }),
      });
      const sb = sandbox;
      closers.unshift(() => sb.close());
      wms = { url: sandbox.url, accessKeyID: sandbox.accessKeyID, secretKey: sandbox.secretKey };
    }
    const client = createWmsClient({
      baseUrl: wms.url,
      accessKeyID: wms.accessKeyID,
      secretKey: wms.secretKey,
      ...(wms.userAgent !== undefined ? { userAgent: wms.userAgent } : {}),
      logger: logger.child({ component: 'wms' }),
    });
    closers.unshift(() => client.close());
    await mkdir(stateDir, { recursive: true });
    const journal = await openJournal({ kind: 'sqlite', path: join(stateDir, 'journal.db') });
    closers.unshift(() => journal.close());
    const deps: Parameters<typeof runPull>[1] = { client, journal, logger };
    if (options.now) deps.now = options.now;
    if (options.refCache) deps.refCache = options.refCache;
    const result = await runPull(request, deps);
    return { ...result, what: options.what, wms: { url: redactUrl(wms.url), sandbox: sandbox !== undefined } };
  } finally {
    for (const close of closers) await close().catch((err: unknown) => logger.warn({ err }, 'pull: error while closing'));
  }
}

/** The URL without credentials, query or fragment (for output and logs). */
function redactUrl(url: string): string {
  try {
    const u = new URL(url);
    u.username = '';
    u.password = '';
    u.search = '';
    u.hash = '';
    return u.toString().replace(/\/$/, '');
  } catch {
    return '(invalid url)';
  }
}

/** The WMS of the config file (`--config`, or the one found), for a pull not given one on its command line. */
export type PullWmsFromConfig = { wms: NonNullable<PullCommandOptions['wms']>; fileMode: number } | { wms: null; fileMode: number } | { error: string };

/**
 * No WMS on the command line: the config file's (wms.url, accessKeyId, secret, userAgent), and its outbox.fileMode;
 * the embedded sandbox only when the config asks for it (wms.url: sandbox); otherwise an error for exit 2.
 */
export async function pullWmsFromConfig(configFile: string | undefined): Promise<PullWmsFromConfig> {
  const config = await loadConfig(configFile ? { file: configFile } : {});
  const fileMode = parseInt(config.outbox.fileMode, 8);
  const creds = resolveWmsCredentials(config);
  if (creds)
    return {
      wms: { url: creds.url, accessKeyID: creds.accessKeyID, secretKey: creds.secretKey, ...(config.wms.userAgent ? { userAgent: config.wms.userAgent } : {}) },
      fileMode,
    };
  if (config.wms.url !== SANDBOX_URL) return { error: NO_WMS_CONFIGURED };
  return { wms: null, fileMode };
}
