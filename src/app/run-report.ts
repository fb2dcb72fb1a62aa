/**
 * Phase 6 of a run: the summary, the exit code, the report (HTML, CSV, JSON, XLSX in outbox/reports),
 * retention, and the one line the command prints.
 */
import { hostname } from 'node:os';
import type { AppContext } from './context.js';
import { emptyTotals, OUTCOMES, type FileSummary, type Outcome, type RunSummary } from '../outbox/types.js';
import { createI18n, type I18n } from '../i18n/index.js';
import { writeRunReport } from '../outbox/report.js';
import { runVerdict, withExitCode } from '../outbox/verdict.js';
import { VERSION } from '../shared/version.js';
import { errorMessage } from '../shared/errors.js';
import type { WmsClientStats } from '../wms/client-types.js';
import type { FileFigures } from './finish-file.js';
import { applyRetention } from './retention.js';
import { listWaitingForWms, type RunOptions, type RunState, type Working } from './run-state.js';

export interface RunResult {
  exitCode: number;
  summary: RunSummary;
  report: { html: string; csv: string; json: string } | null;
  /** one line for the end of the command's output, in the outbox locale (what people read) */
  line: string;
  /** the same line in English, for the log (logs stay English for operators) */
  logLine: string;
}

export { exitCodeOf, INTERRUPT_EXIT_CODES, type ExitFacts } from '../outbox/verdict.js';

export async function report(run: RunState): Promise<RunResult> {
  const { ctx, opts, log, problems } = run;
  const { journal, config } = ctx;
  const finished = new Date();
  const summary = buildSummary({
    runId: run.runId,
    opts,
    ctx,
    started: run.started,
    finished,
    working: run.working,
    timeline: run.timeline,
    wmsAtStart: run.wmsAtStart,
  });
  if (!opts.dryRun) {
    const webhooks = await webhooksSinceLastReport(journal);
    if (webhooks.length) summary.webhooks = webhooks;
  }
  const attention = OUTCOMES.filter((o) => o === 'rejected' || o === 'failed' || o === 'held' || o === 'in-doubt').reduce(
    (n, o) => n + (summary.totals[o] ?? 0),
    0,
  );
  // records left for a person by this run or an earlier one (held, in doubt, failed): the nightly job keeps
  // saying so (exit 1) until someone runs `wmsbridge resolve`
  const waitingHeld = opts.dryRun ? 0 : (await listWaitingForWms(journal)).length;
  const open = opts.dryRun ? 0 : (await countOpen(journal)) - waitingHeld;
  if (open > 0) summary.openRecords = open;
  if (run.helped) summary.helped = run.helped;
  if (opts.refused?.length) summary.skipped = opts.refused.map((r) => ({ channel: r.channel, name: r.name, reason: r.reason, kind: r.kind }));
  const outage = await describeOutage(run, summary, waitingHeld);
  const interruptedBy = opts.signal?.aborted ? String(opts.signal.reason) : undefined;
  // one verdict for every surface: the exit code, the log's line, the report's status and first screen, the workbook
  let verdict = runVerdict({
    attention,
    open,
    // an entry that may be data but is refused needs a person; a file no mapping claims, or a folder, is only named
    refusedData: (opts.refused ?? []).filter((r) => r.kind !== 'no-mapping' && r.kind !== 'folder').length,
    fileErrors: run.working.filter((w) => w.error).length,
    problems: problems.length,
    // no-change is a warning, unless the channel asks for attention (a lot typo must stop the night)
    noChangeAttention: run.working.some((w) => w.channel.noChange === 'attention' && (w.figures?.outcomes['no-change'] ?? 0) > 0),
    outage,
    fatal: run.fatal !== null,
    configProblems: opts.problems?.length ?? 0,
    interruptedBy,
    ...(interruptedBy && !opts.dryRun ? await notSentYet(run) : {}),
    empty: summary.totals.files === 0 && summary.totals.records === 0,
  });
  summary.verdict = verdict;
  summary.exitCode = verdict.exitCode;
  let written: RunResult['report'] = null;
  try {
    written = await writeRunReport(config.outboxDir, summary, {
      csvFormat: { ...config.outbox.csv, timeZone: config.outbox.csv.timeZone ?? config.outbox.timeZone },
      timeZone: config.outbox.timeZone,
      locale: config.outbox.locale,
      fileMode: run.ctx.fileMode,
      ...(run.workbook ? { xlsx: run.workbook.write } : {}),
    });
  } catch (err) {
    problems.push(`report: ${errorMessage(err)}`);
    log.error({ err }, 'could not write the run report');
    summary.verdict = verdict = withExitCode(verdict, Math.max(verdict.exitCode, 1));
    summary.exitCode = verdict.exitCode;
  }
  for (const p of problems) log.warn(p);
  if (!opts.dryRun) {
    try {
      await applyRetention({ config, journal, logger: log, signal: opts.signal });
    } catch (err) {
      log.warn({ err: errorMessage(err) }, 'retention could not run');
    }
  }
  const line = summaryLine(summary, written?.html ?? null, problems.length, createI18n(config.outbox.locale, config.outbox.timeZone));
  const logLine = summaryLine(summary, written?.html ?? null, problems.length, createI18n('en', config.outbox.timeZone));
  return { exitCode: verdict.exitCode, summary, report: written, line, logLine };
}

