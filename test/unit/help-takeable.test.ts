/**
 * Which file of another live instance a helper may send batches of (app/help.ts takeable, docs/SCALING.md "Record
 * batches"): a file still being mapped elsewhere holds back only the files that may refer to it (a higher tier, or a
 * target unknown here); a file streamed by its owner is takeable while it maps; a claimed file not streamed is not.
 * The same rule for an owner before it sends its own files (run-send.ts waitForOthersMapping). Real SQLite journal.
 */
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { makeTempDir } from '../helpers/tmp.js';
import { categoryRecord, replacingMethod } from '../helpers/journal.js';
import { categoryMapping, familyMapping } from '../helpers/fixtures.js';
import { createSqliteJournal } from '../../src/journal/sqlite.js';
import { FILE_META } from '../../src/journal/policy.js';
import { parseMappingText } from '../../src/map/index.js';
import { takeable } from '../../src/app/help.js';
import { waitForOthersMapping } from '../../src/app/run-send.js';
import { silentLogger } from '../../src/shared/logger.js';
import type { ResolvedChannel, ResolvedConfig } from '../../src/config/load.js';
import type { FileRow, Journal } from '../../src/journal/types.js';

const tmp = await makeTempDir('help-takeable');
after(() => tmp.cleanup());

test('a file mapped elsewhere holds back only what may refer to it; a streamed file is takeable while its owner maps it', async () => {
  const journal: Journal = await createSqliteJournal({ path: join(tmp.dir, 'journal.db') });
  try {
    const mappings = [
      parseMappingText(categoryMapping({ channel: 'cadastros', files: 'CAT_*.csv' }), 'cat.yaml'),
      parseMappingText(familyMapping({ channel: 'cadastros', files: 'FAM_*.csv' }), 'fam.yaml'),
    ];
    const channel = { name: 'cadastros', dir: join(tmp.dir, 'inbox', 'cadastros') } as ResolvedChannel;
    const ctx = { journal, config: { channels: [channel] } as unknown as ResolvedConfig };
    const add = async (name: string, owner: string, status: 'claimed' | 'mapped'): Promise<FileRow> => {
      const f = await journal.addFile({ channel: 'cadastros', name, path: `/w/${name}`, size: 10, sha256: name, runId: 'r', owner, leaseTtlMs: 60_000 });
      if (status === 'mapped') await journal.updateFile(f.id, { status: 'mapped' });
      await journal.setMeta(FILE_META.share(f.id), owner);
      return (await journal.getFile(f.id))!;
    };
    // A streams a big category file (claimed for as long as it is sent); B holds a mapped category file and a mapped
    // family file
    const streamed = await add('CAT_A.csv', 'A', 'claimed');
    await journal.setMeta(FILE_META.stream(streamed.id), JSON.stringify({ outputs: 100, lastId: 100 }));
    const cats = await add('CAT_B.csv', 'B', 'mapped');
    const fams = await add('FAM_B.csv', 'B', 'mapped');
    const live = [streamed, cats, fams];
    const ask = (f: FileRow, files = live): Promise<string> => takeable(ctx, mappings, f, files, new Map());

    assert.equal(await ask(cats), 'yes', 'categories beside a category file being mapped: the same tier, nothing to wait for');
    assert.equal(await ask(fams), 'wait', 'families wait while categories are still being mapped (they may refer to them)');
    assert.equal(await ask(streamed), 'yes', 'the streamed file itself, while its owner maps it');

    // a claimed file that does not stream (mapped whole): nothing of it is takeable yet, and what may refer to it waits
    const whole = await add('CAT_C.csv', 'C', 'claimed');
    assert.equal(await ask(whole, [...live, whole]), 'wait');
    assert.equal(await ask(cats, [...live, whole]), 'yes');
    // a file being mapped whose target this instance cannot tell (no mapping here) may hold anything
    const unknown = await add('OTHER_1.txt', 'D', 'claimed');
    assert.equal(await ask(cats, [...live, unknown]), 'wait');
    await journal.updateFile(unknown.id, { status: 'mapped' });
    await journal.updateFile(whole.id, { status: 'mapped' });

    // the tier-order count asks only the files that may hold lower-tier records: never the asking file itself or a
    // file of its tier or above (a streamed product file of millions of pending records was counted every second)
    const asked: number[][] = [];
    const spy = replacingMethod(journal, 'countRecords', (real) => (q) => (asked.push([...(q.fileIds ?? [])].sort((a, b) => a - b)), real(q)));
    const spyCtx = { journal: spy, config: ctx.config };
    const fams2 = await add('FAM_E.csv', 'E', 'mapped');
    assert.equal(await takeable(spyCtx, mappings, fams, [cats, fams, fams2], new Map()), 'yes', 'no category left to send in CAT_B');
    assert.deepEqual(asked, [[cats.id]], 'only the category file was counted');
    await journal.addRecords(cats.id, [categoryRecord(1)]);
    assert.equal(await takeable(spyCtx, mappings, fams, [cats, fams, fams2], new Map()), 'wait', 'a category of CAT_B still to send');
    await journal.settle((await journal.listRecords({ fileIds: [cats.id] }))[0]!.id, { status: 'sent', outcome: 'created' });
    asked.length = 0;
    assert.equal(await takeable(spyCtx, mappings, fams, [fams, fams2], new Map()), 'yes', 'no lower-tier file live: nothing to wait for');
    assert.deepEqual(asked, [], 'and nothing counted');
    await journal.updateFile(fams2.id, { status: 'done' });

    // an owner about to send its own files waits for others' mapping only where it may hold their dependencies
    const owner = { journal, instanceId: 'B', dependencyWaitMs: 1500, config: ctx.config };
    const waited = async (tier: number | null): Promise<number> => {
      const t = Date.now();
      await waitForOthersMapping(owner, silentLogger(), mappings, tier);
      return Date.now() - t;
    };
    const sameTier = await waited(0);
    assert.ok(sameTier < 500, `categories to send while A streams categories: no wait (${sameTier} ms)`);
    const higher = await waited(1);
    assert.ok(higher >= 1400, `families to send while A still maps categories: waited to the limit (${higher} ms)`);
    const unknownTier = await waited(null);
    assert.ok(unknownTier >= 1400, `a file whose target is unknown: waited too (${unknownTier} ms)`);
  } finally {
    await journal.close();
  }
});
