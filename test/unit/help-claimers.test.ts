/**
 * A `run` that lost a file's claim race to another instance helps with that file (docs/SCALING.md, "Record batches"):
 * it first waits for the file to show in the journal, which the winner writes only once the file is hashed. Before,
 * the loser looked once, found nothing and ended: the cluster bench measured 3 instances at the pace of 2.
 * Real SQLite journal, real folders.
 */
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { makeTempDir } from '../helpers/tmp.js';
import { createSqliteJournal } from '../../src/journal/sqlite.js';
import { inWorkFolder, resolveChannelFolders } from '../../src/intake/claim.js';
import { waitForClaimers } from '../../src/app/help.js';

const tmp = await makeTempDir('help-claimers');
after(() => tmp.cleanup());

test('a work copy names the file it came from: <stamp>-<name> or <stamp>-<stem>-N<ext>, nothing else', async () => {
  const dir = join(tmp.dir, 'names');
  assert.equal(await inWorkFolder(dir, 'CAT_0.csv'), false, 'no work folder yet');
  const work = resolveChannelFolders(dir).work;
  await mkdir(work, { recursive: true });
  for (const n of ['20261127T023600000Z-CAT_0-2.csv', '20261127T023600000Z-CAT_0-x.csv', 'CAT_1.csv', '20261127T023600000Z-CAT_1.csv.reason.txt'])
    await writeFile(join(work, n), '');
  assert.equal(await inWorkFolder(dir, 'CAT_0.csv'), true, 'a free-name variant');
  assert.equal(await inWorkFolder(dir, 'CAT_1.csv'), false, 'without a stamp, or another file beside it');
  assert.equal(await inWorkFolder(dir, 'CAT_0-x.csv'), true);
  assert.equal(await inWorkFolder(dir, 'CAT'), false);
});

test('waitForClaimers: returns once the claimed file is in the journal, at once when no instance holds it, at the limit when it never shows', async () => {
  const journal = await createSqliteJournal({ path: join(tmp.dir, 'journal.db') });
  try {
    const ctx = { journal, instanceId: 'me' };
    const dir = join(tmp.dir, 'cadastros');
    const claimed = [{ channel: 'cadastros', dir, name: 'CAT_0.csv' }];
    let t = Date.now();
    await waitForClaimers(ctx, claimed, 5000);
    assert.ok(Date.now() - t < 1000, `nothing in the work folder (removed, not claimed): no wait (${Date.now() - t} ms)`);

    // the winner moved it into the work folder and hashes it: its journal row comes 400 ms later
    await mkdir(resolveChannelFolders(dir).work, { recursive: true });
    await writeFile(join(resolveChannelFolders(dir).work, '20261127T023600000Z-CAT_0.csv'), 'codigo;nome\n');
    t = Date.now();
    const journaled = new Promise<void>((resolve, reject) =>
      setTimeout(() => {
        journal
          .addFile({ channel: 'cadastros', name: 'CAT_0.csv', path: '/w/CAT_0.csv', size: 12, sha256: 'h', runId: 'r', owner: 'other', leaseTtlMs: 60_000 })
          .then(() => resolve(), reject);
      }, 400),
    );
    await waitForClaimers(ctx, claimed, 5000);
    const waited = Date.now() - t;
    await journaled;
    assert.ok(waited >= 350 && waited < 3000, `waited for the winner's journal row: ${waited} ms`);

    // a claimer that never journals it (died after the move): waited for at most the limit
    t = Date.now();
    await waitForClaimers(ctx, [{ channel: 'cadastros', dir, name: 'CAT_0-never.csv' }, ...claimed], 0);
    assert.ok(Date.now() - t < 1000);
    await writeFile(join(resolveChannelFolders(dir).work, '20261127T023600000Z-CAT_9.csv'), '');
    t = Date.now();
    await waitForClaimers(ctx, [{ channel: 'cadastros', dir, name: 'CAT_9.csv' }], 600);
    assert.ok(Date.now() - t >= 550, `gives up at the limit (${Date.now() - t} ms)`);
  } finally {
    await journal.close();
  }
});
