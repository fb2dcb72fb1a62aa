/** `wmsbridge schema`: prints the JSON Schema of mapping files (generated from the zod model). */
import { mappingJsonSchema } from '../app/mapping-schema.js';
import type { CliIo } from './types.js';
import { commandHelp, defineCommand, parseCommand } from './options.js';

export const SCHEMA_COMMAND = defineCommand({
  name: 'schema',
  usage: '',
  description: 'Prints the JSON Schema of mapping files (also in schemas/mapping.schema.json).',
  common: [],
  options: {},
});

export default async function schema(args: string[], io: CliIo): Promise<number> {
  const { values } = parseCommand(SCHEMA_COMMAND, args);
  if (values.help) {
    io.stdout.write(commandHelp(SCHEMA_COMMAND));
    return 0;
  }
  io.stdout.write(`${JSON.stringify(mappingJsonSchema(), null, 2)}\n`);
  return 0;
}
