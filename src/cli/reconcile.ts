/**
 * `wmsbridge reconcile stock <erp-stock-file>`: compares the ERP's stock file with the WMS stock of its
 * owner and writes outbox/reconciliation/<date>/stock-<file>.{html,csv,xlsx}. Sends nothing.
 * Exit 0 when everything matches, 1 when something differs (or rows could not be read), 2 usage/config,
 * 75 the WMS was unavailable.
 */
import type { CliIo } from './types.js';
import { loadConfigFromFlags, loadMappingsOrThrow, withApp } from './common.js';
import { APP_OPTIONS, commandHelp, defineCommand, parseCommand } from './options.js';
import { pickStockMapping, reconcileStock, writeReconciliation } from '../reconcile/stock.js';
import { createI18n, isOutageReason } from '../i18n/index.js';
import { isWmsError } from '../wms/errors.js';

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
  const mappings = await loadMappingsOrThrow(config);
  const mapping = pickStockMapping(mappings, file, typeof values.mapping === 'string' ? values.mapping : undefined);
  return withApp(
    config,
    'reconcile stock',
    async (ctx, logger) => {
      let r;
      try {
        r = await reconcileStock({ file, mapping, client: ctx.client, refCache: ctx.refCache, journal: ctx.journal });
      } catch (err) {
        // the WMS unavailable is not a data problem: exit 75, try later (operations contract)
        if (isWmsError(err) && isOutageReason({ code: err.code, params: err.httpStatus !== undefined ? { status: err.httpStatus } : {} })) {
          logger.warn({ err }, 'the WMS is unavailable: stock not reconciled');
          io.stderr.write(`wmsbridge reconcile stock: the WMS is unavailable (${err.message}); nothing was written, try again later\n`);
          return 75;
        }
        throw err;
      }
      const paths = await writeReconciliation(config.outboxDir, r, {
        locale: config.outbox.locale,
        timeZone: config.outbox.timeZone,
        csvFormat: config.outbox.csv,
      });
      logger.info(
        { file, mapping: mapping.name, products: r.lines.length, differences: r.differences, unreadable: r.unreadable.length, html: paths.html },
        'stock reconciled',
      );
      const i18n = createI18n(config.outbox.locale, config.outbox.timeZone);
      const said = r.differences === 0 ? i18n.t('recon.allEqual', { n: r.lines.length }) : i18n.t('recon.differences', { n: r.differences });
      // the sentence's own full stop would read ".;" before the path
      io.stdout.write(`wmsbridge reconcile stock: ${said.replace(/\.$/, '')}; ${paths.html}\n`);
      return r.differences > 0 || r.unreadable.length > 0 ? 1 : 0;
    },
    // it only reads the WMS: the journal's WMS (what its held records go to) is neither checked nor changed
    { readOnly: true },
  );
}
