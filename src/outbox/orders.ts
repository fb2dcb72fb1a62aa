/**
 * The orders follow-up (`pedidos`): the picking lists and purchase orders wmsbridge sent, with what the
 * WMS said about them since, from the webhooks received (order status, packing, shipping, receipt):
 *
 *   <outbox>/pedidos/<yyyy-MM-dd>/pedidos.html / .csv / .xlsx
 *
 * One line per document: kind, the ERP's document number (order number, invoice number), the partner as a
 * person reads it (the customer's name, the supplier's CNPJ), WMS id, source file, sent at, separation started
 * at, packed at, shipped at, received at (purchase orders), current situation and when it last changed; sorted by
 * kind and number. The journal's internal keys ("100232|001") are not shown. The day's view holds the documents
 * sent that day or with news that day. Everything comes from the journal (records and stored webhook events);
 * the WMS is not asked.
 */
import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import type { RecordRow, FileLedger, RecordQueue, WebhookInbox } from '../journal/types.js';
import { createI18n, type I18n, type Locale } from '../i18n/index.js';
import { modeOption, writeFileAtomic } from './atomic.js';
import { createCsvWriter, type CsvFormatOptions } from './csv.js';
import { escapeHtml } from './report.js';
import { writeXlsx, type XlsxColumn } from './xlsx.js';
import { ORDER_TARGETS, specOf, type OrderRule } from '../wms/targets.js';

export interface OrderLine {
  kind: 'picking' | 'purchase';
  /** the ERP's document number: the order (picking list) or the invoice number (purchase order) */
  order: string;
  /** who the document is with, as a person reads it: the customer's name, the owner's code, the supplier's CNPJ */
  partner: string | null;
  /** the record's key in the journal ("100232|001"): for machines, not shown */
  key: string;
  wmsId: string | null;
  file: string | null;
  sentAt: string;
  separatingAt: string | null;
  packedAt: string | null;
  shippedAt: string | null;
  receivedAt: string | null;
  /** the last status code the WMS reported ('1'..'7' picking, '1'..'3' receipt), null when none yet */
  status: string | null;
  updatedAt: string;
}

const str = (v: unknown): string | null => (typeof v === 'string' && v !== '' ? v : typeof v === 'number' ? String(v) : null);
/** a referenced record's key in a payload ({ $ref: { value } }) or a plain value */
const refValue = (v: unknown): string | null =>
  v && typeof v === 'object' && '$ref' in v ? str((v as { $ref: { value?: unknown } }).$ref.value) : str(v);

/** 12345678000195 -> 12.345.678/0001-95, 12345678901 -> 123.456.789-01; anything else as it is */
export function formatTaxId(v: string): string {
  if (/^\d{14}$/.test(v)) return v.replace(/^(\d{2})(\d{3})(\d{3})(\d{4})(\d{2})$/, '$1.$2.$3/$4-$5');
  if (/^\d{11}$/.test(v)) return v.replace(/^(\d{3})(\d{3})(\d{3})(\d{2})$/, '$1.$2.$3-$4');
  return v;
}

/**
 * The document's number and partner from its payload (the key's parts when the payload lacks them), by its
 * target's `order` rule (src/wms/targets/): the number field, the partner's name field, its tax id field.
 */
function documentOf(r: RecordRow, rule: OrderRule): { order: string; partner: string | null } {
  const [number, other] = r.key.split('|');
  const p = r.payload;
  const taxId = refValue(p[rule.partnerTaxId]) ?? other ?? null;
  const name = rule.partnerName === null ? null : str(p[rule.partnerName]);
  return { order: str(p[rule.number]) ?? number ?? r.key, partner: name ?? (taxId === null ? null : formatTaxId(taxId)) };
}

const byNumber = new Intl.Collator('pt-BR', { numeric: true, sensitivity: 'base' });

/** Separation lists first, then purchases; each by document number as a person counts (2 before 10), then partner. */
export function compareOrders(a: OrderLine, b: OrderLine): number {
  if (a.kind !== b.kind) return a.kind === 'picking' ? -1 : 1;
  return byNumber.compare(a.order, b.order) || byNumber.compare(a.partner ?? '', b.partner ?? '') || (a.sentAt < b.sentAt ? -1 : a.sentAt > b.sentAt ? 1 : 0);
}

const earliest = (a: string | null, b: string | null): string | null => (a === null ? b : b === null ? a : a < b ? a : b);

