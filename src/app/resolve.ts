/**
 * `wmsbridge resolve`, the work: a person's decision on records the pipeline could not settle by itself, on the
 * journal (and, for --retry and --send-valid, the WMS) of one app context. cli/resolve.ts parses the arguments.
 *   list        held, in-doubt and failed records
 *   retry       send them again now (in-doubt documents: only after checking the WMS!)
 *   mark-sent   the WMS has it (checked by hand): settle as delivered
 *   drop        give up on it: settle as rejected
 *   send-valid  a stock sync held for rejected rows is sent without them (resolve-send-valid.ts)
 */
import type { ResolvedConfig } from '../config/load.js';
import { pushFiles } from '../push/pipeline.js';
import { createI18n } from '../i18n/index.js';
import type { RecordRow } from '../journal/types.js';
import type { Logger } from '../shared/logger.js';
import { TARGET_INFO } from '../wms/targets.js';
import type { AppContext } from './context.js';
import { finishFile } from './finish-file.js';
import { stockKeyLabeler } from './stock-labels.js';
import { decideSendValid } from './resolve-send-valid.js';
import { withApp, type CommandIo } from './with-app.js';

export const RESOLVE_ACTIONS = ['list', 'retry', 'mark-sent', 'drop', 'send-valid'] as const;
export type ResolveAction = (typeof RESOLVE_ACTIONS)[number];

export interface ResolveRequest {
  action: ResolveAction;
  /** record ids (from --list or `wmsbridge status`); empty with `all` */
  ids: number[];
  all: boolean;
  /** mark-sent: the WMS id of the record */
  wmsId?: string;
  /** drop: why, recorded with the record */
  reason?: string;
  /** send-valid: the decision confirmed */
  yes: boolean;
  /** the journal delivered to another WMS before: accept this one (--wms-changed) */
  wmsChanged: boolean;
}

/** What one action works with: the context, the records it may touch, and where it writes. */
interface ResolveScope {
  ctx: AppContext;
  config: ResolvedConfig;
  logger: Logger;
  io: CommandIo;
  request: ResolveRequest;
  /** the held, in-doubt and failed records (and, for mark-sent, the conflicts named by id) */
  open: RecordRow[];
  /** the records the action applies to */
  chosen: RecordRow[];
}

/** A record the WMS refused because it already had it (409, or a refusal naming it as existing). */
function isConflictRejection(r: RecordRow): boolean {
  return r.status === 'rejected' && /\b409\b|already exist|duplicat|j[aá] exist/i.test(r.error ?? '');
}

/** Runs the action under the state lock and an app context; resolves to the exit code. */
export async function runResolve(config: ResolvedConfig, request: ResolveRequest, io: CommandIo): Promise<number> {
  const { action } = request;
  return withApp(
    config,
    `resolve --${action}`,
    async (ctx, logger) => {
      const open = await openRecords(ctx, request);
      const chosen = action === 'list' || request.all ? open : open.filter((r) => request.ids.includes(r.id));
      const missing = request.ids.filter((id) => !open.some((r) => r.id === id));
      if (missing.length) io.stderr.write(`not held, in doubt or failed (ignored): ${missing.join(', ')}\n`);
      const scope: ResolveScope = { ctx, config, logger, io, request, open, chosen };
      if (action === 'list') return listOpen(scope);
      if (action === 'mark-sent') return markSent(scope);
      if (action === 'drop') return dropRecords(scope);
      return sendAgain(scope);
    },
    // only --retry talks to the WMS; listing, marking and dropping work on the journal alone
    { offline: action !== 'retry' && action !== 'send-valid', wmsChanged: request.wmsChanged },
  );
}

/**
 * The held, in-doubt and failed records. --mark-sent also takes, by id, a record rejected because the WMS already
 * had it (a conflict on a create, refused before wmsbridge took a conflict as evidence of delivery), and one
 * delivered earlier whose WMS id was unknown (outcome already-existed, no id): --wms-id gives it.
 */
