import { stockLock } from './stock-lock.js';
import { defineTarget } from './spec.js';

/** A stock unlock is a stock lock in every rule but the call it makes. */
export const stockUnlock = defineTarget({
  ...stockLock,
  name: 'StockUnlock',
  label: 'stock unlock',
  send: { kind: 'stock-status', apply: 'unlockStock' },
});
