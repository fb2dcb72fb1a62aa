/**
 * Stock reconciliation: "does the WMS hold what the ERP says?". Reads the ERP's stock file through its
 * mapping (a StockSync mapping, or any mapping whose records give a product and a quantity), reads the
 * WMS stock of the owner(s) in the file, and compares them product by product:
 *
 *   <outbox>/reconciliation/<yyyy-MM-dd>/stock-<file stem>.html   page (pt-BR by default)
 *                                          stock-<file stem>.csv    one line per product + totals
 *                                          stock-<file stem>.xlsx   the same, typed (codes as text)
 *
 * Product codes are matched through the journal's cross-reference (the WMS id wmsbridge created or found
 * for the ERP code), else by the WMS's product code. The WMS quantity is split into available, reserved and
 * blocked (a material status other than "available"); the difference is WMS total minus ERP quantity.
 */
import { mkdir, readdir, stat } from 'node:fs/promises';
import { basename, dirname, extname, join } from 'node:path';
import { ConfigError } from '../shared/errors.js';
import { createNameFilter } from '../intake/readiness.js';
import { isDue, parseSchedule } from '../shared/schedule.js';
import type { CompiledMapping } from '../map/index.js';
import { isRef } from '../map/types.js';
import { previewWith } from '../map/preview.js';
import type { LoadableReferenceCache } from '../push/reference-cache.js';
import type { CrossReference, MetaStore } from '../journal/types.js';
import type { WmsClient } from '../wms/client-types.js';
import type { StockRecord } from '../wms/schemas.js';
import { createI18n, type I18n, type Locale } from '../i18n/index.js';
import { modeOption, writeFileAtomic } from '../outbox/atomic.js';
import { createCsvWriter, type CsvFormatOptions } from '../outbox/csv.js';
import { escapeHtml } from '../outbox/report.js';
import { writeXlsx, type XlsxColumn } from '../outbox/xlsx.js';
import { sentAsSession, specOf, type RefResource } from '../wms/targets.js';

export type ReconStatus = 'equal' | 'differs' | 'only-erp' | 'only-wms';

export interface ReconLine {
  product: string;
  name: string | null;
  erp: number | null;
  wms: number | null;
  available: number;
  reserved: number;
  blocked: number;
  difference: number;
  status: ReconStatus;
}

export interface StockReconciliation {
  file: string;
  mapping: string;
  owners: string[];
  comparedAt: string;
  lines: ReconLine[];
  /** ERP rows the mapping could not read (they are listed in the page; the comparison leaves them out) */
  unreadable: Array<{ line: number; reason: string }>;
  differences: number;
  totals: { erp: number; wms: number; available: number; reserved: number; blocked: number; difference: number };
}

/** Mappings whose records give a product and a quantity (StockSync, or product/quantity fields). */
export function isStockMapping(m: CompiledMapping): boolean {
  return sentAsSession(m.target);
}

/** "available" material statuses: the WMS's default status names (pt-BR and English). */
const AVAILABLE = /^(dispon|available|liberad|livre)/i;
const EPS = 1e-9;

function refValue(v: unknown): { code?: string; id?: string } {
  if (isRef(v)) return { code: v.$ref.value };
  if (typeof v === 'string') return /^[0-9a-f]{8}-[0-9a-f]{4}-/i.test(v) ? { id: v } : { code: v };
  return {};
}

