/**
 * What wmsbridge knows about one WMS target (a kind of record it sends), in one object: see index.ts for
 * the registry and docs/ARCHITECTURE.md ("Targets") for how to add one.
 */
import type { z } from 'zod';
import type { CallOptions, WmsClient } from '../client-types.js';
import type { EndpointDef } from '../endpoint-def.js';

/**
 * Resources of the interface a `$ref` can point at: everything the WMS stores that has an id. A target added by its
 * spec alone adds its own resource (its `xref`): src/wms/targets.ts REF_RESOURCES is this list and those.
 */
export const INTERFACE_RESOURCES = [
  'UnitMeasurement',
  'Category',
  'Family',
  'Product',
  'ConversionFactor',
  'ShippingCompany',
  'Provider',
  'Owners',
  'PurchaseOrder',
  'PickingList',
  'Company',
  'Branch',
  'Warehouse',
  'Dock',
  'LogisticsProfile',
  'MaterialStatus',
] as const;
export type InterfaceResource = (typeof INTERFACE_RESOURCES)[number];
/** What a spec's `refs` may name: a resource of the interface (a target's own resource is named by its `xref`). */
type RefResource = InterfaceResource;

/** What a mapping asks for a record (the same values as map/types.ts RecordOp). */
export type TargetOp = 'create' | 'update' | 'upsert' | 'delete';

/** Names of WmsClient methods (= endpoint names, src/wms/endpoints.ts) whose signature fits F. */
type ClientMethod<F> = { [K in keyof WmsClient]-?: WmsClient[K] extends F ? K : never }[keyof WmsClient];
type CreateMethod = ClientMethod<(body: never, opts?: CallOptions) => Promise<{ id: string } | null>>;
type FindMethod = ClientMethod<(code: string, opts?: CallOptions) => Promise<{ id: string } | null>>;

/**
 * How a resolved payload is delivered (src/push/senders.ts has one function per kind):
 * - create: one POST, the interface has no update (outcome created);
 * - upsert-by-codeERP: read by codeERP, then the update (idempotent PUT) or the create;
 * - create-unless-code: looked up by code first (the Owners list), created when absent; no update exists;
 * - upsert-by-xref: the WMS id from the cross-reference, read, then update or create;
 * - delete: DELETE by id (the cross-reference entry of `unlinks` is removed after it);
 * - stock-status: a lock/unlock PUT (a valid request that changes nothing is delivered, `no-change`);
 * - attachment: a multipart upload of a file from the channel's inbox folder;
 * - session: not sent one by one: the pipeline sends the records as sync sessions.
 */
export type SendRule<E extends string = never> =
  | { readonly kind: 'create'; readonly create: CreateMethod | NoInfer<E> }
  | { readonly kind: 'upsert-by-codeERP'; readonly find: FindMethod; readonly create: CreateMethod; readonly update: CreateMethod }
  | { readonly kind: 'create-unless-code'; readonly create: CreateMethod }
  | { readonly kind: 'upsert-by-xref'; readonly get: FindMethod; readonly create: CreateMethod; readonly update: CreateMethod }
  | { readonly kind: 'delete'; readonly remove: 'deleteConversionFactor'; readonly get: FindMethod; readonly unlinks: RefResource }
  | { readonly kind: 'stock-status'; readonly apply: 'lockStock' | 'unlockStock' }
  | { readonly kind: 'attachment'; readonly upload: 'attachToPickingList' }
  | { readonly kind: 'session'; readonly sync: 'syncStock' };

/**
 * How an in-doubt send (a request that may have reached the WMS) is settled by reading the WMS
 * (src/push/senders.ts readBack):
 * - codeERP: read by codeERP (the send rule's `find`): absent, send again; present, the upsert's update is resent;
 * - code: the Owners list by code: present settles it (created), absent sends again;
 * - codeERP+productID: the conversion factors listed, matched by codeERP and product;
 * - gone: the record read by id (the send rule's `get`): absent settles the delete, present sends it again;
 * - resend: no read, but sending again is harmless (setting a material status again);
 * - null: no read-back: the channel's in-doubt policy decides (resend, or hold for a person).
 */
export type ReadBackRule = 'codeERP' | 'code' | 'codeERP+productID' | 'gone' | 'resend';

/**
 * What an order-dependent operation touches (src/push/sequence.ts): operations with the same scope are applied
 * in source order. `key`: the record's natural key; `fields`: the payload's fields (a `$ref` by its resource and
 * natural key); `refKey`: the field names the record by reference (its natural key) or by id; `part` narrows the
 * scope to a part (a lot): an operation without it touches the whole scope.
 */
export type SequenceRule =
  | { readonly scope: string; readonly by: 'key' }
  | { readonly scope: string; readonly by: 'refKey'; readonly field: string }
  | { readonly scope: string; readonly by: 'fields'; readonly fields: readonly string[]; readonly part?: string };

/** Where the sandbox keeps what a target sends: a collection (src/sandbox/state.ts), or its stock. */
export type SandboxStore = RefResource | 'Attachment' | 'Stock' | 'SyncSession';

/**
 * How a `$ref` to this target's resource that wmsbridge did not create is read from the WMS (src/push/refs.ts),
 * by `by` (the field a natural-key reference is read by when the mapping names none):
 * - get: one record by that field through `get` (an endpoint with the value as its path parameter);
 * - owners: the Owners list searched by code or codeERP (src/push/owners.ts);
 * - stock-index: the run's index of the Stock list by product code (the interface has no product read): also how
 *   an in-doubt or already-existing record of the target is found (push/record.ts).
 */
