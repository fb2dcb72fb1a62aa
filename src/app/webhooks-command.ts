/**
 * `wmsbridge webhooks`, the composition: the webhook receiver alone (docs/WEBHOOKS.md), with the journal it opens
 * (<state-dir>/journal.db, or the config's) and closes. runWebhooksCommand() is the flag-free entry point;
 * startWebhooksCommand() reads the config file under the flags cli/webhooks.ts parsed.
 */
import { join, resolve } from 'node:path';
import { envLogger, envValue, findConfigFile, loadConfig, processEnv, type ResolvedConfig } from '../config/load.js';
import { openJournal } from '../journal/index.js';
import type { Journal } from '../journal/types.js';
import { createWebhookReceiver, type WebhookReceiver } from '../webhook/receiver.js';
import type { WebhookHooks } from '../webhook/handler.js';
import { assertSafeWebhookListen, secretFromEnv, webhooksOptionsFromConfig, type WebhooksCommandOptions } from '../webhook/options.js';

export { secretFromEnv, webhooksOptionsFromConfig, type WebhooksCommandOptions };

export interface RunningWebhooks {
  receiver: WebhookReceiver;
  journal: Journal;
  /** closes the receiver (flushing the outbox) and the journal it opened */
  close(): Promise<void>;
}

/**
 * Test-only hook: with WMSBRIDGE_TEST_CRASH_AFTER_STORE=1 the process exits with code 137 (as if
 * killed with SIGKILL) right after an event is committed to the journal and before it is answered.
 */
export function testHooksFromEnv(env: NodeJS.ProcessEnv): WebhookHooks | undefined {
  if (env['WMSBRIDGE_TEST_CRASH_AFTER_STORE'] !== '1') return undefined;
  return {
    afterStore: ({ stored }) => {
      if (stored) process.exit(137);
    },
  };
}

export async function runWebhooksCommand(options: WebhooksCommandOptions = {}): Promise<RunningWebhooks> {
  const logger = options.logger ?? envLogger({ name: 'wmsbridge-webhooks' });
  const stateDir = resolve(options.stateDir ?? 'state');
  const outboxDir = resolve(options.outboxDir ?? 'outbox');
  const ownJournal = options.journal === undefined;
  const journal = options.journal ?? (await openJournal(options.journalSpec ?? { kind: 'sqlite', path: join(stateDir, 'journal.db') }));
  const { stateDir: _s, outboxDir: _o, journal: _j, journalSpec: _js, logger: _l, hooks, ...receiverOptions } = options;
  let receiver: WebhookReceiver;
  try {
    receiver = await createWebhookReceiver({ ...receiverOptions, outboxDir }, { journal, logger, ...(hooks ? { hooks } : {}) });
  } catch (err) {
    if (ownJournal) await journal.close();
    throw err;
  }
  return {
    receiver,
    journal,
    async close() {
      await receiver.close();
      if (ownJournal) await journal.close();
    },
  };
}

/** What `wmsbridge webhooks` was given on its command line, above the receiver options. */
export interface WebhooksCommandFlags extends WebhooksCommandOptions {
  configFile?: string;
  insecure?: boolean;
  logLevel?: ResolvedConfig['log']['level'];
}

/**
 * Starts the receiver as `wmsbridge webhooks` does: the config file (when there is one) < flags, a journal path named
 * in the config winning over <state-dir>/journal.db; the log level flag < $WMSBRIDGE_LOG_LEVEL < config; refuses
 * to listen beyond loopback without a secret unless insecure.
 */
export async function startWebhooksCommand(parsed: WebhooksCommandFlags): Promise<RunningWebhooks & { basePath: string }> {
  const { configFile, insecure: insecureFlag, logLevel, ...flags } = parsed;
  let insecure = insecureFlag === true;
  // config file (when there is one) < flags; a journal path named in the config wins over <state-dir>/journal.db
  let fromConfig: WebhooksCommandOptions = {};
  let level: ResolvedConfig['log']['level'] | undefined;
  if (configFile !== undefined || findConfigFile(process.cwd(), processEnv()) !== null) {
    const config = await loadConfig({ ...(configFile !== undefined ? { file: configFile } : {}) });
    fromConfig = webhooksOptionsFromConfig(config);
    level = config.log.level;
    insecure ||= config.webhooks.insecure;
  }
  // flag < $WMSBRIDGE_LOG_LEVEL < config, as for every other command: the flag wins
  if (envValue('WMSBRIDGE_LOG_LEVEL') && !logLevel) level = envValue('WMSBRIDGE_LOG_LEVEL') as ResolvedConfig['log']['level'];
  if (logLevel) level = logLevel;
  const hooks = testHooksFromEnv(processEnv());
  const options: WebhooksCommandOptions = { ...fromConfig, ...flags, ...(hooks ? { hooks } : {}) };
  assertSafeWebhookListen(options.host, options.secret, insecure);
  const running = await runWebhooksCommand({ ...options, logger: envLogger({ name: 'wmsbridge-webhooks', ...(level ? { level } : {}) }) });
  return { ...running, basePath: options.basePath ?? '/webhooks' };
}
