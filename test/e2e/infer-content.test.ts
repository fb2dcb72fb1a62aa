/**
 * `wmsbridge infer` on exports whose column names mean nothing to its dictionary (issue 40): the values
 * decide (a headerless partners file, cryptic product columns), rows are selected from content (a type
 * column F/T, a hierarchy level, an NF-e's cStat), and what cannot be told is said. Run as the real CLI.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { cp, readFile, readdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import iconv from 'iconv-lite';
import { PROJECT_ROOT, runCli } from '../helpers/cli.js';
import { makeTempDir } from '../helpers/tmp.js';
import { loadMappingFile, loadMappingsDir } from '../../src/map/load.js';
import { cnpjCheckDigits } from '../../src/map/checks.js';
import { channelSharing } from '../../src/map/multi.js';

let dir = '';
let cleanup: () => Promise<void> = async () => {};
before(async () => ({ dir, cleanup } = await makeTempDir('wmsbridge-infer-content-')));
after(() => cleanup());

const cnpj = (n: number) => {
  const base = `${String(10_000_000 + n * 7919).padStart(8, '0')}0001`;
  const c = `${base}${cnpjCheckDigits(base)}`;
  return `${c.slice(0, 2)}.${c.slice(2, 5)}.${c.slice(5, 8)}/${c.slice(8, 12)}-${c.slice(12)}`;
};
const PLACES = [
  ['SAO PAULO', 'SP', '11'],
  ['CURITIBA', 'PR', '41'],
  ['RECIFE', 'PE', '81'],
];

/** a compiled filter without the defaults the model adds */
const filterOf = (f: unknown) => {
  const { ignoreCase, ...rest } = f as Record<string, unknown>;
  void ignoreCase;
  return rest;
};

async function infer(file: string, extra: string[] = []): Promise<{ code: number; stdout: string; yaml: string; out: string }> {
  const out = join(dir, `${file.split('/').pop()}${extra.join('')}.yaml`);
  const r = await runCli(['infer', file, '--out', out, ...extra], { cwd: dir, timeoutMs: 60_000 });
  return { code: r.code ?? -1, stdout: r.stdout + r.stderr, yaml: await readFile(out, 'utf8').catch(() => ''), out };
}

