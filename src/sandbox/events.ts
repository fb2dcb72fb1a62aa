/**
 * Warehouse events driven through the inspection API (POST /__sandbox/events/...): each changes the
 * state the way the warehouse would, then emits the matching webhooks. Payload shapes are the
 * sandbox's design (the spec does not show them); see docs/SANDBOX.md.
 */
import { z } from 'zod';
import { PickingStatusName, ReceiptStatusName } from '../wms/schemas.js';
import type { ApiContext } from './api.js';
import type { Rec } from './state.js';
import { forEachMatch } from './stock.js';
import { GUID_RE } from './validate.js';
import type { WebhookEmitter, WebhookKind } from './webhooks.js';

export interface EventResult {
  status: number;
  body: { ok: boolean; error?: string; events?: Array<{ kind: WebhookKind; eventId: string | null }> };
}

const Guid = z.string().regex(GUID_RE, 'must be a UUID (Guid)');
const ReceiveBody = z.strictObject({ purchaseOrderId: Guid });
const PickingStatusBody = z.strictObject({ pickingListId: Guid, status: z.enum(['1', '2', '3', '4', '5', '6', '7']) });
const StockBody = z.strictObject({ productId: Guid.optional() });

function bad(error: string, status = 400): EventResult {
  return { status, body: { ok: false, error } };
}

function issues(e: z.ZodError): string {
  return e.issues.map((i) => `${i.path.join('.') || 'body'}: ${i.message}`).join('; ');
}

export const STOCK_EVENT_MAX_POSITIONS = 1000;

/** The webhooks one event emits, in order, with the ids the emitter gave them. */
class Emitted {
  readonly events: Array<{ kind: WebhookKind; eventId: string | null }> = [];
  constructor(private readonly hooks: WebhookEmitter) {}

  emit(kind: WebhookKind, data: unknown): void {
    this.events.push({ kind, eventId: this.hooks.emit(kind, data)?.eventId ?? null });
  }

  reply(): EventResult {
    return { status: 200, body: { ok: true, events: this.events } };
  }
}

type EventRunner = (body: unknown, ctx: ApiContext, out: Emitted, now: string) => EventResult;

const EVENTS: Readonly<Record<string, EventRunner>> = {
  receive: receiveEvent,
  'picking-status': pickingStatusEvent,
  stock: stockEvent,
};

export function runEvent(name: string, body: unknown, ctx: ApiContext, hooks: WebhookEmitter): EventResult {
  const run = Object.hasOwn(EVENTS, name) ? EVENTS[name] : undefined;
  if (!run) return bad(`unknown event "${name}" (receive, picking-status, stock)`, 404);
  return run(body, ctx, new Emitted(hooks), new Date().toISOString());
}

/** A purchase order received in full: its items' lots, the stock they enter, the receipt webhooks. */
function receiveEvent(body: unknown, ctx: ApiContext, out: Emitted, now: string): EventResult {
  const r = ReceiveBody.safeParse(body);
  if (!r.success) return bad(issues(r.error));
  const po = ctx.index.get('PurchaseOrder', r.data.purchaseOrderId);
  if (!po) return bad(`PurchaseOrder with id ${r.data.purchaseOrderId} not found`, 404);
  const previous = String(po['receiptStatus'] ?? '1');
  if (previous === '3') return bad(`PurchaseOrder ${po.id} is already received`, 409);
  const items = po['purchaseOrderItens'] as Array<Record<string, unknown>>;
  for (const it of items) receiveItem(ctx, po, it);
  po['receiptStatus'] = '3';
  po['startDate'] = po['startDate'] ?? now;
  po['endDate'] = now;
  ctx.changed();
  out.emit('receipt', {
    purchaseOrderId: po.id,
    nf: po['nf'],
    codeERP: po['codeERP'],
    providerID: po['providerID'],
    ownersID: po['ownersID'],
    warehouseID: po['warehouseID'],
    receiptStatus: '3',
    startDate: po['startDate'],
    endDate: po['endDate'],
    items: items.map((it) => ({
      id: it['id'],
      productID: it['productID'],
      lotNumber: it['lotNumber'] ?? null,
      quantity: it['quantity'],
      received: it['received'],
      lotDetails: it['lotDetails'],
    })),
  });
  out.emit('receipt-status', {
    purchaseOrderId: po.id,
    nf: po['nf'],
    codeERP: po['codeERP'],
    previousStatus: previous,
    receiptStatus: '3',
    receiptStatusName: ReceiptStatusName['3'],
    changedAt: now,
  });
  return out.reply();
}