async function openRecords(ctx: AppContext, request: ResolveRequest): Promise<RecordRow[]> {
  const open = await ctx.journal.listRecords({ statuses: ['held', 'in_doubt', 'failed'] });
  if (request.action !== 'mark-sent') return open;
  for (const id of request.ids) {
    if (open.some((r) => r.id === id)) continue;
    const [r] = await ctx.journal.listRecords({ afterId: id - 1, limit: 1 });
    if (r && r.id === id && (isConflictRejection(r) || (r.status === 'sent' && r.outcome === 'already-existed' && !r.wmsId))) open.push(r);
  }
  return open;
}

/** The result CSVs of the files whose records changed: written again from the journal. */
async function rewriteResults(scope: ResolveScope, rows: RecordRow[]): Promise<void> {
  const { ctx, config, logger, io } = scope;
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
        fileMode: ctx.fileMode,
        now: new Date(),
        logger,
        keyLabel: stockKeyLabeler(ctx.refCache, ctx.journal),
        i18n: createI18n(config.outbox.locale, config.outbox.timeZone),
      });
    } catch (err) {
      io.stderr.write(`the result of ${file.name} could not be written again: ${err instanceof Error ? err.message : String(err)}\n`);
    }
  }
}

async function listOpen({ ctx, io, open }: ResolveScope): Promise<number> {
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

async function markSent(scope: ResolveScope): Promise<number> {
  const { ctx, io, chosen, request } = scope;
  for (const r of chosen) {
    const wmsId = request.wmsId ?? r.wmsId;
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
  await rewriteResults(scope, chosen);
  io.stdout.write(`${chosen.length} record(s) marked delivered\n`);
  return 0;
}

async function dropRecords(scope: ResolveScope): Promise<number> {
  const { ctx, io, chosen, request } = scope;
  for (const r of chosen)
    await ctx.journal.settle(r.id, {
      status: 'rejected',
      outcome: 'rejected',
      error: `dropped by an operator${request.reason ? `: ${request.reason}` : ''}`,
    });
  await rewriteResults(scope, chosen);
  io.stdout.write(`${chosen.length} record(s) dropped\n`);
  return 0;
}

/** The files of `fileIds` as the send loop takes them, in-doubt records resent (a person asked for it). */
async function filesToSend(scope: ResolveScope, fileIds: number[]): Promise<Parameters<typeof pushFiles>[0]['files']> {
  const { ctx, config } = scope;
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
  return files;
}

/** --retry and --send-valid: the records back in the queue and sent now. */
async function sendAgain(scope: ResolveScope): Promise<number> {
  const { ctx, config, logger, io, chosen, request } = scope;
  const toSend = request.action === 'send-valid' ? await decideSendValid(ctx, chosen, request.yes, io) : chosen;
  if (request.action === 'send-valid' && toSend.length === 0) return 1;
  const n = await ctx.journal.requeue(toSend.map((r) => r.id));
  const fileIds = [...new Set(toSend.map((r) => r.fileId))];
  const files = await filesToSend(scope, fileIds);
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
  await rewriteResults(scope, chosen);
  const stillOpen = (after.held ?? 0) + (after.failed ?? 0) + (after.in_doubt ?? 0) + (after.rejected ?? 0) - (before.rejected ?? 0);
  io.stdout.write(`${n} record(s) requeued; sent now: ${(after.sent ?? 0) - (before.sent ?? 0)}; still open: ${stillOpen}\n`);
  if (pushed.wmsUnavailable) {
    io.stdout.write(`the WMS was unavailable (${pushed.wmsUnavailable.lastError}): ${after.pending ?? 0} record(s) wait, pending, for the next run\n`);
    return 75;
  }
  // a retry that ends with records refused (new rejects) is not a success either
  return stillOpen > 0 ? 1 : 0;
}
