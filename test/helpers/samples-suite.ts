/**
 * The sample-inbox e2e, one suite per sandbox dialect (test/e2e/run-samples*.test.ts): the shipped sample
 * inbox is dropped into a temp inbox, `wmsbridge run` (the CLI as a child process) sends it to a real
 * sandbox on 127.0.0.1 speaking that dialect, with NO dialect setting on the wmsbridge side, and the
 * sandbox's state is compared field by field with what the files say. Running the same files again
 * creates nothing new.
 */
import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { cp, readFile, readdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import iconv from 'iconv-lite';
import { parse } from 'csv-parse/sync';
import { makeTempDir } from './tmp.js';
import { runCli, PROJECT_ROOT, workspaceFlags } from './cli.js';
import { startSandbox, sandboxCall, type Sandbox } from './sandbox.js';
import { dialectMatrix, parseDialect, type SandboxDialect } from '../../src/sandbox/dialect.js';

/** every dialect of the matrix, plus `alt` accepting duplicates */
export const SAMPLE_MATRIX = [...dialectMatrix(), { name: 'alt,duplicates=accept', dialect: parseDialect('alt,duplicates=accept') }];

let sb: Sandbox;
let tmp: { dir: string; cleanup: () => Promise<void> };

function cp1252Csv(text: Buffer): Record<string, string>[] {
  return parse(iconv.decode(text, 'win1252'), { delimiter: ';', columns: true, skip_empty_lines: true }) as Record<string, string>[];
}

async function counts(): Promise<{ records: Record<string, number>; creations: Record<string, Record<string, number>>; duplicates: Record<string, string[]> }> {
  const r = await sandboxCall(sb, 'GET', '/__sandbox/counts');
  assert.equal(r.status, 200);
  return r.json;
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- sandbox state rows of any resource, asserted field by field
async function state(resource: string): Promise<Array<Record<string, any>>> {
  const r = await sandboxCall(sb, 'GET', `/__sandbox/state?resource=${resource}`);
  assert.equal(r.status, 200, `state of ${resource}`);
  const j = r.json;
  return Array.isArray(j) ? j : (j[resource] ?? j.data ?? j.records);
}

/** a config file the suite runs with (streamed: every file sent while it is mapped), or none: defaults, channels from the inbox */
let configFile: string | null = null;

function env(): NodeJS.ProcessEnv {
  return {
    WMS_URL: sb.url,
    WMS_ACCESS_KEY_ID: sb.accessKeyID,
    WMS_SECRET_KEY: sb.secretKey,
    WMSBRIDGE_LOG_LEVEL: 'warn',
    ...(configFile ? { WMSBRIDGE_CONFIG: configFile } : {}),
  };
}

function args(cmd: string, extra: string[] = []): string[] {
  return [cmd, ...workspaceFlags(tmp.dir), ...extra];
}

/**
 * One suite against a sandbox speaking `dialect`. `rerun`: also run the files again (nothing new created).
 * WMSBRIDGE_E2E_DIALECT=<name> runs only that dialect.
 */
export function sampleInboxSuite(name: string, dialect: SandboxDialect, opts: { rerun: boolean; streamed?: boolean }): void {
  const only = process.env['WMSBRIDGE_E2E_DIALECT'];
  if (only && only !== name) return;
  describe(`sample inbox, sandbox dialect ${name}${opts.streamed ? ', every file streamed (sending.streamFrom 0)' : ''}`, () => {
    before(async () => {
      sb = await startSandbox({ dialect });
      tmp = await makeTempDir('wmsbridge-e2e-samples-');
      configFile = null;
      if (opts.streamed) {
        configFile = join(tmp.dir, 'streamed.config.json');
        await writeFile(configFile, JSON.stringify({ sending: { streamFrom: 0 } }));
      }
      await cp(join(PROJECT_ROOT, 'inbox'), join(tmp.dir, 'inbox'), { recursive: true, filter: (s) => !s.includes('.wmsbridge') });
    });

    after(async () => {
      await sb?.close();
      await tmp?.cleanup();
    });

    test('the sample inbox is delivered: every record once, fields as the files say', { timeout: 180_000 }, async () => {
      const res = await runCli(args('run'), { env: env(), timeoutMs: 150_000 });
      assert.equal(res.code, 0, `exit code 0 expected\nstdout: ${res.stdout}\nstderr: ${res.stderr.slice(-3000)}`);
      assert.match(res.stdout, /wmsbridge run: \d+ arquivo\(s\), \d+ registro\(s\)/);

      const c = await counts();
      assert.deepEqual(c.duplicates, {}, 'no natural key created twice');

      // categories and families from the files
      const cats = cp1252Csv(await readFile(join(PROJECT_ROOT, 'inbox/cadastros/CATEGORIAS_20241105.csv'))).filter((r) => r['situacao'] === 'A');
      const wmsCats = await state('Category');
      for (const row of cats) {
        const got = wmsCats.filter((x) => x['codeERP'] === row['codigo']!.trim().toUpperCase());
        assert.equal(got.length, 1, `category ${row['codigo']} exactly once`);
      }
      // products field by field
      const products = cp1252Csv(await readFile(join(PROJECT_ROOT, 'inbox/cadastros/PRODUTOS_20241105.csv'))).filter((r) => /^s/i.test(r['ativo'] ?? ''));
      const wmsProducts = await state('Product');
      const wmsFamilies = await state('Family');
      assert.ok(products.length >= 5);
      for (const row of products) {
        const p = wmsProducts.filter((x) => x['code'] === row['codigo']);
        assert.equal(p.length, 1, `product ${row['codigo']} exactly once`);
        const prod = p[0]!;
        assert.equal(prod['name'], row['descricao']!.trim(), `name of ${row['codigo']} (Windows-1252 decoded)`);
        assert.equal(prod['barCode'] ?? '', row['ean'] ?? '');
        assert.equal(prod['ncm'], row['ncm']!.replace(/\D/g, ''), 'NCM keeps its leading zeros');
        assert.equal(prod['weight'], Number(row['peso_bruto']!.replace(/\./g, '').replace(',', '.')), 'decimal comma');
        const cat = wmsCats.find((x) => x['id'] === prod['categoryID']);
        assert.equal(cat?.['codeERP'], row['categoria']!.trim().toUpperCase(), 'category reference resolved to the id of the category sent');
        const fam = wmsFamilies.find((x) => x['id'] === prod['familyID']);
        assert.equal(fam?.['codeERP'], row['familia']!.trim().toUpperCase());
      }
      // orders: one picking list per order number, lines as items
      const orderLines = cp1252Csv(await readFile(join(PROJECT_ROOT, 'inbox/pedidos/PEDIDOS_20241105_1700.csv')));
      const orders = new Map<string, Record<string, string>[]>();
      for (const l of orderLines) orders.set(l['pedido']!, [...(orders.get(l['pedido']!) ?? []), l]);
      const lists = await state('PickingList');
      for (const [order, lines] of orders) {
        const pl = lists.filter((x) => x['order'] === order);
        assert.equal(pl.length, 1, `order ${order} exactly once`);
        assert.equal(pl[0]!['pickingItens'].length, lines.length, `order ${order} has one item per line`);
        assert.equal(pl[0]!['clientName'], lines[0]!['cliente']);
      }
      // NF-e: purchase orders with their invoice numbers
      const pos = await state('PurchaseOrder');
      assert.ok(pos.length >= 2, 'both NF-e became purchase orders');
      // the cookbook sends the lot dates (dFab, dVal: yyyy-MM-dd in the NF-e) as DateTimes, as the interface types them
      const lots = pos.flatMap((po) => (po['purchaseOrderItens'] ?? []) as Array<Record<string, unknown>>);
      const dated = lots.filter((l: Record<string, unknown>) => l['manufacturingDate'] || l['expirationDate']);
      assert.ok(dated.length >= 1, `lots with dates: ${JSON.stringify(pos[0]).slice(0, 600)}`);
      for (const l of dated)
        for (const k of ['manufacturingDate', 'expirationDate']) if (l[k]) assert.match(String(l[k]), /^\d{4}-\d\d-\d\dT\d\d:\d\d/, `${k} is a DateTime`);

      // outbox: a result file per processed file, a report
      const results = await readdir(join(tmp.dir, 'outbox', 'results', 'cadastros'));
      assert.ok(results.some((f) => f.startsWith('PRODUTOS_20241105') && f.endsWith('.result.csv')));
      const reports = await readdir(join(tmp.dir, 'outbox', 'reports'), { recursive: true });
      assert.ok(
        reports.some((f) => String(f).endsWith('report.html')),
        'an HTML report',
      );
      // originals archived, not deleted
      const archived = await readdir(join(tmp.dir, 'inbox', 'cadastros', '.wmsbridge', 'archive'), { recursive: true });
      assert.ok(archived.some((f) => String(f).endsWith('PRODUTOS_20241105.csv')));
      // the cross-reference keeps the identifying fields of what was created: a unit is found by its symbol
      const { createSqliteJournal } = await import('../../src/journal/sqlite.js');
      const j = await createSqliteJournal({ path: join(tmp.dir, 'state', 'journal.db') });
      try {
        const unit = (await state('UnitMeasurement')).find((u) => u['symbol'] === 'FD');
        assert.ok(unit, 'unit FD was created');
        assert.equal((await j.findXrefByField('UnitMeasurement', 'symbol', 'fd'))?.wmsId, unit['id']);
      } finally {
        await j.close();
      }
    });

    test(
      'running the same files again creates nothing new',
      { timeout: 180_000, skip: opts.rerun ? false : 'the rerun runs on default, alt and the duplicates dialects' },
      async () => {
        const before = await counts();
        // drop the same content again (same names): reported as duplicates
        await cp(join(PROJECT_ROOT, 'inbox'), join(tmp.dir, 'inbox'), { recursive: true, filter: (s) => !s.includes('.wmsbridge') });
        const res = await runCli(args('run'), { env: env(), timeoutMs: 150_000 });
        assert.equal(res.code, 0, res.stderr.slice(-3000));
        assert.match(res.stdout, /\(12 duplicado\(s\)\)/);
        // master data and documents are skipped, said plainly: the summary names the first few (in drop order: the copy's
        // modification times may straddle a second, so which come first varies), the journal has each as a duplicate
        assert.match(res.stdout, /12 arquivo\(s\) ignorado\(s\), mesmo conteúdo de um arquivo já entregue: [^,;]+\.(csv|txt|xml)/);
        {
          const { createSqliteJournal } = await import('../../src/journal/sqlite.js');
          const j = await createSqliteJournal({ path: join(tmp.dir, 'state', 'journal.db') });
          try {
            const duplicates = (await j.listFiles({ statuses: ['duplicate'] })).map((f) => f.name);
            assert.equal(duplicates.length, 12, duplicates.join(', '));
            assert.ok(duplicates.includes('CATEGORIAS_20241105.csv'), duplicates.join(', '));
          } finally {
            await j.close();
          }
        }
        // operations files are processed again (duplicates: process by default for stock locks, unlocks, syncs)
        assert.match(res.stdout, /15 arquivo\(s\) \(12 duplicado\(s\)\)/);
        const after = await counts();
        assert.deepEqual(after.records, before.records, 'no record created by a rerun');

        // the same categories under a new name (new content: a trailing comment line changes the hash)
        const text = await readFile(join(PROJECT_ROOT, 'inbox/cadastros/CATEGORIAS_20241105.csv'));
        await writeFile(join(tmp.dir, 'inbox', 'cadastros', 'CATEGORIAS_20241106.csv'), Buffer.concat([text, Buffer.from('\r\n')]));
        const res2 = await runCli(args('run'), { env: env(), timeoutMs: 150_000 });
        assert.equal(res2.code, 0, res2.stderr.slice(-3000));
        assert.match(res2.stdout, /já estavam iguais/);
        const after2 = await counts();
        assert.deepEqual(after2.records, before.records, 'unchanged records are not sent again');
      },
    );

    test(
      'a locks file dropped again is applied again; stock already in that status is no-change, a warning, exit 0',
      { timeout: 180_000, skip: opts.rerun ? false : 'runs where the rerun runs' },
      async () => {
        await cp(join(PROJECT_ROOT, 'inbox', 'estoque', 'BLOQUEIOS_20241105.csv'), join(tmp.dir, 'inbox', 'estoque', 'BLOQUEIOS_20241105.csv'));
        const res = await runCli(args('run'), { env: env(), timeoutMs: 150_000 });
        assert.equal(res.code, 0, `${res.stdout}\n${res.stderr.slice(-3000)}`);
        assert.match(
          res.stdout,
          /1 arquivo\(s\), 4 registro\(s\): 2 atualizados, 2 sem efeito no estoque/,
          'locked and then unlocked by the previous run: locked again; still locked: no change',
        );
        const resultDir = join(tmp.dir, 'outbox', 'results', 'estoque');
        const lockResults = (await readdir(resultDir)).filter((f) => f.startsWith('BLOQUEIOS_20241105')).sort();
        assert.equal(lockResults.length, 3, 'the locks file was processed three times');
        const rows = parse(await readFile(join(resultDir, lockResults[2]!), 'utf8'), { delimiter: ';', columns: true, bom: true }) as Record<string, string>[];
        const noChange = rows.filter((r) => r['outcome'] === 'no-change');
        assert.equal(noChange.length, 2, JSON.stringify(rows));
        for (const r of noChange) assert.match(r['error'] ?? '', /no change: no available stock record matched: .* already in status/, 'with the WMS reason');
        // stock rows are named by warehouse code, product code and lot, not ids
        assert.deepEqual(noChange.map((r) => r['key']).sort(), [
          'warehouse CD-SP01 | product 000302 | every lot | to Vencido',
          'warehouse CD-SP01 | product 000401 | every lot | to Avariado',
        ]);
      },
    );

    test(
      'a re-exported attachments file (a trivial change) uploads nothing: the same file for the same picking list is unchanged',
      { timeout: 180_000, skip: opts.rerun ? false : 'runs where the rerun runs' },
      async () => {
        const before = (await state('Attachment')).length;
        assert.ok(before >= 2, 'the first run attached the sample files');
        const text = (await readFile(join(PROJECT_ROOT, 'inbox/pedidos/ANEXOS_PEDIDOS_20241105.csv'))).toString('latin1');
        // the ERP re-exports with another description: a new file, new records, the same attachments
        await writeFile(
          join(tmp.dir, 'inbox', 'pedidos', 'ANEXOS_PEDIDOS_20241106.csv'),
          Buffer.from(text.replace('Romaneio de carga refrigerada', 'Romaneio de carga refrigerada (2a via)'), 'latin1'),
        );
        const res = await runCli(args('run'), { env: env(), timeoutMs: 150_000 });
        assert.equal(res.code, 0, `${res.stdout}\n${res.stderr.slice(-3000)}`);
        assert.match(res.stdout, /2 registro\(s\): 2 já estavam iguais/);
        assert.equal((await state('Attachment')).length, before, 'nothing uploaded again');
      },
    );
  });
}
