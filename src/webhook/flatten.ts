/**
 * Flattening of webhook payloads to CSV rows for the kinds whose shape is known: the envelope
 * {eventId, kind, occurredAt, data} the embedded sandbox sends (docs/SANDBOX.md, docs/WEBHOOKS.md).
 * The interface does not show the real WMS's payloads, so every field is looked up under a few
 * spellings (data first, then the top level) and a missing field is an empty cell, never an error:
 * the JSONL file beside the CSV always has the whole payload. One row per item for item-bearing
 * events (per item of each volume for packing); an event without items gives one row. Pure.
 */

/** Columns every webhook CSV starts with (filled by the writer, not by the payload). */
export const CSV_COMMON_COLUMNS = ['received_at', 'kind', 'event_id', 'dedup_key', 'source_file', 'source_line'] as const;

type FieldSpec = readonly [column: string, ...candidates: string[]];

interface KindCsvSpec {
  /** per-event fields */
  doc: readonly FieldSpec[];
  /** optional grouping level (packing volumes): array field candidates and their fields */
  groups?: { arrays: readonly string[]; fields: readonly FieldSpec[] };
  /** item level: array field candidates (in the group when there is one, else in data) and fields */
  items?: { arrays: readonly string[]; fields: readonly FieldSpec[] };
}

const OCCURRED: FieldSpec = ['occurred_at', 'occurredAt', 'timestamp'];
const PO: FieldSpec = ['purchase_order_id', 'purchaseOrderId', 'purchaseOrderID', 'PurchaseOrderID'];
const NF: FieldSpec = ['nf', 'nf', 'invoiceNumber', 'invoice'];
const CODE_ERP: FieldSpec = ['code_erp', 'codeERP', 'codeErp'];
const RECEIPT_STATUS: FieldSpec = ['receipt_status', 'receiptStatus'];
const PREVIOUS: FieldSpec = ['previous_status', 'previousStatus'];
const CHANGED_AT: FieldSpec = ['changed_at', 'changedAt'];
const PL: FieldSpec = ['picking_list_id', 'pickingListId', 'pickingListID', 'PickingListID'];
const ORDER: FieldSpec = ['order', 'order', 'orderNumber'];
const PICKING_STATUS: FieldSpec = ['picking_status', 'pickingStatus'];
const PRODUCT: FieldSpec = ['product_id', 'productID', 'productId'];
const QTY: FieldSpec = ['quantity', 'quantity', 'qty'];
const LOT: FieldSpec = ['lot_number', 'lotNumber', 'lot'];
const ITEM_ID: FieldSpec = ['item_id', 'id', 'itemId', 'itemID'];

/**
 * Known shapes (the sandbox's; docs/WEBHOOKS.md lists them). Column names are snake_case and stable:
 * adding a field appends a column, never renames one.
 */
const SPECS: Record<string, KindCsvSpec> = {
  receipt: {
    doc: [
      OCCURRED,
      PO,
      NF,
      CODE_ERP,
      ['provider_id', 'providerID', 'providerId'],
      ['owner_id', 'ownersID', 'ownerID', 'ownerId'],
      ['warehouse_id', 'warehouseID', 'warehouseId'],
      RECEIPT_STATUS,
      ['start_date', 'startDate'],
      ['end_date', 'endDate'],
    ],
    items: {
      arrays: ['items', 'purchaseOrderItens'],
      fields: [ITEM_ID, PRODUCT, LOT, QTY, ['received', 'received', 'receivedQuantity']],
    },
  },
  'receipt-status': {
    doc: [OCCURRED, PO, NF, CODE_ERP, PREVIOUS, RECEIPT_STATUS, ['receipt_status_name', 'receiptStatusName'], CHANGED_AT],
  },
  'order-status': {
    doc: [OCCURRED, PL, ORDER, CODE_ERP, PREVIOUS, PICKING_STATUS, ['picking_status_name', 'pickingStatusName'], CHANGED_AT],
  },
  shipping: {
    doc: [
      OCCURRED,
      PL,
      ORDER,
      CODE_ERP,
      ['document', 'document'],
      ['shipping_company_id', 'shippingCompanyID', 'shippingCompanyId'],
      ['shipped_at', 'shippedAt'],
    ],
    items: {
      arrays: ['items', 'pickingItens'],
      fields: [ITEM_ID, PRODUCT, LOT, QTY, ['separate_quantity', 'separateQuantity', 'separatedQuantity']],
    },
  },
  packing: {
    doc: [OCCURRED, PL, ORDER, CODE_ERP, ['packed_at', 'packedAt'], ['volume_count', 'volumeCount']],
    groups: {
      arrays: ['volumes'],
      fields: [
        ['volume_number', 'volumeNumber', 'number'],
        ['package_code', 'packageCode', 'code'],
        ['weight', 'weight', 'grossWeight'],
      ],
    },
    items: { arrays: ['items'], fields: [PRODUCT, LOT, QTY] },
  },
  stock: {
    doc: [OCCURRED, ['position_at', 'positionAt'], ['filter_product_id', 'productId'], ['position_count', 'count'], ['truncated', 'truncated']],
    items: {
      arrays: ['positions', 'stocks', 'items'],
      fields: [
        ['warehouse_id', 'warehouseId', 'warehouseID'],
        ['warehouse_name', 'warehouseName'],
        ['owner_id', 'ownerId', 'ownerID'],
        ['owner_name', 'ownerName'],
        ['product_id', 'productId', 'productID'],
        ['product_code', 'productCode'],
        ['product_name', 'productName'],
        LOT,
        ['manufacturing_date', 'manufacturingDate'],
        ['expiration_date', 'expirationDate'],
        QTY,
        ['reserved', 'reserved'],
        ['material_status_id', 'materialStatusId', 'materialStatusID'],
        ['material_status_name', 'materialStatusName'],
        ['unit_measurement_id', 'unitMeasurementId'],
        ['unit_measurement_name', 'unitMeasurementName'],
      ],
    },
  },
};

