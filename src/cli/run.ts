import type { CliIo } from './types.js';

export default async function run(_args: string[], io: CliIo): Promise<number> {
  io.stderr.write('wmsbridge run: not implemented yet\n');
  return 2;
}
