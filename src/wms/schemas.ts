/**
 * The WMS interface model (../shared/wms-interface.md), as zod schemas. TypeScript types are inferred
 * from these schemas and never written twice.
 *
 * Two families of schemas per resource:
 * - `*Create` / `*Update` / request schemas: what wmsbridge SENDS. Strict (unknown keys refused), one
 *   spelling per field: the spelling of the spec's field table (see docs/INTERFACE-DECISIONS.md).
 * - `*Record` schemas: what wmsbridge READS. Lenient: unknown keys are kept, and every known spelling
 *   of a field (companyId/companyID, ownerID/ownersID, dockID/docksID, ...) is normalised to the
 *   canonical one before validation (`readable()`).
 *
 * Where the spec says "Required flags: not shown", the strict, safe choice is made here (the fields
 * without which the record cannot mean anything are required) and written down in the decisions doc.
 */
import { z } from 'zod';

// ---------------------------------------------------------------------------------------------
// Scalars
// ---------------------------------------------------------------------------------------------

/** Guid: a UUID string (any version; the spec only says "UUID string"). */
export const Guid = z.string().regex(/^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$/, 'must be a UUID (Guid)');
export type Guid = z.infer<typeof Guid>;

/**
 * DateTime: ISO 8601 (with a trailing Z, an offset or none) or the field tables' "YYYY-MM-DD HH:mm:SS".
 * A bare date (YYYY-MM-DD) is accepted too: lot and expiry dates are dates.
 */
export const DateTime = z
  .string()
  .regex(
    /^\d{4}-\d{2}-\d{2}(?:[T ]\d{2}:\d{2}(?::\d{2}(?:\.\d{1,7})?)?(?:Z|[+-]\d{2}:?\d{2})?)?$/,
    'must be a date-time (YYYY-MM-DDTHH:mm:ss[.sss][Z], YYYY-MM-DD HH:mm:SS or YYYY-MM-DD)',
  );
/** Status of master data and documents: 0 inactive, 1 active. Senders always send 1. */
export const Status = z.union([z.literal(0), z.literal(1)]);
export const SendStatus = z.literal(1);
const Num = z.number().finite();
const NonNegNum = z.number().finite().nonnegative();
const Str = z.string();
const ReqStr = z.string().trim().min(1, 'must not be empty');

// ---------------------------------------------------------------------------------------------
// States (the spec's "States and transitions" table). Typed String on the wire, numeric codes.
// ---------------------------------------------------------------------------------------------

export const PickingStatus = z.enum(['0', '1', '2', '3', '4', '5', '6', '7']);
export const PickingStatusName = {
  '0': 'Pending',
  '1': 'Separating',
  '2': 'Separated / pending shipping',
  '3': 'Shipping',
  '4': 'Shipped',
  '5': 'Awaiting packing',
  '6': 'Packing in progress',
  '7': 'Packing complete',
} as const;
export const PickingItemStatus = z.enum(['0', '1', '2', '3']);
export const ReceiptStatus = z.enum(['1', '2', '3']);
export const ReceiptStatusName = { '1': 'Waiting / pending', '2': 'Receiving', '3': 'Received' } as const;

/** PickingList.priority: 0 Low, 1 Normal, 2 High, 3 Urgent. */
export const Priority = z.union([z.literal(0), z.literal(1), z.literal(2), z.literal(3)]);
/** PickingList.type: 0 Sales, 1 Transfer, 2 Outbound with return, 3 Supplier return. */
export const PickingType = z.union([z.literal(0), z.literal(1), z.literal(2), z.literal(3)]);
/** PickingList.shippingType: 0 CIF, 1 FOB, 2 third party, 3 own by sender, 4 own by recipient. */
export const ShippingType = z.union([z.literal(0), z.literal(1), z.literal(2), z.literal(3), z.literal(4)]);
/** PickingList.separationType: 0 Standard, 1 Fused. */
export const SeparationType = z.union([z.literal(0), z.literal(1)]);
/** PurchaseOrder.receiptType: 0 Standard/receiving, 1 Return. */
export const ReceiptType = z.union([z.literal(0), z.literal(1)]);

