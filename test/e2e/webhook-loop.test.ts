/**
 * The whole webhook loop against the real sandbox: sandbox events -> webhooks -> receiver -> journal
 * -> outbox, for all six kinds; resends after the receiver answered 500 twice; duplicates; and a
 * receiver process that dies right after storing an event (before answering) losing nothing.
 */
import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { once } from 'node:events';
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { ChildProcess } from 'node:child_process';
import { request, type Dispatcher } from 'undici';
import { makeTempDir } from '../helpers/tmp.js';
import { spawnCli } from '../helpers/cli.js';
import { startSandbox, apiHeaders, type Sandbox } from '../helpers/sandbox.js';
import { createSqliteJournal } from '../../src/journal/sqlite.js';
import type { Journal } from '../../src/journal/types.js';
import { silentLogger } from '../../src/shared/logger.js';
import { createWebhookReceiver, type WebhookReceiver } from '../../src/webhook/receiver.js';
import { WEBHOOK_KINDS } from '../../src/webhook/kinds.js';

interface Delivery {
  eventId: string;
  kind: string;
  payload: Record<string, unknown>;
  attempts: Array<{ status?: number; error?: string }>;
  state: 'pending' | 'delivered' | 'failed';
}

async function pollUntil<T>(what: string, fn: () => Promise<T | undefined>, timeoutMs = 20_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await fn();
    if (v !== undefined) return v;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20)); // poll interval
  }
}

async function api(sandbox: Sandbox, token: string | undefined, method: 'GET' | 'POST', path: string, body?: unknown): Promise<Record<string, unknown>> {
  const res = await request(`${sandbox.url}${path}`, {
    method,
    headers: apiHeaders(token, { 'content-type': 'application/json' }),
    ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
  });
  const json = (await res.body.json()) as Record<string, unknown>;
  if (res.statusCode !== 200) throw new Error(`${method} ${path}: ${res.statusCode} ${JSON.stringify(json)}`);
  return json;
}

async function deliveries(sandbox: Sandbox): Promise<Delivery[]> {
  return (await api(sandbox, undefined, 'GET', '/__sandbox/webhooks')) as unknown as Delivery[];
}

type Rec = Record<string, unknown> & { id: string };

/** Creates a provider, a purchase order (2 items) and a picking list (3 items) through the API. */
async function createDocuments(sandbox: Sandbox): Promise<{ purchaseOrderId: string; pickingListId: string }> {
  const auth = await api(sandbox, undefined, 'POST', '/open/v1/authorize', { accessKeyID: sandbox.accessKeyID, secretKey: sandbox.secretKey });
  const token = String((auth['data'] as Record<string, unknown>)['token']);
  const c = sandbox.state.collections as unknown as Record<string, Rec[]>;
  const company = c['Company']![0]!;
  const warehouse = c['Warehouse']![0]!;
  const owner = c['Owners']![0]!;
  const products = c['Product']!;
  const provider = (await api(sandbox, token, 'POST', '/open/v1/Provider', { socialName: 'Fornecedor Teste Ltda', cnpj: '11222333000181', codeERP: 'F-1' }))[
    'data'
  ] as Rec;
  const po = (
    await api(sandbox, token, 'POST', '/open/v1/purchaseorder', {
      companyID: company.id,
      branchID: String(warehouse['branchID']),
      warehouseID: warehouse.id,
      nf: '000123',
      codeERP: '6f1c7c1e-1111-5111-8111-000000000123',
      providerID: provider.id,
      ownersID: owner.id,
      status: 1,
      purchaseOrderItens: [
        { productID: products[0]!.id, quantity: 10, status: 1 },
        { productID: products[1]!.id, quantity: 4, status: 1 },
      ],
    })
  )['data'] as Rec;
  const pl = (
    await api(sandbox, token, 'POST', '/open/v1/pickinglist', {
      companyID: company.id,
      branchID: String(warehouse['branchID']),
      warehouseID: warehouse.id,
      ownerID: owner.id,
      order: 'PED-777',
      codeERP: '6f1c7c1e-2222-5222-8222-000000000777',
      status: 1,
      pickingItens: [
        { productID: products[0]!.id, quantity: 2, status: 1 },
        { productID: products[1]!.id, quantity: 1, status: 1 },
        { productID: products[2]!.id, quantity: 3, status: 1 },
      ],
    })
  )['data'] as Rec;
  return { purchaseOrderId: po.id, pickingListId: pl.id };
}

