/**
 * A night with bad product rows, as the accountant reads it (issue 42): the sample inbox with four bad rows added
 * to PRODUTOS (an NCM with a letter and a weight that is not a number, refused while mapping; a logistics profile
 * the WMS does not have, looked up while mapping; a category the WMS does not have, refused when sending), run
 * through the CLI against the real sandbox. The report's first screen, the rejects file and the result file read in
 * the outbox's language (pt-BR by default, en with outbox.locale: en), each reason naming the ERP's column the
 * person edits (ncm, peso_bruto, perfil_logistico, categoria), its line and its value; the WMS field only as a
 * detail. The shipped attachments folder (pedidos/anexos) is not reported as an inbox entry not taken.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { appendFile, cp, mkdir, readdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import iconv from 'iconv-lite';
import { makeTempDir } from '../helpers/tmp.js';
import { runCli, PROJECT_ROOT, workspaceFlags } from '../helpers/cli.js';
import { startSandbox, type Sandbox } from '../helpers/sandbox.js';

let tmp: { dir: string; cleanup: () => Promise<void> };
let sb: Sandbox;

before(async () => {
  tmp = await makeTempDir('wmsbridge-e2e-reasons-');
  sb = await startSandbox({ seed: 42 });
});

after(async () => {
  await sb?.close();
  await tmp?.cleanup();
});

const PRODUCTS = 'PRODUTOS_20241105.csv';
/** the bad rows, by code: what is wrong, the column to fix and the value refused */
const BAD = [
  { code: '000701', row: '000701;PRODUTO NCM COM LETRA;MERC;GRAOS;UN;;19O59020;1,000;Marca;;S', column: 'ncm', value: '19O59020' },
  { code: '000702', row: '000702;PRODUTO PESO INVALIDO;MERC;GRAOS;UN;;10063021;1,2,3;Marca;;S', column: 'peso_bruto', value: '1,2,3' },
  { code: '000703', row: '000703;PRODUTO CATEGORIA DESCONHECIDA;INEXISTENTE;GRAOS;UN;;10063021;1,000;Marca;;S', column: 'categoria', value: 'INEXISTENTE' },
  { code: '000704', row: '000704;PRODUTO PERFIL DESCONHECIDO;MERC;GRAOS;UN;;10063021;1,000;Marca;NAOEXISTE;S', column: 'perfil_logistico', value: 'NAOEXISTE' },
] as const;

/** The sample inbox with the bad rows appended to the products file (windows-1252, CRLF like the rest); their lines. */
async function night(name: string, config: Record<string, unknown>): Promise<{ dir: string; flags: string[]; lines: Map<string, number> }> {
  const dir = join(tmp.dir, name);
  await mkdir(dir, { recursive: true });
  await cp(join(PROJECT_ROOT, 'inbox'), join(dir, 'inbox'), { recursive: true, filter: (s) => !s.includes('.wmsbridge') });
  const file = join(dir, 'inbox', 'cadastros', PRODUCTS);
  const text = iconv.decode(await readFile(file), 'windows-1252');
  const nl = text.includes('\r\n') ? '\r\n' : '\n';
  const before = text.split(/\r?\n/).filter((l) => l !== '').length;
  await appendFile(file, iconv.encode(`${text.endsWith(nl) ? '' : nl}${BAD.map((b) => b.row).join(nl)}${nl}`, 'windows-1252'));
  const lines = new Map(BAD.map((b, i) => [b.code, before + i + 1]));
  await writeFile(join(dir, 'config.json'), JSON.stringify({ wms: { url: sb.url, accessKeyId: sb.accessKeyID }, ...config }));
  return { dir, flags: ['--config', join(dir, 'config.json'), ...workspaceFlags(dir)], lines };
}

