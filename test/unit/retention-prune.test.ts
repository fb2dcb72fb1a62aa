/**
 * Outbox retention deletes old files and the old folders they leave empty, never a folder another process has
 * just made: instances share the outbox, and a run's report folder is empty between its mkdir and its first file
 * (removing it made that run's report fail with ENOENT in test/e2e/cluster-runs).
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { mkdir, utimes, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { makeTempDir } from '../helpers/tmp.js';
import { pruneOrphanTemps, pruneTree } from '../../src/app/retention.js';

let tmp: { dir: string; cleanup: () => Promise<void> };
before(async () => (tmp = await makeTempDir('wmsbridge-prune-')));
after(async () => tmp.cleanup());

const DAY = 86_400_000;

test('old files and the old folders they empty go; a new empty folder and new files stay', async () => {
  const reports = join(tmp.dir, 'outbox', 'reports');
  const oldRun = join(reports, '2026-08-01_010000-old');
  const newRun = join(reports, '2026-11-27_010000-new'); // another instance's run: made, nothing written yet
  const mixed = join(reports, 'mixed');
  for (const d of [oldRun, newRun, mixed]) await mkdir(d, { recursive: true });
  await writeFile(join(oldRun, 'summary.json'), '{}');
  await writeFile(join(mixed, 'old.csv'), 'x');
  await writeFile(join(mixed, 'new.csv'), 'y');
  const aged = new Date(Date.now() - 20 * DAY);
  await utimes(join(oldRun, 'summary.json'), aged, aged);
  await utimes(join(mixed, 'old.csv'), aged, aged);
  await utimes(oldRun, aged, aged);
  await utimes(mixed, aged, aged);

  const removed = await pruneTree(reports, Date.now() - 10 * DAY);
  assert.equal(removed, 2, 'the two old files');
  assert.equal(existsSync(oldRun), false, 'an old folder left empty goes');
  assert.equal(existsSync(newRun), true, 'a folder just made by another process stays, empty as it is');
  assert.equal(existsSync(join(mixed, 'new.csv')), true);
  assert.equal(existsSync(join(mixed, 'old.csv')), false);
  assert.equal(existsSync(mixed), true, 'a folder that still holds a new file stays');
});

test("the results' channel folders stay when their old files go (a run writes into them without making them again)", async () => {
  const results = join(tmp.dir, 'outbox', 'results');
  const channel = join(results, 'cadastros');
  await mkdir(channel, { recursive: true });
  await writeFile(join(channel, 'CAT.20260801-010000.result.csv'), 'x');
  const aged = new Date(Date.now() - 20 * DAY);
  await utimes(join(channel, 'CAT.20260801-010000.result.csv'), aged, aged);
  await utimes(channel, aged, aged);
  assert.equal(await pruneTree(results, Date.now() - 10 * DAY, true), 1);
  assert.equal(existsSync(channel), true);
});

test('a temp file a killed process left (results behind the send, rejects) goes after a day; a live one and real files stay', async () => {
  const results = join(tmp.dir, 'outbox2', 'results', 'cadastros');
  const rejects = join(tmp.dir, 'outbox2', 'rejects', 'cadastros');
  for (const d of [results, rejects]) await mkdir(d, { recursive: true });
  const orphan = join(results, '.CAT.20261127-010000.result.csv.4242.0a1b2c3d.tmp');
  const orphanRejects = join(rejects, '.CAT-rejects-20261127-010000.csv.4242.0a1b2c3d.tmp');
  const live = join(results, '.CAT.20261127-020000.result.csv.4343.0a1b2c3e.tmp');
  const oldRejects = join(rejects, 'CAT-rejects-20261001-010000.csv'); // a person must act on it: never deleted here
  const hidden = join(results, '.notes.tmp'); // not a name an outbox write makes
  for (const f of [orphan, orphanRejects, live, oldRejects, hidden]) await writeFile(f, 'x');
  const aged = new Date(Date.now() - 2 * DAY);
  for (const f of [orphan, orphanRejects, oldRejects, hidden]) await utimes(f, aged, aged);

  assert.equal(await pruneOrphanTemps(join(tmp.dir, 'outbox2', 'results'), Date.now() - DAY), 1);
  assert.equal(await pruneOrphanTemps(join(tmp.dir, 'outbox2', 'rejects'), Date.now() - DAY), 1);
  assert.equal(existsSync(orphan), false);
  assert.equal(existsSync(orphanRejects), false);
  assert.equal(existsSync(live), true, 'written within the day: a live write');
  assert.equal(existsSync(oldRejects), true);
  assert.equal(existsSync(hidden), true);
  assert.equal(await pruneOrphanTemps(join(tmp.dir, 'missing'), Date.now()), 0, 'no outbox yet');
});
