/**
 * What the rest of wmsbridge needs from a WMS client. push/, pull/ and map lookups depend on this
 * interface, not on the undici implementation (src/wms/client.ts).
 * Every method throws a WmsError (src/wms/errors.ts) on failure.
 */
import type * as S from './schemas.js';
import type { WmsAvailability } from './breaker.js';

export interface PageOptions {
  /** records per page (PagingLimit); default from the client options */
  pageSize?: number;
  /** extra query parameters */
  query?: Record<string, string>;
  signal?: AbortSignal;
}

export interface AttachmentInput {
  pickingListID: string;
  userFileName: string;
  isPrintCheckout?: boolean;
  /** file content and its name/type as sent in the multipart part */
  content: Buffer;
  fileName: string;
  contentType?: string;
}

/**
 * What the caller of a request that changes something learns about each attempt on the wire (issue 41): the
 * push marks a record `sending` (in doubt after a crash) only when its request is about to be written, not
 * while it waits for the Retry-After gate, a slot or a retry's delay, and clears the mark when an answer proves
 * nothing was applied.
 */
export interface WriteHooks {
  /** awaited once the attempt has its slot, after the gate and any retry's delay, right before the request goes out */
  beforeWrite(): Promise<void>;
  /**
   * awaited when that attempt provably applied nothing: held back unwritten, not sent (connection refused),
   * or answered in a way that says so (429, 401, a refusal before processing): `mayHaveReachedServer: false`
   */
  notApplied(why: string): Promise<void>;
}

export interface CallOptions {
  signal?: AbortSignal;
  /** per-attempt hooks of a request that changes something (see WriteHooks) */
  write?: WriteHooks;
  /**
   * POSTs are not retried once they may have reached the server. The pipeline sets
   * `idempotent: true` for calls it knows are safe to repeat (PUT updates, lock/unlock, sync chunks).
   */
  idempotent?: boolean;
}

export interface WmsClient {
  // auth (normally implicit; exposed for tests and `wmsbridge check --wms`)
  authorize(): Promise<void>;
  /**
   * Gets a token now if none is held (the single authorization the first request would make, and its connection),
   * so the first request finds them; a failure is left for that request to meet. Absent on test doubles.
   */
  warmUp?(): Promise<void>;
  /** whether the WMS answers (the client's circuit breaker); absent on test doubles */
  availability?(): WmsAvailability;

  // conversion factors
  listConversionFactors(opts?: PageOptions): AsyncIterable<S.ConversionFactorRecord>;
  getConversionFactor(id: string, opts?: CallOptions): Promise<S.ConversionFactorRecord | null>;
  createConversionFactor(body: S.ConversionFactorCreate, opts?: CallOptions): Promise<S.ConversionFactorRecord | null>;
  updateConversionFactor(body: S.ConversionFactorUpdate, opts?: CallOptions): Promise<S.ConversionFactorRecord | null>;
  deleteConversionFactor(id: string, opts?: CallOptions): Promise<void>;

  // stock
  listStock(opts?: PageOptions): AsyncIterable<S.StockRecord>;
  searchStock(filters: S.StockSearchFilters, opts?: PageOptions): AsyncIterable<S.StockRecord>;
  lockStock(body: S.StockLockRequest, opts?: CallOptions): Promise<S.StockLockResult>;
  unlockStock(body: S.StockLockRequest, opts?: CallOptions): Promise<S.StockLockResult>;
  syncStock(body: S.StockSyncRequest, opts?: CallOptions): Promise<S.StockSyncResult>;

  // carriers
  listShippingCompanies(opts?: PageOptions): AsyncIterable<S.ShippingCompanyRecord>;
  getShippingCompany(id: string, opts?: CallOptions): Promise<S.ShippingCompanyRecord | null>;
  /** null when no carrier has this codeERP */
  getShippingCompanyByErp(codeERP: string, opts?: CallOptions): Promise<S.ShippingCompanyRecord | null>;
  createShippingCompany(body: S.ShippingCompanyCreate, opts?: CallOptions): Promise<S.ShippingCompanyRecord | null>;
  updateShippingCompany(body: S.ShippingCompanyUpdate, opts?: CallOptions): Promise<S.ShippingCompanyRecord | null>;

