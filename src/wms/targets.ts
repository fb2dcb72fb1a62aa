/**
 * The send operations a mapping can target, derived from the target registry (src/wms/targets/: one
 * TargetSpec per target: tier, schema, natural key, ops, how it is sent and read back, in-doubt policy,
 * ordering rule, sandbox store).
 */
import { INTERFACE_RESOURCES, REGISTRY, type InterfaceResource, type TargetSpec } from './targets/index.js';

export { REGISTRY };

export {
  INTERFACE_RESOURCES,
  type InterfaceResource,
  type DeclaredEndpoint,
  type TargetSpec,
  type TargetOp,
  type SendRule,
  type ReadBackRule,
  type SequenceRule,
  type SandboxStore,
  type LookupRule,
  type StockLabelRule,
  type OrderRule,
} from './targets/index.js';

export type Target = (typeof REGISTRY)[number]['name'];

/** Resources a `$ref` can point at: the interface's, and the resource of a target that declares its own (its `xref`). */
export type RefResource = InterfaceResource | Exclude<(typeof REGISTRY)[number]['xref'], null>;
export const REF_RESOURCES = [
  ...new Set<RefResource>([...INTERFACE_RESOURCES, ...REGISTRY.flatMap((s) => (s.xref === null ? [] : [s.xref]))]),
] as unknown as readonly [RefResource, ...RefResource[]];

/** Every target, in the registry's order. */
export const TARGETS = REGISTRY.map((s) => s.name) as unknown as readonly [Target, ...Target[]];

/** What the pipeline needs to know about a target: its spec. */
export type TargetInfo = TargetSpec<Target>;

/**
 * The registry as the general spec: an endpoint a target declares itself (its spec's `endpoints`) is named by its
 * send rule like a client method, and the client has a method of that name (wms/client-methods.ts buildMethods).
 */
export const SPECS: readonly TargetInfo[] = REGISTRY as readonly unknown[] as readonly TargetInfo[];

export const TARGET_INFO: Readonly<Record<Target, TargetInfo>> = Object.fromEntries(SPECS.map((s) => [s.name, s])) as Record<Target, TargetInfo>;

export const MAX_TIER = Math.max(...REGISTRY.map((t) => t.tier));

/** The spec of a target, or undefined for a name the registry does not hold (a row of an older version). */
export function specOf(name: string | null | undefined): TargetInfo | undefined {
  return name ? (TARGET_INFO as Readonly<Record<string, TargetInfo>>)[name] : undefined;
}

/** Whether a target's records are sent as one sync session per file (its send rule's kind is `session`). */
export function sentAsSession(name: string | null | undefined): boolean {
  return specOf(name)?.send.kind === 'session';
}

/** The targets sent as sync sessions. */
export const SESSION_TARGETS: readonly Target[] = TARGETS.filter((t) => sentAsSession(t));

/** The documents of the orders report, the records webhooks link to by WMS id (their spec's `order`). */
export const ORDER_TARGETS: readonly Target[] = TARGETS.filter((t) => TARGET_INFO[t].order !== undefined);

/** The target whose records are stored in the cross-reference as `resource` (its `xref`), if any. */
export function specOfResource(resource: string): TargetInfo | undefined {
  return SPECS.find((s) => s.xref === resource);
}
