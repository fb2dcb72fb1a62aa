/**
 * runDuePulls: only due pulls run, last runs live in the journal, failures back off. A fake clock
 * drives the schedules; the pulls themselves run against the real sandbox.
 */
import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { startSandbox, type Sandbox } from '../helpers/sandbox.js';
import { makeTempDir } from '../helpers/tmp.js';
import { createWmsClient } from '../../src/wms/client.js';
import type { WmsClient } from '../../src/wms/client-types.js';
import { openJournal, type Journal } from '../../src/journal/index.js';
import { silentLogger } from '../../src/shared/logger.js';
import { runDuePulls, pullLastKey, pullFailedKey, type ScheduledPull } from '../../src/pull/due.js';
import { isBridgeError } from '../../src/shared/errors.js';

let sandbox: Sandbox;
let client: WmsClient;
let tmp: { dir: string; cleanup: () => Promise<void> };
const logger = silentLogger();
let n = 0;

async function freshJournal(): Promise<Journal> {
  n++;
  return openJournal({ kind: 'sqlite', path: join(tmp.dir, `due-${n}.db`) });
}

before(async () => {
  tmp = await makeTempDir('wmsbridge-pull-due-');
  sandbox = await startSandbox();
  client = createWmsClient({ baseUrl: sandbox.url, accessKeyID: sandbox.accessKeyID, secretKey: sandbox.secretKey, logger, retry: { retries: 0 } });
});
after(async () => {
  await client?.close();
  await sandbox?.close();
  await tmp?.cleanup();
});

const PULLS: ScheduledPull[] = [
  { name: 'companies', schedule: 'every 30m', request: { what: 'company' } },
  { name: 'stock-night', schedule: 'daily 02:00 UTC', request: { what: 'stock', format: 'jsonl' } },
  { name: 'docks-morning', schedule: 'weekdays 06:30 UTC', request: { what: 'dock' } },
];

describe('runDuePulls', () => {
  test('runs only the due pulls and keeps their last run in the journal', async () => {
    const journal = await freshJournal();
    const outDir = join(tmp.dir, 'exports-a');
    let now = new Date('2026-03-13T10:00:00Z'); // a Friday
    const deps = { client, journal, logger, outDir, now: () => now };
    try {
      // never ran: every pull is due at once
      const r1 = await runDuePulls(PULLS, deps);
      assert.deepEqual(
        r1.map((r) => [r.name, r.status]),
        [
          ['companies', 'ran'],
          ['stock-night', 'ran'],
          ['docks-morning', 'ran'],
        ],
      );
      assert.equal(readdirSync(outDir).filter((f) => !f.startsWith('.')).length, 3);
      assert.equal(await journal.getMeta(pullLastKey('companies')), '2026-03-13T10:00:00.000Z');
      assert.equal(r1[0]!.nextRun, '2026-03-13T10:30:00.000Z');
      assert.equal(r1[1]!.nextRun, '2026-03-14T02:00:00.000Z');
      assert.equal(r1[2]!.nextRun, '2026-03-16T06:30:00.000Z');
      assert.ok(r1[1]!.file?.endsWith('.jsonl'));
      assert.ok((r1[1]!.records ?? 0) > 0);

      // ten minutes later: nothing is due
      now = new Date('2026-03-13T10:10:00Z');
      const r2 = await runDuePulls(PULLS, deps);
      assert.deepEqual(
        r2.map((r) => r.status),
        ['not-due', 'not-due', 'not-due'],
      );
      assert.equal(r2[0]!.nextRun, '2026-03-13T10:30:00.000Z');

      // 10:31: only the 30-minute pull
      now = new Date('2026-03-13T10:31:00Z');
      const r3 = await runDuePulls(PULLS, deps);
      assert.deepEqual(
        r3.map((r) => r.status),
        ['ran', 'not-due', 'not-due'],
      );

      // Saturday 02:05: the nightly stock and the 30-minute pull, not the weekday one
      now = new Date('2026-03-14T02:05:00Z');
      const r4 = await runDuePulls(PULLS, deps);
      assert.deepEqual(
        r4.map((r) => r.status),
        ['ran', 'ran', 'not-due'],
      );
      assert.equal(readdirSync(outDir).filter((f) => !f.startsWith('.')).length, 6);
    } finally {
      await journal.close();
    }
  });

  test('the last run survives a new journal connection (restart)', async () => {
    const path = join(tmp.dir, 'restart.db');
    const now = new Date('2026-03-13T10:00:00Z');
    const pulls = [PULLS[0]!];
    const j1 = await openJournal({ kind: 'sqlite', path });
    const first = await runDuePulls(pulls, { client, journal: j1, logger, outDir: join(tmp.dir, 'exports-b'), now: () => now });
    await j1.close();
    assert.equal(first[0]!.status, 'ran');
    const j2 = await openJournal({ kind: 'sqlite', path });
    try {
      const again = await runDuePulls(pulls, { client, journal: j2, logger, outDir: join(tmp.dir, 'exports-b'), now: () => new Date(now.getTime() + 60_000) });
      assert.equal(again[0]!.status, 'not-due');
    } finally {
      await j2.close();
    }
  });

  test('a failing pull is reported, keeps being due, and is retried only after the delay', async () => {
    const journal = await freshJournal();
    let now = new Date('2026-03-13T10:00:00Z');
    const deps = { client, journal, logger, outDir: join(tmp.dir, 'exports-c'), now: () => now, retryDelayMs: 300_000 };
    const pulls = [PULLS[0]!];
    try {
      sandbox.setFaults({ failRate: 1 });
      const r1 = await runDuePulls(pulls, deps);
      assert.equal(r1[0]!.status, 'failed');
      assert.match(r1[0]!.error!.code, /^E_WMS_/);
      assert.equal(r1[0]!.nextRun, '2026-03-13T10:05:00.000Z');
      assert.equal(await journal.getMeta(pullLastKey('companies')), undefined, 'no last run recorded');
      assert.equal(await journal.getMeta(pullFailedKey('companies')), '2026-03-13T10:00:00.000Z');

      sandbox.setFaults({ failRate: 0 });
      now = new Date('2026-03-13T10:02:00Z');
      const r2 = await runDuePulls(pulls, deps);
      assert.equal(r2[0]!.status, 'retry-later');
      assert.equal(r2[0]!.nextRun, '2026-03-13T10:05:00.000Z');

      now = new Date('2026-03-13T10:05:00Z');
      const r3 = await runDuePulls(pulls, deps);
      assert.equal(r3[0]!.status, 'ran');
      assert.equal(await journal.getMeta(pullLastKey('companies')), '2026-03-13T10:05:00.000Z');
    } finally {
      sandbox.setFaults({ failRate: 0 });
      await journal.close();
    }
  });

  test('bad schedules and duplicate names refuse the whole list before anything runs', async () => {
    const journal = await freshJournal();
    const outDir = join(tmp.dir, 'exports-d');
    try {
      await assert.rejects(
        runDuePulls(
          [
            { name: 'a', schedule: 'every 30m', request: { what: 'company' } },
            { name: 'b', schedule: 'hourly', request: { what: 'company' } },
            { name: 'a', schedule: 'every 1h', request: { what: 'branch' } },
          ],
          { client, journal, logger, outDir },
        ),
        (err: unknown) => isBridgeError(err) && err.code === 'E_CONFIG' && /"b": schedule "hourly"/.test(err.message) && /"a" is used twice/.test(err.message),
      );
      assert.equal(await journal.getMeta(pullLastKey('a')), undefined);
    } finally {
      await journal.close();
    }
  });
});
