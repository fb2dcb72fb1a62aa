import type { CliIo } from './types.js';

export default async function sandbox(_args: string[], io: CliIo): Promise<number> {
  io.stderr.write('wmsbridge sandbox: not implemented yet\n');
  return 2;
}
