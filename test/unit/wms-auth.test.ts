import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { createAuthManager, jwtExpiry, type AuthTransport } from '../../src/wms/auth.js';

/** A fake token service: counts calls, single-use refresh tokens, calls resolve when released. */
function fakeService() {
  let n = 0;
  const live = new Set<string>();
  const state = { authorizations: 0, refreshes: 0, failRefresh: false, gate: undefined as Promise<void> | undefined, extra: {} as Record<string, unknown> };
  const issue = () => {
    n++;
    const rt = `rt-${n}`;
    live.add(rt);
    return { token: `tok-${n}`, refreshToken: rt, ...state.extra };
  };
  const transport: AuthTransport = {
    async authorize() {
      state.authorizations++;
      if (state.gate) await state.gate;
      return issue();
    },
    async refresh(rt: string) {
      state.refreshes++;
      if (state.gate) await state.gate;
      if (state.failRefresh || !live.has(rt)) throw new Error('refresh refused');
      live.delete(rt); // single use
      return issue();
    },
  };
  return { transport, state };
}

describe('auth manager', () => {
  test('authorizes once for many concurrent callers', async () => {
    const { transport, state } = fakeService();
    let release!: () => void;
    state.gate = new Promise((r) => (release = r));
    const auth = createAuthManager({}, transport);
    const waits = Array.from({ length: 50 }, () => auth.getToken());
    release();
    const tokens = await Promise.all(waits);
    assert.equal(state.authorizations, 1);
    assert.ok(tokens.every((t) => t === 'tok-1'));
  });

  test('401s from many requests cause exactly one refresh', async () => {
    const { transport, state } = fakeService();
    const auth = createAuthManager({}, transport);
    const t1 = await auth.getToken();
    let release!: () => void;
    state.gate = new Promise((r) => (release = r));
    const replays = Array.from({ length: 200 }, () => auth.handleUnauthorized(t1));
    release();
    const tokens = await Promise.all(replays);
    assert.equal(state.refreshes, 1);
    assert.equal(state.authorizations, 1);
    assert.ok(tokens.every((t) => t === 'tok-2'));
    // a late 401 carrying the old token does not refresh again
    assert.equal(await auth.handleUnauthorized(t1), 'tok-2');
    assert.equal(state.refreshes, 1);
    assert.deepEqual(auth.stats(), { authorizations: 1, refreshes: 1, refreshFailures: 0 });
  });

  test('a 401 with an old token is replayed with a token before its refresh point, not one renewed long ago', async () => {
    const { transport, state } = fakeService();
    let now = 1_000_000;
    // a 1 s lifetime: refreshed from half of it (the e2e fault run's tokens)
    const auth = createAuthManager({ tokenTtlSeconds: 1, now: () => now }, transport);
    const t1 = await auth.getToken();
    now += 600;
    const t2 = await auth.getToken(); // renewed by another request
    assert.equal(t2, 'tok-2');
    // a request that carried t1 comes back 401 while t2 is still young: t2, no refresh
    now += 100;
    assert.equal(await auth.handleUnauthorized(t1), 'tok-2');
    assert.equal(state.refreshes, 1);
    // another one, after t2 passed its refresh point (renewed 700 ms ago, half a lifetime is 500): a fresh token
    now += 600;
    assert.equal(await auth.handleUnauthorized(t1), 'tok-3');
    assert.equal(state.refreshes, 2);
  });

  test('a failed refresh falls back to authorize', async () => {
    const { transport, state } = fakeService();
    const auth = createAuthManager({}, transport);
    const t1 = await auth.getToken();
    state.failRefresh = true;
    const t2 = await auth.handleUnauthorized(t1);
    assert.equal(state.refreshes, 1);
    assert.equal(state.authorizations, 2);
    assert.notEqual(t2, t1);
    assert.equal(auth.stats().refreshFailures, 1);
  });

  test('refreshes before a known expiry (tokenTtlSeconds), skew at most half the lifetime', async () => {
    const { transport, state } = fakeService();
    let now = 1_000_000;
    const auth = createAuthManager({ tokenTtlSeconds: 10, refreshSkewSeconds: 30, now: () => now }, transport);
    assert.equal(await auth.getToken(), 'tok-1');
    now += 4_000; // before half the lifetime: same token
    assert.equal(await auth.getToken(), 'tok-1');
    assert.equal(state.refreshes, 0);
    now += 1_500; // past 5 s: refresh
    const all = await Promise.all(Array.from({ length: 20 }, () => auth.getToken()));
    assert.ok(all.every((t) => t === 'tok-2'));
    assert.equal(state.refreshes, 1);
  });

  test('expiresIn in the answer is used when present', async () => {
    const { transport, state } = fakeService();
    state.extra = { expiresIn: 100 };
    let now = 0;
    const auth = createAuthManager({ refreshSkewSeconds: 10, now: () => now }, transport);
    await auth.getToken();
    now = 89_000;
    await auth.getToken();
    assert.equal(state.refreshes, 0);
    now = 91_000;
    await auth.getToken();
    assert.equal(state.refreshes, 1);
  });

  test('unknown expiry: no proactive refresh', async () => {
    const { transport, state } = fakeService();
    let now = 0;
    const auth = createAuthManager({ now: () => now }, transport);
    await auth.getToken();
    now = 10 * 24 * 3600 * 1000;
    await auth.getToken();
    assert.equal(state.refreshes, 0);
  });

  test('authorize failure reaches every waiter and the next call tries again', async () => {
    let fail = true;
    let calls = 0;
    const auth = createAuthManager(
      {},
      {
        async authorize() {
          calls++;
          if (fail) throw new Error('bad credentials');
          return { token: 'ok-token', refreshToken: 'ok-refresh' };
        },
        async refresh() {
          throw new Error('no');
        },
      },
    );
    const results = await Promise.allSettled([auth.getToken(), auth.getToken(), auth.getToken()]);
    assert.ok(results.every((r) => r.status === 'rejected'));
    assert.equal(calls, 1);
    fail = false;
    assert.equal(await auth.getToken(), 'ok-token');
  });

  test('an answer without a token is an E_WMS_RESPONSE', async () => {
    const auth = createAuthManager({}, { authorize: async () => ({ token: '' }), refresh: async () => ({}) });
    await assert.rejects(auth.getToken(), (err: { code?: string }) => err.code === 'E_WMS_RESPONSE');
  });

  test('jwtExpiry reads exp from a JWT and nothing from opaque tokens', () => {
    const payload = Buffer.from(JSON.stringify({ sub: 'x', exp: 1893456000 })).toString('base64url');
    assert.equal(jwtExpiry(`eyJhbGciOiJIUzI1NiJ9.${payload}.sig`), 1893456000);
    assert.equal(jwtExpiry('opaque-token'), undefined);
    assert.equal(jwtExpiry('a.b.c'), undefined);
  });

  test('secrets() lists what must be scrubbed', async () => {
    const { transport } = fakeService();
    const auth = createAuthManager({}, transport);
    assert.deepEqual(auth.secrets(), []);
    await auth.getToken();
    assert.deepEqual(auth.secrets(), ['tok-1', 'rt-1']);
  });
});

