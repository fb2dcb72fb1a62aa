/**
 * The run report: what the customer sees after every run.
 *
 *   <outbox>/reports/<YYYY-MM-DD_HHmmss>-<runId>/report.html    self-contained page (inline CSS + SVG)
 *                                                 summary.json   the RunSummary as is
 *                                                 summary.csv    headline figures (metric;value)
 *                                                 files.csv      one line per file
 *                                                 resources.csv  one line per target resource
 *                                                 reasons.csv    error reasons ranked
 *                                                 attention.csv  records that need someone to look
 *   <outbox>/reports/latest.html                                 a copy of the newest report.html
 *
 * latest.html is a copy, not a symlink (symlinks break on SMB shares), rendered for its own folder so
 * its relative links work too. Every file is written atomically. Every string from the summary is
 * escaped: file names and error messages are hostile input.
 */
import { basename, dirname, isAbsolute, join, relative, resolve, sep } from 'node:path';
import { mkdir, readdir } from 'node:fs/promises';
import { modeOption, writeFileAtomic, outboxError } from './atomic.js';
import { createCsvWriter, resolveCsvFormat, type CsvFormatOptions } from './csv.js';
import { ATTENTION_OUTCOMES, OUTCOMES, type Outcome, type RunSummary } from './types.js';
import { createI18n, isOutageReason, type I18n, type Locale } from '../i18n/index.js';
import type { Reason } from '../shared/reason.js';
import { wallClockText } from '../shared/time.js';
import { writeXlsx, type XlsxColumn, type XlsxWrite } from './xlsx.js';

export interface RunReportOptions {
  /** IANA zone for the dates shown (and the folder name). @default the machine's time zone */
  timeZone?: string;
  /** CSV format of the summary CSVs. @default the Excel pt-BR defaults of csv.ts */
  csvFormat?: CsvFormatOptions;
  /** most files drawn in chart 1 (the table lists all). @default 30 */
  maxChartFiles?: number;
  /** most attention rows listed. @default 500 */
  maxAttention?: number;
  /** language of the page, the CSV headers and the workbook. @default 'pt-BR' */
  locale?: Locale;
  /** the run's report folder, when the page is written elsewhere (latest.html) */
  reportDir?: string;
  /** mode of the files written (outbox.fileMode). @default DEFAULT_OUTBOX_FILE_MODE */
  fileMode?: number;
  /** how the workbook is written. @default writeXlsx, in this thread (a run passes its workbook thread: xlsx-worker.ts) */
  xlsx?: XlsxWrite;
}

export interface RunReportPaths {
  html: string;
  csv: string;
  json: string;
  /** report.xlsx: the same tables as the CSVs, with typed cells */
  xlsx: string;
  /** the report folder */
  dir: string;
  latest: string;
}

// ---------------------------------------------------------------------------------------------------
// small pure helpers

