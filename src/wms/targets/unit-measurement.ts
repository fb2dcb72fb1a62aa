import * as S from '../schemas.js';
import { defineTarget } from './spec.js';

export const unitMeasurement = defineTarget({
  name: 'UnitMeasurement',
  label: 'unit of measure',
  tier: 0,
  schema: S.UnitMeasurementCreate,
  key: { parts: [['codeERP', 'symbol']], label: 'codeERP (or symbol)' },
  items: null,
  ops: ['create'],
  defaultOp: 'create',
  xref: 'UnitMeasurement',
  lookupBy: ['symbol', 'codeERP'],
  refs: {},
  document: false,
  inDoubtPolicy: 'resend',
  duplicates: 'skip',
  send: { kind: 'create', create: 'createUnitMeasurement' },
  readBack: null,
  sequence: null,
  sandbox: 'UnitMeasurement',
});
