/**
 * `wmsbridge webhooks`: serves the webhook receiver alone (docs/WEBHOOKS.md). The journal is
 * <state-dir>/journal.db; events land in <outbox>/webhooks/<kind>/. SIGTERM/SIGINT stop it cleanly
 * (requests in flight are answered, the outbox is flushed, the journal closed). This file parses the arguments;
 * app/webhooks-command.ts builds the receiver and its journal.
 */
import { ConfigError } from '../shared/errors.js';
import { processEnv, type ResolvedConfig } from '../config/load.js';
import type { CliIo } from './types.js';
import { notice } from './common.js';
import { commandHelp, defineCommand, parseCommand } from './options.js';
import {
  runWebhooksCommand,
  secretFromEnv,
  startWebhooksCommand,
  testHooksFromEnv,
  webhooksOptionsFromConfig,
  type RunningWebhooks,
  type WebhooksCommandOptions,
} from '../app/webhooks-command.js';

export { runWebhooksCommand, secretFromEnv, testHooksFromEnv, webhooksOptionsFromConfig, type RunningWebhooks, type WebhooksCommandOptions };

/**
 * The shared secret from the environment variable `name`. Strict: a configured but unset or empty
 * variable is an error, never a silently unauthenticated receiver. The value is never printed.
 */
const str = (arg: string, help: string) => ({ type: 'string', arg, help }) as const;

export const WEBHOOKS_COMMAND = defineCommand({
  name: 'webhooks',
  usage: '[options]',
  description: `Serves the webhook receiver: POST <url>/webhooks/<kind> (kinds: receipt, receipt-status, shipping,
order-status, packing, stock). Events are stored in <state-dir>/journal.db before they are answered,
then written to <outbox>/webhooks/<kind>/.

Settings come from wmsbridge.config.yaml (section webhooks, outboxDir, stateDir, journal) when
one is found or given with --config; flags override them.`,
  common: ['config', 'state-dir', 'outbox', 'log-level'],
  commonHelp: {
    config: 'configuration file (default ./wmsbridge.config.yaml if present)',
    'state-dir': 'folder of the journal (default ./state)',
    outbox: 'outbox folder (default ./outbox)',
    'log-level': "fatal|error|warn|info|debug|trace|silent (or $WMSBRIDGE_LOG_LEVEL; else the config's)",
  },
  options: {
    port: str('N', 'port (0 = a free port; default 8787)'),
    host: str('H', 'interface to bind (default 127.0.0.1; another than loopback needs --secret-env, or --insecure)'),
    insecure: { type: 'boolean', help: 'accept unauthenticated POSTs on a non-loopback host (behind an authenticating proxy only)' },
    'secret-env': str('VAR', 'name of the environment variable holding the shared secret'),
    'secret-header': str('H', 'header carrying the secret (default X-Webhook-Secret)'),
    'base-path': str('P', 'path prefix (default /webhooks)'),
    'tls-cert': str('FILE', 'serve HTTPS with this PEM certificate (needs --tls-key)'),
    'tls-key': str('FILE', 'PEM private key for --tls-cert'),
    'max-body-bytes': str('N', 'larger bodies are answered 413 (default 1048576)'),
    'flush-interval-ms': str('N', 'outbox flush cadence (default 1000)'),
  },
});

function intOption(name: string, value: string | undefined, min: number, max: number): number | undefined {
  if (value === undefined) return undefined;
  const n = Number(value);
  if (!Number.isInteger(n) || n < min || n > max) throw new ConfigError(`--${name} must be an integer between ${min} and ${max} (got "${value}")`);
  return n;
}

export function parseWebhooksArgs(
  args: string[],
  env: NodeJS.ProcessEnv,
): (WebhooksCommandOptions & { configFile?: string; insecure?: boolean; logLevel?: ResolvedConfig['log']['level'] }) | 'help' {
  const { values } = parseCommand(WEBHOOKS_COMMAND, args);
  if (values.help) return 'help';
  const options: WebhooksCommandOptions & { configFile?: string; insecure?: boolean; logLevel?: ResolvedConfig['log']['level'] } = {};
  if (values.config !== undefined) options.configFile = values.config;
  const lvl = values['log-level'];
  if (lvl !== undefined) {
    // one of LOG_LEVELS: the option table checks it
    options.logLevel = lvl as ResolvedConfig['log']['level'];
  }
  if (values.insecure === true) options.insecure = true;
  const port = intOption('port', values.port, 0, 65535);
  if (port !== undefined) options.port = port;
  if (values.host !== undefined) options.host = values.host;
  if (values['state-dir'] !== undefined) options.stateDir = values['state-dir'];
  if (values.outbox !== undefined) options.outboxDir = values.outbox;
  if (values['base-path'] !== undefined) options.basePath = values['base-path'];
  if (values['secret-header'] !== undefined) options.secretHeader = values['secret-header'];
  const maxBody = intOption('max-body-bytes', values['max-body-bytes'], 1024, 1024 * 1024 * 1024);
  if (maxBody !== undefined) options.maxBodyBytes = maxBody;
  const flushMs = intOption('flush-interval-ms', values['flush-interval-ms'], 0, 3_600_000);
  if (flushMs !== undefined) options.flushIntervalMs = flushMs;
  const secretEnv = values['secret-env'];
  if (secretEnv !== undefined) options.secret = secretFromEnv(secretEnv, env);
  const cert = values['tls-cert'];
  const key = values['tls-key'];
  if ((cert === undefined) !== (key === undefined)) throw new ConfigError('--tls-cert and --tls-key go together');
  if (cert !== undefined && key !== undefined) options.tls = { certFile: cert, keyFile: key };
  return options;
}

export default async function webhooks(args: string[], io: CliIo): Promise<number> {
  const parsed = parseWebhooksArgs(args, processEnv());
  if (parsed === 'help') {
    io.stdout.write(commandHelp(WEBHOOKS_COMMAND));
    return 0;
  }
  const running = await startWebhooksCommand(parsed);
  const basePath = running.basePath;
  notice(
    io,
    `wmsbridge webhooks: listening on ${running.receiver.url} (POST ${basePath}/<kind>; journal ${running.journal.location})`,
    'info',
    'wmsbridge-webhooks',
  );
  await new Promise<void>((resolveStop) => {
    const stop = (signal: NodeJS.Signals): void => {
      process.off('SIGTERM', stop);
      process.off('SIGINT', stop);
      notice(io, `wmsbridge webhooks: ${signal}: stopping`, 'info', 'wmsbridge-webhooks');
      resolveStop();
    };
    process.on('SIGTERM', stop);
    process.on('SIGINT', stop);
  });
  await running.close();
  return 0;
}
