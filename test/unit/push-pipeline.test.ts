/**
 * The pusher (src/push/pipeline.ts + record.ts) against a scripted WMS client and a real SQLite journal in
 * a temp folder: what each answer does to a record and to the records that refer to it. The client is a
 * double on purpose: it answers exactly what a case needs (a 409 with an id, a 503, a lost answer, a
 * refused login), where the sandbox would need fault dice.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { openJournal } from '../../src/journal/index.js';
import type { Journal, NewRecord } from '../../src/journal/types.js';
import type { Target } from '../../src/wms/targets.js';
import type { WmsClient } from '../../src/wms/client-types.js';
import { WmsError, WmsErrorCode } from '../../src/wms/errors.js';
import { ENDPOINTS } from '../../src/wms/endpoints.js';
import { FatalPushError, pushFiles, type ChannelPolicy } from '../../src/push/pipeline.js';
import { createReferenceCache } from '../../src/push/reference-cache.js';
import { payloadHash } from '../../src/shared/hash.js';
import { createLogger } from '../../src/shared/logger.js';
import { PushReason, isWaitingForWms } from '../../src/shared/reason.js';
import { makeTempDir } from '../helpers/tmp.js';
import { replacingMethod } from '../helpers/journal.js';
import { wmsClientDouble } from '../helpers/wms-double.js';

type Answer = { id: string } | WmsError;
const ID = (n: number): string => `00000000-0000-4000-8000-${String(n).padStart(12, '0')}`;
const wmsErr = (code: (typeof WmsErrorCode)[keyof typeof WmsErrorCode], init: Partial<ConstructorParameters<typeof WmsError>[2]> = {}) =>
  new WmsError(code, `[POST] /open/v1/x: ${init.httpStatus ?? ''} - scripted`, { method: 'POST', path: '/open/v1/category', ...init });

/** A WMS client answering createCategory / createFamily from scripts (by name), calls recorded. */
function scriptedClient(
  script: Record<string, Answer[]>,
  stock: Array<{ productId: string; productCode: string }> = [],
): { client: WmsClient; calls: Array<{ method: string; body: Record<string, unknown> }> } {
  const calls: Array<{ method: string; body: Record<string, unknown> }> = [];
  const answer = (method: string) => async (body: Record<string, unknown>) => {
    calls.push({ method, body });
    const next = (script[String(body['name'])] ?? []).shift() ?? { id: ID(calls.length) };
    if (next instanceof WmsError) throw next;
    return { ...body, id: next.id };
  };
  const impl: Partial<WmsClient> = {
    createCategory: answer('createCategory') as unknown as WmsClient['createCategory'],
    createFamily: answer('createFamily') as unknown as WmsClient['createFamily'],
    createProduct: answer('createProduct') as unknown as WmsClient['createProduct'],
    listStock: async function* (opts?: { query?: Record<string, string> }) {
      calls.push({ method: 'listStock', body: opts?.query ?? {} });
      // every stock record, the wanted one last
      for (const s of stock) yield { warehouseId: ID(900), ...s };
    } as unknown as WmsClient['listStock'],
  };
  const client = wmsClientDouble(impl, () => calls.length);
  return { client, calls };
}

let tmp: { dir: string; cleanup: () => Promise<void> };
let seq = 0;
before(async () => {
  tmp = await makeTempDir('wmsbridge-pusher-');
});
after(async () => {
  await tmp?.cleanup();
});

const policy: ChannelPolicy = { inboxDir: '.', inDoubt: { masterData: 'resend', documents: 'hold' }, stockSyncChunkSize: 100 };

function category(name: string, line: number): NewRecord {
  const payload = { name, codeERP: name, status: 1 };
  return { target: 'Category', op: 'create', key: name, source: { line }, mapping: 't', payload, payloadHash: payloadHash(payload) };
}
function family(name: string, categoryKey: string, line: number): NewRecord {
  const payload = { name, codeERP: name, status: 1, categoryID: { $ref: { resource: 'Category' as const, value: categoryKey } } };
  return { target: 'Family', op: 'create', key: name, source: { line }, mapping: 't', payload, payloadHash: payloadHash(payload) };
}

