/**
 * One verdict for a run (src/outbox/verdict.ts, issue 42): the report's status, first screen and workbook summary and
 * the command's line read it; an interrupted run, or records not sent yet, is never "delivered".
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { runVerdict, withExitCode, type ExitFacts } from '../../src/outbox/verdict.js';
import { reportCauses, reportTables, statusInWords } from '../../src/outbox/report.js';
import { summaryLine } from '../../src/app/run-report.js';
import { createI18n } from '../../src/i18n/index.js';
import { sampleRunSummary } from '../helpers/sample-summary.js';
import type { RunSummary } from '../../src/outbox/types.js';

const clean: ExitFacts = { attention: 0, open: 0, refusedData: 0, fileErrors: 0, problems: 0, noChangeAttention: false, outage: false, fatal: false };
const pt = createI18n('pt-BR');
const en = createI18n('en');

test('the verdict: each kind with its exit code; a stop by a signal wins over all but refused credentials', () => {
  assert.deepEqual(runVerdict(clean), { kind: 'delivered', exitCode: 0 });
  assert.deepEqual(runVerdict({ ...clean, empty: true }), { kind: 'nothing', exitCode: 0 });
  assert.deepEqual(runVerdict({ ...clean, attention: 2 }), { kind: 'attention', exitCode: 1 });
  assert.deepEqual(runVerdict({ ...clean, outage: true, notSent: 7 }), { kind: 'outage', exitCode: 75, notSent: 7 });
  assert.deepEqual(runVerdict({ ...clean, attention: 1, outage: true, interruptedBy: 'SIGTERM', notSent: 16, unreadFiles: 1 }), {
    kind: 'interrupted',
    exitCode: 143,
    signal: 'SIGTERM',
    notSent: 16,
    unreadFiles: 1,
  });
  assert.deepEqual(runVerdict({ ...clean, fatal: true, interruptedBy: 'SIGINT' }), { kind: 'config', exitCode: 2 });
  // a report that could not be written raises a delivered run to 1; an interrupted run keeps its verdict
  assert.deepEqual(withExitCode({ kind: 'delivered', exitCode: 0 }, 1), { kind: 'attention', exitCode: 1 });
  assert.deepEqual(withExitCode({ kind: 'interrupted', exitCode: 143, signal: 'SIGTERM' }, 1), { kind: 'interrupted', exitCode: 143, signal: 'SIGTERM' });
});

/** A clean night stopped by SIGTERM after 4 of its 20 records: 16 not sent yet. */
function interrupted(command = 'run'): RunSummary {
  const s = sampleRunSummary({ scenario: 'clean' });
  const totals = { ...s.totals, created: 4, updated: 0, unchanged: 0, 'already-existed': 0, skipped: 16, records: 20, files: 1 };
  const file = { ...s.files[0]!, status: 'partial' as const, outcomes: { created: 4, skipped: 16 } };
  return {
    ...s,
    command,
    totals,
    files: [file],
    errorReasons: [],
    attention: [],
    exitCode: 143,
    verdict: { kind: 'interrupted', exitCode: 143, signal: 'SIGTERM', notSent: 16 },
  };
}

test('an interrupted run: the status, the first sentence and the workbook say so, how many wait, and what to do', () => {
  const s = interrupted();
  assert.deepEqual(statusInWords(s, pt), { text: 'Interrompida (SIGTERM): 16 registros ainda não enviados, seguem na próxima execução', tone: 'warn' });
  assert.equal(statusInWords(s, en).text, 'Interrupted (SIGTERM): 16 records not sent yet, they go with the next run');
  const causes = reportCauses(s, pt);
  assert.equal(causes[0]?.kind, 'interrupted');
  assert.match(
    causes[0]!.text,
    /^A execução foi interrompida \(SIGTERM\) antes de terminar: 16 registros ainda não foram enviados\. .*execute de novo \(`wmsbridge run`\)/,
  );
  assert.ok(!causes.some((c) => c.kind === 'ok'), 'never "Tudo foi entregue"');
  assert.match(reportCauses(interrupted('watch'), pt)[0]!.text, /quando o `wmsbridge watch` voltar a rodar/);
  const rows = reportTables(s, pt).summary.rows;
  assert.equal(rows.find((r) => r['metric'] === 'situação')?.['value'], statusInWords(s, pt).text);
  assert.match(summaryLine(s, null, 0, pt), /^interrompida \(SIGTERM\): 1 arquivo\(s\)/);
});

test('records not sent yet are never "Tudo entregue", even in a summary without a verdict (an older run\'s JSON)', () => {
  const s = interrupted();
  delete s.verdict;
  s.exitCode = 0;
  assert.equal(statusInWords(s, pt).text, '16 registros ainda não enviados: seguem na próxima execução');
  assert.ok(!reportCauses(s, pt).some((c) => c.kind === 'ok'));
  const delivered = sampleRunSummary({ scenario: 'clean' });
  assert.equal(statusInWords({ ...delivered, verdict: { kind: 'delivered', exitCode: 0 } }, pt).text, 'Tudo entregue');
});
