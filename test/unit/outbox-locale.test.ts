import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { dirname, join, resolve } from 'node:path';
import { readFile } from 'node:fs/promises';
import ExcelJS from 'exceljs';
import { makeTempDir } from '../helpers/tmp.js';
import { reportCauses, renderReportHtml, statusInWords, writeRunReport } from '../../src/outbox/report.js';
import { sampleRunSummary } from '../helpers/sample-summary.js';
import { writeXlsx } from '../../src/outbox/xlsx.js';
import { CATALOGS, createI18n } from '../../src/i18n/index.js';
import { summaryLine } from '../../src/app/run.js';
import type { RunSummary } from '../../src/outbox/types.js';

let dir: string;
let cleanup: () => Promise<void>;
before(async () => ({ dir, cleanup } = await makeTempDir()));
after(async () => cleanup());

/** the text of the first-screen section (causes and files to fix) */
function firstScreen(html: string): string {
  const m = /<section class="first"[^>]*>([\s\S]*?)<\/section>/.exec(html);
  assert.ok(m, 'the page has a first-screen section');
  return m[1]!;
}
const causesOf = (html: string): string[] => [...firstScreen(html).matchAll(/<li class="cause [a-z]+" data-kind="([a-z-]+)">/g)].map((m) => m[1]!);

