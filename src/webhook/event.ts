/**
 * What the receiver reads from one webhook request besides its kind: the sender's event id (for
 * idempotency), the dedup key, and the WMS ids it refers to (to link it to the ERP file and line that
 * created the document). Pure functions.
 */
import { createHash } from 'node:crypto';

/** Headers that may carry the sender's event id (first present wins). */
export const EVENT_ID_HEADERS = ['x-wms-event-id', 'x-event-id', 'x-webhook-id'] as const;
/** Top-level payload fields that may carry the event id (first present wins). */
export const EVENT_ID_FIELDS = ['eventId', 'eventID', 'event_id', 'EventId', 'id', 'uuid'] as const;

const MAX_EVENT_ID_LENGTH = 200;

function asId(v: unknown): string | undefined {
  if (typeof v === 'number' && Number.isFinite(v)) return String(v);
  if (typeof v !== 'string') return undefined;
  const s = v.trim();
  if (s === '' || s.length > MAX_EVENT_ID_LENGTH) return undefined;
  return s;
}

/**
 * The sender's event id: the X-Wms-Event-Id header (or one of EVENT_ID_HEADERS) first, then the
 * payload's top-level eventId / id / event_id / ... An id longer than 200 characters is ignored (the
 * body hash is used instead) so a hostile sender cannot grow the dedup index without bound.
 */
export function extractEventId(headers: Record<string, string | string[] | undefined>, payload: unknown): string | undefined {
  for (const name of EVENT_ID_HEADERS) {
    const raw = headers[name];
    const id = asId(Array.isArray(raw) ? raw[0] : raw);
    if (id) return id;
  }
  if (payload !== null && typeof payload === 'object' && !Array.isArray(payload)) {
    const obj = payload as Record<string, unknown>;
    for (const field of EVENT_ID_FIELDS) {
      const id = asId(obj[field]);
      if (id) return id;
    }
  }
  return undefined;
}

/**
 * The journal's dedup key: the sender's event id as given when there is one; otherwise
 * `sha256:<hex of kind + "\n" + raw body>`, so an exact resend of an id-less event is stored once.
 */
export function computeDedupKey(kind: string, rawBody: Buffer | string, eventId: string | undefined): string {
  if (eventId !== undefined) return eventId;
  const h = createHash('sha256');
  h.update(kind);
  h.update('\n');
  h.update(rawBody);
  return `sha256:${h.digest('hex')}`;
}

/** Field names that hold the WMS id of a document wmsbridge sent, most specific first. */
export const LINK_FIELDS = ['purchaseOrderId', 'purchaseOrderID', 'PurchaseOrderID', 'pickingListId', 'pickingListID', 'PickingListID'] as const;

/**
 * The WMS id of the document (purchase order or picking list) the event concerns, looked up at the
 * top level of the payload and in its `data` object. Undefined when it names none (stock events).
 */
export function extractLinkId(payload: unknown): string | undefined {
  const scopes: unknown[] = [payload];
  if (payload !== null && typeof payload === 'object' && !Array.isArray(payload)) {
    scopes.push((payload as Record<string, unknown>)['data']);
  }
  for (const scope of scopes) {
    if (scope === null || typeof scope !== 'object' || Array.isArray(scope)) continue;
    const obj = scope as Record<string, unknown>;
    for (const field of LINK_FIELDS) {
      const id = asId(obj[field]);
      if (id) return id;
    }
  }
  return undefined;
}