describe('client warm-up (a run authorizes while its files are mapped)', () => {
  const ID1 = '00000000-0000-4000-8000-000000000001';
  const ID2 = '00000000-0000-4000-8000-000000000002';
  test('the token the warm-up got serves the first requests: one authorization in all; with no WMS it fails quietly and the request meets the same outage', async () => {
    const { createWmsClient } = await import('../../src/wms/client.js');
    const { startSandbox } = await import('../helpers/sandbox.js');
    const sb = await startSandbox();
    const client = createWmsClient({ baseUrl: sb.url, accessKeyID: sb.accessKeyID, secretKey: sb.secretKey });
    try {
      const before = sb.state.stats.authorizations;
      await client.warmUp!();
      assert.equal(sb.state.stats.authorizations, before + 1);
      await Promise.all([client.getMaterialStatus(ID1), client.getMaterialStatus(ID2), client.warmUp!()]);
      assert.equal(sb.state.stats.authorizations, before + 1, 'the requests and a second warm-up used the token the warm-up got');
    } finally {
      await client.close();
      await sb.close();
    }
    // nothing listens there any more: the warm-up rejects (the caller ignores it) and the request fails as an outage
    const gone = createWmsClient({ baseUrl: sb.url, accessKeyID: sb.accessKeyID, secretKey: sb.secretKey, retry: { retries: 0 } });
    try {
      await assert.rejects(gone.warmUp!());
      await assert.rejects(gone.getMaterialStatus(ID1), (err: unknown) => {
        assert.match(String((err as Error).message), /ECONNREFUSED|unreachable|connect/i);
        return true;
      });
    } finally {
      await gone.close();
    }
  });
});
