/**
 * A create the WMS refuses because the record already exists is a delivery: outcome `already-existed`, with
 * the id from the 409 answer, and the records that refer to it are sent with that id. A journal left by an
 * older version (the conflict recorded as rejected, its dependant held) is repaired by
 * `resolve --mark-sent --wms-id`: the next run sends the held dependant by itself and rewrites its file's
 * result.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdir, readdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { parse } from 'csv-parse/sync';
import { makeTempDir } from '../helpers/tmp.js';
import { runCli } from '../helpers/cli.js';
import { categoryMapping, familyMapping } from '../helpers/fixtures.js';
import { startSandbox, sandboxCall, sandboxToken, type Sandbox } from '../helpers/sandbox.js';
import { waitFor } from '../helpers/wait.js';

let sb: Sandbox;
let tmp: { dir: string; cleanup: () => Promise<void> };
const env = () => ({ WMS_SECRET_KEY: sb.secretKey, WMSBRIDGE_LOG_LEVEL: 'warn' });
const cfg = () => ['--config', join(tmp.dir, 'wmsbridge.config.json')];

before(async () => {
  sb = await startSandbox({ dialect: 'duplicates=refuse' });
  tmp = await makeTempDir('wmsbridge-resolve-conflict-');
  await mkdir(join(tmp.dir, 'inbox', 'cadastros'), { recursive: true });
  await mkdir(join(tmp.dir, 'mappings'));
  await writeFile(join(tmp.dir, 'mappings', 'cat.yaml'), categoryMapping({ channel: 'cadastros', files: 'CAT_*.csv' }));
  await writeFile(join(tmp.dir, 'mappings', 'fam.yaml'), familyMapping({ channel: 'cadastros', files: 'FAM_*.csv' }));
  await writeFile(
    join(tmp.dir, 'wmsbridge.config.json'),
    JSON.stringify({
      inboxDir: 'inbox',
      outboxDir: 'outbox',
      mappingsDir: 'mappings',
      stateDir: 'state',
      channels: [{ name: 'cadastros', readiness: { mode: 'stable', checks: 1, intervalMs: 10 } }],
      wms: { url: sb.url, accessKeyId: sb.accessKeyID },
      // the summary lines these tests read, in English (the outbox's language is not what they test)
      outbox: { locale: 'en' },
    }),
  );
});

after(async () => {
  await sb?.close();
  await tmp?.cleanup();
});

/** A result file is named by the UTC second of its run (`<stem>.<yyyymmdd-hhmmss>.result.csv`): this second's stamp. */
const stampNow = (): string => new Date().toISOString().replace(/[-:]/g, '').replace(/\..*$/, '').replace('T', '-');

/** The stamp of the newest result file of `stem`. */
async function lastStamp(stem: string): Promise<string> {
  const names = (await readdir(join(tmp.dir, 'outbox', 'results', 'cadastros'))).filter((f) => f.startsWith(`${stem}.`)).sort();
  const m = /\.(\d{8}-\d{6})\.result\.csv$/.exec(names[names.length - 1] ?? '');
  assert.ok(m, `a result file of ${stem}: ${names.join(', ')}`);
  return m[1]!;
}

async function results(stem: string): Promise<Array<Record<string, string>[]>> {
  const dir = join(tmp.dir, 'outbox', 'results', 'cadastros');
  const files = (await readdir(dir)).filter((f) => f.startsWith(stem)).sort();
  return Promise.all(
    files.map(async (f) => parse(await readFile(join(dir, f), 'utf8'), { delimiter: ';', columns: true, bom: true }) as Record<string, string>[]),
  );
}

