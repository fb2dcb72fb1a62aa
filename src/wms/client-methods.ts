/**
 * The client's methods generated from the endpoint table (endpoints.ts): what a method does follows from
 * its endpoint (a GET list is read page by page, a GET single is a read of one record with null on 404,
 * a POST / PUT sends a body checked against its Create schema, a DELETE sends nothing back), and its
 * path parameter from the path template. What the endpoint table cannot say is written here: the record
 * schema and label, the request schema, and whether the spec shows the answer of a send.
 *
 * The calls that are not one plain endpoint (stock search with its filter body, lock / unlock, stock sync,
 * the attachment upload) are written by hand in client.ts. The mapped types below make TypeScript check
 * every generated method against the WmsClient interface (client.ts assigns them to it).
 */
import type { z } from 'zod';
import * as S from './schemas.js';
import type { CallOptions, PageOptions } from './client-types.js';
import type { Shapes } from './client-shapes.js';
import type { Pager } from './paging.js';
import { DECLARED_ENDPOINTS, ENDPOINTS, type EndpointName } from './endpoints.js';
import type { DeclaredEndpoint } from './targets/spec.js';

type Endpoints = typeof ENDPOINTS;
/** endpoint names whose method and response are M and R */
type EndpointsWhere<M, R> = { [K in EndpointName]: Endpoints[K] extends { method: M; response: R } ? K : never }[EndpointName];
/** the `{name}` parameters of a path template */
type PathParams<P extends string> = P extends `${string}{${infer N}}${infer Rest}` ? N | PathParams<Rest> : never;
type HasParam<K extends EndpointName> = [PathParams<Endpoints[K]['path']>] extends [never] ? false : true;

interface RecordOf<T extends z.ZodType = z.ZodType> {
  readonly record: T;
  /** the record's name in error messages */
  readonly label: string;
}
interface SendOf<Q extends z.ZodType = z.ZodType, T extends z.ZodType = z.ZodType> extends RecordOf<T> {
  readonly request: Q;
  /** 'record': the spec shows the answer, the record is required; 'maybe': the record if the answer holds one, else null */
  readonly answer: 'record' | 'maybe';
}

const conversionFactor = { record: S.ConversionFactorRecord, label: 'ConversionFactor' } as const;
const stock = { record: S.StockRecord, label: 'Stock' } as const;
const carrier = { record: S.ShippingCompanyRecord, label: 'ShippingCompany' } as const;
const provider = { record: S.ProviderRecord, label: 'Provider' } as const;
const owner = { record: S.OwnerRecord, label: 'Owners' } as const;
const inventory = { record: S.InventoryRecord, label: 'Inventory' } as const;
const materialStatus = { record: S.MaterialStatusRecord, label: 'MaterialStatus' } as const;
const dock = { record: S.DockRecord, label: 'Dock' } as const;

/** GET lists (searchStock, with its filter body, is in client.ts) */
export const LIST_METHODS = {
  listConversionFactors: conversionFactor,
  listStock: stock,
  listShippingCompanies: carrier,
  listProviders: provider,
  listOwners: owner,
  listInventories: inventory,
  listFinishedInventories: inventory,
  listMaterialStatuses: materialStatus,
  listDocks: dock,
  listDocksOfWarehouse: dock,
  listWarehouses: { record: S.WarehouseRecord, label: 'Warehouse' },
  listBranches: { record: S.BranchRecord, label: 'Branch' },
  listLogisticsProfiles: { record: S.LogisticsProfileRecord, label: 'LogisticsProfile' },
  listCompanies: { record: S.CompanyRecord, label: 'Company' },
  listSubWarehouses: { record: S.SubWarehouseRecord, label: 'SubWarehouse' },
} as const satisfies Partial<Record<EndpointsWhere<'GET', 'list'>, RecordOf>>;

/** GET one record by its path parameter */
export const GET_METHODS = {
  getConversionFactor: conversionFactor,
  getShippingCompany: carrier,
  getShippingCompanyByErp: carrier,
  getProvider: provider,
  getProviderByErp: provider,
  getOwner: owner,
  getOwnerByCode: owner,
  getInventory: inventory,
  getMaterialStatus: materialStatus,
} as const satisfies Partial<Record<EndpointsWhere<'GET', 'single'>, RecordOf>>;

