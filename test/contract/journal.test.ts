/**
 * One contract suite for every journal store (hono's runTest / unstorage's testDriver pattern).
 * `runJournalContract(name, open)` is exported for other stores: `open()` must return a journal on
 * the SAME storage every time it is called within one suite run (used for close/reopen), and a fresh
 * empty storage per suite. Run here for SQLite on a temp file.
 */
import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { makeTempDir } from '../helpers/tmp.js';
import { createSqliteJournal, SCHEMA_VERSION } from '../../src/journal/sqlite.js';
import { openJournal } from '../../src/journal/index.js';
import type { Journal, NewRecord, RecordStatus } from '../../src/journal/types.js';
import { ErrorCode } from '../../src/shared/errors.js';

const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

function rec(key: string, extra: Partial<NewRecord> = {}): NewRecord {
  return {
    target: 'Product',
    op: 'upsert',
    key,
    source: { line: 2, lineEnd: 3 },
    mapping: 'products',
    payload: { codeERP: key, name: `Produto ${key}`, price: 1.5, nested: { a: [1, 'ç'] } },
    payloadHash: `hash-${key}`,
    raw: [{ line: 2, fields: { code: key }, cells: [key], text: `${key};x` }],
    ...extra,
  };
}

let fileSeq = 0;
async function newFile(j: Journal, sha = `sha-${++fileSeq}`, extra: { force?: boolean; channel?: string; runId?: string } = {}) {
  return j.addFile({ channel: extra.channel ?? 'produtos', name: `f${fileSeq}.csv`, path: `/in/f${fileSeq}.csv`, size: 10, sha256: sha, runId: extra.runId ?? 'run-1', ...(extra.force === undefined ? {} : { force: extra.force }) });
}

