/**
 * The SQLite journal indexes records by WMS id only for the documents webhooks link to (migration 6, issue 19): a
 * full index put every created record's UUID on a random page of it, 30 % of the bytes a master-data run wrote.
 * The link lookups must still use that partial index (the planner takes it only when a query states its
 * condition), a journal of version 5 migrates with its records, and the stock result files still name a product
 * given by its WMS id by its code (now through the cross-reference).
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { makeTempDir } from '../helpers/tmp.js';
import { createSqliteJournal, MIGRATIONS } from '../../src/journal/sqlite.js';
import { LINKED_RECORD_ID } from '../../src/journal/sqlite-writes.js';
import { WEBHOOK_LINK_TARGETS, type NewRecord, type RecordRow } from '../../src/journal/types.js';
import { LINK_FIELDS } from '../../src/webhook/event.js';
import { stockKeyLabeler } from '../../src/app/stock-labels.js';

let tmp: { dir: string; cleanup: () => Promise<void> };
before(async () => (tmp = await makeTempDir('wmsbridge-link-index-')));
after(async () => tmp.cleanup());

function rec(target: NewRecord['target'], key: string): NewRecord {
  return { target, op: 'create', key, source: { line: 2 }, mapping: 'm', payload: { codeERP: key }, payloadHash: `h-${key}` };
}

function planOf(path: string, sql: string, ...params: unknown[]): string {
  const db = new Database(path, { readonly: true });
  try {
    return (db.prepare(`EXPLAIN QUERY PLAN ${sql}`).all(...params) as Array<{ detail: string }>).map((r) => r.detail).join(' | ');
  } finally {
    db.close();
  }
}

test('the webhook link reads records through the partial index of the link targets, never a scan', async () => {
  const path = join(tmp.dir, 'plan', 'journal.db');
  const journal = await createSqliteJournal({ path });
  await journal.close();
  const plan = planOf(path, LINKED_RECORD_ID, 'wms-1');
  assert.match(plan, /USING INDEX records_by_link_wms_id \(wms_id=\?\)/, plan);
  const db = new Database(path, { readonly: true });
  try {
    const indexes = (db.prepare("SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name = 'records'").all() as Array<{ name: string }>).map(
      (r) => r.name,
    );
    assert.ok(!indexes.includes('records_by_wms_id'), 'the full index is gone');
  } finally {
    db.close();
  }
});

test('the link targets are the documents the webhook link fields name', () => {
  const named = new Set(LINK_FIELDS.map((f) => f.replace(/I[dD]$/, '').replace(/^./, (c) => c.toUpperCase())));
  assert.deepEqual([...named].sort(), [...WEBHOOK_LINK_TARGETS].sort());
});

test('a version-5 journal migrates: documents are still found by WMS id, master data is not, nothing is lost', async () => {
  const path = join(tmp.dir, 'v5', 'journal.db');
  const { mkdirSync } = await import('node:fs');
  mkdirSync(join(tmp.dir, 'v5'), { recursive: true });
  // a journal as wmsbridge with schema 5 left it: the full index, a product and a purchase order sent
  const db = new Database(path);
  db.pragma('journal_mode = WAL');
  db.exec('CREATE TABLE schema_version (version INTEGER NOT NULL, applied_at TEXT NOT NULL)');
  MIGRATIONS.slice(0, 5).forEach((sql, i) => {
    db.exec(sql);
    db.prepare('INSERT INTO schema_version (version, applied_at) VALUES (?, ?)').run(i + 1, new Date().toISOString());
  });
  const ts = new Date().toISOString();
  db.prepare("INSERT INTO files (channel, name, path, size, sha256, status, created_at, updated_at) VALUES ('c', 'f.csv', '/f.csv', 1, 's', 'done', ?, ?)").run(
    ts,
    ts,
  );
  const insert = db.prepare(
    "INSERT INTO records (file_id, target, op, key, source, mapping, payload, payload_hash, status, outcome, wms_id, attempts, updated_at) VALUES (1, ?, 'create', ?, '{\"line\":2}', 'm', '{}', 'h', 'sent', 'created', ?, 1, ?)",
  );
  insert.run('Product', 'P1', 'wms-same', ts);
  insert.run('PurchaseOrder', 'PO1', 'wms-po', ts);
  insert.run('Product', 'P2', 'wms-same-2', ts);
  db.close();

  const journal = await createSqliteJournal({ path });
  try {
    assert.equal((await journal.findRecordByWmsId('wms-po'))?.key, 'PO1');
    assert.equal(await journal.findRecordByWmsId('wms-same'), undefined, 'a product is not a link');
    assert.equal((await journal.listRecords({ fileIds: [1] })).length, 3);
    const linked = await journal.addWebhookEvent({ dedupKey: 'e1', kind: 'receipt', body: '{}', linkWmsId: 'wms-po' });
    assert.equal((await journal.findRecordByWmsId('wms-po'))?.id, linked.recordId);
  } finally {
    await journal.close();
  }
  assert.match(planOf(path, LINKED_RECORD_ID, 'wms-po'), /records_by_link_wms_id/);
});

test('a stock row naming its product by WMS id is labelled with the product code from the cross-reference', async () => {
  const journal = await createSqliteJournal({ path: join(tmp.dir, 'labels', 'journal.db') });
  try {
    const guid = '0b7d4c1e-1111-4a2b-9c3d-00000000abcd';
    await journal.putXref('Product', 'PROD-7', guid, null);
    const label = stockKeyLabeler(null, journal);
    const row = (productId: string) => ({ target: 'StockSync', payload: { warehouseId: 'w-1', productId } }) as unknown as RecordRow;
    assert.equal(await label(row(guid)), 'warehouse w-1 | product PROD-7');
    assert.equal(await label(row('1b7d4c1e-1111-4a2b-9c3d-00000000abcd')), 'warehouse w-1 | product 1b7d4c1e-1111-4a2b-9c3d-00000000abcd', 'unknown: the id');
    assert.equal(await label({ target: 'Category', payload: {} } as unknown as RecordRow), null);
  } finally {
    await journal.close();
  }
});

test('a journal of version 6 keeps master data off the WMS-id index', async () => {
  const path = join(tmp.dir, 'v6', 'journal.db');
  const journal = await createSqliteJournal({ path });
  try {
    const file = await journal.addFile({ channel: 'c', name: 'x.csv', path: '/x.csv', size: 1, sha256: 's6', runId: 'r' });
    await journal.addRecords(file.id, [rec('Category', 'C1'), rec('PickingList', 'PL1')]);
    const rows = await journal.listRecords({ fileIds: [file.id] });
    for (const [r, id] of rows.map((r, i) => [r, `wms-v6-${i}`] as const)) {
      await journal.markSending(r.id);
      await journal.settle(r.id, { status: 'sent', outcome: 'created', wmsId: id });
    }
  } finally {
    await journal.close();
  }
  const db = new Database(path, { readonly: true });
  try {
    // the index's own entries: only the picking list's id
    const ids = (
      db
        .prepare("SELECT wms_id FROM records INDEXED BY records_by_link_wms_id WHERE wms_id IS NOT NULL AND target IN ('PurchaseOrder', 'PickingList')")
        .all() as Array<{ wms_id: string }>
    ).map((r) => r.wms_id);
    assert.deepEqual(ids, ['wms-v6-1']);
  } finally {
    db.close();
  }
});
