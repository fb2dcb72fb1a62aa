/**
 * The outbox side of the receiver: pure helpers (kinds, ids, flattening, batch names) and the flush
 * against a real SQLite journal and real temp folders: files per kind, CSV beside JSONL, links to
 * the source file and line, and a batch rewritten after a crash replacing the same files.
 */
import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { readFile, readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { makeTempDir } from '../helpers/tmp.js';
import { createSqliteJournal } from '../../src/journal/sqlite.js';
import type { Journal } from '../../src/journal/types.js';
import { silentLogger } from '../../src/shared/logger.js';
import { normalizeKindName, resolveKind, resolveKindAliases, WEBHOOK_KINDS } from '../../src/webhook/kinds.js';
import { computeDedupKey, extractEventId, extractLinkId } from '../../src/webhook/event.js';
import { csvColumnsFor, flattenEvent, CSV_COMMON_COLUMNS } from '../../src/webhook/flatten.js';
import { batchBaseName, flushWebhookEvents } from '../../src/webhook/flush.js';
import { verifySecret } from '../../src/webhook/secret.js';

const aliases = resolveKindAliases({});

describe('webhook pure helpers', () => {
  test('normalizeKindName folds case, accents and separators', () => {
    assert.equal(normalizeKindName('Situação de Recebimento'), 'situacao-de-recebimento');
    assert.equal(normalizeKindName('  ORDER_STATUS '), 'order-status');
    assert.equal(normalizeKindName('Saída'), 'saida');
  });

  test('resolveKind tries sources in order and reports missing/unknown', () => {
    assert.deepEqual(resolveKind({ route: 'estoque' }, ['route', 'header', 'payload'], aliases), {
      ok: true,
      kind: 'stock',
      source: 'route',
      given: 'estoque',
    });
    assert.deepEqual(resolveKind({ payload: { event: 'Embalagem' } }, ['route', 'header', 'payload'], aliases), {
      ok: true,
      kind: 'packing',
      source: 'payload',
      given: 'Embalagem',
    });
    assert.deepEqual(resolveKind({}, ['route', 'header', 'payload'], aliases), { ok: false, reason: 'missing' });
    assert.deepEqual(resolveKind({ header: 'x', route: 'stock' }, ['header', 'route'], aliases), {
      ok: false,
      reason: 'unknown',
      source: 'header',
      given: 'x',
    });
    // a non-string payload kind is not a kind
    assert.deepEqual(resolveKind({ payload: { kind: 42 } }, ['payload'], aliases), { ok: false, reason: 'missing' });
  });

  test('extractEventId: header first, then payload fields; overlong ids are ignored', () => {
    assert.equal(extractEventId({ 'x-wms-event-id': 'H' }, { eventId: 'P' }), 'H');
    assert.equal(extractEventId({}, { eventId: 'P', id: 'I' }), 'P');
    assert.equal(extractEventId({}, { id: 17 }), '17');
    assert.equal(extractEventId({}, { event_id: ' E ' }), 'E');
    assert.equal(extractEventId({}, { data: { eventId: 'nested' } }), undefined);
    assert.equal(extractEventId({}, { eventId: 'x'.repeat(201) }), undefined);
    assert.equal(extractEventId({}, [1]), undefined);
  });

  test('computeDedupKey: the event id, else sha256 of kind + body', () => {
    assert.equal(computeDedupKey('stock', '{}', 'abc'), 'abc');
    const a = computeDedupKey('stock', '{"a":1}', undefined);
    assert.match(a, /^sha256:[0-9a-f]{64}$/);
    assert.equal(computeDedupKey('stock', Buffer.from('{"a":1}'), undefined), a);
    assert.notEqual(computeDedupKey('receipt', '{"a":1}', undefined), a);
    assert.notEqual(computeDedupKey('stock', '{"a":2}', undefined), a);
  });

  test('extractLinkId finds purchase order / picking list ids at the top level or in data', () => {
    assert.equal(extractLinkId({ data: { purchaseOrderId: 'po-1' } }), 'po-1');
    assert.equal(extractLinkId({ pickingListID: 'pl-1' }), 'pl-1');
    assert.equal(extractLinkId({ data: { productId: 'p' } }), undefined);
  });

  test('verifySecret', () => {
    assert.equal(verifySecret('abc', 'abc'), true);
    assert.equal(verifySecret('abd', 'abc'), false);
    assert.equal(verifySecret('', 'abc'), false);
  });

  test('batchBaseName is derived from the first event only (UTC)', () => {
    assert.equal(batchBaseName('receipt', { id: 42, receivedAt: '2026-03-04T05:06:07.890Z' }), 'receipt-20260304-050607-000000042');
    assert.equal(batchBaseName('stock', { id: 1, receivedAt: 'garbage' }), 'stock-00000000-000000-000000001');
    assert.equal(batchBaseName('stock', { id: 1234567890, receivedAt: '2026-03-04T05:06:07Z' }), 'stock-20260304-050607-1234567890');
    // names sort in delivery order within one second
    const names = [9, 10, 100].map((id) => batchBaseName('stock', { id, receivedAt: '2026-03-04T05:06:07Z' }));
    assert.deepEqual([...names].sort(), names);
  });

  test('every kind has CSV columns starting with the common ones, unique', () => {
    for (const kind of WEBHOOK_KINDS) {
      const cols = csvColumnsFor(kind);
      assert.ok(cols, kind);
      assert.deepEqual(cols.slice(0, CSV_COMMON_COLUMNS.length), [...CSV_COMMON_COLUMNS]);
      assert.equal(new Set(cols).size, cols.length, `${kind}: duplicate column`);
    }
    assert.equal(csvColumnsFor('unknown'), undefined);
  });

  test('flattenEvent: one row per item, per volume item for packing, one row without items', () => {
    const receipt = flattenEvent('receipt', {
      eventId: 'e',
      occurredAt: '2026-01-01T00:00:00Z',
      data: {
        purchaseOrderId: 'po',
        nf: '123',
        receiptStatus: '3',
        items: [
          { id: 'i1', productID: 'p1', quantity: 5, received: 5 },
          { id: 'i2', productID: 'p2', quantity: 1, received: 1 },
        ],
      },
    });
    assert.equal(receipt.length, 2);
    assert.deepEqual(
      receipt.map((r) => [r['purchase_order_id'], r['nf'], r['receipt_status'], r['item_id'], r['product_id'], r['quantity'], r['received'], r['occurred_at']]),
      [
        ['po', '123', '3', 'i1', 'p1', 5, 5, '2026-01-01T00:00:00Z'],
        ['po', '123', '3', 'i2', 'p2', 1, 1, '2026-01-01T00:00:00Z'],
      ],
    );
    const packing = flattenEvent('packing', {
      data: {
        pickingListId: 'pl',
        order: 'PED-1',
        volumeCount: 2,
        volumes: [
          {
            volumeNumber: 1,
            packageCode: 'PED-1-V01',
            weight: 2.5,
            items: [
              { productID: 'a', quantity: 1 },
              { productID: 'b', quantity: 2 },
            ],
          },
          { volumeNumber: 2, packageCode: 'PED-1-V02', weight: 1, items: [{ productID: 'c', quantity: 3 }] },
        ],
      },
    });
    assert.deepEqual(
      packing.map((r) => [r['volume_number'], r['package_code'], r['product_id'], r['quantity'], r['order']]),
      [
        [1, 'PED-1-V01', 'a', 1, 'PED-1'],
        [1, 'PED-1-V01', 'b', 2, 'PED-1'],
        [2, 'PED-1-V02', 'c', 3, 'PED-1'],
      ],
    );
    const status = flattenEvent('order-status', { data: { pickingListId: 'pl', pickingStatus: '4', previousStatus: '3' } });
    assert.deepEqual(status, [{ picking_list_id: 'pl', picking_status: '4', previous_status: '3' }]);
    assert.deepEqual(flattenEvent('stock', 'not an object'), []);
    assert.deepEqual(flattenEvent('nope', { data: {} }), []);
    // objects in a scalar column are written as JSON, not "[object Object]"
    const odd = flattenEvent('receipt-status', { data: { purchaseOrderId: { weird: true } } });
    assert.equal(odd[0]?.['purchase_order_id'], '{"weird":true}');
  });
});

describe('webhook flush to the outbox', () => {
  let tmp: { dir: string; cleanup: () => Promise<void> };
  let journal: Journal;
  let outboxDir: string;

  before(async () => {
    tmp = await makeTempDir('wmsbridge-webhook-flush-');
    journal = await createSqliteJournal({ path: join(tmp.dir, 'journal.db') });
    outboxDir = join(tmp.dir, 'outbox');
  });
  after(async () => {
    await journal.close();
    await tmp.cleanup();
  });

  async function filesOf(kind: string): Promise<string[]> {
    try {
      return (await readdir(join(outboxDir, 'webhooks', kind))).sort();
    } catch {
      return [];
    }
  }

  test('writes one JSONL (+ CSV) per kind and batch, links source file and line, marks delivered', async () => {
    const file = await journal.addFile({ channel: 'notas', name: 'NFE-0001.xml', path: '/in/NFE-0001.xml', size: 10, sha256: 'flush-1', runId: 'r' });
    await journal.addRecords(file.id, [
      { target: 'PurchaseOrder', op: 'create', key: 'NF-1', source: { line: 12, lineEnd: 30 }, mapping: 'nfe', payload: {}, payloadHash: 'h' },
    ]);
    const [rec] = await journal.listRecords({ fileIds: [file.id] });
    assert.ok(rec);
    await journal.settle(rec.id, { status: 'sent', outcome: 'created', wmsId: 'po-wms-1' });

    const receipt = {
      eventId: 'r-1',
      kind: 'receipt',
      occurredAt: '2026-11-21T10:00:00Z',
      data: {
        purchaseOrderId: 'po-wms-1',
        nf: '1',
        items: [
          { id: 'i', productID: 'p', quantity: 2, received: 2 },
          { id: 'j', productID: 'q', quantity: 1.5, received: 1.5 },
        ],
      },
    };
    await journal.addWebhookEvent({ dedupKey: 'r-1', kind: 'receipt', body: JSON.stringify(receipt), recordId: rec.id });
    await journal.addWebhookEvent({
      dedupKey: 's-1',
      kind: 'stock',
      body: JSON.stringify({ eventId: 's-1', data: { positions: [{ productId: 'p', quantity: 3 }] } }),
    });
    await journal.addWebhookEvent({ dedupKey: 'r-2', kind: 'receipt', body: JSON.stringify({ eventId: 'r-2', data: { purchaseOrderId: 'unknown-po' } }) });

    const { delivered, files } = await flushWebhookEvents({ outboxDir }, { journal, logger: silentLogger() });
    assert.equal(delivered, 3);
    assert.equal(files.length, 2);
    assert.equal((await journal.listWebhookEvents({ undeliveredOnly: true })).length, 0);

    const receiptFiles = await filesOf('receipt');
    assert.equal(receiptFiles.length, 2, receiptFiles.join(','));
    const jsonlName = receiptFiles.find((f) => f.endsWith('.jsonl'));
    assert.match(jsonlName ?? '', /^receipt-\d{8}-\d{6}-\d+\.jsonl$/);
    const lines = (await readFile(join(outboxDir, 'webhooks', 'receipt', jsonlName!), 'utf8'))
      .trimEnd()
      .split('\n')
      .map((l) => JSON.parse(l) as Record<string, unknown>);
    assert.equal(lines.length, 2);
    assert.deepEqual(lines[0]?.['payload'], receipt);
    assert.equal(lines[0]?.['source_file'], 'NFE-0001.xml');
    assert.equal(lines[0]?.['source_line'], 12);
    assert.equal(lines[0]?.['dedupKey'], 'r-1');
    assert.equal(lines[0]?.['kind'], 'receipt');
    assert.match(String(lines[0]?.['receivedAt']), /^\d{4}-\d{2}-\d{2}T/);
    assert.equal(lines[1]?.['source_file'], null);

    const csvName = receiptFiles.find((f) => f.endsWith('.csv'));
    assert.equal(csvName, jsonlName!.replace(/\.jsonl$/, '.csv'));
    const csv = (await readFile(join(outboxDir, 'webhooks', 'receipt', csvName!), 'utf8')).replace(/^\uFEFF/, '');
    const rows = csv
      .trimEnd()
      .split('\r\n')
      .map((l) => l.split(';'));
    const header = rows[0]!;
    const col = (row: string[], name: string): string | undefined => row[header.indexOf(name)];
    assert.equal(rows.length, 4, 'header + 2 item rows + 1 row for the item-less event');
    assert.equal(col(rows[1]!, 'source_file'), 'NFE-0001.xml');
    assert.equal(col(rows[1]!, 'source_line'), '12');
    assert.equal(col(rows[2]!, 'quantity'), '1,5');
    assert.equal(col(rows[3]!, 'purchase_order_id'), 'unknown-po');
    assert.equal(col(rows[3]!, 'source_file'), '');

    assert.equal((await filesOf('stock')).length, 2);
    // nothing left to do: a second flush writes nothing
    assert.equal((await flushWebhookEvents({ outboxDir }, { journal, logger: silentLogger() })).delivered, 0);
  });

  test('a crash between the outbox write and markWebhookDelivered rewrites the same file, not a second one', async () => {
    const body = (id: string): string => JSON.stringify({ eventId: id, data: { pickingListId: 'pl-x', pickingStatus: '2' } });
    await journal.addWebhookEvent({ dedupKey: 'os-1', kind: 'order-status', body: body('os-1') });
    await journal.addWebhookEvent({ dedupKey: 'os-2', kind: 'order-status', body: body('os-2') });
    let crash = true;
    const crashing: Journal = {
      ...journal,
      markWebhookDelivered: (ids) => {
        if (crash) return Promise.reject(new Error('simulated crash before markWebhookDelivered'));
        return journal.markWebhookDelivered(ids);
      },
    };
    await assert.rejects(flushWebhookEvents({ outboxDir }, { journal: crashing, logger: silentLogger() }), /simulated crash/);
    const afterCrash = await filesOf('order-status');
    assert.equal(afterCrash.length, 2);
    // more events arrive before the restart
    await journal.addWebhookEvent({ dedupKey: 'os-3', kind: 'order-status', body: body('os-3') });
    crash = false;
    const { delivered } = await flushWebhookEvents({ outboxDir }, { journal: crashing, logger: silentLogger() });
    assert.equal(delivered, 3);
    const afterRestart = await filesOf('order-status');
    assert.deepEqual(afterRestart, afterCrash, 'same file names, replaced');
    const jsonl = afterRestart.find((f) => f.endsWith('.jsonl'))!;
    const ids = (await readFile(join(outboxDir, 'webhooks', 'order-status', jsonl), 'utf8'))
      .trimEnd()
      .split('\n')
      .map((l) => (JSON.parse(l) as { dedupKey: string }).dedupKey);
    assert.deepEqual(ids, ['os-1', 'os-2', 'os-3'], 'each event once');
    // no temp files left behind
    assert.ok(afterRestart.every((f) => !f.startsWith('.')));
  });

  test('batches are capped by batchSize; a body that no longer parses is kept as raw text', async () => {
    for (let i = 0; i < 5; i++)
      await journal.addWebhookEvent({ dedupKey: `pk-${i}`, kind: 'packing', body: JSON.stringify({ eventId: `pk-${i}`, data: { volumes: [] } }) });
    await journal.addWebhookEvent({ dedupKey: 'bad-1', kind: 'packing', body: '{not json' });
    const { delivered, files } = await flushWebhookEvents({ outboxDir, batchSize: 2 }, { journal, logger: silentLogger() });
    assert.equal(delivered, 6);
    assert.equal(files.length, 3);
    const all = (await Promise.all(files.map((f) => readFile(f.jsonl, 'utf8'))))
      .join('')
      .trimEnd()
      .split('\n')
      .map((l) => JSON.parse(l) as Record<string, unknown>);
    assert.equal(all.length, 6);
    assert.equal(all.at(-1)?.['raw'], '{not json');
  });
});
