/**
 * Handlers of the interface's endpoints (everything but authentication, which server.ts owns).
 * Each handler is synchronous over the in-memory state and returns a Reply; nothing here touches the
 * network, so a handler runs to completion or not at all (faults are decided before and after it).
 */
import type { z } from 'zod';
import * as S from '../wms/schemas.js';
import type { DeclaredEndpointName, EndpointName } from '../wms/endpoints.js';
import { REGISTRY, SPECS, type SandboxStore, type TargetSpec } from '../wms/targets.js';
import { cnpjProblem } from './ids.js';
import { fail, listReply, ok, pageOf, pageStart, parsePaging, type Reply } from './http-util.js';
import { normalizeInput, type SandboxDialect } from './dialect.js';
import { multipartBoundary, parseMultipart, MultipartError, type MultipartPart } from './multipart.js';
import type { Rec, Resource, SandboxState, StateIndex, StockRow } from './state.js';
import { forEachMatch, isEmptyFilter, stockSlice, stockTotal, type StockFilter } from './stock.js';
import { GUID_RE, formatProblems, zodProblems, type FieldProblem } from './validate.js';

export interface ApiContext {
  state: SandboxState;
  index: StateIndex;
  maxPageSize: number;
  /** the choices this sandbox makes where the interface leaves them open (dialect.ts) */
  dialect: SandboxDialect;
  newId(): string;
  /** marks the state changed (debounced save) */
  changed(): void;
}

export interface ApiRequest {
  params: Record<string, string>;
  query: URLSearchParams | null;
  body: Buffer;
  contentType: string | undefined;
}

export type Handler = (ctx: ApiContext, req: ApiRequest) => Reply;

export const ATTACHMENT_MAX_BYTES = 10 * 1024 * 1024;
export const ATTACHMENT_TYPES = ['pdf', 'png', 'jpg', 'txt', 'csv', 'xml', 'zpl'] as const;

// ------------------------------------------------------------------------------------------------
// body and validation helpers
// ------------------------------------------------------------------------------------------------

function isJsonType(ct: string | undefined): boolean {
  if (!ct) return false;
  const t = ct.split(';')[0]!.trim().toLowerCase();
  return t === 'application/json' || (t.startsWith('application/') && t.endsWith('+json'));
}

/** The JSON object of the body; `optional` lets an empty body mean {} (Stock/search). */
export function jsonBody(req: ApiRequest, optional = false): Record<string, unknown> | Reply {
  if (req.body.length === 0) {
    if (optional) return {};
    return fail(400, 'body: required (a JSON object)');
  }
  if (!isJsonType(req.contentType)) return fail(415, 'Content-Type must be application/json');
  let v: unknown;
  try {
    v = JSON.parse(req.body.toString('utf8'));
  } catch (err) {
    return fail(400, `body: invalid JSON (${err instanceof Error ? err.message : String(err)})`);
  }
  if (v === null || typeof v !== 'object' || Array.isArray(v)) return fail(400, 'body: must be a JSON object');
  return v as Record<string, unknown>;
}

function isReply(v: unknown): v is Reply {
  return typeof v === 'object' && v !== null && 'status' in v && 'body' in v && typeof (v as Reply).status === 'number';
}

type FkCheck = (raw: Record<string, unknown>, problems: FieldProblem[], bad: Set<string>) => void;

/** Validates a body against a Create schema plus foreign-key checks; every failing field is named. */
function validateBody<T extends z.ZodType>(ctx: ApiContext, raw: Record<string, unknown>, schema: T, fk?: FkCheck): { data: z.output<T> } | Reply {
  const r = schema.safeParse(raw);
  const problems: FieldProblem[] = r.success ? [] : zodProblems(r.error);
  const bad = new Set(problems.map((p) => p.field));
  fk?.(raw, problems, bad);
  if (problems.length > 0) {
    ctx.state.stats.validationFailures++;
    return fail(400, formatProblems(problems));
  }
  return { data: (r as { data: z.output<T> }).data };
}

