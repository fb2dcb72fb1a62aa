/**
 * A tier's reads and claims name only the files that have records of the tier's targets. A claim of categories
 * that also named the run's families and products files scanned every pending record of them for each claim
 * (22 ms a claim for 10,000 families on PostgreSQL: the claim walks a file's pending records in id order and
 * filters the target). Real SQLite journal, the calls it receives recorded; a WMS client double answering creates.
 */
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { openJournal } from '../../src/journal/index.js';
import { FILE_META } from '../../src/journal/policy.js';
import type { FileRow, Journal, NewRecord } from '../../src/journal/types.js';
import type { WmsClient } from '../../src/wms/client-types.js';
import { pushFiles, type ChannelPolicy } from '../../src/push/pipeline.js';
import { createStreamFeed } from '../../src/push/feed.js';
import { createReferenceCache } from '../../src/push/reference-cache.js';
import { payloadHash } from '../../src/shared/hash.js';
import { createLogger } from '../../src/shared/logger.js';
import { makeTempDir } from '../helpers/tmp.js';
import { wmsClientDouble } from '../helpers/wms-double.js';

const tmp = await makeTempDir('wmsbridge-tier-files-');
after(() => tmp.cleanup());

const policy: ChannelPolicy = { inboxDir: '.', inDoubt: { masterData: 'resend', documents: 'hold' }, stockSyncChunkSize: 100 };
const ID = (n: number): string => `00000000-0000-4000-8000-${String(n).padStart(12, '0')}`;

function record(target: 'Category' | 'Family', key: string, line: number): NewRecord {
  const payload: Record<string, unknown> = { name: key, codeERP: key, status: 1 };
  if (target === 'Family') payload['categoryID'] = { $ref: { resource: 'Category', value: key.replace('F', 'C') } };
  return { target, op: 'create', key, source: { line }, mapping: 't', payload, payloadHash: payloadHash(payload) };
}

/** creates answered with a new id; anything else is a test error */
function creatingClient(): { client: WmsClient; sent: string[] } {
  const sent: string[] = [];
  let n = 0;
  const create = async (body: Record<string, unknown>) => {
    sent.push(String(body['codeERP']));
    return { ...body, id: ID(++n) };
  };
  const impl: Partial<WmsClient> = {
    createCategory: create as unknown as WmsClient['createCategory'],
    createFamily: create as unknown as WmsClient['createFamily'],
  };
  const client = wmsClientDouble(impl, () => n, 'the test client');
  return { client, sent };
}

/** a journal with a categories file and a families file referencing them (2 records each) */
async function twoFiles(name: string): Promise<{ journal: Journal; cats: FileRow; fams: FileRow }> {
  const journal = await openJournal({ kind: 'sqlite', path: join(tmp.dir, `${name}.db`) });
  const cats = await journal.addFile({ channel: 'c', name: 'CAT.csv', path: '/in/CAT.csv', size: 1, sha256: `sha-c-${name}`, runId: 'r' });
  const fams = await journal.addFile({ channel: 'c', name: 'FAM.csv', path: '/in/FAM.csv', size: 1, sha256: `sha-f-${name}`, runId: 'r' });
  await journal.addRecords(cats.id, [record('Category', 'C1', 2), record('Category', 'C2', 3)]);
  await journal.addRecords(fams.id, [record('Family', 'F1', 2), record('Family', 'F2', 3)]);
  return { journal, cats, fams };
}

/** the journal with some of its methods watched: each watcher sees the arguments, then the call goes through */
function watched(journal: Journal, watchers: Partial<Record<keyof Journal, (...args: never[]) => void>>): Journal {
  return new Proxy(journal, {
    get(target, prop, receiver) {
      const v = Reflect.get(target, prop, receiver) as unknown;
      if (typeof v !== 'function') return v;
      const watch = watchers[prop as keyof Journal] as ((...args: unknown[]) => void) | undefined;
      return (...args: unknown[]) => {
        watch?.(...args);
        return (v as (...a: unknown[]) => unknown).apply(target, args);
      };
    },
  });
}

/** both files through the send loop with a client that creates; returns the codes sent, in order */
async function sendBoth(journal: Journal, files: readonly FileRow[], shared = false): Promise<string[]> {
  const { client, sent } = creatingClient();
  await pushFiles({
    journal,
    client,
    refCache: createReferenceCache(null),
    logger: createLogger({ level: 'silent' }),
    files: files.map((f) => ({ id: f.id, name: f.name, sha256: f.sha256, policy })),
    concurrency: 2,
    batchSize: 100,
    ...(shared ? { share: { owner: 'me', leaseTtlMs: 60_000 } } : {}),
  });
  return sent;
}

