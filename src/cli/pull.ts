import type { CliIo } from './types.js';

export default async function pull(_args: string[], io: CliIo): Promise<number> {
  io.stderr.write('wmsbridge pull: not implemented yet\n');
  return 2;
}
