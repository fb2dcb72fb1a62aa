/**
 * The outbox's language layer: what people read (report, CSV/XLSX headers, outcome names, reasons, the
 * summary printed by `run`) in `outbox.locale`, with numbers and dates in that locale and times in
 * `outbox.timeZone`. Logs stay English. Messages come from per-language catalogs keyed by stable codes;
 * reasons are rendered from a record's Reason (code + parameters), never by matching message text.
 */
import type { Reason } from '../shared/reason.js';
import { wallClockText } from '../shared/time.js';
import { en } from './en.js';
import { ptBR } from './pt-BR.js';

export type Locale = 'pt-BR' | 'en';
export const DEFAULT_LOCALE: Locale = 'pt-BR';
export const DEFAULT_TIME_ZONE = 'America/Sao_Paulo';

export const CATALOGS: Record<Locale, Record<string, string>> = { 'pt-BR': ptBR, en };

export type Params = Record<string, string | number | undefined>;

export interface I18n {
  locale: Locale;
  timeZone: string;
  /** the message `key` with its `{params}`; a key with .one/.other variants is chosen by params.n */
  t(key: string, params?: Params): string;
  has(key: string): boolean;
  /** integer or decimal in the locale: 20.032 / 1.234,56 (pt-BR), 20,032 / 1,234.56 (en) */
  num(n: number, maxFractionDigits?: number): string;
  /** dd/MM/yyyy HH:mm (pt-BR, en-GB style for en) in the time zone */
  dateTime(iso: string | Date, seconds?: boolean): string;
  date(iso: string | Date): string;
  /** "3,4 s", "2 min 05 s" */
  duration(ms: number): string;
  outcome(o: string): string;
  /**
   * A reason in the locale: the template of its code, naming the source column(s) the person edits (`column`)
   * or else the field, with the value, the WMS field and the WMS message when `detail`; or `fallback` (the
   * English message) when the code has no template.
   */
  reason(reason: Reason | undefined | null, fallback?: string, detail?: boolean): string;
}

const cache = new Map<string, I18n>();

