/**
 * The receiver's settings as `wmsbridge webhooks` and `wmsbridge watch` read them from a loaded
 * configuration: one reading for both, so a secret variable that is named but unset stops both.
 */
import { resolve } from 'node:path';
import { ConfigError } from '../shared/errors.js';
import type { Logger } from '../shared/logger.js';
import type { ResolvedConfig } from '../config/load.js';
import { journalSpecOf, processEnv } from '../config/load.js';
import type { JournalSpec } from '../journal/index.js';
import type { Journal } from '../journal/types.js';
import type { WebhookReceiverOptions } from './receiver.js';
import type { WebhookHooks } from './handler.js';
import { outboxFileMode } from '../outbox/atomic.js';

export interface WebhooksCommandOptions extends Omit<WebhookReceiverOptions, 'outboxDir'> {
  /** folder of the journal (journal.db). @default './state' */
  stateDir?: string;
  /** @default './outbox' */
  outboxDir?: string;
  /** the journal to open. @default { kind: 'sqlite', path: <stateDir>/journal.db } */
  journalSpec?: JournalSpec;
  /** an open journal to use instead (not closed by close()) */
  journal?: Journal;
  logger?: Logger;
  hooks?: WebhookHooks;
}

/** 127.0.0.0/8, ::1, localhost */
export function isLoopbackHost(host: string): boolean {
  const h = host
    .trim()
    .toLowerCase()
    .replace(/^\[|\]$/g, '');
  return h === 'localhost' || h === '::1' || /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(h);
}

/**
 * Safe by default: a receiver reachable from the network without a shared secret accepts any POST. It
 * listens on another address than loopback only with a secret, or when told `insecure`.
 */
export function assertSafeWebhookListen(host: string | undefined, secret: string | undefined, insecure: boolean): void {
  const h = host ?? '127.0.0.1';
  if (isLoopbackHost(h) || secret || insecure) return;
  throw new ConfigError(
    `webhooks: host ${h} is reachable from the network and no secret is set: anyone could post webhooks. Set a secret (webhooks.secretEnv / --secret-env), or pass --insecure (webhooks.insecure: true) behind a proxy that authenticates`,
  );
}

export function secretFromEnv(name: string, env: NodeJS.ProcessEnv, setting = '--secret-env'): string {
  const secret = env[name];
  if (secret === undefined || secret === '') throw new ConfigError(`${setting} ${name}: the environment variable ${name} is not set or empty`);
  return secret;
}

/** The receiver options a loaded configuration gives (its `webhooks` section, folders, journal, CSV format). */
export function webhooksOptionsFromConfig(config: ResolvedConfig, env: NodeJS.ProcessEnv = processEnv()): WebhooksCommandOptions {
  const w = config.webhooks;
  const options: WebhooksCommandOptions = {
    host: w.host,
    port: w.port,
    basePath: w.basePath,
    maxBodyBytes: w.maxBodyBytes,
    stateDir: config.stateDir,
    outboxDir: config.outboxDir,
    csvFormat: config.outbox.csv,
    fileMode: outboxFileMode(config.outbox.fileMode),
  };
  if (w.secretEnv) options.secret = secretFromEnv(w.secretEnv, env, 'webhooks.secretEnv');
  if (w.tls) options.tls = { certFile: resolve(config.baseDir, w.tls.certFile), keyFile: resolve(config.baseDir, w.tls.keyFile) };
  if (config.journal.kind === 'postgres') options.journalSpec = journalSpecOf(config, env);
  else if (config.journal.path) options.journalSpec = { kind: 'sqlite', path: config.journal.path };
  return options;
}
