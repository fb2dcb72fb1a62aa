import * as S from '../schemas.js';
import { defineTarget } from './spec.js';

export const owners = defineTarget({
  name: 'Owners',
  label: 'owner',
  tier: 0,
  schema: S.OwnerCreate,
  key: { parts: [['code']], label: 'code' },
  items: null,
  ops: ['create'],
  defaultOp: 'create',
  xref: 'Owners',
  lookupBy: ['code', 'codeERP'],
  refs: { companyID: 'Company' },
  document: false,
  inDoubtPolicy: 'resend',
  duplicates: 'skip',
  // by code from the Owners list (src/push/owners.ts): GET /Owners/codeerp/{code} may match codeERP only
  send: { kind: 'create-unless-code', create: 'createOwner' },
  readBack: 'code',
  sequence: null,
  sandbox: 'Owners',
  lookup: { by: 'code', read: 'owners' },
});