test(
  'a category the WMS already has is already-existed with its id; a conflict recorded as rejected is repaired by resolve --mark-sent --wms-id',
  { timeout: 120_000 },
  async () => {
    // someone created K1 in the WMS before wmsbridge (or wmsbridge did, and the answer was lost)
    const token = (await sandboxToken(sb)).token;
    const pre = await sandboxCall(sb, 'POST', '/open/v1/category', { token, body: { codeERP: 'K1', name: 'Categoria 1', status: 1 } });
    assert.equal(pre.status, 200);
    const k1 = pre.json.data.id as string;
    await writeFile(join(tmp.dir, 'inbox', 'cadastros', 'CAT_1.csv'), 'codigo;nome\nK1;Categoria 1\nK2;Categoria 2\n');
    await writeFile(join(tmp.dir, 'inbox', 'cadastros', 'FAM_1.csv'), 'codigo;nome;categoria\nF1;Familia 1;K1\n');
    const first = await runCli(['run', ...cfg()], { env: env(), timeoutMs: 60_000 });
    assert.equal(first.code, 0, `${first.stdout}\n${first.stderr.slice(-2000)}`);
    assert.match(first.stdout, /2 created, 1 already existed/);
    const [cats] = await results('CAT_1');
    const k1Row = cats!.find((r) => r['key'] === 'K1')!;
    assert.equal(k1Row['outcome'], 'already-existed');
    assert.equal(k1Row['wms_id'], k1, 'the id named by the 409 answer');
    assert.match(k1Row['error'] ?? '', /the WMS already has it .*409/);
    const fams = (await sandboxCall(sb, 'GET', '/__sandbox/state?resource=Family')).json as Array<{ codeERP: string; categoryID: string }>;
    assert.equal(fams.find((f) => f.codeERP === 'F1')?.categoryID, k1, 'the family refers to the existing category');

    // a journal as an older version left it: the conflict rejected, no cross-reference, the family held
    const db = new Database(join(tmp.dir, 'state', 'journal.db'));
    let k1Record: number;
    try {
      k1Record = (db.prepare("SELECT id FROM records WHERE target = 'Category' AND key = 'K1'").get() as { id: number }).id;
      db.prepare("UPDATE records SET status = 'rejected', outcome = 'rejected', wms_id = NULL, error = ? WHERE id = ?").run(
        `[POST] /open/v1/category: 409 - duplicate Category: codeERP=K1 already exists (id ${k1})`,
        k1Record,
      );
      db.prepare("UPDATE records SET status = 'held', outcome = 'held', wms_id = NULL, error = ? WHERE target = 'Family' AND key = 'F1'").run(
        "categoryID: depends on Category 'K1', which was not delivered: rejected: 409",
      );
      db.prepare("DELETE FROM xref WHERE key IN ('K1', 'F1')").run();
    } finally {
      db.close();
    }
    const list = await runCli(['resolve', '--list', ...cfg()], { env: env() });
    assert.match(list.stdout, /held Family F1/);
    // result files are stamped to the second: a result written in the second of the last one would take its name. Wait
    // for the clock itself to leave that second (usually long done: starting `resolve --list` takes longer)
    const last = await lastStamp('CAT_1');
    await waitFor(`the clock to leave ${last}, the second of the last CAT_1 result`, () => stampNow() > last, { timeoutMs: 5_000 });
    const mark = await runCli(['resolve', '--mark-sent', '--ids', String(k1Record), '--wms-id', k1, ...cfg()], { env: env() });
    assert.equal(mark.code, 0, mark.stderr);
    assert.match(mark.stdout, /1 record\(s\) marked delivered/);
    const catResults = await results('CAT_1');
    assert.equal(catResults.length, 2, 'resolve writes the result of the file again');
    assert.equal(catResults[1]!.find((r) => r['key'] === 'K1')?.['outcome'], 'already-existed');

    // the next run takes the held family up again by itself, and its file's result says so
    const next = await runCli(['run', ...cfg()], { env: env(), timeoutMs: 60_000 });
    assert.equal(next.code, 0, `${next.stdout}\n${next.stderr.slice(-2000)}`);
    const famResults = await results('FAM_1');
    assert.equal(famResults.length, 2, 'the family file result is written again');
    const f1 = famResults[1]!.find((r) => r['key'] === 'F1')!;
    assert.equal(f1['outcome'], 'already-existed', `F1 (already in the WMS) delivered: ${JSON.stringify(f1)}`);
    const db2 = new Database(join(tmp.dir, 'state', 'journal.db'), { readonly: true });
    try {
      const open = db2.prepare("SELECT count(*) AS n FROM records WHERE status <> 'sent'").get() as { n: number };
      assert.equal(open.n, 0, 'nothing left open');
    } finally {
      db2.close();
    }
  },
);

test('records held because their dependency failed in an outage are sent by the next run, once the dependency is', { timeout: 120_000 }, async () => {
  const cfgPath = join(tmp.dir, 'wmsbridge.config.json');
  const cfgJson = JSON.parse(await readFile(cfgPath, 'utf8'));
  cfgJson.wms.retries = 0;
  await writeFile(cfgPath, JSON.stringify(cfgJson));
  await writeFile(join(tmp.dir, 'inbox', 'cadastros', 'CAT_9.csv'), 'codigo;nome\nK9;Categoria 9\n');
  await writeFile(join(tmp.dir, 'inbox', 'cadastros', 'FAM_9.csv'), 'codigo;nome;categoria\nF9;Familia 9;K9\n');
  sb.setFaults({ failRate: 1 });
  const down = await runCli(['run', ...cfg()], { env: env(), timeoutMs: 60_000 });
  sb.setFaults({ failRate: 0 });
  // an outage, not a data error (issue 18): the category stays pending, the family waits for it, exit 75
  assert.equal(down.code, 75, down.stdout);
  assert.match(down.stdout, /1 not sent yet, 1 held/, 'the category was not delivered (the WMS answered 500), the family waits for it');
  const up = await runCli(['run', ...cfg()], { env: env(), timeoutMs: 60_000 });
  assert.equal(up.code, 0, `${up.stdout}\n${up.stderr.slice(-2000)}`);
  assert.match(up.stdout, /2 created/);
  const fams = (await sandboxCall(sb, 'GET', '/__sandbox/state?resource=Family')).json as Array<{ codeERP: string; categoryID: string }>;
  const cats = (await sandboxCall(sb, 'GET', '/__sandbox/state?resource=Category')).json as Array<{ codeERP: string; id: string }>;
  assert.equal(fams.find((f) => f.codeERP === 'F9')?.categoryID, cats.find((c) => c.codeERP === 'K9')?.id);
});
