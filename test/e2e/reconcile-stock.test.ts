/**
 * `wmsbridge reconcile stock`: after the sample inbox (with its stock position file) is delivered to a real
 * sandbox, the ERP file and the WMS agree (exit 0, no difference); after three quantities are changed in the
 * sandbox through its inspection API, exactly those three products differ (exit 1), in the page, the CSV
 * and the workbook.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { cp, readFile, readdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import ExcelJS from 'exceljs';
import { makeTempDir } from '../helpers/tmp.js';
import { runCli, PROJECT_ROOT, workspaceFlags } from '../helpers/cli.js';
import { startSandbox, sandboxCall, type Sandbox } from '../helpers/sandbox.js';

let sb: Sandbox;
let tmp: { dir: string; cleanup: () => Promise<void> };
const STOCK_FILE = join(PROJECT_ROOT, 'inbox', 'estoque', 'POSICAO_ESTOQUE_20241105.txt');

function env(): NodeJS.ProcessEnv {
  return { WMS_URL: sb.url, WMS_ACCESS_KEY_ID: sb.accessKeyID, WMS_SECRET_KEY: sb.secretKey, WMSBRIDGE_LOG_LEVEL: 'warn' };
}
function args(cmd: string[], extra: string[] = []): string[] {
  return [...cmd, '--config', join(tmp.dir, 'wmsbridge.config.json'), ...workspaceFlags(tmp.dir), ...extra];
}
async function reconFiles(): Promise<{ dir: string; names: string[] }> {
  const root = join(tmp.dir, 'outbox', 'reconciliation');
  const days = await readdir(root);
  assert.equal(days.length, 1);
  assert.match(days[0]!, /^\d{4}-\d{2}-\d{2}$/);
  const dir = join(root, days[0]!);
  return { dir, names: (await readdir(dir)).sort() };
}

before(async () => {
  sb = await startSandbox();
  tmp = await makeTempDir('wmsbridge-e2e-recon-');
  await cp(join(PROJECT_ROOT, 'inbox'), join(tmp.dir, 'inbox'), { recursive: true, filter: (s) => !s.includes('.wmsbridge') });
  // the run reconciles each stock file it synchronises
  await writeFile(join(tmp.dir, 'wmsbridge.config.json'), JSON.stringify({ outbox: { reconcileStock: true } }));
  const res = await runCli(args(['run']), { env: env(), timeoutMs: 150_000 });
  assert.equal(res.code, 0, `the sample inbox is delivered first\n${res.stdout}\n${res.stderr.slice(-3000)}`);
});

after(async () => {
  await sb?.close();
  await tmp?.cleanup();
});

test('the run reconciled the stock file right after synchronising it (outbox.reconcileStock): no difference', async () => {
  const { dir, names } = await reconFiles();
  assert.deepEqual(names, ['stock-POSICAO_ESTOQUE_20241105.csv', 'stock-POSICAO_ESTOQUE_20241105.html', 'stock-POSICAO_ESTOQUE_20241105.xlsx']);
  const html = await readFile(join(dir, names[1]!), 'utf8');
  assert.match(html, /O WMS tem o que o ERP diz: \d+ produtos, nenhuma diferença/);
});

test('after a sync of the sample stock file: 0 differences, exit 0', { timeout: 120_000 }, async () => {
  const res = await runCli(args(['reconcile', 'stock', STOCK_FILE]), { env: env(), timeoutMs: 100_000 });
  assert.equal(res.code, 0, `${res.stdout}\n${res.stderr.slice(-3000)}`);
  assert.match(res.stdout, /O WMS tem o que o ERP diz: \d+ produtos, nenhuma diferença; \S+\.html\n$/);
  assert.doesNotMatch(res.stdout, /\.;/, 'a sentence ends once');
  const { dir, names } = await reconFiles();
  assert.deepEqual(names, ['stock-POSICAO_ESTOQUE_20241105.csv', 'stock-POSICAO_ESTOQUE_20241105.html', 'stock-POSICAO_ESTOQUE_20241105.xlsx']);
  const csv = (await readFile(join(dir, names[0]!), 'utf8'))
    .replace(/^\uFEFF/, '')
    .split('\r\n')
    .filter(Boolean);
  assert.equal(csv[0], 'produto;descrição;qtd ERP;qtd WMS;WMS disponível;WMS reservada;WMS bloqueada;diferença (WMS - ERP);situação');
  const body = csv.slice(1, -1);
  assert.ok(body.length >= 5, `${body.length} products`);
  for (const l of body) assert.match(l, /;0;igual$/, l);
  // 412,000 of 000101 read with 3 implied decimals, in pt-BR number format
  assert.ok(
    body.some((l) => /^000101;[^;]*;412;412;/.test(l)),
    body.join('\n'),
  );
});

test('three quantities changed in the WMS: exactly those three differ, exit 1', { timeout: 120_000 }, async () => {
  const changes: Record<string, number> = { '000101': 400, '000102': 0, '000110': 1000.5 };
  for (const [productCode, quantity] of Object.entries(changes)) {
    const r = await sandboxCall(sb, 'POST', '/__sandbox/stock/quantity', { body: { productCode, quantity } });
    assert.equal(r.status, 200, JSON.stringify(r.json));
  }
  const res = await runCli(args(['reconcile', 'stock', STOCK_FILE]), { env: env(), timeoutMs: 100_000 });
  assert.equal(res.code, 1, `${res.stdout}\n${res.stderr.slice(-3000)}`);
  assert.match(res.stdout, /3 diferenças entre o ERP e o WMS/);
  const { dir, names } = await reconFiles();
  const wb = new ExcelJS.Workbook();
  await wb.xlsx.readFile(
    join(
      dir,
      names.find((n) => n.endsWith('.xlsx'))!,
    ),
  );
  const ws = wb.worksheets[0]!;
  assert.equal(ws.name, 'Conciliação');
  const rows: Array<{ product: unknown; erp: unknown; wms: unknown; diff: unknown; status: unknown }> = [];
  ws.eachRow((r, i) => {
    if (i > 1)
      rows.push({ product: r.getCell(1).value, erp: r.getCell(3).value, wms: r.getCell(4).value, diff: r.getCell(8).value, status: r.getCell(9).value });
  });
  const differing = rows.filter((r) => r.status !== 'igual' && r.status !== null);
  assert.deepEqual(differing.map((r) => r.product).sort(), Object.keys(changes).sort());
  const d101 = rows.find((r) => r.product === '000101')!;
  assert.equal(d101.erp, 412, 'ERP quantity is a number');
  assert.equal(d101.wms, 400);
  assert.equal(d101.diff, -12);
  assert.equal(rows.find((r) => r.product === '000110')!.diff, 1000.5 - 905);
  // Excel shows a whole number in #,##0.### as "412,": whole values take #,##0, the others #,##0.###
  const cellOf = (product: string, col: number) => ws.getRow(rows.findIndex((r) => r.product === product) + 2).getCell(col);
  assert.equal(cellOf('000101', 3).numFmt, '#,##0');
  assert.equal(cellOf('000110', 8).numFmt, '#,##0.###');
  // product codes stay text: 000101 keeps its zeros
  assert.equal(typeof d101.product, 'string');
  assert.equal(ws.getRow(2).getCell(1).numFmt, '@');
  // the last row holds the totals
  assert.equal(rows[rows.length - 1]!.product, 'Totais');
  const html = await readFile(
    join(
      dir,
      names.find((n) => n.endsWith('.html'))!,
    ),
    'utf8',
  );
  assert.match(html, /<html lang="pt-BR">/);
  assert.equal((html.match(/<tr class="diff">/g) ?? []).length, 3);
});

test('scheduled (outbox.reconcileSchedule, run --pulls): the newest archived stock file is reconciled when due, once', { timeout: 120_000 }, async () => {
  const archive = join(tmp.dir, 'inbox', 'estoque', '.wmsbridge', 'archive');
  await writeFile(
    join(tmp.dir, 'sched.config.json'),
    JSON.stringify({ outbox: { reconcileSchedule: { schedule: 'every 60m', dir: archive, files: 'POSICAO_ESTOQUE_*.txt' } } }),
  );
  const sched = args(['run', '--pulls']).map((a) => (a.endsWith('wmsbridge.config.json') ? join(tmp.dir, 'sched.config.json') : a));
  const first = await runCli(sched, { env: env(), timeoutMs: 100_000 });
  assert.equal(first.code, 0, `${first.stdout}\n${first.stderr.slice(-3000)}`);
  assert.match(first.stdout, /pull reconcile-stock: \d+ record\(s\) -> .*POSICAO_ESTOQUE_20241105\.txt/);
  const { dir, names } = await reconFiles();
  const html = await readFile(
    join(
      dir,
      names.find((n) => n.endsWith('.html'))!,
    ),
    'utf8',
  );
  assert.match(html, /3 diferenças entre o ERP e o WMS/, 'the three quantities changed above are still different');
  const again = await runCli(sched, { env: env(), timeoutMs: 100_000 });
  assert.equal(again.code, 0);
  assert.doesNotMatch(again.stdout, /reconcile-stock/, 'not due again within the hour');
});

test('the WMS unavailable: exit 75 (try later), nothing written, not a data error', { timeout: 120_000 }, async () => {
  const { dir, names } = await reconFiles();
  const before = await Promise.all(names.map((n) => readFile(join(dir, n))));
  await writeFile(join(tmp.dir, 'down.config.json'), JSON.stringify({ wms: { retries: 0 } }));
  const down = args(['reconcile', 'stock', STOCK_FILE]).map((a) => (a.endsWith('wmsbridge.config.json') ? join(tmp.dir, 'down.config.json') : a));
  // a port nothing listens on
  const res = await runCli(down, { env: { ...env(), WMS_URL: 'http://127.0.0.1:9' }, timeoutMs: 100_000 });
  assert.equal(res.code, 75, `${res.stdout}\n${res.stderr.slice(-3000)}`);
  assert.match(res.stderr, /the WMS is unavailable/);
  const after = await Promise.all(names.map((n) => readFile(join(dir, n))));
  assert.deepEqual(after, before, 'the last reconciliation files are left as they were');
});
