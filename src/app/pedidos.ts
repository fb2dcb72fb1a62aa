/**
 * `wmsbridge pedidos`, the work: the orders follow-up from the journal (documents sent and the webhooks received
 * about them) written to outbox/pedidos/<date>/pedidos.{html,csv,xlsx}. Asks the WMS nothing.
 */
import type { ResolvedConfig } from '../config/load.js';
import { createI18n } from '../i18n/index.js';
import { buildOrders, dayIn, ordersOfDay, writeOrdersView } from '../outbox/orders.js';
import { withApp, type CommandIo } from './with-app.js';

/** Writes the follow-up of `date` (YYYY-MM-DD; default today in outbox.timeZone), or of every document with `all`. */
export async function writeOrdersFollowUp(config: ResolvedConfig, values: { date?: string; all?: boolean }, io: CommandIo): Promise<number> {
  const i18n = createI18n(config.outbox.locale, config.outbox.timeZone);
  const day = typeof values.date === 'string' ? values.date : dayIn(i18n);
  return withApp(
    config,
    'pedidos',
    async (ctx) => {
      const all = await buildOrders(ctx.journal);
      const lines = values.all ? all : ordersOfDay(all, day, i18n);
      const p = await writeOrdersView(config.outboxDir, lines, day, {
        locale: config.outbox.locale,
        timeZone: config.outbox.timeZone,
        csvFormat: config.outbox.csv,
        fileMode: ctx.fileMode,
      });
      io.stdout.write(`wmsbridge pedidos: ${i18n.t('orders.intro', { n: p.rows, zone: i18n.timeZone })} ${p.html}\n`);
      return 0;
    },
    { offline: true },
  );
}
