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

/** a document as the shipped mappings journal it: key "number|owner code" or "invoice|supplier CNPJ", references unresolved */
function doc(target: 'PickingList' | 'PurchaseOrder', num: string, line: number, client?: string): NewRecord {
  const ref = (resource: string, value: string) => ({ $ref: { resource, value } });
  if (target === 'PurchaseOrder') {
    const key = `${num}|12345678000195`;
    return {
      target,
      op: 'create',
      key,
      source: { line },
      mapping: 'nfe',
      payload: { nf: num, providerID: ref('Provider', '12345678000195') },
      payloadHash: `h-${key}`,
    };
  }
  const key = `${num}|001`;
  const payload = { order: num, ownerID: ref('Owners', '001'), ...(client ? { clientName: client } : {}) };
  return { target, op: 'create', key, source: { line }, mapping: 'pedidos', payload, payloadHash: `h-${key}` };
}
const envelope = (kind: string, data: Record<string, unknown>, at: string): string =>
  JSON.stringify({ eventId: `${kind}-${at}-${JSON.stringify(data).length}`, kind, occurredAt: at, data });

before(async () => {
  tmp = await makeTempDir('wmsbridge-pedidos-');
  const j = await openJournal({ kind: 'sqlite', path: join(tmp.dir, 'state', 'journal.db') });
  try {
    const f = await j.addFile({ channel: 'pedidos', name: 'PEDIDOS_20241105_1700.csv', path: '/x', size: 1, sha256: 's1', runId: 'r1' });
    // PED-9 is sent first: the view is sorted by number as a person counts (9 after 2), not by when
    await j.addRecords(f.id, [
      doc('PickingList', 'PED-9', 1, 'Mercado São Jorge Ltda'),
      doc('PickingList', 'PED-0001', 2, 'Padaria Boa Massa'),
      doc('PickingList', 'PED-0002', 5),
    ]);
    await j.addRecords(f.id, [doc('PurchaseOrder', 'OC-000123', 8)]);
    const [z, a, b, c] = await j.listRecords({ fileIds: [f.id] });
    await j.settle(z!.id, { status: 'sent', outcome: 'created', wmsId: '0b6a1c1e-1111-4a4a-8a8a-000000000009' });
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
  assert.match(res.stdout, /4 documentos enviados pelo wmsbridge/);
  const dir = join(tmp.dir, 'outbox', 'pedidos', day);
  const wb = new ExcelJS.Workbook();
  await wb.xlsx.readFile(join(dir, 'pedidos.xlsx'));
  const ws = wb.worksheets[0]!;
  assert.deepEqual((ws.getRow(1).values as unknown[]).slice(1), [
    'tipo',
    'pedido / NF',
    'cliente / fornecedor',
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
        partner: r.getCell(3).value,
        situation: r.getCell(4).value,
        sent: r.getCell(5).value,
        separating: r.getCell(6).value,
        packed: r.getCell(7).value,
        shipped: r.getCell(8).value,
        received: r.getCell(9).value,
      });
  });
  // sorted: separation lists, then purchases, each by number; the partner as a person reads it, never the
  // journal's key ("PED-0001|001")
  const byOrder = (o: string) => rows.find((r) => r.order === o)!;
  assert.deepEqual(
    rows.map((r) => [r.kind, r.order, r.partner, r.situation]),
    [
      ['Separação', 'PED-0001', 'Padaria Boa Massa', 'Embalado'],
      ['Separação', 'PED-0002', '001', 'Enviado'],
      ['Separação', 'PED-9', 'Mercado São Jorge Ltda', 'Enviado'],
      ['Compra', 'OC-000123', '12.345.678/0001-95', 'Recebido'],
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
  assert.match(csv[1]!, /^Separação;PED-0001;Padaria Boa Massa;Embalado;\d{2}\/\d{2}\/\d{4} \d{2}:\d{2}:\d{2};/);
  for (const text of [html, csv.join('\n')]) assert.doesNotMatch(text, /\|001|\|12345678000195/, 'an internal key is shown');
  assert.ok(html.indexOf('PED-0002') < html.indexOf('PED-9'), 'rows sorted by number');
});

test('pedidos: a day without documents says "0 documentos" (plural), not "0 documento"', { timeout: 60_000 }, async () => {
  const res = await runCli(
    ['pedidos', '--date', '2001-01-01', '--state-dir', join(tmp.dir, 'state'), '--outbox', join(tmp.dir, 'outbox'), '--inbox', join(tmp.dir, 'inbox')],
    { env: { WMSBRIDGE_LOG_LEVEL: 'warn' }, timeoutMs: 50_000 },
  );
  assert.equal(res.code, 0, res.stderr.slice(-2000));
  assert.match(res.stdout, /: 0 documentos enviados pelo wmsbridge/);
  assert.equal(createI18n('pt-BR', 'UTC').t('orders.intro', { n: 1, zone: 'UTC' }).startsWith('1 documento enviado'), true);
});