/** Every document sent, with the webhooks about it folded in (oldest event first). */
export async function buildOrders(journal: FileLedger & RecordQueue & WebhookInbox): Promise<OrderLine[]> {
  const byId = new Map<number, OrderLine>();
  const byWms = new Map<string, OrderLine>();
  const fileNames = new Map<number, string | null>();
  let afterId = 0;
  for (;;) {
    const rows: RecordRow[] = await journal.listRecords({ targets: [...ORDER_TARGETS], statuses: ['sent'], afterId, limit: 1000 });
    for (const r of rows) {
      const rule = specOf(r.target)?.order;
      if (!rule) continue;
      if (!fileNames.has(r.fileId)) fileNames.set(r.fileId, (await journal.getFile(r.fileId))?.name ?? null);
      const line: OrderLine = {
        kind: rule.kind,
        ...documentOf(r, rule),
        key: r.key,
        wmsId: r.wmsId,
        file: fileNames.get(r.fileId) ?? null,
        sentAt: r.updatedAt,
        separatingAt: null,
        packedAt: null,
        shippedAt: null,
        receivedAt: null,
        status: null,
        updatedAt: r.updatedAt,
      };
      byId.set(r.id, line);
      if (r.wmsId) byWms.set(r.wmsId.toLowerCase(), line);
    }
    if (rows.length < 1000) break;
    afterId = rows[rows.length - 1]!.id;
  }
  let after = 0;
  for (;;) {
    const events = await journal.listWebhookEvents({ afterId: after, limit: 1000 });
    for (const e of events) {
      after = e.id;
      let env: Record<string, unknown>;
      try {
        env = JSON.parse(e.body) as Record<string, unknown>;
      } catch {
        continue;
      }
      const data = (env['data'] && typeof env['data'] === 'object' ? env['data'] : env) as Record<string, unknown>;
      const ref = str(data['pickingListId'] ?? data['pickingListID'] ?? data['purchaseOrderId'] ?? data['purchaseOrderID']);
      const line = (e.recordId !== null ? byId.get(e.recordId) : undefined) ?? (ref ? byWms.get(ref.toLowerCase()) : undefined);
      if (!line) continue;
      const at = (k: string): string => str(data[k]) ?? str(env['occurredAt']) ?? e.receivedAt;
      switch (e.kind) {
        case 'order-status': {
          const s = str(data['pickingStatus']);
          if (s && s !== '0') line.separatingAt = earliest(line.separatingAt, at('changedAt'));
          if (s === '4') line.shippedAt = earliest(line.shippedAt, at('changedAt'));
          if (s === '7') line.packedAt = earliest(line.packedAt, at('changedAt'));
          if (s) line.status = s;
          line.updatedAt = at('changedAt') > line.updatedAt ? at('changedAt') : line.updatedAt;
          break;
        }
        case 'packing':
          line.packedAt = earliest(line.packedAt, at('packedAt'));
          break;
        case 'shipping':
          line.shippedAt = earliest(line.shippedAt, at('shippedAt'));
          break;
        case 'receipt':
        case 'receipt-status': {
          const s = str(data['receiptStatus']);
          if (s) line.status = s;
          if (e.kind === 'receipt' || s === '3') line.receivedAt = earliest(line.receivedAt, at(e.kind === 'receipt' ? 'endDate' : 'changedAt'));
          const t = at('changedAt');
          if (t > line.updatedAt) line.updatedAt = t;
          break;
        }
        default:
          break;
      }
    }
    if (events.length < 1000) break;
  }
  return [...byId.values()].sort(compareOrders);
}

/** The documents of one day (in `timeZone`): sent that day, or with news that day. */
export function ordersOfDay(lines: readonly OrderLine[], day: string, i18n: I18n): OrderLine[] {
  const d = (iso: string | null): string | null => {
    if (!iso) return null;
    const [dd, mm, yyyy] = i18n.date(iso).split('/');
    return `${yyyy}-${mm}-${dd}`;
  };
  return lines.filter((l) => [l.sentAt, l.separatingAt, l.packedAt, l.shippedAt, l.receivedAt, l.updatedAt].some((t) => d(t) === day));
}

function situation(l: OrderLine, i18n: I18n): string {
  if (l.status === null) return i18n.t('orders.status.sent');
  return i18n.t(l.kind === 'purchase' ? `orders.receipt.${l.status}` : `orders.picking.${l.status}`);
}

function columns(i18n: I18n): XlsxColumn[] {
  const c = (key: string, type: XlsxColumn['type']): XlsxColumn => ({ key, header: i18n.t(`orders.col.${key}`), type });
  return [
    c('kind', 'text'),
    c('order', 'text'),
    c('partner', 'text'),
    c('situation', 'text'),
    c('sentAt', 'datetime'),
    c('separatingAt', 'datetime'),
    c('packedAt', 'datetime'),
    c('shippedAt', 'datetime'),
    c('receivedAt', 'datetime'),
    c('updatedAt', 'datetime'),
    c('file', 'text'),
    c('wmsId', 'text'),
  ];
}

