/**
 * The send operations a mapping can target, derived from the target registry (src/wms/targets/: one
 * TargetSpec per target: tier, schema, natural key, ops, how it is sent and read back, in-doubt policy,
 * ordering rule, sandbox store).
 */
import { REGISTRY, type TargetSpec } from './targets/index.js';

export {
  REF_RESOURCES,
  type RefResource,
  type TargetSpec,
  type TargetOp,
  type SendRule,
  type ReadBackRule,
  type SequenceRule,
  type SandboxStore,
} from './targets/index.js';

export type Target = (typeof REGISTRY)[number]['name'];

/** Every target, in the registry's order. */
export const TARGETS = REGISTRY.map((s) => s.name) as unknown as readonly [Target, ...Target[]];

/** What the pipeline needs to know about a target: its spec. */
export type TargetInfo = TargetSpec<Target>;

export const TARGET_INFO: Readonly<Record<Target, TargetInfo>> = Object.fromEntries(REGISTRY.map((s) => [s.name, s])) as Record<Target, TargetInfo>;

export const MAX_TIER = Math.max(...REGISTRY.map((t) => t.tier));
