/**
 * What a person reads in the run report and its workbook (issue 42): chart axes in whole records, totals whose
 * names can be told apart and say what they mean, workbook columns as wide as what they hold, headers in words,
 * numbers that show as 412 and 412,5 in Excel.
 */
import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import ExcelJS from 'exceljs';
import { makeTempDir } from '../helpers/tmp.js';
import { countTicks, renderReportHtml, writeRunReport } from '../../src/outbox/report.js';
import { columnWidths, MAX_COLUMN_WIDTH, numberFormat, writeXlsx } from '../../src/outbox/xlsx.js';
import { sampleRunSummary } from '../helpers/sample-summary.js';
import { emptyTotals, OUTCOMES, type RunSummary } from '../../src/outbox/types.js';
import { createI18n } from '../../src/i18n/index.js';

let dir: string;
let cleanup: () => Promise<void>;
before(async () => ({ dir, cleanup } = await makeTempDir()));
after(async () => cleanup());

/** A night of `n` records of one file, settled over 10 s. */
function smallNight(n: number): RunSummary {
  const base = sampleRunSummary({ scenario: 'clean' });
  const file = { ...base.files[0]!, outcomes: { created: n }, rows: n };
  return {
    ...base,
    files: [file],
    resources: [{ target: file.target ?? 'Product', outcomes: { created: n } }],
    totals: { ...emptyTotals(), created: n, records: n, files: 1 },
    timeline: [
      { atMs: 5_000, settled: Math.ceil(n / 2) },
      { atMs: 10_000, settled: n },
    ],
    durationMs: 10_000,
  };
}

const tickTexts = (html: string): string[] => [...html.matchAll(/class="tick" text-anchor="(?:middle|end)">([^<]*)</g)].map((m) => m[1]!);

describe('chart axes count whole records', () => {
  test('countTicks: whole, increasing steps from 0 past the maximum, at most 6 ticks', () => {
    for (let v = 0; v <= 5000; v += v < 30 ? 1 : 7) {
      const ticks = countTicks(v);
      assert.equal(ticks[0], 0);
      assert.ok(ticks[ticks.length - 1]! >= v, `${v}: ${ticks.join(',')}`);
      assert.ok(ticks.length >= 2 && ticks.length <= 6, `${v}: ${ticks.join(',')}`);
      for (const t of ticks) assert.ok(Number.isInteger(t), `${v}: ${ticks.join(',')}`);
    }
    assert.deepEqual(countTicks(2), [0, 1, 2]);
    assert.deepEqual(countTicks(3), [0, 1, 2, 3]);
    assert.deepEqual(countTicks(1450), [0, 500, 1000, 1500]);
    // a count that is not a number (a watch batch's summary had one) draws an axis 0..1 and never loops
    assert.deepEqual(countTicks(NaN), [0, 1]);
    assert.deepEqual(countTicks(Infinity), [0, 1]);
  });

  for (const n of [1, 2, 3, 7, 1478]) {
    test(`a night of ${n} record(s): every count tick of both charts is a whole number`, () => {
      const html = renderReportHtml(smallNight(n), join(dir, 'r'), dir, { timeZone: 'UTC' });
      // the time axis of the progress chart reads "5 s", "1 min 2 s": only the count ticks are numbers alone
      const counts = tickTexts(html).filter((t) => /^[\d.,]+$/.test(t));
      assert.ok(counts.length >= 4, counts.join(' | '));
      for (const t of counts) assert.match(t, /^\d{1,3}(\.\d{3})*$/, `tick "${t}" of ${n} record(s)`);
    });
  }
});

describe('the totals say what they count', () => {
  test('every outcome has its own name and a meaning, shown as the card tooltip and in the legend (pt-BR and en)', () => {
    for (const locale of ['pt-BR', 'en'] as const) {
      const i18n = createI18n(locale, 'UTC');
      const names = OUTCOMES.map((o) => i18n.outcome(o).toLowerCase());
      assert.equal(new Set(names).size, names.length, names.join(', '));
      const html = renderReportHtml(sampleRunSummary(), join(dir, 'r'), dir, { timeZone: 'UTC', locale });
      for (const o of OUTCOMES) {
        assert.ok(i18n.has(`outcomeHelp.${o}`), `${locale}: outcomeHelp.${o}`);
        const help = i18n.t(`outcomeHelp.${o}`);
        assert.ok(html.includes(`title="${i18n.outcome(o)}: ${help.replace(/`/g, '`')}"`), `${locale}: the ${o} card's tooltip`);
        assert.ok(html.includes(`<dd>${help}</dd>`), `${locale}: ${o} in the legend`);
      }
    }
    const pt = createI18n('pt-BR', 'UTC');
    // the two tiles nobody could tell apart ("SEM ALTERAÇÃO" and "SEM MUDANÇA")
    assert.notEqual(pt.outcome('unchanged'), 'Sem alteração');
    assert.notEqual(pt.outcome('no-change'), 'Sem mudança');
    assert.match(pt.t('outcomeHelp.no-change'), /bloqueio ou desbloqueio de estoque/);
    assert.match(pt.t('outcomeHelp.unchanged'), /já tinham sido entregues/);
  });
});

