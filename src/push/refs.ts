/**
 * Resolves the `$ref` placeholders of a mapped payload into WMS ids just before it is sent.
 * Order: the journal's cross-reference (what wmsbridge created), then the outcome of the same run
 * (a dependency that failed holds the record), then a WMS read where the interface has one.
 */
import { isRef, type RefValue } from '../map/types.js';
import type { RecordQueue, CrossReference } from '../journal/types.js';

/** The journal roles reference resolution reads. */
type RefJournal = RecordQueue & CrossReference;
import type { WmsClient } from '../wms/client-types.js';
import type { LoadableReferenceCache } from './reference-cache.js';
import { TARGETS, specOfResource, type LookupRule, type Target } from '../wms/targets.js';
import { ENDPOINTS } from '../wms/endpoints.js';
import { isReadOnlyResource } from './reference-cache.js';
import { findOwner, ownerField } from './owners.js';
import { comparisonText, matchKey } from '../map/identifiers.js';
import { LOOKUP_BY } from '../map/model.js';
import type { RefResource } from '../wms/targets.js';

function isTarget(r: string): r is Target {
  return (TARGETS as readonly string[]).includes(r);
}

export type ResolveResult =
  | { ok: true; payload: Record<string, unknown> }
  | {
      ok: false;
      status: 'held' | 'rejected';
      code: 'dependency_failed' | 'dependency_waiting' | 'lookup_not_found';
      field: string;
      message: string;
      resource?: string;
      value?: string;
    }
  /** a dependency is not settled yet (another instance is still sending it): try again later */
  | { ok: false; status: 'deferred'; code: 'dependency_pending'; field: string; message: string; resource?: string; value?: string };

/**
 * Why a record of this run (or of an earlier one, found at resume) that others may depend on is not
 * usable as a reference: it waits for the WMS (an outage, not its data: its dependants wait too, and the
 * next run sends them all), it was not delivered, or it was delivered but its WMS id is unknown.
 */
export interface DependencyState {
  kind: 'waiting-for-wms' | 'not-delivered' | 'exists-without-id';
  /** in words, for the dependant's message (English: logs and machines) */
  why: string;
}

/** What happened to records of this run that other records may depend on: "Resource|key" -> state. */
export type RunFailures = Map<string, DependencyState>;

export function failureKey(resource: string, key: string): string {
  return `${resource}|${key}`;
}

export interface RefResolver {
  resolve(payload: Record<string, unknown>): Promise<ResolveResult>;
  /** a product's WMS id through the run's index of the Stock list (undefined: no stock record names it) */
  productIdByCode(code: string): Promise<string | undefined>;
}

/** What the run's Stock index read, in words (a lookup's message). */
export const STOCK_INDEX_READ =
  'read the Stock list (GET /open/v1/Stock, paged, no filter: the interface defines none) by productCode: a product unknown to the WMS, or without stock, cannot be resolved through the interface (it has no product read)';

/**
 * Products wmsbridge did not create, through their stock: the interface has no product read, and defines no
 * filter on GET /open/v1/Stock (a strict WMS answers 400 to an unknown query parameter), so the Stock list is
 * paged (the client's paging: page base auto-detected, a short read is an error) and indexed by productCode
 * (matchKey), once per run and only as far as needed: a lookup pages on until its code shows up, the next one
 * goes on from there, and once the last page is read a miss is final. Lookups take turns (one reader).
 */
export function createStockIndex(client: WmsClient | null): (code: string) => Promise<string | undefined> {
  const byCode = new Map<string, string>();
  let pages: AsyncIterator<{ productCode?: string | null | undefined; productId?: string | null | undefined }> | undefined;
  let complete = false;
  let turn: Promise<unknown> = Promise.resolve();
  const lookUp = async (want: string): Promise<string | undefined> => {
    try {
      while (!byCode.has(want) && !complete && client) {
        pages ??= client.listStock()[Symbol.asyncIterator]();
        const next = await pages.next();
        if (next.done) complete = true;
        else if (next.value.productCode && next.value.productId) {
          const k = matchKey('code', next.value.productCode);
          if (!byCode.has(k)) byCode.set(k, next.value.productId);
        }
      }
    } catch (err) {
      pages = undefined; // a failed read: the next lookup pages again from the first page (the index is kept)
      throw err;
    }
    return byCode.get(want);
  };
  return (code) => {
    const want = matchKey('code', code);
    if (byCode.has(want) || complete) return Promise.resolve(byCode.get(want));
    const p = turn.then(
      () => lookUp(want),
      () => lookUp(want),
    );
    turn = p.catch(() => undefined);
    return p;
  };
}

/**
 * The WMS reads of references wmsbridge did not create, by the lookup rule of the resource's target spec
 * (src/wms/targets/: `lookup`): one GET by a field, the Owners list, or the run's Stock index. A read is made once
 * per run and value (a failed read is not kept: the next lookup reads again).
 */
