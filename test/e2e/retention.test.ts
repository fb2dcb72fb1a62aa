/**
 * Retention through the CLI: after a run, a settled file aged past journal.retainDays leaves the journal
 * (file row, records, raw text), results/reports aged past outbox.retainDays and old archive day folders
 * are deleted; newer ones, rejects and the error folder stay; `status` shows both settings.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { mkdir, utimes, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { makeTempDir, walkFiles as walk } from '../helpers/tmp.js';
import { runCli } from '../helpers/cli.js';
import { startSandbox, type Sandbox } from '../helpers/sandbox.js';
import { categoryMapping } from '../helpers/fixtures.js';

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

test('journal.retainDays and outbox.retainDays prune old settled rows, results, reports and archive days', { timeout: 90_000 }, async () => {
  const d = tmp.dir;
  await mkdir(join(d, 'inbox', 'cat'), { recursive: true });
  await mkdir(join(d, 'mappings'));
  await writeFile(join(d, 'mappings', 'cat.yaml'), categoryMapping({ channel: 'cat', files: '*.csv' }));
  await writeFile(
    join(d, 'wmsbridge.config.json'),
    JSON.stringify({
      inboxDir: 'inbox',
      outboxDir: 'outbox',
      stateDir: 'state',
      mappingsDir: 'mappings',
      channels: [{ name: 'cat', readiness: { mode: 'stable', checks: 1, intervalMs: 10 } }],
      journal: { kind: 'sqlite', retainDays: 30 },
      outbox: { retainDays: 10 },
      wms: { url: sb.url, accessKeyId: sb.accessKeyID, retries: 1 },
    }),
  );
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
