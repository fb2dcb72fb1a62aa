/**
 * Spreadsheets and Unicode text as input, through `run` (the CLI as a child process) against a real sandbox:
 * - a Bling-style product workbook (tab "Produtos", header on row 3, EAN and NCM as Excel numbers, a text "n/d"
 *   in the weight column of row 8);
 * - an Excel "Unicode text" save of a product list (tab-delimited UTF-16LE with its BOM) in a mapping that declares
 *   nothing about it (line 4 has a weight that is not a number).
 * Exactly the expected products are delivered, with their EAN digits and decimal weights; each bad row is rejected
 * naming file, cell/line and field; its rejects file is in the original shape (a workbook with typed cells; UTF-16LE
 * with its BOM), and once fixed and dropped again the same mappings deliver the rest: nothing is lost.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { copyFile, mkdir, readFile, writeFile } from 'node:fs/promises';
import { basename, join } from 'node:path';
import ExcelJS from 'exceljs';
import { makeTempDir, walkFiles } from '../helpers/tmp.js';
import { runCli, PROJECT_ROOT, workspaceFlags, type CliResult } from '../helpers/cli.js';
import { startSandbox, sandboxCall, type Sandbox } from '../helpers/sandbox.js';

const FIX = join(PROJECT_ROOT, 'test', 'fixtures', 'inputs');

/** The fields both product mappings read alike: the two files name these columns the same way. */
const SHARED_FIELDS = `  code: { col: Código }
  codeERP: { col: Código }
  name: { col: Descrição }
  categoryID: { ref: Category, from: { col: Categoria } }
  familyID: { ref: Family, from: { col: Família } }
  logisticsProfileID: { lookup: LogisticsProfile, by: mnemonic, from: { const: PADRAO } }
  unitmeasurement: { col: Unidade }`;

const BLING_MAPPING = `name: produtos-bling
match: { channel: cadastros, files: 'produtos_bling*.xlsx' }
source: { format: xlsx, sheet: Produtos, headerRow: 3 }
target: Product
filter: { col: Situação, equals: Ativo }
fields:
${SHARED_FIELDS}
  barCode: { col: GTIN/EAN, transforms: [ean] }
  ncm: { col: NCM, transforms: [{ padStart: { length: 8 } }, ncm] }
  weight: { col: 'Peso bruto (Kg)', transforms: [number] }
`;

const UNICODE_MAPPING = `name: produtos-unicode
match: { channel: cadastros, files: 'PRODUTOS_unicode*.txt' }
source: { format: delimited, delimiter: "\\t" }
target: Product
fields:
${SHARED_FIELDS}
  barCode: { col: EAN, transforms: [ean] }
  ncm: { col: NCM, transforms: [ncm] }
  weight: { col: Peso, transforms: [number] }
`;

let sb: Sandbox;
let tmp: { dir: string; cleanup: () => Promise<void> };
let first: CliResult;
let second: CliResult;
let afterFirst: Product[] = [];
let afterSecond: Product[] = [];
let rejectsFiles: string[] = [];
let errorsListing = '';

interface Product {
  code: string;
  name: string;
  barCode?: string;
  ncm?: string;
  weight?: number;
}

const env = (): NodeJS.ProcessEnv => ({ WMS_URL: sb.url, WMS_ACCESS_KEY_ID: sb.accessKeyID, WMS_SECRET_KEY: sb.secretKey, WMSBRIDGE_LOG_LEVEL: 'warn' });
const args = (): string[] => ['run', '--config', join(tmp.dir, 'wmsbridge.config.json'), ...workspaceFlags(tmp.dir, join(tmp.dir, 'mappings'))];
const products = async (): Promise<Product[]> => (await sandboxCall(sb, 'GET', '/__sandbox/state?resource=Product')).json as Product[];
const ours = (list: Product[]): Product[] => list.filter((p) => /^(BL|UT)-/.test(p.code)).sort((a, b) => a.code.localeCompare(b.code));

