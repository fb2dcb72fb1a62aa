/**
 * A ReferenceCache over records held in memory: for tests, previews with a saved reference pull, and
 * any tool that already has the reference data. Values are compared as identifiers.ts says for the field
 * (CNPJ/CPF, EAN/GTIN, CEP, NCM by their digits; everything else trimmed, NFC, case-insensitive), like the
 * pipeline's cache; field names are matched case-insensitively.
 */
import type { RefResource } from '../wms/targets.js';
import type { ReferenceCache } from './types.js';
import { matchKey } from './identifiers.js';

export type StaticReferenceData = Partial<Record<RefResource, ReadonlyArray<Readonly<Record<string, unknown>>>>>;

export function createStaticReferenceCache(data: StaticReferenceData): ReferenceCache {
  // resource -> field (lower case) -> value -> records
  const index = new Map<string, Map<string, Map<string, Array<Readonly<Record<string, unknown>>>>>>();
  for (const [resource, records] of Object.entries(data) as Array<[RefResource, ReadonlyArray<Readonly<Record<string, unknown>>>]>) {
    const byField = new Map<string, Map<string, Array<Readonly<Record<string, unknown>>>>>();
    for (const rec of records) {
      for (const [field, value] of Object.entries(rec)) {
        if (value === null || value === undefined || typeof value === 'object') continue;
        const f = field.toLowerCase();
        let m = byField.get(f);
        if (!m) byField.set(f, (m = new Map()));
        const k = matchKey(f, value);
        const list = m.get(k);
        if (list) list.push(rec);
        else m.set(k, [rec]);
      }
    }
    index.set(resource, byField);
  }
  const findAll = (resource: RefResource, by: string, value: string): ReadonlyArray<Readonly<Record<string, unknown>>> =>
    index.get(resource)?.get(by.toLowerCase())?.get(matchKey(by, value)) ?? [];
  return {
    has: (resource) => index.has(resource),
    find(resource, by, value) {
      const id = findAll(resource, by, value)[0]?.['id'];
      return typeof id === 'string' ? id : undefined;
    },
    findAll,
  };
}
