/**
 * `wmsbridge studio [FILE | FOLDER] [--port N] [--host 127.0.0.1] [--lang pt-BR|en]`: serves a local page to map
 * an ERP export in a browser (the sample as a grid, the mapping's YAML, the records and rejects, live) and prints
 * its URL with a one-time token. Parses the arguments only; app/studio.ts composes it. Runs until SIGINT/SIGTERM.
 */
import { ConfigError } from '../shared/errors.js';
import { openStudio } from '../app/studio.js';
import type { CliIo } from './types.js';
import { commandHelp, defineCommand, parseCommand } from './options.js';

export const STUDIO_COMMAND = defineCommand({
  name: 'studio',
  usage: '[FILE | FOLDER] [options]',
  description: `Serves a local page to map an ERP export in a browser: the sample as a grid with what infer found in
each column, the mapping's YAML (infer's draft first) and the records and rejects it produces, live, as
preview gives them. Save writes the mapping into the mappings folder and shows check's result. Lookups
resolve against an embedded sandbox; nothing is sent to a WMS. Binds 127.0.0.1; the printed URL carries a
token every request needs. Default FOLDER: the inbox (./inbox).`,
  common: ['config', 'mappings'],
  commonHelp: { mappings: "where mappings are saved (else the configuration's mappings folder)" },
  options: {
    port: { type: 'string', arg: 'N', help: 'TCP port (default 0: a free port)' },
    host: { type: 'string', arg: 'H', help: 'loopback address to bind (default 127.0.0.1; others are refused)' },
    lang: { type: 'string', arg: 'L', help: 'pt-BR (default) or en', choices: ['pt-BR', 'en'] },
  },
  allowPositionals: true,
  footer: 'exit: 0 stopped (SIGINT/SIGTERM); 2 usage or configuration error',
});

export default async function studio(args: string[], io: CliIo): Promise<number> {
  const { values, positionals } = parseCommand(STUDIO_COMMAND, args);
  if (values.help) {
    io.stdout.write(commandHelp(STUDIO_COMMAND));
    return 0;
  }
  if (positionals.length > 1) {
    io.stderr.write(`wmsbridge studio: expected one FILE or FOLDER\n\n${commandHelp(STUDIO_COMMAND)}`);
    return 2;
  }
  let port: number | undefined;
  if (values.port !== undefined) {
    port = Number(values.port);
    if (!Number.isInteger(port) || port < 0 || port > 65535) throw new ConfigError(`studio: --port must be 0..65535, not '${values.port}'`);
  }
  const s = await openStudio({
    path: positionals[0] ?? 'inbox',
    ...(port !== undefined ? { port } : {}),
    ...(values.host !== undefined ? { host: values.host } : {}),
    ...(values.lang !== undefined ? { lang: values.lang as 'pt-BR' | 'en' } : {}),
    ...(values.config !== undefined ? { configFile: values.config } : {}),
    ...(values.mappings !== undefined ? { mappingsDir: values.mappings } : {}),
  });
  io.stdout.write(`wmsbridge studio: ${s.openUrl}\n`);
  io.stderr.write('open the URL above in a browser (it carries the token); Ctrl+C stops the studio\n');
  await new Promise<void>((resolve) => {
    const on = (): void => {
      process.off('SIGTERM', on);
      process.off('SIGINT', on);
      resolve();
    };
    process.on('SIGTERM', on);
    process.on('SIGINT', on);
  });
  await s.close();
  return 0;
}
