/**
 * The webhook handler driven without a port (injectRequest): every refusal, the secret in header and
 * path (compared with crypto.timingSafeEqual), idempotent storage, body limit, kind resolution.
 */
import { test, describe, before, after, mock } from 'node:test';
import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import pino from 'pino';
import { makeTempDir } from '../helpers/tmp.js';
import { createSqliteJournal } from '../../src/journal/sqlite.js';
import { createPostgresJournal } from '../../src/journal/postgres.js';
import { assertPostgresReachable, dropSchema, freshSchemaName, PG_TEST_URL, postgresSkipReason } from '../helpers/postgres.js';
import type { Journal } from '../../src/journal/types.js';
import { silentLogger } from '../../src/shared/logger.js';
import { createWebhookHandler, type ResolvedHandlerOptions, type WebhookHooks } from '../../src/webhook/handler.js';
import { resolveKindAliases, DEFAULT_KIND_FROM, type KindSource } from '../../src/webhook/kinds.js';
import { injectRequest, type InjectRequest } from '../helpers/inject.js';

const JSON_CT = { 'content-type': 'application/json' };
const SECRET = 'correct-horse-battery-staple';

let tmp: { dir: string; cleanup: () => Promise<void> };
let journal: Journal;

before(async () => {
  tmp = await makeTempDir('wmsbridge-webhook-handler-');
  journal = await createSqliteJournal({ path: join(tmp.dir, 'journal.db') });
});
after(async () => {
  await journal.close();
  await tmp.cleanup();
});

function handler(overrides: Partial<ResolvedHandlerOptions> = {}, hooks?: WebhookHooks, j: Journal = journal) {
  const options: ResolvedHandlerOptions = {
    basePath: '/webhooks',
    secret: undefined,
    secretHeader: 'X-Webhook-Secret',
    maxBodyBytes: 1024 * 1024,
    kindFrom: DEFAULT_KIND_FROM,
    aliases: resolveKindAliases({}),
    ...overrides,
  };
  return createWebhookHandler(options, { journal: j, logger: silentLogger(), ...(hooks ? { hooks } : {}) });
}

let seq = 0;
function uniqueEvent(extra: Record<string, unknown> = {}): Record<string, unknown> {
  seq += 1;
  return { eventId: `evt-${process.pid}-${Date.now()}-${seq}`, occurredAt: '2026-11-21T10:00:00Z', data: { n: seq }, ...extra };
}

function post(url: string, body: unknown, headers: Record<string, string> = {}): InjectRequest {
  return { method: 'POST', url, headers: { ...JSON_CT, ...headers }, body: typeof body === 'string' ? body : JSON.stringify(body) };
}

async function countStored(dedupKey: string): Promise<number> {
  const all = await journal.listWebhookEvents({});
  return all.filter((e) => e.dedupKey === dedupKey).length;
}

