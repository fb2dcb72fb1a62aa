import type { CliIo } from './types.js';

export default async function schema(_args: string[], io: CliIo): Promise<number> {
  io.stderr.write('wmsbridge schema: not implemented yet\n');
  return 2;
}
