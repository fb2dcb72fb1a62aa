/**
 * `wmsbridge resolve`: a person's decision on records the pipeline could not settle by itself.
 *   --list                      held, in-doubt and failed records
 *   --retry  --ids 3,4 | --all  send them again now (in-doubt documents: only after checking the WMS!)
 *   --mark-sent --ids 3 [--wms-id X]   the WMS has it (checked by hand): settle as delivered
 *   --drop   --ids 3 [--reason TEXT]   give up on it: settle as rejected
 *   --send-valid --ids 3 | --all [--yes]  a stock sync held for rejected rows is sent without them (resolve-send-valid.ts)
 */
import type { CliIo } from './types.js';
import { loadConfigFromFlags, withApp } from './common.js';
import { APP_OPTIONS, commandHelp, defineCommand, parseCommand } from './options.js';
import { ConfigError } from '../shared/errors.js';
import { pushFiles } from '../push/pipeline.js';
import { createI18n } from '../i18n/index.js';
import type { RecordRow } from '../journal/types.js';
import { TARGET_INFO } from '../wms/targets.js';
import { finishFile } from '../app/finish-file.js';
import { stockKeyLabeler } from '../app/stock-labels.js';
import { decideSendValid } from './resolve-send-valid.js';

/** A record the WMS refused because it already had it (409, or a refusal naming it as existing). */
function isConflictRejection(r: RecordRow): boolean {
  return r.status === 'rejected' && /\b409\b|already exist|duplicat|j[aá] exist/i.test(r.error ?? '');
}

export const RESOLVE_COMMAND = defineCommand({
  name: 'resolve',
  usage: '(--list | --retry | --mark-sent | --drop | --send-valid [--yes]) [--ids 1,2,3 | --all] [options]',
  common: APP_OPTIONS,
  options: {
    list: { type: 'boolean', help: 'list held, in-doubt and failed records (default)' },
    retry: { type: 'boolean', help: 'put them back in the queue and send them now' },
    'mark-sent': {
      type: 'boolean',
      help: `settle as delivered (you checked the WMS has it); --wms-id ID stores its id (records
that refer to it are sent by the next run); also takes a record rejected by a conflict`,
    },
    drop: { type: 'boolean', help: 'settle as rejected (given up); --reason TEXT is recorded' },
    ids: { type: 'string', arg: 'LIST', help: 'record ids (from --list or `wmsbridge status`)' },
    all: { type: 'boolean', help: 'every held, in-doubt and failed record' },
    'wms-id': { type: 'string', arg: 'ID', help: 'with --mark-sent: the WMS id of the record' },
    reason: { type: 'string', arg: 'TEXT', help: 'with --drop: why, recorded with the record' },
    'send-valid': {
      type: 'boolean',
      help: `a stock sync held because some of its rows were rejected: send it without them (shows what
would be left out; sends only with --yes; the decision is journaled)`,
    },
    yes: { type: 'boolean', help: 'with --send-valid: confirm the decision' },
  },
});

