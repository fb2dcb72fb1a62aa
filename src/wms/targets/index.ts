/**
 * The target registry: one TargetSpec per WMS target, one file each (spec.ts says what a spec holds).
 * Adding a target: write its file, list it here (the order is the order of `TARGETS`: reports, the
 * mapping schema's enum), and give the sandbox a handler for its endpoints (src/sandbox/api.ts HANDLERS).
 * test/unit/targets-registry.test.ts checks every spec against the schemas, the sandbox and the tiers.
 */
import { category } from './category.js';
import { conversionFactorDelete } from './conversion-factor-delete.js';
import { conversionFactor } from './conversion-factor.js';
import { family } from './family.js';
import { owners } from './owners.js';
import { pickingListAttachment } from './picking-list-attachment.js';
import { pickingList } from './picking-list.js';
import { product } from './product.js';
import { provider } from './provider.js';
import { purchaseOrder } from './purchase-order.js';
import { shippingCompany } from './shipping-company.js';
import { stockLock } from './stock-lock.js';
import { stockSync } from './stock-sync.js';
import { stockUnlock } from './stock-unlock.js';
import { unitMeasurement } from './unit-measurement.js';

export const REGISTRY = [
  unitMeasurement,
  category,
  family,
  product,
  conversionFactor,
  conversionFactorDelete,
  shippingCompany,
  provider,
  owners,
  purchaseOrder,
  pickingList,
  stockLock,
  stockUnlock,
  stockSync,
  pickingListAttachment,
] as const;

export * from './spec.js';