before(async () => {
  sb = await startSandbox();
  tmp = await makeTempDir('wmsbridge-e2e-inputs-');
  const d = tmp.dir;
  await mkdir(join(d, 'inbox', 'cadastros'), { recursive: true });
  await mkdir(join(d, 'mappings'));
  await writeFile(join(d, 'mappings', 'produtos-bling.yaml'), BLING_MAPPING);
  await writeFile(join(d, 'mappings', 'produtos-unicode.yaml'), UNICODE_MAPPING);
  await writeFile(
    join(d, 'wmsbridge.config.json'),
    JSON.stringify({ channels: [{ name: 'cadastros', readiness: { mode: 'stable', checks: 1, intervalMs: 10 } }] }),
  );
  // the categories and families the products refer to, with the shipped mappings (the interface cannot read them)
  for (const m of ['categorias.yaml', 'familias.yaml']) await copyFile(join(PROJECT_ROOT, 'mappings', m), join(d, 'mappings', m));
  await writeFile(join(d, 'inbox', 'cadastros', 'CATEGORIAS_E2E.csv'), 'codigo;descricao;situacao\nALIM;ALIMENTOS;A\nBEB;BEBIDAS;A\nLIMP;LIMPEZA;A\n');
  await writeFile(
    join(d, 'inbox', 'cadastros', 'FAMILIAS_E2E.csv'),
    'codigo;descricao;categoria\nGRAOS;Graos;ALIM\nLATIC;Laticinios;ALIM\nREFRI;Refrigerantes;BEB\nDETERG;Detergentes;LIMP\n',
  );
  await copyFile(join(FIX, 'bling', 'produtos_bling.xlsx'), join(d, 'inbox', 'cadastros', 'produtos_bling.xlsx'));
  await copyFile(join(FIX, 'unicode', 'PRODUTOS_unicode.txt'), join(d, 'inbox', 'cadastros', 'PRODUTOS_unicode.txt'));
  first = await runCli(args(), { env: env(), timeoutMs: 120_000 });
  afterFirst = ours(await products());
  rejectsFiles = (await walkFiles(join(d, 'outbox', 'rejects', 'cadastros'))).sort();
  const listing = rejectsFiles.find((p) => p.endsWith('.errors.txt'));
  errorsListing = listing ? await readFile(listing, 'utf8') : '';

  // the analyst fixes each rejects file where it says and drops it again
  const xlsx = rejectsFiles.find((p) => p.endsWith('.xlsx'));
  const txt = rejectsFiles.find((p) => p.endsWith('.txt') && !p.endsWith('.errors.txt'));
  if (xlsx) {
    const wb = new ExcelJS.Workbook();
    await wb.xlsx.readFile(xlsx);
    wb.getWorksheet('Produtos')!.getCell('I2').value = 0.5;
    await wb.xlsx.writeFile(join(d, 'inbox', 'cadastros', basename(xlsx)));
  }
  if (txt) {
    const text = (await readFile(txt)).subarray(2).toString('utf16le').replace('um quilo', '1,05');
    await writeFile(join(d, 'inbox', 'cadastros', basename(txt)), Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from(text, 'utf16le')]));
  }
  second = await runCli(args(), { env: env(), timeoutMs: 120_000 });
  afterSecond = ours(await products());
});

after(async () => {
  await sb?.close();
  if (process.env.WMSBRIDGE_TEST_KEEP) console.log(`kept ${tmp?.dir}`);
  else await tmp?.cleanup();
});

test('first run: exactly the good rows delivered, typed values right; exit 1 for the two rejects', () => {
  assert.equal(first.code, 1, `${first.stdout}\n${first.stderr.slice(-3000)}`);
  assert.deepEqual(
    afterFirst.map((p) => [p.code, p.barCode, p.ncm, p.weight]),
    [
      ['BL-0001', '7891234567895', '10063021', 5.05],
      ['BL-0002', '7891234567901', '07133319', 1.012],
      ['BL-0003', '7891234567918', '04012010', 12.4],
      ['BL-0006', '7891234567949', '34022000', 1],
      ['UT-001', '7891234567956', '17019900', 1.02],
      ['UT-002', '7891234567963', '09012100', 0.52],
      ['UT-004', '7891234567987', '19052090', 0.5],
    ],
  );
  assert.equal(afterFirst.find((p) => p.code === 'UT-002')?.name, 'Café Torrado “Extra Forte” 500 g');
  assert.equal(afterFirst.find((p) => p.code === 'UT-004')?.name, 'Pão de Forma Integral 😀');
});

