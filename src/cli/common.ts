/**
 * The configuration from the common options (options.ts), and the notices of long-running commands. The lock +
 * context lifecycle around a command body is app/with-app.ts (re-exported here for the commands).
 */
import { envValue, loadConfig, SANDBOX_URL, type ResolvedConfig } from '../config/load.js';
import type { CliIo } from './types.js';
import { hostname } from 'node:os';

export { loadMappingsOrThrow, withApp } from '../app/with-app.js';

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

const PINO_LEVELS = { info: 30, warn: 40, error: 50 } as const;

/**
 * A message of a long-running command for the person at the terminal (the daemon is up, a signal was received). Off
 * a terminal (a service's journal, a pipe to `jq`) stderr is the JSON log, so the message is one of its lines, with
 * pino's fields, whatever the log level; WMSBRIDGE_LOG_PRETTY=1 keeps the text.
 */
export function notice(io: CliIo, text: string, level: keyof typeof PINO_LEVELS = 'info', name = 'wmsbridge'): void {
  if ((io.stderr as { isTTY?: boolean }).isTTY === true || envValue('WMSBRIDGE_LOG_PRETTY') === '1') {
    io.stderr.write(`${text}\n`);
    return;
  }
  io.stderr.write(`${JSON.stringify({ level: PINO_LEVELS[level], time: Date.now(), pid: process.pid, hostname: hostname(), name, msg: text })}\n`);
}
