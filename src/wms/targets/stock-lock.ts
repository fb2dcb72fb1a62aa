import * as S from '../schemas.js';
import { defineTarget } from './spec.js';

export const stockLock = defineTarget({
  name: 'StockLock',
  label: 'stock lock',
  // after a stock sync dropped with them has replaced the stock they act on
  tier: 4,
  schema: S.StockLockRequest,
  key: { parts: [['productId'], ['warehouseId'], ['lotNumber', ''], ['materialStatusId']], label: 'productId|warehouseId|lotNumber|materialStatusId' },
  items: null,
  ops: ['create'],
  defaultOp: 'create',
  xref: null,
  refs: { warehouseId: 'Warehouse', materialStatusId: 'MaterialStatus', productId: 'Product', ownerId: 'Owners', unitMeasurementId: 'UnitMeasurement' },
  document: false,
  inDoubtPolicy: 'resend',
  duplicates: 'process',
  send: { kind: 'stock-status', apply: 'lockStock' },
  readBack: 'resend',
  // per warehouse + product + lot; an operation with no lot touches every lot of the product
  sequence: { scope: 'stock', by: 'fields', fields: ['warehouseId', 'productId'], part: 'lotNumber' },
  sandbox: 'Stock',
  stockLabel: { lotAndStatus: true, warehouseOptional: false },
});