/** Checks that raw[field] (when it is a Guid string not already failing) names an existing record. */
function fkField(
  ctx: ApiContext,
  raw: Record<string, unknown>,
  field: string,
  path: string,
  resource: Resource,
  problems: FieldProblem[],
  bad: Set<string>,
): void {
  const v = raw[field];
  if (typeof v !== 'string' || !GUID_RE.test(v) || bad.has(path)) return;
  if (!ctx.index.has(resource, v)) problems.push({ field: path, reason: `${resource} ${v} does not exist` });
}

function fks(ctx: ApiContext, spec: Record<string, Resource>, items?: { key: string; spec: Record<string, Resource> }): FkCheck {
  return (raw, problems, bad) => {
    for (const [field, resource] of Object.entries(spec)) fkField(ctx, raw, field, field, resource, problems, bad);
    if (items) {
      const arr = raw[items.key];
      if (Array.isArray(arr)) {
        arr.forEach((item, i) => {
          if (item && typeof item === 'object' && !Array.isArray(item)) {
            for (const [field, resource] of Object.entries(items.spec)) {
              fkField(ctx, item as Record<string, unknown>, field, `${items.key}[${i}].${field}`, resource, problems, bad);
            }
          }
        });
      }
    }
  };
}

/**
 * The foreign keys of what a target sends, from its spec's `refs` (src/wms/targets/): every field but those the spec
 * leaves unchecked (`sandboxUnchecked`); `items[].field` is a field of each item of the array `items`.
 */
function refFks(ctx: ApiContext, spec: Pick<TargetSpec, 'refs' | 'sandboxUnchecked'>): FkCheck {
  const top: Record<string, Resource> = {};
  let items: { key: string; spec: Record<string, Resource> } | undefined;
  for (const [field, resource] of Object.entries(spec.refs)) {
    if (spec.sandboxUnchecked?.includes(field)) continue;
    const m = /^(\w+)\[\]\.(\w+)$/.exec(field);
    if (!m) top[field] = resource as Resource;
    else (items ??= { key: m[1]!, spec: {} }).spec[m[2]!] = resource as Resource;
  }
  return fks(ctx, top, items);
}

/** The target stored in `store` (the first of the registry: a delete shares its create's store). */
function storedIn(store: SandboxStore): TargetSpec {
  const spec = SPECS.find((s) => s.sandbox === store);
  if (!spec) throw new Error(`no target is stored in ${store}`);
  return spec;
}

/** The foreign keys of what the target stored in `store` sends. */
function fksOf(store: SandboxStore): (ctx: ApiContext) => FkCheck {
  const spec = storedIn(store);
  return (ctx) => refFks(ctx, spec);
}

function cnpjCheck(raw: Record<string, unknown>, problems: FieldProblem[], bad: Set<string>): void {
  const v = raw['cnpj'];
  if (typeof v !== 'string' || bad.has('cnpj') || v.trim() === '') return;
  const p = cnpjProblem(v);
  if (p) problems.push({ field: 'cnpj', reason: p });
}

function both(...checks: FkCheck[]): FkCheck {
  return (raw, problems, bad) => {
    for (const c of checks) c(raw, problems, bad);
  };
}

/** The schema's keys with absent optional values as null, in the schema's order and spelling. */
function withNulls(keys: readonly string[], data: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const k of keys) out[k] = data[k] ?? null;
  return out;
}

function keysOf(schema: { shape: Record<string, unknown> }): string[] {
  return Object.keys(schema.shape);
}

function countCreation(ctx: ApiContext, resource: string, key: string): void {
  const byKey = (ctx.state.creations[resource] ??= {});
  byKey[key] = (byKey[key] ?? 0) + 1;
}

function guidParam(value: string | undefined, name: string): string | Reply {
  if (value === undefined || !GUID_RE.test(value)) return fail(400, `${name}: must be a UUID (Guid)`);
  return value;
}

function notFound(resource: string, field: string, value: string): Reply {
  return fail(404, `${resource} with ${field} ${value} not found`);
}

// ------------------------------------------------------------------------------------------------
// generic create / update / read
// ------------------------------------------------------------------------------------------------

interface ResourceDef {
  resource: Resource;
  create: z.ZodObject;
  update?: z.ZodObject;
  fk?: (ctx: ApiContext) => FkCheck;
  /** the fields that identify the record (a second create with the same values is a duplicate) */
  natural: (d: Record<string, unknown>) => Array<[string, unknown]>;
  build?: (ctx: ApiContext, id: string, d: Record<string, unknown>) => Rec;
}

