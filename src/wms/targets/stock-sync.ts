import * as S from '../schemas.js';
import { defineTarget } from './spec.js';

export const stockSync = defineTarget({
  name: 'StockSync',
  label: 'stock sync entry',
  // sessions last in the tier
  tier: 3,
  schema: S.StockSyncProduct.extend({ ownerId: S.Guid }),
  key: { parts: [['productId'], ['ownerId']], label: 'productId|ownerId' },
  items: null,
  ops: ['create'],
  defaultOp: 'create',
  xref: null,
  refs: { productId: 'Product', ownerId: 'Owners' },
  document: false,
  inDoubtPolicy: 'resend',
  duplicates: 'process',
  send: { kind: 'session', sync: 'syncStock' },
  readBack: null,
  sequence: null,
  sandbox: 'SyncSession',
  stockLabel: { lotAndStatus: false, warehouseOptional: true },
});
