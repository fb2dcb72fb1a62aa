import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { decideRetry, parseRetryAfter, backoffDelay, isIdempotent, MAX_RETRY_AFTER_MS, type RetryPolicy } from '../../src/wms/retry.js';
import { WmsError, WmsErrorCode, codeForStatus, type WmsErrorInit } from '../../src/wms/errors.js';

const policy: RetryPolicy = { retries: 5, baseDelayMs: 200, maxDelayMs: 10_000 };
const max = () => 0.999999; // jitter at its top: delay ~= the cap
const zero = () => 0;

function answered(status: number, extra: Partial<WmsErrorInit> = {}, envelopeCode?: number): WmsError {
  return new WmsError(codeForStatus(status, envelopeCode), `x ${status}`, {
    method: 'POST',
    path: '/p',
    httpStatus: status,
    ...(envelopeCode !== undefined ? { envelopeCode } : {}),
    ...extra,
  });
}
function network(sent: boolean, code: WmsErrorCode = WmsErrorCode.NETWORK, networkCode = 'UND_ERR_SOCKET'): WmsError {
  return new WmsError(code, 'net', { method: 'POST', path: '/p', mayHaveReachedServer: sent, networkCode });
}

describe('decideRetry table', () => {
  // [label, error, method, opts, retried?]
  const rows: Array<[string, WmsError, string, { idempotent?: boolean; retryPostOn5xx?: boolean }, boolean]> = [
    ['400 validation GET', answered(400), 'GET', {}, false],
    ['422 validation POST', answered(422), 'POST', {}, false],
    ['envelope 400 under 200', answered(200, {}, 400), 'GET', {}, false],
    ['401 auth (after replay)', answered(401), 'GET', {}, false],
    ['403 firewall', answered(403), 'GET', {}, false],
    ['404', answered(404), 'GET', {}, false],
    ['409', answered(409), 'PUT', {}, false],
    ['408 request timeout POST', answered(408), 'POST', {}, true],
    ['429 GET', answered(429), 'GET', {}, true],
    ['429 POST (refused, nothing applied)', answered(429), 'POST', {}, true],
    ['503 POST', answered(503), 'POST', {}, true],
    ['500 GET', answered(500), 'GET', {}, true],
    ['500 POST default retryPostOn5xx', answered(500), 'POST', {}, true],
    ['500 POST retryPostOn5xx false', answered(500), 'POST', { retryPostOn5xx: false }, false],
    ['500 POST marked idempotent, retryPostOn5xx false', answered(500), 'POST', { idempotent: true, retryPostOn5xx: false }, true],
    ['504 POST (gateway timeout: in doubt)', answered(504), 'POST', {}, false],
    ['504 GET', answered(504), 'GET', {}, true],
    ['502 POST (bad gateway: in doubt)', answered(502), 'POST', {}, false],
    ['502 PUT', answered(502), 'PUT', {}, true],
    ['envelope 500 under HTTP 200, GET', answered(200, {}, 500), 'GET', {}, true],
    ['envelope 200 with error text (E_WMS_ENVELOPE)', answered(200, {}, 200), 'GET', {}, false],
    ['network before send, POST', network(false, WmsErrorCode.NETWORK, 'ECONNREFUSED'), 'POST', {}, true],
    ['network after send, POST', network(true), 'POST', {}, false],
    ['network after send, POST marked idempotent', network(true), 'POST', { idempotent: true }, true],
    ['network after send, GET', network(true), 'GET', {}, true],
    ['network after send, PUT', network(true), 'PUT', {}, true],
    ['network after send, PUT marked not idempotent', network(true), 'PUT', { idempotent: false }, false],
    ['timeout after send, POST', network(true, WmsErrorCode.TIMEOUT), 'POST', {}, false],
    ['timeout before send, POST', network(false, WmsErrorCode.TIMEOUT), 'POST', {}, true],
    ['timeout GET', network(true, WmsErrorCode.TIMEOUT), 'GET', {}, true],
    ['response schema mismatch', new WmsError(WmsErrorCode.RESPONSE, 'r', { method: 'GET', path: '/p', httpStatus: 200 }), 'GET', {}, false],
  ];
  for (const [label, err, method, opts, retried] of rows) {
    test(`${label} -> ${retried ? 'retry' : 'give up'}`, () => {
      const d = decideRetry(err, 1, policy, method, { ...opts, random: zero });
      assert.equal(d !== undefined, retried, `decision was ${String(d)}`);
    });
  }

  test('a non-WmsError is never retried', () => {
    assert.equal(decideRetry(new Error('boom'), 1, policy, 'GET'), undefined);
    assert.equal(decideRetry('x', 1, policy, 'GET'), undefined);
  });

  test('gives up once the retry budget is spent', () => {
    const err = answered(500);
    assert.notEqual(decideRetry(err, 5, policy, 'GET', { random: zero }), undefined);
    assert.equal(decideRetry(err, 6, policy, 'GET', { random: zero }), undefined);
    assert.equal(decideRetry(err, 1, { ...policy, retries: 0 }, 'GET', { random: zero }), undefined);
  });
});

