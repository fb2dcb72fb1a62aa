/**
 * The send loop reads the cross-reference a page at a time (journal/xref-memo.ts, issue 19): one query per page
 * instead of one per record, and getXref must still answer exactly what the store holds for this process. The memo
 * on its own (a read the test controls: a write that lands while the read is in flight), then a real SQLite journal
 * with a second connection holding the write lock (a write in flight during the read ahead).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { withSqliteJournalAndOther } from '../helpers/journal.js';
import { createXrefMemo, MEMO_MAX_ENTRIES } from '../../src/journal/xref-memo.js';
import type { RecordRow, XrefEntry } from '../../src/journal/types.js';
import { createRefResolver } from '../../src/push/refs.js';
import { createReferenceCache } from '../../src/push/reference-cache.js';
import { prefetchXrefsOf } from '../../src/push/send-queue.js';
import { createLogger } from '../../src/shared/logger.js';

const entry = (key: string, wmsId: string): XrefEntry => ({ resource: 'Product', key, wmsId, payloadHash: null, updatedAt: '2026-11-27T00:00:00.000Z' });

test('memo: one read for a page, missing keys remembered as missing, keys a store cannot give back as asked never read ahead', async () => {
  const memo = createXrefMemo({ maxAgeMs: 1000 });
  const reads: string[][] = [];
  const read = (ks: string[]) => {
    reads.push(ks);
    return Promise.resolve(ks.filter((k) => k !== 'B').map((k) => entry(k, `w-${k}`)));
  };
  await memo.prefetch('Product', ['A', 'B', 'A', 'nul\u0000', 'half-\ud800'], read);
  await memo.prefetch('Product', ['A', 'B'], read);
  assert.deepEqual(reads, [['A', 'B']], 'once, without duplicates, without the keys PostgreSQL text would change');
  assert.deepEqual(memo.lookup('Product', 'A'), { entry: entry('A', 'w-A') });
  assert.deepEqual(memo.lookup('Product', 'B'), { entry: undefined }, 'read and missing');
  assert.equal(memo.lookup('Product', 'nul\u0000'), null, 'not read ahead: asked one by one');
  assert.equal(memo.lookup('Category', 'A'), null, 'another resource');
});

test('memo: a write forgets its key; a key written while the read ahead was in flight, or with a write in flight, is not kept', async () => {
  const memo = createXrefMemo({ maxAgeMs: 1000 });
  await memo.prefetch('Product', ['A'], (ks) => Promise.resolve(ks.map((k) => entry(k, 'old'))));
  const doneA = memo.writing('Product', 'A');
  assert.equal(memo.lookup('Product', 'A'), null, 'forgotten when the write starts');
  await memo.prefetch('Product', ['A'], () => Promise.resolve([entry('A', 'old')]));
  assert.equal(memo.lookup('Product', 'A'), null, 'a write in flight: its key is not read ahead');
  doneA();

  // the read answers with what it saw before a write that committed while it was in flight (another connection)
  let answer!: (e: XrefEntry[]) => void;
  const inFlight = memo.prefetch('Product', ['B', 'C'], () => new Promise<XrefEntry[]>((r) => (answer = r)));
  const doneB = memo.writing('Product', 'B');
  doneB();
  answer([entry('B', 'before-the-write'), entry('C', 'c')]);
  await inFlight;
  assert.equal(memo.lookup('Product', 'B'), null, 'written meanwhile: the store is asked again');
  assert.deepEqual(memo.lookup('Product', 'C'), { entry: entry('C', 'c') });
});

test('memo: entries serve for maxAgeMs, and the memo stays bounded', async () => {
  let t = 0;
  const memo = createXrefMemo({ maxAgeMs: 250, now: () => t });
  await memo.prefetch('Product', ['A'], (ks) => Promise.resolve(ks.map((k) => entry(k, 'w'))));
  t = 250;
  assert.ok(memo.lookup('Product', 'A'), 'still young enough');
  t = 251;
  const again: string[][] = [];
  await memo.prefetch('Product', ['A'], (ks) => {
    again.push(ks);
    return Promise.resolve(ks.map((k) => entry(k, 'newer')));
  });
  assert.deepEqual(again, [['A']], 'an entry too old is read again by the next read ahead');
  assert.equal(memo.lookup('Product', 'A')?.entry?.wmsId, 'newer');
  t = 502;
  assert.equal(memo.lookup('Product', 'A'), null, 'too old: another process may have written it');
  const many = Array.from({ length: MEMO_MAX_ENTRIES }, (_, i) => `K${i}`);
  await memo.prefetch('Product', many, () => Promise.resolve([]));
  await memo.prefetch('Product', ['one-more'], () => Promise.resolve([]));
  assert.ok(memo.size() <= MEMO_MAX_ENTRIES, `${memo.size()} entries`);
  assert.ok(memo.lookup('Product', 'one-more'), 'the newest entry is kept');
});

test('journal: getXref answers from the page read ahead, and a write in flight during the read ahead is seen once committed', async () => {
  await withSqliteJournalAndOther('wmsbridge-xref-memo-', async ({ journal, other }) => {
    await journal.putXref('Category', 'C-1', 'wms-1', 'h1');
    await journal.prefetchXrefs('Category', ['C-1', 'C-2']);
    // a change this process did not make (SQLite: none happens, the state lock keeps other processes out) is not
    // seen: the answers come from the page read ahead, not from one query per record
    other.prepare("UPDATE xref SET wms_id = 'changed-behind' WHERE key = 'C-1'").run();
    assert.equal((await journal.getXref('Category', 'C-1'))?.wmsId, 'wms-1');
    assert.equal(await journal.getXref('Category', 'C-2'), undefined);

    // a write of C-2 waits for the write lock; the read ahead meanwhile sees the store without it
    other.pragma('busy_timeout = 10000');
    other.exec('BEGIN IMMEDIATE');
    const put = journal.putXref('Category', 'C-3', 'wms-3', null);
    await journal.prefetchXrefs('Category', ['C-3', 'C-4']);
    other.exec('COMMIT');
    await put;
    assert.equal((await journal.getXref('Category', 'C-3'))?.wmsId, 'wms-3', 'the committed write, not the read ahead');
    assert.equal(await journal.getXref('Category', 'C-4'), undefined);
  });
});

test("a page's refs are read ahead with it; a ref found missing there is looked up again in the store before it is refused", async () => {
  await withSqliteJournalAndOther('wmsbridge-xref-refs-', async ({ journal, other }) => {
    await journal.putXref('Category', 'C-1', 'wms-c1', 'h');
    const family = (key: string, category: string): RecordRow =>
      ({ id: 1, target: 'Family', key, payload: { codeERP: key, categoryID: { $ref: { resource: 'Category', value: category } } } }) as unknown as RecordRow;
    await prefetchXrefsOf(journal, createLogger({ level: 'silent' }), [family('F-1', 'C-1'), family('F-2', 'C-2')]);
    // read ahead: C-1's entry and C-2's absence now answer from memory (a change behind the journal's back is not seen)
    other.prepare("UPDATE xref SET wms_id = 'changed-behind' WHERE key = 'C-1'").run();
    assert.equal((await journal.getXref('Category', 'C-1'))?.wmsId, 'wms-c1', 'the ref key was read ahead with the page');
    // another instance (PostgreSQL: a shared store) settles C-2 after the read ahead: the resolver's second look asks the store
    other
      .prepare("INSERT INTO xref (resource, key, wms_id, payload_hash, updated_at) VALUES ('Category', 'C-2', 'wms-c2', NULL, '2026-11-27T00:00:00.000Z')")
      .run();
    assert.equal(await journal.getXref('Category', 'C-2'), undefined, 'the read ahead still answers: missing');
    assert.equal((await journal.getXref('Category', 'C-2', { fresh: true }))?.wmsId, 'wms-c2');
    const resolver = createRefResolver({ journal, client: null, refCache: createReferenceCache(null), failures: new Map() });
    const r = await resolver.resolve({ codeERP: 'F-2', categoryID: { $ref: { resource: 'Category', value: 'C-2' } } });
    assert.deepEqual(r, { ok: true, payload: { codeERP: 'F-2', categoryID: 'wms-c2' } });
  });
});
