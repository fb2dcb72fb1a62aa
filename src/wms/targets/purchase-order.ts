import * as S from '../schemas.js';
import { defineTarget } from './spec.js';

export const purchaseOrder = defineTarget({
  name: 'PurchaseOrder',
  label: 'purchase order',
  tier: 3,
  schema: S.PurchaseOrderCreate,
  key: { parts: [['nf'], ['providerID']], label: 'nf|providerID' },
  items: 'purchaseOrderItens',
  ops: ['create'],
  defaultOp: 'create',
  xref: 'PurchaseOrder',
  lookupBy: ['nf', 'codeERP'],
  refs: {
    companyID: 'Company',
    branchID: 'Branch',
    warehouseID: 'Warehouse',
    docksID: 'Dock',
    providerID: 'Provider',
    ownersID: 'Owners',
    'purchaseOrderItens[].productID': 'Product',
    'purchaseOrderItens[].materialStatusID': 'MaterialStatus',
    'purchaseOrderItens[].unitMeasurementId': 'UnitMeasurement',
  },
  document: true,
  inDoubtPolicy: 'hold',
  duplicates: 'skip',
  send: { kind: 'create', create: 'createPurchaseOrder' },
  readBack: null,
  sequence: null,
  sandbox: 'PurchaseOrder',
  order: { kind: 'purchase', number: 'nf', partnerName: null, partnerTaxId: 'providerID' },
});