async function outboxLines(outboxDir: string, kind: string): Promise<Array<Record<string, unknown>>> {
  const dir = join(outboxDir, 'webhooks', kind);
  let names: string[];
  try {
    names = (await readdir(dir)).filter((n) => n.endsWith('.jsonl')).sort();
  } catch {
    return [];
  }
  const out: Array<Record<string, unknown>> = [];
  for (const n of names) {
    for (const l of (await readFile(join(dir, n), 'utf8')).split('\n')) if (l !== '') out.push(JSON.parse(l) as Record<string, unknown>);
  }
  return out;
}

async function csvRows(outboxDir: string, kind: string): Promise<string[][]> {
  const dir = join(outboxDir, 'webhooks', kind);
  const names = (await readdir(dir)).filter((n) => n.endsWith('.csv')).sort();
  const rows: string[][] = [];
  for (const n of names) {
    const lines = (await readFile(join(dir, n), 'utf8'))
      .replace(/^\uFEFF/, '')
      .trimEnd()
      .split('\r\n');
    if (rows.length === 0) rows.push(lines[0]!.split(';'));
    for (const l of lines.slice(1)) rows.push(l.split(';'));
  }
  return rows;
}

describe('webhook loop: sandbox -> receiver (in process)', () => {
  let tmp: { dir: string; cleanup: () => Promise<void> };
  let journal: Journal;
  let receiver: WebhookReceiver;
  let sandbox: Sandbox;
  let outboxDir: string;
  let receiptAttempts = 0;

  before(async () => {
    tmp = await makeTempDir('wmsbridge-webhook-e2e-');
    outboxDir = join(tmp.dir, 'outbox');
    journal = await createSqliteJournal({ path: join(tmp.dir, 'state', 'journal.db') });
    receiver = await createWebhookReceiver(
      { port: 0, outboxDir, flushIntervalMs: 50 },
      {
        journal,
        logger: silentLogger(),
        // fault hook: the first two attempts of the receipt webhook are answered 500
        hooks: { beforeStore: ({ kind }) => (kind === 'receipt' && ++receiptAttempts <= 2 ? 500 : undefined) },
      },
    );
    sandbox = await startSandbox({ webhookUrl: receiver.url, webhookRetryDelaysMs: [100, 200, 300] });
  });
  after(async () => {
    await sandbox?.close();
    await receiver?.close();
    await journal?.close();
    await tmp?.cleanup();
  });

  test('all six kinds arrive, are stored once, reach the outbox once and link to their source line', async () => {
    const { purchaseOrderId, pickingListId } = await createDocuments(sandbox);
    // wmsbridge's journal knows which file and line created these documents
    const file = await journal.addFile({
      channel: 'pedidos',
      name: 'PEDIDOS-20261121.csv',
      path: '/inbox/pedidos/PEDIDOS-20261121.csv',
      size: 100,
      sha256: 'e2e-1',
      runId: 'run-1',
    });
    await journal.addRecords(file.id, [
      { target: 'PurchaseOrder', op: 'create', key: 'NF-000123', source: { line: 2 }, mapping: 'notas', payload: {}, payloadHash: 'a' },
      { target: 'PickingList', op: 'create', key: 'PED-777', source: { line: 5, lineEnd: 7 }, mapping: 'pedidos', payload: {}, payloadHash: 'b' },
    ]);
    const recs = await journal.listRecords({ fileIds: [file.id] });
    await journal.settle(recs[0]!.id, { status: 'sent', outcome: 'created', wmsId: purchaseOrderId });
    await journal.settle(recs[1]!.id, { status: 'sent', outcome: 'created', wmsId: pickingListId });

    await api(sandbox, undefined, 'POST', '/__sandbox/events/receive', { purchaseOrderId });
    await api(sandbox, undefined, 'POST', '/__sandbox/events/picking-status', { pickingListId, status: '4' });
    await api(sandbox, undefined, 'POST', '/__sandbox/events/picking-status', { pickingListId, status: '7' });
    await api(sandbox, undefined, 'POST', '/__sandbox/events/stock', {});

    const done = await pollUntil('every webhook delivered', async () => {
      const d = await deliveries(sandbox);
      return d.length === 7 && d.every((x) => x.state !== 'pending') ? d : undefined;
    });
    assert.ok(
      done.every((d) => d.state === 'delivered'),
      JSON.stringify(done.map((d) => [d.kind, d.state])),
    );
    assert.deepEqual([...new Set(done.map((d) => d.kind))].sort(), [...WEBHOOK_KINDS].sort());

    // resends: the receipt webhook was answered 500, 500, then 200 -> 3 attempts, stored once
    const receipt = done.find((d) => d.kind === 'receipt')!;
    assert.deepEqual(
      receipt.attempts.map((a) => a.status),
      [500, 500, 200],
    );
    for (const d of done.filter((x) => x.kind !== 'receipt')) assert.equal(d.attempts.length, 1, d.kind);

    const stored = await journal.listWebhookEvents({});
    for (const d of done) {
      assert.equal(stored.filter((e) => e.dedupKey === d.eventId).length, 1, `${d.kind} stored once`);
      assert.equal(stored.find((e) => e.dedupKey === d.eventId)?.kind, d.kind);
    }

    // the outbox gets every event exactly once
    await pollUntil('everything written to the outbox', async () =>
      (await journal.listWebhookEvents({ undeliveredOnly: true })).length === 0 ? true : undefined,
    );
    for (const kind of WEBHOOK_KINDS) {
      const lines = await outboxLines(outboxDir, kind);
      const expected = done
        .filter((d) => d.kind === kind)
        .map((d) => d.eventId)
        .sort();
      assert.deepEqual(lines.map((l) => l['eventId']).sort(), expected, kind);
      for (const l of lines) {
        const d = done.find((x) => x.eventId === l['eventId'])!;
        assert.deepEqual(l['payload'], d.payload, `${kind}: payload as sent`);
      }
    }
    // links to the ERP file and line
    const [receiptLine] = await outboxLines(outboxDir, 'receipt');
    assert.equal(receiptLine?.['source_file'], 'PEDIDOS-20261121.csv');
    assert.equal(receiptLine?.['source_line'], 2);
    for (const kind of ['order-status', 'shipping', 'packing'] as const) {
      for (const l of await outboxLines(outboxDir, kind)) assert.equal(l['source_line'], 5, kind);
    }
    const [stockLine] = await outboxLines(outboxDir, 'stock');
    assert.equal(stockLine?.['source_file'], null);

    // the CSVs: one row per item (receipt: 2 items), per volume item (packing: 3 items in 2 volumes)
    const receiptCsv = await csvRows(outboxDir, 'receipt');
    const h = receiptCsv[0]!;
    assert.equal(receiptCsv.length - 1, 2);
    assert.deepEqual(
      receiptCsv.slice(1).map((r) => r[h.indexOf('quantity')]),
      ['10', '4'],
    );
    assert.ok(receiptCsv.slice(1).every((r) => r[h.indexOf('source_file')] === 'PEDIDOS-20261121.csv' && r[h.indexOf('source_line')] === '2'));
    assert.ok(receiptCsv.slice(1).every((r) => r[h.indexOf('purchase_order_id')] === purchaseOrderId && r[h.indexOf('nf')] === '000123'));
    const packingCsv = await csvRows(outboxDir, 'packing');
    const ph = packingCsv[0]!;
    assert.deepEqual(
      packingCsv.slice(1).map((r) => r[ph.indexOf('volume_number')]),
      ['1', '1', '2'],
    );
    assert.deepEqual(
      packingCsv.slice(1).map((r) => r[ph.indexOf('package_code')]),
      ['PED-777-V01', 'PED-777-V01', 'PED-777-V02'],
    );
    const statusCsv = await csvRows(outboxDir, 'order-status');
    const sh = statusCsv[0]!;
    assert.deepEqual(
      statusCsv.slice(1).map((r) => r[sh.indexOf('picking_status')]),
      ['4', '7'],
    );
    const stockCsv = await csvRows(outboxDir, 'stock');
    assert.ok(stockCsv.length - 1 >= 2, 'one row per stock position');
  });

  test('a duplicate delivery (same event resent by hand) answers 200 and is stored and written once', async () => {
    const all = await deliveries(sandbox);
    const first: Delivery | undefined = all[0];
    if (!first) throw new Error('no delivery to resend');
    for (let i = 0; i < 2; i++) {
      const res: Dispatcher.ResponseData = await request(`${receiver.url}/webhooks/${first.kind}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-wms-event': first.kind, 'x-wms-event-id': first.eventId },
        body: JSON.stringify(first.payload),
      });
      assert.equal(res.statusCode, 200);
      assert.deepEqual(await res.body.json(), { received: true });
    }
    assert.equal((await journal.listWebhookEvents({})).filter((e) => e.dedupKey === first.eventId).length, 1);
    await receiver.flush();
    const lines = await outboxLines(outboxDir, first.kind);
    assert.equal(lines.filter((l) => l['eventId'] === first.eventId).length, 1);
  });
});

describe('webhook loop: the receiver process dies after storing, before answering', () => {
  let tmp: { dir: string; cleanup: () => Promise<void> };
  let sandbox: Sandbox | undefined;
  const children: ChildProcess[] = [];

  before(async () => {
    tmp = await makeTempDir('wmsbridge-webhook-crash-');
  });
  after(async () => {
    for (const c of children) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
    await sandbox?.close();
    await tmp.cleanup();
  });

  function startReceiver(port: number, env: Record<string, string> = {}): { child: ChildProcess; url: Promise<string>; stderr: () => string } {
    const child = spawnCli(
      ['webhooks', '--port', String(port), '--state-dir', join(tmp.dir, 'state'), '--outbox', join(tmp.dir, 'outbox'), '--flush-interval-ms', '100'],
      { env: { WMSBRIDGE_LOG_LEVEL: 'warn', ...env } },
    );
    children.push(child);
    let err = '';
    const url = new Promise<string>((resolve, reject) => {
      child.stderr?.on('data', (d: Buffer) => {
        err += d.toString();
        const m = /listening on (https?:\/\/\S+)/.exec(err);
        if (m) resolve(m[1]!);
      });
      child.on('exit', (code) => reject(new Error(`receiver exited (${code}) before it was ready: ${err}`)));
    });
    return { child, url, stderr: () => err };
  }

  test('kill after the commit: the sandbox resends, the restarted receiver answers, stored and written once', async () => {
    const first = startReceiver(0, { WMSBRIDGE_TEST_CRASH_AFTER_STORE: '1' });
    const url = await first.url;
    const port = Number(new URL(url).port);
    const exited = once(first.child, 'exit');
    sandbox = await startSandbox({ webhookUrl: url, webhookRetryDelaysMs: [1500, 3000, 6000] });
    await api(sandbox, undefined, 'POST', '/__sandbox/events/stock', {});

    const [code] = (await exited) as [number | null];
    assert.equal(code, 137, `crashed after storing: ${first.stderr()}`);
    // the event is in the journal though the sender got no answer
    const j1 = await createSqliteJournal({ path: join(tmp.dir, 'state', 'journal.db') });
    const afterCrash = await j1.listWebhookEvents({});
    await j1.close();
    assert.equal(afterCrash.length, 1);
    const d0 = await pollUntil('the failed first attempt', async () => {
      const [d] = await deliveries(sandbox!);
      return d && d.attempts.length >= 1 ? d : undefined;
    });
    assert.equal(afterCrash[0]?.dedupKey, d0.eventId);
    assert.equal(d0.attempts[0]?.status, undefined, 'first attempt got no answer');
    assert.ok(d0.attempts[0]?.error, 'first attempt failed at the network level');

    const second = startReceiver(port);
    assert.equal(await second.url, url);
    const delivered = await pollUntil('the resend answered', async () => {
      const [d] = await deliveries(sandbox!);
      return d && d.state !== 'pending' ? d : undefined;
    });
    assert.equal(delivered.state, 'delivered');
    assert.ok(delivered.attempts.length >= 2);
    assert.equal(delivered.attempts.at(-1)?.status, 200);

    const stopped = once(second.child, 'exit');
    second.child.kill('SIGTERM');
    const [stopCode] = (await stopped) as [number | null];
    assert.equal(stopCode, 0, second.stderr());

    const j2 = await createSqliteJournal({ path: join(tmp.dir, 'state', 'journal.db') });
    try {
      const events = await j2.listWebhookEvents({});
      assert.equal(events.length, 1, 'stored once');
      assert.ok(events[0]?.deliveredAt, 'written to the outbox');
    } finally {
      await j2.close();
    }
    const lines = await outboxLines(join(tmp.dir, 'outbox'), 'stock');
    assert.deepEqual(
      lines.map((l) => l['eventId']),
      [d0.eventId],
      'in the outbox once',
    );
  });
});