describe('outbox locale (pt-BR by default)', () => {
  test('catalogs: every key exists in both languages', () => {
    assert.deepEqual(Object.keys(CATALOGS['pt-BR']).sort(), Object.keys(CATALOGS.en).sort());
  });

  test('numbers, dates and reasons from stable codes', () => {
    const pt = createI18n('pt-BR', 'America/Sao_Paulo');
    const en = createI18n('en', 'America/Sao_Paulo');
    assert.equal(pt.num(20032), '20.032');
    assert.equal(pt.num(1234.56), '1.234,56');
    assert.equal(en.num(1234.56), '1,234.56');
    assert.equal(pt.dateTime('2026-11-24T01:35:00Z'), '23/11/2026 22:35');
    const r = { code: 'invalid_number', params: { field: 'peso', value: '12,3,4' } };
    assert.equal(pt.reason(r, 'english fallback', true), 'o valor do campo peso não é um número (valor "12,3,4")');
    assert.equal(en.reason(r), 'the value of field peso is not a number');
    // the source column the mapping reads for the field is what the reason names; the WMS field is a detail
    const c = { code: 'invalid_number', params: { field: 'weight', column: 'peso_bruto', value: '12,3,4' } };
    assert.equal(pt.reason(c), 'o valor da coluna peso_bruto não é um número');
    assert.equal(pt.reason(c, '', true), 'o valor da coluna peso_bruto não é um número (valor "12,3,4"; campo weight no WMS)');
    assert.equal(en.reason(c, '', true), 'the value of column peso_bruto is not a number (value "12,3,4"; WMS field weight)');
    // a code without a template keeps the English message; no code at all too
    assert.equal(pt.reason({ code: 'never_heard_of_it' }, 'line 3: odd'), 'line 3: odd');
    assert.equal(pt.reason(undefined, 'line 3: odd'), 'line 3: odd');
    assert.equal(
      pt.reason({ code: 'E_WMS_HTTP', params: { status: 422, message: 'SKU inválido' } }, '', true),
      'o WMS respondeu com erro (HTTP 422): "SKU inválido"',
    );
  });

  test('the page is pt-BR: lang, headings, outcome names, numbers, zone', () => {
    const html = renderReportHtml(sampleRunSummary(), join(dir, 'reports', 'x'), dir, { timeZone: 'America/Sao_Paulo' });
    assert.match(html, /<html lang="pt-BR">/);
    assert.ok(html.includes('O que aconteceu e o que fazer'));
    assert.ok(html.includes('25 registros precisam de atenção, 1 arquivo com erro'));
    assert.ok(html.includes('>1.478<'), 'thousands with a dot');
    assert.ok(html.includes('Início 29/07/2025 11:56:56 America/Sao_Paulo'));
    assert.ok(html.includes('Recusados') && html.includes('Retidos') && html.includes('Em dúvida'));
    assert.ok(!html.includes('All delivered') && !html.includes('Records needing attention'), 'no English headings');
    // reasons are rendered from their codes, not from the English messages
    assert.ok(html.includes('Category não encontrado no WMS: confira o valor da coluna categoria'));
    assert.ok(!html.includes('categoryID does not exist'));
  });

  test('rejects night: one sentence per cause, first; then files to fix with working links; error files in the chart', () => {
    const outbox = join(dir, 'o-rejects');
    const pageDir = join(outbox, 'reports', 'r1');
    const s = sampleRunSummary();
    const html = renderReportHtml(s, pageDir, outbox, { timeZone: 'UTC' });
    // the causes come before the totals, the charts and the tables
    assert.ok(html.indexOf('class="first"') < html.indexOf('class="cards"'));
    assert.ok(html.indexOf('class="first"') < html.indexOf('<svg'));
    assert.deepEqual(causesOf(html), ['outage', 'rejected', 'rejected', 'rejected', 'held', 'in-doubt', 'file-error', 'duplicates']);
    assert.ok(
      firstScreen(html).includes(
        '9 registros recusados: Category não encontrado no WMS: confira o valor da coluna categoria. Corrija-os no arquivo de recusas',
      ),
    );
    // files to fix: each rejects file (and the file moved to error/) linked relatively, resolving to the right file
    const fix = /<ul class="fix">([\s\S]*?)<\/ul>/.exec(firstScreen(html))![1]!;
    const hrefs = [...fix.matchAll(/href="([^"]+)"/g)].map((m) => decodeURIComponent(m[1]!));
    const expected = [...s.files.filter((f) => f.rejectsFile).map((f) => f.rejectsFile!), 'error/saldo-estoque.csv'].map((f) => resolve(outbox, f));
    assert.deepEqual(hrefs.map((h) => resolve(pageDir, h)).sort(), expected.sort());
    // the file in error/ has its row in the per-file chart
    const chart = /<svg class="chart"[\s\S]*?<\/svg>/.exec(html)![0];
    assert.ok(chart.includes('saldo-estoque.csv') && chart.includes('arquivo com erro'));
  });

  test('outage night: the outage is ONE line with how many records wait; no per-HTTP-status causes', () => {
    const s = sampleRunSummary({ scenario: 'outage' });
    const html = renderReportHtml(s, join(dir, 'reports', 'x'), dir, { timeZone: 'UTC' });
    assert.deepEqual(causesOf(html), ['outage']);
    const causes = reportCauses(s);
    assert.equal(causes.length, 1);
    assert.equal(causes[0]!.count, s.outage!.waiting);
    assert.match(
      causes[0]!.text,
      new RegExp(
        `^O WMS ficou indisponível: não foi possível conectar ao WMS, desde .*\\. ${s.outage!.waiting} registros aguardam e serão enviados na próxima execução`,
      ),
    );
    assert.equal(statusInWords(s).text, `O WMS ficou indisponível: ${s.outage!.waiting} registros aguardam a próxima execução`);
    // without outage facts from the run, the outage-coded reasons still make one line
    const { outage: _o, ...noFacts } = s;
    void _o;
    assert.deepEqual(
      reportCauses(noFacts as RunSummary).map((c) => c.kind),
      ['outage'],
    );
  });

  test('a run where every file was a duplicate says so', () => {
    const base = sampleRunSummary({ scenario: 'clean' });
    const dup = (name: string): RunSummary['files'][number] => ({
      channel: 'products',
      name,
      status: 'duplicate',
      mapping: null,
      target: null,
      rows: 0,
      outcomes: {},
    });
    const s: RunSummary = {
      ...base,
      files: [dup('a.csv'), dup('b.csv')],
      totals: { ...base.totals, created: 0, updated: 0, records: 0, files: 2 },
      errorReasons: [],
      attention: [],
    };
    assert.equal(statusInWords(s).text, 'Nada enviado: todos os 2 arquivos já tinham sido processados (duplicados)');
    assert.equal(statusInWords(s, createI18n('en', 'UTC')).text, 'Nothing sent: all 2 files had already been processed (duplicates)');
    assert.ok(!renderReportHtml(s, dir, dir).includes('Tudo entregue'));
  });

  test('clean night: all delivered, nothing to do', () => {
    const s = sampleRunSummary({ scenario: 'clean' });
    const html = renderReportHtml(s, dir, dir, { timeZone: 'UTC' });
    assert.deepEqual(causesOf(html), ['ok']);
    assert.ok(html.includes('Tudo entregue'));
  });

  test('the summary line printed by run is in the locale', () => {
    const s = sampleRunSummary({ scenario: 'clean' });
    const pt = summaryLine(s, '/o/r.html', 0);
    assert.match(pt, /^4 arquivo\(s\), 1\.478 registro\(s\): 1\.035 criados, 443 atualizados em 97,4 s; relatório \/o\/r\.html$/);
    assert.match(
      summaryLine(s, null, 1, createI18n('en', 'UTC')),
      /^4 file\(s\), 1,478 record\(s\): 1,035 created, 443 updated; 1 problem\(s\), see the log in 97\.4 s$/,
    );
  });

  test('records sent for another instance (a helper) are named in the line and the report, apart from the totals', () => {
    const s: RunSummary = {
      ...sampleRunSummary({ scenario: 'clean' }),
      files: [],
      totals: { ...sampleRunSummary({ scenario: 'clean' }).totals, created: 0, updated: 0, records: 0, files: 0 },
      helped: { records: 6412, files: [{ name: 'PRODUTOS_<big>.csv', channel: 'cadastros', owner: 'vm-a:4242:ab12', records: 6412 }] },
    };
    assert.match(summaryLine(s, null, 0), /^0 arquivo\(s\), 0 registro\(s\); 6\.412 registro\(s\) de 1 arquivo\(s\) de outras instâncias enviados/);
    assert.match(summaryLine(s, null, 0, createI18n('en', 'UTC')), /; 6,412 record\(s\) of 1 file\(s\) of other instances sent/);
    const html = renderReportHtml(s, dir, dir, { timeZone: 'UTC' });
    assert.ok(html.includes('<h2>Enviados para outras instâncias</h2>'), 'pt-BR section');
    const row =
      /<tr><td>cadastros<\/td><td class="mono">PRODUTOS_&lt;big&gt;\.csv<\/td><td class="mono">vm-a:4242:ab12<\/td><td class="num">6\.412<\/td><\/tr>/;
    assert.match(html, row, 'file (escaped), owner instance, records in pt-BR digits');
    assert.ok(!renderReportHtml({ ...s, helped: undefined }, dir, dir).includes('outras instâncias'), 'no section without help');
    // the inbox entries not taken are in the reader's language too
    const skipped = renderReportHtml({ ...s, skipped: [{ channel: 'cadastros', name: 'x.lnk', reason: 'a symlink', kind: 'symlink' }] }, dir, dir);
    assert.ok(skipped.includes('<h2>Itens da entrada não recebidos</h2>'));
    assert.ok(skipped.includes('um link simbólico: só arquivos comuns colocados na entrada são recebidos'), 'the reason in pt-BR, from its kind');
    assert.ok(!skipped.includes('a symlink'), 'not the English reason');
    const enSkipped = renderReportHtml({ ...s, skipped: [{ channel: 'cadastros', name: 'anexos', reason: 'x', kind: 'folder' }] }, dir, dir, { locale: 'en' });
    assert.ok(enSkipped.includes('a folder: sub-folders of a channel are not read'));
  });
});