/** An interrupted run: the records not sent yet (pending: the next run sends them) and the files not read to their end. */
async function notSentYet(run: RunState): Promise<{ notSent: number; unreadFiles: number }> {
  const pending = await run.ctx.journal.countRecords({ statuses: ['pending', 'sending'] });
  const unreadFiles = run.working.filter((w) => w.row.status === 'claimed' && !w.error && !w.waitingForWms).length;
  return { notSent: (pending.pending ?? 0) + (pending.sending ?? 0), unreadFiles };
}

/** The log's fields of a run's outcome (verdict.ts), beside its summary line: the same verdict as its report. */
export function verdictFields(result: RunResult, exitCode = result.exitCode): Record<string, unknown> {
  const v = result.summary.verdict;
  return { exitCode, outcome: v?.kind, ...(v?.notSent !== undefined ? { notSent: v.notSent } : {}) };
}

/**
 * The WMS was unavailable: what was not sent waits for the next run. An outage is what leaves work for the
 * next run: sends that were answered by dropped connections (in doubt, for a person) open the circuit too,
 * but leave nothing waiting, and stay exit 1. true when work waits (exit 75).
 */
async function describeOutage(run: RunState, summary: RunSummary, waitingHeld: number): Promise<boolean> {
  const downSince = run.pushed?.wmsUnavailable?.since ?? run.wmsDownSince;
  if (!downSince || run.opts.dryRun) return false;
  const pending = (await run.ctx.journal.countRecords({ statuses: ['pending'] })).pending ?? 0;
  const waitingFiles = run.working.filter((w) => w.waitingForWms).length;
  if (pending + waitingHeld + waitingFiles === 0) return false;
  summary.wmsUnavailable = {
    since: downSince,
    waitingRecords: pending + waitingHeld,
    waitingFiles,
    lastError: run.pushed?.wmsUnavailable?.lastError ?? run.working.find((w) => w.waitingForWms)?.waitingForWms ?? '',
  };
  // the report's one line for the outage (outbox language)
  summary.outage = { waiting: summary.wmsUnavailable.waitingRecords, since: downSince, cause: summary.wmsUnavailable.lastError, code: 'E_WMS_UNAVAILABLE' };
  return true;
}

