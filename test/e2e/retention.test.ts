/**
 * Retention through the CLI: after a run, a settled file aged past journal.retainDays leaves the journal
 * (file row, records, raw text), results/reports aged past outbox.retainDays and old archive day folders
 * are deleted; newer ones, rejects and the error folder stay; `status` shows both settings.
 *
 * Its prune killed half-way (kill -9 of `wmsbridge run` while it deletes an old 100,000-record file in slices): the
 * journal stays whole (integrity check), the file keeps the records not deleted yet and nothing else of it is lost or
 * half-written, and the next prune finishes it: file row, records, parse facts, webhook links. SIGTERM during the
 * prune: it stops after the current slice, and the next run goes on with it at once.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { mkdir, utimes, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { makeTempDir, walkFiles as walk } from '../helpers/tmp.js';
import { runCli, spawnCli } from '../helpers/cli.js';
import { startSandbox, type Sandbox } from '../helpers/sandbox.js';
import { categoryMapping } from '../helpers/fixtures.js';
import { createSqliteJournal } from '../../src/journal/index.js';

let sb: Sandbox;
let tmp: { dir: string; cleanup: () => Promise<void> };

before(async () => {
  sb = await startSandbox({ latencyMs: 0 });
  tmp = await makeTempDir('wmsbridge-retention-');
});
after(async () => {
  await sb?.close();
  await tmp?.cleanup();
});

/** A workspace in `d`: channel `cat` of categories, a SQLite journal kept 30 days, `extra` config; returns the config's path. */
async function writeWorkspace(d: string, extra: Record<string, unknown> = {}): Promise<string> {
  await mkdir(join(d, 'inbox', 'cat'), { recursive: true });
  await mkdir(join(d, 'mappings'));
  await writeFile(join(d, 'mappings', 'cat.yaml'), categoryMapping({ channel: 'cat', files: '*.csv' }));
  const configPath = join(d, 'wmsbridge.config.json');
  await writeFile(
    configPath,
    JSON.stringify({
      inboxDir: 'inbox',
      outboxDir: 'outbox',
      stateDir: 'state',
      mappingsDir: 'mappings',
      channels: [{ name: 'cat', readiness: { mode: 'stable', checks: 1, intervalMs: 10 } }],
      journal: { kind: 'sqlite', retainDays: 30 },
      wms: { url: sb.url, accessKeyId: sb.accessKeyID, retries: 1 },
      ...extra,
    }),
  );
  return configPath;
}