// ---------------------------------------------------------------------------------------------
// Spellings: every alias the spec uses, mapped to the one spelling wmsbridge sends.
// ---------------------------------------------------------------------------------------------

/**
 * Explicit aliases that differ by more than letter case. Case-only variants (companyId vs companyID)
 * are matched case-insensitively by `readable()` against the schema's own keys.
 */
export const FIELD_ALIASES: Readonly<Record<string, readonly string[]>> = {
  ownerID: ['ownersID', 'ownersId', 'ownerId'],
  ownersID: ['ownerID', 'ownerId', 'ownersId'],
  ownerId: ['ownerID', 'ownersID', 'ownersId'],
  dockID: ['docksID', 'docksId', 'dockId'],
  docksID: ['dockID', 'dockId', 'docksId'],
};

/**
 * Wraps an object schema for reading: keys are normalised to the schema's spelling (case-insensitive,
 * plus FIELD_ALIASES) before validation, and unknown keys are kept (a real WMS may send more fields).
 */
export function readable<S extends z.ZodRawShape>(shape: S) {
  const obj = z.looseObject(shape);
  const canonical = new Map<string, string>();
  for (const key of Object.keys(shape)) {
    canonical.set(key.toLowerCase(), key);
    for (const alias of FIELD_ALIASES[key] ?? []) {
      if (!canonical.has(alias.toLowerCase())) canonical.set(alias.toLowerCase(), key);
    }
  }
  return z.preprocess((input) => normalizeKeys(input, canonical), obj);
}

/** Renames keys to their canonical spelling; the exact spelling wins when both are present. */
export function normalizeKeys(input: unknown, canonical: ReadonlyMap<string, string>): unknown {
  if (input === null || typeof input !== 'object' || Array.isArray(input)) return input;
  const src = input as Record<string, unknown>;
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(src)) {
    const target = canonical.get(key.toLowerCase()) ?? key;
    if (target !== key && Object.prototype.hasOwnProperty.call(src, target)) {
      // the canonical spelling is present too: keep it, keep the variant as an unknown key
      out[key] = value;
      continue;
    }
    out[target] = value;
  }
  return out;
}

// ---------------------------------------------------------------------------------------------
// Envelopes
// ---------------------------------------------------------------------------------------------

export function singleEnvelope<T extends z.ZodType>(data: T) {
  return z.looseObject({
    code: z.number(),
    message: z.string().nullish(),
    data: data,
    error: z.string().nullish(),
  });
}
export function listEnvelope<T extends z.ZodType>(item: T) {
  return z.looseObject({
    code: z.number(),
    message: z.string().nullish(),
    count: z.number(),
    totalPages: z.number(),
    pagingLimit: z.number(),
    pagingIndex: z.number(),
    data: z.array(item),
    error: z.string().nullish(),
  });
}

// ---------------------------------------------------------------------------------------------
// Authentication
// ---------------------------------------------------------------------------------------------

export const AuthorizeRequest = z.strictObject({ accessKeyID: ReqStr, secretKey: ReqStr });
export const RefreshTokenRequest = z.strictObject({ accessKeyID: ReqStr, dataRefreshToken: ReqStr });
export const TokenPair = z.looseObject({ token: ReqStr, refreshToken: ReqStr });
export type AuthorizeRequest = z.infer<typeof AuthorizeRequest>;
export type RefreshTokenRequest = z.infer<typeof RefreshTokenRequest>;
export type TokenPair = z.infer<typeof TokenPair>;

// ---------------------------------------------------------------------------------------------
// Master data the ERP sends
// ---------------------------------------------------------------------------------------------

const addressShape = {
  postalCode: Str.optional(),
  address: Str.optional(),
  complement: Str.optional(),
  number: Str.optional(),
  district: Str.optional(),
  city: Str.optional(),
  state: Str.optional(),
  country: Str.optional(),
  phone: Str.optional(),
  cellPhone: Str.optional(),
  contact: Str.optional(),
};

/** UnitMeasurement. Required flags not shown: name, symbol and status are required (decision D-REQ). */
export const UnitMeasurementCreate = z.strictObject({
  name: ReqStr,
  symbol: ReqStr,
  codeERP: Str.optional(),
  description: Str.optional(),
  status: SendStatus,
});
export const UnitMeasurementRecord = readable({
  id: Guid,
  name: Str,
  symbol: Str,
  codeERP: Str.nullish(),
  description: Str.nullish(),
  status: Status,
});

