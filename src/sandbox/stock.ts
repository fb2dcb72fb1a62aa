/**
 * Stock: the stored records plus `synthetic.count` records derived from their index (so a million
 * records cost no memory). The list order is stored records first, then synthetic ones by index.
 */
import type { SandboxState, StockRow } from './state.js';

const DAY = 86_400_000;
const BASE_MFG = Date.UTC(2026, 0, 1);

/** the 300 manufacturing/expiry date pairs synthetic rows cycle through (built once: toISOString is slow) */
const DATES: Array<[string, string]> = Array.from({ length: 300 }, (_, k) => [
  new Date(BASE_MFG + k * DAY).toISOString(),
  new Date(BASE_MFG + (k + 365) * DAY).toISOString(),
]);

export function syntheticRow(state: SandboxState, i: number): StockRow {
  const s = state.synthetic;
  const p = s.products[i % s.products.length]!;
  const w = s.warehouses[Math.floor(i / s.products.length) % s.warehouses.length]!;
  const override = s.statusOverrides[i];
  const dates = DATES[i % 300]!;
  return {
    warehouseId: w.id,
    warehouseName: w.name,
    ownerId: s.owner.id,
    ownerName: s.owner.name,
    productId: p.id,
    productCode: p.code,
    productName: p.name,
    lotNumber: `S${String(i).padStart(8, '0')}`,
    manufacturingDate: dates[0],
    expirationDate: dates[1],
    quantity: 1 + ((i * 7919) % 997),
    reserved: (i * 31) % 7 === 0 ? 1 : 0,
    materialStatusId: override ?? s.status.id,
    materialStatusName: override ? (statusNames.get(override) ?? null) : s.status.name,
    unitMeasurementId: p.unitId,
    unitMeasurementName: p.unitName,
  };
}

/** materialStatus names, refreshed by refreshStatusNames (synthetic overrides store only the id). */
const statusNames = new Map<string, string>();
export function refreshStatusNames(state: SandboxState): void {
  statusNames.clear();
  for (const m of state.collections.MaterialStatus) statusNames.set(m.id, String(m['name']));
}

export function stockTotal(state: SandboxState): number {
  return state.stock.length + state.synthetic.count;
}

/** Rows [offset, offset+limit) of the unfiltered stock list. */
export function stockSlice(state: SandboxState, offset: number, limit: number): StockRow[] {
  const out: StockRow[] = [];
  const total = stockTotal(state);
  for (let i = offset; i < Math.min(total, offset + limit); i++) {
    out.push(i < state.stock.length ? state.stock[i]! : syntheticRow(state, i - state.stock.length));
  }
  return out;
}

export function isEmptyFilter(f: StockFilter): boolean {
  for (const v of Object.values(f)) if (v !== undefined) return false;
  return true;
}

export interface StockFilter {
  warehouseId?: string;
  ownerId?: string;
  productId?: string;
  lotNumber?: string;
  manufacturingDate?: string;
  expirationDate?: string;
  materialStatusId?: string;
  unitMeasurementId?: string;
  containerCode?: string;
}

/** Same instant (date-times) or same day (bare dates). */
function sameDate(a: string | null, b: string): boolean {
  if (a === null) return false;
  if (/^\d{4}-\d{2}-\d{2}$/.test(b)) return a.slice(0, 10) === b;
  const ta = Date.parse(a.includes('T') || a.includes(' ') ? a.replace(' ', 'T') : a);
  const tb = Date.parse(b.replace(' ', 'T'));
  return Number.isFinite(ta) && ta === tb;
}

export function matches(row: StockRow, f: StockFilter): boolean {
  if (f.warehouseId !== undefined && row.warehouseId.toLowerCase() !== f.warehouseId.toLowerCase()) return false;
  if (f.productId !== undefined && row.productId.toLowerCase() !== f.productId.toLowerCase()) return false;
  if (f.ownerId !== undefined && (row.ownerId ?? '').toLowerCase() !== f.ownerId.toLowerCase()) return false;
  if (f.lotNumber !== undefined && row.lotNumber !== f.lotNumber) return false;
  if (f.materialStatusId !== undefined && (row.materialStatusId ?? '').toLowerCase() !== f.materialStatusId.toLowerCase()) return false;
  if (f.unitMeasurementId !== undefined && (row.unitMeasurementId ?? '').toLowerCase() !== f.unitMeasurementId.toLowerCase()) return false;
  if (f.manufacturingDate !== undefined && !sameDate(row.manufacturingDate, f.manufacturingDate)) return false;
  if (f.expirationDate !== undefined && !sameDate(row.expirationDate, f.expirationDate)) return false;
  // containerCode: the sandbox holds no containers, so a container filter matches nothing.
  if (f.containerCode !== undefined) return false;
  return true;
}

/** Visits every stock row matching the filter (stored first, then synthetic) with a stable index key. */
export function forEachMatch(state: SandboxState, f: StockFilter, visit: (row: StockRow, key: { stored?: number; synthetic?: number }) => void): void {
  const lower = (v: string | undefined): string | undefined => v?.toLowerCase();
  const wantWarehouse = lower(f.warehouseId);
  const wantProduct = lower(f.productId);
  state.stock.forEach((row, i) => {
    if (matches(row, f)) visit(row, { stored: i });
  });
  const s = state.synthetic;
  if (s.count === 0) return;
  const hasOverrides = Object.keys(s.statusOverrides).length > 0;
  // rows that only differ from the base by index: skip building those that cannot match
  if (f.ownerId !== undefined && s.owner.id.toLowerCase() !== f.ownerId.toLowerCase()) return;
  for (let i = 0; i < s.count; i++) {
    // cheap pre-filter on product and warehouse before building the row
    if (wantProduct !== undefined && s.products[i % s.products.length]!.id.toLowerCase() !== wantProduct) continue;
    if (wantWarehouse !== undefined && s.warehouses[Math.floor(i / s.products.length) % s.warehouses.length]!.id.toLowerCase() !== wantWarehouse) continue;
    if (!hasOverrides && f.materialStatusId !== undefined && s.status.id.toLowerCase() !== f.materialStatusId.toLowerCase()) return;
    if (f.lotNumber !== undefined && f.lotNumber !== `S${String(i).padStart(8, '0')}`) continue;
    const row = syntheticRow(state, i);
    if (matches(row, f)) visit(row, { synthetic: i });
  }
}
