import type { CliIo } from './types.js';

export default async function demo(_args: string[], io: CliIo): Promise<number> {
  io.stderr.write('wmsbridge demo: not implemented yet\n');
  return 2;
}
