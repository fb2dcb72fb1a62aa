import * as S from '../schemas.js';
import { defineTarget } from './spec.js';

export const family = defineTarget({
  name: 'Family',
  label: 'family',
  tier: 1,
  schema: S.FamilyCreate,
  key: { parts: [['codeERP']], label: 'codeERP' },
  items: null,
  ops: ['create'],
  defaultOp: 'create',
  xref: 'Family',
  lookupBy: ['codeERP', 'name'],
  refs: { categoryID: 'Category' },
  document: false,
  inDoubtPolicy: 'resend',
  duplicates: 'skip',
  send: { kind: 'create', create: 'createFamily' },
  readBack: null,
  sequence: null,
  sandbox: 'Family',
});
