/**
 * Issue 39, through `wmsbridge run` (the CLI as a child process) against a real sandbox in every dialect: export
 * shapes of other ERPs (test/fixtures/erp-shapes: a Sankhya TGFGRU product-group table with two levels, a partners
 * table with a type column, a SAP Business One stock table with negative positions) mapped in one drop, each file
 * once. Exactly the expected records reach the WMS; the rows no mapping selects and the rows a skip rule excludes
 * are in the result files and the report, not rejects. A file taken by two mappings by mistake is a `check` error
 * naming the pattern and the mappings, and `run` puts it in error without sending any of it.
 */
import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { cp, mkdir, readFile, readdir } from 'node:fs/promises';
import { join } from 'node:path';
import iconv from 'iconv-lite';
import { makeTempDir } from '../helpers/tmp.js';
import { runCli, PROJECT_ROOT } from '../helpers/cli.js';
import { startSandbox, sandboxCall, type Sandbox } from '../helpers/sandbox.js';
import { dialectMatrix } from '../../src/sandbox/dialect.js';

const FIXTURES = join(PROJECT_ROOT, 'test/fixtures/erp-shapes');

function flags(dir: string, mappings = join(FIXTURES, 'mappings')): string[] {
  return ['--inbox', join(dir, 'inbox'), '--outbox', join(dir, 'outbox'), '--state-dir', join(dir, 'state'), '--mappings', mappings];
}

