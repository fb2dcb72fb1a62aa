import type { CliIo } from './types.js';

export default async function preview(_args: string[], io: CliIo): Promise<number> {
  io.stderr.write('wmsbridge preview: not implemented yet\n');
  return 2;
}