/** Category. Required flags not shown: name and status are required (decision D-REQ). */
export const CategoryCreate = z.strictObject({
  name: ReqStr,
  codeERP: Str.optional(),
  description: Str.optional(),
  status: SendStatus,
});
export const CategoryRecord = readable({
  id: Guid,
  name: Str,
  codeERP: Str.nullish(),
  description: Str.nullish(),
  status: Status,
});

/** Family: categoryID, name and status required (field table). */
export const FamilyCreate = z.strictObject({
  name: ReqStr,
  categoryID: Guid,
  codeERP: Str.optional(),
  description: Str.optional(),
  status: SendStatus,
});
export const FamilyRecord = readable({
  id: Guid,
  categoryID: Guid,
  name: Str,
  codeERP: Str.nullish(),
  description: Str.nullish(),
  status: Status,
});

/** Product (field table). */
export const ProductCreate = z.strictObject({
  code: ReqStr,
  codeERP: Str.optional(),
  name: ReqStr,
  categoryID: Guid,
  familyID: Guid,
  logisticsProfileID: Guid,
  expeditionProfileID: Guid.optional(),
  unitmeasurement: ReqStr,
  ncm: Str.optional(),
  barCode: Str.optional(),
  weight: NonNegNum.optional(),
  brand: Str.optional(),
  description: Str.optional(),
  status: SendStatus,
});
export const ProductRecord = readable({
  id: Guid,
  code: Str,
  codeERP: Str.nullish(),
  name: Str,
  categoryID: Guid,
  familyID: Guid,
  logisticsProfileID: Guid,
  expeditionProfileID: Guid.nullish(),
  unitmeasurement: Str,
  ncm: Str.nullish(),
  barCode: Str.nullish(),
  weight: Num.nullish(),
  brand: Str.nullish(),
  description: Str.nullish(),
  status: Status,
  color: Str.nullish(),
  validity: Num.nullish(),
});

/**
 * ConversionFactor. Required flags not shown: productID, both unit ids and the input count are
 * required, the count must be positive (decision D-REQ).
 */
const conversionFactorShape = {
  codeERP: Str.optional(),
  productID: Guid,
  name: Str.optional(),
  ean: Str.optional(),
  unitMeasurementInputID: Guid,
  unitMeasurementInputCount: z.number().finite().positive(),
  unitMeasurementOutputID: Guid,
  description: Str.optional(),
};
export const ConversionFactorCreate = z.strictObject(conversionFactorShape);
export const ConversionFactorUpdate = z.strictObject({ id: Guid, ...conversionFactorShape });
export const ConversionFactorRecord = readable({
  id: Guid,
  codeERP: Str.nullish(),
  productID: Guid,
  name: Str.nullish(),
  ean: Str.nullish(),
  unitMeasurementInputID: Guid,
  unitMeasurementInputCount: Num,
  unitMeasurementOutputID: Guid,
  description: Str.nullish(),
});

/** ShippingCompany (field table: cnpj, name, status required). */
const shippingCompanyShape = {
  cnpj: ReqStr,
  codeERP: Str.optional(),
  name: ReqStr,
  fantasyName: Str.optional(),
  ...addressShape,
  status: SendStatus,
  description: Str.optional(),
  ownerID: Guid.optional(),
};
export const ShippingCompanyCreate = z.strictObject(shippingCompanyShape);
export const ShippingCompanyUpdate = z.strictObject({ id: Guid, ...shippingCompanyShape });
export const ShippingCompanyRecord = readable({
  id: Guid,
  cnpj: Str,
  codeERP: Str.nullish(),
  name: Str,
  fantasyName: Str.nullish(),
  status: Status,
  description: Str.nullish(),
  ownerID: Guid.nullish(),
});

/**
 * Provider (field table: socialName and cnpj required). The table has no status field; wmsbridge does
 * not send one (strict: the field is not in the table).
 */