  // providers
  listProviders(opts?: PageOptions): AsyncIterable<S.ProviderRecord>;
  getProvider(id: string, opts?: CallOptions): Promise<S.ProviderRecord | null>;
  getProviderByErp(codeERP: string, opts?: CallOptions): Promise<S.ProviderRecord | null>;
  createProvider(body: S.ProviderCreate, opts?: CallOptions): Promise<S.ProviderRecord | null>;
  updateProvider(body: S.ProviderUpdate, opts?: CallOptions): Promise<S.ProviderRecord | null>;

  // owners
  listOwners(opts?: PageOptions): AsyncIterable<S.OwnerRecord>;
  getOwner(id: string, opts?: CallOptions): Promise<S.OwnerRecord | null>;
  getOwnerByCode(code: string, opts?: CallOptions): Promise<S.OwnerRecord | null>;
  createOwner(body: S.OwnerCreate, opts?: CallOptions): Promise<S.OwnerRecord | null>;

  // inventories
  listInventories(opts?: PageOptions): AsyncIterable<S.InventoryRecord>;
  listFinishedInventories(opts?: PageOptions): AsyncIterable<S.InventoryRecord>;
  getInventory(id: string, opts?: CallOptions): Promise<S.InventoryRecord | null>;

  // reference data
  listMaterialStatuses(opts?: PageOptions): AsyncIterable<S.MaterialStatusRecord>;
  getMaterialStatus(id: string, opts?: CallOptions): Promise<S.MaterialStatusRecord | null>;
  listDocks(opts?: PageOptions): AsyncIterable<S.DockRecord>;
  listDocksOfWarehouse(warehouseID: string, opts?: PageOptions): AsyncIterable<S.DockRecord>;
  listWarehouses(opts?: PageOptions): AsyncIterable<S.WarehouseRecord>;
  listBranches(opts?: PageOptions): AsyncIterable<S.BranchRecord>;
  listLogisticsProfiles(opts?: PageOptions): AsyncIterable<S.LogisticsProfileRecord>;
  listCompanies(opts?: PageOptions): AsyncIterable<S.CompanyRecord>;
  listSubWarehouses(warehouseId: string, opts?: PageOptions): AsyncIterable<S.SubWarehouseRecord>;

  // documents and master data (POST, single envelope)
  createPickingList(body: S.PickingListCreate, opts?: CallOptions): Promise<S.PickingListRecord>;
  createPurchaseOrder(body: S.PurchaseOrderCreate, opts?: CallOptions): Promise<S.PurchaseOrderRecord>;
  createProduct(body: S.ProductCreate, opts?: CallOptions): Promise<S.ProductRecord>;
  createUnitMeasurement(body: S.UnitMeasurementCreate, opts?: CallOptions): Promise<S.UnitMeasurementRecord>;
  createFamily(body: S.FamilyCreate, opts?: CallOptions): Promise<S.FamilyRecord>;
  createCategory(body: S.CategoryCreate, opts?: CallOptions): Promise<S.CategoryRecord>;

  attachToPickingList(input: AttachmentInput, opts?: CallOptions): Promise<S.AttachmentRecord>;

  /** counters for reports and /metrics */
  stats(): WmsClientStats;
  close(): Promise<void>;
}

export interface WmsClientStats {
  requests: number;
  retries: number;
  refreshes: number;
  authorizations: number;
  failures: number;
  /** requests handed to the transport before a 429 was read, held back unwritten until its Retry-After passed */
  heldBack?: number;
  /** the page base in use: configured, or found by the first list read ('auto'); null before that */
  pagingBase?: 0 | 1 | null;
  /** latency histogram buckets in ms (upper bounds) and counts, for /metrics */
  latencyBucketsMs: number[];
  latencyCounts: number[];
  latencySumMs: number;
}
