import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { startSandbox, sandboxCall, sandboxToken, type Sandbox } from '../helpers/sandbox.js';

interface Received {
  path: string;
  headers: Record<string, string | string[] | undefined>;
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- any webhook payload, asserted field by field
  body: any;
}

let receiver: Server;
let received: Received[] = [];
/** per-path answers: how many times to answer 500 before answering 200 */
let failFirst = new Map<string, number>();
let waiters: Array<() => void> = [];
let sb: Sandbox;
let token: string;

function waitFor(cond: () => boolean, ms = 10_000): Promise<void> {
  return new Promise((resolve, reject) => {
    if (cond()) return resolve();
    const timer = setTimeout(() => reject(new Error('timed out waiting for webhooks')), ms);
    const check = () => {
      if (cond()) {
        clearTimeout(timer);
        waiters = waiters.filter((w) => w !== check);
        resolve();
      }
    };
    waiters.push(check);
  });
}

before(async () => {
  receiver = createServer((req, res) => {
    let data = '';
    req.on('data', (c: Buffer) => (data += c.toString()));
    req.on('end', () => {
      const body = JSON.parse(data);
      received.push({ path: req.url ?? '', headers: req.headers, body });
      const left = failFirst.get(req.url ?? '') ?? 0;
      if (left > 0) {
        failFirst.set(req.url ?? '', left - 1);
        res.writeHead(500).end('nope');
      } else {
        res.writeHead(200, { 'content-type': 'application/json' }).end('{"received":true}');
      }
      for (const w of [...waiters]) w();
    });
  });
  await new Promise<void>((r) => receiver.listen(0, '127.0.0.1', r));
  const port = (receiver.address() as AddressInfo).port;
  sb = await startSandbox({ seed: 'hook-tests', webhookUrl: `http://127.0.0.1:${port}/hooks/`, webhookRetryDelaysMs: [30, 60, 90] });
  token = (await sandboxToken(sb)).token;
});
after(async () => {
  await sb.close();
  receiver.closeAllConnections();
  await new Promise<void>((r) => receiver.close(() => r()));
});

interface Delivery {
  eventId: string;
  state: string;
  attempts: Array<{ status?: number }>;
}
/** Polls GET /__sandbox/webhooks until the delivery satisfies `cond` (deadline 10 s). */
async function deliveryWhen(eventId: string, cond: (d: Delivery) => boolean): Promise<Delivery> {
  const deadline = Date.now() + 10_000;
  for (;;) {
    const log = (await sandboxCall(sb, 'GET', '/__sandbox/webhooks')).json as Delivery[];
    const d = log.find((x) => x.eventId === eventId);
    if (d && cond(d)) return d;
    if (Date.now() > deadline) throw new Error(`delivery ${eventId} never settled: ${JSON.stringify(d)}`);
    await new Promise((r) => setTimeout(r, 25)); // poll interval: the delivery log is read, not pushed
  }
}

async function purchaseOrder(nf: string): Promise<string> {
  const c = sb.state.collections;
  const prov = await sandboxCall(sb, 'POST', '/open/v1/Provider', { token, body: { socialName: 'Forn', cnpj: '11222333000181', codeERP: `F-${nf}` } });
  const r = await sandboxCall(sb, 'POST', '/open/v1/purchaseorder', {
    token,
    body: {
      companyID: c.Company[0]!.id,
      branchID: c.Branch[0]!.id,
      warehouseID: c.Warehouse[0]!.id,
      nf,
      codeERP: '0a0b0c0d-0000-5000-8000-0000000000' + nf.slice(-2),
      providerID: prov.json.data.id,
      ownersID: c.Owners[0]!.id,
      status: 1,
      purchaseOrderItens: [{ productID: c.Product[1]!.id, quantity: 8, status: 1, lotNumber: 'LW1' }],
    },
  });
  assert.equal(r.status, 200, JSON.stringify(r.json));
  return r.json.data.id;
}

