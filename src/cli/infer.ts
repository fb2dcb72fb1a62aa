/**
 * `wmsbridge infer <sample-file> [--target T] [--channel C] [--out FILE] [--name N] [--force]`: writes a
 * commented mapping proposed from one sample export (src/infer/), validates it like `check`, and
 * previews the sample with it (no WMS: read-only lookups stay unresolved). Never overwrites a file
 * without --force. Exit 0 mapping written and the sample maps without rejects; 1 written, the
 * preview has rejects or a field is still a TODO (named); 2 usage, unreadable sample, refused overwrite or
 * a mapping that does not validate.
 */
import { runInfer } from '../app/infer-command.js';
import type { CliIo } from './types.js';
import { commandHelp, defineCommand, parseCommand } from './options.js';

export const INFER_COMMAND = defineCommand({
  name: 'infer',
  usage: '<sample-file | folder> [options]',
  description: `Proposes a mapping from one sample export: sniffs the encoding, the format (delimited, fixed-width,
XML with NF-e recognised, JSON), types every column, picks the target and a column for every field
(TOTVS Protheus names and Portuguese words), and writes a commented YAML with a confidence and the
evidence per field and TODOs. Then validates it (like check) and previews the sample with it. No WMS
is needed: read-only lookups stay unresolved in the preview. Given a folder (a drop, e.g. inbox/), one
mapping per kind of file into --out (a folder, default mappings/), the references between them, the
order to send them in, and what needs a person.`,
  common: [],
  options: {
    target: { type: 'string', arg: 'T', help: 'the target (Product, Provider, PickingList...): else chosen from the file name and columns' },
    channel: { type: 'string', arg: 'C', help: "inbox channel of match.channel: else the sample's inbox folder, else by target" },
    out: { type: 'string', arg: 'FILE', help: 'where to write: else mappings/<name>.yaml' },
    name: { type: 'string', arg: 'N', help: 'the mapping name: else from the file name (PRODUTOS_20241105.csv -> produtos)' },
    force: { type: 'boolean', help: 'overwrite --out when it exists' },
  },
  allowPositionals: true,
  footer: 'exit: 0 written and the sample maps cleanly; 1 written, the preview has rejects or a field is a TODO; 2 usage, sample or mapping error',
});

export default async function infer(args: string[], io: CliIo): Promise<number> {
  const { values, positionals } = parseCommand(INFER_COMMAND, args);
  if (values.help) {
    io.stdout.write(commandHelp(INFER_COMMAND));
    return 0;
  }
  if (positionals.length !== 1) {
    io.stderr.write(`wmsbridge infer: expected one <sample-file> or <folder>\n\n${commandHelp(INFER_COMMAND)}`);
    return 2;
  }
  return runInfer(positionals[0]!, values, io);
}