test('journal.retainDays and outbox.retainDays prune old settled rows, results, reports and archive days', { timeout: 90_000 }, async () => {
  const d = tmp.dir;
  await writeWorkspace(d, { outbox: { retainDays: 10 } });
  const args = ['--config', join(d, 'wmsbridge.config.json')];
  const env = { WMS_SECRET_KEY: sb.secretKey, WMSBRIDGE_LOG_LEVEL: 'info' };
  await writeFile(join(d, 'inbox', 'cat', 'OLD.csv'), 'codigo;nome\nRET1;Velha\nRET2;\n');
  const first = await runCli(['run', ...args], { env, timeoutMs: 60_000 });
  assert.equal(first.code, 1, first.stdout + first.stderr); // RET2 rejected (empty name)

  // age everything the first run left: the journal rows 40 days, the outbox files 20 days, an archive day 20 days
  const db = new Database(join(d, 'state', 'journal.db'));
  const old = new Date(Date.now() - 40 * 86_400_000).toISOString();
  db.prepare('UPDATE files SET updated_at = ?').run(old);
  db.prepare("DELETE FROM meta WHERE key = 'retention:last'").run();
  // webhook events as old: one already written to the outbox, one not yet
  const event = db.prepare("INSERT INTO webhook_events (dedup_key, kind, received_at, body, delivered_at) VALUES (?, 'k', ?, '{}', ?)");
  event.run('old-delivered', old, old);
  event.run('old-undelivered', old, null);
  db.close();
  const outbox = await walk(join(d, 'outbox'));
  const aged = new Date(Date.now() - 20 * 86_400_000);
  for (const p of outbox) if (!p.endsWith('latest.html')) await utimes(p, aged, aged);
  const archiveRoot = join(d, 'inbox', 'cat', '.wmsbridge', 'archive');
  const oldDay = new Date(Date.now() - 20 * 86_400_000);
  const oldDayName = `${oldDay.getFullYear()}-${String(oldDay.getMonth() + 1).padStart(2, '0')}-${String(oldDay.getDate()).padStart(2, '0')}`;
  await mkdir(join(archiveRoot, oldDayName), { recursive: true });
  await writeFile(join(archiveRoot, oldDayName, 'ANTIGO.csv'), 'codigo;nome\n');

  await writeFile(join(d, 'inbox', 'cat', 'NEW.csv'), 'codigo;nome\nRET3;Nova\n');
  const second = await runCli(['run', ...args], { env, timeoutMs: 60_000 });
  const log = second.stdout + second.stderr;
  assert.match(log, /retention: old settled journal rows/);

  const db2 = new Database(join(d, 'state', 'journal.db'), { readonly: true });
  const names = (db2.prepare('SELECT name FROM files').all() as Array<{ name: string }>).map((r) => r.name);
  const rawOld = db2.prepare("SELECT COUNT(*) AS n FROM records WHERE key IN ('RET1', 'RET2')").get() as { n: number };
  const events = (db2.prepare('SELECT dedup_key FROM webhook_events').all() as Array<{ dedup_key: string }>).map((r) => r.dedup_key);
  db2.close();
  assert.deepEqual(names, ['NEW.csv'], 'the old settled file left the journal, the new one stayed');
  assert.deepEqual(events, ['old-undelivered'], 'an old webhook event already in the outbox went; one not delivered yet stayed');
  assert.match(log, /"webhookEvents":1/);
  assert.equal(rawOld.n, 0, 'its records (and raw rows) went with it');

  const after = await walk(join(d, 'outbox'));
  assert.ok(!after.some((p) => p.includes('results') && p.includes('OLD.')), 'an old result file stayed');
  assert.ok(
    after.some((p) => p.includes('results') && p.includes('NEW.')),
    'the new result file was deleted',
  );
  assert.ok(
    after.some((p) => p.includes('rejects') && p.includes('OLD-rejects')),
    'rejects are never deleted by retention',
  );
  assert.equal(after.filter((p) => p.endsWith('summary.json')).length, 1, 'only the new run report remains');
  assert.ok(!existsSync(join(archiveRoot, oldDayName)), 'the old archive day stayed');
  assert.ok(
    (await walk(archiveRoot)).some((p) => p.endsWith('NEW.csv')),
    "today's archive was deleted",
  );

  const status = await runCli(['status', ...args], { env, timeoutMs: 30_000 });
  assert.match(
    status.stdout,
    /journal rows of settled files 30 days \(journal\.retainDays\), outbox results\/reports and archive 10 days \(outbox\.retainDays\)/,
  );
});

const OLD = 100_000;

