/**
 * Resolves the `$ref` placeholders of a mapped payload into WMS ids just before it is sent.
 * Order: the journal's cross-reference (what wmsbridge created), then the outcome of the same run
 * (a dependency that failed holds the record), then a WMS read where the interface has one.
 */
import { isRef, type RefValue } from '../map/types.js';
import type { Journal } from '../journal/types.js';
import type { WmsClient } from '../wms/client-types.js';
import type { LoadableReferenceCache } from './reference-cache.js';
import { TARGETS, type Target } from '../wms/targets.js';

function isTarget(r: string): r is Target {
  return (TARGETS as readonly string[]).includes(r);
}
import { isReadOnlyResource } from './reference-cache.js';

export type ResolveResult =
  | { ok: true; payload: Record<string, unknown> }
  | { ok: false; status: 'held' | 'rejected'; code: 'dependency_failed' | 'dependency_waiting' | 'lookup_not_found'; field: string; message: string }
  /** a dependency is not settled yet (another instance is still sending it): try again later */
  | { ok: false; status: 'deferred'; code: 'dependency_pending'; field: string; message: string };

/** What happened to records of this run that other records may depend on: "Resource|key" -> reason. */
export type RunFailures = Map<string, string>;

/**
 * A RunFailures reason starting with this tag: the dependency was not delivered because the WMS was
 * unavailable (not because of its data). Its dependants are held "waiting for ..." and the next run sends
 * them again (see isWaitingForWms), instead of rejecting them.
 */
export const WMS_UNAVAILABLE_TAG = 'wms-unavailable: ';

/** The error of a record held only because a dependency is waiting for the WMS to answer again. */
export const WAITING_FOR_PREFIX = 'waiting for ';

export function isWaitingForWms(error: string | null | undefined): boolean {
  return typeof error === 'string' && error.startsWith(WAITING_FOR_PREFIX);
}

export function failureKey(resource: string, key: string): string {
  return `${resource}|${key}`;
}

/** Default field a natural-key reference is read back by, where the interface has such a read. */
const READ_BY_KEY: Record<string, string> = { Provider: 'codeERP', ShippingCompany: 'codeERP', Owners: 'code' };

export interface RefResolver {
  resolve(payload: Record<string, unknown>): Promise<ResolveResult>;
}

