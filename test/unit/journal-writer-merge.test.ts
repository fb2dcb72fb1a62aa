/**
 * The SQLite journal's writer thread merges the batches waiting for it into one transaction (issue 19):
 * a real journal file, its writer thread held up by a write lock another connection takes, batches
 * posted meanwhile, then every write's outcome checked one by one.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { withSqliteJournalAndOther } from '../helpers/journal.js';
import type { NewRecord, WebhookEventStored } from '../../src/journal/types.js';

const turn = (): Promise<void> => new Promise((r) => setImmediate(r));

test('batches posted while the writer thread is busy commit in one transaction, each write answered with its own outcome', async () => {
  await withSqliteJournalAndOther('wmsbridge-writer-merge-', async ({ journal, other }) => {
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

    const [a, b, r, c, d] = (await Promise.all(pending)) as WebhookEventStored[];
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
  });
});

test('a batch of new records crosses to the writer thread as it is, merges with the send loop JSON batches, and reads back exactly', async () => {
  await withSqliteJournalAndOther('wmsbridge-writer-insert-', async ({ journal, other, dir }) => {
    const file = await journal.addFile({ channel: 'cadastros', name: 'CATS.csv', path: join(dir, 'CATS.csv'), size: 1, sha256: 'x', runId: 'r' });
    await journal.warmUp?.();
    const before = journal.writeStats();
    // values JSON and structured cloning could treat differently: quotes, backslashes, NUL, accents and an emoji
    // (and, inside the JSON columns, a lone surrogate: a text column stores UTF-8, where it cannot be, by either
    // path); numbers, booleans, nulls and nested arrays in the payload; optional columns left out
    const odd = 'aspas " barra \\ nul \u0000 só ação 🚚';
    const records: NewRecord[] = [
      {
        target: 'Category',
        op: 'create',
        key: `K-${odd}`,
        source: { line: 2 },
        mapping: 'm',
        payload: { codeERP: `${odd} \ud800`, n: 1.5, ok: true, none: null, list: [1, 'dois', [3]] },
        payloadHash: 'h1',
        raw: [{ line: 2, fields: { codigo: odd, nome: '' }, cells: [odd, ''], text: `${odd};` }],
      },
      {
        target: 'Category',
        op: 'create',
        key: 'K-2',
        source: { line: 3, lineEnd: 4 },
        mapping: 'm',
        payload: {},
        payloadHash: 'h2',
        attachmentPath: 'a/b.pdf',
      },
      {
        target: 'Category',
        op: 'create',
        key: 'K-3',
        source: { line: 5 },
        mapping: 'm',
        payload: { codeERP: '' },
        payloadHash: 'h3',
        status: 'rejected',
        error: 'line 5: field codeERP: empty',
        reason: { code: 'required', params: { field: 'codeERP' } },
      },
    ];
    other.pragma('busy_timeout = 10000');
    other.exec('BEGIN IMMEDIATE');
    const inserted = journal.addRecords(file.id, records);
    await turn();
    const event = journal.addWebhookEvent({ dedupKey: 'w-1', kind: 'receipt', body: '{"n":1}' });
    await turn();
    other.exec('COMMIT');
    const lastId = await inserted;
    assert.equal((await event).stored, true);
    const stats = journal.writeStats();
    const transactions = (stats.transactions ?? 0) - (before.transactions ?? 0);
    assert.ok(transactions >= 1 && transactions <= 2, `${transactions} transactions for 2 batches`);

    const rows = await journal.listRecords({ fileIds: [file.id] });
    assert.equal(rows.length, 3);
    assert.equal(rows[2]!.id, lastId);
    const pick = (r: Pick<NewRecord, 'target' | 'op' | 'key' | 'source' | 'mapping' | 'payload' | 'payloadHash' | 'attachmentPath' | 'raw'>) => ({
      target: r.target,
      op: r.op,
      key: r.key,
      source: r.source,
      mapping: r.mapping,
      payload: r.payload,
      payloadHash: r.payloadHash,
      ...(r.attachmentPath !== undefined ? { attachmentPath: r.attachmentPath } : {}),
      ...(r.raw !== undefined ? { raw: r.raw } : {}),
    });
    assert.deepEqual(rows.map(pick), records.map(pick));
    assert.deepEqual(
      rows.map((r) => [r.status, r.error ?? null, r.reason ?? null]),
      [
        ['pending', null, null],
        ['pending', null, null],
        ['rejected', 'line 5: field codeERP: empty', { code: 'required', params: { field: 'codeERP' } }],
      ],
    );
  });
});
