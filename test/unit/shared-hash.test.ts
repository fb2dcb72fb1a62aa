/**
 * Payload hashes are stored (records.payload_hash, xref.payload_hash) and compared across versions: the "same
 * payload already delivered" check. The expected values below were computed by the createHash + map/join
 * implementation these functions replaced; a change in them would resend every delivered record once.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { canonicalJson, payloadHash, sha256 } from '../../src/shared/hash.js';

test('sha256 is the hex digest of the UTF-8 bytes', () => {
  assert.equal(sha256(''), 'e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855');
  assert.equal(sha256('ç'), '8bfa829b8119a6f39b91fd8decec63830b556e4d88a9da29334d7b0558829f2d');
  const s = 'Categoria ção \u0000 😀'.repeat(50);
  assert.equal(sha256(s), createHash('sha256').update(s, 'utf8').digest('hex'));
});

test('payload hashes of earlier versions are unchanged (sorted keys, undefined as null, sparse arrays)', () => {
  assert.equal(
    payloadHash({ codeERP: 'BENCH0000005', name: 'Categoria de teste 5', description: 'gerada pelo benchmark' }),
    '43c3f34c94995db9e8a51ad272e7fa0bc60fe5fdae4edb2ed35e4f589dc26121',
  );
  // eslint-disable-next-line no-sparse-arrays
  const odd = { z: [1, , { b: null, a: 'ç' }], a: undefined, n: 1.5 };
  assert.equal(canonicalJson(odd), '{"a":null,"n":1.5,"z":[1,,{"a":"ç","b":null}]}');
  assert.equal(payloadHash(odd), '2223da51597adc90c66682b6386fe2b2b828c59abf676db035ea14ff42dd99cd');
  assert.equal(payloadHash({ b: 1, a: [{ y: 2, x: 1 }] }), payloadHash({ a: [{ x: 1, y: 2 }], b: 1 }), 'key order does not matter');
  assert.notEqual(payloadHash({ a: [1, 2] }), payloadHash({ a: [2, 1] }), 'array order does');
});
