/**
 * Every endpoint of the interface, once. The client and the sandbox both read this table, so a path
 * cannot be spelled two ways. Paths are exactly as the spec writes them (casing differs between
 * endpoints on purpose: /open/v1/Dock, /open/v1/warehouse, /open/v1/pickinglist). A target added by its
 * spec alone declares its endpoints there (src/wms/targets/spec.ts DeclaredEndpoint): they join this table.
 */
import { REGISTRY } from './targets/index.js';
import type { DeclaredEndpoint } from './targets/spec.js';

export type { HttpMethod, EndpointDef } from './endpoint-def.js';
import type { EndpointDef } from './endpoint-def.js';

const INTERFACE_ENDPOINTS = {
  authorize: { method: 'POST', path: '/open/v1/authorize', response: 'single', anonymous: true },
  refreshToken: { method: 'POST', path: '/open/v1/refreshtoken', response: 'single', anonymous: true },

  listConversionFactors: { method: 'GET', path: '/open/v1/ConversionFactor', response: 'list' },
  getConversionFactor: { method: 'GET', path: '/open/v1/ConversionFactor/{id}', response: 'single' },
  createConversionFactor: { method: 'POST', path: '/open/v1/ConversionFactor', response: 'single' },
  updateConversionFactor: { method: 'PUT', path: '/open/v1/ConversionFactor', response: 'single' },
  deleteConversionFactor: { method: 'DELETE', path: '/open/v1/ConversionFactor/{id}', response: 'single' },

  listStock: { method: 'GET', path: '/open/v1/Stock', response: 'list' },
  searchStock: { method: 'GET', path: '/open/v1/Stock/search', response: 'list' },
  lockStock: { method: 'PUT', path: '/open/v1/Stock/lock', response: 'single' },
  unlockStock: { method: 'PUT', path: '/open/v1/Stock/unlock', response: 'single' },
  syncStock: { method: 'POST', path: '/open/v1/Stock/gen/sync', response: 'single' },

  listShippingCompanies: { method: 'GET', path: '/open/v1/ShippingCompany', response: 'list' },
  getShippingCompany: { method: 'GET', path: '/open/v1/ShippingCompany/{id}', response: 'single' },
  getShippingCompanyByErp: { method: 'GET', path: '/open/v1/ShippingCompany/erp/{codeERP}', response: 'single' },
  createShippingCompany: { method: 'POST', path: '/open/v1/ShippingCompany', response: 'single' },
  updateShippingCompany: { method: 'PUT', path: '/open/v1/ShippingCompany', response: 'single' },

  listProviders: { method: 'GET', path: '/open/v1/Provider', response: 'list' },
  getProvider: { method: 'GET', path: '/open/v1/Provider/{id}', response: 'single' },
  getProviderByErp: { method: 'GET', path: '/open/v1/Provider/erp/{codeERP}', response: 'single' },
  createProvider: { method: 'POST', path: '/open/v1/Provider', response: 'single' },
  updateProvider: { method: 'PUT', path: '/open/v1/Provider', response: 'single' },

  listOwners: { method: 'GET', path: '/open/v1/Owners', response: 'list' },
  getOwner: { method: 'GET', path: '/open/v1/Owners/id/{id}', response: 'single' },
  getOwnerByCode: { method: 'GET', path: '/open/v1/Owners/codeerp/{code}', response: 'single' },
  createOwner: { method: 'POST', path: '/open/v1/Owners', response: 'single' },

  listInventories: { method: 'GET', path: '/open/v1/Inventory', response: 'list' },
  listFinishedInventories: { method: 'GET', path: '/open/v1/Inventory/finished', response: 'list' },
  getInventory: { method: 'GET', path: '/open/v1/Inventory/{id}', response: 'single' },

  listMaterialStatuses: { method: 'GET', path: '/open/v1/MaterialStatus', response: 'list' },
  getMaterialStatus: { method: 'GET', path: '/open/v1/MaterialStatus/{id}', response: 'single' },

  listDocks: { method: 'GET', path: '/open/v1/Dock', response: 'list' },
  listDocksOfWarehouse: { method: 'GET', path: '/open/v1/Dock/Warehouse/{warehouseID}', response: 'list' },
  listWarehouses: { method: 'GET', path: '/open/v1/warehouse', response: 'list' },
  listBranches: { method: 'GET', path: '/open/v1/branch', response: 'list' },
  listLogisticsProfiles: { method: 'GET', path: '/open/v1/logisticsprofile', response: 'list' },
  listCompanies: { method: 'GET', path: '/open/v1/company', response: 'list' },
  listSubWarehouses: { method: 'GET', path: '/open/v1/SubWarehouse/warehouse/{warehouseId}', response: 'list' },

  createPickingList: { method: 'POST', path: '/open/v1/pickinglist', response: 'single' },
  createPurchaseOrder: { method: 'POST', path: '/open/v1/purchaseorder', response: 'single' },
  createProduct: { method: 'POST', path: '/open/v1/product', response: 'single' },
  createUnitMeasurement: { method: 'POST', path: '/open/v1/unitmeasurement', response: 'single' },
  createFamily: { method: 'POST', path: '/open/v1/family', response: 'single' },
  createCategory: { method: 'POST', path: '/open/v1/category', response: 'single' },

  attachToPickingList: { method: 'POST', path: '/wms/v1/pickinglist/attachment', response: 'single' },
} as const satisfies Record<string, EndpointDef>;

type DeclaredBy<S> = S extends { readonly endpoints?: infer R } ? keyof NonNullable<R> & string : never;
/** The endpoints targets declare in their specs (none of the interface's own targets does). */
export type DeclaredEndpointName = DeclaredBy<(typeof REGISTRY)[number]>;

/** The targets' declared endpoints, by name. */
export const DECLARED_ENDPOINTS: Readonly<Record<DeclaredEndpointName, DeclaredEndpoint>> = Object.assign(
  {},
  ...REGISTRY.map((s: { endpoints?: Readonly<Record<string, DeclaredEndpoint>> }) => s.endpoints ?? {}),
) as Record<DeclaredEndpointName, DeclaredEndpoint>;

export const ENDPOINTS = { ...INTERFACE_ENDPOINTS, ...DECLARED_ENDPOINTS } as typeof INTERFACE_ENDPOINTS &
  Readonly<Record<DeclaredEndpointName, DeclaredEndpoint>>;

export type EndpointName = keyof typeof ENDPOINTS;

/** Fills `{name}` path parameters, URL-encoding each value. */
export function buildPath(template: string, params: Readonly<Record<string, string>> = {}): string {
  return template.replace(/\{(\w+)\}/g, (_, name: string) => {
    const value = params[name];
    if (value === undefined) throw new Error(`missing path parameter ${name} for ${template}`);
    return encodeURIComponent(value);
  });
}

/** Query parameter names for paging (spec: Inventory lists accept PagingIndex and PagingLimit). */
export const PAGING_INDEX = 'PagingIndex';
export const PAGING_LIMIT = 'PagingLimit';
