/**
 * `wmsbridge preview <mapping-file> <data-file> [--limit N] [--json]`: prints the records/documents
 * a file would produce and its rejects, sending nothing. Read-only lookups print as
 * `<lookup Warehouse codeERP=CD-SP01>` unless WMS credentials are given (flags or WMS_URL,
 * WMS_ACCESS_KEY_ID, WMS_SECRET_KEY), in which case they are resolved against the WMS.
 * Exit 0 without rejects, 1 with rejects, 2 on a mapping (or usage) error or a TODO left in the mapping (named).
 */
import { ConfigError } from '../shared/errors.js';
import { runPreviewCommand } from '../app/preview-command.js';
import type { CliIo } from './types.js';
import { commandHelp, defineCommand, parseCommand } from './options.js';

export const PREVIEW_COMMAND = defineCommand({
  name: 'preview',
  usage: '<mapping-file>... <data-file> [options]',
  description: `Prints the records (or documents) the data file would produce with the mapping, and its rejects with
their reasons, each with the mapping that made it, and the rows no mapping selected or a skip rule excluded.
Several mapping files: every one of them applies to the file, as in a run (they declare sharesFilesWith).
Nothing is sent.`,
  common: ['json', 'config', 'wms-url', 'access-key-id', 'sandbox'],
  commonHelp: {
    json: 'one JSON object per line ({"kind":"record"|"reject",...}) instead of a table',
    config: "resolve read-only lookups against the config file's WMS (wms.url; also\n./wmsbridge.config.* when present)",
    'wms-url': 'resolve read-only lookups against this WMS (else they print as <lookup ...>)',
    sandbox: 'resolve read-only lookups against an embedded sandbox WMS (its seed data)',
  },
  options: {
    limit: { type: 'string', arg: 'N', help: 'stop after N records + rejects' },
    'secret-key': { type: 'string', arg: 'SECRET', help: 'WMS secret (prefer $WMS_SECRET_KEY: a flag is visible in the process list)' },
  },
  allowPositionals: true,
  footer: 'exit: 0 no rejects, 1 some rejects, 2 mapping or usage error',
});

export default async function preview(args: string[], io: CliIo): Promise<number> {
  const { values, positionals } = parseCommand(PREVIEW_COMMAND, args);
  if (values.help) {
    io.stdout.write(commandHelp(PREVIEW_COMMAND));
    return 0;
  }
  if (positionals.length < 2) {
    io.stderr.write(`wmsbridge preview: expected <mapping-file>... <data-file>\n\n${commandHelp(PREVIEW_COMMAND)}`);
    return 2;
  }
  let limit: number | undefined;
  if (values.limit !== undefined) {
    limit = Number(values.limit);
    if (!Number.isInteger(limit) || limit < 1) throw new ConfigError(`preview: --limit must be a positive integer, not '${values.limit}'`);
  }
  return runPreviewCommand(
    {
      paths: positionals,
      ...(limit !== undefined ? { limit } : {}),
      json: values.json === true,
      sandbox: values.sandbox === true,
      ...(values['wms-url'] !== undefined ? { wmsUrl: values['wms-url'] } : {}),
      ...(values['access-key-id'] !== undefined ? { accessKeyId: values['access-key-id'] } : {}),
      ...(values['secret-key'] !== undefined ? { secretKey: values['secret-key'] } : {}),
      ...(values.config !== undefined ? { configFile: values.config } : {}),
    },
    io,
  );
}