/** One item of a received order: received in full, one lot, and its goods in the stock of the order's warehouse and owner. */
function receiveItem(ctx: ApiContext, po: Rec, it: Record<string, unknown>): void {
  const wh = ctx.index.get('Warehouse', String(po['warehouseID']));
  const owner = ctx.index.get('Owners', String(po['ownersID']));
  const available = ctx.state.collections.MaterialStatus[0]!;
  const qty = Number(it['quantity']);
  const product = ctx.index.get('Product', String(it['productID']));
  const unit =
    (typeof it['unitMeasurementId'] === 'string' ? ctx.index.get('UnitMeasurement', it['unitMeasurementId']) : undefined) ??
    ctx.state.collections.UnitMeasurement.find((u) => u['symbol'] === product?.['unitmeasurement']);
  const status = (typeof it['materialStatusID'] === 'string' ? ctx.index.get('MaterialStatus', it['materialStatusID']) : undefined) ?? available;
  it['received'] = qty;
  it['lotDetails'] = [
    {
      lotNumber: it['lotNumber'] ?? null,
      quantity: qty,
      status: 1,
      seriesNumbers: [],
      weightVariable: 0,
      unitMeasurementId: unit?.id ?? null,
      unitMeasurementName: unit ? String(unit['name']) : null,
    },
  ];
  ctx.state.stock.push({
    warehouseId: String(po['warehouseID']),
    warehouseName: wh ? String(wh['name']) : null,
    ownerId: owner?.id ?? null,
    ownerName: owner ? String(owner['name']) : null,
    productId: String(it['productID']),
    productCode: product ? String(product['code']) : null,
    productName: product ? String(product['name']) : null,
    lotNumber: (it['lotNumber'] as string | null | undefined) ?? null,
    manufacturingDate: (it['manufacturingDate'] as string | null | undefined) ?? null,
    expirationDate: (it['expirationDate'] as string | null | undefined) ?? null,
    quantity: qty,
    reserved: 0,
    materialStatusId: status.id,
    materialStatusName: String(status['name']),
    unitMeasurementId: unit?.id ?? null,
    unitMeasurementName: unit ? String(unit['name']) : null,
  });
}

/** A picking list's new status: its items separated from status 2, the order-status webhook, shipping (4), packing (7). */
function pickingStatusEvent(body: unknown, ctx: ApiContext, out: Emitted, now: string): EventResult {
  const r = PickingStatusBody.safeParse(body);
  if (!r.success) return bad(issues(r.error));
  const pl = ctx.index.get('PickingList', r.data.pickingListId);
  if (!pl) return bad(`PickingList with id ${r.data.pickingListId} not found`, 404);
  const previous = String(pl['pickingStatus'] ?? '0');
  const status = r.data.status;
  pl['pickingStatus'] = status;
  const items = pl['pickingItens'] as Array<Record<string, unknown>>;
  if (Number(status) >= 2) {
    for (const it of items) {
      it['separateQuantity'] = it['quantity'];
      it['pendentQuantity'] = 0;
      it['pickingItemStatus'] = '2';
    }
  }
  ctx.changed();
  out.emit('order-status', {
    pickingListId: pl.id,
    order: pl['order'],
    codeERP: pl['codeERP'],
    previousStatus: previous,
    pickingStatus: status,
    pickingStatusName: PickingStatusName[status],
    changedAt: now,
  });
  if (status === '4') out.emit('shipping', shippingPayload(pl, items, now));
  if (status === '7') out.emit('packing', packingPayload(ctx, pl, items, now));
  return out.reply();
}

function shippingPayload(pl: Rec, items: Array<Record<string, unknown>>, now: string): unknown {
  return {
    pickingListId: pl.id,
    order: pl['order'],
    codeERP: pl['codeERP'],
    document: pl['document'] ?? null,
    shippingCompanyID: pl['shippingCompanyID'] ?? null,
    shippedAt: now,
    items: items.map((it) => ({
      id: it['id'],
      productID: it['productID'],
      lotNumber: it['lotNumber'] ?? null,
      quantity: it['quantity'],
      separateQuantity: it['separateQuantity'],
    })),
  };
}

/** The stock positions (of one product, or all), at most STOCK_EVENT_MAX_POSITIONS of them, as a stock webhook. */
function stockEvent(body: unknown, ctx: ApiContext, out: Emitted, now: string): EventResult {
  const r = StockBody.safeParse(body ?? {});
  if (!r.success) return bad(issues(r.error));
  if (r.data.productId && !ctx.index.has('Product', r.data.productId)) return bad(`Product with id ${r.data.productId} not found`, 404);
  const positions: unknown[] = [];
  let count = 0;
  forEachMatch(ctx.state, r.data.productId ? { productId: r.data.productId } : {}, (row) => {
    if (count < STOCK_EVENT_MAX_POSITIONS) positions.push(row);
    count++;
  });
  out.emit('stock', { productId: r.data.productId ?? null, positionAt: now, count, truncated: count > positions.length, positions });
  return out.reply();
}

/** One volume per two items; weight from the product weight times the quantity. */
function packingPayload(ctx: ApiContext, pl: Rec, items: Array<Record<string, unknown>>, now: string): unknown {
  const volumes: unknown[] = [];
  for (let i = 0; i < items.length; i += 2) {
    const group = items.slice(i, i + 2);
    let weight = 0;
    for (const it of group) weight += Number(ctx.index.get('Product', String(it['productID']))?.['weight'] ?? 0) * Number(it['quantity']);
    volumes.push({
      volumeNumber: volumes.length + 1,
      packageCode: `${String(pl['order'])}-V${String(volumes.length + 1).padStart(2, '0')}`,
      weight: Math.round(weight * 1000) / 1000,
      items: group.map((it) => ({ productID: it['productID'], lotNumber: it['lotNumber'] ?? null, quantity: it['quantity'] })),
    });
  }
  return { pickingListId: pl.id, order: pl['order'], codeERP: pl['codeERP'], packedAt: now, volumeCount: volumes.length, volumes };
}
