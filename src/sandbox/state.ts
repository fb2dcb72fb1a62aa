/**
 * Sandbox state: plain JSON-serialisable collections (so the state file is a JSON dump), plus id
 * indexes rebuilt on load. Records are stored in the Record shape with the canonical spellings.
 */
import { TARGET_INFO, type SandboxStore } from '../wms/targets.js';

export type Rec = Record<string, unknown> & { id: string };

/** Reference data the sandbox seeds and serves read-only (no target sends them). */
const REFERENCE_COLLECTIONS = ['Company', 'Branch', 'Warehouse', 'SubWarehouse', 'Dock', 'LogisticsProfile', 'MaterialStatus'] as const;

/** Where targets are stored (the target registry's `sandbox`), but for stock and sync sessions, kept apart. */
type TargetCollection = Exclude<SandboxStore, 'Stock' | 'SyncSession'>;
const TARGET_COLLECTIONS = [...new Set(Object.values(TARGET_INFO).map((t) => t.sandbox))].filter(
  (s): s is TargetCollection => s !== 'Stock' && s !== 'SyncSession',
);

/** Collections by resource name (the names used by /__sandbox/state?resource=X and /__sandbox/counts). */
export type Resource = (typeof REFERENCE_COLLECTIONS)[number] | TargetCollection | 'Inventory';
export const RESOURCES: readonly Resource[] = [...REFERENCE_COLLECTIONS, ...TARGET_COLLECTIONS, 'Inventory'];

export interface StockRow {
  warehouseId: string;
  warehouseName: string | null;
  ownerId: string | null;
  ownerName: string | null;
  productId: string;
  productCode: string | null;
  productName: string | null;
  lotNumber: string | null;
  manufacturingDate: string | null;
  expirationDate: string | null;
  quantity: number;
  reserved: number;
  materialStatusId: string | null;
  materialStatusName: string | null;
  unitMeasurementId: string | null;
  unitMeasurementName: string | null;
}

/** Synthetic stock: `count` records derived from their index (see stock.ts), only overrides stored. */
export interface SyntheticStock {
  count: number;
  products: Array<{ id: string; code: string; name: string; unitId: string; unitName: string }>;
  warehouses: Array<{ id: string; name: string }>;
  owner: { id: string; name: string };
  status: { id: string; name: string };
  /** index -> materialStatusId set by lock/unlock */
  statusOverrides: Record<string, string>;
}

export interface SyncSession {
  ownerId: string;
  chunks: number;
  /** productId -> quantity (last value wins: a resent chunk is idempotent) */
  products: Record<string, number>;
  completed: boolean;
  completedAt: string | null;
}

export interface SandboxStats {
  requests: number;
  faults: { failRate: number; rate429: number; resetBefore: number; resetAfter: number };
  /**
   * Back-pressure as the WMS sees it, from when each injected 429 was written and by when each request
   * arrived: the number of Retry-After windows; `strict`, the API requests that arrived inside one; `inside`,
   * those that arrived more than RETRY_AFTER_GRACE_MS into it (a client in another process may have written
   * a request just before the 429 reached it). A client that honours Retry-After for all its requests keeps
   * both at 0 (`strict` exactly when the client runs in the sandbox's process: GET /__sandbox/retry-after).
   */
  retryAfter?: { windows: number; inside: number; strict?: number };
  /**
   * Requests the interface does not define, refused: an unknown route (404), a method a route does not take
   * (405), a query parameter the interface does not give (400); the last few described. A client keeps it at 0.
   */
  outsideInterface?: { count: number; last: string[] };
  authorizations: number;
  refreshes: number;
  authFailures: number;
  validationFailures: number;
}

export interface SandboxState {
  version: 1;
  seed: string;
  /** counter behind deterministic ids of created records */
  nextSeq: number;
  collections: Record<Resource, Rec[]>;
  stock: StockRow[];
  synthetic: SyntheticStock;
  syncSessions: Record<string, SyncSession>;
  /** creations through the API, per resource and natural key (duplicates are allowed and counted) */
  creations: Record<string, Record<string, number>>;
  updates: Record<string, number>;
  deletes: Record<string, number>;
  stats: SandboxStats;
}

export function emptyStats(): SandboxStats {
  return {
    requests: 0,
    faults: { failRate: 0, rate429: 0, resetBefore: 0, resetAfter: 0 },
    retryAfter: { windows: 0, inside: 0, strict: 0 },
    outsideInterface: { count: 0, last: [] },
    authorizations: 0,
    refreshes: 0,
    authFailures: 0,
    validationFailures: 0,
  };
}

/** Id indexes over the collections (not serialised). */
export class StateIndex {
  private readonly byId = new Map<Resource, Map<string, Rec>>();
  constructor(private readonly state: SandboxState) {
    for (const r of RESOURCES) {
      const m = new Map<string, Rec>();
      for (const rec of state.collections[r]) m.set(rec.id.toLowerCase(), rec);
      this.byId.set(r, m);
    }
  }
  get(resource: Resource, id: string): Rec | undefined {
    return this.byId.get(resource)?.get(id.toLowerCase());
  }
  has(resource: Resource, id: string): boolean {
    return this.byId.get(resource)?.has(id.toLowerCase()) ?? false;
  }
  add(resource: Resource, rec: Rec): void {
    this.state.collections[resource].push(rec);
    this.byId.get(resource)?.set(rec.id.toLowerCase(), rec);
  }
  replace(resource: Resource, rec: Rec): void {
    const list = this.state.collections[resource];
    const i = list.findIndex((r) => r.id === rec.id);
    if (i >= 0) list[i] = rec;
    else list.push(rec);
    this.byId.get(resource)?.set(rec.id.toLowerCase(), rec);
  }
  remove(resource: Resource, id: string): boolean {
    const list = this.state.collections[resource];
    const lower = id.toLowerCase();
    const i = list.findIndex((r) => r.id.toLowerCase() === lower);
    if (i < 0) return false;
    list.splice(i, 1);
    this.byId.get(resource)?.delete(lower);
    return true;
  }
}

/** Checks the shape of a loaded state file well enough to refuse a foreign or damaged file. */
export function isSandboxState(v: unknown): v is SandboxState {
  if (!v || typeof v !== 'object') return false;
  const s = v as Partial<SandboxState>;
  if (s.version !== 1 || typeof s.nextSeq !== 'number' || !s.collections || !Array.isArray(s.stock) || !s.synthetic) return false;
  return RESOURCES.every((r) => Array.isArray((s.collections as Record<string, unknown>)[r]));
}
