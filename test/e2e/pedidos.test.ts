/**
 * `wmsbridge pedidos`: the orders follow-up built from a real SQLite journal holding documents wmsbridge
 * sent and webhook events shaped as the sandbox sends them ({eventId, kind, occurredAt, data}); one event
 * linked to its record by the receiver, the others found by the document's WMS id.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import ExcelJS from 'exceljs';
import { makeTempDir } from '../helpers/tmp.js';
import { runCli } from '../helpers/cli.js';
import { openJournal } from '../../src/journal/index.js';
import type { NewRecord } from '../../src/journal/types.js';
import { createI18n } from '../../src/i18n/index.js';
import { dayIn } from '../../src/outbox/orders.js';

let tmp: { dir: string; cleanup: () => Promise<void> };
const PL1 = '0b6a1c1e-1111-4a4a-8a8a-000000000001';
const PL2 = '0b6a1c1e-1111-4a4a-8a8a-000000000002';
const PO1 = '0b6a1c1e-1111-4a4a-8a8a-000000000003';

function doc(target: 'PickingList' | 'PurchaseOrder', key: string, line: number): NewRecord {
  return { target, op: 'create', key, source: { line }, mapping: 'pedidos', payload: { order: key }, payloadHash: `h-${key}` };
}
const envelope = (kind: string, data: Record<string, unknown>, at: string): string =>
  JSON.stringify({ eventId: `${kind}-${at}-${JSON.stringify(data).length}`, kind, occurredAt: at, data });

before(async () => {
  tmp = await makeTempDir('wmsbridge-pedidos-');
  const j = await openJournal({ kind: 'sqlite', path: join(tmp.dir, 'state', 'journal.db') });
  try {
    const f = await j.addFile({ channel: 'pedidos', name: 'PEDIDOS_20241105_1700.csv', path: '/x', size: 1, sha256: 's1', runId: 'r1' });
    await j.addRecords(f.id, [doc('PickingList', 'PED-0001', 2), doc('PickingList', 'PED-0002', 5), doc('PurchaseOrder', 'OC-000123', 8)]);
    const [a, b, c] = await j.listRecords({ fileIds: [f.id] });
    await j.settle(a!.id, { status: 'sent', outcome: 'created', wmsId: PL1 });
    await j.settle(b!.id, { status: 'sent', outcome: 'created', wmsId: PL2 });
    await j.settle(c!.id, { status: 'sent', outcome: 'created', wmsId: PO1 });
    const t = (min: number): string => new Date(Date.now() + min * 60_000).toISOString();
    // PED-0001: separating, shipped, then packed (linked by the receiver to its record)
    await j.addWebhookEvent({
      dedupKey: 'e1',
      kind: 'order-status',
      body: envelope('order-status', { pickingListId: PL1, order: 'PED-0001', previousStatus: '0', pickingStatus: '1', changedAt: t(1) }, t(1)),
      recordId: a!.id,
    });
    await j.addWebhookEvent({
      dedupKey: 'e2',
      kind: 'order-status',
      body: envelope('order-status', { pickingListId: PL1, previousStatus: '1', pickingStatus: '4', changedAt: t(2) }, t(2)),
    });
    await j.addWebhookEvent({ dedupKey: 'e3', kind: 'shipping', body: envelope('shipping', { pickingListId: PL1, shippedAt: t(2), items: [] }, t(2)) });
    await j.addWebhookEvent({
      dedupKey: 'e4',
      kind: 'order-status',
      body: envelope('order-status', { pickingListId: PL1, previousStatus: '4', pickingStatus: '7', changedAt: t(3) }, t(3)),
    });
    await j.addWebhookEvent({ dedupKey: 'e5', kind: 'packing', body: envelope('packing', { pickingListId: PL1, packedAt: t(3), volumes: [] }, t(3)) });
    // OC-000123: received
    await j.addWebhookEvent({
      dedupKey: 'e6',
      kind: 'receipt-status',
      body: envelope('receipt-status', { purchaseOrderId: PO1, previousStatus: '1', receiptStatus: '3', changedAt: t(4) }, t(4)),
    });
    // an event about a document wmsbridge did not send: not in the view
    await j.addWebhookEvent({
      dedupKey: 'e7',
      kind: 'order-status',
      body: envelope('order-status', { pickingListId: '0b6a1c1e-1111-4a4a-8a8a-0000000000ff', pickingStatus: '1' }, t(1)),
    });
  } finally {
    await j.close();
  }
});

after(async () => tmp?.cleanup());

test('pedidos: one line per document sent, with separation, packing, shipping and receipt times from the webhooks', { timeout: 60_000 }, async () => {
  const day = dayIn(createI18n('pt-BR', 'America/Sao_Paulo'));
  const res = await runCli(
    ['pedidos', '--date', day, '--state-dir', join(tmp.dir, 'state'), '--outbox', join(tmp.dir, 'outbox'), '--inbox', join(tmp.dir, 'inbox')],
    {
      env: { WMSBRIDGE_LOG_LEVEL: 'warn' },
      timeoutMs: 50_000,
    },
  );
  assert.equal(res.code, 0, res.stderr.slice(-2000));
  assert.match(res.stdout, /3 documentos enviados pelo wmsbridge/);
  const dir = join(tmp.dir, 'outbox', 'pedidos', day);
  const wb = new ExcelJS.Workbook();
  await wb.xlsx.readFile(join(dir, 'pedidos.xlsx'));
  const ws = wb.worksheets[0]!;
  assert.deepEqual((ws.getRow(1).values as unknown[]).slice(1), [
    'tipo',
    'pedido',
    'situação',
    'enviado em',
    'em separação desde',
    'embalado em',
    'expedido em',
    'recebido em',
    'última novidade',
    'arquivo',
    'id no WMS',
  ]);
  const rows: Record<string, ExcelJS.CellValue>[] = [];
  ws.eachRow((r, i) => {
    if (i > 1)
      rows.push({
        kind: r.getCell(1).value,
        order: r.getCell(2).value,
        situation: r.getCell(3).value,
        sent: r.getCell(4).value,
        separating: r.getCell(5).value,
        packed: r.getCell(6).value,
        shipped: r.getCell(7).value,
        received: r.getCell(8).value,
      });
  });
  // lines come in the order the documents were sent; these three were settled within a millisecond or two
  // of each other (the journal's writer thread), so the test compares them by order number
  const byOrder = (o: string) => rows.find((r) => r.order === o)!;
  assert.deepEqual(
    rows.map((r) => [r.kind, r.order, r.situation]).sort((a, b) => String(a[1]).localeCompare(String(b[1]))),
    [
      ['Compra', 'OC-000123', 'Recebido'],
      ['Separação', 'PED-0001', 'Embalado'],
      ['Separação', 'PED-0002', 'Enviado'],
    ],
  );
  const p1 = byOrder('PED-0001');
  for (const k of ['sent', 'separating', 'packed', 'shipped']) assert.ok(p1[k] instanceof Date, `${k} is a date`);
  assert.ok((p1['separating'] as Date) < (p1['shipped'] as Date) && (p1['shipped'] as Date) < (p1['packed'] as Date));
  assert.equal(byOrder('PED-0002')['separating'], null, 'no news about PED-0002');
  assert.ok(byOrder('OC-000123')['received'] instanceof Date);
  const html = await readFile(join(dir, 'pedidos.html'), 'utf8');
  assert.match(html, /<html lang="pt-BR">/);
  assert.ok(html.includes('Acompanhamento de pedidos'));
  const csv = (await readFile(join(dir, 'pedidos.csv'), 'utf8')).replace(/^\uFEFF/, '').split('\r\n');
  assert.match(csv[1]!, /^Separação;PED-0001;Embalado;\d{2}\/\d{2}\/\d{4} \d{2}:\d{2}:\d{2};/);
});