/** The natural key as counted in /__sandbox/counts: the natural fields' values joined with `|`. */
function naturalKey(def: ResourceDef, d: Record<string, unknown>): string {
  return def
    .natural(d)
    .map(([, v]) => String(v))
    .join('|');
}

/** `codeERP` when given, else the fallback field. */
function erpOr(fallback: string): (d: Record<string, unknown>) => Array<[string, unknown]> {
  return (d) => (d['codeERP'] !== undefined && d['codeERP'] !== null ? [['codeERP', d['codeERP']]] : [[fallback, d[fallback]]]);
}

function createHandler(def: ResourceDef): Handler {
  return (ctx, req) => {
    const raw = jsonBody(req);
    if (isReply(raw)) return raw;
    const v = validateBody(ctx, raw, def.create, def.fk?.(ctx));
    if (isReply(v)) return v;
    const d = normalizeInput(v.data as Record<string, unknown>, ctx.dialect);
    const key = naturalKey(def, d);
    if (ctx.dialect.duplicates === 'refuse') {
      const all = ctx.state.collections[def.resource];
      for (let i = all.length - 1; i >= 0; i--) {
        const existing = all[i]!;
        if (naturalKey(def, existing) === key) {
          const what = def
            .natural(d)
            .map(([f, x]) => `${f}=${String(x)}`)
            .join(', ');
          return fail(409, `duplicate ${def.resource}: ${what} already exists (id ${existing.id})`, { id: existing.id });
        }
      }
    }
    const id = ctx.newId();
    const rec: Rec = def.build ? def.build(ctx, id, d) : { id, ...withNulls(keysOf(def.create), d) };
    ctx.index.add(def.resource, rec);
    countCreation(ctx, def.resource, key);
    ctx.changed();
    return ok(rec);
  };
}

function updateHandler(def: ResourceDef): Handler {
  const schema = def.update!;
  return (ctx, req) => {
    const raw = jsonBody(req);
    if (isReply(raw)) return raw;
    const v = validateBody(ctx, raw, schema, def.fk?.(ctx));
    if (isReply(v)) return v;
    const d = normalizeInput(v.data as Record<string, unknown>, ctx.dialect);
    const existing = ctx.index.get(def.resource, d['id'] as string);
    if (!existing) return notFound(def.resource, 'id', d['id'] as string);
    const rec: Rec = def.build ? def.build(ctx, existing.id, d) : { id: existing.id, ...withNulls(keysOf(def.create), d) };
    ctx.index.replace(def.resource, rec);
    ctx.state.updates[def.resource] = (ctx.state.updates[def.resource] ?? 0) + 1;
    ctx.changed();
    return ok(rec);
  };
}

function listHandler(resource: Resource, filter?: (r: Rec) => boolean): Handler {
  return (ctx, req) => {
    const paging = parsePaging(req.query, ctx.maxPageSize, ctx.dialect.pagingBase);
    if (isReply(paging)) return paging;
    const all = ctx.state.collections[resource];
    return pageOf(filter ? all.filter(filter) : all, paging);
  };
}

function getByIdHandler(resource: Resource, param = 'id', filter?: (r: Rec) => boolean): Handler {
  return (ctx, req) => {
    const id = guidParam(req.params[param], param);
    if (isReply(id)) return id;
    const rec = ctx.index.get(resource, id);
    if (!rec || (filter && !filter(rec))) return notFound(resource, 'id', id);
    return ok(rec);
  };
}

/** By-code reads: duplicates are allowed, so the most recently created match is answered. */
function getByFieldHandler(resource: Resource, param: string, fields: string[] | ((ctx: ApiContext) => string[]), label: string): Handler {
  return (ctx, req) => {
    const value = req.params[param] ?? '';
    const all = ctx.state.collections[resource];
    for (const f of typeof fields === 'function' ? fields(ctx) : fields) {
      for (let i = all.length - 1; i >= 0; i--) if (all[i]![f] === value) return ok(all[i]);
    }
    return notFound(resource, label, value);
  };
}