/** A fresh journal with one file of these records, pushed through the scripted client. */
async function push(records: NewRecord[], script: Record<string, Answer[]>, concurrency = 4, stock: Array<{ productId: string; productCode: string }> = []) {
  const journal: Journal = await openJournal({ kind: 'sqlite', path: join(tmp.dir, `j${++seq}.db`) });
  const file = await journal.addFile({ channel: 'c', name: 'f.csv', path: `/in/f${seq}.csv`, size: 1, sha256: `sha-${seq}`, runId: 'r' });
  await journal.addRecords(file.id, records);
  const { client, calls } = scriptedClient(script, stock);
  const logger = createLogger({ level: 'silent' });
  let stats: Awaited<ReturnType<typeof pushFiles>> | undefined;
  let thrown: unknown;
  try {
    stats = await pushFiles({
      journal,
      client,
      refCache: createReferenceCache(null),
      logger,
      files: [{ id: file.id, name: 'f.csv', sha256: 'x', policy }],
      concurrency,
      batchSize: 100,
    });
  } catch (err) {
    thrown = err;
  }
  const rows = await journal.listRecords({ fileIds: [file.id], limit: 1000 });
  const byKey = new Map(rows.map((r) => [r.key, r]));
  const xref = async (key: string) => (await journal.getXref('Category', key))?.wmsId;
  return { journal, stats, thrown, calls, byKey, xref, close: () => journal.close() };
}

test('created: the id is cross-referenced and the family is sent with it', async () => {
  const r = await push([category('BEB', 2), family('REFRI', 'BEB', 3)], { BEB: [{ id: ID(101) }] });
  assert.equal(r.byKey.get('BEB')?.status, 'sent');
  assert.equal(await r.xref('BEB'), ID(101));
  assert.deepEqual(
    r.calls.map((c) => c.method),
    ['createCategory', 'createFamily'],
    'tiers: category before family',
  );
  assert.equal(r.calls[1]!.body['categoryID'], ID(101));
  assert.equal(r.byKey.get('REFRI')?.outcome, 'created');
  await r.close();
});

test('a 409 naming the id: already-existed with that id, and dependants go on', async () => {
  const r = await push([category('BEB', 2), family('REFRI', 'BEB', 3)], { BEB: [wmsErr(WmsErrorCode.HTTP, { httpStatus: 409, answerId: ID(7) })] });
  assert.equal(r.byKey.get('BEB')?.outcome, 'already-existed');
  assert.equal(await r.xref('BEB'), ID(7));
  assert.equal(r.calls[1]!.body['categoryID'], ID(7));
  await r.close();
});

test('a 503 beyond the retries: pending, its dependant held waiting (a code, not a text), the outage reported', async () => {
  const r = await push([category('BEB', 2), family('REFRI', 'BEB', 3)], { BEB: [wmsErr(WmsErrorCode.HTTP, { httpStatus: 503 })] });
  const cat = r.byKey.get('BEB')!;
  assert.equal(cat.status, 'pending', 'an outage is never a data error');
  const fam = r.byKey.get('REFRI')!;
  assert.equal(fam.status, 'held');
  assert.equal(fam.reason?.code, PushReason.DEPENDENCY_WAITING);
  assert.equal(isWaitingForWms(fam), true, 'the next run requeues it');
  assert.equal(r.stats?.wmsUnavailable?.requeued, 1);
  assert.equal(r.calls.length, 1, 'the family was not sent');
  await r.close();
});

test('a refusal of the data: rejected, its dependant held on the dependency with resource and key', async () => {
  const r = await push([category('BEB', 2), family('REFRI', 'BEB', 3)], {
    BEB: [wmsErr(WmsErrorCode.VALIDATION, { httpStatus: 400, envelopeMessage: 'name: too long' })],
  });
  assert.equal(r.byKey.get('BEB')?.status, 'rejected');
  assert.deepEqual(r.byKey.get('BEB')?.reason, { code: 'E_WMS_VALIDATION', params: { status: 400, message: 'name: too long' } });
  const fam = r.byKey.get('REFRI')!;
  assert.equal(fam.status, 'held');
  assert.equal(fam.reason?.code, PushReason.DEPENDENCY_FAILED);
  assert.equal(fam.reason?.params?.['resource'], 'Category');
  assert.equal(fam.reason?.params?.['value'], 'BEB');
  assert.equal(isWaitingForWms(fam), false);
  await r.close();
});