/** Compares an ERP stock file with the WMS stock of its owner(s). Sends nothing. */
export async function reconcileStock(opts: {
  file: string;
  mapping: CompiledMapping;
  client: WmsClient;
  refCache: LoadableReferenceCache;
  journal: CrossReference;
  now?: Date;
}): Promise<StockReconciliation> {
  const { mapping, client, journal } = opts;
  await opts.refCache.load([...new Set(mapping.referenceNeeds.map((n) => n.resource))] as RefResource[]);
  const preview = await previewWith(mapping, opts.file, { refs: opts.refCache, ...(opts.now ? { now: opts.now } : {}) });
  // ERP side: quantity per product (WMS id when the journal knows it, else the ERP code)
  const erp = new Map<string, { code: string; qty: number }>();
  const owners = new Set<string>();
  const byId = new Map<string, string>(); // WMS product id -> ERP code
  // the resource the payload's productId refers to (the target's refs): products wmsbridge created are in the cross-reference
  const products = specOf(mapping.target)?.refs['productId'];
  for (const rec of preview.records) {
    const p = rec.payload;
    const prod = refValue(p['productId'] ?? p['product'] ?? p['productCode']);
    const qty = Number(p['quantity']);
    if ((!prod.code && !prod.id) || !Number.isFinite(qty)) continue;
    if (typeof p['ownerId'] === 'string') owners.add(p['ownerId']);
    let key = prod.id ?? `code:${prod.code}`;
    if (prod.code && products) {
      const x = await journal.getXref(products, prod.code);
      if (x) {
        key = x.wmsId.toLowerCase();
        byId.set(key, prod.code);
      }
    } else key = key.toLowerCase();
    const cur = erp.get(key) ?? { code: prod.code ?? prod.id!, qty: 0 };
    cur.qty += qty;
    erp.set(key, cur);
  }
  // WMS side: every stock record of the owner(s), summed per product
  const wms = new Map<string, { code: string | null; name: string | null; total: number; reserved: number; blocked: number }>();
  const add = (r: StockRecord): void => {
    const id = r.productId.toLowerCase();
    const key = erp.has(id) || byId.has(id) ? id : r.productCode && erp.has(`code:${r.productCode}`) ? `code:${r.productCode}` : id;
    const cur = wms.get(key) ?? { code: r.productCode ?? null, name: r.productName ?? null, total: 0, reserved: 0, blocked: 0 };
    cur.total += r.quantity;
    cur.reserved += r.reserved ?? 0;
    if (r.materialStatusName && !AVAILABLE.test(r.materialStatusName)) cur.blocked += r.quantity;
    wms.set(key, cur);
  };
  if (owners.size === 0) for await (const r of client.searchStock({})) add(r);
  else for (const ownerId of owners) for await (const r of client.searchStock({ ownerId })) add(r);

  const lines: ReconLine[] = [];
  for (const key of new Set([...erp.keys(), ...wms.keys()])) {
    const e = erp.get(key);
    const w = wms.get(key);
    const erpQty = e ? e.qty : null;
    const wmsQty = w ? w.total : null;
    const difference = (wmsQty ?? 0) - (erpQty ?? 0);
    const status: ReconStatus = !w
      ? Math.abs(erpQty ?? 0) < EPS
        ? 'equal'
        : 'only-erp'
      : !e
        ? Math.abs(wmsQty ?? 0) < EPS
          ? 'equal'
          : 'only-wms'
        : Math.abs(difference) < EPS
          ? 'equal'
          : 'differs';
    lines.push({
      product: e?.code ?? w?.code ?? key,
      name: w?.name ?? null,
      erp: erpQty,
      wms: wmsQty,
      available: w ? Math.max(0, w.total - w.reserved - w.blocked) : 0,
      reserved: w?.reserved ?? 0,
      blocked: w?.blocked ?? 0,
      difference: Math.round(difference * 1e6) / 1e6,
      status,
    });
  }
  // differences first, then by product code
  const rank: Record<ReconStatus, number> = { differs: 0, 'only-erp': 1, 'only-wms': 2, equal: 3 };
  lines.sort((a, b) => rank[a.status] - rank[b.status] || a.product.localeCompare(b.product));
  const sum = (f: (l: ReconLine) => number): number => Math.round(lines.reduce((n, l) => n + f(l), 0) * 1e6) / 1e6;
  return {
    file: opts.file,
    mapping: mapping.name,
    owners: [...owners],
    comparedAt: (opts.now ?? new Date()).toISOString(),
    lines,
    unreadable: preview.rejects.map((r) => ({ line: r.source.line, reason: r.issues.map((i) => i.message).join(' | ') })),
    differences: lines.filter((l) => l.status !== 'equal').length,
    totals: {
      erp: sum((l) => l.erp ?? 0),
      wms: sum((l) => l.wms ?? 0),
      available: sum((l) => l.available),
      reserved: sum((l) => l.reserved),
      blocked: sum((l) => l.blocked),
      difference: sum((l) => l.difference),
    },
  };
}

