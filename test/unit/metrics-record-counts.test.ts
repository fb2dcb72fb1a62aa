/**
 * /metrics' records by status (app/metrics.ts createRecordCounts): the statuses that wait or need a person are counted
 * at every scrape; sent, rejected and failed (nearly the whole journal: millions after 90 days) at most once a minute,
 * one recount shared by concurrent scrapes, a failed recount not kept. A real SQLite journal, changed behind its back
 * as another run would.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { createSqliteJournal } from '../../src/journal/sqlite.js';
import type { Journal } from '../../src/journal/types.js';
import { createRecordCounts, SETTLED_COUNTS_MAX_AGE_MS } from '../../src/app/metrics.js';
import { makeTempDir } from '../helpers/tmp.js';
import { replacingMethod } from '../helpers/journal.js';

let tmp: { dir: string; cleanup: () => Promise<void> };
let path: string;
let journal: Journal;
let db: Database.Database;

before(async () => {
  tmp = await makeTempDir('wmsbridge-record-counts-');
  path = join(tmp.dir, 'journal.db');
  journal = await createSqliteJournal({ path, writer: 'inline' });
  db = new Database(path);
  db.prepare(
    `INSERT INTO files (channel, name, path, size, sha256, status, created_at, updated_at)
     VALUES ('cadastros', 'CAT.csv', '/srv/CAT.csv', 1, 'sha', 'mapped', '2026-11-01T00:00:00Z', '2026-11-01T00:00:00Z')`,
  ).run();
  const insert = db.prepare(
    `INSERT INTO records (file_id, target, op, key, source, mapping, payload, payload_hash, status, attempts, updated_at)
     VALUES (1, 'Category', 'create', ?, '{}', 'm', '{}', 'h', ?, 0, '2026-11-01T00:00:00Z')`,
  );
  db.transaction(() => {
    for (let i = 0; i < 100; i++) insert.run(`K${i}`, i < 60 ? 'sent' : i < 70 ? 'failed' : i < 72 ? 'in_doubt' : 'pending');
  })();
});
after(async () => {
  db.close();
  await journal.close();
  await tmp.cleanup();
});

/** what another run does meanwhile: `n` pending records delivered */
const deliver = (n: number): void => {
  db.prepare(`UPDATE records SET status = 'sent' WHERE id IN (SELECT id FROM records WHERE status = 'pending' ORDER BY id LIMIT ?)`).run(n);
};

test('waiting statuses are fresh at every scrape; sent, rejected and failed are recounted at most once a minute', async () => {
  let clock = 1_000_000;
  const counts = createRecordCounts(journal, { now: () => clock });
  assert.deepEqual(await counts(), { pending: 28, sending: 0, sent: 60, rejected: 0, failed: 10, held: 0, in_doubt: 2 });
  deliver(8);
  clock += 1_000;
  const soon = await counts();
  assert.equal(soon.pending, 20, 'pending: counted again');
  assert.equal(soon.sent, 60, 'sent: the count of a second ago');
  clock += SETTLED_COUNTS_MAX_AGE_MS;
  assert.deepEqual(await counts(), { pending: 20, sending: 0, sent: 68, rejected: 0, failed: 10, held: 0, in_doubt: 2 });
});

test('concurrent scrapes share one recount of the settled statuses; a failed recount is tried again at the next scrape', async () => {
  let settledCounts = 0;
  let failNext = true;
  const counting = replacingMethod(journal, 'countRecords', (real) => (q) => {
    if (q.statuses?.includes('sent')) {
      settledCounts++;
      if (failNext) {
        failNext = false;
        return Promise.reject(new Error('database is locked'));
      }
    }
    return real(q);
  });
  const counts = createRecordCounts(counting, { now: () => 5_000_000 });
  await assert.rejects(counts(), /database is locked/);
  const [a, b, c] = await Promise.all([counts(), counts(), counts()]);
  assert.equal(settledCounts, 2, 'one failed count, then one for the three scrapes');
  assert.deepEqual(a, b);
  assert.deepEqual(b, c);
  assert.equal(a.sent, 68);
});