/** HTML-escapes text for element content and quoted attribute values. */
export function escapeHtml(value: unknown): string {
  return String(value ?? '')
    .replace(/&/g, '&amp;')
    .replace(/</g, '&lt;')
    .replace(/>/g, '&gt;')
    .replace(/"/g, '&quot;')
    .replace(/'/g, '&#39;');
}

/** Colour-blind safe palette (Okabe-Ito based); labels come from the outbox locale (i18n outcome.*). */
export const OUTCOME_STYLE: Record<Outcome, { color: string; label: string }> = {
  created: { color: '#009E73', label: 'Created' },
  updated: { color: '#0072B2', label: 'Updated' },
  unchanged: { color: '#9AA5B1', label: 'Unchanged' },
  'already-existed': { color: '#56B4E9', label: 'Already existed' },
  deleted: { color: '#CC79A7', label: 'Deleted' },
  'no-change': { color: '#B8A9C9', label: 'No change' },
  skipped: { color: '#D9DEE4', label: 'Skipped' },
  excluded: { color: '#C7B299', label: 'Excluded' },
  'not-selected': { color: '#EDEFF2', label: 'Not selected' },
  rejected: { color: '#D55E00', label: 'Rejected' },
  failed: { color: '#8B1E2D', label: 'Failed' },
  held: { color: '#E69F00', label: 'Held' },
  'in-doubt': { color: '#F0E442', label: 'In doubt' },
};

function tzName(timeZone: string | undefined): string {
  return timeZone ?? Intl.DateTimeFormat().resolvedOptions().timeZone ?? 'UTC';
}

/** The i18n of a report: options.locale (default pt-BR) and options.timeZone (default the machine's). */
export function reportI18n(options: Pick<RunReportOptions, 'locale' | 'timeZone'> = {}): I18n {
  return createI18n(options.locale ?? 'pt-BR', tzName(options.timeZone));
}

function dateParts(iso: string, timeZone: string | undefined): Record<string, string> | undefined {
  const t = new Date(iso).getTime();
  return Number.isNaN(t) ? undefined : wallClockText(t, tzName(timeZone));
}

/** dd/MM/yyyy HH:mm:ss followed by the time zone name, e.g. "29/07/2025 11:56:56 America/Sao_Paulo". */
export function formatReportDate(iso: string, timeZone?: string): string {
  const p = dateParts(iso, timeZone);
  if (!p) return iso;
  return `${p.day}/${p.month}/${p.year} ${p.hour}:${p.minute}:${p.second} ${tzName(timeZone)}`;
}

/** A run id made safe for a folder name. */
export function safeName(s: string): string {
  const cleaned = s.replace(/[^A-Za-z0-9._-]+/g, '_').replace(/^\.+/, '_').slice(0, 80);
  return cleaned || 'run';
}

/** reports/<YYYY-MM-DD_HHmmss>-<runId> folder name for a summary (in the report's time zone). */
export function reportFolderName(summary: Pick<RunSummary, 'startedAt' | 'runId'>, timeZone?: string): string {
  const p = dateParts(summary.startedAt, timeZone);
  const stamp = p ? `${p.year}-${p.month}-${p.day}_${p.hour}${p.minute}${p.second}` : 'undated';
  return `${stamp}-${safeName(summary.runId)}`;
}

/** The URL with any user:password removed (credentials never reach the report). */
export function stripCredentials(url: string): string {
  try {
    const u = new URL(url);
    u.username = '';
    u.password = '';
    for (const k of [...u.searchParams.keys()]) {
      if (/token|secret|key|password|signature/i.test(k)) u.searchParams.set(k, 'REDACTED');
    }
    return u.toString();
  } catch {
    return url.replace(/\/\/[^/@]*@/, '//');
  }
}

/**
 * A relative href from the folder holding the HTML page to an outbox file (given relative to the outbox
 * or absolute). Each segment is percent-encoded, so a hostile name cannot become a scheme or break out
 * of the attribute; links stay relative so they work when the outbox is opened from a share.
 */
export function relativeHref(pageDir: string, outboxDir: string, file: string): string {
  const target = isAbsolute(file) ? file : resolve(outboxDir, file);
  const rel = relative(pageDir, target);
  return rel
    .split(sep)
    .map((seg) => (seg === '..' ? '..' : encodeURIComponent(seg)))
    .join('/');
}

/** Records that need someone to look at them. */
export function attentionCount(summary: RunSummary): number {
  return ATTENTION_OUTCOMES.reduce((n, o) => n + (summary.totals[o] ?? 0), 0);
}

type ReasonGroup = RunSummary['errorReasons'][number];

function groupReason(r: ReasonGroup): Reason | undefined {
  return r.code ? { code: r.code, ...(r.params ? { params: r.params } : {}) } : undefined;
}

/** records that failed (or were not sent) because the WMS was unavailable: they go with the next run */
function isOutageGroup(r: ReasonGroup): boolean {
  return r.outcome !== 'in-doubt' && isOutageReason(groupReason(r));
}

/** Records that wait because the WMS was unavailable (outage facts of the run, else outage-coded reasons). */
export function outageWaiting(summary: RunSummary): number {
  if (summary.outage) return summary.outage.waiting;
  const failed = summary.errorReasons.filter(isOutageGroup).reduce((n, r) => n + r.count, 0);
  // the records that failed for it, and those the run could not even try (left pending)
  return failed > 0 ? Math.min(failed, summary.totals.failed + summary.totals['in-doubt']) + summary.totals.skipped : 0;
}

/** The run's exit status in words, in the report's locale. */
export function statusInWords(summary: RunSummary, i18n: I18n = reportI18n()): { text: string; tone: 'ok' | 'warn' | 'bad' } {
  const { t } = i18n;
  const need = attentionCount(summary);
  const fileErrors = summary.files.filter((f) => f.status === 'error').length;
  const dups = summary.files.filter((f) => f.status === 'duplicate').length;
  const prefix = summary.dryRun ? t('status.prefixDry') : '';
  // the run's verdict (verdict.ts) first: an interrupted run is never "delivered", whatever it settled
  const v = summary.verdict;
  if (v?.kind === 'interrupted') return { text: `${prefix}${t('status.interrupted', { signal: v.signal, n: notSentOf(summary) })}`, tone: 'warn' };
  const outage = outageWaiting(summary);
  if (outage > 0 && outage >= need) return { text: `${prefix}${t('status.outage', { n: outage })}`, tone: 'warn' };
  if (need > 0) {
    const files = fileErrors > 0 ? t('status.andFilesFailed', { n: fileErrors }) : '';
    return { text: `${prefix}${t('status.need', { n: need })}${files}`, tone: 'warn' };
  }
  if (fileErrors > 0) return { text: `${prefix}${t('status.filesFailed', { n: fileErrors })}`, tone: 'bad' };
  if (summary.exitCode !== 0) return { text: `${prefix}${t('status.runFailed', { code: summary.exitCode })}`, tone: 'bad' };
  if (dups > 0 && dups === summary.files.length && summary.totals.records === 0) return { text: `${prefix}${t('status.allDuplicates', { n: dups })}`, tone: 'ok' };
  if (summary.totals.records === 0 && summary.totals.files === 0) return { text: `${prefix}${t('status.nothing')}`, tone: 'ok' };
  // records not sent yet are never "delivered" (a summary without a verdict: an older run's JSON)
  if (!summary.dryRun && (summary.totals.skipped > 0 || (v && v.kind !== 'delivered'))) return { text: t('status.notSentYet', { n: notSentOf(summary) }), tone: 'warn' };
  return { text: summary.dryRun ? t('status.dryAllValid') : t('status.allDelivered'), tone: 'ok' };
}

/** Records not sent yet: the journal's pending records when the run was interrupted, else this run's unsent ones. */
function notSentOf(summary: RunSummary): number {
  return summary.verdict?.notSent ?? summary.totals.skipped;
}

/** An interrupted run: the signal, what was not sent, and what to do (run again; watch sends them when it starts again). */
function interruptedCause(summary: RunSummary, i18n: I18n): Cause | null {
  const v = summary.verdict;
  if (v?.kind !== 'interrupted') return null;
  const { t } = i18n;
  const n = notSentOf(summary);
  const files = v.unreadFiles ? t('cause.interruptedFiles', { n: v.unreadFiles }) : '';
  const next = t(summary.command === 'watch' ? 'cause.interruptedNextWatch' : 'cause.interruptedNextRun');
  return { kind: 'interrupted', tone: 'warn', text: `${t('cause.interrupted', { signal: v.signal, n })}${files} ${next}`, count: n };
}

export interface Cause {
  kind: 'interrupted' | 'outage' | 'auth' | 'rejected' | 'held' | 'in-doubt' | 'failed' | 'file-error' | 'duplicates' | 'open' | 'ok';
  tone: 'ok' | 'warn' | 'bad';
  /** one sentence in the report's locale (plain text) */
  text: string;
  count: number;
  example?: { file: string; line: number; value?: string };
}

/**
 * "What happened and what do I do": one sentence per cause, most urgent first. An outage is ONE line
 * (however many records and reasons it produced) with how many records wait for the next run.
 */
export function reportCauses(summary: RunSummary, i18n: I18n = reportI18n()): Cause[] {
  const { t } = i18n;
  const causes: Cause[] = [];
  const reasons = [...summary.errorReasons].sort((a, b) => b.count - a.count);
  const outageReasons = reasons.filter(isOutageGroup);
  const interrupted = interruptedCause(summary, i18n);
  if (interrupted) causes.push(interrupted);
  const waiting = outageWaiting(summary);
  if (waiting > 0) {
    const top = outageReasons[0];
    let what = top ? i18n.reason(groupReason(top), top.reason) : i18n.reason({ code: summary.outage?.code ?? 'E_WMS_NETWORK' });
    if (summary.outage?.since) what += `, ${t('cause.outageSince', { since: i18n.dateTime(summary.outage.since) })}`;
    causes.push({ kind: 'outage', tone: 'warn', text: t('cause.outage', { n: waiting, what }), count: waiting });
  }
  const auth = reasons.filter((r) => r.code === 'E_WMS_AUTH');
  const authCount = auth.reduce((n, r) => n + r.count, 0);
  if (authCount > 0) causes.push({ kind: 'auth', tone: 'bad', text: t('cause.auth', { n: authCount }), count: authCount });
  for (const r of reasons) {
    const reason = groupReason(r);
    if (isOutageGroup(r) || r.code === 'E_WMS_AUTH') continue;
    void reason;
    const outcome = r.outcome ?? ((/^([a-z-]+):/.exec(r.reason)?.[1] ?? 'rejected') as Outcome);
    const text = i18n.reason(reason, r.reason.replace(/^[a-z-]+: /, ''));
    const kind = outcome === 'held' ? 'held' : outcome === 'in-doubt' ? 'in-doubt' : outcome === 'failed' ? 'failed' : 'rejected';
    const key = kind === 'held' ? 'cause.held' : kind === 'in-doubt' ? 'cause.inDoubt' : kind === 'failed' ? 'cause.failed' : 'cause.data';
    // the example shows its value too (the group's reason is that of its first record)
    const value = reason?.params?.['value'];
    const example = r.example ? { ...r.example, ...(value !== undefined && value !== '' ? { value: String(value) } : {}) } : undefined;
    causes.push({ kind, tone: kind === 'rejected' ? 'bad' : 'warn', text: t(key, { n: r.count, reason: text }), count: r.count, ...(example ? { example } : {}) });
  }
  const errors = summary.files.filter((f) => f.status === 'error');
  if (errors.length === 1) {
    causes.push({ kind: 'file-error', tone: 'bad', text: t('cause.fileError', { n: 1, file: errors[0]!.name, error: errors[0]!.error ?? '' }), count: 1 });
  } else if (errors.length > 1) {
    causes.push({ kind: 'file-error', tone: 'bad', text: t('cause.fileError', { n: errors.length }), count: errors.length });
  }
  const dups = summary.files.filter((f) => f.status === 'duplicate').length;
  if (dups > 0) causes.push({ kind: 'duplicates', tone: 'ok', text: t('cause.duplicates', { n: dups }), count: dups });
  const need = attentionCount(summary);
  if (summary.openRecords && summary.openRecords > need) causes.push({ kind: 'open', tone: 'warn', text: t('cause.open', { n: summary.openRecords }), count: summary.openRecords });
  if (causes.length === 0 && summary.totals.records > 0 && summary.exitCode === 0 && summary.totals.skipped === 0) causes.push({ kind: 'ok', tone: 'ok', text: t('cause.allGood'), count: 0 });
  return causes;
}

function outcomeSum(o: Partial<Record<Outcome, number>>): number {
  return OUTCOMES.reduce((n, k) => n + (o[k] ?? 0), 0);
}

// ---------------------------------------------------------------------------------------------------
// charts (inline SVG, no script)

/**
 * An axis of record counts: ticks 0..max in at most 5 steps of a whole, round size (1, 2, 2.5, 5 x 10^k, never
 * 2.5 itself), so no tick reads "2,5" or "3,75" records.
 */
export function countTicks(v: number): number[] {
  const top = Number.isFinite(v) ? Math.max(1, Math.ceil(v)) : 1;
  for (let p = 1; ; p *= 10) {
    const step = [1, 2, 2.5, 5].map((m) => m * p).find((st) => Number.isInteger(st) && Math.ceil(top / st) <= 5);
    if (step !== undefined) return Array.from({ length: Math.ceil(top / step) + 1 }, (_, i) => i * step);
  }
}

function ellipsize(s: string, max: number): string {
  return s.length <= max ? s : `${s.slice(0, max - 1)}…`;
}

/** keeps the start and the end (extension, date suffix) of a long file name */
function ellipsizeMiddle(s: string, max: number): string {
  if (s.length <= max) return s;
  const tail = Math.floor((max - 1) / 2);
  return `${s.slice(0, max - 1 - tail)}…${s.slice(s.length - tail)}`;
}

/** what an outcome means, in the reader's language (a tooltip and the totals' legend) */
function outcomeHelp(o: Outcome, i18n: I18n): string {
  return i18n.t(`outcomeHelp.${o}`);
}

/** "Já estavam iguais" -> "já estavam iguais" inside a sentence (an acronym such as WMS stays as it is) */
function lowerFirst(s: string): string {
  return s.charAt(0).toLowerCase() + s.slice(1);
}

function legend(outcomes: readonly Outcome[], i18n: I18n): string {
  return `<ul class="legend">${outcomes
    .map((o) => `<li title="${escapeHtml(outcomeHelp(o, i18n))}"><span class="sw" style="background:${OUTCOME_STYLE[o].color}"></span>${escapeHtml(i18n.outcome(o))}</li>`)
    .join('')}</ul>`;
}

/** Chart 1: stacked horizontal bars of outcomes per file; files in error (moved to error/) have a marked row. */
export function renderOutcomesChart(summary: RunSummary, maxFiles = 30, i18n: I18n = reportI18n()): string {
  const files = summary.files.filter((f) => outcomeSum(f.outcomes) > 0 || f.status === 'error');
  if (files.length === 0) return `<p class="empty">${escapeHtml(i18n.t('report.noRecordsSettled'))}</p>`;
  const shown = files.slice(0, maxFiles);
  const used = OUTCOMES.filter((o) => shown.some((f) => (f.outcomes[o] ?? 0) > 0));
  const labelW = 290;
  const width = 860;
  const barW = width - labelW - 70;
  const rowH = 26;
  const top = 8;
  const height = top + shown.length * rowH + 26;
  const ticks = countTicks(Math.max(1, ...shown.map((f) => outcomeSum(f.outcomes))));
  const max = ticks[ticks.length - 1]!;
  const parts: string[] = [];
  for (const tick of ticks) {
    const x = Number((labelW + (barW * tick) / max).toFixed(2));
    parts.push(`<line x1="${x}" y1="${top - 4}" x2="${x}" y2="${height - 22}" class="grid"/>`);
    parts.push(`<text x="${x}" y="${height - 6}" class="tick" text-anchor="middle">${escapeHtml(i18n.num(tick))}</text>`);
  }
  shown.forEach((f, i) => {
    const y = top + i * rowH;
    const total = outcomeSum(f.outcomes);
    parts.push(
      `<text x="${labelW - 8}" y="${y + 16}" class="lbl" text-anchor="end"><title>${escapeHtml(f.name)}</title>${escapeHtml(ellipsizeMiddle(f.name, 32))}</text>`,
    );
    if (f.status === 'error' && total === 0) {
      const label = i18n.t('report.fileInError');
      parts.push(
        `<rect x="${labelW}" y="${y + 4}" width="${barW}" height="${rowH - 9}" class="errbar"><title>${escapeHtml(`${f.name}: ${label}${f.error ? `: ${f.error}` : ''}`)}</title></rect>`,
      );
      parts.push(`<text x="${labelW + 8}" y="${y + 16}" class="errlbl">${escapeHtml(label)}</text>`);
      return;
    }
    let x = labelW;
    for (const o of OUTCOMES) {
      const n = f.outcomes[o] ?? 0;
      if (n <= 0) continue;
      const w = (barW * n) / max;
      parts.push(
        `<rect x="${x.toFixed(2)}" y="${y + 4}" width="${Math.max(w, 0.8).toFixed(2)}" height="${rowH - 9}" fill="${OUTCOME_STYLE[o].color}"><title>${escapeHtml(`${f.name}: ${i18n.num(n)} ${lowerFirst(i18n.outcome(o))}`)}</title></rect>`,
      );
      x += w;
    }
    parts.push(`<text x="${(x + 6).toFixed(2)}" y="${y + 16}" class="val">${escapeHtml(i18n.num(total))}</text>`);
  });
  const more = files.length > shown.length ? `<p class="note">${escapeHtml(i18n.t('report.showingFiles', { shown: shown.length, total: files.length }))}</p>` : '';
  const title = i18n.t('report.outcomesPerFile');
  return `<svg class="chart" viewBox="0 0 ${width} ${height}" width="100%" role="img" aria-label="${escapeHtml(title)}"><title>${escapeHtml(title)}</title>${parts.join('')}</svg>${legend(used, i18n)}${more}`;
}

/** Chart 2: cumulative records settled over time (line + area). */
export function renderTimelineChart(summary: RunSummary, i18n: I18n = reportI18n()): string {
  const pts = [...summary.timeline].filter((p) => Number.isFinite(p.atMs) && Number.isFinite(p.settled)).sort((a, b) => a.atMs - b.atMs);
  if (pts.length === 0) return `<p class="empty">${escapeHtml(i18n.t('report.noTimeline'))}</p>`;
  if (pts[0]!.atMs > 0) pts.unshift({ atMs: 0, settled: 0 });
  const width = 860;
  const height = 240;
  const left = 64;
  const right = 44;
  const top = 12;
  const bottom = 36;
  const maxX = Math.max(pts[pts.length - 1]!.atMs, summary.durationMs || 0, 1);
  const yTicks = countTicks(Math.max(...pts.map((p) => p.settled)));
  const maxY = yTicks[yTicks.length - 1]!;
  const sx = (v: number): number => left + ((width - left - right) * v) / maxX;
  const sy = (v: number): number => height - bottom - ((height - top - bottom) * v) / maxY;
  const parts: string[] = [];
  for (const yv of yTicks) {
    parts.push(`<line x1="${left}" y1="${sy(yv).toFixed(1)}" x2="${width - right}" y2="${sy(yv).toFixed(1)}" class="grid"/>`);
    parts.push(`<text x="${left - 8}" y="${(sy(yv) + 4).toFixed(1)}" class="tick" text-anchor="end">${escapeHtml(i18n.num(yv))}</text>`);
  }
  for (let i = 0; i <= 4; i++) {
    const xv = (maxX * i) / 4;
    parts.push(`<text x="${sx(xv).toFixed(1)}" y="${height - bottom + 18}" class="tick" text-anchor="middle">${escapeHtml(i18n.duration(xv))}</text>`);
  }
  const line = pts.map((p) => `${sx(p.atMs).toFixed(1)},${sy(p.settled).toFixed(1)}`).join(' ');
  const area = `${sx(pts[0]!.atMs).toFixed(1)},${sy(0).toFixed(1)} ${line} ${sx(pts[pts.length - 1]!.atMs).toFixed(1)},${sy(0).toFixed(1)}`;
  parts.push(`<polygon points="${area}" class="area"/>`);
  parts.push(`<polyline points="${line}" class="line"/>`);
  const last = pts[pts.length - 1]!;
  parts.push(`<circle cx="${sx(last.atMs).toFixed(1)}" cy="${sy(last.settled).toFixed(1)}" r="4" class="dot"/>`);
  parts.push(`<text x="${width - right}" y="${height - 4}" class="axis" text-anchor="end">${escapeHtml(i18n.t('report.timeSinceStart'))}</text>`);
  const title = i18n.t('report.settledOverTime');
  return `<svg class="chart" viewBox="0 0 ${width} ${height}" width="100%" role="img" aria-label="${escapeHtml(`${title}: ${i18n.num(last.settled)} / ${i18n.duration(last.atMs)}`)}"><title>${escapeHtml(title)}</title>${parts.join('')}</svg>`;
}

/** A reason group's text in the locale ("Recusados: o campo peso não é um número"). */
export function reasonGroupText(r: ReasonGroup, i18n: I18n): string {
  const outcome = r.outcome ?? (/^([a-z-]+):/.exec(r.reason)?.[1] as Outcome | undefined);
  const text = i18n.reason(groupReason(r), r.reason.replace(/^[a-z-]+: /, ''));
  return outcome ? `${i18n.outcome(outcome)}: ${text}` : text;
}

/** Chart 3: error reasons ranked (horizontal bars). */
export function renderReasonsChart(summary: RunSummary, maxReasons = 10, i18n: I18n = reportI18n()): string {
  const reasons = [...summary.errorReasons].sort((a, b) => b.count - a.count);
  if (reasons.length === 0) return `<p class="empty ok">${escapeHtml(i18n.t('report.noErrors'))}</p>`;
  const shown = reasons.slice(0, maxReasons);
  // each reason on its own line above its bar: a long reason is never cut at the left edge ("ecusados")
  const width = 860;
  const barW = width - 60;
  const rowH = 40;
  const height = shown.length * rowH + 4;
  const max = Math.max(...shown.map((r) => r.count), 1);
  const parts: string[] = [];
  shown.forEach((r, i) => {
    const y = 4 + i * rowH;
    const w = Math.max((barW * r.count) / max, 1);
    const label = reasonGroupText(r, i18n);
    parts.push(`<text x="0" y="${y + 12}" class="lbl"><title>${escapeHtml(label)}</title>${escapeHtml(ellipsize(label, 110))}</text>`);
    parts.push(`<rect x="0" y="${y + 18}" width="${w.toFixed(2)}" height="14" class="bad"><title>${escapeHtml(`${label}: ${i18n.num(r.count)}`)}</title></rect>`);
    parts.push(`<text x="${(w + 6).toFixed(2)}" y="${y + 30}" class="val">${escapeHtml(i18n.num(r.count))}</text>`);
  });
  const more = reasons.length > shown.length ? `<p class="note">${escapeHtml(i18n.t('report.topReasons', { shown: shown.length, total: reasons.length }))}</p>` : '';
  const title = i18n.t('report.errorReasons');
  return `<svg class="chart" viewBox="0 0 ${width} ${height}" width="100%" role="img" aria-label="${escapeHtml(title)}"><title>${escapeHtml(title)}</title>${parts.join('')}</svg>${more}`;
}

// ---------------------------------------------------------------------------------------------------
// HTML page

const CSS = `
:root{--ink:#1c2430;--muted:#5b6775;--line:#dfe3e8;--bg:#f5f7fa;--card:#fff;--accent:#0b4f8a;--ok:#0f7b55;--warn:#9a5b00;--bad:#a3162b}
*{box-sizing:border-box}
html{-webkit-print-color-adjust:exact;print-color-adjust:exact}
body{margin:0;background:var(--bg);color:var(--ink);font:14px/1.45 "Segoe UI",system-ui,-apple-system,Roboto,"Helvetica Neue",Arial,sans-serif}
.wrap{max-width:1180px;margin:0 auto;padding:24px 28px 48px}
header.top{background:linear-gradient(135deg,#0b3a66,#0b4f8a);color:#fff;padding:22px 28px 20px}
header.top .wrap{padding:0;display:flex;flex-wrap:wrap;align-items:flex-end;justify-content:space-between;gap:16px}
.brand{font-size:12px;letter-spacing:.12em;text-transform:uppercase;opacity:.8}
h1{margin:4px 0 6px;font-size:24px;font-weight:600}
.meta{font-size:13px;opacity:.92}
.meta span{margin-right:14px;white-space:nowrap}
.status{display:inline-block;padding:8px 16px;border-radius:999px;font-weight:600;font-size:15px;background:#fff}
.status.ok{color:var(--ok)}.status.warn{color:var(--warn)}.status.bad{color:var(--bad)}
.status::before{content:"";display:inline-block;width:10px;height:10px;border-radius:50%;margin-right:8px;vertical-align:1px;background:currentColor}
.badge{display:inline-block;font-size:11px;font-weight:600;padding:2px 8px;border-radius:4px;background:rgba(255,255,255,.18);margin-left:6px;vertical-align:3px}
h2{font-size:17px;margin:30px 0 10px;font-weight:600}
.cards{margin-top:20px}
.cardgrid{display:grid;grid-template-columns:repeat(auto-fill,minmax(128px,1fr));gap:10px}
.help{margin:8px 0 0;font-size:12px;color:var(--muted)}
.help summary{cursor:pointer}
.help dl{display:grid;grid-template-columns:repeat(auto-fill,minmax(320px,1fr));gap:4px 18px;margin:8px 0 0}
.help dt{display:inline;font-weight:600;color:var(--ink)}.help dt::after{content:": "}.help dd{display:inline;margin:0}
.card{background:var(--card);border:1px solid var(--line);border-radius:8px;padding:10px 12px;border-top:4px solid var(--c,#c5ccd4)}
h1 .mono{font-size:21px}
.card .n{font-size:24px;font-weight:600;font-variant-numeric:tabular-nums}
.card .k{color:var(--muted);font-size:12px;text-transform:uppercase;letter-spacing:.04em}
.card.zero .n{color:#a0a9b4}
.panel{background:var(--card);border:1px solid var(--line);border-radius:8px;padding:14px 16px;margin-bottom:16px;break-inside:avoid}
.panel h3{margin:0 0 8px;font-size:14px;color:var(--muted);font-weight:600;text-transform:uppercase;letter-spacing:.04em}
.chart{display:block;max-width:100%;height:auto}
.chart .grid{stroke:#e6e9ed;stroke-width:1}
.chart .tick{font-size:11px;fill:#6b7785}
.chart .axis{font-size:11px;fill:#6b7785;font-style:italic}
.chart .lbl{font-size:12px;fill:#1c2430}
.chart .val{font-size:11px;fill:#3d4753;font-weight:600}
.chart .line{fill:none;stroke:#0072B2;stroke-width:2.5;stroke-linejoin:round}
.chart .area{fill:#0072B2;fill-opacity:.12}
.chart .dot{fill:#0072B2}
.chart .bad{fill:#D55E00}
.chart .errbar{fill:#fdf0f2;stroke:#a3162b;stroke-dasharray:4 3}
.chart .errlbl{fill:#a3162b;font-size:12px;font-weight:600}
.first{background:var(--card);border:1px solid var(--line);border-radius:8px;padding:4px 18px 10px;margin:0 0 18px}
.causes{margin:6px 0 10px;padding-left:0;list-style:none}
.cause{padding:6px 10px;margin:4px 0;border-left:4px solid var(--muted);background:#fafbfc}
.cause.ok{border-color:var(--ok)}.cause.warn{border-color:#E69F00}.cause.bad{border-color:var(--bad)}
.fix{margin:6px 0;padding-left:18px}.fix li{margin:3px 0}
.legend{list-style:none;padding:0;margin:8px 0 0;display:flex;flex-wrap:wrap;gap:6px 16px;font-size:12px;color:var(--muted)}
.legend .sw{display:inline-block;width:12px;height:12px;border-radius:2px;margin-right:6px;vertical-align:-1px;border:1px solid rgba(0,0,0,.15)}
table{width:100%;border-collapse:collapse;background:var(--card);font-size:13px}
.tbl{border:1px solid var(--line);border-radius:8px;overflow:auto;margin-bottom:16px}
th,td{text-align:left;padding:7px 10px;border-bottom:1px solid var(--line);vertical-align:top}
th{background:#eef1f5;font-weight:600;font-size:12px;color:#3d4753;white-space:nowrap}
table.resources th.num{white-space:normal}
tbody tr:last-child td{border-bottom:0}
tbody tr:nth-child(even) td{background:#fafbfc}
td.num,th.num{text-align:right;font-variant-numeric:tabular-nums;white-space:nowrap}
td.z{color:#b3bac3}
td.mono,.mono{font-family:ui-monospace,"Cascadia Mono",Consolas,"DejaVu Sans Mono",monospace;font-size:12px}
td.err{color:var(--bad);max-width:420px;overflow-wrap:anywhere}
td.name{overflow-wrap:anywhere;min-width:190px;max-width:320px}
td.outs{min-width:230px}
td.outs .err{color:var(--bad);margin-top:4px;overflow-wrap:anywhere}
td.files{white-space:nowrap}
.chip{display:inline-block;white-space:nowrap;margin:0 10px 2px 0;font-size:12px}
.mini{-webkit-print-color-adjust:exact;display:flex;height:6px;border-radius:3px;overflow:hidden;background:#eef1f5;margin:3px 0 6px;max-width:260px}
.mini span{display:block;height:100%}
.pill{display:inline-block;padding:1px 8px;border-radius:999px;font-size:11px;font-weight:600;border:1px solid}
.pill.done{color:var(--ok);border-color:#9bd3bd;background:#effaf5}
.pill.partial{color:var(--warn);border-color:#f0cf96;background:#fff8ec}
.pill.error{color:var(--bad);border-color:#eba7b1;background:#fdf0f2}
.pill.duplicate{color:#5b6775;border-color:#cfd5dc;background:#f3f5f7}
.oc{display:inline-block;min-width:12px;height:12px;border-radius:2px;margin-right:6px;vertical-align:-1px;border:1px solid rgba(0,0,0,.15)}
a{color:var(--accent)}
.empty{color:var(--muted);margin:6px 0}
.empty.ok{color:var(--ok)}
.note{color:var(--muted);font-size:12px;margin:6px 0 0}
.grid2{display:grid;grid-template-columns:1fr;gap:0}
footer{color:var(--muted);font-size:12px;margin-top:28px;border-top:1px solid var(--line);padding-top:10px}
@media print{body{background:#fff;font-size:11px}header.top{background:#fff!important;color:#000;border-bottom:2px solid #000;padding:0 0 8px}
.status{border:1px solid #000}.badge{border:1px solid #000}.wrap{padding:10px 0}.panel,.tbl,.card{break-inside:avoid}a{color:#000;text-decoration:none}
h2{break-after:avoid}}
`;

function cell(n: number | undefined, i18n: I18n, cls = 'num'): string {
  const v = n ?? 0;
  return `<td class="${cls}${v === 0 ? ' z' : ''}">${v === 0 ? '–' : escapeHtml(i18n.num(v))}</td>`;
}

function link(href: string | undefined, text: string, title?: string): string {
  if (!href) return '<span class="z">–</span>';
  return `<a href="${escapeHtml(href)}"${title ? ` title="${escapeHtml(title)}"` : ''}>${escapeHtml(text)}</a>`;
}

/** "file:line" as a link to the file's result CSV when there is one */
function whereText(file: string, line: number): string {
  return `${file}:${line}`;
}

type Href = (f: string | undefined) => string | undefined;

/** A table's column heading, in the reader's language. */
const colHead = (i18n: I18n, k: string): string => escapeHtml(i18n.t(`report.col.${k}`));

/** What happened and what to do: one sentence per cause (or the status when there is none). */
function renderCauses(summary: RunSummary, i18n: I18n, status: { text: string }): string {
  const { t } = i18n;
  const causes = reportCauses(summary, i18n);
  return causes.length
    ? `<ul class="causes">${causes
        .map(
          (c) =>
            `<li class="cause ${c.tone}" data-kind="${escapeHtml(c.kind)}">${escapeHtml(c.text)}${c.example ? ` <span class="note">${escapeHtml(t(c.example.value !== undefined ? 'cause.exampleValue' : 'cause.example', { where: whereText(c.example.file, c.example.line), value: c.example.value }))}</span>` : ''}</li>`,
        )
        .join('')}</ul>`
    : `<p class="empty">${escapeHtml(status.text)}</p>`;
}

/** The files to fix and drop again, with links to their rejects file (or where the original went). */
function renderFixList(toFix: RunSummary['files'], i18n: I18n, href: Href): string {
  const { t } = i18n;
  return toFix.length
    ? `<p class="note">${escapeHtml(t('fix.help'))}</p><ul class="fix">${toFix
        .map((f) => {
          const rows = (f.outcomes.rejected ?? 0) + (f.outcomes.held ?? 0);
          const target = f.rejectsFile ?? f.archivedTo;
          const label = f.rejectsFile ? basename(f.rejectsFile) : f.archivedTo ? basename(f.archivedTo) : f.name;
          const what = f.status === 'error' ? escapeHtml(f.error ?? t('fileStatus.error')) : escapeHtml(t('fix.rows', { n: rows }));
          return `<li><span class="mono">${escapeHtml(f.channel)}/${escapeHtml(f.name)}</span> → ${link(href(target), label, target)} <span class="note">${what}</span></li>`;
        })
        .join('')}</ul>`
    : '';
}

/**
 * The totals: records, files and one card per outcome, each card with what it means as its tooltip, and the
 * same meanings as a legend under the cards (two outcomes with close names are told apart there).
 */
function renderCards(tot: RunSummary['totals'], i18n: I18n): string {
  const { t } = i18n;
  const outcomeLabel = (o: Outcome): string => i18n.outcome(o);
  const help = `<details class="help"><summary>${escapeHtml(t('report.outcomesHelp'))}</summary><dl>${OUTCOMES.map(
    (o) => `<div><dt><span class="oc" style="background:${OUTCOME_STYLE[o].color}"></span>${escapeHtml(outcomeLabel(o))}</dt><dd>${escapeHtml(outcomeHelp(o, i18n))}</dd></div>`,
  ).join('')}</dl></details>`;
  const cards = [
    `<div class="card" style="--c:#0b4f8a"><div class="n">${escapeHtml(i18n.num(tot.records))}</div><div class="k">${escapeHtml(t('report.records'))}</div></div>`,
    `<div class="card" style="--c:#5b6775"><div class="n">${escapeHtml(i18n.num(tot.files))}</div><div class="k">${escapeHtml(t('report.files'))}</div></div>`,
    ...OUTCOMES.map(
      (o) =>
        `<div class="card${(tot[o] ?? 0) === 0 ? ' zero' : ''}" style="--c:${OUTCOME_STYLE[o].color}" title="${escapeHtml(`${outcomeLabel(o)}: ${outcomeHelp(o, i18n)}`)}"><div class="n">${escapeHtml(i18n.num(tot[o] ?? 0))}</div><div class="k">${escapeHtml(outcomeLabel(o))}</div></div>`,
    ),
  ].join('');
  return `<div class="cardgrid">${cards}</div>${help}`;
}

/** One row per file: status, mapping, rows, outcomes (chips and a bar), time, links. */
function renderFilesTable(summary: RunSummary, i18n: I18n, href: Href): string {
  const { t } = i18n;
  const outcomeLabel = (o: Outcome): string => i18n.outcome(o);
  const c = (k: string): string => colHead(i18n, k);
  const fileRows = summary.files
    .map((f) => {
      const total = outcomeSum(f.outcomes);
      const chips = OUTCOMES.filter((o) => (f.outcomes[o] ?? 0) > 0)
        .map((o) => `<span class="chip"><span class="oc" style="background:${OUTCOME_STYLE[o].color}"></span>${escapeHtml(i18n.num(f.outcomes[o] ?? 0))} ${escapeHtml(lowerFirst(outcomeLabel(o)))}</span>`)
        .join('');
      const mini = total
        ? `<div class="mini" aria-hidden="true">${OUTCOMES.filter((o) => (f.outcomes[o] ?? 0) > 0)
            .map((o) => `<span style="width:${(((f.outcomes[o] ?? 0) / total) * 100).toFixed(2)}%;background:${OUTCOME_STYLE[o].color}"></span>`)
            .join('')}</div>`
        : '';
      const result = link(href(f.resultFile), t('report.link.result'), f.resultFile ? basename(f.resultFile) : undefined);
      const rejects = link(href(f.rejectsFile), t('report.link.rejects'), f.rejectsFile ? basename(f.rejectsFile) : undefined);
      const what = f.mapping || f.target ? `${escapeHtml(f.mapping ?? '–')}<div class="note">${escapeHtml(f.target ?? '')}</div>` : '<span class="z">–</span>';
      const statusLabel = i18n.has(`fileStatus.${f.status}`) ? t(`fileStatus.${f.status}`) : f.status;
      return `<tr><td>${escapeHtml(f.channel)}</td><td class="name mono">${escapeHtml(f.name)}${f.archivedTo ? `<div class="note">${escapeHtml(`→ ${f.archivedTo}`)}</div>` : ''}</td><td><span class="pill ${escapeHtml(f.status)}">${escapeHtml(statusLabel)}</span></td><td>${what}</td>${cell(f.rows, i18n)}<td class="outs">${mini}${chips || '<span class="z">–</span>'}${f.error ? `<div class="err">${escapeHtml(f.error)}</div>` : ''}</td><td class="num">${f.durationMs === undefined ? '–' : escapeHtml(i18n.duration(f.durationMs))}</td><td class="files">${result}${f.rejectsFile ? ` · ${rejects}` : ''}</td></tr>`;
    })
    .join('');
  return summary.files.length
    ? `<div class="tbl"><table class="files"><thead><tr><th>${c('channel')}</th><th>${c('file')}</th><th>${c('status')}</th><th>${c('mappingResource')}</th><th class="num">${c('rows')}</th><th>${c('outcomes')}</th><th class="num">${c('time')}</th><th>${c('resultRejects')}</th></tr></thead><tbody>${fileRows}</tbody></table></div>`
    : `<p class="empty">${escapeHtml(t('report.noFiles'))}</p>`;
}

/** Outcomes per resource. */
function renderResourcesTable(summary: RunSummary, i18n: I18n): string {
  const { t } = i18n;
  const c = (k: string): string => colHead(i18n, k);
  // only the outcomes some resource had (eleven columns do not fit a laptop's screen); resources.csv has them all
  // rows not sent (not selected, excluded) are not records of a resource: they have their own section
  const used = OUTCOMES.filter((o) => !UNSENT_ROW_OUTCOMES.has(o) && summary.resources.some((r) => (r.outcomes[o] ?? 0) > 0));
  const outcomeHeads = used.map((o) => `<th class="num" title="${escapeHtml(outcomeHelp(o, i18n))}"><span class="oc" style="background:${OUTCOME_STYLE[o].color}"></span>${escapeHtml(i18n.outcome(o))}</th>`).join('');
  const resRows = summary.resources
    .map((r) => `<tr><td>${escapeHtml(r.target)}</td>${cell(outcomeSum(r.outcomes), i18n)}${used.map((o) => cell(r.outcomes[o], i18n)).join('')}</tr>`)
    .join('');
  return summary.resources.length
    ? `<div class="tbl"><table class="resources"><thead><tr><th>${c('resource')}</th><th class="num">${c('records')}</th>${outcomeHeads}</tr></thead><tbody>${resRows}</tbody></table></div>`
    : `<p class="empty">${escapeHtml(t('report.noRecordsSent'))}</p>`;
}

/** The records that need attention (at most `maxAttention`), each with where it came from and why. */
function renderAttention(summary: RunSummary, i18n: I18n, maxAttention: number | undefined): string {
  const { t } = i18n;
  const c = (k: string): string => colHead(i18n, k);
  const outcomeLabel = (o: Outcome): string => i18n.outcome(o);
  const need = attentionCount(summary);
  const maxAtt = maxAttention ?? 500;
  const att = summary.attention.slice(0, maxAtt);
  const attRows = att
    .map(
      (a) =>
        `<tr><td class="mono name">${escapeHtml(whereText(a.file, a.line))}</td><td>${escapeHtml(a.target)}</td><td class="mono">${escapeHtml(a.key)}</td><td><span class="oc" style="background:${OUTCOME_STYLE[a.outcome]?.color ?? '#999'}"></span>${escapeHtml(outcomeLabel(a.outcome))}</td><td class="err">${escapeHtml(i18n.reason(a.code ? { code: a.code, ...(a.params ? { params: a.params } : {}) } : undefined, a.reason, true))}</td></tr>`,
    )
    .join('');
  const attNote = need > att.length ? `<p class="note">${escapeHtml(t('report.listingAttention', { shown: att.length, total: need }))}</p>` : '';
  return att.length
    ? `<div class="tbl"><table><thead><tr><th>${c('where')}</th><th>${c('resource')}</th><th>${c('key')}</th><th>${c('outcome')}</th><th>${c('reason')}</th></tr></thead><tbody>${attRows}</tbody></table></div>${attNote}`
    : need > 0
      ? `<p class="empty">${escapeHtml(t('report.needSeeResults', { n: need }))}</p>`
      : `<p class="empty ok">${escapeHtml(t('report.nothingNeedsAttention'))}</p>`;
}

/** Error reasons by count, each with an example. */
function renderReasonsTable(summary: RunSummary, i18n: I18n): string {
  const c = (k: string): string => colHead(i18n, k);
  return summary.errorReasons.length
    ? `<div class="tbl"><table><thead><tr><th>${c('reason')}</th><th class="num">${c('count')}</th><th>${c('example')}</th></tr></thead><tbody>${[...summary.errorReasons]
        .sort((a, b) => b.count - a.count)
        .map(
          (r) =>
            `<tr><td class="err">${escapeHtml(reasonGroupText(r, i18n))}</td>${cell(r.count, i18n)}<td class="mono">${r.example ? escapeHtml(whereText(r.example.file, r.example.line)) : '–'}</td></tr>`,
        )
        .join('')}</tbody></table></div>`
    : '';
}

/** Why an inbox entry was not taken, in the report's language (by its kind; the English reason for an unknown kind). */
function notTakenText(s: NonNullable<RunSummary['skipped']>[number], i18n: I18n): string {
  const key = `notTaken.${s.kind ?? ''}`;
  return s.kind !== undefined && i18n.has(key) ? i18n.t(key, { channel: s.channel }) : s.reason;
}

/** Webhooks received, inbox entries not taken, records sent for other instances (sections shown only when there are some). */
function renderSideSections(summary: RunSummary, i18n: I18n): { webhooks: string; skipped: string; helped: string } {
  const { t } = i18n;
  const c = (k: string): string => colHead(i18n, k);
  const webhooks = summary.webhooks?.length
    ? `<h2>${escapeHtml(t('report.webhooks'))}</h2><div class="tbl"><table><thead><tr><th>${c('kind')}</th><th class="num">${c('received')}</th><th class="num">${c('linked')}</th></tr></thead><tbody>${summary.webhooks
        .map((w) => `<tr><td>${escapeHtml(w.kind)}</td>${cell(w.count, i18n)}${cell(w.linked, i18n)}</tr>`)
        .join('')}</tbody></table></div>`
    : '';

  const skipped = summary.skipped?.length
    ? `<h2>${escapeHtml(t('report.notTaken'))}</h2><div class="tbl"><table><thead><tr><th>${c('channel')}</th><th>${c('entry')}</th><th>${c('reason')}</th></tr></thead><tbody>${summary.skipped
        .map((s) => `<tr><td>${escapeHtml(s.channel)}</td><td class="mono">${escapeHtml(s.name)}</td><td>${escapeHtml(notTakenText(s, i18n))}</td></tr>`)
        .join('')}</tbody></table></div>`
    : '';
  const helped = summary.helped?.files.length
    ? `<h2>${escapeHtml(t('report.helped'))}</h2><p>${escapeHtml(t('report.helpedNote'))}</p><div class="tbl"><table><thead><tr><th>${c('channel')}</th><th>${c('file')}</th><th>${c('instance')}</th><th class="num">${c('records')}</th></tr></thead><tbody>${summary.helped.files
        .map((h) => `<tr><td>${escapeHtml(h.channel)}</td><td class="mono">${escapeHtml(h.name)}</td><td class="mono">${escapeHtml(h.owner)}</td>${cell(h.records, i18n)}</tr>`)
        .join('')}</tbody></table></div>`
    : '';
  return { webhooks, skipped: `${renderUnsent(summary, i18n)}${skipped}`, helped };
}

/** Outcomes of rows a file read and did not send: listed by file in their own section, never a resource's column. */
const UNSENT_ROW_OUTCOMES: ReadonlySet<Outcome> = new Set<Outcome>(['not-selected', 'excluded']);

/** Rows the files read and did not send (not selected by any mapping, excluded by a skip rule), by file and reason. */
function renderUnsent(summary: RunSummary, i18n: I18n): string {
  const { t } = i18n;
  const c = (k: string): string => colHead(i18n, k);
  const rows = summary.files.flatMap((f) =>
    (f.unsent ?? []).map(
      (u) =>
        `<tr><td class="mono name">${escapeHtml(f.name)}</td><td><span class="oc" style="background:${OUTCOME_STYLE[u.outcome].color}"></span>${escapeHtml(i18n.outcome(u.outcome))}</td><td>${escapeHtml(u.outcome === 'excluded' ? `${u.reason ?? ''} (${u.mapping ?? ''})` : t('report.notSelectedReason'))}</td>${cell(u.count, i18n)}<td class="mono">${escapeHtml(u.lines)}</td></tr>`,
    ),
  );
  return rows.length
    ? `<h2>${escapeHtml(t('report.unsent'))}</h2><p>${escapeHtml(t('report.unsentNote'))}</p><div class="tbl"><table><thead><tr><th>${c('file')}</th><th>${c('outcome')}</th><th>${c('reason')}</th><th class="num">${c('count')}</th><th>${c('lines')}</th></tr></thead><tbody>${rows.join('')}</tbody></table></div>`
    : '';
}

/**
 * The HTML page. `pageDir` is the folder the page is written to and `outboxDir` the outbox root: file
 * links are made relative between them. First screen: status, then "what happened and what to do" (one
 * sentence per cause), then the files to fix and drop again with links; then totals, charts and tables.
 */
export function renderReportHtml(summary: RunSummary, pageDir: string, outboxDir: string, options: RunReportOptions = {}): string {
  const i18n = reportI18n(options);
  const { t } = i18n;
  const tz = tzName(options.timeZone);
  const status = statusInWords(summary, i18n);
  const href = (f: string | undefined): string | undefined => (f ? relativeHref(pageDir, outboxDir, f) : undefined);
  // latest.html (in reports/) links to the workbook of its run's folder
  const xlsxHref = relativeHref(pageDir, outboxDir, join(options.reportDir ?? pageDir, 'report.xlsx'));
  const causeList = renderCauses(summary, i18n, status);
  const toFix = summary.files.filter((f) => f.rejectsFile || f.status === 'error');
  const fixList = renderFixList(toFix, i18n, href);
  const cards = renderCards(summary.totals, i18n);
  const filesTable = renderFilesTable(summary, i18n, href);
  const resTable = renderResourcesTable(summary, i18n);
  const attTable = renderAttention(summary, i18n, options.maxAttention);
  const reasonsTable = renderReasonsTable(summary, i18n);
  const { webhooks, skipped, helped } = renderSideSections(summary, i18n);

  const w = summary.wms;
  const title = t('report.title', { runId: summary.runId });
  const when = (iso: string): string => `${i18n.dateTime(iso, true)} ${tz}`;
  const wmsCalls = t('report.wmsCalls', { requests: w.requests, retries: w.retries, refreshes: w.refreshes, failures: w.failures }) + (w.meanLatencyMs === undefined ? '' : t('report.wmsLatency', { ms: i18n.num(w.meanLatencyMs, 1) }));
  return `<!DOCTYPE html>
<html lang="${escapeHtml(i18n.locale)}">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="generator" content="wmsbridge ${escapeHtml(summary.version)}">
<title>${escapeHtml(title)}</title>
<style>${CSS}</style>
</head>
<body>
<header class="top"><div class="wrap">
<div>
<div class="brand">${escapeHtml(t('report.brand'))}</div>
<h1>${escapeHtml(t('report.run'))} <span class="mono">${escapeHtml(summary.runId)}</span>${summary.dryRun ? `<span class="badge">${escapeHtml(t('report.dryRunBadge'))}</span>` : ''}${w.sandbox ? `<span class="badge">${escapeHtml(t('report.sandboxBadge'))}</span>` : ''}</h1>
<div class="meta"><span>${escapeHtml(t('report.started'))} ${escapeHtml(when(summary.startedAt))}</span><span>${escapeHtml(t('report.finished'))} ${escapeHtml(when(summary.finishedAt))}</span><span>${escapeHtml(t('report.duration'))} ${escapeHtml(i18n.duration(summary.durationMs))}</span></div>
<div class="meta"><span>${escapeHtml(t('report.command'))} ${escapeHtml(summary.command)}</span><span>WMS ${escapeHtml(stripCredentials(w.url))}</span><span>${escapeHtml(t('report.host'))} ${escapeHtml(summary.host)}</span><span>wmsbridge ${escapeHtml(summary.version)}</span><span>${escapeHtml(t('report.exitCode'))} ${escapeHtml(summary.exitCode)}</span></div>
</div>
<div class="status ${status.tone}" role="status">${escapeHtml(status.text)}</div>
</div></header>
<main class="wrap">
<section class="first" aria-label="${escapeHtml(t('cause.title'))}">
<h2>${escapeHtml(t('cause.title'))}</h2>
${causeList}
${toFix.length ? `<h2>${escapeHtml(t('fix.title'))}</h2>${fixList}` : ''}
<p class="note"><a href="${escapeHtml(xlsxHref)}">${escapeHtml(t('report.link.xlsx'))}</a></p>
</section>
<section class="cards" aria-label="${escapeHtml(t('report.totals'))}">${cards}</section>
<p class="note">${escapeHtml(wmsCalls)}.</p>

<h2>${escapeHtml(t('report.outcomesPerFile'))}</h2>
<div class="panel">${renderOutcomesChart(summary, options.maxChartFiles ?? 30, i18n)}</div>

<h2>${escapeHtml(t('report.errorReasons'))}</h2>
<div class="panel">${renderReasonsChart(summary, 10, i18n)}</div>
${reasonsTable}

<h2>${escapeHtml(t('report.needAttention'))}</h2>
${attTable}

<h2>${escapeHtml(t('report.files'))}</h2>
${filesTable}

<h2>${escapeHtml(t('report.progress'))}</h2>
<div class="panel"><h3>${escapeHtml(t('report.settledOverTime'))}</h3>${renderTimelineChart(summary, i18n)}</div>

<h2>${escapeHtml(t('report.resources'))}</h2>
${resTable}
${skipped}
${webhooks}
${helped}
<footer>${escapeHtml(t('report.footer', { version: summary.version, host: summary.host, runId: summary.runId }))}</footer>
</main>
</body>
</html>
`;
}

// ---------------------------------------------------------------------------------------------------
// writing

const REPORT_DIR = /^\d{4}-\d{2}-\d{2}_\d{6}-/;

async function isNewestReport(reportsDir: string, folder: string): Promise<boolean> {
  const names = await readdir(reportsDir, { withFileTypes: true }).catch(() => []);
  return names.every((d) => !d.isDirectory() || !REPORT_DIR.test(d.name) || d.name <= folder);
}

async function writeCsvFile(
  path: string,
  columns: string[],
  rows: Array<Record<string, unknown>>,
  format: CsvFormatOptions | undefined,
  mode: number | undefined,
): Promise<void> {
  const w = createCsvWriter(path, { columns, format: format ?? {}, ...modeOption(mode) });
  try {
    for (const r of rows) if (!w.write(r)) await w.drain();
    await w.close();
  } catch (err) {
    await w.abort();
    throw err;
  }
}

/**
 * Writes the run report into `<outboxDir>/reports/<YYYY-MM-DD_HHmmss>-<runId>/` and refreshes
 * `<outboxDir>/reports/latest.html`. Every file is written atomically. CSV headers, outcome names and
 * reasons are in options.locale; report.xlsx holds the same tables with typed cells.
 */
export async function writeRunReport(outboxDir: string, summary: RunSummary, options: RunReportOptions = {}): Promise<RunReportPaths> {
  const reportsDir = join(outboxDir, 'reports');
  const dir = join(reportsDir, reportFolderName(summary, options.timeZone));
  try {
    await mkdir(dir, { recursive: true });
  } catch (err) {
    throw outboxError(join(dir, 'report.html'), err, 'creating the folder for');
  }
  resolveCsvFormat(options.csvFormat); // fail early on a bad format
  const paths: RunReportPaths = {
    dir,
    html: join(dir, 'report.html'),
    csv: join(dir, 'summary.csv'),
    json: join(dir, 'summary.json'),
    xlsx: join(dir, 'report.xlsx'),
    latest: join(reportsDir, 'latest.html'),
  };
  const fmt = options.csvFormat;
  const i18n = reportI18n(options);
  const { t } = i18n;
  const tables = reportTables(summary, i18n);
  const sheet = (name: string, table: Table) => ({ name: t(`sheet.${name}`), columns: table.columns, rows: table.rows });

  // the workbook first: on the run's workbook thread it is written while this thread writes the rest
  const workbook = (options.xlsx ?? writeXlsx)(
    paths.xlsx,
    [
      sheet('summary', { ...tables.summary, rows: tables.summary.rows.map((r) => ({ ...r, value: r['xlsx'] ?? r['value'] })) }),
      sheet('attention', tables.attention),
      sheet('files', tables.files),
      sheet('resources', tables.resources),
      sheet('reasons', tables.reasons),
      ...(tables.unsent.rows.length ? [sheet('unsent', tables.unsent)] : []),
    ],
    { timeZone: i18n.timeZone, ...modeOption(options.fileMode) },
  );
  workbook.catch(() => undefined); // awaited below, after the other files

  await writeFileAtomic(paths.json, `${JSON.stringify(summary, null, 2)}\n`, modeOption(options.fileMode));

  // started_at / finished_at are shown as dates in the CSV too
  {
    const w = createCsvWriter(paths.csv, { columns: [t('col.metric'), t('col.value')], format: fmt ?? {}, dateColumns: [t('col.value')], ...modeOption(options.fileMode) });
    try {
      for (const r of tables.summary.rows) w.write({ [t('col.metric')]: r['metric'], [t('col.value')]: r['value'] });
      await w.close();
    } catch (err) {
      await w.abort();
      throw err;
    }
  }
  for (const [file, table] of [
    ['files.csv', tables.files],
    ['resources.csv', tables.resources],
    ['reasons.csv', tables.reasons],
    ['unsent.csv', tables.unsent],
    ['attention.csv', tables.attentionCsv],
  ] as const) {
    await writeCsvFile(
      join(dir, file),
      table.columns.map((c) => c.header),
      table.rows.map((r) => Object.fromEntries(table.columns.map((c) => [c.header, r[c.key]]))),
      fmt,
      options.fileMode,
    );
  }

  await writeFileAtomic(paths.html, renderReportHtml(summary, dir, outboxDir, options), modeOption(options.fileMode));
  // latest.html is rendered for its own folder so its relative links resolve from reports/; a rebuilt
  // older report does not replace the newest one (folder names sort by start time)
  if (await isNewestReport(reportsDir, basename(dir))) {
    await writeFileAtomic(paths.latest, renderReportHtml(summary, dirname(paths.latest), outboxDir, { ...options, reportDir: dir }), modeOption(options.fileMode));
  }
  await workbook;
  return paths;
}

interface Table {
  columns: XlsxColumn[];
  rows: Array<Record<string, unknown>>;
}

/** A column of the report's tables (and workbook sheets). */
function col(key: string, header: string, type: XlsxColumn['type']): XlsxColumn {
  return { key, header, type };
}

/** Columns headed by their keys' names in the locale (col.<key>), text unless `types` says otherwise: most of the tables' columns. */
function named<K extends string>(i18n: I18n, keys: readonly K[], types: Partial<Record<K, XlsxColumn['type']>> = {}): XlsxColumn[] {
  return keys.map((key) => col(key, i18n.t(`col.${key}`), types[key] ?? 'text'));
}

/** An outcome as the tables name it: as is in English, else in the report's language. */
function outcomeName(o: string, i18n: I18n): string {
  return i18n.locale === 'en' ? o : i18n.outcome(o);
}

/** The figures of a file or a resource per outcome, one cell an outcome column (outcomeColumn). */
function outcomeCells(outcomes: Partial<Record<Outcome, number>>): Record<string, number> {
  return Object.fromEntries(OUTCOMES.map((o) => [o, outcomes[o] ?? 0]));
}

/** The run's figures, one metric a row. */
function summaryTable(summary: RunSummary, i18n: I18n): Table {
  const { t } = i18n;
  const tot = summary.totals;
  const status = statusInWords(summary, i18n);
  const m = (key: string, value: unknown, xlsx?: unknown): Record<string, unknown> => ({ metric: t(`metric.${key}`), value, ...(xlsx !== undefined ? { xlsx } : {}) });
  const yes = (b: boolean): string => (b ? t('yes') : t('no'));
  const headline: Array<Record<string, unknown>> = [
    m('run_id', summary.runId),
    m('command', summary.command),
    m('dry_run', i18n.locale === 'en' ? summary.dryRun : yes(summary.dryRun)),
    m('started_at', summary.startedAt, new Date(summary.startedAt)),
    m('finished_at', summary.finishedAt, new Date(summary.finishedAt)),
    m('duration_ms', summary.durationMs),
    m('exit_code', summary.exitCode),
    m('status', status.text),
    m('host', summary.host),
    m('version', summary.version),
    m('wms_url', stripCredentials(summary.wms.url)),
    m('wms_sandbox', i18n.locale === 'en' ? summary.wms.sandbox : yes(summary.wms.sandbox)),
    m('wms_requests', summary.wms.requests),
    m('wms_retries', summary.wms.retries),
    m('wms_refreshes', summary.wms.refreshes),
    m('wms_failures', summary.wms.failures),
    m('wms_mean_latency_ms', summary.wms.meanLatencyMs ?? ''),
    m('files', tot.files),
    m('records', tot.records),
    ...OUTCOMES.map((o) => ({ metric: outcomeName(o, i18n), value: tot[o] ?? 0 })),
    m('need_attention', attentionCount(summary)),
    ...(summary.outage ? [m('outage_waiting', summary.outage.waiting)] : []),
  ];
  // metric values mix text and numbers: the workbook keeps each as what it is (the column is "text"
  // typed only for the number format; numbers stay numbers)
  return { columns: named(i18n, ['metric', 'value'], { value: 'auto' }), rows: headline };
}

/** An outcome's column, named in the report's language. */
function outcomeColumn(o: Outcome, i18n: I18n): XlsxColumn {
  return col(o, outcomeName(o, i18n), 'integer');
}

/** One row a file: its status, figures per outcome and where its result, rejects and original went. */
function filesTable(summary: RunSummary, i18n: I18n): Table {
  const { t } = i18n;
  const fileStatus = (s: string): string => (i18n.has(`fileStatus.${s}`) ? t(`fileStatus.${s}`) : s);
  return {
    columns: [
      ...named(i18n, ['channel', 'file', 'status', 'mapping', 'target', 'rows'], { rows: 'integer' }),
      ...OUTCOMES.map((o) => outcomeColumn(o, i18n)),
      ...named(i18n, ['duration_ms', 'result_file', 'rejects_file', 'archived_to', 'error'], { duration_ms: 'integer' }),
    ],
    rows: summary.files.map((f) => ({
      channel: f.channel,
      file: f.name,
      status: i18n.locale === 'en' ? f.status : fileStatus(f.status),
      mapping: f.mapping,
      target: f.target,
      rows: f.rows,
      ...outcomeCells(f.outcomes),
      duration_ms: f.durationMs,
      result_file: f.resultFile,
      rejects_file: f.rejectsFile,
      archived_to: f.archivedTo,
      error: f.error,
    })),
  };
}

/** The records that need a person: the workbook's sheet (with the original cells) and the CSV's (without). */
function attentionTables(summary: RunSummary, i18n: I18n): { attention: Table; attentionCsv: Table } {
  const { t } = i18n;
  const reasonOfItem = (a: RunSummary['attention'][number]): string => i18n.reason(a.code ? { code: a.code, ...(a.params ? { params: a.params } : {}) } : undefined, a.reason, true);
  const maxOriginal = Math.min(40, Math.max(0, ...summary.attention.map((a) => a.original?.length ?? 0)));
  const originalCols = Array.from({ length: maxOriginal }, (_, i) => col(`o${i + 1}`, `${t('col.original')} ${i + 1}`, 'text'));
  const attentionBase = named(i18n, ['file', 'line', 'target', 'key', 'outcome', 'reason'], { line: 'integer' });
  const attentionRows = summary.attention.map((a) => ({
    file: a.file,
    line: a.line,
    target: a.target,
    key: a.key,
    outcome: outcomeName(a.outcome, i18n),
    reason: reasonOfItem(a),
    ...Object.fromEntries((a.original ?? []).slice(0, maxOriginal).map((v, i) => [`o${i + 1}`, v])),
  }));
  return {
    attention: { columns: [...attentionBase, ...originalCols], rows: attentionRows },
    // the CSV keeps one row per record without the original cells (those are in the rejects file and the workbook)
    attentionCsv: { columns: attentionBase, rows: attentionRows },
  };
}

/** The report's tables (CSV and XLSX share them): headers in the locale, typed columns for the workbook. */
export function reportTables(
  summary: RunSummary,
  i18n: I18n,
): { summary: Table; files: Table; resources: Table; reasons: Table; unsent: Table; attention: Table; attentionCsv: Table } {
  return {
    summary: summaryTable(summary, i18n),
    files: filesTable(summary, i18n),
    resources: {
      columns: [...named(i18n, ['target', 'records'], { records: 'integer' }), ...OUTCOMES.map((o) => outcomeColumn(o, i18n))],
      rows: summary.resources.map((r) => ({ target: r.target, records: outcomeSum(r.outcomes), ...outcomeCells(r.outcomes) })),
    },
    reasons: {
      columns: named(i18n, ['reason', 'code', 'count', 'example_file', 'example_line'], { count: 'integer', example_line: 'integer' }),
      rows: [...summary.errorReasons]
        .sort((a, b) => b.count - a.count)
        .map((r) => ({ reason: i18n.locale === 'en' && !r.code ? r.reason : reasonGroupText(r, i18n), code: r.code, count: r.count, example_file: r.example?.file, example_line: r.example?.line })),
    },
    unsent: unsentTable(summary, i18n),
    ...attentionTables(summary, i18n),
  };
}

/**
 * Rows the files read and did not send (not selected by any mapping, excluded by a skip rule), as the HTML report's
 * "Linhas lidas e não enviadas": one row per file, outcome and reason, with the lines (issue 39: the workbook and a
 * CSV list them too, so the accountant who reads only the workbook learns which stock rows were not synchronised).
 */
function unsentTable(summary: RunSummary, i18n: I18n): Table {
  const { t } = i18n;
  return {
    columns: named(i18n, ['file', 'outcome', 'reason', 'mapping', 'count', 'lines'], { count: 'integer' }),
    rows: summary.files.flatMap((f) =>
      (f.unsent ?? []).map((u) => ({
        file: f.name,
        outcome: outcomeName(u.outcome, i18n),
        reason: u.outcome === 'excluded' ? (u.reason ?? '') : t('report.notSelectedReason'),
        mapping: u.mapping ?? '',
        count: u.count,
        lines: u.lines,
      })),
    ),
  };
}
