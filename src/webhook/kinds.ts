/**
 * Webhook kinds and how a request's kind is resolved. The interface names six webhooks (in
 * Portuguese in the vendor's UI) and shows neither their routes nor their payloads: the receiver
 * accepts the kind from the route (`/webhooks/<kind>`), from a header (`X-Wms-Event`) or from the
 * payload (`kind`, `event`, `type`, `eventType`), in a configurable order, and maps aliases onto the
 * six canonical names. Pure functions only.
 */

export const WEBHOOK_KINDS = ['receipt', 'receipt-status', 'shipping', 'order-status', 'packing', 'stock'] as const;
export type WebhookKind = (typeof WEBHOOK_KINDS)[number];

export type KindSource = 'route' | 'header' | 'payload';
export const DEFAULT_KIND_FROM: readonly KindSource[] = ['route', 'header', 'payload'];

/**
 * Aliases (after normalisation: lower case, accents removed, spaces and underscores as '-') mapped to
 * the canonical kinds. Options add to these; an option alias with the same name replaces the default.
 */
export const DEFAULT_KIND_ALIASES: Readonly<Record<string, WebhookKind>> = {
  recebimento: 'receipt',
  'situacao-recebimento': 'receipt-status',
  'situacao-de-recebimento': 'receipt-status',
  'receipt-situation': 'receipt-status',
  expedicao: 'shipping',
  saida: 'shipping',
  'saida-expedicao': 'shipping',
  outbound: 'shipping',
  'situacao-pedidos': 'order-status',
  'situacao-de-pedidos': 'order-status',
  embalagem: 'packing',
  estoque: 'stock',
};

/** Header names the kind may come in (first present wins). */
export const KIND_HEADERS = ['x-wms-event', 'x-wms-event-kind', 'x-event-type'] as const;
/** Payload fields (top level, strings only) the kind may come in (first present wins). */
export const KIND_PAYLOAD_FIELDS = ['kind', 'event', 'type', 'eventType'] as const;

/** Lower case, accents removed, runs of spaces/underscores/dots as '-', trimmed of '-'. */
export function normalizeKindName(name: string): string {
  return name
    .normalize('NFD')
    .replace(/[\u0300-\u036f]/g, '')
    .toLowerCase()
    .trim()
    .replace(/[\s_.]+/g, '-')
    .replace(/-+/g, '-')
    .replace(/^-|-$/g, '');
}

const CANONICAL: ReadonlySet<string> = new Set(WEBHOOK_KINDS);

export function isWebhookKind(name: string): name is WebhookKind {
  return CANONICAL.has(name);
}

/** The alias table the receiver uses: defaults plus the caller's, keys normalised, targets checked. */
export function resolveKindAliases(extra: Record<string, string> = {}): Map<string, WebhookKind> {
  const table = new Map<string, WebhookKind>();
  for (const [alias, kind] of Object.entries(DEFAULT_KIND_ALIASES)) table.set(alias, kind);
  for (const [alias, target] of Object.entries(extra)) {
    const kind = normalizeKindName(target);
    if (!isWebhookKind(kind)) {
      throw new RangeError(`webhook kind alias "${alias}" -> "${target}": not a kind (kinds: ${WEBHOOK_KINDS.join(', ')})`);
    }
    table.set(normalizeKindName(alias), kind);
  }
  return table;
}

/** A kind name as given -> the canonical kind, or undefined when it names none. */
export function resolveKindName(name: string, aliases: ReadonlyMap<string, WebhookKind>): WebhookKind | undefined {
  // the common case, a canonical name as given, skips the normalisation (5 regex passes per request)
  if (CANONICAL.has(name)) return name as WebhookKind;
  const n = normalizeKindName(name);
  if (isWebhookKind(n)) return n;
  return aliases.get(n);
}

export interface KindCandidates {
  /** the kind segment of the route, if the route has one */
  route?: string | undefined;
  /** the kind header's value, if present */
  header?: string | undefined;
  /** the parsed payload (anything JSON) */
  payload?: unknown;
}

export type KindResolution =
  | { ok: true; kind: WebhookKind; source: KindSource; given: string }
  | { ok: false; reason: 'missing' }
  | { ok: false; reason: 'unknown'; source: KindSource; given: string };

/** The kind a payload names in one of KIND_PAYLOAD_FIELDS, if any. */
export function payloadKindField(payload: unknown): string | undefined {
  if (payload === null || typeof payload !== 'object' || Array.isArray(payload)) return undefined;
  const obj = payload as Record<string, unknown>;
  for (const field of KIND_PAYLOAD_FIELDS) {
    const v = obj[field];
    if (typeof v === 'string' && v.trim() !== '') return v;
  }
  return undefined;
}

/**
 * Tries the sources in `order`; the FIRST source that gives a value decides: a value that names no
 * kind is 'unknown' (answered 404), it does not fall through to the next source, so a misrouted
 * sender is told instead of silently reclassified.
 */
export function resolveKind(candidates: KindCandidates, order: readonly KindSource[], aliases: ReadonlyMap<string, WebhookKind>): KindResolution {
  for (const source of order) {
    const given = source === 'route' ? candidates.route : source === 'header' ? candidates.header : payloadKindField(candidates.payload);
    if (given === undefined || given.trim() === '') continue;
    const kind = resolveKindName(given, aliases);
    if (kind) return { ok: true, kind, source, given };
    return { ok: false, reason: 'unknown', source, given };
  }
  return { ok: false, reason: 'missing' };
}