test('an answer lost after the request left: no read for a category, so master data is resent once', async () => {
  const r = await push([category('BEB', 2)], { BEB: [wmsErr(WmsErrorCode.TIMEOUT, { mayHaveReachedServer: true }), { id: ID(55) }] });
  assert.equal(r.byKey.get('BEB')?.status, 'sent');
  assert.equal(await r.xref('BEB'), ID(55));
  assert.equal(r.calls.length, 2);
  await r.close();
});

test('a lost answer, then a 409 on the resend: the first send took effect (already-existed, never failed)', async () => {
  const r = await push([category('BEB', 2)], {
    BEB: [wmsErr(WmsErrorCode.TIMEOUT, { mayHaveReachedServer: true }), wmsErr(WmsErrorCode.HTTP, { httpStatus: 409, answerId: ID(9) })],
  });
  assert.equal(r.byKey.get('BEB')?.outcome, 'already-existed');
  assert.equal(await r.xref('BEB'), ID(9));
  await r.close();
});

test('credentials refused at authorize: the run stops, nothing else is sent, the rest stays pending', async () => {
  const names = Array.from({ length: 30 }, (_, i) => `C${i}`);
  const refused = wmsErr(WmsErrorCode.AUTH, { httpStatus: 401, path: ENDPOINTS.authorize.path });
  const r = await push(
    names.map((n, i) => category(n, i + 2)),
    Object.fromEntries(names.map((n) => [n, [refused]])),
    1,
  );
  assert.ok(r.thrown instanceof FatalPushError, `threw ${String(r.thrown)}`);
  assert.equal(r.calls.length, 1, 'one slot: the first refusal stops every later request');
  const statuses = [...r.byKey.values()].map((x) => x.status);
  assert.equal(statuses.filter((s) => s === 'failed').length, 1);
  assert.equal(statuses.filter((s) => s === 'pending').length, 29);
  await r.close();
});

test('the same payload delivered before is unchanged, not sent again', async () => {
  const r = await push([category('BEB', 2)], {});
  const again = await r.journal.addFile({ channel: 'c', name: 'g.csv', path: '/in/g.csv', size: 1, sha256: 'sha-again', runId: 'r2' });
  await r.journal.addRecords(again.id, [category('BEB', 2)]);
  const { client, calls } = scriptedClient({});
  await pushFiles({
    journal: r.journal,
    client,
    refCache: createReferenceCache(null),
    logger: createLogger({ level: 'silent' }),
    files: [{ id: again.id, name: 'g.csv', sha256: 'y', policy }],
    concurrency: 2,
    batchSize: 100,
  });
  const [row] = await r.journal.listRecords({ fileIds: [again.id], limit: 10 });
  assert.equal(row?.outcome, 'unchanged');
  assert.equal(calls.length, 0);
  await r.close();
});

test('a 409 on a product without an id: the id is read through its stock (the interface has no product read)', async () => {
  const payload = { code: ' abc-1 ', name: 'Produto', categoryID: ID(1), familyID: ID(2), logisticsProfileID: ID(3), unitmeasurement: 'UN', status: 1 };
  const product: NewRecord = { target: 'Product', op: 'create', key: 'ABC-1', source: { line: 2 }, mapping: 't', payload, payloadHash: payloadHash(payload) };
  const conflict = () => wmsErr(WmsErrorCode.HTTP, { httpStatus: 409, envelopeMessage: 'product code already exists' });
  const r = await push([product], { Produto: [conflict()] }, 2, [
    { productId: ID(40), productCode: 'OTHER' },
    { productId: ID(41), productCode: 'abc-1' },
  ]);
  const row = r.byKey.get('ABC-1')!;
  assert.equal(row.outcome, 'already-existed');
  assert.equal(row.wmsId, ID(41), 'found by code, compared as an identifier (trimmed, case-folded)');
  assert.equal((await r.journal.getXref('Product', 'ABC-1'))?.wmsId, ID(41));
  // the Stock list with no filter (the interface defines none: issue 41)
  assert.ok(r.calls.some((c) => c.method === 'listStock' && Object.keys(c.body).length === 0));
  assert.ok(!r.calls.some((c) => c.method === 'listStock' && Object.keys(c.body).length > 0));
  await r.close();

  const none = await push([{ ...product }], { Produto: [conflict()] }, 2, []);
  const row2 = none.byKey.get('ABC-1')!;
  assert.equal(row2.outcome, 'already-existed');
  assert.equal(row2.wmsId, null, 'no stock names it: delivered without an id');
  assert.match(row2.error ?? '', /resolve --mark-sent/);
  await none.close();
});

