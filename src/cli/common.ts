/**
 * The configuration from the common options (options.ts), and the lock + context lifecycle around a
 * command body.
 */
import { isSharedJournal, loadConfig, SANDBOX_URL, type ResolvedConfig } from '../config/load.js';
import { ConfigError } from '../shared/errors.js';
import { createLogger, type Logger } from '../shared/logger.js';
import { acquireStateLock } from '../journal/state-lock.js';
import { createAppContext, type AppContext, type ContextOptions } from '../app/context.js';
import { loadMappingsDir, type CompiledMapping } from '../map/index.js';
import type { CliIo } from './types.js';
import { hostname } from 'node:os';

export async function loadConfigFromFlags(values: Record<string, unknown>): Promise<ResolvedConfig> {
  const str = (k: string) => (typeof values[k] === 'string' ? (values[k] as string) : undefined);
  const overrides: Record<string, string> = {};
  if (str('inbox')) overrides['inboxDir'] = str('inbox')!;
  if (str('outbox')) overrides['outboxDir'] = str('outbox')!;
  if (str('state-dir')) overrides['stateDir'] = str('state-dir')!;
  if (str('mappings')) overrides['mappingsDir'] = str('mappings')!;
  if (str('wms-url') !== undefined) overrides['wmsUrl'] = str('wms-url')!;
  if (values['sandbox'] === true) overrides['wmsUrl'] = SANDBOX_URL;
  const config = await loadConfig({ ...(str('config') ? { file: str('config')! } : {}), overrides });
  const level = str('log-level');
  if (level) config.log.level = level as ResolvedConfig['log']['level'];
  return config;
}

/** Loads every mapping; any mapping error is fatal (exit 2) and names file + path + problem. */
export async function loadMappingsOrThrow(config: ResolvedConfig): Promise<CompiledMapping[]> {
  const { mappings, errors } = await loadMappingsDir(config.mappingsDir);
  if (errors.length > 0) throw new ConfigError(`${errors.length} mapping file(s) are invalid:\n${errors.map((e) => `  ${e.message}`).join('\n')}`);
  return mappings;
}

/**
 * Runs `body` holding the state-folder lock and an app context, and releases both however it ends.
 */
export async function withApp<T>(
  config: ResolvedConfig,
  command: string,
  body: (ctx: AppContext, logger: Logger) => Promise<T>,
  options: ContextOptions & { lock?: boolean } = {},
): Promise<T> {
  const logger = options.logger ?? createLogger({ level: config.log.level });
  // the state lock keeps two processes off one embedded journal; a shared journal (PostgreSQL) is made
  // for several instances, which coordinate through leases in it instead
  const lock = options.lock === false || isSharedJournal(config) ? null : await acquireStateLock(config.stateDir, { command });
  try {
    const ctx = await createAppContext(config, { ...options, logger });
    try {
      return await body(ctx, logger);
    } finally {
      await ctx.close();
    }
  } finally {
    await lock?.release();
  }
}

const PINO_LEVELS = { info: 30, warn: 40, error: 50 } as const;

/**
 * A message of a long-running command for the person at the terminal (the daemon is up, a signal was received). Off
 * a terminal (a service's journal, a pipe to `jq`) stderr is the JSON log, so the message is one of its lines, with
 * pino's fields, whatever the log level; WMSBRIDGE_LOG_PRETTY=1 keeps the text.
 */
export function notice(io: CliIo, text: string, level: keyof typeof PINO_LEVELS = 'info', name = 'wmsbridge'): void {
  if ((io.stderr as { isTTY?: boolean }).isTTY === true || process.env['WMSBRIDGE_LOG_PRETTY'] === '1') {
    io.stderr.write(`${text}\n`);
    return;
  }
  io.stderr.write(`${JSON.stringify({ level: PINO_LEVELS[level], time: Date.now(), pid: process.pid, hostname: hostname(), name, msg: text })}\n`);
}
