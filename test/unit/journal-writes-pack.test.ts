/**
 * The writer thread's answer (src/journal/sqlite-writes.ts packResults/unpackResults): only the writes that
 * did not simply succeed cross back, and the main thread rebuilds every write's outcome in order.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { packResults, unpackResults, type QueuedWriteResult } from '../../src/journal/sqlite-writes.js';

test('packed results round-trip: plain successes, values and failures, in order', () => {
  const results: QueuedWriteResult[] = [
    { ok: true, value: undefined },
    { ok: true, value: { stored: true, id: 7 } },
    { ok: false, message: 'record 9 not found', code: 'SQLITE_X' },
    { ok: true, value: undefined },
    { ok: true, value: 0 },
  ];
  const packed = packResults(results);
  assert.deepEqual(unpackResults(packed), results);
  assert.ok(packed.length < JSON.stringify(results).length, 'smaller than the whole list');
  assert.deepEqual(unpackResults(packResults([])), []);
  const plain = Array.from({ length: 1000 }, () => ({ ok: true as const, value: undefined }));
  assert.equal(packResults(plain), '[1000,[]]', 'a batch of marks and settles answers with its length alone');
});
