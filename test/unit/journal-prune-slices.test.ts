/**
 * Retention's prune on the SQLite journal (Journal.pruneSettled), for files far larger than the contract test's:
 * - every column that references another row leads an index: deleting a referenced row (a record, a file) looks for
 *   its references, and without one each deleted record read every webhook event (200,000 records with 5,000 events:
 *   20.6 s instead of 0.45 s);
 * - records are deleted in slices with the event loop served between them (one transaction held `watch` for 13.6 s
 *   for a 4 M-record file), and a file goes last, with its meta and its duplicates' links;
 * - webhook events received before the cutoff and delivered to the outbox go, in slices too.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { createSqliteJournal } from '../../src/journal/index.js';
import type { Journal } from '../../src/journal/index.js';
import { makeTempDir } from '../helpers/tmp.js';
import { loopTurnsDuring } from '../helpers/loop.js';

const OLD = 5_000; // records of the file to prune: several slices of the prune
let dir: { dir: string; cleanup: () => Promise<void> };
let path: string;
let journal: Journal;
let oldFile: number;
let keptFile: number;
let dupFile: number;

before(async () => {
  dir = await makeTempDir();
  path = join(dir.dir, 'journal.db');
  const j = await createSqliteJournal({ path });
  oldFile = (await j.addFile({ channel: 'c', name: 'old.csv', path: '/old', size: 1, sha256: 'a'.repeat(64), runId: 'r' })).id;
  keptFile = (await j.addFile({ channel: 'c', name: 'new.csv', path: '/new', size: 1, sha256: 'b'.repeat(64), runId: 'r' })).id;
  await j.updateFile(oldFile, { status: 'done' });
  dupFile = (await j.addFile({ channel: 'c', name: 'old-again.csv', path: '/old2', size: 1, sha256: 'a'.repeat(64), runId: 'r' })).id;
  await j.setMeta(`parse-facts:${oldFile}`, '{}');
  await j.close();
  const db = new Database(path);
  const insert = db.prepare(
    `INSERT INTO records (file_id, target, op, key, source, mapping, payload, payload_hash, status, updated_at)
     VALUES (?, 'PurchaseOrder', 'create', ?, '{}', 'm', '{}', 'h', 'sent', '2020-01-01T00:00:00Z')`,
  );
  const event = db.prepare(`INSERT INTO webhook_events (dedup_key, kind, received_at, body, record_id) VALUES (?, 'k', '2020-01-01T00:00:00Z', '{}', ?)`);
  db.transaction(() => {
    for (let i = 1; i <= OLD; i++) insert.run(oldFile, `OLD${i}`);
    for (let i = 1; i <= 10; i++) insert.run(keptFile, `NEW${i}`);
    const ids = (db.prepare('SELECT id FROM records WHERE file_id = ? ORDER BY id').all(oldFile) as Array<{ id: number }>).map((r) => r.id);
    // events linked to records of the first and of the last slice, one to a kept record, and unlinked ones
    event.run('first', ids[0]);
    event.run('last', ids[ids.length - 1]);
    event.run('kept', (db.prepare('SELECT MIN(id) AS id FROM records WHERE file_id = ?').get(keptFile) as { id: number }).id);
    for (let i = 0; i < 200; i++) event.run(`free${i}`, null);
  })();
  db.prepare("UPDATE files SET updated_at = '2020-01-01T00:00:00Z' WHERE id = ?").run(oldFile);
  db.close();
  journal = await createSqliteJournal({ path });
});

after(async () => {
  await journal?.close();
  await dir?.cleanup();
});

test('every column that references another row leads an index (a deleted row finds its references without a scan)', () => {
  const db = new Database(path, { readonly: true });
  try {
    const tables = (db.prepare("SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'").all() as Array<{ name: string }>).map(
      (t) => t.name,
    );
    const references: string[] = [];
    for (const table of tables) {
      const leading = new Set(
        (db.pragma(`index_list("${table}")`) as Array<{ name: string }>).map(
          (ix) => (db.pragma(`index_info("${ix.name}")`) as Array<{ name: string }>)[0]?.name,
        ),
      );
      for (const fk of db.pragma(`foreign_key_list("${table}")`) as Array<{ from: string; table: string }>) {
        references.push(`${table}.${fk.from}`);
        assert.ok(leading.has(fk.from), `${table}.${fk.from} references ${fk.table} but leads no index`);
      }
    }
    assert.deepEqual(references.sort(), ['files.duplicate_of', 'records.file_id', 'webhook_events.record_id']);
  } finally {
    db.close();
  }
});

test('a file of several slices is pruned whole, the event loop turning between slices; the rest stays', async () => {
  const { value: res, turns } = await loopTurnsDuring(() => journal.pruneSettled(new Date('2021-01-01T00:00:00Z')));
  assert.deepEqual(res, { files: 1, records: OLD, webhookEvents: 0 });
  // 5,000 records in slices of 2,000: the loop turned between them (never, in one transaction)
  assert.ok(turns >= 2, `the loop turned ${turns} time(s) while pruning`);

  assert.equal(await journal.getFile(oldFile), undefined);
  assert.deepEqual(await journal.listRecords({ fileIds: [oldFile] }), []);
  assert.equal(await journal.getMeta(`parse-facts:${oldFile}`), undefined);
  assert.equal((await journal.getFile(dupFile))?.duplicateOf, null, "the duplicate's link to the pruned file is cleared");
  assert.equal((await journal.listRecords({ fileIds: [keptFile] })).length, 10);

  const events = await journal.listWebhookEvents({ limit: 1000 });
  assert.equal(events.length, 203, 'every webhook event stays');
  const link = (k: string): number | null | undefined => events.find((e) => e.dedupKey === k)?.recordId;
  assert.equal(link('first'), null);
  assert.equal(link('last'), null, 'a link to a record of the last slice is cleared too');
  assert.equal(typeof link('kept'), 'number', 'a link to a kept record stays');
  assert.deepEqual(await journal.pruneSettled(new Date('2021-01-01T00:00:00Z')), { files: 0, records: 0, webhookEvents: 0 });
});

test('old delivered webhook events go in slices; newer ones and any not delivered yet stay', async () => {
  const db = new Database(path);
  const event = db.prepare('INSERT INTO webhook_events (dedup_key, kind, received_at, body, delivered_at) VALUES (?, ?, ?, ?, ?)');
  db.transaction(() => {
    for (let i = 0; i < 4500; i++) event.run(`old-delivered-${i}`, 'k', '2020-06-01T00:00:00.000Z', '{}', '2020-06-01T00:00:01.000Z');
    for (let i = 0; i < 2100; i++) event.run(`new-delivered-${i}`, 'k', '2022-01-01T00:00:00.000Z', '{}', '2022-01-01T00:00:01.000Z');
    // received before the cutoff but stored a slice after the newer ones (a clock set back): left for a later prune
    event.run('late-old-delivered', 'k', '2020-06-02T00:00:00.000Z', '{}', '2020-06-02T00:00:01.000Z');
  })();
  db.close();
  const { value: res, turns } = await loopTurnsDuring(() => journal.pruneSettled(new Date('2021-01-01T00:00:00Z')));
  assert.deepEqual(res, { files: 0, records: 0, webhookEvents: 4500 });
  assert.ok(turns >= 2, `the loop turned ${turns} time(s) while pruning`);
  const keys = (await journal.listWebhookEvents({ limit: 10_000 })).map((e) => e.dedupKey);
  assert.equal(keys.filter((k) => k.startsWith('old-delivered-')).length, 0);
  assert.equal(keys.filter((k) => k.startsWith('new-delivered-')).length, 2100);
  assert.equal(keys.filter((k) => k.startsWith('free')).length, 200, 'events not delivered yet stay, however old');
  assert.ok(keys.includes('late-old-delivered'), 'the pass stops at the first slice with a newer event');
});
