/**
 * The client against a scripted HTTP server on 127.0.0.1: the answers a real WMS might give that the
 * sandbox never gives (failure inside an HTTP 200, a repeated page, a reset after the body arrived, a
 * hang, echoed secrets, records that do not fit). The sandbox suite is wms-client.test.ts.
 */
import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type IncomingMessage, type ServerResponse, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createWmsClient, type WmsClientOptions } from '../../src/wms/client.js';
import { WmsError } from '../../src/wms/errors.js';
import type { WmsClient } from '../../src/wms/client-types.js';
import { manualClock } from '../helpers/manual-clock.js';

const SECRET = 'super-secret-key-123';
const UUID = (n: number) => `00000000-0000-4000-8000-${String(n).padStart(12, '0')}`;

interface Seen {
  method: string;
  url: string;
  headers: IncomingMessage['headers'];
  body: Buffer;
}
type Route = (req: Seen, res: ServerResponse) => unknown;

let server: Server;
let baseUrl: string;
let route: Route = (_req, res) => res.end();
let seen: Seen[] = [];
let tokenN = 0;
let inFlight = 0;
let peakInFlight = 0;
const sockets = new Set<import('node:net').Socket>();

function json(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}) {
  res.writeHead(status, { 'content-type': 'application/json', ...headers });
  res.end(JSON.stringify(body));
}
const ok = (data: unknown) => ({ code: 200, message: 'The request has succeeded', data, error: '' });
const list = (data: unknown[], extra: Record<string, unknown> = {}) => ({
  code: 200,
  message: 'ok',
  count: data.length,
  totalPages: 1,
  pagingLimit: 100,
  pagingIndex: 1,
  data,
  error: '',
  ...extra,
});

/** Default handling of the auth calls: hands out numbered tokens. */
function authRoute(req: Seen, res: ServerResponse): boolean {
  if (req.url.endsWith('/open/v1/authorize') || req.url.endsWith('/open/v1/refreshtoken')) {
    tokenN++;
    json(res, 200, ok({ token: `tok-${tokenN}-abcdef`, refreshToken: `rt-${tokenN}-abcdef` }));
    return true;
  }
  return false;
}

function client(extra: Partial<WmsClientOptions> = {}): WmsClient {
  // explicit 1-based unless a test says otherwise (the 'auto' page base is tested in 'paging')
  return createWmsClient({
    baseUrl,
    accessKeyID: 'edge-key',
    secretKey: SECRET,
    retry: { retries: 3, baseDelayMs: 1, maxDelayMs: 5 },
    pagingBase: 1,
    ...extra,
  });
}
const apiCalls = () => seen.filter((s) => !s.url.startsWith('/open/v1/authorize') && !s.url.startsWith('/open/v1/refreshtoken'));