class WmsLookups {
  private readonly reads = new Map<string, Promise<string | undefined>>();
  /** productCode -> productId through the run's index of the Stock list (the interface has no product read) */
  readonly productIdByCode: (code: string) => Promise<string | undefined>;

  constructor(private readonly client: WmsClient | null) {
    this.productIdByCode = createStockIndex(client);
  }

  /** The field a natural-key reference to `resource` is read by when the mapping names none (its lookup's `by`). */
  defaultBy(resource: string): string | undefined {
    return specOfResource(resource)?.lookup?.by;
  }

  /** The lookup rule that reads `resource` by `by`, or null when the interface has no such read. */
  private ruleFor(resource: string, by: string): LookupRule | null {
    const rule = specOfResource(resource)?.lookup;
    if (!rule) return null;
    if (rule.read === 'owners') return ownerField(by) ? rule : null;
    return rule.by.toLowerCase() === by.toLowerCase() ? rule : null;
  }

  /** The WMS read a lookup of `resource` by `by` makes, in words; null when the interface has none. */
  describe(resource: string, by: string): string | null {
    const rule = this.ruleFor(resource, by);
    if (!rule) return null;
    switch (rule.read) {
      case 'get':
        return `read GET ${ENDPOINTS[rule.get].path}`;
      case 'owners':
        return `searched the ${resource} list by ${ownerField(by)!}`;
      case 'stock-index':
        return STOCK_INDEX_READ;
    }
  }

  /** The WMS id of the `resource` whose `by` is `value`, read from the WMS (undefined: not there, or no read). */
  read(resource: string, by: string, value: string): Promise<string | undefined> {
    const k = `${resource}|${by}|${value}`;
    let p = this.reads.get(k);
    if (!p) {
      p = this.readNow(resource, by, value);
      this.reads.set(k, p);
      // a failed read must not be cached as "not found"
      p.catch(() => this.reads.delete(k));
    }
    return p;
  }

  private async readNow(resource: string, by: string, value: string): Promise<string | undefined> {
    const rule = this.ruleFor(resource, by);
    if (!this.client || !rule) return undefined;
    switch (rule.read) {
      case 'get':
        return (await this.client[rule.get](value))?.id;
      case 'owners':
        return (await findOwner(this.client, ownerField(by)!, value))?.id;
      case 'stock-index':
        return this.productIdByCode(value);
    }
  }
}

type RefFailure = Extract<ResolveResult, { ok: false }>;
interface RefDeps {
  journal: RefJournal;
  refCache: LoadableReferenceCache;
  failures: RunFailures;
}

/** A reference to reference data (companies, warehouses...): from the run's cache of the WMS lists. */
async function resolveReadOnly(refCache: LoadableReferenceCache, ref: RefValue['$ref'], field: string): Promise<{ id: string } | RefFailure> {
  const { resource, value, by } = ref;
  await refCache.load([resource]);
  const id = refCache.find(resource, by ?? 'codeERP', value) ?? refCache.find(resource, 'name', value);
  if (id) return { id };
  return notFound(ref, field, `${resource} with ${by ?? 'codeERP'} '${value}' not found in the WMS`);
}

/** A reference found nowhere: rejected, naming the field, the resource and the value, with what was tried. */
function notFound(ref: RefValue['$ref'], field: string, message: string): RefFailure {
  return { ok: false, status: 'rejected', code: 'lookup_not_found', field, resource: ref.resource, value: ref.value, message };
}

/** The cross-reference entry of what wmsbridge created, by key, else by the lookup's field. */
async function xrefOf(journal: RefJournal, ref: RefValue['$ref'], fresh: boolean): Promise<{ wmsId: string } | undefined> {
  const { resource, value, by } = ref;
  return (
    (await journal.getXref(resource, value, fresh ? { fresh: true } : undefined)) ??
    (by ? await journal.findXrefByField(resource, by, matchKey(by, value)) : undefined)
  );
}

/** Why a dependency the run (or an earlier one) failed to deliver holds this record, or undefined. */
function failedDependency(failures: RunFailures, ref: RefValue['$ref'], field: string): RefFailure | undefined {
  const { resource, value } = ref;
  const failed = failures.get(failureKey(resource, value));
  if (!failed) return undefined;
  if (failed.kind === 'waiting-for-wms') {
    return {
      ok: false,
      status: 'held',
      code: 'dependency_waiting',
      field,
      resource,
      value,
      message: `waiting for ${resource} '${value}' (${field}): not delivered yet because the WMS was unavailable (${failed.why}); the next run sends both`,
    };
  }
  // delivered earlier but its id is unknown (a conflict whose answer named no id): say so, not "not delivered"
  const why = failed.kind === 'exists-without-id' ? `which exists in the WMS but ${failed.why}` : `which was not delivered: ${failed.why}`;
  return { ok: false, status: 'held', code: 'dependency_failed', field, resource, value, message: `depends on ${resource} '${value}', ${why}` };
}

/**
 * A reference to a target another instance may be sending: deferred while it is unsettled, else its cross-reference
 * entry read again (committed with its settle); undefined when neither.
 */
