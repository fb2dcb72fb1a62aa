/**
 * A `run` that starts while another instance is between its claim and its journal row (the file already moved into
 * the channel's work folder, not journaled yet: hashing a big file takes seconds) helps with that file. Before, its
 * resume skipped the fresh work copy silently (right: the claimer is alive), its scan found the inbox empty, and
 * the run ended at once while the claimer sent the file alone (seen with 3 instances on one 20,000-record file: one
 * ended after 3 s). Real PostgreSQL journal (shared), real folders.
 */
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { makeTempDir } from '../helpers/tmp.js';
import { dropSchema, freshSchemaName, PG_TEST_URL, postgresSkipReason } from '../helpers/postgres.js';
import { loadConfig } from '../../src/config/load.js';
import { createAppContext } from '../../src/app/context.js';
import { silentLogger } from '../../src/shared/logger.js';
import { startRun } from '../../src/app/run-state.js';
import { resume } from '../../src/app/run-resume.js';
import { waitForClaimers } from '../../src/app/help.js';
import { resolveChannelFolders } from '../../src/intake/claim.js';

const skip = postgresSkipReason();
const tmp = await makeTempDir('help-leftover-claim');
const schema = freshSchemaName('leftover_claim');
after(async () => {
  if (!skip) await dropSchema(schema);
  await tmp.cleanup();
});

/** A work-folder name as the claim writes it: `<UTC stamp>-<name>`. */
const workName = (at: Date, name: string): string => `${at.toISOString().replace(/[-:.]/g, '')}-${name}`;

test('resume names a fresh work copy another instance has not journaled yet; the help waits for its journal row', { skip }, async () => {
  const inbox = join(tmp.dir, 'inbox', 'cadastros');
  await mkdir(inbox, { recursive: true });
  await writeFile(
    join(tmp.dir, 'wmsbridge.config.json'),
    JSON.stringify({
      inboxDir: 'inbox',
      outboxDir: 'outbox',
      stateDir: 'state',
      journal: { kind: 'postgres', url: PG_TEST_URL, schema, leaseTtlMs: 60_000 },
      channels: [{ name: 'cadastros' }],
      wms: { url: 'http://127.0.0.1:9', accessKeyId: 'k', secretKeyFile: 'secret.txt' },
    }),
  );
  await writeFile(join(tmp.dir, 'secret.txt'), 's\n');
  const config = await loadConfig({ cwd: tmp.dir, env: {} });
  const ctx = await createAppContext(config, { logger: silentLogger() });
  try {
    assert.equal(ctx.shared, true);
    const work = resolveChannelFolders(inbox).work;
    await mkdir(work, { recursive: true });
    const fresh = join(work, workName(new Date(), 'CAT_0.csv'));
    await writeFile(fresh, 'codigo;nome\nC1;Um\n');
    const run = startRun(ctx, { command: 'run', ready: [], mappings: [] });
    try {
      await resume(run);
      assert.deepEqual(run.claimedElsewhere, [{ channel: 'cadastros', dir: inbox, name: 'CAT_0.csv', workPath: fresh }]);
      assert.equal(run.working.length, 0, 'not taken over: its claimer is alive');

      // the claimer journals it 400 ms later (under its work path): the help stops waiting then, not at the limit
      let t = Date.now();
      const journaled = new Promise<void>((resolve, reject) =>
        setTimeout(() => {
          ctx.journal
            .addFile({ channel: 'cadastros', name: 'CAT_0.csv', path: fresh, size: 17, sha256: 'h', runId: 'other-run', owner: 'other', leaseTtlMs: 60_000 })
            .then(() => resolve(), reject);
        }, 400),
      );
      await waitForClaimers(ctx, run.claimedElsewhere, 10_000);
      const waited = Date.now() - t;
      await journaled;
      assert.ok(waited >= 350 && waited < 5000, `waited for the claimer's journal row: ${waited} ms`);

      // a work copy that is gone (archived meanwhile) is not waited for
      t = Date.now();
      await waitForClaimers(ctx, [{ channel: 'cadastros', dir: inbox, name: 'CAT_9.csv', workPath: join(work, workName(new Date(), 'CAT_9.csv')) }], 10_000);
      assert.ok(Date.now() - t < 1000, `no wait for a copy that is gone (${Date.now() - t} ms)`);
    } finally {
      run.close();
    }
  } finally {
    await ctx.close();
  }
});
