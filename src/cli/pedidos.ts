/**
 * `wmsbridge pedidos [--date YYYY-MM-DD | --all]`: the orders follow-up from the journal (documents sent and
 * the webhooks received about them): outbox/pedidos/<date>/pedidos.{html,csv,xlsx}. Asks the WMS nothing.
 */
import type { CliIo } from './types.js';
import { loadConfigFromFlags } from './common.js';
import { APP_OPTIONS, commandHelp, defineCommand, parseCommand } from './options.js';
import { ConfigError } from '../shared/errors.js';
import { writeOrdersFollowUp } from '../app/pedidos.js';

export const PEDIDOS_COMMAND = defineCommand({
  name: 'pedidos',
  usage: '[options]',
  description: `Writes the orders follow-up: the picking lists and purchase orders wmsbridge sent, with what the WMS reported
about them by webhook (separation, packing, shipping, receipt) and when, to
outbox/pedidos/<date>/pedidos.html, .csv and .xlsx. Reads the journal only (run it where watch or webhooks
store the events).`,
  common: APP_OPTIONS,
  options: {
    date: { type: 'string', arg: 'YYYY-MM-DD', help: 'the day to show (documents sent or with news that day; default: today in outbox.timeZone)' },
    all: { type: 'boolean', help: "every document ever sent (written under today's date)" },
  },
});

export default async function pedidos(args: string[], io: CliIo): Promise<number> {
  const { values } = parseCommand(PEDIDOS_COMMAND, args);
  if (values.help) {
    io.stdout.write(commandHelp(PEDIDOS_COMMAND));
    return 0;
  }
  if (values.date !== undefined && !/^\d{4}-\d{2}-\d{2}$/.test(String(values.date)))
    throw new ConfigError(`pedidos: --date must be YYYY-MM-DD, not '${values.date}'`);
  const config = await loadConfigFromFlags(values);
  return writeOrdersFollowUp(config, { ...(typeof values.date === 'string' ? { date: values.date } : {}), ...(values.all === true ? { all: true } : {}) }, io);
}
