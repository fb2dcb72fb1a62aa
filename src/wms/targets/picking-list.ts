import * as S from '../schemas.js';
import { defineTarget } from './spec.js';

export const pickingList = defineTarget({
  name: 'PickingList',
  label: 'picking list',
  tier: 3,
  schema: S.PickingListCreate,
  key: { parts: [['order'], ['ownerID']], label: 'order|ownerID' },
  items: 'pickingItens',
  ops: ['create'],
  defaultOp: 'create',
  xref: 'PickingList',
  lookupBy: ['order', 'codeERP'],
  refs: {
    companyID: 'Company',
    branchID: 'Branch',
    warehouseID: 'Warehouse',
    dockID: 'Dock',
    ownerID: 'Owners',
    shippingCompanyID: 'ShippingCompany',
    'pickingItens[].productID': 'Product',
  },
  document: true,
  inDoubtPolicy: 'hold',
  duplicates: 'skip',
  send: { kind: 'create', create: 'createPickingList' },
  readBack: null,
  sequence: null,
  sandbox: 'PickingList',
  order: { kind: 'picking', number: 'order', partnerName: 'clientName', partnerTaxId: 'ownerID' },
});
