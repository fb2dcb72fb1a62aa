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
  refs: { categoryID: 'Category', familyID: 'Family', logisticsProfileID: 'LogisticsProfile', expeditionProfileID: 'LogisticsProfile' },
  document: false,
  inDoubtPolicy: 'resend',
  send: { kind: 'create', create: 'createProduct' },
  readBack: null,
  sequence: null,
  sandbox: 'Product',
});
