/**
 * A file's result written behind the send loop (finish-file.ts createFileFinish, run-finish.ts finishBehindSend):
 * `follow` takes records in id order only while they are settled for good in this run (sent, rejected, held) and
 * never above a streamed file's published point; `complete` writes the rest; the files are the ones a single read
 * after the send writes, byte for byte; an aborted finish leaves nothing in the outbox.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { makeTempDir } from '../helpers/tmp.js';
import { categoryRecord, replacingMethod } from '../helpers/journal.js';
import { createSqliteJournal } from '../../src/journal/sqlite.js';
import type { FileRow, Journal, RecordResult, RecordRow } from '../../src/journal/types.js';
import type { CompiledMapping } from '../../src/map/index.js';
import { createFileFinish, finishFile, type FileFinishOptions } from '../../src/app/finish-file.js';

let tmp: { dir: string; cleanup: () => Promise<void> };
let journal: Journal;
let file: FileRow;
let rows: RecordRow[];
before(async () => {
  tmp = await makeTempDir('wmsbridge-finish-follow-');
  journal = await createSqliteJournal({ path: join(tmp.dir, 'state', 'journal.db') });
  file = await journal.addFile({ channel: 'cadastros', name: 'CATS.csv', path: join(tmp.dir, 'CATS.csv'), size: 1, sha256: 'x', runId: 'r' });
  await journal.addRecords(
    file.id,
    Array.from({ length: N }, (_, i) => categoryRecord(i + 1)),
  );
  await journal.setMeta(`parse-facts:${file.id}`, JSON.stringify({ headerCells: ['codigo', 'nome'], newline: '\n' }));
  rows = await journal.listRecords({ fileIds: [file.id] });
});
after(async () => {
  await journal?.close();
  await tmp?.cleanup();
});

const N = 1500;
const mapping = { name: 'cat', source: { format: 'delimited', delimiter: ';', header: true } } as unknown as CompiledMapping;

const sent = (i: number): RecordResult => ({ status: 'sent', outcome: 'created', wmsId: `id-${i}`, error: null });
/** settles records `from`..`to` (1-based, inclusive): sent, except the ones `other` names */
async function settle(from: number, to: number, other: Record<number, RecordResult> = {}): Promise<void> {
  for (let i = from; i <= to; i++) await journal.settle(rows[i - 1]!.id, other[i] ?? sent(i));
}
const options = (outboxDir: string): FileFinishOptions => ({ file, mapping, journal, outboxDir, csv: {}, now: new Date('2026-11-27T12:00:00Z') });

async function filesUnder(dir: string): Promise<string[]> {
  const out: string[] = [];
  for (const sub of ['results', 'rejects']) {
    const d = join(dir, sub, 'cadastros');
    const names = await readdir(d).catch(() => [] as string[]);
    out.push(...names.map((n) => join(sub, 'cadastros', n)));
  }
  return out.sort();
}

test('follow takes only what is settled for good, in order; complete writes the same files as one read after the send', async () => {
  const behind = join(tmp.dir, 'behind');
  const finish = createFileFinish(options(behind));
  assert.equal(await finish.follow(), 0, 'nothing settled yet');

  // 1..600 settled (one rejected by the WMS, one held on a dependency), 601 still sending
  await settle(1, 600, {
    250: { status: 'rejected', outcome: 'rejected', error: 'name: too long' },
    400: { status: 'held', outcome: 'held', error: "depends on Family 'F1', rejected", reason: { code: 'dependency_failed', params: { resource: 'Family' } } },
  });
  await journal.markSending(rows[600]!.id);
  assert.equal(await finish.follow(), 600, 'up to the record still being sent');
  // the record settles, the next ones too, and one fails: the send loop may put a failed record back (the WMS did not
  // answer), so following stops there
  await settle(601, 900, { 800: { status: 'failed', outcome: 'failed', error: 'the WMS was unavailable' } });
  assert.equal(await finish.follow(), 199, 'up to the failed record');
  await journal.requeue([rows[799]!.id]);
  assert.equal(await finish.follow(), 0, 'put back: pending');
  await settle(800, 800, { 800: sent(800) });
  // a streamed file's published point bounds a step
  assert.equal(await finish.follow(rows[849]!.id), 51, 'up to the published point');
  assert.equal(await finish.follow(rows[849]!.id), 0);
  // in doubt: the in-doubt pass may settle it again
  await settle(851, 1000, { 950: { status: 'in_doubt', outcome: 'in-doubt', error: 'connection reset' } });
  assert.equal(await finish.follow(), 99, 'up to the record in doubt');
  // the send ends with 1001..1500 never sent (the run stopped): complete writes them as they are
  const figures = await finish.complete();

  const fresh = join(tmp.dir, 'fresh');
  const once = await finishFile(options(fresh));
  assert.equal(figures.records, N);
  assert.deepEqual(figures.outcomes, once.outcomes);
  assert.deepEqual(figures.outcomes, { created: 997, rejected: 1, held: 1, 'in-doubt': 1, skipped: 500 });
  assert.deepEqual([...figures.reasons.keys()], [...once.reasons.keys()]);
  assert.deepEqual(figures.attention, once.attention);
  assert.deepEqual(figures.attention[0]?.original, ['CAT250', 'Categoria 250'], 'the attention row keeps the source row');
  const written = await filesUnder(behind);
  assert.deepEqual(written, await filesUnder(fresh));
  assert.equal(written.length, 2, `a result file and a rejects file: ${written.join(', ')}`);
  for (const f of written) assert.equal(await readFile(join(behind, f), 'utf8'), await readFile(join(fresh, f), 'utf8'), `${f}: byte for byte`);
  const rejects = await readFile(
    join(
      behind,
      written.find((f) => f.startsWith('rejects'))!,
    ),
    'utf8',
  );
  assert.match(rejects, /CAT250;Categoria 250/);
  assert.match(rejects, /CAT400;Categoria 400/, 'a row held on a failed dependency can be dropped again');
});

test('an aborted finish leaves nothing in the outbox, not even a hidden temp file', async () => {
  const out = join(tmp.dir, 'aborted');
  const finish = createFileFinish(options(out));
  assert.ok((await finish.follow()) > 0);
  const during = await readdir(join(out, 'results', 'cadastros'));
  assert.equal(during.length, 1, 'the result is being written (a hidden temp file)');
  assert.match(during[0]!, /^\..*\.tmp$/);
  await finish.abort();
  assert.deepEqual(await readdir(join(out, 'results', 'cadastros')), []);
  assert.deepEqual(await readdir(join(out, 'rejects', 'cadastros')), []);
  await finish.abort(); // twice: nothing more
});

test('a step that failed behind the send fails the finish with its error, and leaves no temp file', async () => {
  const out = join(tmp.dir, 'failing');
  let gone = false;
  const failing = replacingMethod(journal, 'listRecords', (real) => (q) => (gone ? Promise.reject(new Error('disk gone')) : real(q)));
  const finish = createFileFinish({ ...options(out), journal: failing });
  assert.ok((await finish.follow(rows[99]!.id)) > 0, 'a first step');
  gone = true;
  await assert.rejects(finish.follow(), /disk gone/);
  await assert.rejects(finish.complete(), /disk gone/, 'the finish says why');
  assert.deepEqual(await readdir(join(out, 'results', 'cadastros')), []);
});

test('with a shared journal a held record is not taken behind the send: another instance starting may put it back', async () => {
  const finish = createFileFinish({ ...options(join(tmp.dir, 'shared')), shared: true });
  assert.equal(await finish.follow(), 399, 'up to the held record (line 401); the rejected one before it is taken');
  await finish.abort();
});