test('only the tiers with records to send are read: a file of categories is never scanned for the other targets', async () => {
  const journal: Journal = await openJournal({ kind: 'sqlite', path: join(tmp.dir, `j${++seq}.db`) });
  try {
    const file = await journal.addFile({ channel: 'c', name: 'f.csv', path: `/in/f${seq}.csv`, size: 1, sha256: `sha-${seq}`, runId: 'r' });
    await journal.addRecords(
      file.id,
      Array.from({ length: 30 }, (_, i) => category(`C${i}`, i + 2)),
    );
    const reads: Array<Target[] | undefined> = [];
    const spy = replacingMethod(journal, 'listRecords', (real) => (q) => {
      if (q.statuses?.includes('pending')) reads.push(q.targets);
      return real(q);
    });
    const { client, calls } = scriptedClient({});
    const stats = await pushFiles({
      journal: spy,
      client,
      refCache: createReferenceCache(null),
      logger: createLogger({ level: 'silent' }),
      files: [{ id: file.id, name: 'f.csv', sha256: 'x', policy }],
      concurrency: 4,
      batchSize: 100,
    });
    assert.equal(stats.settled, 30);
    assert.equal(calls.length, 30);
    assert.ok(reads.length > 0);
    assert.deepEqual([...new Set(reads.map((t) => JSON.stringify(t)))], ['["Category"]'], 'every read of the send loop asked for categories only');
  } finally {
    await journal.close();
  }
});

test('after a crash, in doubt: a product whose code is in the Stock list is settled by reading; a record the WMS cannot be asked about is held saying what was checked', async () => {
  const journal: Journal = await openJournal({ kind: 'sqlite', path: join(tmp.dir, `j${++seq}.db`) });
  try {
    const file = await journal.addFile({ channel: 'c', name: 'f.csv', path: `/in/f${seq}.csv`, size: 1, sha256: `sha-${seq}`, runId: 'r' });
    const payload = { code: 'ABC-1', name: 'Produto', categoryID: ID(1), familyID: ID(2), logisticsProfileID: ID(3), unitmeasurement: 'UN', status: 1 };
    const product: NewRecord = { target: 'Product', op: 'create', key: 'ABC-1', source: { line: 2 }, mapping: 't', payload, payloadHash: payloadHash(payload) };
    await journal.addRecords(file.id, [product, category('HOLD1', 3)]);
    // both were in flight when the process died
    for (const r of await journal.listRecords({ fileIds: [file.id], limit: 10 })) await journal.markSending(r.id);
    await journal.recoverInFlight();
    const { client, calls } = scriptedClient({}, [{ productId: ID(41), productCode: 'abc-1' }]);
    await pushFiles({
      journal,
      client,
      refCache: createReferenceCache(null),
      logger: createLogger({ level: 'silent' }),
      // a channel that holds master data in doubt too: no resend without a person
      files: [{ id: file.id, name: 'f.csv', sha256: 'x', policy: { ...policy, inDoubt: { masterData: 'hold', documents: 'hold' } } }],
      concurrency: 2,
      batchSize: 100,
    });
    const rows = new Map((await journal.listRecords({ fileIds: [file.id], limit: 10 })).map((r) => [r.key, r]));
    assert.equal(rows.get('ABC-1')?.status, 'sent');
    assert.equal(rows.get('ABC-1')?.wmsId, ID(41), 'settled by reading the Stock list');
    assert.equal(rows.get('HOLD1')?.status, 'held');
    assert.match(
      rows.get('HOLD1')?.error ?? '',
      /in doubt: .* \(checked: the interface has no read of a .*: nothing the WMS can be asked\); check the WMS, then `wmsbridge resolve`/,
    );
    assert.deepEqual(
      calls.filter((c) => c.method !== 'listStock'),
      [],
      'nothing sent again',
    );
  } finally {
    await journal.close();
  }
});
