/**
 * `wmsbridge reconcile stock`, the work: the ERP stock file (through its mapping) compared with the WMS stock of
 * its owner, written to outbox/reconciliation/<date>/stock-<file>.{html,csv,xlsx}. Sends nothing. Resolves to the
 * exit code: 0 equal, 1 differences (or unreadable rows), 75 the WMS unavailable.
 */
import type { ResolvedConfig } from '../config/load.js';
import { pickStockMapping, reconcileStock, writeReconciliation } from '../reconcile/stock.js';
import { createI18n, isOutageReason } from '../i18n/index.js';
import { isWmsError } from '../wms/errors.js';
import { loadMappingsOrThrow, withApp, type CommandIo } from './with-app.js';

/** Reconciles the ERP stock `file`, read with the mapping named `mappingName` (default: the one matching it). */
export async function reconcileStockFile(config: ResolvedConfig, file: string, mappingName: string | undefined, io: CommandIo): Promise<number> {
  const mappings = await loadMappingsOrThrow(config);
  const mapping = pickStockMapping(mappings, file, mappingName);
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
        fileMode: ctx.fileMode,
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