describe('webhook handler: answers', () => {
  test('a valid event is stored and answered 200 {"received":true}', async () => {
    const ev = uniqueEvent();
    const res = await injectRequest(handler(), post('/webhooks/receipt', ev));
    assert.equal(res.status, 200);
    assert.deepEqual(res.json, { received: true });
    const stored = (await journal.listWebhookEvents({})).find((e) => e.dedupKey === ev['eventId']);
    assert.ok(stored, 'event in the journal');
    assert.equal(stored.kind, 'receipt');
    assert.deepEqual(JSON.parse(stored.body), ev);
    assert.equal(stored.deliveredAt, null);
  });

  test('healthz answers 200 {ok:true} without a secret; other methods on it are 405', async () => {
    const h = handler({ secret: SECRET });
    const ok = await injectRequest(h, { method: 'GET', url: '/webhooks/healthz' });
    assert.equal(ok.status, 200);
    assert.deepEqual(ok.json, { ok: true });
    const bad = await injectRequest(h, { method: 'DELETE', url: '/webhooks/healthz' });
    assert.equal(bad.status, 405);
  });

  for (const method of ['GET', 'PUT', 'DELETE', 'PATCH']) {
    test(`${method} is 405 with Allow: POST`, async () => {
      const res = await injectRequest(handler(), { method, url: '/webhooks/receipt', headers: JSON_CT });
      assert.equal(res.status, 405);
      assert.equal(res.headers['allow'], 'POST');
      assert.equal((res.json as { received: boolean }).received, false);
    });
  }

  test('paths outside basePath and too deep are 404', async () => {
    assert.equal((await injectRequest(handler(), post('/other/receipt', uniqueEvent()))).status, 404);
    assert.equal((await injectRequest(handler(), post('/webhooksX/receipt', uniqueEvent()))).status, 404);
    assert.equal((await injectRequest(handler(), post('/webhooks/a/b/c', uniqueEvent()))).status, 404);
  });

  for (const ct of [undefined, 'text/plain', 'application/x-www-form-urlencoded', 'application/json; charset=latin1']) {
    test(`Content-Type ${ct ?? '(none)'} is 415`, async () => {
      const headers: Record<string, string> = ct ? { 'content-type': ct } : {};
      const res = await injectRequest(handler(), { method: 'POST', url: '/webhooks/receipt', headers, body: JSON.stringify(uniqueEvent()) });
      assert.equal(res.status, 415);
      assert.match((res.json as { error: string }).error, /application\/json/);
    });
  }

  test('application/json; charset=utf-8 is accepted', async () => {
    const res = await injectRequest(handler(), post('/webhooks/stock', uniqueEvent(), { 'content-type': 'Application/JSON; charset=UTF-8' }));
    assert.equal(res.status, 200);
  });

  for (const body of ['{"eventId": "x",', '', 'not json', '{"a":1}}']) {
    test(`invalid JSON ${JSON.stringify(body)} is 400`, async () => {
      const res = await injectRequest(handler(), post('/webhooks/receipt', body));
      assert.equal(res.status, 400);
      assert.deepEqual(res.json, { received: false, error: 'invalid JSON body' });
    });
  }

  test('a JSON value that is not an object is 400', async () => {
    for (const body of ['[1,2]', '42', 'null', '"x"']) {
      const res = await injectRequest(handler(), post('/webhooks/receipt', body));
      assert.equal(res.status, 400, body);
    }
  });

  test('a body over maxBodyBytes is 413, declared or streamed, and nothing is stored', async () => {
    const before = (await journal.listWebhookEvents({})).length;
    const h = handler({ maxBodyBytes: 2048 });
    const big = JSON.stringify(uniqueEvent({ pad: 'x'.repeat(3000) }));
    const declared = await injectRequest(h, post('/webhooks/receipt', big, { 'content-length': String(Buffer.byteLength(big)) }));
    assert.equal(declared.status, 413);
    assert.match((declared.json as { error: string }).error, /2048/);
    // no Content-Length (chunked): counted while reading, in several chunks
    const chunks = [big.slice(0, 1000), big.slice(1000, 2000), big.slice(2000)];
    const streamed = await injectRequest(h, { method: 'POST', url: '/webhooks/receipt', headers: JSON_CT, body: chunks });
    assert.equal(streamed.status, 413);
    // exactly at the limit is fine
    const ev = uniqueEvent();
    const base = JSON.stringify({ ...ev, pad: '' });
    const exact = JSON.stringify({ ...ev, pad: 'y'.repeat(2048 - Buffer.byteLength(base)) });
    assert.equal(Buffer.byteLength(exact), 2048);
    assert.equal((await injectRequest(h, post('/webhooks/receipt', exact))).status, 200);
    assert.equal((await journal.listWebhookEvents({})).length, before + 1);
  });
});