function childrenOfWarehouse(resource: Resource, param: string): Handler {
  return (ctx, req) => {
    const wid = guidParam(req.params[param], param);
    if (isReply(wid)) return wid;
    if (!ctx.index.has('Warehouse', wid)) return notFound('Warehouse', 'id', wid);
    const paging = parsePaging(req.query, ctx.maxPageSize, ctx.dialect.pagingBase);
    if (isReply(paging)) return paging;
    const lower = wid.toLowerCase();
    return pageOf(
      ctx.state.collections[resource].filter((r) => String(r['warehouseID']).toLowerCase() === lower),
      paging,
    );
  };
}

// ------------------------------------------------------------------------------------------------
// resource definitions
// ------------------------------------------------------------------------------------------------

const unitDef: ResourceDef = {
  resource: 'UnitMeasurement',
  create: S.UnitMeasurementCreate,
  natural: erpOr('symbol'),
};
const categoryDef: ResourceDef = { resource: 'Category', create: S.CategoryCreate, natural: erpOr('name') };
const familyDef: ResourceDef = {
  resource: 'Family',
  create: S.FamilyCreate,
  fk: fksOf('Family'),
  natural: erpOr('name'),
};
const productDef: ResourceDef = {
  resource: 'Product',
  create: S.ProductCreate,
  fk: (ctx) =>
    both(fksOf('Product')(ctx), (raw, problems, bad) => {
      const u = raw['unitmeasurement'];
      if (typeof u === 'string' && u.trim() !== '' && !bad.has('unitmeasurement')) {
        if (!ctx.state.collections.UnitMeasurement.some((r) => r['symbol'] === u)) {
          problems.push({ field: 'unitmeasurement', reason: `no UnitMeasurement with symbol ${u}` });
        }
      }
    }),
  natural: (d) => [['code', d['code']]],
  build: (_ctx, id, d) => ({ id, ...withNulls(keysOf(S.ProductCreate), d), color: null, validity: null }),
};
const conversionFactorDef: ResourceDef = {
  resource: 'ConversionFactor',
  create: S.ConversionFactorCreate,
  update: S.ConversionFactorUpdate,
  fk: fksOf('ConversionFactor'),
  natural: (d) =>
    d['codeERP'] !== undefined && d['codeERP'] !== null
      ? [['codeERP', d['codeERP']]]
      : [
          ['productID', d['productID']],
          ['unitMeasurementInputID', d['unitMeasurementInputID']],
          ['unitMeasurementOutputID', d['unitMeasurementOutputID']],
        ],
};
const shippingCompanyDef: ResourceDef = {
  resource: 'ShippingCompany',
  create: S.ShippingCompanyCreate,
  update: S.ShippingCompanyUpdate,
  fk: (ctx) => both(cnpjCheck, fksOf('ShippingCompany')(ctx)),
  natural: erpOr('cnpj'),
};
const providerDef: ResourceDef = {
  resource: 'Provider',
  create: S.ProviderCreate,
  update: S.ProviderUpdate,
  fk: (ctx) => both(cnpjCheck, fksOf('Provider')(ctx)),
  natural: erpOr('cnpj'),
};
const ownerDef: ResourceDef = {
  resource: 'Owners',
  create: S.OwnerCreate,
  fk: fksOf('Owners'),
  natural: (d) => [['code', d['code']]],
};

const PICKING_HEADER_KEYS = keysOf(S.PickingListCreate).filter((k) => k !== 'pickingItens');
const PICKING_ITEM_KEYS = keysOf(S.PickingItemCreate);
const pickingListDef: ResourceDef = {
  resource: 'PickingList',
  create: S.PickingListCreate,
  fk: (ctx) =>
    both(fksOf('PickingList')(ctx), (raw, problems, bad) => {
      // dialect: a WMS that requires the flags whose required status the interface does not show
      if (!ctx.dialect.pickingListTypeRequired) return;
      for (const f of ['type', 'separationType']) {
        if ((raw[f] === undefined || raw[f] === null) && !bad.has(f)) problems.push({ field: f, reason: 'required' });
      }
    }),
  natural: (d) => [
    ['order', d['order']],
    ['ownerID', d['ownerID']],
  ],
  build: (ctx, id, d) => ({
    id,
    description: `Pedido ${String(d['order'])}`,
    ...withNulls(PICKING_HEADER_KEYS, d),
    pickingItens: (d['pickingItens'] as Array<Record<string, unknown>>).map((it) => ({
      id: ctx.newId(),
      pickingListID: id,
      ...withNulls(PICKING_ITEM_KEYS, it),
      pendentQuantity: it['quantity'],
      separateQuantity: 0,
      origin: null,
      expeditionProfileID: ctx.index.get('Product', it['productID'] as string)?.['expeditionProfileID'] ?? null,
    })),
  }),
};