describe('infer: content first', () => {
  test('a headerless "|" partners file with no known name: Provider from the values, F rows kept, T rows are carriers', async () => {
    const lines: string[] = [];
    for (let i = 0; i < 12; i++) {
      const [city, uf, ddd] = PLACES[i % 3]!;
      lines.push(
        [
          String(200 + i),
          `ALFA ${i}`,
          `ALFA ${i} COMERCIO LTDA`,
          'J',
          cnpj(i),
          `0${1000 + i}-000`,
          uf,
          city,
          `(${ddd}) 3${100 + i}-4455`,
          i % 4 === 3 ? 'T' : 'F',
        ].join('|'),
      );
    }
    const file = join(dir, 'CADPART_20241105.txt');
    await writeFile(file, `${lines.join('\n')}\n`);
    const r = await infer(file);
    assert.match(r.stdout, /target: Provider \(0\.50\): no known file-name word or column name; the values hold CNPJs/, r.stdout);
    const m = (await loadMappingFile(r.out)).spec;
    const f = m.fields as Record<string, { col?: string; transforms?: unknown[] }>;
    assert.deepEqual(
      ['cnpj', 'codeERP', 'mnemonic', 'fantasyName', 'socialName', 'postalCode', 'state', 'city', 'phone'].map((k) => `${k}=${f[k]?.col}`),
      [
        'cnpj=coluna_5',
        'codeERP=coluna_5',
        'mnemonic=coluna_1',
        'fantasyName=coluna_2',
        'socialName=coluna_3',
        'postalCode=coluna_6',
        'state=coluna_7',
        'city=coluna_8',
        'phone=coluna_9',
      ],
    );
    assert.deepEqual(f['cnpj']!.transforms, ['cnpj']);
    assert.deepEqual(filterOf(m.filter), { col: 'coluna_10', equals: 'F' });
    assert.match(r.yaml, /skips T \(3 rows: ShippingCompany, wmsbridge\s+#\s+infer --target ShippingCompany\)/);
    assert.match(r.stdout, /preview: 12 row\(s\) read, 9 record\(s\), 0 reject\(s\), 3 skipped/);
    const t = await infer(file, ['--target', 'ShippingCompany']);
    assert.match(t.stdout, /preview: 12 row\(s\) read, 3 record\(s\), 0 reject\(s\), 9 skipped/);
  });

  test('cryptic column names: the key, name, unit, weight and category come from the values, never a TODO key', async () => {
    const rows = ['PRDCD;XDSC;UMV;PSB;GRPC'];
    const names = ['ARROZ TIPO 1 5KG', 'FEIJAO CARIOCA 1KG', 'ACUCAR CRISTAL 2KG', 'CAFE TORRADO 500G', 'OLEO DE SOJA 900ML', 'SAL REFINADO 1KG'];
    for (let i = 0; i < 12; i++)
      rows.push([`P${String(i + 1).padStart(5, '0')}`, names[i % 6]!, ['UN', 'CX', 'KG'][i % 3], `${i + 1},${250 + i}`, `G0${i % 3}`].join(';'));
    const file = join(dir, 'EXPORT_20241105.csv');
    await writeFile(file, `${rows.join('\n')}\n`);
    const r = await infer(file, ['--target', 'Product']);
    const f = (await loadMappingFile(r.out)).spec.fields as Record<string, Record<string, unknown>>;
    assert.deepEqual(f['code'], { col: 'PRDCD', transforms: ['trim'] });
    assert.deepEqual(f['name'], { col: 'XDSC', transforms: ['trim'] });
    assert.deepEqual(f['unitmeasurement'], { col: 'UMV', transforms: ['trim'] });
    assert.deepEqual(f['weight'], { col: 'PSB', transforms: [{ number: { decimal: ',', thousands: '.' } }] });
    assert.deepEqual(f['categoryID'], { ref: 'Category', from: { col: 'GRPC' }, transforms: ['trim'] });
    assert.match(r.yaml, /the values are units of measure \(UN, CX, KG\)/);
    // the family is not in the file: a TODO, named, and infer exits 1
    assert.equal(r.code, 1, r.stdout);
    assert.match(r.stdout, /FAIL: not finished, TODO in fields\.familyID/);
  });

  test('a group table with a parent column and a level: Category keeps level 1, Family the levels below', async () => {
    const t = 'CODG\tNOMEG\tPAI\tNIVEL\n1000\tALIMENTOS\t0\t1\n1100\tGRAOS\t1000\t2\n1200\tBEBIDAS\t1000\t2\n2000\tLIMPEZA\t0\t1\n2100\tLAVANDERIA\t2000\t2\n';
    const file = join(dir, 'GRUPOS_20241105.tsv');
    await writeFile(file, t);
    const c = await infer(file, ['--target', 'Category']);
    assert.deepEqual(filterOf((await loadMappingFile(c.out)).spec.filter), { col: 'NIVEL', equals: '1' });
    assert.match(c.yaml, /'PAI' refers to 'CODG' of the same file \(a parent: a hierarchy\)/);
    assert.match(c.stdout, /5 row\(s\) read, 2 record\(s\), 0 reject\(s\), 3 skipped/);
    const f = await infer(file, ['--target', 'Family']);
    assert.deepEqual(filterOf((await loadMappingFile(f.out)).spec.filter), { col: 'NIVEL', notEquals: '1' });
    assert.match(f.stdout, /5 row\(s\) read, 3 record\(s\)/);
  });

  test('NF-e: only authorised normal NF-e are kept (a cancelled one is skipped); lot dates are written as DateTime', async () => {
    const src = await readFile(join(PROJECT_ROOT, 'inbox', 'notas', 'NFe35241112345678000195550010000077311192837461.xml'), 'utf8');
    const file = join(dir, 'NFe-autorizada.xml');
    await writeFile(file, src);
    const r = await infer(file);
    assert.match(r.yaml, /filter: \[\{ path: '\/protNFe\/infProt\/cStat', in: \['100', '150'\] \}, \{ path: '\/NFe\/infNFe\/ide\/finNFe', equals: '1' \}\]/);
    assert.match(r.yaml, /expirationDate: \{ path: 'prod\/rastro\/dVal', transforms: \[\{ date: \{ format: yyyy-MM-dd, output: datetime \} \}\] \}/);
    const cancelled = join(dir, 'NFe-cancelada.xml');
    assert.ok(src.includes('<cStat>100</cStat>'));
    await writeFile(cancelled, src.replace('<cStat>100</cStat>', '<cStat>101</cStat>'));
    const p = await runCli(['preview', r.out, cancelled], { cwd: dir, timeoutMs: 60_000 });
    assert.match(p.stderr, /: \d+ row\(s\) read, 0 record\(s\), 0 reject\(s\), \d+ not selected/);
  });

  test('a multi-record ";" file after a "#" comment line: record types declared, header lines grouping their items, the comment skipped', async () => {
    const text =
      '# exportado em 05/11/2024\nH;1001;05/11/2024;CLIENTE A LTDA\nI;1001;1;P0001;2,000;10,50\nI;1001;2;P0002;1,000;3,20\nH;1002;05/11/2024;CLIENTE B LTDA\nI;1002;1;P0003;5,000;1,00\n';
    const file = join(dir, 'PEDIDOS_MR_20241105.csv');
    await writeFile(file, text);
    const orders = await runCli(['infer', file, '--out', join(dir, 'mr.yaml')], { cwd: dir, timeoutMs: 60_000 });
    const yaml = await readFile(join(dir, 'mr.yaml'), 'utf8');
    // written and valid; exit 1 only for the company/branch/warehouse/owner a person fills in
    assert.equal(orders.code, 1, orders.stderr);
    assert.match(orders.stdout, /check: .* is valid/);
    assert.match(orders.stdout, /preview: 5 row\(s\) read, 2 record\(s\), 0 reject\(s\)/);
    assert.match(yaml, /comment: '#'/);
    assert.match(yaml, /- type: H\n\s+match: \{ col: 0, value: H \}\n\s+columns: \[tipo, h_2, h_3, h_4\]/);
    assert.match(yaml, /- type: I\n\s+match: \{ col: 0, value: I \}\n\s+columns: \[tipo, i_2, i_3, i_4, i_5, i_6\]/);
    assert.match(yaml, /headerRecord: H\n\s+itemRecord: I\n/);
    // the order number repeated on every item line is the link to its header, not the product
    assert.match(yaml, /productID: \{ ref: Product, from: \{ col: i_4 \}/);
    assert.match(yaml, /order: \{ col: h_2/);
    assert.doesNotMatch(yaml, /relaxColumnCount/);
    const other = await infer(file, ['--target', 'Product']);
    assert.match(other.yaml, /records:/);
    assert.match(other.yaml, /filter: \{ col: tipo, equals: I \}/);
    assert.match(other.yaml, /code: \{ col: i_4/);
  });

  test('a multi-record file with lots and a trailer: lotRecord (one item per lot, the item read as I/...) and the trailer count checked', async () => {
    const text =
      'C;5001;05/11/2024;MERCADO UM LTDA\nI;5001;1;SKU-0001;12,000;4,50\nL;1;LT-A1;8,000;30/04/2025\nL;1;LT-A2;4,000;31/05/2025\nI;5001;2;SKU-0002;3,000;9,90\n' +
      'C;5002;06/11/2024;MERCADO DOIS LTDA\nI;5002;1;SKU-0003;7,000;1,25\nL;1;LT-B7;7,000;15/06/2025\nT;8\n';
    const file = join(dir, 'PEDIDOS_LOTES_20241105.txt');
    await writeFile(file, text);
    const r = await infer(file);
    assert.match(r.yaml, /headerRecord: C\n\s+itemRecord: I\n\s+lotRecord: L\n/);
    // 8 lines before the trailer's own: counted with offset -1, so a truncated file fails whole
    assert.match(r.yaml, /trailer: \{ type: T, countField: t_2, counts: all, offset: -1 \}/);
    assert.match(r.yaml, /productID: \{ ref: Product, from: \{ col: 'I\/i_4' \}/);
    assert.match(r.yaml, /lotNumber: \{ col: l_3/);
    assert.match(r.yaml, /quantity: \{ coalesce: \[\{ col: l_4 \}, \{ col: 'I\/i_5' \}\]/);
    assert.match(r.stdout, /preview: 9 row\(s\) read, 2 record\(s\), 0 reject\(s\), 1 skipped/);
  });

  test('fixed-width H/D/T stock: detail boundaries from the data (zero-padded code, masked location, implied decimals, sign column, yyyyMMdd date)', async () => {
    const file = join(dir, 'SALDOS_HDT_20241105.txt');
    await cp(join(PROJECT_ROOT, 'test', 'fixtures', 'infer-corpus', 'files', 'rm', 'SALDOS_HDT_20241105.txt'), file);
    const r = await infer(file);
    const detail = /- type: detail\n[\s\S]*?(?=\n {4}- type:)/.exec(r.yaml)![0];
    const starts = [...detail.matchAll(/start: (\d+), length: (\d+)/g)].map((m) => `${m[1]}+${m[2]}`);
    // D | 0000041780 | 02.01 | 0000007178100 | + | 20240819
    assert.deepEqual(starts, ['1+1', '2+10', '12+5', '17+13', '30+1', '31+8']);
    assert.match(r.yaml, /productId: \{ ref: Product, from: \{ field: codigo \}/);
    assert.match(r.yaml, /quantity: \{ field: quantidade, transforms: \[\{ number: \{ decimal: ',', thousands: '', scale: 2 \} \}\] \}/);
    assert.match(r.yaml, /trailer: \{ type: trailer, countField: registros, counts: detail \}/);
    assert.match(r.stdout, /check: .* is valid/);
  });

  test('an XLSX sample is read through the XLSX input: the sheet with the table (not the instructions tab) and its header row', async () => {
    const file = join(dir, 'produtos_bling.xlsx');
    await cp(join(PROJECT_ROOT, 'test', 'fixtures', 'inputs', 'bling', 'produtos_bling.xlsx'), file);
    const r = await infer(file);
    assert.match(r.yaml, /source:\n\s+format: xlsx\n\s+sheet: Produtos\n\s+headerRow: 3\n/);
    assert.match(r.yaml, /target: Product/);
    assert.match(r.yaml, /barCode: \{ col: 'GTIN\/EAN'/);
    assert.match(r.stdout, /check: .* is valid/);
    assert.match(r.stdout, /preview: 6 row\(s\) read, 6 record\(s\), 0 reject\(s\)/);
  });

  test('ISO-8859-1 and Windows-1252 cannot be told apart without 0x80-0x9F bytes: the proposal says so', async () => {
    const file = join(dir, 'PRODUTOS_20241107.csv');
    await writeFile(file, iconv.encode('codigo;descricao;unidade\n0001;FEIJÃO;UN\n0002;AÇÚCAR;KG\n', 'latin1'));
    const r = await infer(file);
    assert.match(r.stdout, /Windows-1252 and ISO-8859-1 cannot be told apart from this sample/);
    assert.match(r.yaml, /cannot be told apart/);
  });
});

describe('infer <folder>: the mapping set of a drop', () => {
  /** target -> targets it refers to (ref or lookup), over a set of mapping specs */
  const refsOf = (specs: Array<{ target: string; spec: unknown }>): Set<string> => {
    const targets = new Set(specs.map((m) => m.target));
    const out = new Set<string>();
    const walk = (from: string, x: unknown): void => {
      if (Array.isArray(x)) x.forEach((y) => walk(from, y));
      else if (x && typeof x === 'object') {
        const o = x as Record<string, unknown>;
        for (const k of ['ref', 'lookup']) if (typeof o[k] === 'string' && targets.has(o[k]) && o[k] !== from) out.add(`${from} -> ${o[k]}`);
        // a constant placeholder refers to nothing of the drop
        if ('const' in o) return;
        Object.values(o).forEach((y) => walk(from, y));
      }
    };
    for (const m of specs) {
      const sp = m.spec as { fields: unknown; group?: { itemFields: unknown } };
      walk(m.target, sp.fields);
      walk(m.target, sp.group?.itemFields);
    }
    return out;
  };

  test("on the shipped sample inbox: the shipped mapping set's targets and references, in dependency order", async () => {
    const drop = join(dir, 'drop');
    await cp(join(PROJECT_ROOT, 'inbox'), join(drop, 'inbox'), { recursive: true });
    const out = join(drop, 'proposed');
    const r = await runCli(['infer', join(drop, 'inbox'), '--out', out], { cwd: drop, timeoutMs: 120_000 });
    // the company, branch and owner of orders and NF-e are never in a file: they need a person (exit 1)
    assert.equal(r.code, 1, r.stdout + r.stderr);
    assert.match(r.stdout, /15 file\(s\), 14 mapping\(s\) in .*, 0 refused, 1 matched by another mapping of the set/);
    assert.match(r.stdout, /needs a person \(\d+\):\n {2}- [\s\S]*nfe: TODO in fields\.companyID/);
    const shipped = (await loadMappingsDir(join(PROJECT_ROOT, 'mappings'))).mappings;
    const proposed = (await loadMappingsDir(out)).mappings;
    assert.equal(proposed.length, (await readdir(out)).length, 'every written mapping loads');
    assert.deepEqual(proposed.map((m) => m.target).sort(), shipped.map((m) => m.target).sort());
    const want = refsOf(shipped);
    const got = refsOf(proposed);
    assert.deepEqual(
      [...want].filter((x) => !got.has(x)),
      [],
      `references of the shipped set the proposal misses (proposed: ${[...got].join('; ')})`,
    );
    // the order: every mapping after those it refers to
    const order = /order \(a mapping after those it refers to\): (.*)/.exec(r.stdout)![1]!.split(', ');
    const nameOf = new Map<string, string>(proposed.map((m) => [m.target, m.name]));
    for (const ref of got) {
      const [from, to] = ref.split(' -> ') as [string, string];
      assert.ok(order.indexOf(nameOf.get(to)!) < order.indexOf(nameOf.get(from)!), `${ref}: ${order.join(', ')}`);
    }
    assert.match(r.stdout, /produtos\.categoryID -> categorias \(Category\)/);
    assert.match(r.stdout, /pedidos\.items\.productID -> produtos \(Product\)/);
  });

  test('one file, several targets: a partners file F/T gives a Provider and a ShippingCompany mapping, a group table a Category and a Family', async () => {
    const drop = join(dir, 'drop2');
    const corpus = join(PROJECT_ROOT, 'test', 'fixtures', 'infer-corpus', 'files', 'sankhya');
    await cp(join(corpus, 'PARCEIROS_20241105.txt'), join(drop, 'cadastros', 'PARCEIROS_20241105.txt'));
    await cp(join(corpus, 'TGFGRU_GRUPOS_20241105.tsv'), join(drop, 'cadastros', 'TGFGRU_GRUPOS_20241105.tsv'));
    const out = join(drop, 'proposed');
    const r = await runCli(['infer', drop, '--out', out], { cwd: drop, timeoutMs: 120_000 });
    assert.match(r.stdout, /2 file\(s\), 4 mapping\(s\)/, r.stdout + r.stderr);
    const ms = (await loadMappingsDir(out)).mappings;
    const byTarget = (t: string) => ms.find((m) => m.target === t)!.spec.filter as Record<string, unknown>;
    assert.deepEqual([byTarget('Provider')['equals'], byTarget('ShippingCompany')['equals']], ['F', 'T']);
    assert.deepEqual([byTarget('Category')['equals'], byTarget('Family')['notEquals']], ['1', '1']);
    assert.match(r.stdout, /tgfgru-grupos-family\.categoryID -> tgfgru-grupos \(Category\)/);
    assert.ok(r.stdout.indexOf('parceiros-shippingcompany ') > 0);
    // the pairs read one file on purpose: declared (sharesFilesWith), so check accepts them together
    const byName = (n: string) => ms.find((m) => m.name === n)!;
    assert.deepEqual(byName('parceiros').spec.sharesFilesWith, ['parceiros-shippingcompany']);
    assert.deepEqual(byName('tgfgru-grupos').spec.sharesFilesWith, ['tgfgru-grupos-family']);
    const sharing = channelSharing('cadastros', ms, ['PARCEIROS_20241105.txt', 'TGFGRU_GRUPOS_20241105.tsv']);
    assert.deepEqual(sharing.problems, []);
    assert.equal(sharing.notes.filter((n) => /are read by .* \(declared: sharesFilesWith\)/.test(n)).length, 2, sharing.notes.join('\n'));
    // without the declaration the same pair is refused
    const undeclared = ms.map((m) => (m.name === 'parceiros' ? { ...m, spec: { ...m.spec, sharesFilesWith: undefined } } : m)) as typeof ms;
    assert.equal(channelSharing('cadastros', undeclared, ['PARCEIROS_20241105.txt']).problems.length, 1);
  });
});