const TIME_KEYS = new Set(['sentAt', 'separatingAt', 'packedAt', 'shippedAt', 'receivedAt', 'updatedAt']);

/** Writes outbox/pedidos/<day>/pedidos.{html,csv,xlsx}. */
export async function writeOrdersView(
  outboxDir: string,
  lines: readonly OrderLine[],
  day: string,
  options: { locale?: Locale; timeZone?: string; csvFormat?: CsvFormatOptions; fileMode?: number } = {},
): Promise<{ html: string; csv: string; xlsx: string; rows: number }> {
  const i18n = createI18n(options.locale ?? 'pt-BR', options.timeZone ?? 'America/Sao_Paulo');
  const dir = join(outboxDir, 'pedidos', day);
  await mkdir(dir, { recursive: true });
  const paths = { html: join(dir, 'pedidos.html'), csv: join(dir, 'pedidos.csv'), xlsx: join(dir, 'pedidos.xlsx') };
  const cols = columns(i18n);
  const rows = lines.map((l) => ({ ...l, kind: i18n.t(`orders.kind.${l.kind}`), situation: situation(l, i18n) }));
  const w = createCsvWriter(paths.csv, {
    columns: cols.map((c) => c.header),
    dateColumns: cols.filter((c) => TIME_KEYS.has(c.key)).map((c) => c.header),
    format: { ...(options.csvFormat ?? {}), timeZone: options.csvFormat?.timeZone ?? i18n.timeZone },
    ...modeOption(options.fileMode),
  });
  try {
    for (const r of rows) w.write(Object.fromEntries(cols.map((c) => [c.header, (r as Record<string, unknown>)[c.key]])));
    await w.close();
  } catch (err) {
    await w.abort();
    throw err;
  }
  await writeXlsx(paths.xlsx, [{ name: i18n.t('orders.title'), columns: cols, rows }], { timeZone: i18n.timeZone, ...modeOption(options.fileMode) });
  // the page fits a laptop's screen: the WMS id (a 36-character UUID) is the number's tooltip there, not a column
  const htmlCols = cols.filter((c) => c.key !== 'wmsId');
  const cell = (r: Record<string, unknown>, c: XlsxColumn): string => {
    const v = r[c.key];
    if (v === null || v === undefined) return '<td class="z">–</td>';
    if (c.key === 'order') return `<td class="mono"${r['wmsId'] ? ` title="${escapeHtml(`${i18n.t('orders.col.wmsId')}: ${String(r['wmsId'])}`)}"` : ''}>${escapeHtml(v)}</td>`;
    return `<td${TIME_KEYS.has(c.key) ? ' class="t"' : c.key === 'file' ? ' class="f"' : ''}>${escapeHtml(TIME_KEYS.has(c.key) ? i18n.dateTime(String(v)) : v)}</td>`;
  };
  const html = `<!DOCTYPE html>
<html lang="${escapeHtml(i18n.locale)}">
<head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escapeHtml(`${i18n.t('orders.title')} · ${day}`)}</title>
<style>body{font:13px/1.4 "Segoe UI",system-ui,Roboto,Arial,sans-serif;color:#1c2430;margin:20px}h1{font-size:20px}
table{border-collapse:collapse;margin-top:14px;width:100%}th,td{border-bottom:1px solid #dfe3e8;padding:5px 8px;text-align:left;vertical-align:top}
th{background:#f0f2f5;font-size:12px}td.t{white-space:nowrap}td.f{overflow-wrap:anywhere;max-width:220px}
.mono{font-family:ui-monospace,Consolas,monospace}.z{color:#9aa5b1}.meta{color:#5b6775}</style></head>
<body>
<h1>${escapeHtml(i18n.t('orders.title'))} · ${escapeHtml(i18n.date(`${day}T12:00:00Z`))}</h1>
<p class="meta">${escapeHtml(i18n.t('orders.intro', { n: rows.length, zone: i18n.timeZone }))}</p>
<table><thead><tr>${htmlCols.map((c) => `<th>${escapeHtml(c.header)}</th>`).join('')}</tr></thead>
<tbody>${rows.map((r) => `<tr>${htmlCols.map((c) => cell(r as Record<string, unknown>, c)).join('')}</tr>`).join('')}</tbody></table>
</body>
</html>
`;
  await writeFileAtomic(paths.html, html, modeOption(options.fileMode));
  return { ...paths, rows: rows.length };
}

/** Today (or `at`) as yyyy-MM-dd in the time zone. */
export function dayIn(i18n: I18n, at: Date = new Date()): string {
  const [dd, mm, yyyy] = i18n.date(at).split('/');
  return `${yyyy}-${mm}-${dd}`;
}