function columns(i18n: I18n): XlsxColumn[] {
  const c = (key: string, type: XlsxColumn['type']): XlsxColumn => ({ key, header: i18n.t(`recon.col.${key === 'wms' ? 'wmsTotal' : key}`), type });
  return [
    c('product', 'text'),
    c('name', 'text'),
    c('erp', 'number'),
    c('wms', 'number'),
    c('available', 'number'),
    c('reserved', 'number'),
    c('blocked', 'number'),
    c('difference', 'number'),
    c('status', 'text'),
  ];
}

function rows(r: StockReconciliation, i18n: I18n): Array<Record<string, unknown>> {
  return [
    ...r.lines.map((l) => ({ ...l, status: i18n.t(`recon.status.${l.status}`) })),
    { product: i18n.t('recon.totals'), name: null, ...r.totals, status: null },
  ];
}

/** The page: status sentence first, then the differences, then every product. */
export function renderReconciliationHtml(r: StockReconciliation, i18n: I18n): string {
  const { t } = i18n;
  const cols = columns(i18n);
  const status = r.differences === 0 ? t('recon.allEqual', { n: r.lines.length }) : t('recon.differences', { n: r.differences });
  const num = (v: unknown): string => (typeof v === 'number' ? escapeHtml(i18n.num(v, 3)) : v === null || v === undefined ? '–' : escapeHtml(v));
  const body = rows(r, i18n)
    .map((row, i, all) => {
      const line = r.lines[i];
      const cls = i === all.length - 1 ? 'tot' : line && line.status !== 'equal' ? 'diff' : '';
      return `<tr class="${cls}">${cols.map((c) => (c.type === 'number' ? `<td class="num">${num(row[c.key])}</td>` : `<td>${escapeHtml(row[c.key] ?? '–')}</td>`)).join('')}</tr>`;
    })
    .join('');
  const unreadable = r.unreadable.length
    ? `<p class="bad">${escapeHtml(r.unreadable.length)} × ${r.unreadable.map((u) => escapeHtml(`${basename(r.file)}:${u.line}: ${u.reason}`)).join('<br>')}</p>`
    : '';
  return `<!DOCTYPE html>
<html lang="${escapeHtml(i18n.locale)}">
<head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escapeHtml(`${t('recon.title')} · ${basename(r.file)}`)}</title>
<style>body{font:14px/1.45 "Segoe UI",system-ui,Roboto,Arial,sans-serif;color:#1c2430;margin:24px}h1{font-size:20px}
.status{font-weight:600;padding:8px 12px;border-radius:6px;display:inline-block}.ok{background:#effaf5;color:#0f7b55}.warn{background:#fff8ec;color:#9a5b00}
.bad{color:#a3162b}table{border-collapse:collapse;margin-top:14px}th,td{border-bottom:1px solid #dfe3e8;padding:5px 10px;text-align:left}
th{background:#f0f2f5}.num{text-align:right;font-variant-numeric:tabular-nums}tr.diff td{background:#fff3e6}tr.tot td{font-weight:700;border-top:2px solid #1c2430}
.meta{color:#5b6775}</style></head>
<body>
<h1>${escapeHtml(t('recon.title'))}</h1>
<p class="meta">${escapeHtml(t('recon.file'))}: ${escapeHtml(basename(r.file))} (${escapeHtml(r.mapping)}) · ${escapeHtml(t('recon.at'))} ${escapeHtml(`${i18n.dateTime(r.comparedAt)} ${i18n.timeZone}`)}</p>
<p class="status ${r.differences === 0 && r.unreadable.length === 0 ? 'ok' : 'warn'}" role="status">${escapeHtml(status)}</p>
${unreadable}
<table><thead><tr>${cols.map((c) => `<th${c.type === 'number' ? ' class="num"' : ''}>${escapeHtml(c.header)}</th>`).join('')}</tr></thead><tbody>${body}</tbody></table>
</body>
</html>
`;
}

