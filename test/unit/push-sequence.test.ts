/**
 * The sequencing gate (src/push/sequence.ts): what an operation touches, and the order it imposes.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createSequenceGate, touchOf, type Touch } from '../../src/push/sequence.js';

const lock = (product: string, lot: string, wh = 'W1') =>
  touchOf({
    target: 'StockLock',
    key: 'k',
    payload: { warehouseId: wh, productId: { $ref: { resource: 'Product', value: product } }, lotNumber: lot, materialStatusId: 'S' },
  })!;

test('touch: stock by warehouse + product (+ lot; none = every lot), factors and providers by key, others not sequenced', () => {
  assert.deepEqual(lock('000210', ''), { scope: 'stock|W1|PRODUCT:000210', part: null });
  assert.deepEqual(lock('000210', ' l1 '), { scope: 'stock|W1|PRODUCT:000210', part: 'L1' });
  assert.notEqual(lock('000210', 'L1', 'W2').scope, lock('000210', 'L1').scope);
  assert.equal(
    touchOf({ target: 'StockUnlock', key: 'x', payload: { warehouseId: 'W1', productId: { $ref: { resource: 'Product', value: '000210' } } } })?.scope,
    lock('000210', '').scope,
  );
  assert.deepEqual(touchOf({ target: 'ConversionFactor', key: 'cx12', payload: {} }), { scope: 'ConversionFactor|CX12', part: null });
  assert.deepEqual(touchOf({ target: 'ConversionFactorDelete', key: 'x', payload: { id: { $ref: { resource: 'ConversionFactor', value: 'CX12' } } } }), {
    scope: 'ConversionFactor|CX12',
    part: null,
  });
  assert.deepEqual(touchOf({ target: 'Provider', key: 'P1', payload: {} }), { scope: 'Provider|P1', part: null });
  assert.equal(touchOf({ target: 'Category', key: 'C1', payload: {} }), null);
  assert.equal(touchOf({ target: 'PickingList', key: 'C1', payload: {} }), null);
});

/** Enters the touches in order; each runs when ready and finishes when the test says; returns the start order. */
function harness(touches: Touch[]) {
  const gate = createSequenceGate();
  const started: number[] = [];
  const blockers = new Map<number, string | null>();
  const finish: Array<(b: string | null) => void> = [];
  touches.forEach((t, i) => {
    const { ready, done } = gate.enter(t);
    finish[i] = done;
    void ready.then((b) => {
      started.push(i);
      blockers.set(i, b);
    });
  });
  const tick = () => new Promise((r) => setImmediate(r));
  return { started, blockers, finish, tick };
}

test('order: a lot waits for its lot and for whole-product operations; other lots and products go at once', async () => {
  const h = harness([lock('P', ''), lock('P', 'A'), lock('P', 'B'), lock('P', 'A'), lock('Q', 'A'), lock('P', '')]);
  await h.tick();
  assert.deepEqual(h.started, [0, 4], 'the whole-product lock first; independent stock at once');
  h.finish[0]!(null);
  await h.tick();
  assert.deepEqual(h.started, [0, 4, 1, 2], 'both lots after the whole-product lock, concurrently');
  h.finish[2]!(null);
  await h.tick();
  assert.deepEqual(h.started, [0, 4, 1, 2], 'the second lock of lot A waits for the first');
  h.finish[1]!(null);
  await h.tick();
  assert.deepEqual(h.started, [0, 4, 1, 2, 3]);
  h.finish[4]!(null);
  await h.tick();
  assert.deepEqual(h.started, [0, 4, 1, 2, 3], 'a whole-product operation waits for every lot operation before it');
  h.finish[3]!(null);
  await h.tick();
  assert.deepEqual(h.started, [0, 4, 1, 2, 3, 5]);
});

test('a predecessor not delivered is passed on to the operations after it', async () => {
  const h = harness([lock('P', 'A'), lock('P', 'A'), lock('P', 'B')]);
  await h.tick();
  h.finish[0]!('lock line 2 failed');
  h.finish[2]!(null);
  await h.tick();
  assert.equal(h.blockers.get(1), 'lock line 2 failed');
  assert.equal(h.blockers.get(2), null, 'another lot is not affected');
});