export function createI18n(locale: Locale = DEFAULT_LOCALE, timeZone: string = DEFAULT_TIME_ZONE): I18n {
  const k = `${locale}|${timeZone}`;
  const hit = cache.get(k);
  if (hit) return hit;
  const catalog = CATALOGS[locale];
  const plural = new Intl.PluralRules(locale);
  const intFmt = new Intl.NumberFormat(locale, { maximumFractionDigits: 0 });
  const decFmts = new Map<number, Intl.NumberFormat>();
  const parts = (d: Date): Record<string, string> => wallClockText(d.getTime(), timeZone);
  const toDate = (v: string | Date): Date => (v instanceof Date ? v : new Date(v));
  const num = (n: number, maxFractionDigits = 2): string => {
    if (!Number.isFinite(n)) return '-';
    if (Number.isInteger(n)) return intFmt.format(n);
    let f = decFmts.get(maxFractionDigits);
    if (!f) decFmts.set(maxFractionDigits, (f = new Intl.NumberFormat(locale, { maximumFractionDigits: maxFractionDigits })));
    return f.format(n);
  };
  const fill = (template: string, params: Params | undefined): string =>
    template.replace(/\{(\w+)\}/g, (_m, name: string) => {
      const v = params?.[name];
      if (v === undefined) return '';
      return typeof v === 'number' ? num(v) : v;
    });
  const t = (key: string, params?: Params): string => {
    let template: string | undefined;
    const n = params?.['n'];
    if (typeof n === 'number') {
      // CLDR puts 0 with 1 in Portuguese ("0 documento"); people write "0 documentos"
      const form = n === 0 && locale === 'pt-BR' ? 'other' : plural.select(n);
      template = catalog[`${key}.${form}`] ?? catalog[`${key}.other`];
    }
    template ??= catalog[key] ?? catalog[`${key}.other`] ?? en[key] ?? en[`${key}.other`] ?? key;
    return fill(template, params);
  };
  const i18n: I18n = {
    locale,
    timeZone,
    t,
    has: (key) => key in catalog || `${key}.other` in catalog,
    num,
    dateTime(iso, seconds = false) {
      const d = toDate(iso);
      if (Number.isNaN(d.getTime())) return String(iso);
      const p = parts(d);
      return `${p['day']}/${p['month']}/${p['year']} ${p['hour']}:${p['minute']}${seconds ? `:${p['second']}` : ''}`;
    },
    date(iso) {
      const d = toDate(iso);
      if (Number.isNaN(d.getTime())) return String(iso);
      const p = parts(d);
      return `${p['day']}/${p['month']}/${p['year']}`;
    },
    duration(ms) {
      if (!Number.isFinite(ms) || ms < 0) return '-';
      if (ms < 1000) return `${Math.round(ms)} ms`;
      if (ms < 60_000) return `${num(Math.round(ms / 100) / 10, 1)} s`;
      const s = Math.round(ms / 1000);
      if (s < 3600) return `${Math.floor(s / 60)} min ${String(s % 60).padStart(2, '0')} s`;
      return `${Math.floor(s / 3600)} h ${String(Math.floor((s % 3600) / 60)).padStart(2, '0')} min`;
    },
    outcome: (o) => (`outcome.${o}` in catalog ? catalog[`outcome.${o}`]! : o),
    reason(reason, fallback, detail = false) {
      if (!reason || !(`reason.${reason.code}` in catalog)) return fallback ?? t('reason.unknown');
      const p = reason.params ?? {};
      // a template naming the resource has a plain variant for reasons that do not know it (map-time lookups)
      // and a variant naming the record types of a multi-record file's line (orphan_item: `I` before any `C`)
      const key =
        p['recordType'] !== undefined && `reason.${reason.code}.typed` in catalog
          ? `reason.${reason.code}.typed`
          : p['resource'] === undefined && `reason.${reason.code}.plain` in catalog
            ? `reason.${reason.code}.plain`
            : `reason.${reason.code}`;
      const given = (name: string): string | undefined => (p[name] === undefined || p[name] === '' ? undefined : String(p[name]));
      const column = given('column');
      const field = given('field');
      // what the person edits: the source column(s) the mapping reads for the field, else the field
      const of = column ? t('reason.of.column', { column, n: column.split(', ').length }) : field ? t('reason.of.field', { field }) : t('reason.of.row');
      // a stable word saying why, with a sentence of its own (reason.refused.escapes)
      const why = given('why');
      const whyText = why !== undefined && `reason.${reason.code}.${why}` in catalog ? t(`reason.${reason.code}.${why}`) : '';
      let text = t(key, { ...p, of, why: whyText, field: field ?? '-', resource: p['resource'] ?? '-' });
      // a spreadsheet's value: where it is, as Excel names it
      if (p['cell'] !== undefined) text += t('reason.cell', { sheet: String(p['sheet'] ?? ''), cell: String(p['cell']) });
      if (detail) {
        const value = given('value');
        // the WMS's field name only as a detail, when the reason names the column
        const wmsField = column !== undefined && field !== undefined && field !== column ? field : undefined;
        if (value !== undefined && wmsField !== undefined) text += t('reason.valueWmsField', { value, field: wmsField });
        else if (value !== undefined) text += t('reason.value', { value });
        else if (wmsField !== undefined) text += t('reason.wmsField', { field: wmsField });
        if (p['message'] !== undefined && /^E_WMS_/.test(reason.code)) text += t('reason.wmsSaid', { message: String(p['message']) });
        if (typeof p['more'] === 'number' && p['more'] > 0)
          text += p['others'] !== undefined ? t('reason.moreIn', { n: p['more'], others: String(p['others']) }) : t('reason.more', { n: p['more'] });
      }
      return text;
    },
  };
  cache.set(k, i18n);
  return i18n;
}

/** Codes that mean "the WMS was not reachable or not answering" (an outage, never a data error). */
export function isOutageReason(reason: Reason | undefined | null): boolean {
  if (!reason) return false;
  const code = reason.code;
  if (code === 'E_WMS_NETWORK' || code === 'E_WMS_TIMEOUT' || code === 'E_WMS_RATE_LIMIT') return true;
  if (code === 'E_WMS_HTTP') {
    const s = Number(reason.params?.['status']);
    return s >= 500 || s === 408;
  }
  return false;
}
