import * as S from '../schemas.js';
import { defineTarget } from './spec.js';

export const conversionFactorDelete = defineTarget({
  name: 'ConversionFactorDelete',
  label: 'conversion factor deletion',
  tier: 3,
  schema: S.ConversionFactorUpdate.pick({ id: true }),
  key: { parts: [['id']], label: 'id' },
  items: null,
  ops: ['delete'],
  defaultOp: 'delete',
  xref: null,
  refs: { id: 'ConversionFactor' },
  document: false,
  inDoubtPolicy: 'resend',
  duplicates: 'skip',
  send: { kind: 'delete', remove: 'deleteConversionFactor', get: 'getConversionFactor', unlinks: 'ConversionFactor' },
  readBack: 'gone',
  // in the same scope as the factor's creates and updates: deletes name it by reference (natural key) or by id
  sequence: { scope: 'ConversionFactor', by: 'refKey', field: 'id' },
  sandbox: 'ConversionFactor',
});