before(async () => {
  server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const s: Seen = { method: req.method ?? '', url: req.url ?? '', headers: req.headers, body: Buffer.concat(chunks) };
      seen.push(s);
      inFlight++;
      peakInFlight = Math.max(peakInFlight, inFlight);
      res.on('close', () => inFlight--);
      if (authRoute(s, res)) return;
      void route(s, res);
    });
  });
  server.on('connection', (sock) => {
    sockets.add(sock);
    sock.on('close', () => sockets.delete(sock));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
after(async () => {
  for (const s of sockets) s.destroy();
  await new Promise<void>((r) => server.close(() => r()));
});
function reset(r: Route) {
  route = r;
  seen = [];
  tokenN = 0;
  peakInFlight = 0;
}

async function rejectsWith(p: Promise<unknown>, check: (e: WmsError) => void): Promise<WmsError> {
  try {
    await p;
  } catch (err) {
    assert.ok(err instanceof WmsError, `expected a WmsError, got ${String(err)}`);
    check(err);
    return err;
  }
  assert.fail('expected a rejection');
}

const warehouse = (n: number) => ({ id: UUID(n), companyID: UUID(900), branchID: UUID(901), name: `W${n}` });

describe('options', () => {
  test('bad options are configuration errors that hold no secret', () => {
    assert.throws(() => createWmsClient({ baseUrl: '', accessKeyID: 'k', secretKey: SECRET }), { code: 'E_CONFIG' });
    assert.throws(
      () => createWmsClient({ baseUrl: 'not a url', accessKeyID: 'k', secretKey: SECRET }),
      (e: Error) => (e as { code?: string }).code === 'E_CONFIG' && !e.message.includes(SECRET),
    );
    assert.throws(() => createWmsClient({ baseUrl: 'ftp://x', accessKeyID: 'k', secretKey: SECRET }), { code: 'E_CONFIG' });
    assert.throws(() => createWmsClient({ baseUrl, accessKeyID: 'k', secretKey: '' }), { code: 'E_CONFIG' });
    assert.throws(() => createWmsClient({ baseUrl, accessKeyID: 'k', secretKey: SECRET, pageSize: 0 }), { code: 'E_CONFIG' });
  });

  test('a closed client refuses calls', async () => {
    const c = client();
    await c.close();
    await rejectsWith(c.getMaterialStatus(UUID(1)), (e) => assert.equal(e.networkCode, 'CLOSED'));
  });
});

describe('wire details', () => {
  test('headers on every call; User-Agent and Accept on auth calls, Bearer only on the others', async () => {
    reset((_req, res) => json(res, 200, list([warehouse(1)])));
    const c = client({ userAgent: 'edge-test/1.0' });
    try {
      const rows = [];
      for await (const w of c.listWarehouses()) rows.push(w);
      assert.equal(rows.length, 1);
    } finally {
      await c.close();
    }
    const [authCall, apiCall] = seen;
    assert.equal(authCall!.url, '/open/v1/authorize');
    assert.equal(authCall!.headers['user-agent'], 'edge-test/1.0');
    assert.equal(authCall!.headers['accept'], 'application/json');
    assert.equal(authCall!.headers['authorization'], undefined);
    assert.deepEqual(JSON.parse(authCall!.body.toString()), { accessKeyID: 'edge-key', secretKey: SECRET });
    assert.equal(apiCall!.url, '/open/v1/warehouse?PagingIndex=1&PagingLimit=100');
    assert.equal(apiCall!.headers['user-agent'], 'edge-test/1.0');
    assert.equal(apiCall!.headers['authorization'], 'Bearer tok-1-abcdef');
  });

  test('a base URL path prefix is kept', async () => {
    reset((_req, res) => json(res, 200, list([])));
    const c = createWmsClient({ baseUrl: `${baseUrl}/api/`, accessKeyID: 'k', secretKey: SECRET });
    try {
      for await (const _ of c.listCompanies()) assert.fail('no rows expected');
    } finally {
      await c.close();
    }
    assert.ok(
      seen.some((s) => s.url.startsWith('/api/open/v1/company?')),
      JSON.stringify(seen.map((s) => s.url)),
    );
  });

  test('GET Stock/search sends its JSON body', async () => {
    reset((_req, res) => json(res, 200, list([])));
    const c = client();
    try {
      for await (const _ of c.searchStock({ warehouseId: UUID(1), lotNumber: 'L1' })) assert.fail('no rows');
    } finally {
      await c.close();
    }
    const s = apiCalls()[0]!;
    assert.equal(s.method, 'GET');
    assert.match(s.url, /^\/open\/v1\/Stock\/search\?PagingIndex=1&PagingLimit=100$/);
    assert.equal(s.headers['content-type'], 'application/json');
    assert.deepEqual(JSON.parse(s.body.toString()), { warehouseId: UUID(1), lotNumber: 'L1' });
  });

  test('concurrency cap holds', async () => {
    reset((_req, res) => setTimeout(() => json(res, 200, ok(warehouse(1))), 20));
    const c = client({ concurrency: 3 });
    try {
      await c.authorize();
      await Promise.all(Array.from({ length: 15 }, () => c.getMaterialStatus(UUID(1)).catch(() => null)));
    } finally {
      await c.close();
    }
    assert.ok(peakInFlight <= 3, `peak ${peakInFlight}`);
    assert.ok(peakInFlight >= 2, `peak ${peakInFlight}: the cap was not exercised`);
  });
});

describe('envelopes', () => {
  test('a failure inside HTTP 200 is E_WMS_ENVELOPE and keeps the envelope fields', async () => {
    reset((_req, res) => json(res, 200, { code: 409, message: 'Conflict', data: null, error: 'order already exists' }));
    const c = client();
    try {
      await rejectsWith(c.createCategory({ name: 'X', status: 1 }), (e) => {
        assert.equal(e.code, 'E_WMS_ENVELOPE');
        assert.equal(e.httpStatus, 200);
        assert.equal(e.envelopeCode, 409);
        assert.equal(e.envelopeError, 'order already exists');
        assert.equal(e.message, '[POST] /open/v1/category: 409 (HTTP 200) - order already exists');
        assert.equal(e.attempts, 1);
      });
    } finally {
      await c.close();
    }
    assert.equal(apiCalls().length, 1, 'not retried');
  });

  test('code 200 with a non-empty error is a failure', async () => {
    reset((_req, res) => json(res, 200, { code: 200, message: 'ok', data: { id: UUID(1), name: 'x', status: 1 }, error: 'partially saved' }));
    const c = client();
    try {
      await rejectsWith(c.createCategory({ name: 'X', status: 1 }), (e) => assert.equal(e.code, 'E_WMS_ENVELOPE'));
    } finally {
      await c.close();
    }
  });

  test('envelope 400 under HTTP 200 is E_WMS_VALIDATION', async () => {
    reset((_req, res) => json(res, 200, { code: 400, message: 'Validation failed', data: null, error: 'name: required' }));
    const c = client();
    try {
      await rejectsWith(c.createCategory({ name: 'X', status: 1 }), (e) => assert.equal(e.code, 'E_WMS_VALIDATION'));
    } finally {
      await c.close();
    }
  });

  test('envelope 500 under HTTP 200 is retried for a GET', async () => {
    let n = 0;
    reset((_req, res) => (++n < 3 ? json(res, 200, { code: 500, message: 'err', data: null, error: 'db down' }) : json(res, 200, list([warehouse(1)]))));
    const c = client();
    try {
      const rows = [];
      for await (const w of c.listWarehouses()) rows.push(w);
      assert.equal(rows.length, 1);
      assert.equal(c.stats().retries, 2);
    } finally {
      await c.close();
    }
  });

  test('a non-JSON 200 is E_WMS_RESPONSE; a non-JSON 502 is E_WMS_HTTP with a snippet', async () => {
    reset((req, res) => {
      if (req.url.startsWith('/open/v1/company')) {
        res.writeHead(200, { 'content-type': 'text/html' });
        res.end('<html>login</html>');
      } else {
        res.writeHead(502, { 'content-type': 'text/html' });
        res.end('<html>Bad Gateway</html>');
      }
    });
    const c = client();
    try {
      await rejectsWith(c.listCompanies()[Symbol.asyncIterator]().next(), (e) => {
        assert.equal(e.code, 'E_WMS_RESPONSE');
        assert.match(e.message, /non-JSON answer: <html>login/);
      });
      await rejectsWith(c.createCategory({ name: 'X', status: 1 }), (e) => {
        assert.equal(e.code, 'E_WMS_HTTP');
        assert.equal(e.httpStatus, 502);
        assert.equal(e.mayHaveReachedServer, true, 'a bad gateway to a POST is in doubt');
        assert.equal(e.attempts, 1);
      });
    } finally {
      await c.close();
    }
  });

  test('an answer above maxResponseBytes is cut off: E_WMS_RESPONSE, not retried', async () => {
    reset((_req, res) => json(res, 200, list(Array.from({ length: 2000 }, (_, i) => warehouse(i)))));
    const c = client({ maxResponseBytes: 10_000 });
    try {
      await rejectsWith(c.listWarehouses()[Symbol.asyncIterator]().next(), (e) => {
        assert.equal(e.code, 'E_WMS_RESPONSE');
        assert.match(e.message, /answer larger than 10000 bytes/);
      });
    } finally {
      await c.close();
    }
    assert.equal(apiCalls().length, 1);
  });

  test('a record that does not fit is E_WMS_RESPONSE naming the path and the issue', async () => {
    reset((_req, res) => json(res, 200, list([warehouse(1), { id: 'not-a-uuid', name: 'W' }])));
    const c = client();
    try {
      await rejectsWith(
        (async () => {
          for await (const _ of c.listWarehouses());
        })(),
        (e) => {
          assert.equal(e.code, 'E_WMS_RESPONSE');
          assert.match(e.message, /^\[GET\] \/open\/v1\/warehouse: answer does not fit Warehouse - page 1, data\[1\]: id: must be a UUID/);
        },
      );
    } finally {
      await c.close();
    }
  });

  test('alias spellings are accepted when reading', async () => {
    reset((_req, res) => json(res, 200, ok({ id: UUID(5), companyId: UUID(1), name: 'Owner', code: '001' })));
    const c = client();
    try {
      const o = await c.getOwner(UUID(5));
      assert.equal(o?.companyID, UUID(1));
    } finally {
      await c.close();
    }
  });

  test('stock lock: stocksLocked 0 with data.error is an answer (no change, with the reason); data.error with changes is a failure', async () => {
    reset((_req, res) => json(res, 200, ok({ materialStatusId: UUID(2), stocksLocked: 0, error: 'no stock matches' })));
    const c = client();
    try {
      const r = await c.lockStock({ warehouseId: UUID(1), materialStatusId: UUID(2), productId: UUID(3) });
      assert.equal(r.stocksLocked, 0);
      assert.equal(r.error, 'no stock matches');
      reset((_req, res) => json(res, 200, ok({ materialStatusId: UUID(2), stocksLocked: 2, error: 'partly applied' })));
      await rejectsWith(c.lockStock({ warehouseId: UUID(1), materialStatusId: UUID(2), productId: UUID(3) }), (e) => {
        assert.equal(e.code, 'E_WMS_ENVELOPE');
        assert.match(e.message, /partly applied/);
      });
    } finally {
      await c.close();
    }
  });

  test('stock sync: success false is a failure', async () => {
    reset((_req, res) => json(res, 200, ok({ success: false })));
    const c = client();
    try {
      await rejectsWith(c.syncStock({ sessionId: UUID(1), ownerId: UUID(2), products: [] }), (e) => assert.equal(e.code, 'E_WMS_ENVELOPE'));
    } finally {
      await c.close();
    }
  });

  test('a send the client refuses locally is E_WMS_VALIDATION with attempts 0 and nothing sent', async () => {
    reset((_req, res) => json(res, 200, ok(null)));
    const c = client();
    try {
      await rejectsWith(c.createFamily({ name: '', status: 1, categoryID: 'nope' }), (e) => {
        assert.equal(e.code, 'E_WMS_VALIDATION');
        assert.equal(e.attempts, 0);
        assert.match(e.message, /^\[POST\] \/open\/v1\/family: invalid Family, not sent - /);
      });
    } finally {
      await c.close();
    }
    assert.equal(seen.length, 0);
  });

  test('not-shown answers: record when data fits, null otherwise', async () => {
    let n = 0;
    reset((_req, res) => json(res, 200, ok(++n === 1 ? { id: UUID(7), companyID: UUID(1), name: 'O', code: '9' } : true)));
    const c = client();
    try {
      const body = { companyID: UUID(1), name: 'O', code: '9' };
      assert.equal((await c.createOwner(body))?.id, UUID(7));
      assert.equal(await c.createOwner(body), null);
    } finally {
      await c.close();
    }
  });
});

describe('paging', () => {
  test('stops on totalPages, on an empty page, and refuses a repeated page', async () => {
    const pages = (idx: number) => [warehouse(idx * 10 + 1), warehouse(idx * 10 + 2)];
    reset((req, res) => {
      const u = new URL(req.url, 'http://x');
      const idx = Number(u.searchParams.get('PagingIndex'));
      if (u.pathname === '/open/v1/warehouse') json(res, 200, list(pages(idx), { totalPages: 3, pagingIndex: idx, count: 6, pagingLimit: 2 }));
      else if (u.pathname === '/open/v1/branch') {
        // no totalPages: the client stops on the first empty page
        const { totalPages: _t, ...rest } = list(idx <= 2 ? pages(idx).map((w) => ({ ...w, companyID: UUID(1) })) : []);
        json(res, 200, rest);
      } else
        json(
          res,
          200,
          list(
            pages(1).map((w) => ({ ...w, warehouseID: UUID(1) })),
            { totalPages: 5 },
          ),
        ); // ignores PagingIndex
    });
    const c = client({ pageSize: 2 });
    try {
      const ws = [];
      for await (const w of c.listWarehouses()) ws.push(w.name);
      assert.deepEqual(ws, ['W11', 'W12', 'W21', 'W22', 'W31', 'W32']);
      const bs = [];
      for await (const b of c.listBranches()) bs.push(b.name);
      assert.equal(bs.length, 4);
      const got: string[] = [];
      await rejectsWith(
        (async () => {
          for await (const d of c.listDocks()) got.push(d.name);
        })(),
        (e) => {
          assert.equal(e.code, 'E_WMS_RESPONSE');
          assert.match(e.message, /page 2 repeats the previous page/);
        },
      );
      assert.equal(got.length, 2, 'the first page is yielded, the repeat is refused');
    } finally {
      await c.close();
    }
    const wsCalls = apiCalls().filter((s) => s.url.startsWith('/open/v1/warehouse'));
    assert.deepEqual(
      wsCalls.map((s) => new URL(s.url, 'http://x').searchParams.get('PagingIndex')),
      ['1', '2', '3'],
    );
  });

  /** A fake list of `n` warehouses paged from `base`; `zero`: what a 1-based server does with PagingIndex 0. */
  function pagedServer(n: number, base: 0 | 1, zero: 'refuse' | 'as-first' | 'normal' = 'normal'): Route {
    const all = Array.from({ length: n }, (_, i) => warehouse(i + 1));
    return (req, res) => {
      const u = new URL(req.url, 'http://x');
      let idx = Number(u.searchParams.get('PagingIndex'));
      const limit = Number(u.searchParams.get('PagingLimit'));
      if (base === 1 && idx === 0) {
        if (zero === 'refuse') return json(res, 400, { code: 400, message: 'Validation failed', data: null, error: 'PagingIndex: must be >= 1' });
        if (zero === 'as-first') idx = 1; // a lenient server: 0 read as the first page, echoing 0
      }
      const start = (idx - base) * limit;
      const echo = Number(u.searchParams.get('PagingIndex'));
      json(
        res,
        200,
        list(start < 0 ? [] : all.slice(start, start + limit), { count: n, totalPages: Math.ceil(n / limit), pagingLimit: limit, pagingIndex: echo }),
      );
    };
  }
  const indexes = () => apiCalls().map((s) => new URL(s.url, 'http://x').searchParams.get('PagingIndex'));

  test("pagingBase 'auto' (the default) finds a 0-based WMS from its answer to PagingIndex 0, once", async () => {
    reset(pagedServer(5, 0));
    const c = client({ pagingBase: undefined, pageSize: 2 });
    try {
      const names: string[] = [];
      for await (const w of c.listWarehouses()) names.push(w.name);
      assert.deepEqual(names, ['W1', 'W2', 'W3', 'W4', 'W5']);
      for await (const _ of c.listWarehouses());
      assert.equal(c.stats().pagingBase, 0);
    } finally {
      await c.close();
    }
    assert.deepEqual(indexes(), ['0', '1', '2', '0', '1', '2']);
  });

  test("pagingBase 'auto' finds a 1-based WMS that refuses PagingIndex 0, or reads it as page 1", async () => {
    for (const zero of ['refuse', 'as-first'] as const) {
      reset(pagedServer(5, 1, zero));
      const c = client({ pagingBase: undefined, pageSize: 2 });
      try {
        const names: string[] = [];
        for await (const w of c.listWarehouses()) names.push(w.name);
        assert.deepEqual(names, ['W1', 'W2', 'W3', 'W4', 'W5'], zero);
        assert.equal(c.stats().pagingBase, 1);
        assert.equal(c.stats().failures, 0, 'the refused probe is an answer, not a failure');
        for await (const _ of c.listWarehouses());
      } finally {
        await c.close();
      }
      assert.deepEqual(indexes(), zero === 'refuse' ? ['0', '1', '2', '3', '1', '2', '3'] : ['0', '1', '2', '3', '1', '2', '3'], zero);
    }
  });

  test("'auto' on a lenient 1-based WMS whose first list fits one page: the next multi-page read still reads every record once", async () => {
    reset(pagedServer(5, 1, 'as-first'));
    const c = client({ pagingBase: undefined });
    try {
      const one: string[] = [];
      for await (const w of c.listWarehouses({ pageSize: 10 })) one.push(w.name);
      assert.equal(one.length, 5);
      const names: string[] = [];
      for await (const w of c.listWarehouses({ pageSize: 2 })) names.push(w.name);
      assert.deepEqual(names, ['W1', 'W2', 'W3', 'W4', 'W5']);
      assert.equal(c.stats().pagingBase, 1);
    } finally {
      await c.close();
    }
  });

  test('a read short of the WMS count is E_WMS_PAGING naming wms.pagingBase, never an empty result', async () => {
    reset(pagedServer(3, 0));
    const c = client({ pagingBase: 1 });
    try {
      const got: string[] = [];
      await rejectsWith(
        (async () => {
          for await (const w of c.listWarehouses()) got.push(w.name);
        })(),
        (e) => {
          assert.equal(e.code, 'E_WMS_PAGING');
          assert.match(e.message, /read 0 of the 3 Warehouse records the WMS counts .*wms\.pagingBase 1.*check wms\.pagingBase/);
        },
      );
      assert.deepEqual(got, []);
    } finally {
      await c.close();
    }
  });

  test('pagingBase 0 against a WMS that refuses PagingIndex 0: E_WMS_PAGING saying pages are 1-based', async () => {
    reset(pagedServer(3, 1, 'refuse'));
    const c = client({ pagingBase: 0 });
    try {
      await rejectsWith(
        (async () => {
          for await (const _ of c.listWarehouses());
        })(),
        (e) => {
          assert.equal(e.code, 'E_WMS_PAGING');
          assert.match(e.message, /refuses PagingIndex 0.*set wms\.pagingBase to auto or 1/);
        },
      );
    } finally {
      await c.close();
    }
  });

  test('pagingBase 0', async () => {
    reset((_req, res) => json(res, 200, list([warehouse(1)])));
    const c = client({ pagingBase: 0 });
    try {
      for await (const _ of c.listWarehouses());
    } finally {
      await c.close();
    }
    assert.match(apiCalls()[0]!.url, /PagingIndex=0/);
  });
});

describe('auth', () => {
  test('one 401: refresh and one replay, not counted as a retry', async () => {
    let n = 0;
    reset((_req, res) =>
      ++n === 1 ? json(res, 401, { code: 401, message: 'Unauthorized', data: null, error: 'token expired' }) : json(res, 200, ok({ id: UUID(1), name: 'ms' })),
    );
    const c = client();
    try {
      const r = await c.getMaterialStatus(UUID(1));
      assert.equal(r?.name, 'ms');
      const st = c.stats();
      assert.equal(st.retries, 0);
      assert.equal(st.refreshes, 1);
      assert.equal(st.authorizations, 1);
    } finally {
      await c.close();
    }
    const refresh = seen.find((s) => s.url === '/open/v1/refreshtoken')!;
    assert.deepEqual(JSON.parse(refresh.body.toString()), { accessKeyID: 'edge-key', dataRefreshToken: 'rt-1-abcdef' });
    assert.equal(refresh.headers['authorization'], undefined);
    assert.equal(apiCalls().at(-1)!.headers['authorization'], 'Bearer tok-2-abcdef');
  });

  test('a 401 after a retry in between is a new expiry: refreshed and replayed again', async () => {
    const script = [401, 500, 401, 200];
    let n = 0;
    reset((_req, res) => {
      const status = script[n++] ?? 200;
      if (status === 200) json(res, 200, ok({ id: UUID(1), name: 'ms' }));
      else json(res, status, { code: status, message: 'x', data: null, error: status === 401 ? 'token expired' : 'boom' });
    });
    const c = client();
    try {
      assert.equal((await c.getMaterialStatus(UUID(1)))?.name, 'ms');
      assert.equal(c.stats().refreshes, 2);
      assert.equal(c.stats().retries, 1, 'only the 500 is a retry');
    } finally {
      await c.close();
    }
  });

  test('a 401 replayed with a token another request renewed a while ago, refused too: refreshed again, not E_WMS_AUTH', async () => {
    // tokens live 300 ms from their first use, on a clock the test advances (client and server read it); the
    // expiry is not announced (no proactive refresh)
    const clock = manualClock();
    const firstUse = new Map<string, number>();
    let lateArrived!: () => void;
    const arrived = new Promise<void>((r) => (lateArrived = r));
    let answerLate!: () => void;
    const late = new Promise<void>((r) => (answerLate = r));
    reset(async (req, res) => {
      const token = String(req.headers['authorization'] ?? '').slice(7);
      if (!firstUse.has(token)) firstUse.set(token, clock.monotonic());
      // the first request of UUID(1) is answered late, after another request renewed the token
      if (req.url.endsWith(UUID(1)) && token.startsWith('tok-1-')) {
        lateArrived();
        await late;
      }
      if (clock.monotonic() - firstUse.get(token)! > 300) json(res, 401, { code: 401, message: 'Unauthorized', data: null, error: 'token expired' });
      else json(res, 200, ok({ id: UUID(1), name: 'ms' }));
    });
    const c = client({ clock });
    try {
      const a = c.getMaterialStatus(UUID(1));
      await arrived;
      await clock.advance(320);
      // tok-1 has expired: this one refreshes it (tok-2) and goes through
      assert.equal((await c.getMaterialStatus(UUID(2)))?.name, 'ms');
      await clock.advance(380);
      answerLate();
      // the late 401 of tok-1 is replayed with tok-2, by then 380 ms old and expired as well: a second refresh (tok-3)
      assert.equal((await a)?.name, 'ms');
      assert.equal(c.stats().refreshes, 2);
    } finally {
      answerLate();
      await c.close();
    }
  });

  test('a token renewed while a write was being marked: the write goes out with the renewed token, not the one it took', async () => {
    // tok-1 is refused from the moment the test says so (an expiry the client was not told of)
    let tok1Expired = false;
    reset((req, res) => {
      const token = String(req.headers['authorization'] ?? '').slice(7);
      if (token.startsWith('tok-1-') && tok1Expired) json(res, 401, { code: 401, message: 'Unauthorized', data: null, error: 'token expired' });
      else if (req.method === 'POST') json(res, 200, ok({ id: UUID(3), name: 'X', status: 1 }));
      else json(res, 200, ok({ id: UUID(9), name: 'ms' }));
    });
    const c = client({ concurrency: 2 });
    try {
      await c.authorize();
      let markStarted!: () => void;
      const marking = new Promise<void>((r) => (markStarted = r));
      let finishMark!: () => void;
      const markDone = new Promise<void>((r) => (finishMark = r));
      const events: string[] = [];
      // the write takes tok-1, gets its slot, and is marked (a journal write) while the token is renewed elsewhere
      const created = c.createCategory(
        { name: 'X', status: 1 },
        {
          write: {
            beforeWrite: async () => {
              markStarted();
              await markDone;
            },
            notApplied: async (why) => void events.push(why),
          },
        },
      );
      await marking;
      tok1Expired = true;
      // another call, in the other slot, is refused tok-1: it renews the token (tok-2) and goes through
      const other = c.getMaterialStatus(UUID(9));
      assert.equal((await other)?.name, 'ms');
      assert.equal(c.stats().refreshes, 1);
      finishMark();
      assert.equal((await created).id, UUID(3));
      const posts = apiCalls().filter((s) => s.method === 'POST');
      assert.deepEqual(
        posts.map((s) => s.headers['authorization']),
        ['Bearer tok-2-abcdef'],
        'one write, with the renewed token: no 401, no second refresh',
      );
      assert.equal(c.stats().refreshes, 1);
      assert.deepEqual(events, []);
    } finally {
      await c.close();
    }
  });

  test(
    'a replay held back by a Retry-After takes the token held, renewed long before: its 401 is an expiry, not refused credentials',
    { timeout: 10_000 },
    async () => {
      // tokens are refused from the moment the test says so (an expiry the client was not told of)
      const clock = manualClock();
      const expired = new Set<string>();
      let throttled = 0;
      reset((req, res) => {
        const token = String(req.headers['authorization'] ?? '').slice(7);
        if (expired.has(token)) json(res, 401, { code: 401, message: 'Unauthorized', data: null, error: 'token expired' });
        else if (req.url.endsWith(UUID(9)) && throttled++ === 0)
          json(res, 429, { code: 429, message: 'Too Many Requests', data: null, error: 'slow down' }, { 'retry-after': '1' });
        else if (req.method === 'POST') json(res, 200, ok({ id: UUID(3), name: 'X', status: 1 }));
        else json(res, 200, ok({ id: UUID(9), name: 'ms' }));
      });
      const c = client({ clock, concurrency: 2 });
      let inSecondMark!: () => void;
      const secondMark = new Promise<void>((r) => (inSecondMark = r));
      let endSecondMark!: () => void;
      const secondMarkEnds = new Promise<void>((r) => (endSecondMark = r));
      try {
        await c.authorize();
        expired.add('tok-1-abcdef');
        let marks = 0;
        const notApplied: string[] = [];
        // the write: refused tok-1 (one refresh: tok-2), then its replay is marked...
        const created = c.createCategory(
          { name: 'X', status: 1 },
          {
            write: {
              beforeWrite: async () => {
                if (++marks !== 2) return;
                inSecondMark();
                await secondMarkEnds;
              },
              notApplied: async (why) => void notApplied.push(why),
            },
          },
        );
        await secondMark;
        // ...while another call is answered 429: the replay is held back unwritten, and waits out the window
        const other = c.getMaterialStatus(UUID(9));
        await clock.nextSleep();
        endSecondMark();
        while (!notApplied.some((w) => /held back/.test(w))) await new Promise((r) => setImmediate(r));
        // tok-2 expires while the window lasts: after it, the write takes tok-2, obtained a second before
        expired.add('tok-2-abcdef');
        await clock.advance(1_000);
        // the other call's retry waits the window plus a random jitter: the clock moves on until both calls are done
        let done = false;
        void Promise.allSettled([created, other]).then(() => (done = true));
        for (let i = 0; !done && i < 400; i++) {
          if (clock.sleeping() > 0) await clock.advance(100);
          else await new Promise((r) => setTimeout(r, 5)); // the requests are on the (real) loopback meanwhile
        }
        assert.equal((await created).id, UUID(3), 'a 401 on a token obtained 1 s before is an expiry: refreshed and replayed');
        assert.equal((await other)?.name, 'ms');
        const posts = apiCalls().filter((s) => s.method === 'POST');
        assert.deepEqual(
          posts.map((s) => s.headers['authorization']),
          ['Bearer tok-1-abcdef', 'Bearer tok-2-abcdef', 'Bearer tok-3-abcdef'],
        );
      } finally {
        endSecondMark();
        await c.close();
      }
    },
  );

  test('a second 401 is E_WMS_AUTH', async () => {
    reset((_req, res) => json(res, 401, { code: 401, message: 'Unauthorized', data: null, error: 'invalid token' }));
    const c = client();
    try {
      await rejectsWith(c.getMaterialStatus(UUID(1)), (e) => {
        assert.equal(e.code, 'E_WMS_AUTH');
        assert.equal(e.httpStatus, 401);
      });
    } finally {
      await c.close();
    }
    assert.equal(apiCalls().length, 2, 'the call and its one replay');
  });

  test('secrets echoed by a server never reach message, details or cause', async () => {
    reset((req, res) => {
      const auth = String(req.headers['authorization'] ?? '');
      json(res, 400, { code: 400, message: `bad ${auth}`, data: null, error: `secretKey ${SECRET} and ${auth.slice(7)} rejected` });
    });
    const c = client();
    try {
      const e = await rejectsWith(c.createCategory({ name: 'X', status: 1 }), (err) => assert.equal(err.code, 'E_WMS_VALIDATION'));
      const text = JSON.stringify({
        e,
        message: e.message,
        details: e.details,
        cause: String(e.cause),
        stack: e.stack,
        msg: e.envelopeMessage,
        err: e.envelopeError,
      });
      assert.ok(!text.includes(SECRET), 'secret leaked');
      assert.ok(!text.includes('tok-'), 'token leaked');
      assert.ok(text.includes('[redacted]'));
    } finally {
      await c.close();
    }
  });
});

describe('in doubt and retries', () => {
  test('a POST whose connection is reset after the body arrived: E_WMS_NETWORK, in doubt, sent once', async () => {
    reset((_req, res) => res.socket?.destroy());
    const c = client();
    try {
      await rejectsWith(c.createCategory({ name: 'X', status: 1 }), (e) => {
        assert.equal(e.code, 'E_WMS_NETWORK');
        assert.equal(e.mayHaveReachedServer, true);
        assert.equal(e.attempts, 1);
        assert.match(e.message, /in doubt/);
      });
    } finally {
      await c.close();
    }
    assert.equal(apiCalls().length, 1);
  });

  test('the same reset on a GET is retried until it succeeds', async () => {
    let n = 0;
    reset((_req, res) => (++n <= 2 ? res.socket?.destroy() : json(res, 200, ok({ id: UUID(1), name: 'ms' }))));
    const c = client();
    try {
      assert.equal((await c.getMaterialStatus(UUID(1)))?.name, 'ms');
      assert.equal(c.stats().retries, 2);
    } finally {
      await c.close();
    }
  });

  test('a POST marked idempotent is retried after a reset', async () => {
    let n = 0;
    reset((_req, res) => (++n === 1 ? res.socket?.destroy() : json(res, 200, ok({ success: true }))));
    const c = client();
    try {
      const r = await c.syncStock({ sessionId: UUID(1), ownerId: UUID(2), products: [] }, { idempotent: true });
      assert.equal(r.success, true);
    } finally {
      await c.close();
    }
    assert.equal(apiCalls().length, 2);
  });

  test('a POST that never gets an answer: E_WMS_TIMEOUT, in doubt, sent once', async () => {
    reset(() => undefined); // hang
    const c = client({ timeoutMs: 300 });
    try {
      await rejectsWith(c.createCategory({ name: 'X', status: 1 }), (e) => {
        assert.equal(e.code, 'E_WMS_TIMEOUT');
        assert.equal(e.mayHaveReachedServer, true);
      });
    } finally {
      await c.close().catch(() => undefined);
    }
    assert.equal(apiCalls().length, 1);
  });

  test('429 with Retry-After is honoured and then succeeds, for a POST too', async () => {
    let n = 0;
    reset((_req, res) =>
      ++n === 1
        ? json(res, 429, { code: 429, message: 'Too Many Requests', data: null, error: 'slow down' }, { 'retry-after': '0' })
        : json(res, 200, ok({ id: UUID(3), name: 'X', status: 1 })),
    );
    const c = client();
    try {
      const cat = await c.createCategory({ name: 'X', status: 1 });
      assert.equal(cat.id, UUID(3));
      assert.equal(c.stats().retries, 1);
    } finally {
      await c.close();
    }
  });

  test('Retry-After on the clock: nothing is written until the window has passed, then the call succeeds', async () => {
    const clock = manualClock();
    let n = 0;
    reset((_req, res) =>
      ++n === 1
        ? json(res, 429, { code: 429, message: 'Too Many Requests', data: null, error: 'slow down' }, { 'retry-after': '30' })
        : json(res, 200, ok({ id: UUID(3), name: 'X', status: 1 })),
    );
    const c = client({ clock });
    try {
      const created = c.createCategory({ name: 'X', status: 1 });
      await clock.nextSleep(); // the 429 is in: the call waits out the window on the clock
      assert.equal(apiCalls().length, 1);
      await clock.advance(29_999);
      assert.equal(clock.sleeping(), 1, 'still inside the window: the call still waits on the clock');
      assert.equal(apiCalls().length, 1, 'nothing written inside the Retry-After window');
      await clock.advance(1);
      assert.equal((await created).id, UUID(3));
      assert.equal(apiCalls().length, 2);
      assert.equal(c.stats().retries, 1);
    } finally {
      await c.close();
    }
  });

  test('retryPostOn5xx false: a 500 to a POST is not retried', async () => {
    reset((_req, res) => json(res, 500, { code: 500, message: 'err', data: null, error: 'boom' }));
    const c = client({ retryPostOn5xx: false });
    try {
      await rejectsWith(c.createCategory({ name: 'X', status: 1 }), (e) => {
        assert.equal(e.code, 'E_WMS_HTTP');
        assert.equal(e.attempts, 1);
      });
    } finally {
      await c.close();
    }
    assert.equal(apiCalls().length, 1);
  });

  test('an abort signal stops the call without retrying', async () => {
    reset(() => undefined);
    const c = client({ timeoutMs: 10_000 });
    try {
      await c.authorize();
      const ac = new AbortController();
      const p = c.getMaterialStatus(UUID(1), { signal: ac.signal });
      setImmediate(() => ac.abort());
      await rejectsWith(p, (e) => {
        assert.equal(e.code, 'E_WMS_NETWORK');
        assert.equal(e.networkCode, 'ABORTED');
      });
      assert.equal(c.stats().retries, 0);
    } finally {
      await c.close().catch(() => undefined);
    }
  });

  test('requestsPerSecond paces the calls', async () => {
    reset((_req, res) => json(res, 200, ok({ id: UUID(1), name: 'ms' })));
    const c = client({ requestsPerSecond: 50 });
    try {
      const started = performance.now();
      // 1 authorize + 75 reads = 76 tokens: 50 from the full bucket, 26 more at 50/s take >= 0.5 s
      await Promise.all(Array.from({ length: 75 }, () => c.getMaterialStatus(UUID(1))));
      const elapsed = performance.now() - started;
      assert.ok(elapsed >= 450, `76 requests at 50/s with a burst of 50 took only ${Math.round(elapsed)} ms`);
      assert.equal(c.stats().requests, 76);
    } finally {
      await c.close();
    }
  });
});