export function runJournalContract(name: string, open: () => Promise<Journal>): void {
  describe(`journal contract: ${name}`, () => {
    let j: Journal;
    before(async () => {
      j = await open();
    });
    after(async () => {
      await j.close();
    });

    test('location names the store', () => {
      assert.match(j.location, /^(sqlite:|postgres)/);
    });

    test('addFile registers a claimed file; getFile/listFiles/updateFile', async () => {
      const f = await newFile(j, 'sha-a', { channel: 'ch-a', runId: 'run-a' });
      assert.equal(f.status, 'claimed');
      assert.equal(f.duplicateOf, null);
      assert.equal(f.channel, 'ch-a');
      assert.equal(f.runId, 'run-a');
      assert.equal(f.sha256, 'sha-a');
      assert.match(f.createdAt, ISO);
      assert.deepEqual(await j.getFile(f.id), f);
      assert.equal(await j.getFile(999_999), undefined);
      await j.updateFile(f.id, { status: 'mapped', path: '/in/.wmsbridge/work/x.csv', error: null });
      const g = await j.getFile(f.id);
      assert.equal(g?.status, 'mapped');
      assert.equal(g?.path, '/in/.wmsbridge/work/x.csv');
      assert.equal(g?.runId, 'run-a', 'fields not in the patch are kept');
      assert.deepEqual((await j.listFiles({ channel: 'ch-a' })).map((x) => x.id), [f.id]);
      assert.deepEqual((await j.listFiles({ runId: 'run-a', statuses: ['mapped'] })).map((x) => x.id), [f.id]);
      assert.deepEqual(await j.listFiles({ runId: 'run-a', statuses: ['done'] }), []);
      assert.ok((await j.listFiles()).some((x) => x.id === f.id));
      await assert.rejects(j.updateFile(999_999, { status: 'done' }), (e: { code?: string }) => e.code === ErrorCode.JOURNAL);
    });

    test('duplicate detection by sha256, force, and earlier errors', async () => {
      const first = await newFile(j, 'sha-dup');
      const second = await newFile(j, 'sha-dup');
      assert.equal(second.status, 'duplicate');
      assert.equal(second.duplicateOf, first.id);
      const forced = await newFile(j, 'sha-dup', { force: true });
      assert.equal(forced.status, 'claimed');
      assert.equal(forced.duplicateOf, null);
      await j.updateFile(first.id, { status: 'done' });
      const third = await newFile(j, 'sha-dup');
      assert.equal(third.status, 'duplicate');
      assert.equal(third.duplicateOf, first.id, 'points at the first processed file');
      // a file that ended in error does not make the same content a duplicate
      const bad = await newFile(j, 'sha-err');
      await j.updateFile(bad.id, { status: 'error', error: 'parse failed' });
      const again = await newFile(j, 'sha-err');
      assert.equal(again.status, 'claimed');
    });

    test('addRecords in one batch, listRecords round-trips every field', async () => {
      const f = await newFile(j);
      await j.addRecords(f.id, [rec('P1'), rec('P2', { attachmentPath: 'a/b.pdf' }), rec('P3', { status: 'rejected', error: 'price: required', raw: undefined })]);
      const rows = await j.listRecords({ fileIds: [f.id] });
      assert.equal(rows.length, 3);
      const [a, b, c] = rows;
      assert.ok(a && b && c);
      assert.ok(a.id < b.id && b.id < c.id, 'ordered by id');
      assert.equal(a.fileId, f.id);
      assert.equal(a.status, 'pending');
      assert.equal(a.attempts, 0);
      assert.equal(a.outcome, null);
      assert.equal(a.wmsId, null);
      assert.deepEqual(a.payload, rec('P1').payload);
      assert.deepEqual(a.source, { line: 2, lineEnd: 3 });
      assert.deepEqual(a.raw, rec('P1').raw);
      assert.equal(a.payloadHash, 'hash-P1');
      assert.equal(a.mapping, 'products');
      assert.equal(a.op, 'upsert');
      assert.equal(a.target, 'Product');
      assert.match(a.updatedAt, ISO);
      assert.equal(b.attachmentPath, 'a/b.pdf');
      assert.equal(c.status, 'rejected');
      assert.equal(c.error, 'price: required');
      assert.equal(c.raw, undefined);
      await j.addRecords(f.id, []); // an empty batch is a no-op
      assert.equal((await j.listRecords({ fileIds: [f.id] })).length, 3);
    });

    test('addRecords is all-or-nothing for a batch', async () => {
      await assert.rejects(j.addRecords(987_654, [rec('X1')]), (e: { code?: string }) => e.code === ErrorCode.JOURNAL, 'unknown file id');
      assert.deepEqual(await j.listRecords({ fileIds: [987_654] }), []);
      const f = await newFile(j);
      const bad = { ...rec('X3'), target: undefined } as unknown as NewRecord;
      await assert.rejects(j.addRecords(f.id, [rec('X2'), bad]));
      assert.deepEqual(await j.listRecords({ fileIds: [f.id] }), [], 'the first record of the failed batch was rolled back');
    });

    test('record lifecycle pending -> sending -> sent / rejected / failed, attempts counted', async () => {
      const f = await newFile(j);
      await j.addRecords(f.id, [rec('L1'), rec('L2'), rec('L3')]);
      const [r1, r2, r3] = await j.listRecords({ fileIds: [f.id] });
      assert.ok(r1 && r2 && r3);
      await j.markSending(r1.id);
      let now = (await j.listRecords({ fileIds: [f.id], statuses: ['sending'] }))[0];
      assert.equal(now?.id, r1.id);
      assert.equal(now?.attempts, 1);
      await j.settle(r1.id, { status: 'sent', outcome: 'created', wmsId: 'wms-1' });
      now = (await j.listRecords({ fileIds: [f.id] }))[0];
      assert.equal(now?.status, 'sent');
      assert.equal(now?.outcome, 'created');
      assert.equal(now?.wmsId, 'wms-1');
      assert.equal(now?.error, null);

      await j.markSending(r2.id);
      await j.settle(r2.id, { status: 'rejected', outcome: 'rejected', error: '[POST] /open/v1/product: 400 - categoryID does not exist' });
      await j.markSending(r3.id);
      await j.settle(r3.id, { status: 'failed', outcome: 'failed', error: 'timeout' });
      await j.markSending(r3.id); // a retry counts a second attempt
      await j.settle(r3.id, { status: 'sent', outcome: 'updated', wmsId: 'wms-3' });
      await j.settle(r1.id, { status: 'sent', outcome: 'unchanged' }); // wmsId omitted: kept
      const after = await j.listRecords({ fileIds: [f.id] });
      assert.deepEqual(after.map((r) => [r.status, r.outcome, r.attempts]), [
        ['sent', 'unchanged', 1],
        ['rejected', 'rejected', 1],
        ['sent', 'updated', 2],
      ]);
      assert.equal(after[0]?.wmsId, 'wms-1');
      assert.equal(after[1]?.error, '[POST] /open/v1/product: 400 - categoryID does not exist');
      assert.equal(after[2]?.error, null, 'a later success clears the error');
      await assert.rejects(j.markSending(999_999), (e: { code?: string }) => e.code === ErrorCode.JOURNAL);
      await assert.rejects(j.settle(999_999, { status: 'sent', outcome: 'created' }), (e: { code?: string }) => e.code === ErrorCode.JOURNAL);
    });

    test('recoverInFlight turns sending into in_doubt (all, or only given files)', async () => {
      const f1 = await newFile(j);
      const f2 = await newFile(j);
      await j.addRecords(f1.id, [rec('D1'), rec('D2')]);
      await j.addRecords(f2.id, [rec('D3')]);
      const [d1, d2] = await j.listRecords({ fileIds: [f1.id] });
      const [d3] = await j.listRecords({ fileIds: [f2.id] });
      assert.ok(d1 && d2 && d3);
      await j.markSending(d1.id);
      await j.markSending(d3.id);
      assert.equal(await j.recoverInFlight([f2.id]), 1);
      assert.equal((await j.listRecords({ fileIds: [f2.id] }))[0]?.status, 'in_doubt');
      assert.equal((await j.listRecords({ fileIds: [f1.id] }))[0]?.status, 'sending', 'other files untouched');
      assert.ok((await j.recoverInFlight()) >= 1);
      const s = await j.listRecords({ fileIds: [f1.id] });
      assert.deepEqual(s.map((r) => r.status), ['in_doubt', 'pending']);
      assert.equal(await j.recoverInFlight(), 0, 'nothing left in flight');
      assert.equal((await j.countRecords({ statuses: ['sending'] })).sending, 0);
    });

    test('requeue puts held, failed and in_doubt records back to pending, never sent ones', async () => {
      const f = await newFile(j);
      await j.addRecords(f.id, [rec('Q1'), rec('Q2'), rec('Q3'), rec('Q4'), rec('Q5', { status: 'rejected', error: 'bad' })]);
      const [q1, q2, q3, q4, q5] = await j.listRecords({ fileIds: [f.id] });
      assert.ok(q1 && q2 && q3 && q4 && q5);
      for (const r of [q1, q2, q3, q4]) await j.markSending(r.id);
      await j.settle(q1.id, { status: 'held', outcome: 'held', error: 'dependency failed' });
      await j.settle(q2.id, { status: 'failed', outcome: 'failed', error: 'timeout' });
      await j.settle(q4.id, { status: 'sent', outcome: 'created', wmsId: 'w4' });
      await j.recoverInFlight([f.id]); // q3 -> in_doubt
      assert.equal(await j.requeue([q1.id, q2.id, q3.id, q4.id, q5.id, 999_999]), 3);
      assert.equal(await j.requeue([]), 0);
      const after = await j.listRecords({ fileIds: [f.id] });
      assert.deepEqual(after.map((r) => r.status), ['pending', 'pending', 'pending', 'sent', 'rejected']);
      assert.equal(after[0]?.outcome, null);
      assert.equal(after[0]?.attempts, 1, 'attempts are history: kept');
      assert.equal(after[3]?.wmsId, 'w4');
    });

    test('countRecords returns every status, filtered', async () => {
      const f = await newFile(j);
      await j.addRecords(f.id, [rec('C1'), rec('C2'), rec('C3', { target: 'Category' }), rec('C4', { status: 'rejected', error: 'x' })]);
      const [c1] = await j.listRecords({ fileIds: [f.id] });
      assert.ok(c1);
      await j.markSending(c1.id);
      const all = await j.countRecords({ fileIds: [f.id] });
      const expected: Record<RecordStatus, number> = { pending: 2, sending: 1, sent: 0, rejected: 1, failed: 0, held: 0, in_doubt: 0 };
      assert.deepEqual(all, expected);
      const cats = await j.countRecords({ fileIds: [f.id], targets: ['Category'] });
      assert.equal(cats.pending, 1);
      assert.equal(Object.values(cats).reduce((a, b) => a + b, 0), 1);
      const none = await j.countRecords({ fileIds: [f.id], statuses: ['held'] });
      assert.equal(Object.values(none).reduce((a, b) => a + b, 0), 0);
      assert.deepEqual(Object.keys(none).sort(), Object.keys(expected).sort());
    });

    test('keyset paging with afterId and limit visits every record once', async () => {
      const f = await newFile(j);
      const batch = Array.from({ length: 25 }, (_, i) => rec(`K${i}`, { target: i % 2 ? 'Category' : 'Product' }));
      await j.addRecords(f.id, batch);
      const seen: string[] = [];
      let afterId = 0;
      for (;;) {
        const page = await j.listRecords({ fileIds: [f.id], afterId, limit: 7 });
        if (page.length === 0) break;
        assert.ok(page.length <= 7);
        seen.push(...page.map((r) => r.key));
        afterId = page[page.length - 1]!.id;
      }
      assert.deepEqual(seen, batch.map((r) => r.key));
      const cats = await j.listRecords({ fileIds: [f.id], targets: ['Category'], statuses: ['pending'], limit: 100 });
      assert.equal(cats.length, 12);
      assert.ok(cats.every((r) => r.target === 'Category'));
    });

    test('every query shape: several files, several statuses and targets, empty lists, paging across files', async () => {
      const f1 = await newFile(j);
      const other = await newFile(j);
      const f2 = await newFile(j);
      await j.addRecords(f1.id, [rec('M1'), rec('M2', { target: 'Category' }), rec('M3', { status: 'rejected', error: 'x' })]);
      await j.addRecords(other.id, [rec('O1')]);
      await j.addRecords(f2.id, [rec('M4'), rec('M5', { target: 'Family' })]);
      await j.addRecords(f1.id, [rec('M6')]);
      const keys = async (q: Parameters<Journal['listRecords']>[0]) => (await j.listRecords(q)).map((r) => r.key);
      assert.deepEqual(await keys({ fileIds: [f1.id, f2.id] }), ['M1', 'M2', 'M3', 'M4', 'M5', 'M6']);
      assert.deepEqual(await keys({ fileIds: [f2.id, f1.id], statuses: ['pending'] }), ['M1', 'M2', 'M4', 'M5', 'M6']);
      assert.deepEqual(await keys({ fileIds: [f1.id], statuses: ['pending', 'rejected'] }), ['M1', 'M2', 'M3', 'M6']);
      assert.deepEqual(await keys({ fileIds: [f1.id], statuses: ['rejected'] }), ['M3']);
      assert.deepEqual(await keys({ fileIds: [f1.id, f2.id], targets: ['Category', 'Family'] }), ['M2', 'M5']);
      assert.deepEqual(await keys({ fileIds: [f1.id, f2.id], targets: ['Product'], statuses: ['pending'] }), ['M1', 'M4', 'M6']);
      assert.deepEqual(await keys({ fileIds: [] }), []);
      assert.deepEqual(await keys({ fileIds: [f1.id], statuses: [] }), []);
      assert.deepEqual(await keys({ fileIds: [f1.id], targets: [] }), []);
      const paged: string[] = [];
      let afterId = 0;
      for (;;) {
        const page = await j.listRecords({ fileIds: [f1.id, f2.id], statuses: ['pending', 'rejected'], afterId, limit: 2 });
        if (!page.length) break;
        paged.push(...page.map((r) => r.key));
        afterId = page[page.length - 1]!.id;
      }
      assert.deepEqual(paged, ['M1', 'M2', 'M3', 'M4', 'M5', 'M6']);
      const byStatus = await j.listRecords({ statuses: ['rejected'] });
      assert.ok(byStatus.some((r) => r.key === 'M3'));
      assert.ok(byStatus.every((r) => r.status === 'rejected'));
      const counts = await j.countRecords({ fileIds: [f1.id, f2.id], targets: ['Product', 'Family'] });
      assert.equal(counts.pending, 4);
      assert.equal(counts.rejected, 1);
    });

    test('deleteRecords removes a file that was not sent; refuses one that was', async () => {
      const f = await newFile(j);
      await j.addRecords(f.id, [rec('R1'), rec('R2', { status: 'rejected', error: 'bad' })]);
      await j.deleteRecords(f.id);
      assert.deepEqual(await j.listRecords({ fileIds: [f.id] }), []);
      const g = await newFile(j);
      await j.addRecords(g.id, [rec('R3')]);
      const [r3] = await j.listRecords({ fileIds: [g.id] });
      await j.markSending(r3!.id);
      await assert.rejects(j.deleteRecords(g.id), (e: { code?: string }) => e.code === ErrorCode.JOURNAL);
      assert.equal((await j.listRecords({ fileIds: [g.id] })).length, 1);
    });

    test('findLatest and findRecordByWmsId', async () => {
      const f1 = await newFile(j);
      const f2 = await newFile(j);
      await j.addRecords(f1.id, [rec('FL')]);
      await j.addRecords(f2.id, [rec('FL')]);
      const [a] = await j.listRecords({ fileIds: [f1.id] });
      const [b] = await j.listRecords({ fileIds: [f2.id] });
      assert.equal(await j.findLatest('Product', 'FL'), undefined, 'pending records are not settled');
      await j.markSending(a!.id);
      await j.settle(a!.id, { status: 'sent', outcome: 'created', wmsId: 'wms-FL' });
      assert.equal((await j.findLatest('Product', 'FL'))?.id, a!.id);
      await j.markSending(b!.id);
      await j.settle(b!.id, { status: 'sent', outcome: 'unchanged', wmsId: 'wms-FL2' });
      assert.equal((await j.findLatest('Product', 'FL'))?.id, b!.id);
      assert.equal((await j.findLatest('Product', 'FL', { excludeFileId: f2.id }))?.id, a!.id);
      assert.equal(await j.findLatest('Category', 'FL'), undefined);
      assert.equal((await j.findRecordByWmsId('wms-FL'))?.id, a!.id);
      assert.equal(await j.findRecordByWmsId('nope'), undefined);
    });

    test('xref put / get / overwrite / delete', async () => {
      assert.equal(await j.getXref('Category', 'CAT1'), undefined);
      await j.putXref('Category', 'CAT1', 'id-1', 'h1');
      const x = await j.getXref('Category', 'CAT1');
      assert.equal(x?.wmsId, 'id-1');
      assert.equal(x?.payloadHash, 'h1');
      assert.equal(x?.resource, 'Category');
      assert.equal(x?.key, 'CAT1');
      assert.match(x?.updatedAt ?? '', ISO);
      await j.putXref('Category', 'CAT1', 'id-2', null);
      const y = await j.getXref('Category', 'CAT1');
      assert.equal(y?.wmsId, 'id-2');
      assert.equal(y?.payloadHash, null);
      assert.equal(await j.getXref('Family', 'CAT1'), undefined, 'keyed by resource too');
      await j.deleteXref('Category', 'CAT1');
      assert.equal(await j.getXref('Category', 'CAT1'), undefined);
      await j.deleteXref('Category', 'CAT1'); // deleting a missing entry is fine
    });

    test('meta get / set / overwrite', async () => {
      assert.equal(await j.getMeta('inventory.last'), undefined);
      await j.setMeta('inventory.last', '2026-01-01');
      await j.setMeta('inventory.last', '2026-02-01');
      assert.equal(await j.getMeta('inventory.last'), '2026-02-01');
      await j.setMeta('empty', '');
      assert.equal(await j.getMeta('empty'), '');
    });

    test('webhook events: dedup, listing, delivery', async () => {
      const f = await newFile(j);
      await j.addRecords(f.id, [rec('W1')]);
      const [w1] = await j.listRecords({ fileIds: [f.id] });
      const a = await j.addWebhookEvent({ dedupKey: 'evt-1', kind: 'picking.finished', body: '{"id":"evt-1"}', recordId: w1!.id });
      assert.equal(a.stored, true);
      const dup = await j.addWebhookEvent({ dedupKey: 'evt-1', kind: 'picking.finished', body: '{"id":"evt-1","again":true}' });
      assert.deepEqual(dup, { stored: false, id: a.id });
      const b = await j.addWebhookEvent({ dedupKey: 'evt-2', kind: 'receipt.finished', body: '{}' });
      assert.equal(b.stored, true);
      const und = await j.listWebhookEvents({ undeliveredOnly: true });
      assert.deepEqual(und.map((e) => e.dedupKey), ['evt-1', 'evt-2']);
      assert.equal(und[0]?.body, '{"id":"evt-1"}', 'the first body is kept');
      assert.equal(und[0]?.recordId, w1!.id);
      assert.equal(und[0]?.deliveredAt, null);
      assert.match(und[0]?.receivedAt ?? '', ISO);
      assert.equal((await j.listWebhookEvents({ limit: 1 })).length, 1);
      await j.markWebhookDelivered([a.id]);
      await j.markWebhookDelivered([]);
      assert.deepEqual((await j.listWebhookEvents({ undeliveredOnly: true })).map((e) => e.id), [b.id]);
      const all = await j.listWebhookEvents({});
      assert.match(all.find((e) => e.id === a.id)?.deliveredAt ?? '', ISO);
    });

    test('data survives close and reopen', async () => {
      const f = await newFile(j, 'sha-persist');
      await j.addRecords(f.id, [rec('S1')]);
      const [s1] = await j.listRecords({ fileIds: [f.id] });
      await j.markSending(s1!.id);
      await j.putXref('Product', 'S1', 'wms-S1', 'hs');
      await j.setMeta('persist', 'yes');
      await j.addWebhookEvent({ dedupKey: 'persist-evt', kind: 'k', body: 'b' });
      await j.close();
      await j.close(); // idempotent
      await assert.rejects(j.getMeta('persist'), (e: { code?: string }) => e.code === ErrorCode.JOURNAL, 'a closed journal refuses work');
      j = await open();
      assert.equal((await j.getFile(f.id))?.sha256, 'sha-persist');
      assert.equal((await j.listRecords({ fileIds: [f.id] }))[0]?.status, 'sending');
      assert.equal(await j.recoverInFlight([f.id]), 1);
      assert.equal((await j.getXref('Product', 'S1'))?.wmsId, 'wms-S1');
      assert.equal(await j.getMeta('persist'), 'yes');
      assert.equal((await j.addWebhookEvent({ dedupKey: 'persist-evt', kind: 'k', body: 'b' })).stored, false);
      assert.equal((await newFile(j, 'sha-persist')).status, 'duplicate');
    });
  });
}