const PO_HEADER_KEYS = keysOf(S.PurchaseOrderCreate).filter((k) => k !== 'purchaseOrderItens');
const PO_ITEM_KEYS = keysOf(S.PurchaseOrderItemCreate);
function unitNameFor(ctx: ApiContext, unitId: unknown, productId: unknown): string | null {
  if (typeof unitId === 'string') {
    const u = ctx.index.get('UnitMeasurement', unitId);
    if (u) return String(u['name']);
  }
  const p = typeof productId === 'string' ? ctx.index.get('Product', productId) : undefined;
  if (p) {
    const u = ctx.state.collections.UnitMeasurement.find((r) => r['symbol'] === p['unitmeasurement']);
    if (u) return String(u['name']);
  }
  return null;
}
const purchaseOrderDef: ResourceDef = {
  resource: 'PurchaseOrder',
  create: S.PurchaseOrderCreate,
  fk: fksOf('PurchaseOrder'),
  natural: (d) => [
    ['nf', d['nf']],
    ['providerID', d['providerID']],
  ],
  build: (ctx, id, d) => ({
    id,
    ...withNulls(PO_HEADER_KEYS, d),
    startDate: null,
    endDate: null,
    document: null,
    purchaseOrderItens: (d['purchaseOrderItens'] as Array<Record<string, unknown>>).map((it) => ({
      id: ctx.newId(),
      purchaseOrderID: id,
      ...withNulls(PO_ITEM_KEYS, it),
      received: 0,
      unitaryValue: 0,
      saleValue: 0,
      receivingEan: null,
      unitMeasurementName: unitNameFor(ctx, it['unitMeasurementId'], it['productID']),
      lotDetails: [],
    })),
  }),
};

// ------------------------------------------------------------------------------------------------
// stock
// ------------------------------------------------------------------------------------------------

const listStock: Handler = (ctx, req) => {
  const paging = parsePaging(req.query, ctx.maxPageSize, ctx.dialect.pagingBase);
  if (isReply(paging)) return paging;
  const total = stockTotal(ctx.state);
  return listReply(total, paging, stockSlice(ctx.state, pageStart(paging), paging.limit));
};

const searchStock: Handler = (ctx, req) => {
  const raw = jsonBody(req, true);
  if (isReply(raw)) return raw;
  const v = validateBody(ctx, raw, S.StockSearchFilters);
  if (isReply(v)) return v;
  const paging = parsePaging(req.query, ctx.maxPageSize, ctx.dialect.pagingBase);
  if (isReply(paging)) return paging;
  const start = pageStart(paging);
  const end = start + paging.limit;
  if (isEmptyFilter(v.data as StockFilter)) return listReply(stockTotal(ctx.state), paging, stockSlice(ctx.state, start, paging.limit));
  const page: StockRow[] = [];
  let n = 0;
  forEachMatch(ctx.state, v.data as StockFilter, (row) => {
    if (n >= start && n < end) page.push(row);
    n++;
  });
  return listReply(n, paging, page);
};