describe('webhook handler: kinds', () => {
  test('unknown kind in the route is 404 naming the kinds', async () => {
    const res = await injectRequest(handler(), post('/webhooks/invoices', uniqueEvent()));
    assert.equal(res.status, 404);
    const error = (res.json as { error: string }).error;
    assert.match(error, /unknown webhook kind "invoices"/);
    for (const k of ['receipt', 'receipt-status', 'shipping', 'order-status', 'packing', 'stock']) assert.ok(error.includes(k), k);
  });

  test('no kind anywhere is 404 naming the kinds', async () => {
    const res = await injectRequest(handler(), post('/webhooks', uniqueEvent()));
    assert.equal(res.status, 404);
    assert.match((res.json as { error: string }).error, /no webhook kind given; kinds: receipt/);
  });

  test('kind from header X-Wms-Event and from the payload when the route has none', async () => {
    const a = uniqueEvent();
    assert.equal((await injectRequest(handler(), post('/webhooks', a, { 'x-wms-event': 'packing' }))).status, 200);
    const b = uniqueEvent({ kind: 'order-status' });
    assert.equal((await injectRequest(handler(), post('/webhooks/', b))).status, 200);
    const all = await journal.listWebhookEvents({});
    assert.equal(all.find((e) => e.dedupKey === a['eventId'])?.kind, 'packing');
    assert.equal(all.find((e) => e.dedupKey === b['eventId'])?.kind, 'order-status');
  });

  const aliasCases: Array<[string, string]> = [
    ['recebimento', 'receipt'],
    ['situacao-recebimento', 'receipt-status'],
    ['Situação de Recebimento', 'receipt-status'],
    ['expedicao', 'shipping'],
    ['saida', 'shipping'],
    ['situacao-pedidos', 'order-status'],
    ['embalagem', 'packing'],
    ['ESTOQUE', 'stock'],
    ['receipt_status', 'receipt-status'],
  ];
  for (const [alias, kind] of aliasCases) {
    test(`alias "${alias}" -> ${kind}`, async () => {
      const ev = uniqueEvent();
      const res = await injectRequest(handler(), post(`/webhooks/${encodeURIComponent(alias)}`, ev));
      assert.equal(res.status, 200);
      assert.equal((await journal.listWebhookEvents({})).find((e) => e.dedupKey === ev['eventId'])?.kind, kind);
    });
  }

  test('configured aliases add to the built-in ones', async () => {
    const h = handler({ aliases: resolveKindAliases({ 'nf-recebida': 'receipt' }) });
    const ev = uniqueEvent();
    assert.equal((await injectRequest(h, post('/webhooks/nf-recebida', ev))).status, 200);
    assert.equal((await journal.listWebhookEvents({})).find((e) => e.dedupKey === ev['eventId'])?.kind, 'receipt');
    assert.throws(() => resolveKindAliases({ x: 'invoices' }), /not a kind/);
  });

  test('kindFrom order decides: the first source with a value wins, an unknown value does not fall through', async () => {
    const order: KindSource[] = ['header', 'payload', 'route'];
    const h = handler({ kindFrom: order });
    const ev = uniqueEvent({ kind: 'stock' });
    assert.equal((await injectRequest(h, post('/webhooks/receipt', ev, { 'x-wms-event': 'packing' }))).status, 200);
    assert.equal((await journal.listWebhookEvents({})).find((e) => e.dedupKey === ev['eventId'])?.kind, 'packing');
    const ev2 = uniqueEvent({ kind: 'stock' });
    assert.equal((await injectRequest(h, post('/webhooks/receipt', ev2))).status, 200);
    assert.equal((await journal.listWebhookEvents({})).find((e) => e.dedupKey === ev2['eventId'])?.kind, 'stock');
    const bad = await injectRequest(h, post('/webhooks/receipt', uniqueEvent(), { 'x-wms-event': 'nonsense' }));
    assert.equal(bad.status, 404);
    assert.match((bad.json as { error: string }).error, /from header/);
    // route only: header and payload are ignored
    const routeOnly = handler({ kindFrom: ['route'] });
    assert.equal((await injectRequest(routeOnly, post('/webhooks', uniqueEvent({ kind: 'stock' }), { 'x-wms-event': 'stock' }))).status, 404);
  });
});