const providerShape = {
  socialName: ReqStr,
  fantasyName: Str.optional(),
  cnpj: ReqStr,
  codeERP: Str.optional(),
  ...addressShape,
  description: Str.optional(),
  mnemonic: Str.optional(),
  ownerID: Guid.optional(),
};
export const ProviderCreate = z.strictObject(providerShape);
export const ProviderUpdate = z.strictObject({ id: Guid, ...providerShape });
export const ProviderRecord = readable({
  id: Guid,
  socialName: Str,
  fantasyName: Str.nullish(),
  cnpj: Str,
  codeERP: Str.nullish(),
  description: Str.nullish(),
  mnemonic: Str.nullish(),
  ownerID: Guid.nullish(),
});

/** Owners (field table: companyID, name, code required). */
export const OwnerCreate = z.strictObject({
  companyID: Guid,
  name: ReqStr,
  code: ReqStr,
  codeERP: Str.optional(),
});
export const OwnerRecord = readable({
  id: Guid,
  companyID: Guid,
  name: Str,
  code: Str,
  codeERP: Str.nullish(),
});

// ---------------------------------------------------------------------------------------------
// Documents
// ---------------------------------------------------------------------------------------------

/** PickingList item. Required flags not shown: productID and a positive quantity (decision D-REQ). */
export const PickingItemCreate = z.strictObject({
  productID: Guid,
  lotNumber: Str.optional(),
  saleValue: Num.optional(),
  quantity: z.number().finite().positive(),
  pickingItemStatus: PickingItemStatus.default('0'),
  status: SendStatus,
  aux01: Str.optional(),
  aux02: Str.optional(),
  aux03: Str.optional(),
});

/**
 * PickingList. Required flags not shown: the FKs that place the order (company, branch, warehouse,
 * owner), order, codeERP and at least one item are required (decision D-REQ). codeERP is typed Guid
 * in the field table: wmsbridge derives a name-based UUID (v5) from the ERP key (decision D-CODEERP).
 */
export const PickingListCreate = z.strictObject({
  companyID: Guid,
  branchID: Guid,
  warehouseID: Guid,
  dockID: Guid.optional(),
  ownerID: Guid,
  order: ReqStr,
  codeERP: Guid,
  registrationDate: DateTime.optional(),
  pickingDate: DateTime.optional(),
  pickingItens: z.array(PickingItemCreate).min(1, 'a picking list needs at least one item'),
  pickingStatus: PickingStatus.default('0'),
  status: SendStatus,
  grouped: Num.optional(),
  document: Str.optional(),
  marketplace: Str.optional(),
  clientName: Str.optional(),
  clientAddress: Str.optional(),
  country: Str.optional(),
  state: Str.optional(),
  city: Str.optional(),
  district: Str.optional(),
  street: Str.optional(),
  number: Str.optional(),
  complement: Str.optional(),
  priority: Priority.optional(),
  // interface defaults (required flags not shown, obvious default: 0 Sales, 0 Standard), like pickingStatus
  type: PickingType.default(0),
  shippingCompanyID: Guid.optional(),
  awaitCompleteReserve: z.boolean().optional(),
  shippingType: ShippingType.optional(),
  separationType: SeparationType.default(0),
  finishCallBack: z.literal(false).default(false),
});
export const PickingItemRecord = readable({
  id: Guid.optional(),
  pickingListID: Guid.nullish(),
  productID: Guid,
  lotNumber: Str.nullish(),
  saleValue: Num.nullish(),
  quantity: Num,
  pickingItemStatus: Str.nullish(),
  status: Status.nullish(),
  aux01: Str.nullish(),
  aux02: Str.nullish(),
  aux03: Str.nullish(),
  pendentQuantity: Num.nullish(),
  separateQuantity: Num.nullish(),
  origin: Str.nullish(),
  expeditionProfileID: Guid.nullish(),
});
export const PickingListRecord = readable({
  id: Guid,
  description: Str.nullish(),
  companyID: Guid,
  branchID: Guid,
  warehouseID: Guid,
  dockID: Guid.nullish(),
  ownerID: Guid.nullish(),
  order: Str,
  codeERP: Str.nullish(),
  registrationDate: Str.nullish(),
  pickingDate: Str.nullish(),
  pickingItens: z.array(PickingItemRecord),
  pickingStatus: Str.nullish(),
  status: Status.nullish(),
  priority: Num.nullish(),
  type: Num.nullish(),
  shippingCompanyID: Guid.nullish(),
  shippingType: Num.nullish(),
  separationType: Num.nullish(),
});

