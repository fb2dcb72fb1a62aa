/**
 * What counts as "the WMS was unavailable" (the record stays pending, exit 75) and what stays a data error or
 * an in-doubt send; and the circuit breaker's states.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { isWmsUnavailable } from '../../src/push/decide.js';
import { WmsError, WmsErrorCode } from '../../src/wms/errors.js';
import { createCircuitBreaker } from '../../src/wms/breaker.js';

const err = (code: (typeof WmsErrorCode)[keyof typeof WmsErrorCode], init: Partial<ConstructorParameters<typeof WmsError>[2]> = {}) =>
  new WmsError(code, 'x', { method: 'POST', path: '/open/v1/product', ...init });

test('outage classification', () => {
  assert.equal(isWmsUnavailable(err(WmsErrorCode.NETWORK, { networkCode: 'ECONNREFUSED' })), true);
  assert.equal(isWmsUnavailable(err(WmsErrorCode.NETWORK, { networkCode: 'CIRCUIT_OPEN' })), true);
  assert.equal(isWmsUnavailable(err(WmsErrorCode.TIMEOUT)), true);
  assert.equal(
    isWmsUnavailable(err(WmsErrorCode.TIMEOUT, { mayHaveReachedServer: true })),
    false,
    'a send that may have taken effect is in doubt, not unavailable',
  );
  assert.equal(isWmsUnavailable(err(WmsErrorCode.HTTP, { httpStatus: 500 })), true);
  assert.equal(isWmsUnavailable(err(WmsErrorCode.HTTP, { httpStatus: 503 })), true);
  assert.equal(isWmsUnavailable(err(WmsErrorCode.RATE_LIMIT, { httpStatus: 429 })), true);
  assert.equal(isWmsUnavailable(err(WmsErrorCode.VALIDATION, { httpStatus: 400 })), false, 'the data');
  assert.equal(isWmsUnavailable(err(WmsErrorCode.HTTP, { httpStatus: 404 })), false);
  assert.equal(isWmsUnavailable(err(WmsErrorCode.AUTH, { httpStatus: 401 })), false, 'credentials: exit 2');
  assert.equal(isWmsUnavailable(err(WmsErrorCode.NETWORK, { networkCode: 'DEPTH_ZERO_SELF_SIGNED_CERT' })), false, 'a certificate is configuration');
  assert.equal(isWmsUnavailable(new Error('ECONNREFUSED')), false, 'only WMS errors');
});

test('circuit breaker: opens after a run of connection failures, one probe after the cooldown, an answer closes it', () => {
  let now = 1_000_000;
  const b = createCircuitBreaker({ threshold: 3, cooldownMs: 1000, now: () => now });
  b.connectionFailed();
  b.answered(); // an answer resets the run
  b.connectionFailed();
  b.connectionFailed();
  assert.equal(b.state().circuitOpen, false);
  assert.equal(b.allow(), true);
  b.connectionFailed();
  assert.equal(b.state().circuitOpen, true);
  assert.equal(b.state().unavailableSince, new Date(1_000_000).toISOString());
  assert.equal(b.allow(), false);
  now += 1000;
  assert.equal(b.allow(), true, 'one probe');
  assert.equal(b.allow(), false, 'only one');
  b.connectionFailed(); // the probe failed: open again
  assert.equal(b.allow(), false);
  now += 1000;
  assert.equal(b.allow(), true);
  b.answered();
  assert.deepEqual(b.state(), { circuitOpen: false, unavailableSince: null, consecutiveFailures: 0 });
  assert.equal(b.allow(), true);
});