/** A workspace whose journal holds a file settled 40 days ago: OLD records, a webhook event linked to its last record. */
async function oldWorkspace(
  d: string,
): Promise<{ configPath: string; dbPath: string; oldId: number; env: Record<string, string>; remaining: () => number; waitForPrune: () => Promise<void> }> {
  const configPath = await writeWorkspace(d);
  await mkdir(join(d, 'state'));
  // the journal holds a file settled 40 days ago: 100,000 records, a webhook event linked to its last record
  const dbPath = join(d, 'state', 'journal.db');
  const j = await createSqliteJournal({ path: dbPath });
  const old = await j.addFile({ channel: 'cat', name: 'OLD.csv', path: '/old', size: 1, sha256: 'o'.repeat(64), runId: 'r' });
  await j.updateFile(old.id, { status: 'done' });
  await j.setMeta(`parse-facts:${old.id}`, '{}');
  await j.close();
  const aged = new Date(Date.now() - 40 * 86_400_000).toISOString();
  {
    const db = new Database(dbPath);
    const insert = db.prepare(
      `INSERT INTO records (file_id, target, op, key, source, mapping, payload, payload_hash, status, updated_at)
       VALUES (?, 'Category', 'upsert', ?, '{}', 'cat', '{}', 'h', 'sent', ?)`,
    );
    db.transaction(() => {
      for (let i = 1; i <= OLD; i++) insert.run(old.id, `OLD${i}`, aged);
    })();
    const last = (db.prepare('SELECT MAX(id) AS id FROM records').get() as { id: number }).id;
    db.prepare("INSERT INTO webhook_events (dedup_key, kind, received_at, body, record_id) VALUES ('evt', 'k', ?, '{}', ?)").run(
      new Date().toISOString(),
      last,
    );
    db.prepare('UPDATE files SET updated_at = ? WHERE id = ?').run(aged, old.id);
    db.close();
  }
  const env = { WMS_SECRET_KEY: sb.secretKey, WMSBRIDGE_LOG_LEVEL: 'warn' };
  const remaining = (): number => {
    const db = new Database(dbPath, { readonly: true });
    try {
      return (db.prepare('SELECT COUNT(*) AS n FROM records WHERE file_id = ?').get(old.id) as { n: number }).n;
    } finally {
      db.close();
    }
  };

  // polls until the prune has deleted some of the old file's records (its first slices)
  const waitForPrune = async (): Promise<void> => {
    const t0 = Date.now();
    while (remaining() === OLD && Date.now() - t0 < 60_000) await new Promise((r) => setTimeout(r, 5)); // poll interval of a wait on the prune
  };
  return { configPath, dbPath, oldId: old.id, env, remaining, waitForPrune };
}

test('a prune killed half-way leaves a whole journal, and the next run (at once) finishes the file', { timeout: 120_000 }, async () => {
  const d = join(tmp.dir, 'kill');
  const { configPath, dbPath, oldId, env, remaining, waitForPrune } = await oldWorkspace(d);
  const old = { id: oldId };
  // a run (one new file) whose retention starts on the old file: killed once part of it is deleted
  await writeFile(join(d, 'inbox', 'cat', 'NEW1.csv'), 'codigo;nome\nN1;Nova\n');
  const child = spawnCli(['run', '--config', configPath], { env });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  await waitForPrune();
  child.kill('SIGKILL');
  await exited;
  const left = remaining();
  assert.ok(left < OLD, 'the prune had started before the kill');
  assert.ok(left > 0, `the kill came before the prune ended (${left} left): make the file larger if this machine is much quicker`);
  {
    const db = new Database(dbPath);
    try {
      assert.equal((db.pragma('integrity_check') as Array<{ integrity_check: string }>)[0]?.integrity_check, 'ok');
      assert.deepEqual(db.pragma('foreign_key_check'), [], 'no row points at a deleted one');
      assert.equal(left % 2000, 0, 'whole slices only: each slice is one transaction');
      assert.ok(db.prepare('SELECT 1 FROM files WHERE id = ?').get(old.id), 'the file row stays until its last record is gone');
      assert.ok(db.prepare('SELECT 1 FROM meta WHERE key = ?').get(`parse-facts:${old.id}`), 'and its parse facts');
      // the killed run noted its retention as started, not as done: the next run goes on with it at once (with SQLite
      // no other process can be pruning: one process per state folder), not 6 hours later
      const last = db.prepare("SELECT value FROM meta WHERE key = 'retention:last'").get() as { value: string } | undefined;
      assert.ok(!Number.isFinite(Date.parse(last?.value ?? '')), 'the killed retention is not noted as done');
      const running = db.prepare("SELECT value FROM meta WHERE key = 'retention:running'").get() as { value: string } | undefined;
      assert.ok(Number.isFinite(Date.parse(running?.value ?? '')), 'it is noted as started');
    } finally {
      db.close();
    }
  }

  await writeFile(join(d, 'inbox', 'cat', 'NEW2.csv'), 'codigo;nome\nN2;Outra\n');
  const next = await runCli(['run', '--config', configPath], { env: { ...env, WMSBRIDGE_LOG_LEVEL: 'info' }, timeoutMs: 60_000 });
  assert.equal(next.code, 0, next.stdout + next.stderr);
  assert.match(next.stdout + next.stderr, /retention: old settled journal rows/);
  const db = new Database(dbPath, { readonly: true });
  try {
    assert.equal(remaining(), 0);
    const last = db.prepare("SELECT value FROM meta WHERE key = 'retention:last'").get() as { value: string } | undefined;
    assert.ok(Number.isFinite(Date.parse(last?.value ?? '')), 'the retention that finished is noted as done');
    assert.equal((db.prepare("SELECT value FROM meta WHERE key = 'retention:running'").get() as { value: string }).value, '', 'and no longer in progress');
    assert.equal(db.prepare('SELECT 1 FROM files WHERE id = ?').get(old.id), undefined, 'the file row went last');
    assert.equal(db.prepare('SELECT 1 FROM meta WHERE key = ?').get(`parse-facts:${old.id}`), undefined);
    assert.equal((db.prepare("SELECT record_id FROM webhook_events WHERE dedup_key = 'evt'").get() as { record_id: number | null }).record_id, null);
    assert.deepEqual(
      (db.prepare('SELECT name FROM files ORDER BY id').all() as Array<{ name: string }>).map((r) => r.name),
      ['NEW1.csv', 'NEW2.csv'],
      'the new files stay (the one of the killed run is resumed by the next)',
    );
  } finally {
    db.close();
  }
});