/** PurchaseOrder item. Required flags not shown: productID and a positive quantity (decision D-REQ). */
export const PurchaseOrderItemCreate = z.strictObject({
  productID: Guid,
  lotNumber: Str.optional(),
  manufacturingDate: DateTime.optional(),
  expirationDate: DateTime.optional(),
  origin: Str.optional(),
  quantity: z.number().finite().positive(),
  status: SendStatus,
  positionCode: Str.optional(),
  aux01: Str.optional(),
  aux02: Str.optional(),
  aux03: Str.optional(),
  materialStatusID: Guid.optional(),
  unitMeasurementId: Guid.optional(),
});

/**
 * PurchaseOrder (inbound invoice). Required flags not shown: company, branch, warehouse, provider,
 * owner, nf, codeERP and at least one item (decision D-REQ). receiptStatus defaults to "1" (waiting).
 */
export const PurchaseOrderCreate = z.strictObject({
  companyID: Guid,
  branchID: Guid,
  warehouseID: Guid,
  docksID: Guid.optional(),
  nf: ReqStr,
  codeERP: Guid,
  registrationDate: DateTime.optional(),
  receiptDate: DateTime.optional(),
  purchaseOrderItens: z.array(PurchaseOrderItemCreate).min(1, 'a purchase order needs at least one item'),
  providerID: Guid,
  receiptStatus: ReceiptStatus.default('1'),
  receiptType: ReceiptType.default(0),
  status: SendStatus,
  ownersID: Guid,
  description: Str.optional(),
  finishCallBack: z.literal(false).default(false),
});
export const LotDetail = readable({
  lotNumber: Str.nullish(),
  quantity: Num.nullish(),
  status: Num.nullish(),
  seriesNumbers: z.array(Str).nullish(),
  weightVariable: Num.nullish(),
  unitMeasurementId: Guid.nullish(),
  unitMeasurementName: Str.nullish(),
});
export const PurchaseOrderItemRecord = readable({
  id: Guid.optional(),
  purchaseOrderID: Guid.nullish(),
  productID: Guid,
  lotNumber: Str.nullish(),
  manufacturingDate: Str.nullish(),
  expirationDate: Str.nullish(),
  origin: Str.nullish(),
  quantity: Num,
  status: Status.nullish(),
  positionCode: Str.nullish(),
  materialStatusID: Guid.nullish(),
  unitMeasurementId: Guid.nullish(),
  received: Num.nullish(),
  unitaryValue: Num.nullish(),
  saleValue: Num.nullish(),
  receivingEan: Str.nullish(),
  unitMeasurementName: Str.nullish(),
  lotDetails: z.array(LotDetail).nullish(),
});
export const PurchaseOrderRecord = readable({
  id: Guid,
  companyID: Guid,
  branchID: Guid,
  warehouseID: Guid,
  docksID: Guid.nullish(),
  nf: Str,
  codeERP: Str.nullish(),
  registrationDate: Str.nullish(),
  receiptDate: Str.nullish(),
  startDate: Str.nullish(),
  endDate: Str.nullish(),
  purchaseOrderItens: z.array(PurchaseOrderItemRecord),
  providerID: Guid,
  receiptStatus: Str.nullish(),
  receiptType: Num.nullish(),
  status: Status.nullish(),
  ownersID: Guid.nullish(),
  description: Str.nullish(),
  document: Str.nullish(),
});

// ---------------------------------------------------------------------------------------------
// Reference data (read only)
// ---------------------------------------------------------------------------------------------

