/**
 * The SQLite journal's writer thread merges the batches waiting for it into one transaction (issue 19):
 * a real journal file, its writer thread held up by a write lock another connection takes, batches
 * posted meanwhile, then every write's outcome checked one by one.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { makeTempDir } from '../helpers/tmp.js';
import { createSqliteJournal } from '../../src/journal/sqlite.js';

const turn = (): Promise<void> => new Promise((r) => setImmediate(r));

test('batches posted while the writer thread is busy commit in one transaction, each write answered with its own outcome', async () => {
  const tmp = await makeTempDir('wmsbridge-writer-merge-');
  const path = join(tmp.dir, 'journal.db');
  const journal = await createSqliteJournal({ path });
  const other = new Database(path);
  try {
    await journal.warmUp?.();
    const before = journal.writeStats();

    // another connection holds the write lock: the thread's first batch waits for it (busy timeout)
    other.pragma('busy_timeout = 10000');
    other.exec('BEGIN IMMEDIATE');
    const first = journal.addWebhookEvent({ dedupKey: 'm-1', kind: 'receipt', body: '{"n":1}' });
    const pending: Array<Promise<unknown>> = [first];
    await turn();
    // four more batches, one per turn of the event loop: they wait on the thread's port
    const second = journal.addWebhookEvent({ dedupKey: 'm-2', kind: 'receipt', body: '{"n":2}' });
    await turn();
    const missing = journal.markSending(987_654); // fails alone: no such record
    const resend = journal.addWebhookEvent({ dedupKey: 'm-2', kind: 'receipt', body: '{"n":2,"again":true}' });
    await turn();
    const third = journal.addWebhookEvent({ dedupKey: 'm-3', kind: 'stock', body: '{"n":3}' });
    await turn();
    const again = journal.addWebhookEvent({ dedupKey: 'm-1', kind: 'receipt', body: '{"n":1}' });
    pending.push(second, resend, third, again);
    missing.catch(() => undefined);
    await turn();
    other.exec('COMMIT');

    const [a, b, r, c, d] = (await Promise.all(pending)) as Array<{ stored: boolean; id: number; recordId: number | null }>;
    await assert.rejects(missing, /record 987654 not found/);
    assert.equal(a!.stored, true);
    assert.equal(b!.stored, true);
    assert.deepEqual(r, { stored: false, id: b!.id, recordId: null }, 'a resend in the same transaction as its first copy is stored once');
    assert.equal(c!.stored, true);
    assert.deepEqual(d, { stored: false, id: a!.id, recordId: null });

    const stats = journal.writeStats();
    assert.equal(stats.batches - before.batches, 5, 'five batches left the event loop');
    // the first batch reaches the thread before the others (2 transactions), or, on a loaded machine, after them (1)
    const transactions = (stats.transactions ?? 0) - (before.transactions ?? 0);
    assert.ok(transactions >= 1 && transactions <= 2, `the batches that waited committed in one transaction (${transactions} transactions for 5 batches)`);
    const rows = (await journal.listWebhookEvents({})).map((e) => [e.dedupKey, e.body]);
    assert.deepEqual(rows, [
      ['m-1', '{"n":1}'],
      ['m-2', '{"n":2}'],
      ['m-3', '{"n":3}'],
    ]);
  } finally {
    other.close();
    await journal.close();
    await tmp.cleanup();
  }
});
