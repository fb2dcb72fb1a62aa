import * as S from '../schemas.js';
import { defineTarget } from './spec.js';

export const shippingCompany = defineTarget({
  name: 'ShippingCompany',
  label: 'carrier',
  tier: 0,
  schema: S.ShippingCompanyCreate,
  key: { parts: [['codeERP']], label: 'codeERP' },
  items: null,
  ops: ['create', 'update', 'upsert'],
  defaultOp: 'upsert',
  xref: 'ShippingCompany',
  lookupBy: ['codeERP', 'cnpj'],
  refs: { ownerID: 'Owners' },
  document: false,
  inDoubtPolicy: 'resend',
  duplicates: 'skip',
  send: { kind: 'upsert-by-codeERP', find: 'getShippingCompanyByErp', create: 'createShippingCompany', update: 'updateShippingCompany' },
  readBack: 'codeERP',
  sequence: { scope: 'ShippingCompany', by: 'key' },
  sandbox: 'ShippingCompany',
  lookup: { by: 'codeERP', read: 'get', get: 'getShippingCompanyByErp' },
});