/** One file's line of the summary: its status (done, partial, error, duplicate), figures and where it went. */
function fileSummary(w: Working, opts: RunOptions): FileSummary {
  const f = w.figures;
  const status: FileSummary['status'] =
    w.row.status === 'duplicate'
      ? 'duplicate'
      : w.error
        ? 'error'
        : // an interrupted run leaves a file unread (claimed) or with records not sent yet: the next run goes on
          !opts.dryRun && (w.row.status === 'claimed' || (f && (f.outcomes.skipped ?? 0) > 0))
          ? 'partial'
          : 'done';
  return {
    channel: w.channel.name,
    name: w.row.name,
    status,
    mapping: w.mapping?.name ?? null,
    target: w.mapping?.target ?? null,
    rows: w.rows || f?.records || 0,
    outcomes: f?.outcomes ?? {},
    ...(f?.resultFile ? { resultFile: f.resultFile } : {}),
    ...(f?.rejectsFile ? { rejectsFile: f.rejectsFile } : {}),
    ...(w.errorPath ? { archivedTo: w.errorPath } : {}),
    ...(w.error
      ? { error: w.error }
      : w.duplicateOf
        ? { error: `same content as ${w.duplicateOf}: skipped (channel duplicates: skip; set duplicates: process, or run with --force, to send it again)` }
        : {}),
    ...(w.finishedMs ? { durationMs: Math.round(w.finishedMs - w.startedMs) } : {}),
    ...(f?.earlier ? { earlier: f.earlier } : {}),
    ...(f?.unsent ? { unsent: f.unsent } : {}),
  };
}

/** The WMS's figures of this run: the client's counters since the run started. */
function wmsFigures(ctx: AppContext, s0: WmsClientStats): RunSummary['wms'] {
  const now = ctx.client.stats();
  const latencySumMs = now.latencySumMs - s0.latencySumMs;
  const answered = now.latencyCounts.reduce((x, y) => x + y, 0) - s0.latencyCounts.reduce((x, y) => x + y, 0);
  return {
    url: ctx.wmsUrl,
    sandbox: ctx.sandbox !== null,
    requests: now.requests - s0.requests,
    retries: now.retries - s0.retries,
    refreshes: now.refreshes - s0.refreshes,
    failures: now.failures - s0.failures,
    ...(answered > 0 ? { meanLatencyMs: Math.round((latencySumMs / answered) * 10) / 10 } : {}),
  };
}

function buildSummary(a: {
  runId: string;
  opts: RunOptions;
  ctx: AppContext;
  started: Date;
  finished: Date;
  working: Working[];
  timeline: RunSummary['timeline'];
  wmsAtStart: WmsClientStats;
}): RunSummary {
  const totals = emptyTotals();
  const files: FileSummary[] = [];
  const resources = new Map<string, Partial<Record<Outcome, number>>>();
  const reasons: FileFigures['reasons'] = new Map();
  const attention: RunSummary['attention'] = [];
  for (const w of a.working) {
    const f = w.figures;
    files.push(fileSummary(w, a.opts));
    if (!f) continue;
    totals.records += f.records;
    for (const [o, n] of Object.entries(f.outcomes)) totals[o as Outcome] += n ?? 0;
    for (const [t, outs] of f.resources) {
      let r = resources.get(t);
      if (!r) resources.set(t, (r = {}));
      for (const [o, n] of Object.entries(outs)) r[o as Outcome] = (r[o as Outcome] ?? 0) + (n ?? 0);
    }
    for (const [k, v] of f.reasons) {
      const r = reasons.get(k);
      if (r) r.count += v.count;
      else reasons.set(k, { ...v });
    }
    for (const item of f.attention) if (attention.length < 1000) attention.push(item);
  }
  totals.files = files.length;
  return {
    runId: a.runId,
    command: a.opts.command,
    dryRun: a.opts.dryRun ?? false,
    startedAt: a.started.toISOString(),
    finishedAt: a.finished.toISOString(),
    durationMs: a.finished.getTime() - a.started.getTime(),
    exitCode: 0,
    host: hostname(),
    version: VERSION,
    wms: wmsFigures(a.ctx, a.wmsAtStart),
    totals,
    files,
    resources: [...resources].map(([target, outcomes]) => ({ target, outcomes })),
    errorReasons: [...reasons]
      .map(([, v]) => ({
        reason: `${v.outcome}: ${v.text}`,
        count: v.count,
        example: v.example,
        outcome: v.outcome,
        ...(v.code ? { code: v.code, params: v.params ?? {} } : {}),
      }))
      .sort((x, y) => y.count - x.count),
    timeline: a.timeline,
    attention,
  };
}