for (const shared of [false, true]) {
  test(`${shared ? 'claims' : 'reads'} of a tier name only the files with records of its targets`, async () => {
    const { journal, cats, fams } = await twoFiles(`j-${shared}`);
    try {
      // what the send loop asks the journal for: the files each claim or page read names, by target
      const asked: Array<{ how: string; files: number[]; targets: string[] }> = [];
      const spied = watched(journal, {
        claimRecordBatch: (fileIds: number[], targets: string[]) => asked.push({ how: 'claim', files: [...fileIds], targets: [...targets] }),
        listRecords: (q: { fileIds?: number[]; targets?: string[]; statuses?: string[] }) => {
          if (q.targets && q.statuses?.includes('pending')) asked.push({ how: 'read', files: [...(q.fileIds ?? [])], targets: [...q.targets] });
        },
      });
      const sent = await sendBoth(spied, [cats, fams], shared);
      assert.deepEqual(sent, ['C1', 'C2', 'F1', 'F2'], 'every record sent, categories first');
      const how = shared ? 'claim' : 'read';
      const seen = asked.filter((a) => a.how === how);
      assert.ok(seen.some((a) => a.targets.includes('Category')) && seen.some((a) => a.targets.includes('Family')), JSON.stringify(asked));
      for (const a of seen) {
        const want = a.targets.includes('Category') ? [cats.id] : [fams.id];
        assert.deepEqual(a.files, want, `${a.how} of ${a.targets.join(',')} named files ${a.files.join(',')}`);
      }
    } finally {
      await journal.close();
    }
  });
}

test("a file's targets come from what its mapping wrote, not from a read of its records (a file without that note is asked)", async () => {
  const { journal, cats, fams } = await twoFiles('j-targets');
  try {
    // the categories file was mapped by this version (the note mapFileToJournal writes); the families file by an older one
    await journal.setMeta(FILE_META.targets(cats.id), JSON.stringify(['Category']));
    const askedTargetsOf: number[][] = [];
    const spied = watched(journal, { targetsOf: (fileIds: number[]) => askedTargetsOf.push([...fileIds]) });
    assert.deepEqual(await sendBoth(spied, [cats, fams]), ['C1', 'C2', 'F1', 'F2'], 'every record sent, categories first');
    assert.deepEqual(askedTargetsOf, [[fams.id]], 'only the file without the note had its records asked for their targets');
  } finally {
    await journal.close();
  }
});

for (const streamed of [false, true]) {
  test(`the stock synchronisation pass asks only the files that may hold stock rows${streamed ? ' (a streamed file never does)' : ''}`, async () => {
    const { journal, cats, fams } = await twoFiles(`j-stock-${streamed}`);
    try {
      // a third file whose mapping wrote stock rows (none left to send): the one the pass asks
      const stock = await journal.addFile({ channel: 'c', name: 'SALDOS.csv', path: '/in/SALDOS.csv', size: 1, sha256: `sha-s-${streamed}`, runId: 'r' });
      await journal.setMeta(FILE_META.targets(stock.id), JSON.stringify(['StockSync']));
      await journal.setMeta(FILE_META.targets(fams.id), JSON.stringify(['Family']));
      // the categories file: noted, or streamed (its note is written at its end, after the send: none here)
      if (!streamed) await journal.setMeta(FILE_META.targets(cats.id), JSON.stringify(['Category']));
      const feed = createStreamFeed();
      if (streamed) {
        const all = await journal.listRecords({ fileIds: [cats.id] });
        feed.add(cats.id, 'Category');
        feed.publish(cats.id, all[all.length - 1]!.id);
        feed.end(cats.id);
      }
      const counted: number[][] = [];
      const spied = watched(journal, {
        countRecords: (q: { fileIds?: number[]; targets?: string[] }) => {
          if (q.targets?.includes('StockSync')) counted.push([...(q.fileIds ?? [])]);
        },
      });
      const { client, sent } = creatingClient();
      await pushFiles({
        journal: spied,
        client,
        refCache: createReferenceCache(null),
        logger: createLogger({ level: 'silent' }),
        files: [cats, fams, stock].map((f) => ({ id: f.id, name: f.name, sha256: f.sha256, policy })),
        concurrency: 2,
        batchSize: 100,
        ...(streamed ? { feed } : {}),
      });
      assert.deepEqual(sent, ['C1', 'C2', 'F1', 'F2'], 'every record sent, categories first');
      assert.deepEqual(counted, [[stock.id]], 'only the stock file was counted for stock rows');
    } finally {
      await journal.close();
    }
  });
}
