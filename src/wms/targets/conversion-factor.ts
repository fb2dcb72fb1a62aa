import * as S from '../schemas.js';
import { defineTarget } from './spec.js';

export const conversionFactor = defineTarget({
  name: 'ConversionFactor',
  label: 'conversion factor',
  tier: 3,
  schema: S.ConversionFactorCreate,
  key: { parts: [['codeERP']], label: 'codeERP' },
  items: null,
  ops: ['create', 'update', 'upsert'],
  defaultOp: 'upsert',
  xref: 'ConversionFactor',
  lookupBy: ['codeERP'],
  refs: { productID: 'Product', unitMeasurementInputID: 'UnitMeasurement', unitMeasurementOutputID: 'UnitMeasurement' },
  document: false,
  inDoubtPolicy: 'resend',
  duplicates: 'skip',
  send: { kind: 'upsert-by-xref', get: 'getConversionFactor', create: 'createConversionFactor', update: 'updateConversionFactor' },
  readBack: 'codeERP+productID',
  // updates and deletes of one factor, by its natural key
  sequence: { scope: 'ConversionFactor', by: 'key' },
  sandbox: 'ConversionFactor',
});