const WEBHOOK_REPORT_KEY = 'report:last-webhook-id';

/**
 * Webhooks the WMS sent since the previous report, by kind, and how many of them concern something
 * wmsbridge sent (linked to the record, so to its file and line in the webhook outbox files).
 */
export async function webhooksSinceLastReport(journal: AppContext['journal']): Promise<NonNullable<RunSummary['webhooks']>> {
  const last = Number((await journal.getMeta(WEBHOOK_REPORT_KEY)) ?? '0');
  const byKind = new Map<string, { count: number; linked: number }>();
  let maxId = last;
  for (;;) {
    const events = await journal.listWebhookEvents({ afterId: maxId, limit: 1000 });
    for (const e of events) {
      const k = byKind.get(e.kind) ?? { count: 0, linked: 0 };
      k.count++;
      if (e.recordId !== null) k.linked++;
      byKind.set(e.kind, k);
      maxId = e.id;
    }
    if (events.length < 1000) break;
  }
  if (maxId > last) await journal.setMeta(WEBHOOK_REPORT_KEY, String(maxId));
  return [...byKind].map(([kind, v]) => ({ kind, ...v }));
}

async function countOpen(journal: AppContext['journal']): Promise<number> {
  const c = await journal.countRecords({ statuses: ['held', 'in_doubt', 'failed'] });
  return (c.held ?? 0) + (c.in_doubt ?? 0) + (c.failed ?? 0);
}

/** The one line `run` prints at the end, in the outbox locale (default pt-BR). */
export function summaryLine(s: RunSummary, reportPath: string | null, problems: number, i18n: I18n = createI18n()): string {
  const { t } = i18n;
  const parts = OUTCOMES.filter((o) => (s.totals[o] ?? 0) > 0).map((o) => `${i18n.num(s.totals[o])} ${i18n.outcome(o).toLowerCase()}`);
  const errors = s.files.filter((f) => f.status === 'error').length;
  const dups = s.files.filter((f) => f.status === 'duplicate').length;
  const head = `${t('line.files', { n: s.totals.files })}${errors ? t('line.inError', { n: errors }) : ''}${dups ? t('line.duplicate', { n: dups }) : ''}, ${t('line.records', { n: s.totals.records })}`;
  const dupFiles = s.files.filter((f) => f.status === 'duplicate');
  const skipped = dupFiles.length
    ? t('line.skipped', {
        n: dupFiles.length,
        list: `${dupFiles
          .slice(0, 3)
          .map((f) => f.name)
          .join(', ')}${dupFiles.length > 3 ? ', ...' : ''}`,
      })
    : '';
  const tail = reportPath ? t('line.report', { path: reportPath }) : '';
  const open = s.openRecords ? t('line.open', { n: s.openRecords }) : '';
  const helped = s.helped ? t('line.helped', { n: s.helped.records, files: s.helped.files.length }) : '';
  // sub-folders (an attachments folder) are listed in the report, not counted in the line
  const notTakenN = (s.skipped ?? []).filter((x) => x.kind !== 'folder').length;
  const notTaken = notTakenN ? t('line.notTaken', { n: notTakenN }) : '';
  const outage = s.outage ? t('line.outage', { n: s.outage.waiting, since: s.outage.since ? i18n.dateTime(s.outage.since) : '?' }) : '';
  const interrupted = s.verdict?.kind === 'interrupted' ? t('line.interrupted', { signal: s.verdict.signal }) : '';
  return `${s.dryRun ? t('line.dry') : ''}${interrupted}${head}${parts.length ? `: ${parts.join(', ')}` : ''}${skipped}${outage}${open}${notTaken}${helped}${problems ? t('line.problems', { n: problems }) : ''}${t('line.in', { s: i18n.num(Math.round(s.durationMs / 100) / 10, 1) })}${tail}`;
}