export function createRefResolver(deps: {
  journal: Journal;
  client: WmsClient | null;
  refCache: LoadableReferenceCache;
  failures: RunFailures;
}): RefResolver {
  const { journal, client, refCache, failures } = deps;
  const wmsReads = new Map<string, Promise<string | undefined>>();

  function readByField(resource: string, by: string, value: string): Promise<string | undefined> {
    const k = `${resource}|${by}|${value}`;
    let p = wmsReads.get(k);
    if (!p) {
      p = (async () => {
        if (!client) return undefined;
        if ((resource === 'Provider' || resource === 'ShippingCompany') && by.toLowerCase() === 'codeerp') {
          const r = resource === 'Provider' ? await client.getProviderByErp(value) : await client.getShippingCompanyByErp(value);
          return r?.id;
        }
        if (resource === 'Owners' && (by.toLowerCase() === 'code' || by.toLowerCase() === 'codeerp')) {
          return (await client.getOwnerByCode(value))?.id;
        }
        return undefined;
      })();
      wmsReads.set(k, p);
      // a failed read must not be cached as "not found"
      p.catch(() => wmsReads.delete(k));
    }
    return p;
  }

  async function resolveOne(ref: RefValue['$ref'], field: string): Promise<{ id: string } | Extract<ResolveResult, { ok: false }>> {
    const { resource, value } = ref;
    const by = ref.by;
    if (by && by.toLowerCase() === 'id') return { id: value };
    if (isReadOnlyResource(resource)) {
      await refCache.load([resource]);
      const id = refCache.find(resource, by ?? 'codeERP', value) ?? refCache.find(resource, 'name', value);
      if (id) return { id };
      return { ok: false, status: 'rejected', code: 'lookup_not_found', field, message: `${resource} with ${by ?? 'codeERP'} '${value}' not found in the WMS` };
    }
    const x = await journal.getXref(resource, value);
    if (x) return { id: x.wmsId };
    const failed = failures.get(failureKey(resource, value));
    if (failed?.startsWith(WMS_UNAVAILABLE_TAG)) {
      const why = failed.slice(WMS_UNAVAILABLE_TAG.length);
      return { ok: false, status: 'held', code: 'dependency_waiting', field, message: `${WAITING_FOR_PREFIX}${resource} '${value}' (${field}): not delivered yet because the WMS was unavailable (${why}); the next run sends both` };
    }
    if (failed) return { ok: false, status: 'held', code: 'dependency_failed', field, message: `depends on ${resource} '${value}', which was not delivered: ${failed}` };
    if (isTarget(resource)) {
      if ((await journal.countUnsettled(resource, value)) > 0) {
        return { ok: false, status: 'deferred', code: 'dependency_pending', field, message: `depends on ${resource} '${value}', which is not settled yet (being sent by another instance?)` };
      }
      // another instance may have settled it between the two reads above: its cross-reference is committed
      // with (never after) its settle, so a second look now finds it
      const again = await journal.getXref(resource, value);
      if (again) return { id: again.wmsId };
    }
    const readBy = by ?? READ_BY_KEY[resource];
    if (readBy) {
      const id = await readByField(resource, readBy, value);
      if (id) {
        await journal.putXref(resource, value, id, null);
        return { id };
      }
    }
    const how = readBy ? `not in the WMS (read by ${readBy})` : 'not created by wmsbridge (no cross-reference) and the interface has no read for it';
    return { ok: false, status: 'rejected', code: 'lookup_not_found', field, message: `${resource} '${value}' not found: ${how}` };
  }

  async function walk(node: unknown, path: string, out: { fail?: Extract<ResolveResult, { ok: false }> }): Promise<unknown> {
    if (out.fail) return node;
    if (isRef(node)) {
      const r = await resolveOne(node.$ref, path);
      if ('id' in r) return r.id;
      out.fail = r;
      return node;
    }
    if (Array.isArray(node)) {
      const arr: unknown[] = [];
      for (const [i, v] of node.entries()) arr.push(await walk(v, `${path}[${i}]`, out));
      return arr;
    }
    if (node !== null && typeof node === 'object') {
      const obj: Record<string, unknown> = {};
      for (const [k, v] of Object.entries(node)) obj[k] = await walk(v, path ? `${path}.${k}` : k, out);
      return obj;
    }
    return node;
  }

  return {
    async resolve(payload) {
      // most records hold no reference: no async walk (and no promise per field) for them
      if (!hasRef(payload)) return { ok: true, payload };
      const out: { fail?: Extract<ResolveResult, { ok: false }> } = {};
      const resolved = (await walk(payload, '', out)) as Record<string, unknown>;
      return out.fail ?? { ok: true, payload: resolved };
    },
  };
}

/** Whether a payload holds a RefValue anywhere. */
export function hasRef(node: unknown): boolean {
  if (isRef(node)) return true;
  if (Array.isArray(node)) return node.some(hasRef);
  if (node !== null && typeof node === 'object') {
    for (const v of Object.values(node)) if (hasRef(v)) return true;
  }
  return false;
}

/** Every RefValue in a payload (for dependency checks and reports). */
export function collectRefs(node: unknown, acc: RefValue['$ref'][] = []): RefValue['$ref'][] {
  if (isRef(node)) acc.push(node.$ref);
  else if (Array.isArray(node)) for (const v of node) collectRefs(v, acc);
  else if (node !== null && typeof node === 'object') for (const v of Object.values(node)) collectRefs(v, acc);
  return acc;
}
