/**
 * The senders follow each target's send and read-back rules (src/wms/targets/): which client methods a
 * record calls, and what the outcome is. A fake client records the calls; the sandbox tests cover the wire.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readBack, send, type SendContext } from '../../src/push/senders.js';
import type { WmsClient } from '../../src/wms/client-types.js';
import type { Journal } from '../../src/journal/types.js';
import type { Target } from '../../src/wms/targets.js';

/** A client whose reads find nothing (or `existing`), creates answer an id, lock/unlock change 2 records. */
function fakeClient(existing: Record<string, unknown> | null = null): { client: WmsClient; calls: string[] } {
  const calls: string[] = [];
  const client = new Proxy({} as WmsClient, {
    get(_t, name: string) {
      if (name === 'then' || name === 'availability') return undefined;
      if (name.startsWith('list')) {
        return () => {
          calls.push(name);
          return (async function* () {})();
        };
      }
      return async () => {
        calls.push(name);
        if (name.startsWith('get')) return existing;
        if (name === 'lockStock' || name === 'unlockStock') return { stocksLocked: 2 };
        if (name.startsWith('delete')) return undefined;
        return { id: 'new-id' };
      };
    },
  });
  return { client, calls };
}

const journal = { getXref: async () => undefined, getMeta: async () => undefined, setMeta: async () => undefined } as unknown as Journal;
const ctxOf = (client: WmsClient): SendContext => ({ client, journal, inboxDir: '.' });
const input = (target: Target, payload: Record<string, unknown> = {}) => ({
  target,
  key: 'K1',
  payload: { codeERP: 'C1', code: 'C1', id: 'id-1', ...payload },
});

test('send: each target calls the client methods its send rule names', async () => {
  const cases: Array<[Target, string[], string]> = [
    ['UnitMeasurement', ['createUnitMeasurement'], 'created'],
    ['Category', ['createCategory'], 'created'],
    ['Family', ['createFamily'], 'created'],
    ['Product', ['createProduct'], 'created'],
    ['PurchaseOrder', ['createPurchaseOrder'], 'created'],
    ['PickingList', ['createPickingList'], 'created'],
    ['Provider', ['getProviderByErp', 'createProvider'], 'created'],
    ['ShippingCompany', ['getShippingCompanyByErp', 'createShippingCompany'], 'created'],
    ['ConversionFactor', ['createConversionFactor'], 'created'],
    ['ConversionFactorDelete', ['deleteConversionFactor'], 'deleted'],
    ['StockLock', ['lockStock'], 'updated'],
    ['StockUnlock', ['unlockStock'], 'updated'],
  ];
  for (const [target, expected, outcome] of cases) {
    const { client, calls } = fakeClient();
    const out = await send(input(target), ctxOf(client));
    assert.deepEqual(calls, expected, target);
    assert.equal(out.outcome, outcome, target);
  }
  // owners: looked up by code in the Owners list first, then created
  const o = fakeClient();
  assert.equal((await send(input('Owners'), ctxOf(o.client))).outcome, 'created');
  assert.equal(o.calls[o.calls.length - 1], 'createOwner');
  // stock sync entries go as sessions, never one by one
  await assert.rejects(send(input('StockSync'), ctxOf(fakeClient().client)), /sessions/);
});

test('send: an upsert by codeERP that finds the record updates it, by its WMS id', async () => {
  const { client, calls } = fakeClient({ id: 'wms-7' });
  const out = await send(input('Provider'), ctxOf(client));
  assert.deepEqual(calls, ['getProviderByErp', 'updateProvider']);
  assert.deepEqual(out, { outcome: 'updated', wmsId: 'wms-7' });
});

test('read-back: by each target rule', async () => {
  const absent = fakeClient();
  assert.equal(await readBack(input('Provider'), ctxOf(absent.client)), 'absent');
  assert.deepEqual(absent.calls, ['getProviderByErp']);
  assert.equal(await readBack(input('StockLock'), ctxOf(fakeClient().client)), 'absent', 'setting a status again is safe');
  assert.equal(await readBack(input('PickingList'), ctxOf(fakeClient().client)), null, 'documents have no read-back');
  assert.equal(await readBack(input('ConversionFactor'), ctxOf(fakeClient().client)), 'absent');
  const gone = fakeClient();
  const settled = await readBack(input('ConversionFactorDelete'), ctxOf(gone.client));
  assert.ok(settled && settled !== 'absent' && settled.outcome === 'deleted', 'the factor is gone: the delete took effect');
  assert.deepEqual(gone.calls, ['getConversionFactor']);
  const still = fakeClient({ id: 'id-1' });
  assert.equal(await readBack(input('ConversionFactorDelete'), ctxOf(still.client)), 'absent', 'the factor is still there: delete again');
  assert.equal(await readBack(input('Provider'), ctxOf(fakeClient({ id: 'x' }).client)), null, 'present: the upsert resends its update');
});