describe('report.xlsx and typed cells', () => {
  test('every sheet read back: codes stay text, numbers are numbers, dates are dates, header frozen and filtered', async () => {
    const outbox = join(dir, 'o-xlsx');
    const s = sampleRunSummary();
    const p = await writeRunReport(outbox, s, { timeZone: 'America/Sao_Paulo' });
    const wb = new ExcelJS.Workbook();
    await wb.xlsx.readFile(p.xlsx);
    assert.deepEqual(
      wb.worksheets.map((w) => w.name),
      ['Resumo', 'Atenção', 'Arquivos', 'Recursos', 'Motivos'],
    );
    for (const ws of wb.worksheets) {
      assert.equal(ws.views[0]?.state, 'frozen', ws.name);
      assert.equal((ws.views[0] as { ySplit?: number }).ySplit, 1, ws.name);
      assert.ok(ws.autoFilter, `${ws.name} has an auto-filter`);
    }
    const att = wb.getWorksheet('Atenção')!;
    const header = (att.getRow(1).values as unknown[]).slice(1);
    assert.deepEqual(header.slice(0, 6), ['arquivo', 'linha', 'recurso', 'chave', 'resultado', 'motivo']);
    const row2 = att.getRow(2);
    assert.equal(row2.getCell(2).value, 19, 'line is a number');
    assert.equal(row2.getCell(4).value, '7891000100103', 'a 13-digit EAN key stays text');
    assert.equal(row2.getCell(4).numFmt, '@');
    assert.equal(row2.getCell(5).value, 'Retidos');
    // the original row values: the code 000101 keeps its zeros
    assert.equal(row2.getCell(7).value, '000101');
    assert.equal(row2.getCell(7).numFmt, '@');
    assert.equal(row2.getCell(9).value, '7891000100103');
    const sum = wb.getWorksheet('Resumo')!;
    const byMetric = new Map<string, ExcelJS.CellValue>();
    sum.eachRow((r, i) => {
      if (i > 1) byMetric.set(String(r.getCell(1).value), r.getCell(2).value);
    });
    assert.equal(byMetric.get('registros'), 1478);
    const started = byMetric.get('início');
    assert.ok(started instanceof Date, 'started is a date');
    // 14:56:56Z is 11:56:56 in São Paulo: Excel shows the wall clock of the outbox time zone
    assert.equal((started as Date).toISOString(), '2025-07-29T11:56:56.000Z');
    const files = wb.getWorksheet('Arquivos')!;
    assert.equal(files.getRow(2).getCell(6).value, 1250);
    assert.equal(typeof files.getRow(2).getCell(8).value, 'number');
  });

  test('rows read and not sent (not selected, excluded by a rule) have their own sheet and CSV, in pt-BR (issue 39)', async () => {
    const outbox = join(dir, 'o-unsent');
    const s = sampleRunSummary();
    s.files[0]!.unsent = [
      { outcome: 'excluded', mapping: 'estoque-sap', reason: 'posição negativa', count: 3, lines: '4, 9-10' },
      { outcome: 'not-selected', count: 2, lines: '7, 12' },
    ];
    const p = await writeRunReport(outbox, s, { timeZone: 'America/Sao_Paulo' });
    const wb = new ExcelJS.Workbook();
    await wb.xlsx.readFile(p.xlsx);
    const ws = wb.getWorksheet('Não enviadas');
    assert.ok(ws, `sheets: ${wb.worksheets.map((w) => w.name).join(', ')}`);
    const rows = [1, 2, 3].map((i) => (ws.getRow(i).values as unknown[]).slice(1));
    assert.deepEqual(rows[0], ['arquivo', 'resultado', 'motivo', 'mapeamento', 'quantidade', 'linhas']);
    assert.deepEqual(rows[1], [s.files[0]!.name, 'Não enviados (regra)', 'posição negativa', 'estoque-sap', 3, '4, 9-10']);
    assert.deepEqual(rows[2]!.slice(0, 3), [s.files[0]!.name, 'Não selecionados', 'nenhum mapeamento do arquivo a seleciona (filter)']);
    const bytes = await readFile(join(p.dir, 'unsent.csv'));
    // UTF-8 with a BOM, or Windows-1252 (outbox.csv.encoding): Latin-1 reads the accents of both alike here
    const csv = bytes[0] === 0xef ? bytes.subarray(3).toString('utf8') : bytes.toString('latin1');
    assert.match(csv, /posição negativa;estoque-sap;3;4, 9-10/);
  });

  test('writeXlsx: text columns keep leading zeros even from numbers given as text', async () => {
    const path = join(dir, 'typed.xlsx');
    await writeXlsx(
      path,
      [
        {
          name: 'x',
          columns: [
            { key: 'code', header: 'code', type: 'text' },
            { key: 'qty', header: 'qty', type: 'number' },
            { key: 'day', header: 'day', type: 'date' },
          ],
          rows: [{ code: '000101', qty: '12,5', day: '2026-11-23' }],
        },
      ],
      { timeZone: 'America/Sao_Paulo' },
    );
    const wb = new ExcelJS.Workbook();
    await wb.xlsx.readFile(path);
    const r = wb.worksheets[0]!.getRow(2);
    assert.equal(r.getCell(1).value, '000101');
    assert.equal(r.getCell(2).value, 12.5);
    assert.equal((r.getCell(3).value as Date).toISOString(), '2026-11-23T00:00:00.000Z');
    assert.equal(dirname(path), dir);
  });
});