describe('webhooks', () => {
  test('receipt: resent after two 500 answers with the same eventId; receipt-status too', async () => {
    received = [];
    failFirst = new Map([['/hooks/webhooks/receipt', 2]]);
    const poId = await purchaseOrder('NF0001');
    const stockBefore = sb.state.stock.length;
    const ev = await sandboxCall(sb, 'POST', '/__sandbox/events/receive', { body: { purchaseOrderId: poId } });
    assert.equal(ev.status, 200);
    assert.deepEqual(
      ev.json.events.map((e: { kind: string }) => e.kind),
      ['receipt', 'receipt-status'],
    );
    await waitFor(
      () => received.filter((r) => r.path === '/hooks/webhooks/receipt').length === 3 && received.some((r) => r.path === '/hooks/webhooks/receipt-status'),
    );
    const receipts = received.filter((r) => r.path === '/hooks/webhooks/receipt');
    assert.equal(new Set(receipts.map((r) => r.body.eventId)).size, 1, 'one eventId across resends');
    assert.equal(receipts[0]!.headers['x-wms-event-id'], receipts[0]!.body.eventId);
    assert.equal(receipts[0]!.headers['x-wms-event'], 'receipt');
    assert.equal(receipts[0]!.headers['user-agent'], 'wms-sandbox');
    assert.match(String(receipts[0]!.headers['content-type']), /^application\/json/);
    assert.equal(receipts[0]!.body.kind, 'receipt');
    assert.equal(receipts[0]!.body.data.purchaseOrderId, poId);
    assert.equal(receipts[0]!.body.data.items[0].received, 8);
    const status = received.find((r) => r.path === '/hooks/webhooks/receipt-status')!;
    assert.equal(status.body.data.receiptStatus, '3');
    assert.equal(status.body.data.previousStatus, '1');
    // the order is received and its goods are in stock
    const po = sb.state.collections.PurchaseOrder.find((p) => p.id === poId)!;
    assert.equal(po['receiptStatus'], '3');
    assert.equal(sb.state.stock.length, stockBefore + 1);
    const d = await deliveryWhen(receipts[0]!.body.eventId, (x) => x.state !== 'pending');
    assert.deepEqual(
      d.attempts.map((a) => a.status),
      [500, 500, 200],
    );
    assert.equal(d.state, 'delivered');
    // receiving twice is refused
    assert.equal((await sandboxCall(sb, 'POST', '/__sandbox/events/receive', { body: { purchaseOrderId: poId } })).status, 409);
  });

  test('a receiver that always fails gets the first send plus 3 resends, then the delivery is failed', async () => {
    received = [];
    failFirst = new Map([['/hooks/webhooks/stock', 100]]);
    const ev = await sandboxCall(sb, 'POST', '/__sandbox/events/stock', { body: { productId: sb.state.collections.Product[0]!.id } });
    assert.equal(ev.status, 200);
    const eventId = ev.json.events[0].eventId;
    const d = await deliveryWhen(eventId, (x) => x.state !== 'pending');
    assert.equal(d.state, 'failed');
    assert.equal(d.attempts.length, 4);
    assert.equal(received.filter((r) => r.body.eventId === eventId).length, 4);
    const positions = received[0]!.body.data.positions as Array<{ productId: string }>;
    assert.ok(positions.length > 0 && positions.every((p) => p.productId === sb.state.collections.Product[0]!.id));
  });

  test('picking status 4 emits order-status and shipping; 7 emits packing with volumes', async () => {
    received = [];
    failFirst = new Map();
    const c = sb.state.collections;
    const pl = await sandboxCall(sb, 'POST', '/open/v1/pickinglist', {
      token,
      body: {
        companyID: c.Company[0]!.id,
        branchID: c.Branch[0]!.id,
        warehouseID: c.Warehouse[0]!.id,
        ownerID: c.Owners[0]!.id,
        order: 'PED-HOOK',
        codeERP: '0a0b0c0d-0000-5000-8000-00000000beef',
        status: 1,
        pickingItens: [
          { productID: c.Product[0]!.id, quantity: 2, status: 1 },
          { productID: c.Product[1]!.id, quantity: 1, status: 1 },
          { productID: c.Product[2]!.id, quantity: 4, status: 1 },
        ],
      },
    });
    const id = pl.json.data.id;
    const s4 = await sandboxCall(sb, 'POST', '/__sandbox/events/picking-status', { body: { pickingListId: id, status: '4' } });
    assert.deepEqual(
      s4.json.events.map((e: { kind: string }) => e.kind),
      ['order-status', 'shipping'],
    );
    const s7 = await sandboxCall(sb, 'POST', '/__sandbox/events/picking-status', { body: { pickingListId: id, status: '7' } });
    assert.deepEqual(
      s7.json.events.map((e: { kind: string }) => e.kind),
      ['order-status', 'packing'],
    );
    await waitFor(() => received.length === 4);
    const packing = received.find((r) => r.body.kind === 'packing')!;
    assert.equal(packing.body.data.volumes.length, 2);
    assert.equal(packing.body.data.pickingListId, id);
    const shipping = received.find((r) => r.body.kind === 'shipping')!;
    assert.deepEqual(
      shipping.body.data.items.map((i: { separateQuantity: number }) => i.separateQuantity),
      [2, 1, 4],
    );
    const statuses = received.filter((r) => r.body.kind === 'order-status').map((r) => [r.body.data.previousStatus, r.body.data.pickingStatus]);
    assert.deepEqual(statuses, [
      ['0', '4'],
      ['4', '7'],
    ]);
    const bad = await sandboxCall(sb, 'POST', '/__sandbox/events/picking-status', { body: { pickingListId: id, status: '9' } });
    assert.equal(bad.status, 400);
  });
});