describe('webhook handler: secret', () => {
  test('missing or wrong secret is 401 without detail; right secret in header or path is accepted', async () => {
    const h = handler({ secret: SECRET });
    const missing = await injectRequest(h, post('/webhooks/receipt', uniqueEvent()));
    assert.equal(missing.status, 401);
    assert.deepEqual(missing.json, { received: false, error: 'unauthorized' });
    const wrongHeader = await injectRequest(h, post('/webhooks/receipt', uniqueEvent(), { 'x-webhook-secret': 'nope' }));
    assert.equal(wrongHeader.status, 401);
    assert.deepEqual(wrongHeader.json, { received: false, error: 'unauthorized' });
    const wrongPath = await injectRequest(h, post('/webhooks/nope-nope-nope/receipt', uniqueEvent()));
    assert.equal(wrongPath.status, 401);
    const wrongPathNoKind = await injectRequest(h, post('/webhooks/nope-nope-nope', uniqueEvent({ kind: 'stock' })));
    assert.equal(wrongPathNoKind.status, 401);
    assert.ok(!wrongPath.text.includes(SECRET) && !wrongHeader.text.includes('nope'));

    assert.equal((await injectRequest(h, post('/webhooks/receipt', uniqueEvent(), { 'x-webhook-secret': SECRET }))).status, 200);
    assert.equal((await injectRequest(h, post(`/webhooks/${SECRET}/receipt`, uniqueEvent()))).status, 200);
    assert.equal((await injectRequest(h, post(`/webhooks/${SECRET}`, uniqueEvent(), { 'x-wms-event': 'stock' }))).status, 200);
    // both presented: both must match
    assert.equal((await injectRequest(h, post(`/webhooks/${SECRET}/receipt`, uniqueEvent(), { 'x-webhook-secret': 'other' }))).status, 401);
  });

  test('the secret check comes before any body parsing (401, not 400/415)', async () => {
    const h = handler({ secret: SECRET });
    assert.equal((await injectRequest(h, { method: 'POST', url: '/webhooks/receipt', headers: { 'content-type': 'text/plain' }, body: 'x' })).status, 401);
    assert.equal((await injectRequest(h, post('/webhooks/receipt', '{bad'))).status, 401);
  });

  test('a configurable secret header name', async () => {
    const h = handler({ secret: SECRET, secretHeader: 'Authorization-Token' });
    assert.equal((await injectRequest(h, post('/webhooks/receipt', uniqueEvent(), { 'authorization-token': SECRET }))).status, 200);
    assert.equal((await injectRequest(h, post('/webhooks/receipt', uniqueEvent(), { 'x-webhook-secret': SECRET }))).status, 401);
  });

  test('two-segment routes without a configured secret are 404', async () => {
    assert.equal((await injectRequest(handler(), post('/webhooks/abc/receipt', uniqueEvent()))).status, 404);
  });

  test('the comparison is crypto.timingSafeEqual on equal-length digests, for right, wrong and odd-length secrets', async () => {
    const spy = mock.method(crypto, 'timingSafeEqual');
    try {
      const h = handler({ secret: SECRET });
      const attempts: Array<[string, number]> = [
        [SECRET, 200],
        ['x', 401],
        [SECRET + 'longer-than-the-secret', 401],
        [SECRET.slice(0, -1) + 'X', 401],
      ];
      for (const [given, status] of attempts) {
        const before = spy.mock.callCount();
        const res = await injectRequest(h, post('/webhooks/receipt', uniqueEvent(), { 'x-webhook-secret': given }));
        assert.equal(res.status, status, given);
        assert.equal(spy.mock.callCount(), before + 1, 'timingSafeEqual decided');
        const call = spy.mock.calls.at(-1);
        const [a, b] = call?.arguments as [Buffer, Buffer];
        assert.equal(a.length, 32);
        assert.equal(b.length, 32);
      }
    } finally {
      spy.mock.restore();
    }
  });
});

