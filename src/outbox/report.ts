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
import { writeFileAtomic, outboxError } from './atomic.js';
import { createCsvWriter, resolveCsvFormat, type CsvFormatOptions } from './csv.js';
import { ATTENTION_OUTCOMES, OUTCOMES, type Outcome, type RunSummary } from './types.js';

export interface RunReportOptions {
  /** IANA zone for the dates shown (and the folder name). @default the machine's time zone */
  timeZone?: string;
  /** CSV format of the summary CSVs. @default the Excel pt-BR defaults of csv.ts */
  csvFormat?: CsvFormatOptions;
  /** most files drawn in chart 1 (the table lists all). @default 30 */
  maxChartFiles?: number;
  /** most attention rows listed. @default 500 */
  maxAttention?: number;
}

export interface RunReportPaths {
  html: string;
  csv: string;
  json: string;
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

/** Colour-blind safe palette (Okabe-Ito based) with a readable label per outcome. */
export const OUTCOME_STYLE: Record<Outcome, { color: string; label: string }> = {
  created: { color: '#009E73', label: 'Created' },
  updated: { color: '#0072B2', label: 'Updated' },
  unchanged: { color: '#9AA5B1', label: 'Unchanged' },
  deleted: { color: '#CC79A7', label: 'Deleted' },
  skipped: { color: '#D9DEE4', label: 'Skipped' },
  rejected: { color: '#D55E00', label: 'Rejected' },
  failed: { color: '#8B1E2D', label: 'Failed' },
  held: { color: '#E69F00', label: 'Held' },
  'in-doubt': { color: '#F0E442', label: 'In doubt' },
};

function tzName(timeZone: string | undefined): string {
  return timeZone ?? Intl.DateTimeFormat().resolvedOptions().timeZone ?? 'UTC';
}

function dateParts(iso: string, timeZone: string | undefined): Record<string, string> | undefined {
  const d = new Date(iso);
  if (Number.isNaN(d.getTime())) return undefined;
  const dtf = new Intl.DateTimeFormat('en-GB', {
    timeZone: tzName(timeZone),
    year: 'numeric',
    month: '2-digit',
    day: '2-digit',
    hour: '2-digit',
    minute: '2-digit',
    second: '2-digit',
    hourCycle: 'h23',
  });
  const p: Record<string, string> = {};
  for (const part of dtf.formatToParts(d)) p[part.type] = part.value;
  return p;
}

/** dd/MM/yyyy HH:mm:ss followed by the time zone name, e.g. "29/07/2025 11:56:56 America/Sao_Paulo". */
export function formatReportDate(iso: string, timeZone?: string): string {
  const p = dateParts(iso, timeZone);
  if (!p) return iso;
  return `${p.day}/${p.month}/${p.year} ${p.hour}:${p.minute}:${p.second} ${tzName(timeZone)}`;
}

/** "850 ms", "3.4 s", "2 min 05 s", "1 h 02 min" */
export function formatDuration(ms: number): string {
  if (!Number.isFinite(ms) || ms < 0) return '-';
  if (ms < 1000) return `${Math.round(ms)} ms`;
  if (ms < 60_000) return `${(ms / 1000).toFixed(1)} s`;
  const s = Math.round(ms / 1000);
  if (s < 3600) return `${Math.floor(s / 60)} min ${String(s % 60).padStart(2, '0')} s`;
  return `${Math.floor(s / 3600)} h ${String(Math.floor((s % 3600) / 60)).padStart(2, '0')} min`;
}

/** 12 345 with a thin space, readable in every locale */
export function formatCount(n: number): string {
  if (!Number.isFinite(n)) return '-';
  return Math.round(n)
    .toString()
    .replace(/\B(?=(\d{3})+(?!\d))/g, '\u202f');
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

/** The run's exit status in words. */
export function statusInWords(summary: RunSummary): { text: string; tone: 'ok' | 'warn' | 'bad' } {
  const need = attentionCount(summary);
  const fileErrors = summary.files.filter((f) => f.status === 'error').length;
  const prefix = summary.dryRun ? 'Dry run: ' : '';
  if (need > 0) {
    const files = fileErrors > 0 ? `, ${fileErrors} file${fileErrors === 1 ? '' : 's'} failed` : '';
    return { text: `${prefix}${formatCount(need)} record${need === 1 ? ' needs' : 's need'} attention${files}`, tone: 'warn' };
  }
  if (fileErrors > 0) return { text: `${prefix}${fileErrors} file${fileErrors === 1 ? '' : 's'} could not be processed`, tone: 'bad' };
  if (summary.exitCode !== 0) return { text: `${prefix}run failed (exit code ${summary.exitCode})`, tone: 'bad' };
  if (summary.totals.records === 0 && summary.totals.files === 0) return { text: `${prefix}nothing to do`, tone: 'ok' };
  return { text: summary.dryRun ? 'Dry run: all records valid, nothing was sent' : 'All delivered', tone: 'ok' };
}

function outcomeSum(o: Partial<Record<Outcome, number>>): number {
  return OUTCOMES.reduce((n, k) => n + (o[k] ?? 0), 0);
}

// ---------------------------------------------------------------------------------------------------
// charts (inline SVG, no script)

function niceMax(v: number): number {
  if (v <= 0) return 1;
  const p = 10 ** Math.floor(Math.log10(v));
  for (const m of [1, 2, 2.5, 5, 10]) if (m * p >= v) return m * p;
  return 10 * p;
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

function legend(outcomes: readonly Outcome[]): string {
  return `<ul class="legend">${outcomes
    .map(
      (o) =>
        `<li><span class="sw" style="background:${OUTCOME_STYLE[o].color}"></span>${escapeHtml(OUTCOME_STYLE[o].label)}</li>`,
    )
    .join('')}</ul>`;
}

/** Chart 1: stacked horizontal bars of outcomes per file. */
export function renderOutcomesChart(summary: RunSummary, maxFiles = 30): string {
  const files = summary.files.filter((f) => outcomeSum(f.outcomes) > 0);
  if (files.length === 0) return '<p class="empty">No records were settled in this run.</p>';
  const shown = files.slice(0, maxFiles);
  const used = OUTCOMES.filter((o) => shown.some((f) => (f.outcomes[o] ?? 0) > 0));
  const labelW = 290;
  const width = 860;
  const barW = width - labelW - 70;
  const rowH = 26;
  const top = 8;
  const height = top + shown.length * rowH + 26;
  const max = niceMax(Math.max(...shown.map((f) => outcomeSum(f.outcomes))));
  const parts: string[] = [];
  // grid
  for (let i = 0; i <= 4; i++) {
    const x = labelW + (barW * i) / 4;
    parts.push(`<line x1="${x}" y1="${top - 4}" x2="${x}" y2="${height - 22}" class="grid"/>`);
    parts.push(`<text x="${x}" y="${height - 6}" class="tick" text-anchor="middle">${formatCount((max * i) / 4)}</text>`);
  }
  shown.forEach((f, i) => {
    const y = top + i * rowH;
    const total = outcomeSum(f.outcomes);
    parts.push(
      `<text x="${labelW - 8}" y="${y + 16}" class="lbl" text-anchor="end"><title>${escapeHtml(f.name)}</title>${escapeHtml(ellipsizeMiddle(f.name, 32))}</text>`,
    );
    let x = labelW;
    for (const o of OUTCOMES) {
      const n = f.outcomes[o] ?? 0;
      if (n <= 0) continue;
      const w = (barW * n) / max;
      parts.push(
        `<rect x="${x.toFixed(2)}" y="${y + 4}" width="${Math.max(w, 0.8).toFixed(2)}" height="${rowH - 9}" fill="${OUTCOME_STYLE[o].color}"><title>${escapeHtml(`${f.name}: ${formatCount(n)} ${OUTCOME_STYLE[o].label.toLowerCase()}`)}</title></rect>`,
      );
      x += w;
    }
    parts.push(`<text x="${(x + 6).toFixed(2)}" y="${y + 16}" class="val">${formatCount(total)}</text>`);
  });
  const more =
    files.length > shown.length ? `<p class="note">Showing ${shown.length} of ${files.length} files; the table below lists all.</p>` : '';
  return `<svg class="chart" viewBox="0 0 ${width} ${height}" width="100%" role="img" aria-label="Outcomes per file, stacked"><title>Outcomes per file</title>${parts.join('')}</svg>${legend(used)}${more}`;
}

/** Chart 2: cumulative records settled over time (line + area). */
export function renderTimelineChart(summary: RunSummary): string {
  const pts = [...summary.timeline].filter((p) => Number.isFinite(p.atMs) && Number.isFinite(p.settled)).sort((a, b) => a.atMs - b.atMs);
  if (pts.length === 0) return '<p class="empty">No timeline recorded for this run.</p>';
  if (pts[0]!.atMs > 0) pts.unshift({ atMs: 0, settled: 0 });
  const width = 860;
  const height = 240;
  const left = 64;
  const right = 44;
  const top = 12;
  const bottom = 36;
  const maxX = Math.max(pts[pts.length - 1]!.atMs, summary.durationMs || 0, 1);
  const maxY = niceMax(Math.max(...pts.map((p) => p.settled)));
  const sx = (v: number): number => left + ((width - left - right) * v) / maxX;
  const sy = (v: number): number => height - bottom - ((height - top - bottom) * v) / maxY;
  const parts: string[] = [];
  for (let i = 0; i <= 4; i++) {
    const yv = (maxY * i) / 4;
    parts.push(`<line x1="${left}" y1="${sy(yv).toFixed(1)}" x2="${width - right}" y2="${sy(yv).toFixed(1)}" class="grid"/>`);
    parts.push(`<text x="${left - 8}" y="${(sy(yv) + 4).toFixed(1)}" class="tick" text-anchor="end">${formatCount(yv)}</text>`);
    const xv = (maxX * i) / 4;
    parts.push(`<text x="${sx(xv).toFixed(1)}" y="${height - bottom + 18}" class="tick" text-anchor="middle">${escapeHtml(formatDuration(xv))}</text>`);
  }
  const line = pts.map((p) => `${sx(p.atMs).toFixed(1)},${sy(p.settled).toFixed(1)}`).join(' ');
  const area = `${sx(pts[0]!.atMs).toFixed(1)},${sy(0).toFixed(1)} ${line} ${sx(pts[pts.length - 1]!.atMs).toFixed(1)},${sy(0).toFixed(1)}`;
  parts.push(`<polygon points="${area}" class="area"/>`);
  parts.push(`<polyline points="${line}" class="line"/>`);
  const last = pts[pts.length - 1]!;
  parts.push(`<circle cx="${sx(last.atMs).toFixed(1)}" cy="${sy(last.settled).toFixed(1)}" r="4" class="dot"/>`);
  parts.push(`<text x="${width - right}" y="${height - 4}" class="axis" text-anchor="end">time since start</text>`);
  return `<svg class="chart" viewBox="0 0 ${width} ${height}" width="100%" role="img" aria-label="Records settled over time: ${formatCount(last.settled)} after ${escapeHtml(formatDuration(last.atMs))}"><title>Records settled over time</title>${parts.join('')}</svg>`;
}

/** Chart 3: error reasons ranked (horizontal bars). */
export function renderReasonsChart(summary: RunSummary, maxReasons = 10): string {
  const reasons = [...summary.errorReasons].sort((a, b) => b.count - a.count);
  if (reasons.length === 0) return '<p class="empty ok">No errors in this run.</p>';
  const shown = reasons.slice(0, maxReasons);
  const width = 860;
  const labelW = 360;
  const barW = width - labelW - 70;
  const rowH = 26;
  const height = shown.length * rowH + 8;
  const max = Math.max(...shown.map((r) => r.count), 1);
  const parts: string[] = [];
  shown.forEach((r, i) => {
    const y = 4 + i * rowH;
    const w = Math.max((barW * r.count) / max, 1);
    parts.push(
      `<text x="${labelW - 8}" y="${y + 16}" class="lbl" text-anchor="end"><title>${escapeHtml(r.reason)}</title>${escapeHtml(ellipsize(r.reason, 52))}</text>`,
    );
    parts.push(`<rect x="${labelW}" y="${y + 4}" width="${w.toFixed(2)}" height="${rowH - 9}" class="bad"><title>${escapeHtml(`${r.reason}: ${r.count}`)}</title></rect>`);
    parts.push(`<text x="${(labelW + w + 6).toFixed(2)}" y="${y + 16}" class="val">${formatCount(r.count)}</text>`);
  });
  const more = reasons.length > shown.length ? `<p class="note">Top ${shown.length} of ${reasons.length} reasons; all are in reasons.csv.</p>` : '';
  return `<svg class="chart" viewBox="0 0 ${width} ${height}" width="100%" role="img" aria-label="Error reasons ranked by count"><title>Error reasons</title>${parts.join('')}</svg>${more}`;
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
.cards{display:grid;grid-template-columns:repeat(auto-fill,minmax(128px,1fr));gap:10px;margin-top:20px}
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
.legend{list-style:none;padding:0;margin:8px 0 0;display:flex;flex-wrap:wrap;gap:6px 16px;font-size:12px;color:var(--muted)}
.legend .sw{display:inline-block;width:12px;height:12px;border-radius:2px;margin-right:6px;vertical-align:-1px;border:1px solid rgba(0,0,0,.15)}
table{width:100%;border-collapse:collapse;background:var(--card);font-size:13px}
.tbl{border:1px solid var(--line);border-radius:8px;overflow:auto;margin-bottom:16px}
th,td{text-align:left;padding:7px 10px;border-bottom:1px solid var(--line);vertical-align:top}
th{background:#eef1f5;font-weight:600;font-size:12px;color:#3d4753;white-space:nowrap}
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

function cell(n: number | undefined, cls = 'num'): string {
  const v = n ?? 0;
  return `<td class="${cls}${v === 0 ? ' z' : ''}">${v === 0 ? '–' : formatCount(v)}</td>`;
}

function link(href: string | undefined, text: string, title?: string): string {
  if (!href) return '<span class="z">–</span>';
  return `<a href="${escapeHtml(href)}"${title ? ` title="${escapeHtml(title)}"` : ''}>${escapeHtml(text)}</a>`;
}

/**
 * The HTML page. `pageDir` is the folder the page is written to and `outboxDir` the outbox root: file
 * links are made relative between them.
 */
export function renderReportHtml(summary: RunSummary, pageDir: string, outboxDir: string, options: RunReportOptions = {}): string {
  const tz = options.timeZone;
  const status = statusInWords(summary);
  const need = attentionCount(summary);
  const t = summary.totals;
  const href = (f: string | undefined): string | undefined => (f ? relativeHref(pageDir, outboxDir, f) : undefined);

  const cards = [
    `<div class="card" style="--c:#0b4f8a"><div class="n">${formatCount(t.records)}</div><div class="k">Records</div></div>`,
    `<div class="card" style="--c:#5b6775"><div class="n">${formatCount(t.files)}</div><div class="k">Files</div></div>`,
    ...OUTCOMES.map(
      (o) =>
        `<div class="card${(t[o] ?? 0) === 0 ? ' zero' : ''}" style="--c:${OUTCOME_STYLE[o].color}"><div class="n">${formatCount(t[o] ?? 0)}</div><div class="k">${escapeHtml(OUTCOME_STYLE[o].label)}</div></div>`,
    ),
  ].join('');

  const fileRows = summary.files
    .map((f) => {
      const total = outcomeSum(f.outcomes);
      const chips = OUTCOMES.filter((o) => (f.outcomes[o] ?? 0) > 0)
        .map((o) => `<span class="chip"><span class="oc" style="background:${OUTCOME_STYLE[o].color}"></span>${formatCount(f.outcomes[o] ?? 0)} ${escapeHtml(OUTCOME_STYLE[o].label.toLowerCase())}</span>`)
        .join('');
      const mini = total
        ? `<div class="mini" aria-hidden="true">${OUTCOMES.filter((o) => (f.outcomes[o] ?? 0) > 0)
            .map((o) => `<span style="width:${(((f.outcomes[o] ?? 0) / total) * 100).toFixed(2)}%;background:${OUTCOME_STYLE[o].color}"></span>`)
            .join('')}</div>`
        : '';
      const result = link(href(f.resultFile), 'Result', f.resultFile ? basename(f.resultFile) : undefined);
      const rejects = link(href(f.rejectsFile), 'Rejects', f.rejectsFile ? basename(f.rejectsFile) : undefined);
      const what = f.mapping || f.target ? `${escapeHtml(f.mapping ?? '–')}<div class="note">${escapeHtml(f.target ?? '')}</div>` : '<span class="z">–</span>';
      return `<tr><td>${escapeHtml(f.channel)}</td><td class="name mono">${escapeHtml(f.name)}${f.archivedTo ? `<div class="note">${escapeHtml(`→ ${f.archivedTo}`)}</div>` : ''}</td><td><span class="pill ${escapeHtml(f.status)}">${escapeHtml(f.status)}</span></td><td>${what}</td>${cell(f.rows)}<td class="outs">${mini}${chips || '<span class="z">–</span>'}${f.error ? `<div class="err">${escapeHtml(f.error)}</div>` : ''}</td><td class="num">${f.durationMs === undefined ? '–' : escapeHtml(formatDuration(f.durationMs))}</td><td class="files">${result}${f.rejectsFile ? ` · ${rejects}` : ''}</td></tr>`;
    })
    .join('');
  const outcomeHeads = OUTCOMES.map((o) => `<th class="num"><span class="oc" style="background:${OUTCOME_STYLE[o].color}"></span>${escapeHtml(OUTCOME_STYLE[o].label)}</th>`).join('');
  const filesTable = summary.files.length
    ? `<div class="tbl"><table class="files"><thead><tr><th>Channel</th><th>File</th><th>Status</th><th>Mapping / resource</th><th class="num">Rows</th><th>Outcomes</th><th class="num">Time</th><th>Result / rejects</th></tr></thead><tbody>${fileRows}</tbody></table></div>`
    : '<p class="empty">No files in this run.</p>';

  const resRows = summary.resources
    .map((r) => `<tr><td>${escapeHtml(r.target)}</td>${cell(outcomeSum(r.outcomes))}${OUTCOMES.map((o) => cell(r.outcomes[o])).join('')}</tr>`)
    .join('');
  const resTable = summary.resources.length
    ? `<div class="tbl"><table><thead><tr><th>Resource</th><th class="num">Records</th>${outcomeHeads}</tr></thead><tbody>${resRows}</tbody></table></div>`
    : '<p class="empty">No records were sent.</p>';

  const maxAtt = options.maxAttention ?? 500;
  const att = summary.attention.slice(0, maxAtt);
  const attRows = att
    .map(
      (a) =>
        `<tr><td class="mono name">${escapeHtml(`${a.file}:${a.line}`)}</td><td>${escapeHtml(a.target)}</td><td class="mono">${escapeHtml(a.key)}</td><td><span class="oc" style="background:${OUTCOME_STYLE[a.outcome]?.color ?? '#999'}"></span>${escapeHtml(OUTCOME_STYLE[a.outcome]?.label ?? a.outcome)}</td><td class="err">${escapeHtml(a.reason)}</td></tr>`,
    )
    .join('');
  const attNote =
    need > att.length
      ? `<p class="note">Listing ${formatCount(att.length)} of ${formatCount(need)} records that need attention; every record is in its file's result CSV.</p>`
      : '';
  const attTable = att.length
    ? `<div class="tbl"><table><thead><tr><th>Where</th><th>Resource</th><th>Key</th><th>Outcome</th><th>Reason</th></tr></thead><tbody>${attRows}</tbody></table></div>${attNote}`
    : need > 0
      ? `<p class="empty">${formatCount(need)} records need attention; see the result files.</p>`
      : '<p class="empty ok">Nothing needs attention.</p>';

  const reasonsTable = summary.errorReasons.length
    ? `<div class="tbl"><table><thead><tr><th>Reason</th><th class="num">Count</th><th>Example</th></tr></thead><tbody>${[...summary.errorReasons]
        .sort((a, b) => b.count - a.count)
        .map(
          (r) =>
            `<tr><td class="err">${escapeHtml(r.reason)}</td>${cell(r.count)}<td class="mono">${r.example ? escapeHtml(`${r.example.file}:${r.example.line}`) : '–'}</td></tr>`,
        )
        .join('')}</tbody></table></div>`
    : '';

  const webhooks = summary.webhooks?.length
    ? `<h2>Webhooks received</h2><div class="tbl"><table><thead><tr><th>Kind</th><th class="num">Received</th><th class="num">Linked to a record</th></tr></thead><tbody>${summary.webhooks
        .map((w) => `<tr><td>${escapeHtml(w.kind)}</td>${cell(w.count)}${cell(w.linked)}</tr>`)
        .join('')}</tbody></table></div>`
    : '';

  const w = summary.wms;
  const title = `wmsbridge run ${summary.runId}`;
  return `<!DOCTYPE html>
<html lang="en">
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
<div class="brand">wmsbridge · run report</div>
<h1>Run <span class="mono">${escapeHtml(summary.runId)}</span>${summary.dryRun ? '<span class="badge">DRY RUN</span>' : ''}${w.sandbox ? '<span class="badge">SANDBOX</span>' : ''}</h1>
<div class="meta"><span>Started ${escapeHtml(formatReportDate(summary.startedAt, tz))}</span><span>Finished ${escapeHtml(formatReportDate(summary.finishedAt, tz))}</span><span>Duration ${escapeHtml(formatDuration(summary.durationMs))}</span></div>
<div class="meta"><span>Command ${escapeHtml(summary.command)}</span><span>WMS ${escapeHtml(stripCredentials(w.url))}</span><span>Host ${escapeHtml(summary.host)}</span><span>wmsbridge ${escapeHtml(summary.version)}</span><span>Exit code ${escapeHtml(summary.exitCode)}</span></div>
</div>
<div class="status ${status.tone}" role="status">${escapeHtml(status.text)}</div>
</div></header>
<main class="wrap">
<section class="cards" aria-label="Totals">${cards}</section>
<p class="note">WMS calls: ${formatCount(w.requests)} requests, ${formatCount(w.retries)} retries, ${formatCount(w.refreshes)} token refreshes, ${formatCount(w.failures)} failures${w.meanLatencyMs === undefined ? '' : `; the WMS answered in ${escapeHtml(w.meanLatencyMs.toLocaleString('en-US'))} ms on average`}.</p>
${summary.wmsUnavailable ? `<p class="note" role="alert">The WMS was unreachable from ${escapeHtml(formatReportDate(summary.wmsUnavailable.since, tz))}; ${formatCount(summary.wmsUnavailable.waitingRecords)} records wait for the next run.</p>` : ''}

<h2>Outcomes per file</h2>
<div class="panel">${renderOutcomesChart(summary, options.maxChartFiles ?? 30)}</div>

<h2>Progress</h2>
<div class="panel"><h3>Records settled over time</h3>${renderTimelineChart(summary)}</div>

<h2>Error reasons</h2>
<div class="panel">${renderReasonsChart(summary)}</div>
${reasonsTable}

<h2>Records needing attention</h2>
${attTable}

<h2>Files</h2>
${filesTable}

<h2>Resources</h2>
${resTable}
${webhooks}
<footer>Generated by wmsbridge ${escapeHtml(summary.version)} on ${escapeHtml(summary.host)} · run ${escapeHtml(summary.runId)} · figures also in summary.csv, files.csv, resources.csv, reasons.csv, attention.csv and summary.json next to this report.</footer>
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

async function writeCsvFile(path: string, columns: string[], rows: Array<Record<string, unknown>>, format: CsvFormatOptions | undefined): Promise<void> {
  const w = createCsvWriter(path, { columns, format: format ?? {} });
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
 * `<outboxDir>/reports/latest.html`. Every file is written atomically.
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
    latest: join(reportsDir, 'latest.html'),
  };
  const fmt = options.csvFormat;
  const t = summary.totals;

  await writeFileAtomic(paths.json, `${JSON.stringify(summary, null, 2)}\n`);

  const status = statusInWords(summary);
  const headline: Array<Record<string, unknown>> = [
    { metric: 'run_id', value: summary.runId },
    { metric: 'command', value: summary.command },
    { metric: 'dry_run', value: summary.dryRun },
    { metric: 'started_at', value: summary.startedAt },
    { metric: 'finished_at', value: summary.finishedAt },
    { metric: 'duration_ms', value: summary.durationMs },
    { metric: 'exit_code', value: summary.exitCode },
    { metric: 'status', value: status.text },
    { metric: 'host', value: summary.host },
    { metric: 'version', value: summary.version },
    { metric: 'wms_url', value: stripCredentials(summary.wms.url) },
    { metric: 'wms_sandbox', value: summary.wms.sandbox },
    { metric: 'wms_requests', value: summary.wms.requests },
    { metric: 'wms_retries', value: summary.wms.retries },
    { metric: 'wms_refreshes', value: summary.wms.refreshes },
    { metric: 'wms_failures', value: summary.wms.failures },
    { metric: 'wms_mean_latency_ms', value: summary.wms.meanLatencyMs ?? '' },
    { metric: 'files', value: t.files },
    { metric: 'records', value: t.records },
    ...OUTCOMES.map((o) => ({ metric: o, value: t[o] ?? 0 })),
    { metric: 'need_attention', value: attentionCount(summary) },
  ];
  // started_at / finished_at are shown as dates in the CSV too
  const csvOpts = { format: fmt ?? {} };
  {
    const w = createCsvWriter(paths.csv, { columns: ['metric', 'value'], ...csvOpts, dateColumns: ['value'] });
    try {
      for (const r of headline) w.write(r);
      await w.close();
    } catch (err) {
      await w.abort();
      throw err;
    }
  }
  await writeCsvFile(
    join(dir, 'files.csv'),
    ['channel', 'file', 'status', 'mapping', 'target', 'rows', ...OUTCOMES, 'duration_ms', 'result_file', 'rejects_file', 'archived_to', 'error'],
    summary.files.map((f) => ({
      channel: f.channel,
      file: f.name,
      status: f.status,
      mapping: f.mapping,
      target: f.target,
      rows: f.rows,
      ...Object.fromEntries(OUTCOMES.map((o) => [o, f.outcomes[o] ?? 0])),
      duration_ms: f.durationMs,
      result_file: f.resultFile,
      rejects_file: f.rejectsFile,
      archived_to: f.archivedTo,
      error: f.error,
    })),
    fmt,
  );
  await writeCsvFile(
    join(dir, 'resources.csv'),
    ['target', 'records', ...OUTCOMES],
    summary.resources.map((r) => ({ target: r.target, records: outcomeSum(r.outcomes), ...Object.fromEntries(OUTCOMES.map((o) => [o, r.outcomes[o] ?? 0])) })),
    fmt,
  );
  await writeCsvFile(
    join(dir, 'reasons.csv'),
    ['reason', 'count', 'example_file', 'example_line'],
    [...summary.errorReasons]
      .sort((a, b) => b.count - a.count)
      .map((r) => ({ reason: r.reason, count: r.count, example_file: r.example?.file, example_line: r.example?.line })),
    fmt,
  );
  await writeCsvFile(
    join(dir, 'attention.csv'),
    ['file', 'line', 'target', 'key', 'outcome', 'reason'],
    summary.attention.map((a) => ({ ...a })),
    fmt,
  );

  await writeFileAtomic(paths.html, renderReportHtml(summary, dir, outboxDir, options));
  // latest.html is rendered for its own folder so its relative links resolve from reports/; a rebuilt
  // older report does not replace the newest one (folder names sort by start time)
  if (await isNewestReport(reportsDir, basename(dir))) {
    await writeFileAtomic(paths.latest, renderReportHtml(summary, dirname(paths.latest), outboxDir, options));
  }
  return paths;
}
