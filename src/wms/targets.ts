/**
 * The send operations a mapping can target, derived from the target registry (src/wms/targets/: one
 * TargetSpec per target: tier, schema, natural key, ops, how it is sent and read back, in-doubt policy,
 * ordering rule, sandbox store).
 */
import { REGISTRY, type TargetSpec } from './targets/index.js';

export { REGISTRY };

export {
  REF_RESOURCES,
  type RefResource,
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

/** Every target, in the registry's order. */
export const TARGETS = REGISTRY.map((s) => s.name) as unknown as readonly [Target, ...Target[]];

/** What the pipeline needs to know about a target: its spec. */
export type TargetInfo = TargetSpec<Target>;

export const TARGET_INFO: Readonly<Record<Target, TargetInfo>> = Object.fromEntries(REGISTRY.map((s) => [s.name, s])) as Record<Target, TargetInfo>;

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
  return REGISTRY.find((s) => s.xref === resource);
}