describe('webhook handler: idempotency', () => {
  test('a resend with the same event id answers 200 again and is stored once', async () => {
    const ev = uniqueEvent();
    const h = handler();
    for (let i = 0; i < 3; i++) {
      const res = await injectRequest(h, post('/webhooks/receipt', ev, { 'x-wms-event-id': String(ev['eventId']) }));
      assert.equal(res.status, 200);
      assert.deepEqual(res.json, { received: true });
    }
    assert.equal(await countStored(String(ev['eventId'])), 1);
  });

  test('the X-Wms-Event-Id header is the key even when the body differs (e.g. a re-serialised resend)', async () => {
    const h = handler();
    const id = `hdr-${Date.now()}`;
    assert.equal((await injectRequest(h, post('/webhooks/stock', { data: { a: 1 } }, { 'x-wms-event-id': id }))).status, 200);
    assert.equal((await injectRequest(h, post('/webhooks/stock', '{ "data": { "a": 1 } }', { 'x-wms-event-id': id }))).status, 200);
    assert.equal(await countStored(id), 1);
  });

  test('payload id fields: eventId, id, event_id', async () => {
    const h = handler();
    for (const field of ['eventId', 'id', 'event_id']) {
      const id = `${field}-${Date.now()}-${seq++}`;
      await injectRequest(h, post('/webhooks/stock', { [field]: id, data: {} }));
      await injectRequest(h, post('/webhooks/stock', { [field]: id, data: {}, resent: true }));
      assert.equal(await countStored(id), 1, field);
    }
  });

  test('without an event id the key is sha256(kind + body): an exact resend is stored once, another kind is not deduplicated', async () => {
    const h = handler();
    const body = JSON.stringify({ data: { productId: 'p', quantity: seq++ } });
    await injectRequest(h, post('/webhooks/stock', body));
    await injectRequest(h, post('/webhooks/stock', body));
    await injectRequest(h, post('/webhooks/receipt', body));
    const all = await journal.listWebhookEvents({});
    const matching = all.filter((e) => e.body === body);
    assert.equal(matching.length, 2);
    assert.ok(matching.every((e) => /^sha256:[0-9a-f]{64}$/.test(e.dedupKey)));
    assert.deepEqual(matching.map((e) => e.kind).sort(), ['receipt', 'stock']);
  });

  test('concurrent duplicates are stored once', async () => {
    const h = handler();
    const ev = uniqueEvent();
    const answers = await Promise.all(Array.from({ length: 20 }, () => injectRequest(h, post('/webhooks/packing', ev))));
    assert.ok(answers.every((a) => a.status === 200));
    assert.equal(await countStored(String(ev['eventId'])), 1);
  });
});

describe('webhook handler: storage failures and hooks', () => {
  test('a journal that fails to store answers 500 (the sender resends), never 200', async () => {
    const failing: Journal = {
      ...journal,
      findRecordByWmsId: () => Promise.resolve(undefined),
      addWebhookEvent: () => Promise.reject(new Error('disk I/O error')),
    };
    const res = await injectRequest(handler({}, undefined, failing), post('/webhooks/receipt', uniqueEvent()));
    assert.equal(res.status, 500);
    assert.equal((res.json as { received: boolean }).received, false);
  });

  test('beforeStore can answer a status instead of storing; afterStore runs after the commit, before the answer', async () => {
    let calls = 0;
    const order: string[] = [];
    const h = handler(
      {},
      {
        beforeStore: () => (++calls <= 2 ? 500 : undefined),
        afterStore: async (ctx) => {
          order.push(`after:${ctx.stored}`);
          assert.equal(await countStored(ctx.dedupKey), 1, 'committed before afterStore');
        },
      },
    );
    const ev = uniqueEvent();
    const statuses: number[] = [];
    for (let i = 0; i < 3; i++) statuses.push((await injectRequest(h, post('/webhooks/receipt', ev))).status);
    assert.deepEqual(statuses, [500, 500, 200]);
    assert.deepEqual(order, ['after:true']);
    assert.equal(await countStored(String(ev['eventId'])), 1);
  });

  test('an event about a document wmsbridge sent is stored with its record id', async () => {
    const file = await journal.addFile({ channel: 'pedidos', name: 'PED001.csv', path: '/x/PED001.csv', size: 1, sha256: `h-${Date.now()}`, runId: 'r1' });
    await journal.addRecords(file.id, [
      { target: 'PickingList', op: 'create', key: 'PED-1', source: { line: 7 }, mapping: 'm', payload: {}, payloadHash: 'x' },
    ]);
    const [rec] = await journal.listRecords({ fileIds: [file.id] });
    assert.ok(rec);
    await journal.settle(rec.id, { status: 'sent', outcome: 'created', wmsId: 'wms-pl-42' });
    const ev = uniqueEvent({ data: { pickingListId: 'wms-pl-42', status: '4' } });
    assert.equal((await injectRequest(handler(), post('/webhooks/order-status', ev))).status, 200);
    const stored = (await journal.listWebhookEvents({})).find((e) => e.dedupKey === ev['eventId']);
    assert.equal(stored?.recordId, rec.id);
  });
});

