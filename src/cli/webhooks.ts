import type { CliIo } from './types.js';

export default async function webhooks(_args: string[], io: CliIo): Promise<number> {
  io.stderr.write('wmsbridge webhooks: not implemented yet\n');
  return 2;
}
