/**
 * The journal's policy (src/journal/policy.ts) over a fake store that records what it is asked: the rules
 * both stores share are decided above them (the contract suite, test/contract/journal.test.ts, runs the
 * policy over the two real stores).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createJournal, DUPLICATE_OF_STATUSES } from '../../src/journal/policy.js';
import type { FileInsert, JournalStore, JournalWrite } from '../../src/journal/store.js';
import { ErrorCode } from '../../src/shared/errors.js';

function fakeStore(overrides: Partial<JournalStore> = {}): { store: JournalStore; calls: Array<[string, unknown[]]> } {
  const calls: Array<[string, unknown[]]> = [];
  const base: Partial<JournalStore> = {
    location: 'fake:store',
    maxBatchesInFlight: 1,
    groupCommitsWebhookEvents: true,
    commitWrites: (batch: JournalWrite[]) => batch.map(() => ({ ok: true, value: undefined })),
    close: async () => {},
    ...overrides,
  };
  const store = new Proxy(base, {
    get(target, prop: string) {
      const v = (target as Record<string, unknown>)[prop];
      if (typeof v !== 'function') {
        if (v === undefined && typeof prop === 'string' && prop !== 'then') return (...args: unknown[]) => (calls.push([prop, args]), undefined);
        return v;
      }
      return (...args: unknown[]) => (calls.push([prop, args]), (v as (...a: unknown[]) => unknown)(...args));
    },
  }) as JournalStore;
  return { store, calls };
}

test('a query with an empty list matches nothing: the store is not asked', async () => {
  const { store, calls } = fakeStore();
  const j = createJournal(store);
  assert.deepEqual(await j.listRecords({ fileIds: [] }), []);
  const counts = await j.countRecords({ statuses: [] });
  assert.equal(
    Object.values(counts).reduce((a, b) => a + b, 0),
    0,
  );
  assert.equal(counts.in_doubt, 0);
  assert.equal(await j.requeue([]), 0);
  await j.addRecords(1, []);
  await j.markWebhookDelivered([]);
  assert.deepEqual(calls, []);
});

test('resume: records left sending become in doubt', async () => {
  const { store, calls } = fakeStore({ moveStatus: (() => 3) as JournalStore['moveStatus'] });
  const j = createJournal(store);
  assert.equal(await j.recoverInFlight([7]), 3);
  assert.deepEqual(calls, [['moveStatus', ['sending', 'in_doubt', [7]]]]);
});

test('addFile: a forced file is never a duplicate; otherwise an earlier claimed, mapped or done file makes it one', async () => {
  const inserts: FileInsert[] = [];
  const { store } = fakeStore({ insertFile: ((i: FileInsert) => (inserts.push(i), { id: 1 })) as unknown as JournalStore['insertFile'] });
  const j = createJournal(store);
  const file = { channel: 'c', name: 'n', path: '/p', size: 1, sha256: 's', runId: 'r' };
  await j.addFile(file);
  await j.addFile({ ...file, force: true, owner: 'o', leaseTtlMs: 500 });
  assert.deepEqual(inserts[0]!.duplicateAmong, DUPLICATE_OF_STATUSES);
  assert.equal(inserts[0]!.leaseTtlMs, null);
  assert.equal(inserts[1]!.duplicateAmong, null);
  assert.equal(inserts[1]!.leaseTtlMs, 500);
  assert.equal(inserts[0]!.statusFor(null), 'claimed');
  assert.equal(inserts[0]!.statusFor(12), 'duplicate');
  await assert.rejects(
    j.addFile({ ...file, owner: 'o', leaseTtlMs: 0 }),
    (e: { code?: string; message: string }) => e.code === ErrorCode.JOURNAL && /fake:store: addFile: ttlMs/.test(e.message),
  );
  assert.equal(inserts.length, 2, 'a bad ttl never reaches the store');
});

test('deleteRecords is refused when a record left the building; errors name the store and the operation', async () => {
  const { store } = fakeStore({
    deleteUntouchedRecords: (() => 2) as JournalStore['deleteUntouchedRecords'],
    getMeta: (() => {
      throw new Error('disk on fire');
    }) as JournalStore['getMeta'],
  });
  const j = createJournal(store);
  await assert.rejects(j.deleteRecords(5), /journal fake:store: deleteRecords: file 5 has 2 record\(s\) that were sent or are in flight/);
  await assert.rejects(
    j.getMeta('k'),
    (e: { code?: string; message: string }) => e.code === ErrorCode.JOURNAL && e.message === 'journal fake:store: getMeta: disk on fire',
  );
});

test('group commit: writes issued together commit in one batch, a write fails alone; close drains them first', async () => {
  const batches: JournalWrite[][] = [];
  let closedAfter = -1;
  const { store } = fakeStore({
    commitWrites: ((batch: JournalWrite[]) => {
      batches.push(batch);
      return batch.map((w) =>
        w.kind === 'markSending' && w.recordId === 404 ? { ok: false, error: new Error('record 404 not found') } : { ok: true, value: undefined },
      );
    }) as JournalStore['commitWrites'],
    close: async () => {
      closedAfter = batches.length;
    },
  });
  const j = createJournal(store);
  const results = await Promise.allSettled([j.markSending(1), j.markSending(404), j.settle(1, { status: 'sent', outcome: 'created' })]);
  assert.equal(batches.length, 1);
  assert.deepEqual(
    results.map((r) => r.status),
    ['fulfilled', 'rejected', 'fulfilled'],
  );
  assert.match(((results[1] as PromiseRejectedResult).reason as Error).message, /^journal fake:store: markSending: record 404 not found$/);
  const late = j.putXref('Category', 'K', 'id-1', null);
  await j.close();
  await late;
  assert.equal(closedAfter, 2, 'the write issued before close committed before the store closed');
  await assert.rejects(j.markSending(2), /closed/);
  await assert.rejects(j.getFile(1), /fake:store: getFile: the journal is closed/);
});
