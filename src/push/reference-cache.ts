/**
 * Read-only reference data (Company, Branch, Warehouse, Dock, LogisticsProfile, MaterialStatus) read
 * from the WMS once per run and kept in memory, so mapping lookups are synchronous. Reference pulls
 * refresh it too (`refresh`).
 */
import type { ReferenceCache } from '../map/types.js';
import type { RefResource } from '../wms/targets.js';
import type { WmsClient } from '../wms/client-types.js';

export const READ_ONLY_RESOURCES = ['Company', 'Branch', 'Warehouse', 'Dock', 'LogisticsProfile', 'MaterialStatus'] as const;
export type ReadOnlyResource = (typeof READ_ONLY_RESOURCES)[number];

export function isReadOnlyResource(r: string): r is ReadOnlyResource {
  return (READ_ONLY_RESOURCES as readonly string[]).includes(r);
}

function norm(v: unknown): string {
  return String(v ?? '')
    .trim()
    .normalize('NFC')
    .toLowerCase();
}

export interface LoadableReferenceCache extends ReferenceCache {
  /** reads the given resources from the WMS (once each; later calls are free) */
  load(resources: Iterable<RefResource>): Promise<void>;
  /** replaces a resource's records (after a reference pull) */
  refresh(resource: RefResource, records: ReadonlyArray<Record<string, unknown>>): void;
  /** number of records held per resource */
  sizes(): Record<string, number>;
}

export function createReferenceCache(client: WmsClient | null): LoadableReferenceCache {
  // resource -> field (lower-case) -> normalised value -> records (first one's id answers find())
  const data = new Map<string, Map<string, Map<string, Array<Readonly<Record<string, unknown>>>>>>();
  const counts = new Map<string, number>();

  function index(resource: RefResource, records: ReadonlyArray<Record<string, unknown>>): void {
    const byField = new Map<string, Map<string, Array<Readonly<Record<string, unknown>>>>>();
    for (const rec of records) {
      if (typeof rec['id'] !== 'string') continue;
      for (const [field, value] of Object.entries(rec)) {
        if (value === null || value === undefined || typeof value === 'object') continue;
        const f = field.toLowerCase();
        let m = byField.get(f);
        if (!m) byField.set(f, (m = new Map()));
        const k = norm(value);
        const list = m.get(k);
        if (list) list.push(rec);
        else m.set(k, [rec]);
      }
    }
    data.set(resource, byField);
    counts.set(resource, records.length);
  }

  async function readAll(resource: ReadOnlyResource): Promise<Record<string, unknown>[]> {
    if (!client) return [];
    const out: Record<string, unknown>[] = [];
    const it: AsyncIterable<Record<string, unknown>> =
      resource === 'Company'
        ? client.listCompanies()
        : resource === 'Branch'
          ? client.listBranches()
          : resource === 'Warehouse'
            ? client.listWarehouses()
            : resource === 'Dock'
              ? client.listDocks()
              : resource === 'LogisticsProfile'
                ? client.listLogisticsProfiles()
                : client.listMaterialStatuses();
    for await (const r of it) out.push(r);
    return out;
  }

  return {
    has: (resource) => data.has(resource),
    find(resource, by, value) {
      const id = data.get(resource)?.get(by.toLowerCase())?.get(norm(value))?.[0]?.['id'];
      return typeof id === 'string' ? id : undefined;
    },
    findAll(resource, by, value) {
      return data.get(resource)?.get(by.toLowerCase())?.get(norm(value)) ?? [];
    },
    async load(resources) {
      for (const r of new Set(resources)) {
        if (data.has(r) || !isReadOnlyResource(r)) continue;
        index(r, await readAll(r));
      }
    },
    refresh: index,
    sizes: () => Object.fromEntries(counts),
  };
}