// ---- SQLite ---------------------------------------------------------------------------------------
let tmp: { dir: string; cleanup: () => Promise<void> };
before(async () => {
  tmp = await makeTempDir('wmsbridge-journal-');
});
after(async () => {
  await tmp.cleanup();
});

runJournalContract('sqlite', () => createSqliteJournal({ path: join(tmp.dir, 'state', 'journal.db') }));

describe('sqlite specifics', () => {
  test('openJournal opens sqlite; schema version recorded; WAL and foreign keys on', async () => {
    const path = join(tmp.dir, 'spec', 'journal.db');
    const j = await openJournal({ kind: 'sqlite', path });
    assert.equal(j.location, `sqlite:${path}`);
    await j.close();
    const { default: Database } = await import('better-sqlite3');
    const db = new Database(path, { readonly: true });
    try {
      assert.equal((db.prepare('SELECT MAX(version) AS v FROM schema_version').get() as { v: number }).v, SCHEMA_VERSION);
      assert.equal(db.pragma('journal_mode', { simple: true }), 'wal');
    } finally {
      db.close();
    }
    // reopening does not re-apply migrations
    const again = await openJournal({ kind: 'sqlite', path });
    await again.close();
    const db2 = new Database(path, { readonly: true });
    try {
      assert.equal((db2.prepare('SELECT COUNT(*) AS n FROM schema_version').get() as { n: number }).n, SCHEMA_VERSION);
    } finally {
      db2.close();
    }
  });

  test('a version-1 database is migrated forward, its data kept', async () => {
    const path = join(tmp.dir, 'v1', 'journal.db');
    const { mkdirSync } = await import('node:fs');
    mkdirSync(join(tmp.dir, 'v1'));
    const { default: Database } = await import('better-sqlite3');
    const { MIGRATIONS } = await import('../../src/journal/sqlite.js');
    const db = new Database(path);
    db.exec('CREATE TABLE schema_version (version INTEGER NOT NULL, applied_at TEXT NOT NULL)');
    db.exec(MIGRATIONS[0]!);
    db.prepare('INSERT INTO schema_version VALUES (1, ?)').run(new Date().toISOString());
    db.prepare("INSERT INTO meta VALUES ('kept', 'yes')").run();
    db.close();
    const j = await createSqliteJournal({ path });
    assert.equal(await j.getMeta('kept'), 'yes');
    await j.close();
    const check = new Database(path, { readonly: true });
    try {
      assert.equal((check.prepare('SELECT MAX(version) AS v FROM schema_version').get() as { v: number }).v, SCHEMA_VERSION);
      assert.ok(SCHEMA_VERSION >= 2);
      assert.ok(check.prepare("SELECT name FROM sqlite_master WHERE type = 'index' AND name = 'records_by_file'").get());
    } finally {
      check.close();
    }
  });

  test('a database from a newer wmsbridge is refused with a clear message', async () => {
    const path = join(tmp.dir, 'newer', 'journal.db');
    await (await createSqliteJournal({ path })).close();
    const { default: Database } = await import('better-sqlite3');
    const db = new Database(path);
    db.prepare('INSERT INTO schema_version (version, applied_at) VALUES (?, ?)').run(SCHEMA_VERSION + 5, new Date().toISOString());
    db.close();
    await assert.rejects(createSqliteJournal({ path }), (e: { code?: string; message: string }) => {
      assert.equal(e.code, ErrorCode.JOURNAL);
      assert.match(e.message, /newer than this wmsbridge supports/);
      return true;
    });
  });

  test('postgres is refused as not implemented yet (ConfigError)', async () => {
    await assert.rejects(openJournal({ kind: 'postgres', url: 'postgres://localhost/x' }), (e: { code?: string; message: string }) => {
      assert.equal(e.code, ErrorCode.CONFIG);
      assert.match(e.message, /not implemented yet/);
      return true;
    });
  });

  test('two connections to one file: a duplicate is detected across them', async () => {
    const path = join(tmp.dir, 'two', 'journal.db');
    const a = await createSqliteJournal({ path });
    const b = await createSqliteJournal({ path });
    try {
      const fa = await a.addFile({ channel: 'c', name: 'x', path: '/x', size: 1, sha256: 'same', runId: 'r' });
      const fb = await b.addFile({ channel: 'c', name: 'x', path: '/x', size: 1, sha256: 'same', runId: 'r' });
      assert.equal(fb.status, 'duplicate');
      assert.equal(fb.duplicateOf, fa.id);
    } finally {
      await a.close();
      await b.close();
    }
  });
});