export default async function resolve(args: string[], io: CliIo): Promise<number> {
  const { values } = parseCommand(RESOLVE_COMMAND, args);
  if (values.help) {
    io.stdout.write(commandHelp(RESOLVE_COMMAND));
    return 0;
  }
  const actions = ['retry', 'mark-sent', 'drop', 'send-valid'].filter((a) => values[a as 'retry'] === true);
  if (actions.length > 1) throw new ConfigError(`choose one of --retry, --mark-sent, --drop, --send-valid (got ${actions.join(', ')})`);
  const action = actions[0] ?? 'list';
  const ids = values.ids ? values.ids.split(',').map((s) => Number(s.trim())) : [];
  if (ids.some((n) => !Number.isInteger(n) || n <= 0)) throw new ConfigError(`--ids: expected record ids like 3,4,5, got "${values.ids}"`);
  if (action !== 'list' && ids.length === 0 && !values.all) throw new ConfigError(`--${action} needs --ids or --all`);
  const config = await loadConfigFromFlags(values);
  return withApp(
    config,
    `resolve --${action}`,
    async (ctx, logger) => {
      /** the result CSVs of the files whose records changed: written again from the journal */
      const rewriteResults = async (rows: RecordRow[]): Promise<void> => {
        for (const id of new Set(rows.map((r) => r.fileId))) {
          const file = await ctx.journal.getFile(id);
          if (!file) continue;
          try {
            await finishFile({
              file,
              mapping: null,
              journal: ctx.journal,
              outboxDir: config.outboxDir,
              csv: config.outbox.csv,
              now: new Date(),
              logger,
              keyLabel: stockKeyLabeler(ctx.refCache, ctx.journal),
              i18n: createI18n(config.outbox.locale, config.outbox.timeZone),
            });
          } catch (err) {
            io.stderr.write(`the result of ${file.name} could not be written again: ${err instanceof Error ? err.message : String(err)}\n`);
          }
        }
      };
      const open = await ctx.journal.listRecords({ statuses: ['held', 'in_doubt', 'failed'] });
      // --mark-sent also takes a record rejected because the WMS already had it (a conflict on a create,
      // refused before wmsbridge took a conflict as evidence of delivery)
      if (action === 'mark-sent' && ids.length > 0) {
        // and one delivered earlier whose WMS id was unknown (outcome already-existed, no id): --wms-id gives it
        for (const id of ids) {
          if (open.some((r) => r.id === id)) continue;
          const [r] = await ctx.journal.listRecords({ afterId: id - 1, limit: 1 });
          if (r && r.id === id && (isConflictRejection(r) || (r.status === 'sent' && r.outcome === 'already-existed' && !r.wmsId))) open.push(r);
        }
      }
      const chosen: RecordRow[] = action === 'list' || values.all ? open : open.filter((r) => ids.includes(r.id));
      const missing = ids.filter((id) => !open.some((r) => r.id === id));
      if (missing.length) io.stderr.write(`not held, in doubt or failed (ignored): ${missing.join(', ')}\n`);
      if (action === 'list') {
        if (open.length === 0) io.stdout.write('nothing to resolve\n');
        // stock rows by warehouse code and status name: read them when the WMS answers (ids otherwise)
        if (open.some((r) => r.target.startsWith('Stock'))) await ctx.refCache.load(['Warehouse', 'MaterialStatus']).catch(() => undefined);
        const label = stockKeyLabeler(ctx.refCache, ctx.journal);
        for (const r of open)
          io.stdout.write(
            `#${r.id} ${r.status.replace('_', '-')} ${r.target} ${(await label(r)) ?? r.key} (file #${r.fileId}, line ${r.source.line}): ${r.error ?? ''}\n`,
          );
        return 0;
      }
      if (action === 'mark-sent') {
        for (const r of chosen) {
          const wmsId = values['wms-id'] ?? r.wmsId;
          const conflict = r.status === 'rejected' || r.outcome === 'already-existed';
          // with its WMS id, the records that refer to it can be sent (the next run takes them up again): the
          // cross-reference is written with the settle, in one transaction (its identifying fields left as they are)
          const xref = TARGET_INFO[r.target].xref;
          await ctx.journal.settle(
            r.id,
            { status: 'sent', outcome: conflict ? 'already-existed' : 'created', wmsId, error: 'marked delivered by an operator' },
            xref && wmsId ? { resource: xref, key: r.key, wmsId, payloadHash: r.payloadHash, fields: [] } : undefined,
          );
        }
        await rewriteResults(chosen);
        io.stdout.write(`${chosen.length} record(s) marked delivered\n`);
        return 0;
      }
      if (action === 'drop') {
        for (const r of chosen)
          await ctx.journal.settle(r.id, {
            status: 'rejected',
            outcome: 'rejected',
            error: `dropped by an operator${values.reason ? `: ${values.reason}` : ''}`,
          });
        await rewriteResults(chosen);
        io.stdout.write(`${chosen.length} record(s) dropped\n`);
        return 0;
      }
      const toSend = action === 'send-valid' ? await decideSendValid(ctx, chosen, values.yes === true, io) : chosen;
      if (action === 'send-valid' && toSend.length === 0) return 1;
      const n = await ctx.journal.requeue(toSend.map((r) => r.id));
      const fileIds = [...new Set(toSend.map((r) => r.fileId))];
      const files = [];
      for (const id of fileIds) {
        const f = await ctx.journal.getFile(id);
        const ch = config.channels.find((c) => c.name === f?.channel);
        if (f && ch)
          files.push({
            id,
            name: f.name,
            sha256: f.sha256,
            policy: { inboxDir: ch.dir, inDoubt: { masterData: 'resend' as const, documents: 'resend' as const }, stockSyncChunkSize: ch.stockSyncChunkSize },
          });
      }
      const before = await ctx.journal.countRecords({ fileIds });
      const pushed = await pushFiles({
        journal: ctx.journal,
        client: ctx.client,
        refCache: ctx.refCache,
        logger,
        files,
        concurrency: config.sending.concurrency,
        batchSize: config.sending.batchSize,
      });
      const after = await ctx.journal.countRecords({ fileIds });
      await rewriteResults(chosen);
      io.stdout.write(
        `${n} record(s) requeued; sent now: ${(after.sent ?? 0) - (before.sent ?? 0)}; still open: ${(after.held ?? 0) + (after.failed ?? 0) + (after.in_doubt ?? 0) + (after.rejected ?? 0) - (before.rejected ?? 0)}\n`,
      );
      if (pushed.wmsUnavailable) {
        io.stdout.write(`the WMS was unavailable (${pushed.wmsUnavailable.lastError}): ${after.pending ?? 0} record(s) wait, pending, for the next run\n`);
        return 75;
      }
      // a retry that ends with records refused (new rejects) is not a success either
      return (after.held ?? 0) + (after.failed ?? 0) + (after.in_doubt ?? 0) + (after.rejected ?? 0) - (before.rejected ?? 0) > 0 ? 1 : 0;
    },
    // only --retry talks to the WMS; listing, marking and dropping work on the journal alone
    { offline: action !== 'retry' && action !== 'send-valid', wmsChanged: values['wms-changed'] === true },
  );
}
