/**
 * A journal-wide count by status on the SQLite store (what `watch` answers /metrics with at each scrape, and a run's
 * report asks) is counted by slices of ids with the event loop served between them: one GROUP BY held the loop for
 * the whole journal (~38 ns a record: half a second at 12 M records, webhooks and requests waiting).
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { createSqliteJournal } from '../../src/journal/index.js';
import type { Journal, RecordStatus } from '../../src/journal/index.js';
import { makeTempDir } from '../helpers/tmp.js';
import { loopTurnsDuring } from '../helpers/loop.js';

const N = 350_000;
let dir: { dir: string; cleanup: () => Promise<void> };
let path: string;
let journal: Journal;

/** status of the synthetic record i (1-based), spread over every slice */
const statusOf = (i: number): RecordStatus =>
  i % 1000 === 0 ? 'rejected' : i % 5000 === 1 ? 'pending' : i % 7919 === 0 ? 'in_doubt' : i % 50_000 === 7 ? 'held' : 'sent';

before(async () => {
  dir = await makeTempDir();
  path = join(dir.dir, 'journal.db');
  const j = await createSqliteJournal({ path });
  const f1 = await j.addFile({ channel: 'c', name: 'a.csv', path: '/a', size: 1, sha256: 'a'.repeat(64), runId: 'r' });
  const f2 = await j.addFile({ channel: 'c', name: 'b.csv', path: '/b', size: 1, sha256: 'b'.repeat(64), runId: 'r' });
  await j.close();
  // N records written straight into the file (the journal's own writes would take minutes at this size)
  const db = new Database(path);
  db.pragma('synchronous = OFF');
  const insert = db.prepare(
    `INSERT INTO records (file_id, target, op, key, source, mapping, payload, payload_hash, status, updated_at)
     VALUES (?, 'Category', 'upsert', ?, '{}', 'm', '{}', 'h', ?, '2026-11-28T00:00:00Z')`,
  );
  db.transaction(() => {
    for (let i = 1; i <= N; i++) insert.run(i <= N / 2 ? f1.id : f2.id, `K${i}`, statusOf(i));
  })();
  // a hole in the ids (a pruned or re-mapped range) and a last slice shorter than the others
  db.prepare('DELETE FROM records WHERE id BETWEEN 120000 AND 180000').run();
  db.close();
  journal = await createSqliteJournal({ path });
});

after(async () => {
  await journal?.close();
  await dir?.cleanup();
});

function expected(statuses?: RecordStatus[]): Record<string, number> {
  const db = new Database(path, { readonly: true });
  try {
    const rows = db.prepare('SELECT status, COUNT(*) AS n FROM records GROUP BY status').all() as Array<{ status: string; n: number }>;
    const out: Record<string, number> = {};
    for (const r of rows) if (!statuses || statuses.includes(r.status as RecordStatus)) out[r.status] = r.n;
    return out;
  } finally {
    db.close();
  }
}

const nonZero = (c: Record<string, number>): Record<string, number> => Object.fromEntries(Object.entries(c).filter(([, n]) => n > 0));

test('the whole journal by status: every record counted once, across files, a hole in the ids and a short last slice', async () => {
  const counts = await journal.countRecords({});
  assert.deepEqual(nonZero(counts), expected());
  assert.equal(
    Object.values(counts).reduce((a, b) => a + b, 0),
    N - 60_001,
  );
  assert.ok(counts.held > 0 && counts.in_doubt > 0 && counts.pending > 0, 'the fixture spreads several statuses');
});

test('a journal-wide count of some statuses counts only those', async () => {
  const counts = await journal.countRecords({ statuses: ['pending', 'held', 'in_doubt'] });
  assert.deepEqual(nonZero(counts), expected(['pending', 'held', 'in_doubt']));
  assert.equal(counts.sent, 0);
});

test('the event loop turns between the slices of a journal-wide count', async () => {
  const { value: counts, turns } = await loopTurnsDuring(() => journal.countRecords({}));
  assert.equal(counts.sent, expected().sent);
  // 350,000 ids in slices of 100,000: the loop turns at least twice before the count ends (never, in one statement)
  assert.ok(turns >= 2, `the loop turned ${turns} time(s) while counting`);
});

test('an empty journal counts nothing', async () => {
  const d = await makeTempDir();
  const j = await createSqliteJournal({ path: join(d.dir, 'empty.db') });
  try {
    assert.deepEqual(nonZero(await j.countRecords({})), {});
  } finally {
    await j.close();
    await d.cleanup();
  }
});