function lockHandler(): Handler {
  return (ctx, req) => {
    const raw = jsonBody(req);
    if (isReply(raw)) return raw;
    const v = validateBody(ctx, raw, S.StockLockRequest, fksOf('Stock')(ctx));
    if (isReply(v)) return v;
    const d = v.data;
    const status = ctx.index.get('MaterialStatus', d.materialStatusId)!;
    const synth = ctx.state.synthetic;
    let n = 0;
    let already = 0;
    const target = status.id.toLowerCase();
    // materialStatusId is the TARGET status, not a filter; a record already in it does not change
    const { materialStatusId: _target, ...filter } = d;
    forEachMatch(ctx.state, filter as StockFilter, (row, key) => {
      if ((row.materialStatusId ?? '').toLowerCase() === target) {
        already++;
        return;
      }
      n++;
      if (key.stored !== undefined) {
        row.materialStatusId = status.id;
        row.materialStatusName = String(status['name']);
      } else if (key.synthetic !== undefined) {
        if (status.id === synth.status.id) delete synth.statusOverrides[String(key.synthetic)];
        else synth.statusOverrides[String(key.synthetic)] = status.id;
      }
    });
    // a valid request that changes nothing is answered 200 with stocksLocked 0 and the reason (SPEC-NOTES)
    if (n === 0) {
      const reason =
        already > 0
          ? `no available stock record matched: the ${already} matching record(s) are already in status '${String(status['name'])}'`
          : 'no available stock record matched the filters';
      return ok({ materialStatusId: d.materialStatusId, stocksLocked: 0, error: reason });
    }
    ctx.changed();
    return ok({ materialStatusId: d.materialStatusId, stocksLocked: n, error: '' });
  };
}

/**
 * A session's foreign keys from its target's refs: the owner is the session's (top level), every other field is
 * one of each entry of `products` (the target's record is one entry of a session).
 */
function syncFks(ctx: ApiContext): FkCheck {
  const spec = storedIn('SyncSession');
  const top: Record<string, Resource> = {};
  const entries: Record<string, Resource> = {};
  for (const [field, resource] of Object.entries(spec.refs)) (field in S.StockSyncRequest.shape ? top : entries)[field] = resource as Resource;
  return fks(ctx, top, { key: 'products', spec: entries });
}

const syncStock: Handler = (ctx, req) => {
  const raw = jsonBody(req);
  if (isReply(raw)) return raw;
  const v = validateBody(ctx, raw, S.StockSyncRequest, syncFks(ctx));
  if (isReply(v)) return v;
  const d = v.data;
  const sid = d.sessionId.toLowerCase();
  const sessions = ctx.state.syncSessions;
  const existing = sessions[sid];
  if (existing?.completed)
    return fail(409, `sessionId: session ${d.sessionId} already completed (its last chunk was applied at ${existing.completedAt ?? '?'})`);
  if (existing && existing.ownerId.toLowerCase() !== d.ownerId.toLowerCase()) return fail(409, `sessionId: session ${d.sessionId} belongs to another owner`);
  const session = existing ?? { ownerId: d.ownerId, chunks: 0, products: {}, completed: false, completedAt: null };
  sessions[sid] = session;
  session.chunks++;
  for (const p of d.products) session.products[p.productId.toLowerCase()] = p.quantity;
  if (d.isLastChunk === true) {
    const st = ctx.state;
    const owner = ctx.index.get('Owners', d.ownerId)!;
    const ownerLower = owner.id.toLowerCase();
    st.stock = st.stock.filter((r) => (r.ownerId ?? '').toLowerCase() !== ownerLower);
    if (st.synthetic.owner.id.toLowerCase() === ownerLower) {
      st.synthetic.count = 0;
      st.synthetic.statusOverrides = {};
    }
    const wh = st.collections.Warehouse[0]!;
    const available = st.collections.MaterialStatus[0]!;
    for (const [pid, qty] of Object.entries(session.products)) {
      if (qty <= 0) continue;
      const p = ctx.index.get('Product', pid)!;
      const u = st.collections.UnitMeasurement.find((r) => r['symbol'] === p['unitmeasurement']);
      st.stock.push({
        warehouseId: wh.id,
        warehouseName: String(wh['name']),
        ownerId: owner.id,
        ownerName: String(owner['name']),
        productId: p.id,
        productCode: String(p['code']),
        productName: String(p['name']),
        lotNumber: null,
        manufacturingDate: null,
        expirationDate: null,
        quantity: qty,
        reserved: 0,
        materialStatusId: available.id,
        materialStatusName: String(available['name']),
        unitMeasurementId: u?.id ?? null,
        unitMeasurementName: u ? String(u['name']) : null,
      });
    }
    session.completed = true;
    session.completedAt = new Date().toISOString();
  }
  ctx.changed();
  return ok({ success: true });
};

// ------------------------------------------------------------------------------------------------
// conversion factor delete, attachments
// ------------------------------------------------------------------------------------------------

