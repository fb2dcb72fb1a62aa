import * as S from '../schemas.js';
import { defineTarget } from './spec.js';

export const provider = defineTarget({
  name: 'Provider',
  label: 'provider',
  tier: 0,
  schema: S.ProviderCreate,
  key: { parts: [['codeERP']], label: 'codeERP' },
  items: null,
  ops: ['create', 'update', 'upsert'],
  defaultOp: 'upsert',
  xref: 'Provider',
  lookupBy: ['codeERP', 'cnpj'],
  refs: { ownerID: 'Owners' },
  document: false,
  inDoubtPolicy: 'resend',
  duplicates: 'skip',
  send: { kind: 'upsert-by-codeERP', find: 'getProviderByErp', create: 'createProvider', update: 'updateProvider' },
  readBack: 'codeERP',
  sequence: { scope: 'Provider', by: 'key' },
  sandbox: 'Provider',
  lookup: { by: 'codeERP', read: 'get', get: 'getProviderByErp' },
});
