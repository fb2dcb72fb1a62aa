/**
 * Several wmsbridge instances sharing the work through PostgreSQL: three `watch` processes on one inbox
 * and one journal. A drop of many files (categories, families referring to them, products referring to
 * the families, providers) is spread over the instances; one instance is killed with SIGKILL in the middle
 * and the others finish its work after its lease expires. Every record is delivered (exactly once where a
 * read-back allows), dependency order holds across instances, and a scheduled pull runs once.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdir, readdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { ChildProcess } from 'node:child_process';
import { makeTempDir } from '../helpers/tmp.js';
import { killAll, runCli, spawnInstances } from '../helpers/cli.js';
import { startSandbox, sandboxCall, type Sandbox } from '../helpers/sandbox.js';
import { assertPostgresReachable, dropSchema, freshSchemaName, PG_TEST_URL, pgQuery, postgresSkipReason } from '../helpers/postgres.js';
import { cnpjCheckDigits } from '../../src/map/checks.js';
import { sendWindow } from '../../src/push/send-queue.js';

const skip = postgresSkipReason();
const CAT_FILES = 3;
const CATS_PER_FILE = 40;
const FAMILIES = 30;
const PRODUCT_FILES = 4;
const PRODUCTS_PER_FILE = 60;
const PROVIDERS = 80;

let sb: Sandbox;
let tmp: { dir: string; cleanup: () => Promise<void> };
let schema: string;
const procs: ChildProcess[] = [];
const logs: string[] = [];

function cnpj(i: number): string {
  const base = `${String(20_000_000 + i).padStart(8, '0')}0001`;
  return base + cnpjCheckDigits(base);
}

async function until<T>(what: string, fn: () => Promise<T | undefined | false>, timeoutMs: number): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await fn();
    if (v) return v;
    if (Date.now() > deadline) {
      const open = schema
        ? await pgQuery(`SELECT target, key, status, error FROM "${schema}".records WHERE status NOT IN ('sent') LIMIT 20`).catch(() => [])
        : [];
      throw new Error(`timed out waiting for ${what}\nrecords not sent: ${JSON.stringify(open)}\n${logs.map((l) => l.slice(-1500)).join('\n---\n')}`);
    }
    await new Promise((r) => setTimeout(r, 200)); // poll interval of a wait on a condition
  }
}

const cfg = () => ['--config', join(tmp.dir, 'wmsbridge.config.json')];
const env = () => ({ WMS_SECRET_KEY: sb.secretKey, WMSBRIDGE_LOG_LEVEL: 'info' });

before(async () => {
  if (skip) return;
  await assertPostgresReachable();
  schema = freshSchemaName('cluster');
  sb = await startSandbox({ latencyMs: 15 });
  tmp = await makeTempDir('wmsbridge-cluster-');
  await mkdir(join(tmp.dir, 'inbox', 'cadastros'), { recursive: true });
  await mkdir(join(tmp.dir, 'mappings'));
  const m = (name: string, files: string, target: string, fields: string) =>
    writeFile(
      join(tmp.dir, 'mappings', `${name}.yaml`),
      `name: ${name}\nmatch: { channel: cadastros, files: "${files}" }\nsource: { format: delimited, delimiter: ';' }\ntarget: ${target}\nfields:\n${fields}`,
    );
  await m('cat', 'CAT_*.csv', 'Category', '  codeERP: { col: codigo }\n  name: { col: nome }\n');
  await m('fam', 'FAM_*.csv', 'Family', '  codeERP: { col: codigo }\n  name: { col: nome }\n  categoryID: { ref: Category, from: categoria }\n');
  await m(
    'prod',
    'PROD_*.csv',
    'Product',
    '  code: { col: codigo }\n  name: { col: nome }\n  categoryID: { ref: Category, from: categoria }\n  familyID: { ref: Family, from: familia }\n  logisticsProfileID: { lookup: LogisticsProfile, by: mnemonic, from: { const: PADRAO } }\n  unitmeasurement: { const: UN }\n',
  );
  await m('prov', 'PROV_*.csv', 'Provider', '  codeERP: { col: codigo }\n  cnpj: { col: cnpj }\n  socialName: { col: nome }\n');
  await writeFile(
    join(tmp.dir, 'wmsbridge.config.json'),
    JSON.stringify({
      journal: { kind: 'postgres', url: PG_TEST_URL, schema, leaseTtlMs: 3000, dependencyWaitMs: 60_000 },
      channels: [{ name: 'cadastros', readiness: { mode: 'stable', checks: 2, intervalMs: 200 } }],
      wms: { url: sb.url, accessKeyId: sb.accessKeyID },
      sending: { concurrency: 4 },
      watch: { batchDelayMs: 300, rescanIntervalMs: 1000 },
      pulls: [{ name: 'estoque', what: 'company', schedule: 'daily 00:00' }],
    }),
  );
});

after(async () => {
  killAll(procs);
  await sb?.close();
  await tmp?.cleanup();
  if (schema) await dropSchema(schema).catch(() => {});
});

test(
  'three instances share a drop through PostgreSQL; one is killed; nothing is lost or sent twice where a read-back allows; a scheduled pull runs once',
  { skip, timeout: 240_000 },
  async () => {
    spawnInstances(3, ['watch', ...cfg()], { env: env() }, procs, logs);
    await until('three instances watching', async () => logs.every((l) => /wmsbridge watch: watching/.test(l)), 60_000);

    // the drop: families refer to categories, products to families, across files the instances share out
    const inbox = join(tmp.dir, 'inbox', 'cadastros');
    const cats: string[] = [];
    for (let f = 0; f < CAT_FILES; f++) {
      const rows = Array.from({ length: CATS_PER_FILE }, (_, i) => `K${f}_${i}`);
      cats.push(...rows);
      await writeFile(join(inbox, `CAT_${f}.csv`), `codigo;nome\n${rows.map((c) => `${c};Categoria ${c}`).join('\n')}\n`);
    }
    const fams = Array.from({ length: FAMILIES }, (_, i) => `F${i}`);
    await writeFile(join(inbox, 'FAM_1.csv'), `codigo;nome;categoria\n${fams.map((f, i) => `${f};Familia ${f};${cats[i % cats.length]}`).join('\n')}\n`);
    const prods: string[] = [];
    for (let f = 0; f < PRODUCT_FILES; f++) {
      const rows = Array.from({ length: PRODUCTS_PER_FILE }, (_, i) => `P${f}_${i}`);
      prods.push(...rows);
      await writeFile(
        join(inbox, `PROD_${f}.csv`),
        `codigo;nome;categoria;familia\n${rows.map((p, i) => `${p};Produto ${p};${cats[(i % FAMILIES) % cats.length]};${fams[i % FAMILIES]}`).join('\n')}\n`,
      );
    }
    await writeFile(
      join(inbox, 'PROV_1.csv'),
      `codigo;cnpj;nome\n${Array.from({ length: PROVIDERS }, (_, i) => `V${i};${cnpj(i)};Fornecedor ${i}`).join('\n')}\n`,
    );

    // kill one instance once sending is under way
    const counts = async () => (await sandboxCall(sb, 'GET', '/__sandbox/counts')).json.creations as Record<string, Record<string, number>>;
    await until('sending under way', async () => Object.keys((await counts())['Category'] ?? {}).length > 10, 60_000);
    const victim = procs[1]!;
    victim.kill('SIGKILL');
    await new Promise((r) => victim.once('exit', r));

    // the survivors finish everything, the victim's files included (after its lease expires)
    const total = cats.length + fams.length + prods.length + PROVIDERS;
    await until(
      'every record settled',
      async () => {
        const rows = await pgQuery<{ n: string }>(`SELECT count(*) AS n FROM "${schema}".records WHERE status = 'sent'`);
        const files = await pgQuery<{ n: string }>(`SELECT count(*) AS n FROM "${schema}".files WHERE status = 'done'`);
        return Number(rows[0]!.n) >= total && Number(files[0]!.n) === CAT_FILES + 1 + PRODUCT_FILES + 1;
      },
      150_000,
    );
    const c = await counts();
    for (const k of cats) assert.ok((c['Category']?.[k] ?? 0) >= 1, `category ${k} lost`);
    for (const k of fams) assert.ok((c['Family']?.[k] ?? 0) >= 1, `family ${k} lost`);
    for (const k of prods) assert.ok((c['Product']?.[k] ?? 0) >= 1, `product ${k} lost`);
    for (let i = 0; i < PROVIDERS; i++) assert.equal(c['Provider']?.[`V${i}`] ?? 0, 1, `provider V${i} exactly once (read-back)`);
    // duplicates only from sends in the killed instance's send window (requests in flight or answered but not
    // yet settled: sendWindow(4) = 6 at most)
    const dups = ['Category', 'Family', 'Product'].reduce((n, r) => n + Object.values(c[r] ?? {}).reduce((a, v) => a + (v - 1), 0), 0);
    assert.ok(dups <= sendWindow(4), `duplicates (${dups}) beyond what one killed instance's send window (${sendWindow(4)}) explains`);
    // dependency order across instances: nothing was refused for a missing category or family
    const refused = await pgQuery<{ n: string }>(`SELECT count(*) AS n FROM "${schema}".records WHERE status IN ('rejected', 'held', 'failed')`);
    assert.equal(Number(refused[0]!.n), 0, 'no record refused or held');
    // the work was spread: the survivors both processed files
    const owners = await pgQuery<{ run_id: string }>(`SELECT DISTINCT run_id FROM "${schema}".files`);
    assert.ok(owners.length >= 2, 'files were processed by more than one run');
    // the scheduled pull ran once for the cluster
    const exports = await readdir(join(tmp.dir, 'outbox', 'exports')).catch(() => [] as string[]);
    assert.equal(exports.filter((f) => f.startsWith('company-')).length, 1, `one scheduled export, got ${exports.join(', ')}`);

    for (const p of [procs[0]!, procs[2]!]) p.kill('SIGTERM');
    const codes = await Promise.all(
      [procs[0]!, procs[2]!].map((p) => new Promise<number | null>((r) => (p.exitCode !== null ? r(p.exitCode) : p.once('exit', (code) => r(code))))),
    );
    assert.deepEqual(codes, [0, 0]);
    const st = await runCli(['status', '--json', ...cfg()], { env: env() });
    assert.equal(st.code, 0, st.stderr);
  },
);