/** Writes the page, the CSV and the workbook; returns their paths. */
export async function writeReconciliation(
  outboxDir: string,
  r: StockReconciliation,
  options: { locale?: Locale; timeZone?: string; csvFormat?: CsvFormatOptions; fileMode?: number } = {},
): Promise<{ html: string; csv: string; xlsx: string }> {
  const i18n = createI18n(options.locale ?? 'pt-BR', options.timeZone ?? 'America/Sao_Paulo');
  const d = i18n.date(r.comparedAt).split('/');
  const dir = join(outboxDir, 'reconciliation', `${d[2]}-${d[1]}-${d[0]}`);
  await mkdir(dir, { recursive: true });
  const stem = `stock-${basename(r.file, extname(r.file)).replace(/[^A-Za-z0-9._-]+/g, '_')}`;
  const paths = { html: join(dir, `${stem}.html`), csv: join(dir, `${stem}.csv`), xlsx: join(dir, `${stem}.xlsx`) };
  const cols = columns(i18n);
  const data = rows(r, i18n);
  const w = createCsvWriter(paths.csv, {
    columns: cols.map((c) => c.header),
    format: { ...(options.csvFormat ?? {}), timeZone: options.csvFormat?.timeZone ?? i18n.timeZone },
    ...modeOption(options.fileMode),
  });
  try {
    for (const row of data) w.write(Object.fromEntries(cols.map((c) => [c.header, row[c.key]])));
    await w.close();
  } catch (err) {
    await w.abort();
    throw err;
  }
  await writeXlsx(paths.xlsx, [{ name: i18n.t('sheet.reconciliation'), columns: cols, rows: data }], {
    timeZone: i18n.timeZone,
    ...modeOption(options.fileMode),
  });
  await writeFileAtomic(paths.html, renderReconciliationHtml(r, i18n), modeOption(options.fileMode));
  return paths;
}

/**
 * After a stock file was synchronised (run / watch with outbox.reconcileStock): reconcile it and write the
 * files. Never fails the run: a problem or a difference is logged (English, for operators).
 */
export async function reconcileAfterSync(
  ctx: {
    client: WmsClient;
    refCache: LoadableReferenceCache;
    journal: CrossReference & MetaStore;
    config: { outboxDir: string; outbox: { locale: Locale; timeZone: string; csv: CsvFormatOptions } };
    /** mode of the files written (outbox.fileMode) */
    fileMode?: number;
  },
  mapping: CompiledMapping,
  file: string,
  log: { info(o: object, m: string): void; warn(o: object, m: string): void },
): Promise<StockReconciliation | null> {
  try {
    const r = await reconcileStock({ file, mapping, client: ctx.client, refCache: ctx.refCache, journal: ctx.journal });
    const o = ctx.config.outbox;
    const paths = await writeReconciliation(ctx.config.outboxDir, r, { locale: o.locale, timeZone: o.timeZone, csvFormat: o.csv, fileMode: ctx.fileMode });
    const fields = { file: basename(file), products: r.lines.length, differences: r.differences, html: paths.html };
    if (r.differences > 0) log.warn(fields, 'stock reconciliation after the sync found differences');
    else log.info(fields, 'stock reconciled after the sync: no difference');
    return r;
  } catch (err) {
    log.warn({ file: basename(file), err }, 'stock reconciliation after the sync failed');
    return null;
  }
}

