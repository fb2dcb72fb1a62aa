/**
 * `wmsbridge reconcile stock <erp-stock-file>`: compares the ERP's stock file with the WMS stock of its
 * owner and writes outbox/reconciliation/<date>/stock-<file>.{html,csv,xlsx}. Sends nothing.
 * Exit 0 when everything matches, 1 when something differs (or rows could not be read), 2 usage/config,
 * 75 the WMS was unavailable.
 */
import type { CliIo } from './types.js';
import { loadConfigFromFlags } from './common.js';
import { APP_OPTIONS, commandHelp, defineCommand, parseCommand } from './options.js';
import { reconcileStockFile } from '../app/reconcile-command.js';

export const RECONCILE_COMMAND = defineCommand({
  name: 'reconcile',
  usage: 'stock <erp-stock-file> [options]',
  description: `Reads the ERP stock file through the mapping that matches it (a StockSync mapping), reads the WMS stock of
its owner, and writes outbox/reconciliation/<date>/stock-<file>.html, .csv and .xlsx: product, ERP
quantity, WMS quantity (available, reserved, blocked), difference and status. Nothing is sent.`,
  common: APP_OPTIONS,
  options: { mapping: { type: 'string', arg: 'NAME', help: 'the mapping to read the file with (default: the stock mapping matching the file name)' } },
  allowPositionals: true,
  footer: `exit codes: 0 the WMS holds what the ERP says, 1 differences (or unreadable rows), 2 configuration or usage error,
75 the WMS was unavailable (try later)`,
});

export default async function reconcile(args: string[], io: CliIo): Promise<number> {
  const { values, positionals } = parseCommand(RECONCILE_COMMAND, args);
  if (values.help) {
    io.stdout.write(commandHelp(RECONCILE_COMMAND));
    return 0;
  }
  if (positionals[0] !== 'stock' || positionals.length !== 2) {
    io.stderr.write(`wmsbridge reconcile: expected 'stock <erp-stock-file>'\n\n${commandHelp(RECONCILE_COMMAND)}`);
    return 2;
  }
  const file = positionals[1]!;
  const config = await loadConfigFromFlags(values);
  return reconcileStockFile(config, file, typeof values.mapping === 'string' ? values.mapping : undefined, io);
}
