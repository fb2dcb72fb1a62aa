/**
 * How results and reports name a stock row: by warehouse code, product code and lot (and the target status),
 * not by the ids its natural key holds. Ids are turned back into codes from the reference cache (warehouses,
 * material statuses) and from what wmsbridge created (products, by the WMS id in the journal).
 */
import { isRef } from '../map/types.js';
import type { Journal, RecordRow } from '../journal/types.js';
import type { LoadableReferenceCache } from '../push/reference-cache.js';
import type { RefResource } from '../wms/targets.js';

const STOCK_TARGETS = new Set(['StockLock', 'StockUnlock', 'StockSync']);
const GUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export type KeyLabeler = (row: RecordRow) => Promise<string | null>;

export function stockKeyLabeler(refCache: LoadableReferenceCache | null, journal: Journal): KeyLabeler {
  const products = new Map<string, Promise<string>>();
  const readOnly = (resource: RefResource, id: string, field: string): string => {
    if (!refCache?.has(resource) || !refCache.findAll) return id;
    const rec = refCache.findAll(resource, 'id', id)[0];
    const v = rec?.[field];
    return typeof v === 'string' && v ? v : id;
  };
  const product = (v: unknown): Promise<string> => {
    if (isRef(v)) return Promise.resolve(v.$ref.value);
    const id = String(v ?? '');
    if (!GUID.test(id)) return Promise.resolve(id);
    let p = products.get(id);
    if (!p) {
      p = journal
        .findRecordByWmsId(id)
        .then((r) => (r && r.target === 'Product' ? r.key : id))
        .catch(() => id);
      products.set(id, p);
    }
    return p;
  };
  return async (row) => {
    if (!STOCK_TARGETS.has(row.target)) return null;
    const p = row.payload;
    const parts = [`warehouse ${readOnly('Warehouse', String(p['warehouseId'] ?? ''), 'codeERP')}`, `product ${await product(p['productId'])}`];
    if (row.target !== 'StockSync') {
      const lot = String(p['lotNumber'] ?? '').trim();
      parts.push(lot ? `lot ${lot}` : 'every lot');
      parts.push(`to ${readOnly('MaterialStatus', String(p['materialStatusId'] ?? ''), 'name')}`);
    }
    if (row.target === 'StockSync' && p['warehouseId'] === undefined) parts.shift();
    return parts.join(' | ');
  };
}