function columnsOf(fields: readonly FieldSpec[] | undefined): string[] {
  return (fields ?? []).map((f) => f[0]);
}

/** Columns holding timestamps or dates (written in the CSV format's date format). */
export function csvDateColumns(columns: readonly string[]): string[] {
  return columns.filter((c) => c.endsWith('_at') || c.endsWith('_date'));
}

/** The CSV columns of a kind (stable: common columns, then event, group and item fields), or undefined when its shape is unknown. */
export function csvColumnsFor(kind: string): string[] | undefined {
  const spec = SPECS[kind];
  if (!spec) return undefined;
  return [...CSV_COMMON_COLUMNS, ...columnsOf(spec.doc), ...columnsOf(spec.groups?.fields), ...columnsOf(spec.items?.fields)];
}

function asObject(v: unknown): Record<string, unknown> | undefined {
  return v !== null && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : undefined;
}

/** A cell: scalars as they are, objects/arrays as compact JSON, absent as undefined. */
function cell(v: unknown): unknown {
  if (v === undefined || v === null) return undefined;
  if (typeof v === 'object') return JSON.stringify(v);
  return v;
}

function pick(scopes: ReadonlyArray<Record<string, unknown> | undefined>, fields: readonly FieldSpec[], into: Record<string, unknown>): void {
  for (const [column, ...candidates] of fields) {
    let value: unknown;
    outer: for (const scope of scopes) {
      if (!scope) continue;
      for (const name of candidates) {
        if (scope[name] !== undefined && scope[name] !== null) {
          value = scope[name];
          break outer;
        }
      }
    }
    const c = cell(value);
    if (c !== undefined) into[column] = c;
  }
}

function firstArray(scope: Record<string, unknown> | undefined, names: readonly string[]): unknown[] | undefined {
  if (!scope) return undefined;
  for (const n of names) {
    const v = scope[n];
    if (Array.isArray(v)) return v;
  }
  return undefined;
}

/**
 * The CSV rows of one event (without the common columns, which the writer adds). Empty when the
 * kind's shape is unknown or the payload is not an object.
 */
export function flattenEvent(kind: string, payload: unknown): Array<Record<string, unknown>> {
  const spec = SPECS[kind];
  const top = asObject(payload);
  if (!spec || !top) return [];
  const data = asObject(top['data']);
  const doc: Record<string, unknown> = {};
  pick([data, top], spec.doc, doc);

  const itemRows = (scope: Record<string, unknown> | undefined, base: Record<string, unknown>): Array<Record<string, unknown>> => {
    if (!spec.items) return [base];
    const items = firstArray(scope, spec.items.arrays);
    if (!items || items.length === 0) return [base];
    return items.map((item) => {
      const row = { ...base };
      pick([asObject(item)], spec.items?.fields ?? [], row);
      return row;
    });
  };

  if (spec.groups) {
    const groups = firstArray(data ?? top, spec.groups.arrays);
    if (!groups || groups.length === 0) return [doc];
    return groups.flatMap((g) => {
      const base = { ...doc };
      const group = asObject(g);
      pick([group], spec.groups?.fields ?? [], base);
      return itemRows(group, base);
    });
  }
  return itemRows(data ?? top, doc);
}