test('SIGTERM while the journal is pruned: the run stops after the current slice, and the next run goes on with the prune', { timeout: 120_000 }, async () => {
  const d = join(tmp.dir, 'term');
  const { configPath, dbPath, oldId, env, remaining, waitForPrune } = await oldWorkspace(d);
  await writeFile(join(d, 'inbox', 'cat', 'NEW1.csv'), 'codigo;nome\nN1;Nova\n');
  const child = spawnCli(['run', '--config', configPath], { env });
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  await waitForPrune();
  child.kill('SIGTERM');
  // retention comes after the report: the run had delivered and reported everything, so its exit code stays 0
  assert.equal(await exited, 0);
  const left = remaining();
  assert.ok(left > 0 && left < OLD, `the prune stopped half-way (${left} left): make the file larger if this machine is much quicker`);
  {
    const db = new Database(dbPath, { readonly: true });
    try {
      assert.equal(left % 2000, 0, 'whole slices only');
      assert.ok(db.prepare('SELECT 1 FROM files WHERE id = ?').get(oldId), 'the file row stays until its last record is gone');
      const last = db.prepare("SELECT value FROM meta WHERE key = 'retention:last'").get() as { value: string } | undefined;
      assert.ok(!Number.isFinite(Date.parse(last?.value ?? '')), 'the stopped retention is not noted as done');
      assert.ok(existsSync(join(d, 'outbox', 'reports')), 'the report of the stopped run was written');
    } finally {
      db.close();
    }
  }
  // the next run, at once (no 6-hour wait): the prune goes on
  await writeFile(join(d, 'inbox', 'cat', 'NEW2.csv'), 'codigo;nome\nN2;Outra\n');
  const next = await runCli(['run', '--config', configPath], { env, timeoutMs: 60_000 });
  assert.equal(next.code, 0, next.stdout + next.stderr);
  assert.equal(remaining(), 0);
  const db = new Database(dbPath, { readonly: true });
  try {
    assert.equal(db.prepare('SELECT 1 FROM files WHERE id = ?').get(oldId), undefined);
  } finally {
    db.close();
  }
});
