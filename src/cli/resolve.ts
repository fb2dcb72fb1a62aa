import type { CliIo } from './types.js';

export default async function resolve(_args: string[], io: CliIo): Promise<number> {
  io.stderr.write('wmsbridge resolve: not implemented yet\n');
  return 2;
}
