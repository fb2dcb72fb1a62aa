import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startSandbox, sandboxCall, sandboxToken, type Sandbox } from '../helpers/sandbox.js';

let sb: Sandbox;
before(async () => {
  sb = await startSandbox({ seed: 'auth-tests', tokenTtlSeconds: 1 });
});
after(() => sb.close());

/** Polls until `check` is true or the deadline passes. */
async function until(check: () => Promise<boolean>, deadlineMs: number): Promise<boolean> {
  const end = Date.now() + deadlineMs;
  while (Date.now() < end) {
    if (await check()) return true;
    await new Promise((r) => setTimeout(r, 100)); // poll interval of a wait on a condition
  }
  return false;
}

describe('authorization', () => {
  test('right credentials give an opaque token pair; wrong ones 401 invalid credentials', async () => {
    const pair = await sandboxToken(sb);
    assert.ok(pair.token.length >= 20 && pair.refreshToken.length >= 20);
    assert.notEqual(pair.token, pair.refreshToken);
    const other = await sandboxToken(sb);
    assert.notEqual(other.token, pair.token);
    const bad = await sandboxCall(sb, 'POST', '/open/v1/authorize', { body: { accessKeyID: sb.accessKeyID, secretKey: 'wrong' } });
    assert.equal(bad.status, 401);
    assert.deepEqual({ code: bad.json.code, error: bad.json.error, data: bad.json.data }, { code: 401, error: 'invalid credentials', data: null });
    assert.ok(!JSON.stringify(bad.json).includes(sb.secretKey), 'the secret never appears in an answer');
    const missing = await sandboxCall(sb, 'POST', '/open/v1/authorize', { body: { accessKeyID: sb.accessKeyID } });
    assert.equal(missing.status, 400);
    assert.match(missing.json.error, /secretKey: required/);
  });

  test('a token expires after tokenTtlSeconds: 401 token expired', async () => {
    const { token } = await sandboxToken(sb);
    assert.equal((await sandboxCall(sb, 'GET', '/open/v1/company', { token })).status, 200);
    // eslint-disable-next-line @typescript-eslint/no-explicit-any -- a CallResult (whose json is any)
    let last: { status: number; json: any } | undefined;
    const expired = await until(async () => {
      last = await sandboxCall(sb, 'GET', '/open/v1/company', { token });
      return last.status === 401;
    }, 5_000);
    assert.ok(expired, 'the token expired within 5 s (ttl 1 s)');
    assert.equal(last!.json.code, 401);
    assert.equal(last!.json.error, 'token expired');
  });

  test('refresh tokens are single-use and return a new working pair', async () => {
    const pair = await sandboxToken(sb);
    const r1 = await sandboxCall(sb, 'POST', '/open/v1/refreshtoken', { body: { accessKeyID: sb.accessKeyID, dataRefreshToken: pair.refreshToken } });
    assert.equal(r1.status, 200);
    assert.notEqual(r1.json.data.token, pair.token);
    assert.equal((await sandboxCall(sb, 'GET', '/open/v1/branch', { token: r1.json.data.token })).status, 200);
    const r2 = await sandboxCall(sb, 'POST', '/open/v1/refreshtoken', { body: { accessKeyID: sb.accessKeyID, dataRefreshToken: pair.refreshToken } });
    assert.equal(r2.status, 401);
    assert.equal(r2.json.error, 'refresh token already used');
    const r3 = await sandboxCall(sb, 'POST', '/open/v1/refreshtoken', { body: { accessKeyID: sb.accessKeyID, dataRefreshToken: 'unknown' } });
    assert.equal(r3.status, 401);
    assert.equal(r3.json.error, 'invalid refresh token');
    const r4 = await sandboxCall(sb, 'POST', '/open/v1/refreshtoken', { body: { accessKeyID: 'other', dataRefreshToken: r1.json.data.refreshToken } });
    assert.equal(r4.status, 401);
    assert.equal(r4.json.error, 'invalid credentials');
    // the refresh token of r1 was not consumed by the refused call above
    const r5 = await sandboxCall(sb, 'POST', '/open/v1/refreshtoken', { body: { accessKeyID: sb.accessKeyID, dataRefreshToken: r1.json.data.refreshToken } });
    assert.equal(r5.status, 200);
  });

  test('authorizations and refreshes are counted', async () => {
    const before = (await sandboxCall(sb, 'GET', '/__sandbox/counts')).json.stats;
    const pair = await sandboxToken(sb);
    await sandboxCall(sb, 'POST', '/open/v1/refreshtoken', { body: { accessKeyID: sb.accessKeyID, dataRefreshToken: pair.refreshToken } });
    const after = (await sandboxCall(sb, 'GET', '/__sandbox/counts')).json.stats;
    assert.equal(after.authorizations, before.authorizations + 1);
    assert.equal(after.refreshes, before.refreshes + 1);
  });

  test('setFaults changes the token lifetime at run time', async () => {
    sb.setFaults({ tokenTtlSeconds: 600 });
    try {
      const { token } = await sandboxToken(sb);
      const issued = Date.now();
      // poll over > 1 s: with the old ttl (1 s) this token would have expired
      await until(async () => Date.now() - issued > 1_300, 3_000);
      assert.equal((await sandboxCall(sb, 'GET', '/open/v1/company', { token })).status, 200);
    } finally {
      sb.setFaults({ tokenTtlSeconds: 1 });
    }
    assert.throws(() => sb.setFaults({ failRate: 2 }), /failRate/);
  });
});