describe('Retry-After', () => {
  test('seconds', () => {
    assert.equal(parseRetryAfter('1'), 1000);
    assert.equal(parseRetryAfter(' 120 '), 120_000);
    assert.equal(parseRetryAfter('0'), 0);
    assert.equal(parseRetryAfter(['3', '9']), 3000);
  });
  test('HTTP date', () => {
    const now = Date.parse('Sun, 22 Nov 2026 00:00:00 GMT');
    assert.equal(parseRetryAfter('Sun, 22 Nov 2026 00:00:05 GMT', now), 5000);
    assert.equal(parseRetryAfter('Sat, 21 Nov 2026 23:59:00 GMT', now), 0, 'a past date means now');
  });
  test('absent or invalid', () => {
    assert.equal(parseRetryAfter(undefined), undefined);
    assert.equal(parseRetryAfter(null), undefined);
    assert.equal(parseRetryAfter(''), undefined);
    assert.equal(parseRetryAfter('-1'), undefined);
    assert.equal(parseRetryAfter('1.5'), undefined);
    assert.equal(parseRetryAfter('soon'), undefined);
  });
  test('429 honours Retry-After exactly, beyond maxDelayMs, capped at 60 s', () => {
    assert.equal(decideRetry(answered(429, { retryAfterMs: 1000 }), 1, policy, 'POST', { random: max }), 1000);
    assert.equal(decideRetry(answered(429, { retryAfterMs: 30_000 }), 1, policy, 'GET', { random: max }), 30_000);
    assert.equal(decideRetry(answered(429, { retryAfterMs: 3_600_000 }), 1, policy, 'GET', { random: max }), MAX_RETRY_AFTER_MS);
    assert.equal(decideRetry(answered(503, { retryAfterMs: 2000 }), 1, policy, 'GET', { random: max }), 2000);
  });
  test('429 without Retry-After falls back to backoff', () => {
    const d = decideRetry(answered(429), 3, policy, 'GET', { random: max });
    assert.ok(d !== undefined && d >= 790 && d < 800, String(d));
  });
});

describe('backoff with full jitter', () => {
  test('grows exponentially up to maxDelayMs', () => {
    assert.equal(isIdempotent('get'), true);
    const tops = [1, 2, 3, 4, 5, 6, 7, 8].map((a) => backoffDelay(a, policy, max));
    assert.deepEqual(
      tops.map((t) => Math.round(t / 100) * 100),
      [200, 400, 800, 1600, 3200, 6400, 10000, 10000],
    );
  });
  test('stays within [0, cap) for random draws', () => {
    let seed = 42;
    const rnd = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
    for (let attempt = 1; attempt <= 8; attempt++) {
      const cap = Math.min(policy.maxDelayMs, policy.baseDelayMs * 2 ** (attempt - 1));
      let lo = Infinity;
      let hi = -Infinity;
      for (let i = 0; i < 500; i++) {
        const d = decideRetry(answered(500), attempt, { ...policy, retries: 10 }, 'GET', { random: rnd })!;
        assert.ok(d >= 0 && d < cap, `attempt ${attempt}: ${d} not in [0, ${cap})`);
        lo = Math.min(lo, d);
        hi = Math.max(hi, d);
      }
      // full jitter spreads over the whole range, not a narrow band around the cap
      assert.ok(lo < cap * 0.1 && hi > cap * 0.9, `attempt ${attempt}: spread ${lo}..${hi} of ${cap}`);
    }
  });
  test('random 0 gives 0 delay', () => {
    assert.equal(decideRetry(answered(500), 4, policy, 'GET', { random: zero }), 0);
  });
});

describe('codeForStatus', () => {
  test('maps statuses and envelope codes to stable codes', () => {
    assert.equal(codeForStatus(400, 400), 'E_WMS_VALIDATION');
    assert.equal(codeForStatus(422, undefined), 'E_WMS_VALIDATION');
    assert.equal(codeForStatus(200, 400), 'E_WMS_VALIDATION');
    assert.equal(codeForStatus(401, 401), 'E_WMS_AUTH');
    assert.equal(codeForStatus(403, 403), 'E_WMS_AUTH');
    assert.equal(codeForStatus(429, 429), 'E_WMS_RATE_LIMIT');
    assert.equal(codeForStatus(500, 500), 'E_WMS_HTTP');
    assert.equal(codeForStatus(404, 404), 'E_WMS_HTTP');
    assert.equal(codeForStatus(200, 404), 'E_WMS_ENVELOPE');
    assert.equal(codeForStatus(200, 500), 'E_WMS_ENVELOPE');
  });
});
