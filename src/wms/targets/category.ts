import * as S from '../schemas.js';
import { defineTarget } from './spec.js';

export const category = defineTarget({
  name: 'Category',
  label: 'category',
  tier: 0,
  schema: S.CategoryCreate,
  key: { parts: [['codeERP']], label: 'codeERP' },
  items: null,
  ops: ['create'],
  defaultOp: 'create',
  xref: 'Category',
  lookupBy: ['codeERP', 'name'],
  refs: {},
  document: false,
  inDoubtPolicy: 'resend',
  duplicates: 'skip',
  send: { kind: 'create', create: 'createCategory' },
  readBack: null,
  sequence: null,
  sandbox: 'Category',
});