/** the first-screen section of a report page, as text */
function firstScreen(html: string): string {
  const m = /<section class="first"[^>]*>([\s\S]*?)<\/section>/.exec(html);
  assert.ok(m, 'the page has a first-screen section');
  return m[1]!
    .replace(/<[^>]+>/g, ' ')
    .replace(/&quot;/g, '"')
    .replace(/&#39;/g, "'")
    .replace(/&amp;/g, '&');
}

async function onlyFile(dir: string, suffix: string): Promise<string> {
  const names = (await readdir(dir)).filter((f) => f.endsWith(suffix) && f.startsWith('PRODUTOS'));
  assert.equal(names.length, 1, `${dir}: ${names.join(', ')}`);
  return join(dir, names[0]!);
}

/** the lines of a CSV written by the outbox (UTF-8 with BOM) or back in the source's encoding (windows-1252) */
async function csvLines(path: string, encoding: 'utf-8' | 'windows-1252'): Promise<string[]> {
  return iconv
    .decode(await readFile(path), encoding)
    .replace(/^\uFEFF/, '')
    .split(/\r?\n/)
    .filter((l) => l !== '');
}

async function runNight(name: string, config: Record<string, unknown>) {
  const n = await night(name, config);
  const r = await runCli(['run', ...n.flags], { env: { WMS_SECRET_KEY: sb.secretKey, WMSBRIDGE_LOG_LEVEL: 'warn' }, timeoutMs: 120_000 });
  assert.equal(r.code, 1, `bad rows need attention: exit 1\n${r.stdout}\n${r.stderr.slice(-3000)}`);
  const html = await readFile(join(n.dir, 'outbox', 'reports', 'latest.html'), 'utf8');
  const rejects = await csvLines(await onlyFile(join(n.dir, 'outbox', 'rejects', 'cadastros'), '.csv'), 'windows-1252');
  const results = await csvLines(await onlyFile(join(n.dir, 'outbox', 'results', 'cadastros'), '.result.csv'), 'utf-8');
  return { ...n, html, rejects, results };
}

test('pt-BR (the default): every surface names the ERP column, the line and the value', { timeout: 180_000 }, async () => {
  const { html, rejects, results, lines } = await runNight('pt', {});
  const first = firstScreen(html);
  const where = (code: string): string => `${PRODUCTS}:${lines.get(code)}`;
  // the first screen: one sentence per reason, in Portuguese, naming the column; the example with its line and value
  assert.ok(first.includes('1 registro recusado: o valor da coluna ncm não é um NCM: são 8 dígitos, só números.'), first);
  assert.ok(first.includes(`ex.: ${where('000701')}, valor "19O59020"`), first);
  assert.ok(first.includes('1 registro recusado: o valor da coluna peso_bruto não é um número.'), first);
  assert.ok(first.includes(`ex.: ${where('000702')}, valor "1,2,3"`), first);
  assert.ok(first.includes('1 registro recusado: o valor da coluna perfil_logistico não foi encontrado no WMS.'), first);
  assert.ok(first.includes(`ex.: ${where('000704')}, valor "NAOEXISTE"`), first);
  assert.ok(first.includes('1 registro recusado: Category não encontrado no WMS: confira o valor da coluna categoria.'), first);
  assert.ok(first.includes(`ex.: ${where('000703')}, valor "INEXISTENTE"`), first);
  assert.doesNotMatch(
    first,
    /is not an NCM|not a number|not found|field |campo (ncm|weight|categoryID|logisticsProfileID)\b|'…'/,
    'no English, no WMS field, no blanked value',
  );
  // the shipped attachments folder is where it should be: no "not taken" section for it
  assert.doesNotMatch(html, /Itens da entrada não recebidos|sub-folders/);

  // the rejects file: the original header and rows, the reason in pt-BR in wmsbridge_error, with its line
  assert.match(rejects[0]!, /;perfil_logistico;ativo;wmsbridge_error$/);
  assert.equal(rejects.length, 1 + BAD.length, rejects.join('\n'));
  const rejectOf = (code: string): string => rejects.find((l) => l.startsWith(`${code};`)) ?? '';
  // the WMS field has the column's name here: no detail to add
  assert.ok(
    rejectOf('000701').endsWith(`;"linha ${lines.get('000701')}: o valor da coluna ncm não é um NCM: são 8 dígitos, só números (valor ""19O59020"")"`),
    rejectOf('000701'),
  );
  assert.ok(
    rejectOf('000702').endsWith(`;"linha ${lines.get('000702')}: o valor da coluna peso_bruto não é um número (valor ""1,2,3""; campo weight no WMS)"`),
    rejectOf('000702'),
  );
  assert.ok(
    rejectOf('000703').endsWith(
      `;"linha ${lines.get('000703')}: Category não encontrado no WMS: confira o valor da coluna categoria (valor ""INEXISTENTE""; campo categoryID no WMS)"`,
    ),
    rejectOf('000703'),
  );
  assert.ok(
    rejectOf('000704').endsWith(
      `;"linha ${lines.get('000704')}: o valor da coluna perfil_logistico não foi encontrado no WMS (valor ""NAOEXISTE""; campo logisticsProfileID no WMS)"`,
    ),
    rejectOf('000704'),
  );

  // the result file: the technical columns as they were, the reason in pt-BR last
  assert.equal(results[0], 'line;line_end;target;key;outcome;wms_id;error;mapping;reason');
  for (const b of BAD) {
    const row = results.find((l) => l.startsWith(`${lines.get(b.code)};`)) ?? '';
    assert.match(row, /;rejected;/, row);
    assert.ok(row.includes(`da coluna ${b.column}`) && row.includes(b.value), `${b.code}: ${row}`);
  }
});

test('outbox.locale en: the same night in English, naming the same columns', { timeout: 180_000 }, async () => {
  const { html, rejects, results, lines } = await runNight('en', { outbox: { locale: 'en' } });
  const first = firstScreen(html);
  assert.ok(first.includes('1 record rejected: the value of column ncm is not an NCM: 8 digits, digits only.'), first);
  assert.ok(first.includes(`e.g. ${PRODUCTS}:${lines.get('000701')}, value "19O59020"`), first);
  assert.ok(first.includes('Category not found in the WMS: check the value of column categoria.'), first);
  assert.ok(first.includes('the value of column perfil_logistico was not found in the WMS.'), first);
  assert.ok(first.includes('the value of column peso_bruto is not a number.'), first);
  assert.doesNotMatch(first, /não|coluna/);
  const rejectOf = (code: string): string => rejects.find((l) => l.startsWith(`${code};`)) ?? '';
  assert.ok(
    rejectOf('000702').endsWith(`;"line ${lines.get('000702')}: the value of column peso_bruto is not a number (value ""1,2,3""; WMS field weight)"`),
    rejectOf('000702'),
  );
  assert.ok(rejectOf('000703').includes(`line ${lines.get('000703')}: Category not found in the WMS: check the value of column categoria`), rejectOf('000703'));
  const row = results.find((l) => l.startsWith(`${lines.get('000704')};`)) ?? '';
  assert.ok(row.endsWith(';"the value of column perfil_logistico was not found in the WMS (value ""NAOEXISTE""; WMS field logisticsProfileID)"'), row);
});
