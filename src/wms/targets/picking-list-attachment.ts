import * as S from '../schemas.js';
import { defineTarget } from './spec.js';

export const pickingListAttachment = defineTarget({
  name: 'PickingListAttachment',
  label: 'picking list attachment',
  // after its picking list
  tier: 4,
  schema: S.AttachmentRequest,
  key: { parts: [['PickingListID'], ['UserFileName']], label: 'PickingListID|UserFileName' },
  items: null,
  ops: ['create'],
  defaultOp: 'create',
  xref: null,
  refs: { PickingListID: 'PickingList' },
  document: true,
  inDoubtPolicy: 'hold',
  duplicates: 'skip',
  send: { kind: 'attachment', upload: 'attachToPickingList' },
  readBack: null,
  sequence: null,
  sandbox: 'Attachment',
});