test('each reject names its file, cell or line, and field; the rejects files keep the original shape', async () => {
  const names = rejectsFiles.map((p) => basename(p));
  assert.ok(
    names.some((n) => /^produtos_bling-rejects-.*\.xlsx$/.test(n)),
    names.join(', '),
  );
  assert.ok(
    names.some((n) => /^PRODUTOS_unicode-rejects-.*\.txt$/.test(n)),
    names.join(', '),
  );
  // the workbook: the rejected row, typed as it was, with the reason naming the cell
  const wb = new ExcelJS.Workbook();
  await wb.xlsx.readFile(rejectsFiles.find((p) => p.endsWith('.xlsx'))!);
  assert.deepEqual(
    wb.worksheets.map((w) => w.name),
    ['Instruções', 'Produtos'],
  );
  const ws = wb.getWorksheet('Produtos')!;
  assert.equal(ws.getCell('B2').value, 'BL-0005');
  assert.equal(ws.getCell('H2').value, 7891234567932);
  assert.equal(ws.getCell('I2').value, 'n/d');
  assert.match(String(ws.getCell('M1').value), /wmsbridge_error/);
  assert.match(
    String(ws.getCell('M2').value),
    /linha 8: o valor da coluna Peso bruto \(Kg\) não é um número \(planilha Produtos, célula I8\) \(valor "n\/d"; campo weight no WMS\)/,
  );
  // the Unicode text: UTF-16LE with its BOM, the header and the row as they were
  const raw = await readFile(rejectsFiles.find((p) => p.endsWith('.txt') && !p.endsWith('.errors.txt'))!);
  assert.deepEqual([...raw.subarray(0, 2)], [0xff, 0xfe]);
  const lines = raw.subarray(2).toString('utf16le').split('\r\n');
  assert.equal(lines[0], 'Código\tDescrição\tUnidade\tNCM\tEAN\tPeso\tCategoria\tFamília\twmsbridge_error');
  assert.match(
    lines[1]!,
    /^UT-003\tÁgua de Coco 1 L\tCX\t20098990\t7891234567970\tum quilo\tBEB\tREFRI\t"linha 4: o valor da coluna Peso não é um número \(valor ""um quilo""; campo weight no WMS\)"/,
  );
  assert.equal(errorsListing, '', 'no listing beside a rejects file that holds its reasons');
  // the run's summary and report name the file
  const reports = await walkFiles(join(tmp.dir, 'outbox', 'reports'));
  const html = await readFile(
    reports.find((p) => p.endsWith('.html'))!,
    'utf8',
  );
  assert.match(html, /produtos_bling\.xlsx/);
  assert.match(html, /planilha Produtos, célula I8/);
});

test('the fixed rejects files dropped again deliver the rest: nothing lost', () => {
  assert.equal(second.code, 0, `${second.stdout}\n${second.stderr.slice(-3000)}`);
  assert.deepEqual(
    afterSecond.map((p) => p.code),
    ['BL-0001', 'BL-0002', 'BL-0003', 'BL-0005', 'BL-0006', 'UT-001', 'UT-002', 'UT-003', 'UT-004'],
  );
  assert.equal(afterSecond.find((p) => p.code === 'BL-0005')?.weight, 0.5);
  assert.equal(afterSecond.find((p) => p.code === 'BL-0005')?.barCode, '7891234567932');
  assert.equal(afterSecond.find((p) => p.code === 'UT-003')?.weight, 1.05);
  assert.equal(afterSecond.find((p) => p.code === 'UT-003')?.name, 'Água de Coco 1 L');
});
