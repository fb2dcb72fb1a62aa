/**
 * `wmsbridge demo` (what `npm start` runs): the main job end to end on the shipped samples, against the
 * embedded sandbox, without touching the repository's inbox: the sample inbox is copied to
 * <stateDir>/demo/inbox and processed from there with a fresh journal and a fresh sandbox.
 */
import type { CliIo } from './types.js';
import { loadConfigFromFlags } from './common.js';
import { APP_OPTIONS, commandHelp, defineCommand, parseCommand } from './options.js';
import { envValue, SANDBOX_URL } from '../config/load.js';
import { runDemo } from '../app/demo.js';
import { ConfigError } from '../shared/errors.js';

export const DEMO_COMMAND = defineCommand({
  name: 'demo',
  usage: '[options]',
  description: `Copies the sample inbox to <state-dir>/demo/inbox, starts the embedded sandbox WMS, runs every file through
the mappings, writes results, rejects and the report to the outbox, and prints where they are.`,
  common: APP_OPTIONS,
  options: {},
});

export default async function demo(args: string[], io: CliIo): Promise<number> {
  const { values } = parseCommand(DEMO_COMMAND, args);
  if (values.help) {
    io.stdout.write(commandHelp(DEMO_COMMAND));
    return 0;
  }
  const config = await loadConfigFromFlags(values);
  if (config.wms.url && config.wms.url !== SANDBOX_URL)
    throw new ConfigError('demo runs against the embedded sandbox only; unset wms.url / WMS_URL (or use `wmsbridge run`)');
  // a demo is read by a person: warnings only, unless asked otherwise
  if (!values['log-level'] && !envValue('WMSBRIDGE_LOG_LEVEL')) config.log.level = 'warn';
  return runDemo(config, io);
}