const deleteConversionFactor: Handler = (ctx, req) => {
  const id = guidParam(req.params['id'], 'id');
  if (isReply(id)) return id;
  const rec = ctx.index.get('ConversionFactor', id);
  if (!rec) return notFound('ConversionFactor', 'id', id);
  ctx.index.remove('ConversionFactor', rec.id);
  ctx.state.deletes['ConversionFactor'] = (ctx.state.deletes['ConversionFactor'] ?? 0) + 1;
  ctx.changed();
  return ok(null);
};

const ATTACHMENT_FIELDS = new Set(['file', 'PickingListID', 'UserFileName', 'IsPrintCheckout']);

function fileTypeOf(name: string | undefined): string | null {
  if (!name) return null;
  const m = /\.([A-Za-z0-9]+)$/.exec(name);
  if (!m) return null;
  const ext = m[1]!.toLowerCase();
  return ext === 'jpeg' ? 'jpg' : ext;
}

export const attach: Handler = (ctx, req) => {
  const boundary = multipartBoundary(req.contentType);
  if (!boundary) return fail(415, 'Content-Type must be multipart/form-data with a boundary');
  let parts: MultipartPart[];
  try {
    parts = parseMultipart(req.body, boundary);
  } catch (err) {
    if (err instanceof MultipartError) return fail(400, `body: ${err.message}`);
    throw err;
  }
  const problems: FieldProblem[] = [];
  const byName = new Map<string, MultipartPart>();
  for (const p of parts) {
    if (!ATTACHMENT_FIELDS.has(p.name)) problems.push({ field: p.name, reason: 'unknown field' });
    else if (byName.has(p.name)) problems.push({ field: p.name, reason: 'given more than once' });
    else byName.set(p.name, p);
  }
  const file = byName.get('file');
  if (!file) problems.push({ field: 'file', reason: 'required' });
  else if (file.filename === undefined) problems.push({ field: 'file', reason: 'must be a file part (with a filename)' });
  else if (file.data.length === 0) problems.push({ field: 'file', reason: 'must not be empty' });
  const plId = byName.get('PickingListID')?.data.toString('utf8').trim();
  if (plId === undefined || plId === '') problems.push({ field: 'PickingListID', reason: 'required' });
  else if (!GUID_RE.test(plId)) problems.push({ field: 'PickingListID', reason: 'must be a UUID (Guid)' });
  else if (!ctx.index.has('PickingList', plId)) problems.push({ field: 'PickingListID', reason: `PickingList ${plId} does not exist` });
  const userName = byName.get('UserFileName')?.data.toString('utf8').trim();
  if (userName === undefined || userName === '') problems.push({ field: 'UserFileName', reason: 'required' });
  const printRaw = byName.get('IsPrintCheckout')?.data.toString('utf8').trim().toLowerCase();
  if (printRaw !== undefined && printRaw !== 'true' && printRaw !== 'false') problems.push({ field: 'IsPrintCheckout', reason: 'must be true or false' });
  if (problems.length) {
    ctx.state.stats.validationFailures++;
    return fail(400, formatProblems(problems));
  }
  const f = file!;
  if (f.data.length > ATTACHMENT_MAX_BYTES) return fail(413, `file: ${f.data.length} bytes is larger than the limit of ${ATTACHMENT_MAX_BYTES} bytes`);
  const type = fileTypeOf(f.filename) ?? fileTypeOf(userName);
  if (type === null || !(ATTACHMENT_TYPES as readonly string[]).includes(type)) {
    return fail(415, `file: type "${type ?? '(none)'}" not allowed (allowed: ${ATTACHMENT_TYPES.join(', ')})`);
  }
  const pl = ctx.index.get('PickingList', plId!)!;
  const record = {
    id: ctx.newId(),
    pickingListID: pl.id,
    fileName: userName!,
    fileSize: f.data.length,
    fileType: type,
    registrationDate: new Date().toISOString(),
    isPrintCheckout: printRaw === 'true',
  };
  ctx.index.add('Attachment', { ...record, originalFileName: f.filename ?? null, contentType: f.contentType ?? null });
  countCreation(ctx, 'Attachment', `${pl.id}|${userName!}`);
  ctx.changed();
  return ok(record);
};

// ------------------------------------------------------------------------------------------------
// the table
// ------------------------------------------------------------------------------------------------