/** POST / PUT of one record (lock, unlock, sync and the attachment are in client.ts) */
export const SEND_METHODS = {
  createConversionFactor: { ...conversionFactor, request: S.ConversionFactorCreate, answer: 'maybe' },
  updateConversionFactor: { ...conversionFactor, request: S.ConversionFactorUpdate, answer: 'maybe' },
  createShippingCompany: { ...carrier, request: S.ShippingCompanyCreate, answer: 'maybe' },
  updateShippingCompany: { ...carrier, request: S.ShippingCompanyUpdate, answer: 'maybe' },
  createProvider: { ...provider, request: S.ProviderCreate, answer: 'maybe' },
  updateProvider: { ...provider, request: S.ProviderUpdate, answer: 'maybe' },
  createOwner: { ...owner, request: S.OwnerCreate, answer: 'maybe' },
  createPickingList: { record: S.PickingListRecord, label: 'PickingList', request: S.PickingListCreate, answer: 'record' },
  createPurchaseOrder: { record: S.PurchaseOrderRecord, label: 'PurchaseOrder', request: S.PurchaseOrderCreate, answer: 'record' },
  createProduct: { record: S.ProductRecord, label: 'Product', request: S.ProductCreate, answer: 'record' },
  createUnitMeasurement: { record: S.UnitMeasurementRecord, label: 'UnitMeasurement', request: S.UnitMeasurementCreate, answer: 'record' },
  createFamily: { record: S.FamilyRecord, label: 'Family', request: S.FamilyCreate, answer: 'record' },
  createCategory: { record: S.CategoryRecord, label: 'Category', request: S.CategoryCreate, answer: 'record' },
} as const satisfies Partial<Record<EndpointsWhere<'POST' | 'PUT', 'single'>, SendOf>>;

/** DELETE by the path parameter */
export const DELETE_METHODS = ['deleteConversionFactor'] as const satisfies ReadonlyArray<EndpointsWhere<'DELETE', 'single'>>;

type Lists = typeof LIST_METHODS;
type Gets = typeof GET_METHODS;
type Sends = typeof SEND_METHODS;
type Out<T> = T extends { record: infer R extends z.ZodType } ? z.output<R> : never;

export type GeneratedMethods = {
  [K in keyof Lists]: HasParam<K> extends true
    ? (value: string, opts?: PageOptions) => AsyncIterable<Out<Lists[K]>>
    : (opts?: PageOptions) => AsyncIterable<Out<Lists[K]>>;
} & {
  [K in keyof Gets]: (value: string, opts?: CallOptions) => Promise<Out<Gets[K]> | null>;
} & {
  [K in keyof Sends]: (
    body: Sends[K] extends { request: infer Q extends z.ZodType } ? z.input<Q> : never,
    opts?: CallOptions,
  ) => Promise<Sends[K] extends { answer: 'record' } ? Out<Sends[K]> : Out<Sends[K]> | null>;
} & {
  [K in (typeof DELETE_METHODS)[number]]: (value: string, opts?: CallOptions) => Promise<void>;
};

/** The path parameter of an endpoint (these endpoints have at most one), from its template. */
function pathParam(name: EndpointName): string | undefined {
  return /\{(\w+)\}/.exec(ENDPOINTS[name].path)?.[1];
}

type AnyMethod = (...args: never[]) => unknown;

export function buildMethods(shapes: Shapes, pager: Pager): GeneratedMethods {
  const out: Record<string, AnyMethod> = {};
  for (const [n, { record, label }] of Object.entries(LIST_METHODS) as Array<[keyof Lists, RecordOf]>) {
    const param = pathParam(n);
    out[n] =
      param === undefined
        ? (opts?: PageOptions) => pager.paged(n, record, label, opts)
        : (value: string, opts?: PageOptions) => pager.paged(n, record, label, opts, { [param]: value });
  }
  for (const [n, { record, label }] of Object.entries(GET_METHODS) as Array<[keyof Gets, RecordOf]>) {
    const param = pathParam(n)!;
    out[n] = (value: string, opts?: CallOptions) => shapes.getOne(n, { [param]: value }, record, label, opts);
  }
  for (const [n, { record, label, request, answer }] of Object.entries(SEND_METHODS) as Array<[keyof Sends, SendOf]>) {
    const requestLabel = ENDPOINTS[n].method === 'PUT' ? `${label} update` : label;
    out[n] = async (body: unknown, opts?: CallOptions) => {
      const json = shapes.requestBody(n, request, body, requestLabel);
      return answer === 'record' ? shapes.sendRequired(n, json, record, label, opts) : shapes.sendOptional(n, json, record, opts);
    };
  }
  // the endpoints targets declare in their specs: one send method each, by the endpoint's name (what the send rule names)
  for (const [n, { record, request, answer }] of Object.entries(DECLARED_ENDPOINTS) as Array<[EndpointName, DeclaredEndpoint]>) {
    out[n] = async (body: unknown, opts?: CallOptions) => {
      const json = shapes.requestBody(n, request, body, n);
      return answer === 'record' ? shapes.sendRequired(n, json, record, n, opts) : shapes.sendOptional(n, json, record, opts);
    };
  }
  for (const n of DELETE_METHODS) {
    const param = pathParam(n)!;
    out[n] = (value: string, opts?: CallOptions) => shapes.sendNothing(n, { [param]: value }, opts);
  }
  return out as unknown as GeneratedMethods;
}
