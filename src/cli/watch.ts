import type { CliIo } from './types.js';

export default async function watch(_args: string[], io: CliIo): Promise<number> {
  io.stderr.write('wmsbridge watch: not implemented yet\n');
  return 2;
}
