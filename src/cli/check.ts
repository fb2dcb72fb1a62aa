/**
 * `wmsbridge check`: validates the configuration and every mapping before anything is read or sent.
 * With --wms it also authorizes against the WMS (or the embedded sandbox) and reads the reference data
 * the mappings look up. Exit 0 when everything is valid, 2 otherwise: a missing WMS is the problem `run` would stop
 * on (exit 2), unless the embedded sandbox is asked for (--sandbox, wms.url: sandbox).
 */
import type { CliIo } from './types.js';
import { loadConfigFromFlags } from './common.js';
import { APP_OPTIONS, commandHelp, defineCommand, parseCommand } from './options.js';
import { checkSetup } from '../app/check.js';

export const CHECK_COMMAND = defineCommand({
  name: 'check',
  usage: '[--wms] [options]',
  description: 'Validates the configuration file and every mapping file; names the file, the key and the problem.',
  common: APP_OPTIONS,
  options: { wms: { type: 'boolean', help: 'also log in to the WMS and read the reference data the mappings use' } },
});

export default async function check(args: string[], io: CliIo): Promise<number> {
  const { values } = parseCommand(CHECK_COMMAND, args);
  if (values.help) {
    io.stdout.write(commandHelp(CHECK_COMMAND));
    return 0;
  }
  const config = await loadConfigFromFlags(values);
  const { notes, problems } = await checkSetup(config, { wms: values.wms === true });
  for (const n of notes) io.stdout.write(`${n}\n`);
  if (problems.length) {
    io.stderr.write(`\n${problems.length} problem(s):\n${problems.map((p) => `  - ${p}`).join('\n')}\n`);
    return 2;
  }
  io.stdout.write('ok: configuration and mappings are valid\n');
  return 0;
}