/** The stock mapping for a file: by name, else the one matching its folder (channel) and name, else the only one. */
export function pickStockMapping(mappings: CompiledMapping[], file: string, name?: string): CompiledMapping {
  if (name) {
    const m = mappings.find((x) => x.name === name);
    if (!m) throw new ConfigError(`reconcile stock: no mapping named '${name}' (${mappings.map((x) => x.name).join(', ')})`);
    return m;
  }
  const stock = mappings.filter(isStockMapping);
  // the channel is the inbox folder: the file's folder, or the one holding .wmsbridge/ (archive, work, error)
  const parts = dirname(file).split(/[\\/]/);
  const hidden = parts.lastIndexOf('.wmsbridge');
  const channel = hidden > 0 ? parts[hidden - 1]! : basename(dirname(file));
  const matching = stock.filter((m) => m.matches(channel, basename(file)));
  if (matching.length >= 1) return matching[0]!;
  if (stock.length === 1) return stock[0]!;
  throw new ConfigError(
    `reconcile stock: no stock mapping matches ${basename(file)}${stock.length ? ` (stock mappings: ${stock.map((m) => m.name).join(', ')}; pass --mapping NAME)` : ' (no StockSync mapping in the mappings folder)'}`,
  );
}

/** The newest file (by modification time) under `dir` (recursively) whose name matches `files`. */
export async function newestFile(dir: string, files: string): Promise<string | null> {
  const match = createNameFilter([files], []);
  let best: { path: string; mtime: number } | null = null;
  const walk = async (d: string): Promise<void> => {
    const entries = await readdir(d, { withFileTypes: true }).catch(() => []);
    for (const e of entries) {
      const p = join(d, e.name);
      if (e.isDirectory()) await walk(p);
      else if (e.isFile() && match(e.name) && !e.name.startsWith('.')) {
        const m = (await stat(p)).mtimeMs;
        if (!best || m > best.mtime) best = { path: p, mtime: m };
      }
    }
  };
  await walk(dir);
  return (best as { path: string } | null)?.path ?? null;
}

export const RECONCILE_LAST_KEY = 'reconcile-last:stock';

/**
 * The scheduled reconciliation (outbox.reconcileSchedule), when due: the newest ERP stock file under `dir`
 * compared with the WMS. The last run lives in the journal (meta reconcile-last:stock), like the pulls'.
 */
export async function runScheduledReconciliation(
  ctx: Parameters<typeof reconcileAfterSync>[0],
  spec: { schedule: string; dir: string; files: string; mapping?: string | undefined },
  mappings: CompiledMapping[],
  log: Parameters<typeof reconcileAfterSync>[3],
  now: Date = new Date(),
): Promise<{ status: 'not-due' | 'no-file' | 'ran' | 'failed'; file?: string; products?: number; differences?: number }> {
  const schedule = parseSchedule(spec.schedule, { timeZone: ctx.config.outbox.timeZone });
  const lastIso = await ctx.journal.getMeta(RECONCILE_LAST_KEY);
  const last = lastIso ? new Date(lastIso) : null;
  if (!isDue(schedule, last, now)) return { status: 'not-due' };
  await ctx.journal.setMeta(RECONCILE_LAST_KEY, now.toISOString());
  const file = await newestFile(spec.dir, spec.files);
  if (!file) {
    log.warn({ dir: spec.dir, files: spec.files }, 'scheduled stock reconciliation: no ERP stock file found');
    return { status: 'no-file' };
  }
  const mapping = pickStockMapping(mappings, file, spec.mapping);
  const r = await reconcileAfterSync(ctx, mapping, file, log);
  return r ? { status: 'ran', file, products: r.lines.length, differences: r.differences } : { status: 'failed', file };
}
