/**
 * Read-only reference data (Company, Branch, Warehouse, Dock, LogisticsProfile, MaterialStatus) read
 * from the WMS once per run and kept in memory, so mapping lookups are synchronous. Reference pulls
 * refresh it too (`refresh`).
 */
import type { ReferenceCache } from '../map/types.js';
import { createStaticReferenceCache } from '../map/static-refs.js';
import type { RefResource } from '../wms/targets.js';
import type { WmsClient } from '../wms/client-types.js';

export const READ_ONLY_RESOURCES = ['Company', 'Branch', 'Warehouse', 'Dock', 'LogisticsProfile', 'MaterialStatus'] as const;
export type ReadOnlyResource = (typeof READ_ONLY_RESOURCES)[number];

export function isReadOnlyResource(r: string): r is ReadOnlyResource {
  return (READ_ONLY_RESOURCES as readonly string[]).includes(r);
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
  // the records read per resource; lookups go through the same index a static cache uses
  const data: Partial<Record<RefResource, ReadonlyArray<Readonly<Record<string, unknown>>>>> = {};
  let index = createStaticReferenceCache(data);
  const replace = (resource: RefResource, records: ReadonlyArray<Record<string, unknown>>): void => {
    data[resource] = records;
    index = createStaticReferenceCache(data);
  };

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
    has: (resource) => data[resource] !== undefined,
    find: (resource, by, value) => index.find(resource, by, value),
    findAll: (resource, by, value) => index.findAll?.(resource, by, value) ?? [],
    async load(resources) {
      for (const r of new Set(resources)) {
        if (data[r] !== undefined || !isReadOnlyResource(r)) continue;
        replace(r, await readAll(r));
      }
    },
    refresh: replace,
    sizes: () => Object.fromEntries(Object.entries(data).map(([r, recs]) => [r, recs?.length ?? 0])),
  };
}
