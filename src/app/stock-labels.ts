/**
 * How results and reports name a stock row: by warehouse code, product code and lot (and the target status),
 * not by the ids its natural key holds. Ids are turned back into codes from the reference cache (warehouses,
 * material statuses) and from what wmsbridge created (products, by their WMS id in the journal's cross-reference).
 * Which targets are stock rows, and which parts name them, is their spec's `stockLabel` (src/wms/targets/).
 */
import { isRef } from '../map/types.js';
import type { RecordRow, CrossReference } from '../journal/types.js';
import type { LoadableReferenceCache } from '../push/reference-cache.js';
import { specOf, type RefResource, type StockLabelRule } from '../wms/targets.js';

const GUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** null at once for a row that is not a stock row (its key is its name): the finish awaits only stock rows */
export type KeyLabeler = (row: RecordRow) => Promise<string | null> | null;

export function stockKeyLabeler(refCache: LoadableReferenceCache | null, journal: CrossReference): KeyLabeler {
  // the products wmsbridge created, by WMS id: read once, at the first product named by its id (one read of the
  // cross-reference, not one per row: the journal indexes records by WMS id only for the documents webhooks name)
  let products: Promise<Map<string, string>> | null = null;
  let productResource: RefResource | undefined;
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
    if (productResource === undefined) return Promise.resolve(id);
    products ??= journal.xrefKeysByWmsId(productResource).catch(() => new Map<string, string>());
    return products.then((keys) => keys.get(id) ?? id);
  };
  const label = async (row: RecordRow, rule: StockLabelRule, refs: Readonly<Record<string, RefResource>>): Promise<string> => {
    const p = row.payload;
    productResource ??= refs['productId'];
    const parts = [`warehouse ${readOnly('Warehouse', String(p['warehouseId'] ?? ''), 'codeERP')}`, `product ${await product(p['productId'])}`];
    if (rule.lotAndStatus) {
      const lot = String(p['lotNumber'] ?? '').trim();
      parts.push(lot ? `lot ${lot}` : 'every lot');
      parts.push(`to ${readOnly('MaterialStatus', String(p['materialStatusId'] ?? ''), 'name')}`);
    }
    if (rule.warehouseOptional && p['warehouseId'] === undefined) parts.shift();
    return parts.join(' | ');
  };
  return (row) => {
    const spec = specOf(row.target);
    return spec?.stockLabel ? label(row, spec.stockLabel, spec.refs) : null;
  };
}