export type LookupRule =
  | { readonly by: string; readonly read: 'get'; readonly get: FindMethod }
  | { readonly by: string; readonly read: 'owners' }
  | { readonly by: string; readonly read: 'stock-index' };

/**
 * How results and reports name a stock row (src/app/stock-labels.ts): by warehouse code, product code (the
 * `refs` resource of `productId`), and, with `lotAndStatus`, the lot and the target status; `warehouseOptional`:
 * a payload without warehouseId is named without it (a sync entry covers every warehouse).
 */
export interface StockLabelRule {
  readonly lotAndStatus: boolean;
  readonly warehouseOptional: boolean;
}

/**
 * A document the orders report lists and webhooks link to by WMS id (src/outbox/orders.ts, the journal's
 * index of records by WMS id): its kind in the report, the payload field holding its number, the partner's
 * name field (if any) and the field holding the partner's tax id (a `$ref`'s value, else the key's second part).
 */
export interface OrderRule {
  readonly kind: 'picking' | 'purchase';
  readonly number: string;
  readonly partnerName: string | null;
  readonly partnerTaxId: string;
}

/**
 * An endpoint a target declares in its spec (`endpoints`), for a target the interface table (src/wms/endpoints.ts)
 * does not list: the endpoint table, the client (one method of that name, src/wms/client-methods.ts) and the
 * sandbox (a create handler storing into the target's store, src/sandbox/api.ts) take it from here. A POST or PUT
 * of one record: its body checked against `request`, its answer against `record` ('record': the answer holds the
 * record; 'maybe': it may).
 */
export interface DeclaredEndpoint extends EndpointDef {
  readonly method: 'POST' | 'PUT';
  readonly response: 'single';
  readonly request: z.ZodObject;
  readonly record: z.ZodType;
  readonly answer: 'record' | 'maybe';
}

/** One WMS target (N: its name; E: the names of the endpoints it declares itself, if any). */
export interface TargetSpec<N extends string = string, E extends string = never> {
  readonly name: N;
  /** Human label for reports and messages. */
  readonly label: string;
  /**
   * Dependency tier: every record of tier n is settled before any record of tier n+1 is sent; a target's
   * references (`refs`) are in lower tiers (test/unit/targets-registry.test.ts says where not, and why).
   */
  readonly tier: number;
  /** Schema the final payload (all refs resolved) must pass before it is sent. */
  readonly schema: z.ZodType;
  /** Natural key when the mapping has no `key`: each part lists alternatives (first non-empty wins; '' = may be empty), parts joined by '|'. */
  readonly key: { readonly parts: ReadonlyArray<readonly string[]>; readonly label: string };
  /** The array of a document's items (a mapping builds it with `group`), or null for flat records. */
  readonly items: 'pickingItens' | 'purchaseOrderItens' | null;
  /** Ops a mapping may ask for, and the one it gets when it says none. */
  readonly ops: readonly TargetOp[];
  readonly defaultOp: TargetOp;
  /** Resource under which the returned id is stored in the cross-reference (null: nothing stored); its own name adds it. */
  readonly xref: RefResource | N | null;
  /** Payload fields holding another resource's id (items' fields as `items[].field`), by resource. */
  readonly refs: Readonly<Record<string, RefResource>>;
  /** A document (purchase order, picking list, attachment): the channel's `inDoubt.documents` policy applies, else `inDoubt.masterData`. */
  readonly document: boolean;
  /** Default in-doubt policy when no read-back settles a record: resend (master data) or hold (documents). */
  readonly inDoubtPolicy: 'resend' | 'hold';
  readonly send: SendRule<E>;
  /** Endpoints the target declares itself (the send rule names them like client methods), or absent. */
  readonly endpoints?: Readonly<Record<E, DeclaredEndpoint>>;
  /** How an in-doubt send is settled by reading the WMS, or null when the interface has no such read. */
  readonly readBack: ReadBackRule | null;
  /** Source-order rule for operations whose effect depends on their order, or null. */
  readonly sequence: SequenceRule | null;
  /** Where the sandbox stores it (its handler is the one of the send rule's endpoints). */
  readonly sandbox: SandboxStore | N;
  /**
   * Fields of `refs` the sandbox does not check for existence (the interface defines no resource they must
   * name): every other `refs` field is a foreign key the sandbox checks (src/sandbox/api.ts).
   */
  readonly sandboxUnchecked?: readonly string[];
  /**
   * The same file dropped again: `skip` (a duplicate, archived and reported) or `process` (operations files whose
   * repetition is meaningful); a channel's `duplicates` overrides it (src/app/run-intake.ts).
   */
  readonly duplicates: 'skip' | 'process';
  /** The fields a lookup (`$ref` with `by`) of its resource may name (map/model.ts LOOKUP_BY), when it has an `xref`. */
  readonly lookupBy?: readonly string[];
  /** How a reference to it is read from the WMS when wmsbridge did not create it, or absent (no such read). */
  readonly lookup?: LookupRule;
  /** How a stock row of it is named in results and reports, or absent (its key is its name). */
  readonly stockLabel?: StockLabelRule;
  /** A document of the orders report that webhooks link to, or absent. */
  readonly order?: OrderRule;
}

/** Declares a target (keeps its name as a literal type, so `Target` is the union of the registry's names). */
export function defineTarget<const N extends string, const E extends string = never>(spec: TargetSpec<N, E>): TargetSpec<N, E> {
  return spec;
}
