/**
 * The columns of every export, written out explicitly (never taken from the first record's keys): the
 * order is stable across runs, WMS versions and empty exports, and ERP import layouts can rely on it.
 * Names are the canonical spellings of src/wms/schemas.ts (the spec's field tables). Fields the WMS
 * sends beyond these are not exported.
 *
 * Row builders are pure: a record in, one row (an object with exactly the kind's columns, in order,
 * null where the record has no value) out. The same rows feed CSV, JSONL and JSON.
 */
import type * as S from '../wms/schemas.js';
import type { PullKind } from './types.js';

export type Row = Record<string, unknown>;

export interface ColumnSet {
  readonly columns: readonly string[];
  /** columns holding dates (formatted with the CSV date format) */
  readonly dateColumns: readonly string[];
}

const ADDRESS = ['postalCode', 'address', 'complement', 'number', 'district', 'city', 'state', 'country', 'phone', 'cellPhone', 'contact'] as const;

export const STOCK_COLUMNS = [
  'warehouseId',
  'warehouseName',
  'ownerId',
  'ownerName',
  'productId',
  'productCode',
  'productName',
  'lotNumber',
  'manufacturingDate',
  'expirationDate',
  'quantity',
  'reserved',
  'materialStatusId',
  'materialStatusName',
  'unitMeasurementId',
  'unitMeasurementName',
] as const;

export const INVENTORY_HEADER_FIELDS = [
  'id',
  'companyID',
  'branchID',
  'warehouseID',
  'startDate',
  'endDate',
  'name',
  'type',
  'situation',
  'accuracy',
  'adjustiment',
  'ownersID',
] as const;

export const INVENTORY_ITEM_FIELDS = [
  'id',
  'inventoryID',
  'positionID',
  'containerID',
  'productID',
  'quantity',
  'snapshotQuantity',
  'firstCount',
  'secondCount',
  'thirdCount',
  'integrationQuantity',
  'lotNumber',
  'manufacturingDate',
  'expirationDate',
  'situation',
  'codeAux',
] as const;

/** Inventory header fields repeated on every item line, prefixed `inventory_`. */
export const INVENTORY_PREFIX = 'inventory_';
export const INVENTORY_COLUMNS = [...INVENTORY_HEADER_FIELDS.map((f) => `${INVENTORY_PREFIX}${f}`), ...INVENTORY_ITEM_FIELDS];

export const WAREHOUSE_COLUMNS = ['id', 'companyID', 'branchID', 'codeERP', 'name', 'description', 'status'] as const;
export const SUB_WAREHOUSE_FIELDS = ['id', 'warehouseID', 'name', 'description', 'allowGenerateResponsible', 'status'] as const;
/** The parent warehouse's id, ERP code and name come first on every sub-warehouse line. */
export const SUB_WAREHOUSE_COLUMNS = ['warehouse_id', 'warehouse_codeERP', 'warehouse_name', ...SUB_WAREHOUSE_FIELDS];

/** Every kind's column set. */
export const COLUMN_SETS: Readonly<Record<PullKind, ColumnSet>> = {
  stock: { columns: STOCK_COLUMNS, dateColumns: ['manufacturingDate', 'expirationDate'] },
  'stock-search': { columns: STOCK_COLUMNS, dateColumns: ['manufacturingDate', 'expirationDate'] },
  inventory: {
    columns: INVENTORY_COLUMNS,
    dateColumns: ['inventory_startDate', 'inventory_endDate', 'manufacturingDate', 'expirationDate'],
  },
  'inventory-finished': {
    columns: INVENTORY_COLUMNS,
    dateColumns: ['inventory_startDate', 'inventory_endDate', 'manufacturingDate', 'expirationDate'],
  },
  company: { columns: ['id', 'name', 'cnpj', 'description', 'status'], dateColumns: [] },
  branch: { columns: ['id', 'companyID', 'name', 'cnpj', 'description', 'status'], dateColumns: [] },
  warehouse: { columns: WAREHOUSE_COLUMNS, dateColumns: [] },
  'sub-warehouses': { columns: SUB_WAREHOUSE_COLUMNS, dateColumns: [] },
  dock: { columns: ['id', 'warehouseID', 'positionID', 'name', 'operation', 'description'], dateColumns: [] },
  'logistics-profiles': { columns: ['id', 'name', 'input', 'output', 'mnemonic', 'isDefault', 'status'], dateColumns: [] },
  'material-statuses': {
    columns: ['id', 'name', 'description', 'allowStore', 'allowPicking', 'allowMove', 'allowShipping', 'allowInventory'],
    dateColumns: [],
  },
  owners: { columns: ['id', 'companyID', 'name', 'code', 'codeERP'], dateColumns: [] },
  providers: {
    columns: ['id', 'socialName', 'fantasyName', 'cnpj', 'codeERP', ...ADDRESS, 'description', 'mnemonic', 'ownerID'],
    dateColumns: [],
  },
  'shipping-companies': {
    columns: ['id', 'cnpj', 'codeERP', 'name', 'fantasyName', ...ADDRESS, 'status', 'description', 'ownerID'],
    dateColumns: [],
  },
  'conversion-factors': {
    columns: ['id', 'codeERP', 'productID', 'name', 'ean', 'unitMeasurementInputID', 'unitMeasurementInputCount', 'unitMeasurementOutputID', 'description'],
    dateColumns: [],
  },
};

/** One row with exactly `columns`, in order; a missing or undefined value becomes null. */
export function pickRow(record: object, columns: readonly string[]): Row {
  const src = record as Record<string, unknown>;
  const row: Row = {};
  for (const c of columns) {
    const v = src[c];
    row[c] = v === undefined ? null : v;
  }
  return row;
}

/**
 * One row per item, the inventory's header fields repeated (prefixed inventory_). An inventory without
 * items gives one row with its header fields and empty item fields, so it still shows in the file.
 */
export function inventoryRows(inv: S.InventoryRecord): Row[] {
  const src = inv as unknown as Record<string, unknown>;
  const header: Row = {};
  for (const f of INVENTORY_HEADER_FIELDS) {
    const v = src[f];
    header[`${INVENTORY_PREFIX}${f}`] = v === undefined ? null : v;
  }
  const items = Array.isArray(inv.itens) ? inv.itens : [];
  if (items.length === 0) return [{ ...header, ...pickRow({}, INVENTORY_ITEM_FIELDS) }];
  return items.map((item) => ({ ...header, ...pickRow(item, INVENTORY_ITEM_FIELDS) }));
}

/** A sub-warehouse row with its parent warehouse's id, ERP code and name in front. */
export function subWarehouseRow(warehouse: S.WarehouseRecord, sub: S.SubWarehouseRecord): Row {
  return {
    warehouse_id: warehouse.id,
    warehouse_codeERP: warehouse.codeERP ?? null,
    warehouse_name: warehouse.name ?? null,
    ...pickRow(sub, SUB_WAREHOUSE_FIELDS),
  };
}
