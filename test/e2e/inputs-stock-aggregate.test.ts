/**
 * A stock position exported per lot and per warehouse (test/fixtures/inputs/stock), mapped to StockSync, which takes
 * one quantity per product: with `aggregate: { sum: [quantity] }` and a filter on the warehouse, `run` (the CLI as a
 * child process, real sandbox) opens ONE session carrying each product once with the sum of its lots. Without
 * `aggregate`, `preview` says which product repeats before anything is sent, and `run` sends no session (the
 * repeated rows are rejects naming their lines, and a stock sync with rejects is held whole).
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { copyFile, mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { makeTempDir } from '../helpers/tmp.js';
import { runCli, PROJECT_ROOT, workspaceFlags, type CliResult } from '../helpers/cli.js';
import { startSandbox, sandboxCall, type Sandbox } from '../helpers/sandbox.js';

const STOCK = join(PROJECT_ROOT, 'test', 'fixtures', 'inputs', 'stock', 'ESTOQUE_LOTES_20261105.csv');
const mapping = (aggregate: boolean): string => `name: estoque-lotes
match: { channel: estoque, files: ESTOQUE_LOTES_*.csv }
source: { format: delimited, delimiter: ';' }
target: StockSync
filter: { col: deposito, equals: CD-SP01 }
${aggregate ? 'aggregate: { sum: [quantity] }\n' : ''}fields:
  productId: { ref: Product, from: { col: codigo_produto } }
  ownerId: { lookup: Owners, by: code, from: { const: '001' } }
  quantity: { col: quantidade, transforms: [number] }
`;

interface Session {
  products: Record<string, number>;
  completed: boolean;
}

let sb: Sandbox;
const dirs: Array<{ dir: string; cleanup: () => Promise<void> }> = [];
const env = (): NodeJS.ProcessEnv => ({ WMS_URL: sb.url, WMS_ACCESS_KEY_ID: sb.accessKeyID, WMS_SECRET_KEY: sb.secretKey, WMSBRIDGE_LOG_LEVEL: 'warn' });

async function workspace(aggregate: boolean): Promise<{ dir: string; run: () => Promise<CliResult>; preview: () => Promise<CliResult> }> {
  const t = await makeTempDir('wmsbridge-e2e-aggregate-');
  dirs.push(t);
  await mkdir(join(t.dir, 'inbox', 'estoque'), { recursive: true });
  await mkdir(join(t.dir, 'mappings'));
  await writeFile(join(t.dir, 'mappings', 'estoque-lotes.yaml'), mapping(aggregate));
  await writeFile(
    join(t.dir, 'wmsbridge.config.json'),
    JSON.stringify({ channels: [{ name: 'estoque', readiness: { mode: 'stable', checks: 1, intervalMs: 10 } }] }),
  );
  await copyFile(STOCK, join(t.dir, 'inbox', 'estoque', 'ESTOQUE_LOTES_20261105.csv'));
  const flags = ['--config', join(t.dir, 'wmsbridge.config.json'), ...workspaceFlags(t.dir, join(t.dir, 'mappings'))];
  return {
    dir: t.dir,
    run: () => runCli(['run', ...flags], { env: env(), timeoutMs: 120_000 }),
    preview: () => runCli(['preview', join(t.dir, 'mappings', 'estoque-lotes.yaml'), STOCK], { env: {}, timeoutMs: 60_000 }),
  };
}

const sessions = async (): Promise<Session[]> =>
  Object.values((await sandboxCall(sb, 'GET', '/__sandbox/state?resource=SyncSession')).json as Record<string, Session>);

before(async () => {
  sb = await startSandbox();
});
after(async () => {
  await sb?.close();
  for (const t of dirs) await t.cleanup();
});

test('without aggregate: preview names the repeated products before anything is sent; run sends no session', async () => {
  const w = await workspace(false);
  const p = await w.preview();
  assert.equal(p.code, 1, p.stdout + p.stderr);
  assert.match(p.stdout, /line 3: key 'ARROZ-5KG\|001' appears again \(first on line 2\): one session cannot carry it twice; declare aggregate/);
  assert.match(p.stdout, /line 7: key 'FEIJAO-1KG\|001' appears again \(first on line 5\)/);
  const r = await w.run();
  assert.equal(r.code, 1, r.stdout + r.stderr.slice(-2000));
  assert.deepEqual(await sessions(), [], 'no stock session reaches the WMS');
});

test('with aggregate and a warehouse filter: one session, each product once, the sum of its lots', async () => {
  const products = (await sandboxCall(sb, 'GET', '/__sandbox/state?resource=Product')).json as Array<{ id: string; code: string }>;
  const id = (code: string): string => products.find((p) => p.code === code)!.id;
  const w = await workspace(true);
  const p = await w.preview();
  assert.equal(p.code, 0, p.stdout + p.stderr);
  assert.match(p.stdout, /key=FEIJAO-1KG\|001 \(lines 5-7\)/);
  const r = await w.run();
  assert.equal(r.code, 0, r.stdout + r.stderr.slice(-2000));
  const s = await sessions();
  assert.equal(s.length, 1);
  assert.equal(s[0]!.completed, true);
  assert.deepEqual(s[0]!.products, { [id('ARROZ-5KG')]: 200.5, [id('FEIJAO-1KG')]: 11, [id('LEITE-UHT-1L')]: 36 });
});