export const CompanyRecord = readable({
  id: Guid,
  name: Str,
  cnpj: Str.nullish(),
  description: Str.nullish(),
  status: Status.nullish(),
});
export const BranchRecord = readable({
  id: Guid,
  companyID: Guid,
  name: Str,
  cnpj: Str.nullish(),
  description: Str.nullish(),
  status: Status.nullish(),
});
export const WarehouseRecord = readable({
  id: Guid,
  companyID: Guid,
  branchID: Guid,
  codeERP: Str.nullish(),
  name: Str,
  description: Str.nullish(),
  status: Status.nullish(),
});
export const SubWarehouseRecord = readable({
  id: Guid,
  warehouseID: Guid,
  name: Str,
  description: Str.nullish(),
  allowGenerateResponsible: z.boolean().nullish(),
  status: Status.nullish(),
});
export const DockRecord = readable({
  id: Guid,
  warehouseID: Guid,
  positionID: Guid.nullish(),
  name: Str,
  operation: Num.nullish(),
  description: Str.nullish(),
});
export const LogisticsProfileRecord = readable({
  id: Guid,
  name: Str,
  input: z.boolean().nullish(),
  output: z.boolean().nullish(),
  mnemonic: Str,
  isDefault: z.boolean().nullish(),
  status: Status.nullish(),
});
export const MaterialStatusRecord = readable({
  id: Guid,
  name: Str,
  description: Str.nullish(),
  allowStore: z.boolean().nullish(),
  allowPicking: z.boolean().nullish(),
  allowMove: z.boolean().nullish(),
  allowShipping: z.boolean().nullish(),
  allowInventory: z.boolean().nullish(),
});
export const InventoryItemRecord = readable({
  id: Guid,
  inventoryID: Guid,
  positionID: Guid.nullish(),
  containerID: Guid.nullish(),
  productID: Guid,
  quantity: Num.nullish(),
  snapshotQuantity: Num.nullish(),
  firstCount: Num.nullish(),
  secondCount: Num.nullish(),
  thirdCount: Num.nullish(),
  integrationQuantity: Num.nullish(),
  lotNumber: Str.nullish(),
  manufacturingDate: Str.nullish(),
  expirationDate: Str.nullish(),
  situation: Num.nullish(),
  codeAux: Str.nullish(),
});
export const InventoryRecord = readable({
  id: Guid,
  companyID: Guid.nullish(),
  branchID: Guid.nullish(),
  warehouseID: Guid.nullish(),
  startDate: Str.nullish(),
  endDate: Str.nullish(),
  name: Str.nullish(),
  type: Num.nullish(),
  situation: Num.nullish(),
  accuracy: Num.nullish(),
  adjustiment: z.boolean().nullish(),
  ownersID: Guid.nullish(),
  itens: z.array(InventoryItemRecord).default([]),
});

// ---------------------------------------------------------------------------------------------
// Stock
// ---------------------------------------------------------------------------------------------

export const StockRecord = readable({
  warehouseId: Guid,
  warehouseName: Str.nullish(),
  ownerId: Guid.nullish(),
  ownerName: Str.nullish(),
  productId: Guid,
  productCode: Str.nullish(),
  productName: Str.nullish(),
  lotNumber: Str.nullish(),
  manufacturingDate: Str.nullish(),
  expirationDate: Str.nullish(),
  quantity: Num,
  reserved: Num.nullish(),
  materialStatusId: Guid.nullish(),
  materialStatusName: Str.nullish(),
  unitMeasurementId: Guid.nullish(),
  unitMeasurementName: Str.nullish(),
});

/** GET /open/v1/Stock/search body: every filter optional. */
export const StockSearchFilters = z.strictObject({
  warehouseId: Guid.optional(),
  ownerId: Guid.optional(),
  productId: Guid.optional(),
  lotNumber: Str.optional(),
  manufacturingDate: DateTime.optional(),
  expirationDate: DateTime.optional(),
  materialStatusId: Guid.optional(),
  containerCode: Str.optional(),
  unitMeasurementId: Guid.optional(),
});

/** PUT /open/v1/Stock/lock and /unlock body. */
export const StockLockRequest = z.strictObject({
  warehouseId: Guid,
  materialStatusId: Guid,
  productId: Guid,
  ownerId: Guid.optional(),
  lotNumber: Str.optional(),
  manufacturingDate: DateTime.optional(),
  expirationDate: DateTime.optional(),
  unitMeasurementId: Guid.optional(),
});
export const StockLockResult = readable({
  materialStatusId: Guid.nullish(),
  stocksLocked: Num,
  error: Str.nullish(),
});

