import * as S from '../schemas.js';
import { defineTarget } from './spec.js';

export const product = defineTarget({
  name: 'Product',
  label: 'product',
  tier: 2,
  schema: S.ProductCreate,
  key: { parts: [['code']], label: 'code' },
  items: null,
  ops: ['create'],
  defaultOp: 'create',
  xref: 'Product',
  lookupBy: ['code', 'codeERP'],
  refs: { categoryID: 'Category', familyID: 'Family', logisticsProfileID: 'LogisticsProfile', expeditionProfileID: 'LogisticsProfile' },
  document: false,
  inDoubtPolicy: 'resend',
  duplicates: 'skip',
  send: { kind: 'create', create: 'createProduct' },
  readBack: null,
  sequence: null,
  sandbox: 'Product',
  // the interface has no expedition-profile resource: the sandbox does not check the id (docs/SANDBOX.md); a
  // mapping's `$ref` resolves it among the logistics profiles, the only profiles the interface lists
  sandboxUnchecked: ['expeditionProfileID'],
  // the interface has no product read: a product is found by its code in the Stock list
  lookup: { by: 'code', read: 'stock-index' },
});