function env(sb: Sandbox): NodeJS.ProcessEnv {
  return { WMS_URL: sb.url, WMS_ACCESS_KEY_ID: sb.accessKeyID, WMS_SECRET_KEY: sb.secretKey, WMSBRIDGE_LOG_LEVEL: 'warn' };
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- sandbox rows of any resource, asserted field by field
async function state(sb: Sandbox, resource: string): Promise<any> {
  const r = await sandboxCall(sb, 'GET', `/__sandbox/state?resource=${resource}`);
  assert.equal(r.status, 200, `state of ${resource}`);
  return r.json;
}

/** The result CSV of a file (Windows-1252, ';'), as rows of cells by column name. */
async function resultRows(dir: string, channel: string, stem: string): Promise<Array<Record<string, string>>> {
  const folder = join(dir, 'outbox', 'results', channel);
  const name = (await readdir(folder)).find((f) => f.startsWith(stem) && f.endsWith('.result.csv'));
  assert.ok(name, `a result file for ${stem}`);
  const bytes = await readFile(join(folder, name));
  const lines = iconv
    .decode(bytes[0] === 0xef ? bytes.subarray(3) : bytes, 'win1252')
    .split(/\r?\n/)
    .filter(Boolean);
  const head = lines[0]!.split(';');
  return lines.slice(1).map((l) => Object.fromEntries(l.split(';').map((c, i) => [head[i]!, c])));
}

async function summary(dir: string): Promise<{ files: Array<{ name: string; outcomes: Record<string, number>; unsent?: unknown[]; error?: string }> }> {
  const reports = join(dir, 'outbox', 'reports');
  const run = (await readdir(reports)).filter((d) => !d.includes('.')).sort()[0]!;
  return JSON.parse(await readFile(join(reports, run, 'summary.json'), 'utf8'));
}

// WMSBRIDGE_E2E_DIALECT=<name> runs only that dialect (as the sample suites)
for (const { name, dialect } of dialectMatrix().filter((d) => !process.env['WMSBRIDGE_E2E_DIALECT'] || d.name === process.env['WMSBRIDGE_E2E_DIALECT'])) {
  describe(`other ERPs' export shapes, one drop, sandbox dialect ${name}`, () => {
    let sb: Sandbox;
    let tmp: { dir: string; cleanup: () => Promise<void> };
    before(async () => {
      sb = await startSandbox({ dialect });
      tmp = await makeTempDir('wmsbridge-e2e-erp-shapes-');
      await cp(join(FIXTURES, 'inbox'), join(tmp.dir, 'inbox'), { recursive: true });
    });
    after(async () => {
      await sb?.close();
      await tmp?.cleanup();
    });

    test('each table goes to every target its mappings declare; rows not sent are listed, not rejected', { timeout: 120_000 }, async () => {
      const res = await runCli(['run', ...flags(tmp.dir)], { env: env(sb), timeoutMs: 100_000 });
      assert.equal(res.code, 0, `exit 0\nstdout: ${res.stdout}\nstderr: ${res.stderr.slice(-3000)}`);
      assert.match(res.stdout, /2 não enviados \(regra\), 4 não selecionados/);

      // TGFGRU: the active level-1 groups are categories, the active level-2 groups families of their level-1 group
      const cats = (await state(sb, 'Category')) as Array<Record<string, string>>;
      const fams = (await state(sb, 'Family')) as Array<Record<string, string>>;
      const cat = (code: string) => cats.filter((c) => c['codeERP'] === code);
      assert.deepEqual(
        ['10000', '20000', '30000', '10100'].map((c) => cat(c).length),
        [1, 1, 0, 0],
      );
      assert.equal(cat('10000')[0]!['name'], 'MERCEARIA');
      const famOf = (code: string) => fams.filter((f) => f['codeERP'] === code);
      for (const [code, parent] of [
        ['10100', '10000'],
        ['10200', '10000'],
        ['20100', '20000'],
      ] as const) {
        assert.equal(famOf(code).length, 1, `family ${code} exactly once`);
        assert.equal(famOf(code)[0]!['categoryID'], cat(parent)[0]!['id'], `family ${code} under the category ${parent} of the same file`);
      }
      assert.equal(famOf('10201').length + famOf('20200').length + famOf('10000').length, 0, 'level 3, inactive and level-1 rows are no families');

      // partners: F -> Provider, T -> ShippingCompany, C -> nothing
      const providers = ((await state(sb, 'Provider')) as Array<Record<string, string>>).filter((p) => /^P\d+$/.test(p['codeERP'] ?? ''));
      const carriers = ((await state(sb, 'ShippingCompany')) as Array<Record<string, string>>).filter((p) => /^P\d+$/.test(p['codeERP'] ?? ''));
      assert.deepEqual(providers.map((p) => p['codeERP']).sort(), ['P001', 'P004']);
      assert.deepEqual(carriers.map((p) => p['codeERP']).sort(), ['P002', 'P005']);

      // stock: one session with the three positions; the negative ones never reached the WMS
      const sessions = Object.values((await state(sb, 'SyncSession')) as Record<string, { completed: boolean; products: Record<string, number> }>);
      assert.equal(sessions.length, 1);
      assert.equal(sessions[0]!.completed, true);
      const products = (await state(sb, 'Product')) as Array<Record<string, string>>;
      const byCode = Object.fromEntries(
        Object.entries(sessions[0]!.products).map(([id, q]) => [products.find((p) => p['id']!.toLowerCase() === id)?.['code'] ?? id, q]),
      );
      assert.deepEqual(byCode, { 'ARROZ-5KG': 120, 'LEITE-UHT-1L': 36, 'DETERG-500': 18 });

      // the result files list every row: records with the mapping that made them, rows not selected, rows excluded
      const groups = await resultRows(tmp.dir, 'cadastros', 'TGFGRU_20241105');
      assert.deepEqual(
        groups.map((r) => `${r['line']}${r['line_end'] ? `-${r['line_end']}` : ''} ${r['outcome']} ${r['target']} ${r['mapping']}`),
        [
          '2 created Category grupos-categorias',
          '3 created Family grupos-familias',
          '4 created Family grupos-familias',
          '6 created Category grupos-categorias',
          '7 created Family grupos-familias',
          '5 not-selected  grupos-categorias+grupos-familias',
          '8-9 not-selected  grupos-categorias+grupos-familias',
        ],
      );
      const partners = await resultRows(tmp.dir, 'cadastros', 'PARCEIROS_20241105');
      assert.deepEqual(
        partners.filter((r) => r['outcome'] === 'not-selected').map((r) => r['line']),
        ['4'],
      );
      const stock = await resultRows(tmp.dir, 'estoque', 'OITW_20241105');
      const excluded = stock.filter((r) => r['outcome'] === 'excluded');
      assert.deepEqual(
        excluded.map((r) => r['line']),
        ['3', '5'],
      );
      assert.match(excluded[0]!['error']!, /negative stock position/);
      assert.equal(stock.filter((r) => r['outcome'] === 'rejected').length, 0, 'a declared skip is not a reject');
      assert.equal((await readdir(join(tmp.dir, 'outbox'))).includes('rejects'), false, 'no rejects file');

      // the report: counted per file and listed with lines and reasons
      const s = await summary(tmp.dir);
      const f = (n: string) => s.files.find((x) => x.name.startsWith(n))!;
      assert.equal(f('TGFGRU').outcomes['not-selected'], 3);
      assert.deepEqual(f('OITW').unsent, [
        { outcome: 'excluded', count: 2, lines: '3, 5', mapping: 'estoque-sap', reason: 'negative stock position (the WMS takes none)' },
      ]);
      const reports = join(tmp.dir, 'outbox', 'reports');
      const html = await readFile(join(reports, (await readdir(reports)).filter((d) => !d.includes('.'))[0]!, 'report.html'), 'utf8');
      assert.match(html, /Linhas lidas e não enviadas/);
      assert.match(html, /negative stock position \(the WMS takes none\) \(estoque-sap\)/);
    });
  });
}

describe('a file taken by two mappings by mistake', () => {
  let sb: Sandbox;
  let tmp: { dir: string; cleanup: () => Promise<void> };
  let mappings: string;
  before(async () => {
    sb = await startSandbox();
    tmp = await makeTempDir('wmsbridge-e2e-erp-shapes-bad-');
    await cp(join(FIXTURES, 'inbox'), join(tmp.dir, 'inbox'), { recursive: true });
    mappings = join(tmp.dir, 'mappings');
    await mkdir(mappings);
    await cp(join(FIXTURES, 'mappings'), mappings, { recursive: true });
    await cp(join(FIXTURES, 'bad-mappings', 'clientes.yaml'), join(mappings, 'clientes.yaml'));
  });
  after(async () => {
    await sb?.close();
    await tmp?.cleanup();
  });

  test('check names the channel, the file, the patterns and the mappings (exit 2)', async () => {
    const res = await runCli(['check', ...flags(tmp.dir, mappings)], { env: env(sb) });
    assert.equal(res.code, 2, res.stdout + res.stderr);
    assert.match(
      res.stderr,
      /channel cadastros: a file like 'PARCEIROS_20241105\.csv' is taken by 2 mappings: clientes \(PARC\*\.csv\); parceiros-fornecedores \(PARCEIROS_\*\.csv\)\. .*sharesFilesWith/,
    );
    assert.match(res.stderr, /clientes and parceiros-transportadoras/, 'the other pair too');
    assert.match(res.stdout, /clientes -> Provider: files 'PARC\*\.csv'/, 'which mappings take which patterns');
  });

  test('run puts the file in error, naming the mappings, and sends none of it; the other files go', { timeout: 120_000 }, async () => {
    const res = await runCli(['run', ...flags(tmp.dir, mappings)], { env: env(sb), timeoutMs: 100_000 });
    assert.equal(res.code, 1, res.stdout + res.stderr.slice(-2000));
    const s = await summary(tmp.dir);
    const partners = s.files.find((f) => f.name.startsWith('PARCEIROS'))!;
    assert.match(partners.error ?? '', /PARCEIROS_20241105\.csv: taken by 3 mappings: clientes \(PARC\*\.csv\); parceiros-fornecedores/);
    const providers = ((await state(sb, 'Provider')) as Array<Record<string, string>>).filter((p) => /^P\d+$/.test(p['codeERP'] ?? ''));
    assert.equal(providers.length, 0);
    assert.equal((await state(sb, 'Category')).filter((c: Record<string, string>) => c['codeERP'] === '10000').length, 1);
    assert.ok((await readdir(join(tmp.dir, 'inbox', 'cadastros', '.wmsbridge', 'error'), { recursive: true })).some((n) => n.includes('PARCEIROS')));
  });
});
