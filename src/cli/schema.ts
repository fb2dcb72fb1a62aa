/** `wmsbridge schema`: prints the JSON Schema of mapping files (generated from the zod model). */
import { generateMappingJsonSchema } from '../map/json-schema.js';
import type { CliIo } from './types.js';

export default async function schema(args: string[], io: CliIo): Promise<number> {
  if (args.includes('--help') || args.includes('-h')) {
    io.stdout.write('usage: wmsbridge schema\n\nPrints the JSON Schema of mapping files (also in schemas/mapping.schema.json).\n');
    return 0;
  }
  if (args.length > 0) {
    io.stderr.write(`wmsbridge schema: unexpected argument '${args[0]}'\n`);
    return 2;
  }
  io.stdout.write(`${JSON.stringify(generateMappingJsonSchema(), null, 2)}\n`);
  return 0;
}