/** POST /open/v1/Stock/gen/sync body. */
export const StockSyncProduct = z.strictObject({ productId: Guid, quantity: z.number().finite().nonnegative() });
export const StockSyncRequest = z.strictObject({
  sessionId: Guid,
  ownerId: Guid,
  isLastChunk: z.boolean().optional(),
  products: z.array(StockSyncProduct),
});
export const StockSyncResult = readable({ success: z.boolean() });

// ---------------------------------------------------------------------------------------------
// PickingList attachment (multipart; this schema describes the non-file parts and the response)
// ---------------------------------------------------------------------------------------------

export const AttachmentRequest = z.strictObject({
  PickingListID: Guid,
  UserFileName: ReqStr,
  IsPrintCheckout: z.boolean().optional(),
});
export const AttachmentRecord = readable({
  pickingListID: Guid,
  fileName: Str,
  fileSize: Num,
  fileType: Str.nullish(),
  registrationDate: Str.nullish(),
  isPrintCheckout: z.boolean().nullish(),
});

// ---------------------------------------------------------------------------------------------
// Inferred types
// ---------------------------------------------------------------------------------------------

export type UnitMeasurementCreate = z.input<typeof UnitMeasurementCreate>;
export type UnitMeasurementRecord = z.infer<typeof UnitMeasurementRecord>;
export type CategoryCreate = z.input<typeof CategoryCreate>;
export type CategoryRecord = z.infer<typeof CategoryRecord>;
export type FamilyCreate = z.input<typeof FamilyCreate>;
export type FamilyRecord = z.infer<typeof FamilyRecord>;
export type ProductCreate = z.input<typeof ProductCreate>;
export type ProductRecord = z.infer<typeof ProductRecord>;
export type ConversionFactorCreate = z.input<typeof ConversionFactorCreate>;
export type ConversionFactorUpdate = z.input<typeof ConversionFactorUpdate>;
export type ConversionFactorRecord = z.infer<typeof ConversionFactorRecord>;
export type ShippingCompanyCreate = z.input<typeof ShippingCompanyCreate>;
export type ShippingCompanyUpdate = z.input<typeof ShippingCompanyUpdate>;
export type ShippingCompanyRecord = z.infer<typeof ShippingCompanyRecord>;
export type ProviderCreate = z.input<typeof ProviderCreate>;
export type ProviderUpdate = z.input<typeof ProviderUpdate>;
export type ProviderRecord = z.infer<typeof ProviderRecord>;
export type OwnerCreate = z.input<typeof OwnerCreate>;
export type OwnerRecord = z.infer<typeof OwnerRecord>;
export type PickingItemCreate = z.input<typeof PickingItemCreate>;
export type PickingListCreate = z.input<typeof PickingListCreate>;
export type PickingListRecord = z.infer<typeof PickingListRecord>;
export type PurchaseOrderItemCreate = z.input<typeof PurchaseOrderItemCreate>;
export type PurchaseOrderCreate = z.input<typeof PurchaseOrderCreate>;
export type PurchaseOrderRecord = z.infer<typeof PurchaseOrderRecord>;
export type CompanyRecord = z.infer<typeof CompanyRecord>;
export type BranchRecord = z.infer<typeof BranchRecord>;
export type WarehouseRecord = z.infer<typeof WarehouseRecord>;
export type SubWarehouseRecord = z.infer<typeof SubWarehouseRecord>;
export type DockRecord = z.infer<typeof DockRecord>;
export type LogisticsProfileRecord = z.infer<typeof LogisticsProfileRecord>;
export type MaterialStatusRecord = z.infer<typeof MaterialStatusRecord>;
export type InventoryRecord = z.infer<typeof InventoryRecord>;
export type InventoryItemRecord = z.infer<typeof InventoryItemRecord>;
export type StockRecord = z.infer<typeof StockRecord>;
export type StockSearchFilters = z.input<typeof StockSearchFilters>;
export type StockLockRequest = z.input<typeof StockLockRequest>;
export type StockLockResult = z.infer<typeof StockLockResult>;
export type StockSyncRequest = z.input<typeof StockSyncRequest>;
export type StockSyncResult = z.infer<typeof StockSyncResult>;
export type AttachmentRequest = z.input<typeof AttachmentRequest>;
export type AttachmentRecord = z.infer<typeof AttachmentRecord>;
