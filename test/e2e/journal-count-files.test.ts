/**
 * `watch` answers /metrics with the journal's files by status at every scrape. They were listed (every file's row,
 * path and error included) to be counted: 50,000 files, 90 days of a busy share, held the daemon's event loop 200 ms
 * a scrape. They are counted in the status index now, and `status` reads only the files it names.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { createSqliteJournal, COUNT_FILES_BY_STATUS } from '../../src/journal/sqlite.js';
import { makeTempDir } from '../helpers/tmp.js';
import { runCli } from '../helpers/cli.js';

const N = 50_000;
let tmp: { dir: string; cleanup: () => Promise<void> };
let path: string;

before(async () => {
  tmp = await makeTempDir('wmsbridge-count-files-');
  path = join(tmp.dir, 'state', 'journal.db');
  await (await createSqliteJournal({ path })).close();
  // written straight into the file: the journal's own claims would take minutes at this size
  const db = new Database(path);
  const insert = db.prepare(
    `INSERT INTO files (channel, name, path, size, sha256, status, error, run_id, created_at, updated_at)
     VALUES ('cadastros', ?, ?, 1000, ?, ?, ?, 'run', '2026-11-01T00:00:00Z', '2026-11-01T00:00:00Z')`,
  );
  db.transaction(() => {
    for (let i = 0; i < N; i++) {
      const status = i % 1000 === 0 ? 'error' : i % 250 === 1 ? 'duplicate' : 'done';
      insert.run(`CAT_${i}.csv`, `/srv/archive/cadastros/CAT_${i}.csv`, `sha-${i}`, status, status === 'error' ? `line 2: bad ${i}` : null);
    }
  })();
  db.close();
});
after(async () => tmp.cleanup());

test('files are counted by status in the status index, no file row read', async () => {
  const db = new Database(path, { readonly: true });
  try {
    const plan = (db.prepare(`EXPLAIN QUERY PLAN ${COUNT_FILES_BY_STATUS}`).all() as Array<{ detail: string }>).map((r) => r.detail).join(' | ');
    assert.match(plan, /USING COVERING INDEX files_by_status/, plan);
  } finally {
    db.close();
  }
  const j = await createSqliteJournal({ path });
  try {
    assert.deepEqual(await j.countFiles(), { claimed: 0, mapped: 0, done: 49_750, error: 50, duplicate: 200 });
  } finally {
    await j.close();
  }
});

test('status counts the files and lists only those it names (the last errors)', { timeout: 60_000 }, async () => {
  const config = join(tmp.dir, 'wmsbridge.config.json');
  const { writeFile } = await import('node:fs/promises');
  await writeFile(config, JSON.stringify({ inboxDir: 'inbox', outboxDir: 'outbox', mappingsDir: 'mappings', stateDir: 'state', channels: [] }));
  const r = await runCli(['status', '--config', config, '--json', '--limit', '3']);
  assert.equal(r.code, 0, r.stderr);
  const out = JSON.parse(r.stdout) as { files: Record<string, number> };
  assert.deepEqual(out.files, { done: 49_750, error: 50, duplicate: 200 });
  const text = await runCli(['status', '--config', config, '--limit', '3']);
  assert.equal(text.code, 0, text.stderr);
  assert.match(text.stdout, /^files: {3}49750 done, 50 error, 200 duplicate$/m);
  const errors = text.stdout.split('files in error')[1] ?? '';
  assert.equal((errors.match(/^ {2}cadastros\/CAT_\d+\.csv/gm) ?? []).length, 3, 'the last 3 files in error');
  assert.match(errors, /CAT_49000\.csv {2}line 2: bad 49000/);
});
