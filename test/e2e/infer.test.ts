/**
 * `wmsbridge infer`, run as the real CLI on every shipped sample (inbox/, answered by the shipped
 * mappings/) and on the Protheus-style exports of test/fixtures/infer/ (answered by expected/*.yaml):
 * the mapping it writes must pass the mapping validation, preview the sample without rejects, read
 * the sample with the right encoding, delimiter and decimal separator, and get at least 80% of the
 * fields right (test/fixtures/infer/score.ts says what "right" means). The building blocks, in process:
 * test/unit/infer-blocks.test.ts.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdir, readFile, readdir, writeFile, stat } from 'node:fs/promises';
import { basename, join } from 'node:path';
import iconv from 'iconv-lite';
import { PROJECT_ROOT, runCli } from '../helpers/cli.js';
import { makeTempDir } from '../helpers/tmp.js';
import { loadMappingFile, loadMappingsDir } from '../../src/map/load.js';
import type { CompiledMapping } from '../../src/map/compile.js';
import { decimalsOf, scoreMapping } from '../fixtures/infer/score.js';

const INBOX = join(PROJECT_ROOT, 'inbox');
const FIX = join(PROJECT_ROOT, 'test', 'fixtures', 'infer');

let dir = '';
let cleanup: () => Promise<void> = async () => {};
before(async () => ({ dir, cleanup } = await makeTempDir('wmsbridge-infer-')));
after(() => cleanup());

interface Sample {
  file: string;
  channel: string;
  answer: CompiledMapping;
}

async function samples(): Promise<Sample[]> {
  const out: Sample[] = [];
  const shipped = await loadMappingsDir(join(PROJECT_ROOT, 'mappings'));
  assert.deepEqual(
    shipped.errors.map((e) => e.message),
    [],
  );
  for (const channel of await readdir(INBOX)) {
    for (const d of await readdir(join(INBOX, channel), { withFileTypes: true })) {
      if (!d.isFile()) continue;
      const answer = shipped.mappings.find((m) => m.matches(channel, d.name));
      assert.ok(answer, `no shipped mapping answers ${channel}/${d.name}`);
      out.push({ file: join(INBOX, channel, d.name), channel, answer });
    }
  }
  for (const name of (await readdir(join(FIX, 'expected'))).sort()) {
    const stem = name.replace(/\.yaml$/, '');
    const data = (await readdir(FIX)).find((f) => f.startsWith(`${stem}.`) && !f.endsWith('.ts'));
    assert.ok(data, `no sample for expected/${name}`);
    const answer = await loadMappingFile(join(FIX, 'expected', name));
    out.push({ file: join(FIX, data), channel: answer.match.channel ?? '', answer });
  }
  return out;
}

/** The sample decoded with an encoding (the parser's rules: iconv-lite, BOM stripped). */
async function decoded(file: string, encoding: string | undefined): Promise<string> {
  const text = iconv.decode(await readFile(file), encoding ?? 'utf-8');
  return text.charCodeAt(0) === 0xfeff ? text.slice(1) : text;
}