describe('report.xlsx reads like a sheet made by a person', () => {
  test('column widths follow the content (capped), not the header; pt-BR headers are words', async () => {
    const s = sampleRunSummary();
    const reason = 'o campo peso_bruto não é um número: encontrado "doze quilos e meio" na linha 77';
    s.errorReasons = [{ reason: `rejected: ${reason}`, count: 3, outcome: 'rejected' }, ...s.errorReasons];
    const paths = await writeRunReport(join(dir, 'outbox'), s, { timeZone: 'UTC' });
    const wb = new ExcelJS.Workbook();
    await wb.xlsx.readFile(paths.xlsx);
    const motivos = wb.getWorksheet('Motivos')!;
    const texts = (c: number): number => Math.max(...Array.from(motivos.getColumn(c).values.slice(2), (v) => String(v ?? '').length));
    // column 1: the reasons; longer than 60 characters here, so the cap
    assert.ok(texts(1) > 70, `longest reason ${texts(1)}`);
    assert.equal(motivos.getColumn(1).width, MAX_COLUMN_WIDTH);
    // example file: as wide as the longest file name + 2, not the header's 14
    const exampleFile = (motivos.getRow(1).values as unknown[]).indexOf('exemplo: arquivo');
    assert.ok(exampleFile > 0, JSON.stringify(motivos.getRow(1).values));
    assert.equal(motivos.getColumn(exampleFile).width, Math.min(MAX_COLUMN_WIDTH, texts(exampleFile) + 2));
    // no header in snake_case in pt-BR (the en workbook keeps the technical names)
    for (const ws of wb.worksheets) {
      for (const h of (ws.getRow(1).values as unknown[]).slice(1)) assert.doesNotMatch(String(h), /_/, `${ws.name}: "${String(h)}"`);
    }
    const arquivos = wb.getWorksheet('Arquivos')!;
    const heads = (arquivos.getRow(1).values as unknown[]).slice(1);
    assert.ok(heads.includes('duração (ms)') && heads.includes('arquivo de recusas'), heads.join(' | '));
    // every column at least as wide as its header (and its filter button)
    for (const ws of wb.worksheets) {
      (ws.getRow(1).values as unknown[])
        .slice(1)
        .forEach((h, i) => assert.ok((ws.getColumn(i + 1).width ?? 0) >= String(h).length + 4, `${ws.name}: ${String(h)}`));
    }
  });

  test('columnWidths: the header, else the widest cell of the sample, between 8 and the cap; a given width wins', () => {
    const cols = [
      { key: 'a', header: 'código', type: 'text' as const },
      { key: 'b', header: 'qtd', type: 'number' as const },
      { key: 'c', header: 'quando', type: 'datetime' as const },
      { key: 'd', header: 'x', type: 'text' as const, width: 30 },
      { key: 'e', header: 'motivo', type: 'text' as const },
    ];
    const w = columnWidths(cols, [
      ['000101', 1234567.5, new Date(0), 'y', 'z'.repeat(200)],
      ['7891000100103', 2, null, null, null],
    ]);
    assert.deepEqual(w, [15, 15, 18, 30, MAX_COLUMN_WIDTH]);
    assert.deepEqual(columnWidths(cols, []), [10, 8, 10, 30, 10]);
  });

  test('numbers show as 412 and 412,5: whole values take #,##0, the others #,##0.### (Excel shows "412," for 412 in #,##0.###)', async () => {
    assert.equal(numberFormat('number', 412), '#,##0');
    assert.equal(numberFormat('number', 412.5), '#,##0.###');
    assert.equal(numberFormat('integer', 3), '#,##0');
    assert.equal(numberFormat('text', '000101'), '@');
    const path = join(dir, 'numbers.xlsx');
    await writeXlsx(
      path,
      [
        {
          name: 'n',
          columns: [{ key: 'q', header: 'quantidade', type: 'number' }],
          rows: [{ q: 412 }, { q: 412.5 }, { q: '1234,25' }],
        },
      ],
      { timeZone: 'UTC' },
    );
    const wb = new ExcelJS.Workbook();
    await wb.xlsx.readFile(path);
    const ws = wb.worksheets[0]!;
    const cells = [2, 3, 4].map((r) => ws.getRow(r).getCell(1));
    assert.deepEqual(
      cells.map((c) => [c.value, c.numFmt]),
      [
        [412, '#,##0'],
        [412.5, '#,##0.###'],
        [1234.25, '#,##0.###'],
      ],
    );
  });
});
