import type { CliIo } from './types.js';

export default async function check(_args: string[], io: CliIo): Promise<number> {
  io.stderr.write('wmsbridge check: not implemented yet\n');
  return 2;
}