describe('wmsbridge infer on the shipped samples and the Protheus-style exports', () => {
  const figures: string[] = [];

  test('every sample: a valid mapping, a clean preview, right encoding/delimiter/decimal, >= 80% of fields right', async (t) => {
    const list = await samples();
    assert.ok(list.length >= 22, `expected the 15 shipped samples and 7 fixtures, found ${list.length}`);
    const failures: string[] = [];
    for (const s of list) {
      const out = join(dir, `${basename(s.file)}.yaml`);
      const r = await runCli(['infer', s.file, '--out', out], { cwd: dir, timeoutMs: 60_000 });
      // exit 0: the mapping validated and the preview of the sample had no rejects; 1 only for the
      // fields infer cannot know (company, branch, warehouse, owner...), named as TODOs
      assert.ok(
        r.code === 0 || (r.code === 1 && /FAIL: not finished, TODO in /.test(r.stdout)),
        `${basename(s.file)}: exit ${r.code}\n${r.stdout}\n${r.stderr}`,
      );
      assert.match(r.stdout, /check: .* is valid/);
      assert.match(r.stdout, /preview: \d+ row\(s\) read, \d+ record\(s\), 0 reject\(s\)/);
      const inferred = await loadMappingFile(out);
      const a = inferred.spec;
      const e = s.answer.spec;
      // reading the file: format, encoding (the same text), delimiter, decimal separator
      assert.equal(a.source.format, e.source.format, `${basename(s.file)}: format`);
      const encA = 'encoding' in a.source ? a.source.encoding : undefined;
      const encE = 'encoding' in e.source ? e.source.encoding : undefined;
      if (a.source.format !== 'xml')
        assert.equal(await decoded(s.file, encA), await decoded(s.file, encE), `${basename(s.file)}: encoding ${encA} reads the file differently from ${encE}`);
      if (a.source.format === 'delimited' && e.source.format === 'delimited')
        assert.equal(a.source.delimiter, e.source.delimiter, `${basename(s.file)}: delimiter`);
      const decE = decimalsOf(e);
      if (decE.size) assert.deepEqual([...decimalsOf(a)], [...decE], `${basename(s.file)}: decimal separator`);
      // the fields
      const sc = scoreMapping(a, e);
      figures.push(
        `  ${basename(s.file).padEnd(52)} ${sc.right}/${sc.total} = ${sc.fraction.toFixed(2)} (fields read from the file: ${sc.strict.right}/${sc.strict.total})${sc.fields
          .filter((f) => !f.right)
          .map((f) => `\n      - ${f.field}: ${f.why} (answer ${f.expected ?? '-'}, inferred ${f.inferred ?? '-'})`)
          .join('')}`,
      );
      if (sc.fraction < 0.8) failures.push(`${basename(s.file)}: ${sc.right}/${sc.total} fields right`);
    }
    t.diagnostic(figures.join('\n'));
    assert.deepEqual(failures, [], 'samples below 80% of the fields right');
  });

  test('the YAML carries the schema line, a confidence and evidence per field, and TODOs', async () => {
    const out = join(dir, 'produtos-commented.yaml');
    const r = await runCli(['infer', join(FIX, 'SB1_PRODUTOS_20241105.csv'), '--out', out], { cwd: dir, timeoutMs: 60_000 });
    // no family column: familyID is a TODO, named, and infer exits 1
    assert.equal(r.code, 1, r.stderr);
    assert.match(r.stdout, /FAIL: not finished, TODO in fields\.familyID: check and preview fail/);
    // comments wrap at 110 characters: join their continuation lines before matching
    const text = (await readFile(out, 'utf8')).replace(/\n\s*# {3}/g, ' ');
    assert.match(text, /^# yaml-language-server: \$schema=.*schemas\/mapping\.schema\.json\n/);
    assert.match(
      text,
      /# high 0\.\d\d: column 'B1_CODBAR' is a known name for barCode; 13 digits, valid GTIN-13 check digit in 100% of 20 values\n {2}barCode: \{ col: B1_CODBAR, transforms: \[trim, ean\] \}/,
    );
    assert.match(text, /# high 0\.\d\d: column 'B1_POSIPI' .*NCM: 8 digits/);
    assert.match(text, /# TODO: no family column/);
    assert.match(text, /encoding: windows-1252: not UTF-8; 3 byte\(s\) in 0x80-0x9F/);
    assert.match(text, /filter: \{ not: \{ col: B1_MSBLQL, equals: '1' \} \}/);
    assert.match(r.stdout, /familyID +<- \(constant\) +0\.10 {2}TODO/);
  });

  test('a TODO never checks or previews clean: infer, preview and check fail naming every TODO field', async () => {
    const home = join(dir, 'todo');
    await mkdir(join(home, 'inbox', 'cadastros'), { recursive: true });
    await mkdir(join(home, 'mappings'), { recursive: true });
    // a key the mapping leaves as a TODO constant (issue 40: 248 records previewed clean, every one with the key TODO)
    const shipped = await readFile(join(PROJECT_ROOT, 'mappings', 'produtos.yaml'), 'utf8');
    const guessed = shipped.replace(/^ {2}code: .*$/m, '  code: { const: TODO }');
    assert.notEqual(guessed, shipped);
    await writeFile(join(home, 'mappings', 'produtos.yaml'), guessed);
    const data = join(INBOX, 'cadastros', 'PRODUTOS_20241105.csv');
    const p = await runCli(['preview', join(home, 'mappings', 'produtos.yaml'), data], { cwd: home, timeoutMs: 60_000 });
    assert.equal(p.code, 2, p.stderr);
    assert.match(p.stderr, /FAIL: .*produtos\.yaml is not finished: TODO in fields\.code; replace each TODO/);
    const c = await runCli(['check'], { cwd: home, timeoutMs: 60_000, env: { WMS_URL: '', WMS_ACCESS_KEY_ID: '', WMS_SECRET_KEY: '' } });
    assert.equal(c.code, 2, c.stdout + c.stderr);
    assert.match(c.stderr, /mapping "produtos" is not finished: TODO in fields\.code \(left by wmsbridge infer/);
    // what infer writes: the fields it could not decide are TODOs, and the same list fails preview and check
    const sample = join(home, 'inbox', 'cadastros', 'ITENS_20241105.csv');
    await writeFile(sample, 'CODPROD;DESCRPROD;PESOBRUTO\n1001;ARROZ TIPO 1;5,05\n1008;FEIJAO CARIOCA;1,01\n1015;ACUCAR CRISTAL;2,02\n');
    const out = join(home, 'mappings', 'itens.yaml');
    const i = await runCli(['infer', sample, '--target', 'Product', '--out', out], { cwd: home, timeoutMs: 60_000 });
    assert.equal(i.code, 1, i.stdout + i.stderr);
    const todos = /FAIL: not finished, TODO in (.*): check and preview fail/.exec(i.stdout)?.[1];
    assert.ok(todos && todos.includes('fields.'), i.stdout);
    const p2 = await runCli(['preview', out, sample], { cwd: home, timeoutMs: 60_000 });
    assert.equal(p2.code, 2, p2.stderr);
    assert.ok(p2.stderr.includes(`TODO in ${todos}; replace each TODO`), p2.stderr);
    const c2 = await runCli(['check'], { cwd: home, timeoutMs: 60_000, env: { WMS_URL: '', WMS_ACCESS_KEY_ID: '', WMS_SECRET_KEY: '' } });
    assert.equal(c2.code, 2);
    assert.ok(c2.stderr.includes(`mapping "itens" is not finished: TODO in ${todos}`), c2.stderr);
  });

  test('never overwrites without --force; --force overwrites', async () => {
    const out = join(dir, 'keep.yaml');
    await writeFile(out, 'mine\n');
    const r = await runCli(['infer', join(INBOX, 'cadastros', 'UNIDADES_20241105.csv'), '--out', out], { cwd: dir, timeoutMs: 60_000 });
    assert.equal(r.code, 2);
    assert.match(r.stderr, /keep\.yaml exists; not overwritten \(use --force/);
    assert.equal(await readFile(out, 'utf8'), 'mine\n');
    const f = await runCli(['infer', join(INBOX, 'cadastros', 'UNIDADES_20241105.csv'), '--out', out, '--force'], { cwd: dir, timeoutMs: 60_000 });
    assert.equal(f.code, 0, f.stderr);
    assert.match(await readFile(out, 'utf8'), /target: UnitMeasurement/);
  });

  test('default --out is mappings/<name>.yaml; the preview rejects are printed, exit 1; no WMS needed', async () => {
    // a product file whose EAN check digit is wrong on one row: the preview says so
    const data = join(dir, 'PRODUTOS_20241106.csv');
    await writeFile(
      data,
      'codigo;descricao;unidade;ean;peso\n000101;ARROZ;UN;7891234001016;5,05\n000102;FEIJAO;UN;7891234001024;1,01\n000103;MILHO;UN;7891234001030;0,5\n',
    );
    const r = await runCli(['infer', data], { cwd: dir, timeoutMs: 60_000, env: { WMS_URL: '', WMS_ACCESS_KEY_ID: '', WMS_SECRET_KEY: '' } });
    assert.equal(r.code, 1, r.stdout + r.stderr);
    assert.ok((await stat(join(dir, 'mappings', 'produtos.yaml'))).isFile());
    assert.match(r.stdout, /REJECT line 3: invalid_ean: .*7891234001024/);
    assert.match(r.stdout, /no WMS: read-only lookups are not resolved/);
  });

  test('an active flag becomes the filter; a small code set no field reads is flagged as a map/table/filter candidate', async () => {
    const data = join(dir, 'CATEGORIAS_20241106.csv');
    await writeFile(data, 'codigo;descricao;tipo;ativo\nA1;Um;MP;S\nA2;Dois;PA;S\nA3;Tres;PA;N\nA4;Quatro;MP;S\n');
    const out = join(dir, 'cat.yaml');
    const r = await runCli(['infer', data, '--out', out], { cwd: dir, timeoutMs: 60_000 });
    assert.equal(r.code, 0, r.stdout + r.stderr);
    const text = await readFile(out, 'utf8');
    assert.match(text, /# TODO: few values, a map, table or filter candidate: tipo \(MP, PA\)/);
    assert.match(text, /filter: \{ col: ativo, in: \[S, Sim\], ignoreCase: true \}/);
    assert.match(r.stdout, /preview: 4 row\(s\) read, 3 record\(s\), 0 reject\(s\), 1 skipped/);
  });

  test('--target overrides the guess; an unknown target is a usage error', async () => {
    const out = join(dir, 'forced.yaml');
    const r = await runCli(['infer', join(INBOX, 'cadastros', 'TRANSPORTADORAS_20241105.csv'), '--target', 'Provider', '--out', out], {
      cwd: dir,
      timeoutMs: 60_000,
    });
    assert.equal(r.code, 0, r.stderr);
    assert.match(await readFile(out, 'utf8'), /target: Provider/);
    const bad = await runCli(['infer', join(INBOX, 'cadastros', 'TRANSPORTADORAS_20241105.csv'), '--target', 'Cliente', '--out', join(dir, 'x.yaml')], {
      cwd: dir,
      timeoutMs: 60_000,
    });
    assert.equal(bad.code, 2);
    assert.match(bad.stderr, /--target 'Cliente' is not a target/);
  });

  test('real-world files written by others: every NF-e sample maps cleanly; the IBPT table reads as cp1252, ";", decimal "."', async () => {
    const SAMPLES = join(PROJECT_ROOT, 'test', 'fixtures', 'samples');
    const nfes = [
      ...(await readdir(join(SAMPLES, 'nfelib'))).filter((f) => f.endsWith('.xml')).map((f) => join(SAMPLES, 'nfelib', f)),
      // examples__nfe_v4.00_PL_010C.xml is a schema example whose values are the word "string": left out
      ...(await readdir(join(SAMPLES, 'sped-nfe'))).filter((f) => f.endsWith('.xml') && !f.includes('PL_010C')).map((f) => join(SAMPLES, 'sped-nfe', f)),
    ];
    assert.ok(nfes.length >= 10);
    for (const f of nfes) {
      const out = join(dir, `real-${basename(f)}.yaml`);
      const r = await runCli(['infer', f, '--out', out], { cwd: dir, timeoutMs: 60_000 });
      // the receiving company, branch, warehouse and owner are never in an NF-e: TODOs, exit 1
      assert.equal(r.code, 1, `${basename(f)}: ${r.stdout}${r.stderr}`);
      assert.match(r.stdout, /0 reject\(s\)/);
      assert.match(r.stdout, /FAIL: not finished, TODO in fields\.companyID, fields\.branchID, fields\.warehouseID, fields\.ownersID/);
      assert.match(r.stdout, /NF-e recognised/);
      assert.equal((await loadMappingFile(out)).target, 'PurchaseOrder');
    }
    const out = join(dir, 'ibpt.yaml');
    const r = await runCli(['infer', join(SAMPLES, 'ibpt-tabela-cp1252', 'TabelaIBPTaxSP.csv'), '--target', 'Product', '--out', out], {
      cwd: dir,
      timeoutMs: 60_000,
    });
    // a tax table is no product file: what infer cannot decide there is a TODO (exit 1), not a guess
    assert.equal(r.code, 1, r.stdout + r.stderr);
    const m = (await loadMappingFile(out)).spec;
    assert.deepEqual(
      [m.source.format, 'delimiter' in m.source ? m.source.delimiter : '', 'encoding' in m.source ? m.source.encoding : ''],
      ['delimited', ';', 'windows-1252'],
    );
    assert.match(r.stdout, /numbers: decimal separator '\.' \(0 value\(s\) with a decimal comma/);
  });

  test('a UTF-16 sample (Excel "Unicode text") is read from its byte order mark', async () => {
    const data = join(dir, 'UTF16.txt');
    await writeFile(data, Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from('codigo\tdescricao\r\nC1\tCategoria São\r\nC2\tOutra\r\n', 'utf16le')]));
    const out = join(dir, 'u.yaml');
    const r = await runCli(['infer', data, '--target', 'Category', '--out', out], { cwd: dir, timeoutMs: 60_000 });
    assert.equal(r.code, 0, r.stderr);
    const yaml = await readFile(out, 'utf8');
    assert.match(yaml, /encoding: utf-16le/);
    assert.match(yaml, /delimiter: "\\t"|delimiter: '\\t'|delimiter: "\t"/);
  });
});