const isFinished = (r: Rec): boolean => r['endDate'] !== null && r['endDate'] !== undefined;

/**
 * The handlers of the endpoints targets declare in their specs (a target added by its spec alone): a create (POST)
 * or an update (PUT) of one record in the target's store, its body checked against the endpoint's request schema
 * and the foreign keys of its `refs`, a duplicate told by its natural key (the key's first non-empty alternatives).
 */
function declaredHandlers(): Record<DeclaredEndpointName, Handler> {
  const out: Record<string, Handler> = {};
  for (const spec of REGISTRY as readonly unknown[] as readonly TargetSpec<string, string>[]) {
    for (const [name, ep] of Object.entries(spec.endpoints ?? {})) {
      const def: ResourceDef = {
        resource: spec.sandbox as Resource,
        create: ep.request,
        update: ep.request,
        fk: (ctx) => refFks(ctx, spec),
        natural: (d) =>
          spec.key.parts.map((alts): [string, unknown] => {
            const field = alts.find((a) => a !== '' && d[a] !== undefined && d[a] !== null) ?? alts[0]!;
            return [field, d[field]];
          }),
      };
      out[name] = ep.method === 'POST' ? createHandler(def) : updateHandler(def);
    }
  }
  return out as Record<DeclaredEndpointName, Handler>;
}

export const HANDLERS: Record<Exclude<EndpointName, 'authorize' | 'refreshToken'>, Handler> = {
  ...declaredHandlers(),
  listConversionFactors: listHandler('ConversionFactor'),
  getConversionFactor: getByIdHandler('ConversionFactor'),
  createConversionFactor: createHandler(conversionFactorDef),
  updateConversionFactor: updateHandler(conversionFactorDef),
  deleteConversionFactor,

  listStock,
  searchStock,
  lockStock: lockHandler(),
  unlockStock: lockHandler(),
  syncStock,

  listShippingCompanies: listHandler('ShippingCompany'),
  getShippingCompany: getByIdHandler('ShippingCompany'),
  getShippingCompanyByErp: getByFieldHandler('ShippingCompany', 'codeERP', ['codeERP'], 'codeERP'),
  createShippingCompany: createHandler(shippingCompanyDef),
  updateShippingCompany: updateHandler(shippingCompanyDef),

  listProviders: listHandler('Provider'),
  getProvider: getByIdHandler('Provider'),
  getProviderByErp: getByFieldHandler('Provider', 'codeERP', ['codeERP'], 'codeERP'),
  createProvider: createHandler(providerDef),
  updateProvider: updateHandler(providerDef),

  listOwners: listHandler('Owners'),
  getOwner: getByIdHandler('Owners'),
  getOwnerByCode: getByFieldHandler('Owners', 'code', (ctx) => (ctx.dialect.ownersCodeerpMatches === 'codeERP' ? ['codeERP'] : ['code', 'codeERP']), 'code'),
  createOwner: createHandler(ownerDef),

  listInventories: listHandler('Inventory'),
  listFinishedInventories: listHandler('Inventory', isFinished),
  getInventory: getByIdHandler('Inventory'),

  listMaterialStatuses: listHandler('MaterialStatus'),
  getMaterialStatus: getByIdHandler('MaterialStatus'),

  listDocks: listHandler('Dock'),
  listDocksOfWarehouse: childrenOfWarehouse('Dock', 'warehouseID'),
  listWarehouses: listHandler('Warehouse'),
  listBranches: listHandler('Branch'),
  listLogisticsProfiles: listHandler('LogisticsProfile'),
  listCompanies: listHandler('Company'),
  listSubWarehouses: childrenOfWarehouse('SubWarehouse', 'warehouseId'),

  createPickingList: createHandler(pickingListDef),
  createPurchaseOrder: createHandler(purchaseOrderDef),
  createProduct: createHandler(productDef),
  createUnitMeasurement: createHandler(unitDef),
  createFamily: createHandler(familyDef),
  createCategory: createHandler(categoryDef),

  attachToPickingList: attach,
};

/** Endpoints that change state (resets on them are split between before and after applying). */
export function isMutating(method: string): boolean {
  return method === 'POST' || method === 'PUT' || method === 'DELETE';
}
export { isReply };