async function pendingOrSettled(journal: RefJournal, ref: RefValue['$ref'], field: string): Promise<{ id: string } | RefFailure | undefined> {
  const { resource, value } = ref;
  if (!isTarget(resource)) return undefined;
  if ((await journal.countUnsettled(resource, value)) > 0) {
    return {
      ok: false,
      status: 'deferred',
      code: 'dependency_pending',
      field,
      resource,
      value,
      message: `depends on ${resource} '${value}', which is not settled yet (being sent by another instance?)`,
    };
  }
  // another instance may have settled it between the two reads before: its cross-reference is committed
  // with (never after) its settle, so a second look now finds it (in the store: the first look may have been
  // answered by the page read ahead, from before that settle)
  const again = await xrefOf(journal, ref, true);
  return again ? { id: again.wmsId } : undefined;
}

/** The last resort: a WMS read where the interface has one (its id is kept in the cross-reference), else why not. */
async function resolveByRead(journal: RefJournal, lookups: WmsLookups, ref: RefValue['$ref'], field: string): Promise<{ id: string } | RefFailure> {
  const { resource, value, by } = ref;
  const readBy = by ?? lookups.defaultBy(resource);
  const read = readBy ? lookups.describe(resource, readBy) : null;
  if (read) {
    const id = await lookups.read(resource, readBy!, value);
    if (id) {
      await journal.putXref(resource, value, id, null);
      return { id };
    }
  }
  // say exactly what was tried
  const tried = [`not created by wmsbridge (cross-reference by key${by ? ` and by ${by}, ${comparisonText(by)}` : ''})`];
  tried.push(read ? `not in the WMS (${read})` : `the interface has no read of ${resource}${by ? ` by ${by}` : ''}`);
  return notFound(ref, field, `${resource}${by ? ` with ${by}` : ''} '${value}' not found: ${tried.join('; ')}`);
}

/** One `$ref`: by id as given, from reference data, the cross-reference, the run's failures, or a WMS read. */
async function resolveOne(deps: RefDeps, lookups: WmsLookups, ref: RefValue['$ref'], field: string): Promise<{ id: string } | RefFailure> {
  const by = ref.by;
  if (by && by.toLowerCase() === 'id') return { id: ref.value };
  if (isReadOnlyResource(ref.resource)) return resolveReadOnly(deps.refCache, ref, field);
  const x = await xrefOf(deps.journal, ref, false);
  if (x) return { id: x.wmsId };
  const failed = failedDependency(deps.failures, ref, field);
  if (failed) return failed;
  const pending = await pendingOrSettled(deps.journal, ref, field);
  if (pending) return pending;
  return resolveByRead(deps.journal, lookups, ref, field);
}

/** The payload with every `$ref` replaced by its id; the first that fails stops the walk (out.fail). */
async function walk(
  node: unknown,
  path: string,
  out: { fail?: RefFailure },
  resolve: (ref: RefValue['$ref'], field: string) => Promise<{ id: string } | RefFailure>,
): Promise<unknown> {
  if (out.fail) return node;
  if (isRef(node)) {
    const r = await resolve(node.$ref, path);
    if ('id' in r) return r.id;
    out.fail = r;
    return node;
  }
  if (Array.isArray(node)) {
    const arr: unknown[] = [];
    for (const [i, v] of node.entries()) arr.push(await walk(v, `${path}[${i}]`, out, resolve));
    return arr;
  }
  if (node !== null && typeof node === 'object') {
    const obj: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(node)) obj[k] = await walk(v, path ? `${path}.${k}` : k, out, resolve);
    return obj;
  }
  return node;
}

export function createRefResolver(deps: {
  journal: RefJournal;
  client: WmsClient | null;
  refCache: LoadableReferenceCache;
  failures: RunFailures;
}): RefResolver {
  const lookups = new WmsLookups(deps.client);
  const resolve = (ref: RefValue['$ref'], field: string): Promise<{ id: string } | RefFailure> => resolveOne(deps, lookups, ref, field);
  return {
    productIdByCode: lookups.productIdByCode,
    async resolve(payload) {
      // most records hold no reference: no async walk (and no promise per field) for them
      if (!hasRef(payload)) return { ok: true, payload };
      const out: { fail?: RefFailure } = {};
      const resolved = (await walk(payload, '', out, resolve)) as Record<string, unknown>;
      return out.fail ?? { ok: true, payload: resolved };
    },
  };
}

/**
 * The identifying fields of a payload wmsbridge sends as `resource` (every field a lookup's `by` may name,
 * LOOKUP_BY), as [field, matchKey] pairs for the cross-reference (Journal.putXrefFields).
 */
export function identifyingFields(resource: RefResource, payload: Record<string, unknown>): Array<[string, string]> {
  const out: Array<[string, string]> = [];
  for (const f of LOOKUP_BY[resource] ?? []) {
    if (f === 'id') continue;
    const v = payload[f];
    if ((typeof v === 'string' && v.trim() !== '') || typeof v === 'number') out.push([f, matchKey(f, v)]);
  }
  return out;
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
