import type { CliIo } from './types.js';

export default async function status(_args: string[], io: CliIo): Promise<number> {
  io.stderr.write('wmsbridge status: not implemented yet\n');
  return 2;
}
