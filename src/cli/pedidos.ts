/**
 * `wmsbridge pedidos [--date YYYY-MM-DD | --all]`: the orders follow-up from the journal (documents sent and
 * the webhooks received about them): outbox/pedidos/<date>/pedidos.{html,csv,xlsx}. Asks the WMS nothing.
 */
import type { CliIo } from './types.js';
import { COMMON_HELP, loadConfigFromFlags, parseCommandArgs, withApp } from './common.js';
import { ConfigError } from '../shared/errors.js';
import { createI18n } from '../i18n/index.js';
import { buildOrders, dayIn, ordersOfDay, writeOrdersView } from '../outbox/orders.js';

const HELP = `usage: wmsbridge pedidos [options]

Writes the orders follow-up: the picking lists and purchase orders wmsbridge sent, with what the WMS reported
about them by webhook (separation, packing, shipping, receipt) and when, to
outbox/pedidos/<date>/pedidos.html, .csv and .xlsx. Reads the journal only (run it where watch or webhooks
store the events).

options:
  --date YYYY-MM-DD     the day to show (documents sent or with news that day; default: today in outbox.timeZone)
  --all                 every document ever sent (written under today's date)
${COMMON_HELP}`;

export default async function pedidos(args: string[], io: CliIo): Promise<number> {
  const { values } = parseCommandArgs(args, { date: { type: 'string' }, all: { type: 'boolean' } });
  if (values.help) {
    io.stdout.write(`${HELP}\n`);
    return 0;
  }
  if (values.date !== undefined && !/^\d{4}-\d{2}-\d{2}$/.test(String(values.date))) throw new ConfigError(`pedidos: --date must be YYYY-MM-DD, not '${values.date}'`);
  const config = await loadConfigFromFlags(values);
  const i18n = createI18n(config.outbox.locale, config.outbox.timeZone);
  const day = typeof values.date === 'string' ? values.date : dayIn(i18n);
  return withApp(
    config,
    'pedidos',
    async (ctx) => {
      const all = await buildOrders(ctx.journal);
      const lines = values.all ? all : ordersOfDay(all, day, i18n);
      const p = await writeOrdersView(config.outboxDir, lines, day, { locale: config.outbox.locale, timeZone: config.outbox.timeZone, csvFormat: config.outbox.csv });
      io.stdout.write(`wmsbridge pedidos: ${i18n.t('orders.intro', { n: p.rows, zone: i18n.timeZone })} ${p.html}\n`);
      return 0;
    },
    { offline: true },
  );
}