describe('webhook handler: logging', () => {
  function capture(level: 'info' | 'debug'): { logger: pino.Logger; text: () => string } {
    let out = '';
    const stream = new Writable({
      write(chunk: Buffer, _enc, cb) {
        out += chunk.toString();
        cb();
      },
    });
    return { logger: pino({ level }, stream), text: () => out };
  }

  test('info logs the event without its payload, URL or secret; debug adds the payload, never the secret', async () => {
    for (const level of ['info', 'debug'] as const) {
      const log = capture(level);
      const h = createWebhookHandler(
        {
          basePath: '/webhooks',
          secret: SECRET,
          secretHeader: 'X-Webhook-Secret',
          maxBodyBytes: 1 << 20,
          kindFrom: DEFAULT_KIND_FROM,
          aliases: resolveKindAliases({}),
        },
        { journal, logger: log.logger },
      );
      const ev = uniqueEvent({ data: { marker: `PAYLOAD-MARKER-${level}` } });
      assert.equal((await injectRequest(h, post(`/webhooks/${SECRET}/receipt`, ev))).status, 200);
      assert.equal((await injectRequest(h, post('/webhooks/receipt', ev, { 'x-webhook-secret': SECRET }))).status, 200);
      await new Promise((r) => setImmediate(r));
      const text = log.text();
      assert.match(text, /webhook received/, level);
      assert.match(text, /already stored/, level);
      assert.ok(!text.includes(SECRET), `${level}: no secret in the logs`);
      assert.equal(text.includes(`PAYLOAD-MARKER-${level}`), level === 'debug', `${level}: payload only at debug`);
    }
  });
});

// The same handler on a PostgreSQL journal (several instances share one): a resend, concurrent identical resends and
// the link to the record are the journal's (one INSERT ... ON CONFLICT with its sub-select), so they are checked here too.
// Fails when the server is down unless WMSBRIDGE_SKIP_POSTGRES=1 (test/helpers/postgres.ts).
describe('webhook handler on PostgreSQL', { skip: postgresSkipReason() }, () => {
  const schema = freshSchemaName('webhook_handler');
  let pgJournal: Journal | undefined;
  before(async () => {
    await assertPostgresReachable();
    pgJournal = await createPostgresJournal({ url: PG_TEST_URL, schema });
  });
  after(async () => {
    await pgJournal?.close();
    if (pgJournal) await dropSchema(schema);
  });
  const stored = async (dedupKey: string) => (await pgJournal!.listWebhookEvents({})).filter((e) => e.dedupKey === dedupKey);

  test('a resend, and 20 concurrent copies of one event, answer 200 and are stored once', async () => {
    const h = handler({}, undefined, pgJournal);
    const ev = uniqueEvent();
    for (let i = 0; i < 2; i++) assert.equal((await injectRequest(h, post('/webhooks/receipt', ev))).status, 200);
    assert.equal((await stored(String(ev['eventId']))).length, 1);
    const burst = uniqueEvent();
    const answers = await Promise.all(Array.from({ length: 20 }, () => injectRequest(h, post('/webhooks/packing', burst))));
    assert.deepEqual(
      answers.map((a) => a.status),
      Array.from({ length: 20 }, () => 200),
    );
    assert.equal((await stored(String(burst['eventId']))).length, 1);
  });

  test('an event about a document wmsbridge sent is stored with its record id; another one unlinked', async () => {
    const file = await pgJournal!.addFile({ channel: 'pedidos', name: 'PED002.csv', path: '/x/PED002.csv', size: 1, sha256: `pg-${Date.now()}`, runId: 'r1' });
    await pgJournal!.addRecords(file.id, [
      { target: 'PickingList', op: 'create', key: 'PED-2', source: { line: 3 }, mapping: 'm', payload: {}, payloadHash: 'x' },
    ]);
    const [rec] = await pgJournal!.listRecords({ fileIds: [file.id] });
    assert.ok(rec);
    await pgJournal!.markSending(rec.id);
    await pgJournal!.settle(rec.id, { status: 'sent', outcome: 'created', wmsId: 'wms-pl-pg-7' });
    const h = handler({}, undefined, pgJournal);
    const linked = uniqueEvent({ data: { pickingListId: 'wms-pl-pg-7', status: '4' } });
    const unlinked = uniqueEvent({ data: { pickingListId: 'wms-pl-nobody' } });
    assert.equal((await injectRequest(h, post('/webhooks/order-status', linked))).status, 200);
    assert.equal((await injectRequest(h, post('/webhooks/order-status', unlinked))).status, 200);
    assert.equal((await stored(String(linked['eventId'])))[0]?.recordId, rec.id);
    assert.equal((await stored(String(unlinked['eventId'])))[0]?.recordId, null);
  });
});
