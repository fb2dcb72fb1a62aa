/**
 * When retention runs (app/retention.ts): at most once every 6 hours after one that FINISHED; one that failed is tried
 * again by the next run; instances sharing a PostgreSQL journal do not start theirs while another's is in progress,
 * and take over one whose process was killed once its lease is over. Real journals (SQLite file, the local
 * PostgreSQL in a fresh schema), a real configuration; the failure is the journal's prune throwing.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { makeTempDir } from '../helpers/tmp.js';
import { replacingMethod } from '../helpers/journal.js';
import { dropSchema, freshSchemaName, PG_TEST_URL, postgresSkipReason } from '../helpers/postgres.js';
import { loadConfig } from '../../src/config/load.js';
import { openJournal, type Journal } from '../../src/journal/index.js';
import { applyRetention, RUNNING_LEASE_MS } from '../../src/app/retention.js';
import { silentLogger } from '../../src/shared/logger.js';

let tmp: { dir: string; cleanup: () => Promise<void> };
before(async () => (tmp = await makeTempDir('wmsbridge-retention-when-')));
after(async () => tmp.cleanup());

const HOUR = 3_600_000;

async function configIn(dir: string, journal: Record<string, unknown>) {
  await mkdir(join(dir, 'inbox'), { recursive: true });
  await writeFile(join(dir, 'wmsbridge.config.json'), JSON.stringify({ inboxDir: 'inbox', outboxDir: 'outbox', stateDir: 'state', journal }));
  return loadConfig({ cwd: dir, env: {} });
}

/** the journal, its prune failing `failures` times first (a locked or full disk) */
function failingPrune(journal: Journal, failures: number): Journal {
  let left = failures;
  return replacingMethod(
    journal,
    'pruneSettled',
    (real) => (before, options) => (left-- > 0 ? Promise.reject(new Error('database or disk is full')) : real(before, options)),
  );
}

test('a retention that failed is tried again by the next run; one that finished waits 6 hours', async () => {
  const dir = join(tmp.dir, 'sqlite');
  const config = await configIn(dir, { kind: 'sqlite' });
  const journal = await openJournal({ kind: 'sqlite', path: join(dir, 'journal.db') });
  try {
    const logger = silentLogger();
    const t0 = new Date('2026-11-28T03:00:00Z');
    const failed = await applyRetention({ config, journal: failingPrune(journal, 1), logger, now: t0 });
    assert.notEqual(failed, null, 'it ran (and failed)');
    assert.ok(!Number.isFinite(Date.parse((await journal.getMeta('retention:last')) ?? '')), 'a failed retention is not noted as done');
    const next = await applyRetention({ config, journal, logger, now: new Date(t0.getTime() + 60_000) });
    assert.notEqual(next, null, 'the next run, a minute later, goes on with it');
    assert.equal(await journal.getMeta('retention:last'), new Date(t0.getTime() + 60_000).toISOString());
    assert.equal(await journal.getMeta('retention:running'), '');
    assert.equal(
      await applyRetention({ config, journal, logger, now: new Date(t0.getTime() + 5 * HOUR) }),
      null,
      'within 6 hours of one that finished: not again',
    );
    assert.notEqual(await applyRetention({ config, journal, logger, now: new Date(t0.getTime() + 7 * HOUR) }), null, 'after 6 hours: again');
  } finally {
    await journal.close();
  }
});

test('SQLite: a retention noted as started by a killed run does not hold the next one (one process per state folder)', async () => {
  const dir = join(tmp.dir, 'sqlite-killed');
  const config = await configIn(dir, { kind: 'sqlite' });
  const journal = await openJournal({ kind: 'sqlite', path: join(dir, 'journal.db') });
  try {
    const now = new Date('2026-11-28T03:00:00Z');
    await journal.setMeta('retention:running', new Date(now.getTime() - 60_000).toISOString());
    assert.notEqual(await applyRetention({ config, journal, logger: silentLogger(), now }), null);
  } finally {
    await journal.close();
  }
});

test(
  "PostgreSQL: another instance's retention in progress is not started again; a killed one is taken over after its lease",
  { skip: postgresSkipReason() },
  async () => {
    const schema = freshSchemaName('retention_lease');
    const dir = join(tmp.dir, 'postgres');
    const config = await configIn(dir, { kind: 'postgres', url: PG_TEST_URL, schema });
    const journal = await openJournal({ kind: 'postgres', url: PG_TEST_URL, schema });
    try {
      const logger = silentLogger();
      const started = new Date('2026-11-28T03:00:00Z');
      // another instance noted its retention as started (it is pruning, or it was killed)
      await journal.setMeta('retention:running', started.toISOString());
      const during = new Date(started.getTime() + RUNNING_LEASE_MS - 60_000);
      assert.equal(await applyRetention({ config, journal, logger, now: during }), null, 'within the lease: left to the other instance');
      const after = new Date(started.getTime() + RUNNING_LEASE_MS + 60_000);
      assert.notEqual(await applyRetention({ config, journal, logger, now: after }), null, 'past the lease: taken over');
      assert.equal(await journal.getMeta('retention:last'), after.toISOString());
      assert.equal(await journal.getMeta('retention:running'), '');
    } finally {
      await journal.close();
      await dropSchema(schema);
    }
  },
);
