/**
 * The run report's workbook is written on a thread of its own (exceljs and archiver load there, not on the main
 * thread at the end of every run); a thread that is gone, or rows that cannot cross, fall back to this thread; an
 * error of the workbook itself comes back as the outbox error writeXlsx gives.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { makeTempDir } from '../helpers/tmp.js';
import { startXlsxWorker } from '../../src/outbox/xlsx-worker.js';
import { writeXlsx, type XlsxSheet } from '../../src/outbox/xlsx.js';
import { ErrorCode, isBridgeError } from '../../src/shared/errors.js';

const sheets = (rows: Array<Record<string, unknown>>): XlsxSheet[] => [
  {
    name: 'Resumo',
    columns: [
      { key: 'code', header: 'Código', type: 'text' },
      { key: 'qty', header: 'Quantidade', type: 'number' },
      { key: 'at', header: 'Início', type: 'datetime' },
    ],
    rows,
  },
];
const ROWS = [
  { code: '000101', qty: '12,5', at: new Date('2026-11-27T12:00:00Z') },
  { code: '7891234567895', qty: 3, at: null },
];

/** exceljs's modules this thread has loaded (a worker thread has a module cache of its own) */
function exceljsLoadedHere(): boolean {
  return Object.keys(createRequire(import.meta.url).cache).some((k) => k.includes(`${'node_modules'}/exceljs/`));
}

async function readBack(path: string): Promise<unknown[][]> {
  const ExcelJS = (await import('exceljs')).default;
  const wb = new ExcelJS.Workbook();
  await wb.xlsx.readFile(path);
  const ws = wb.worksheets[0]!;
  const out: unknown[][] = [];
  ws.eachRow((row) => out.push((row.values as unknown[]).slice(1)));
  return out;
}

test('the workbook is written on the thread: exceljs never loads on this one, the cells are typed as writeXlsx types them', async () => {
  const tmp = await makeTempDir('wmsbridge-xlsx-worker-');
  const worker = startXlsxWorker();
  try {
    const path = join(tmp.dir, 'report.xlsx');
    assert.deepEqual(await worker.write(path, sheets(ROWS), { timeZone: 'America/Sao_Paulo' }), [2]);
    assert.equal(exceljsLoadedHere(), false, 'exceljs was loaded on the main thread');
    const rows = await readBack(path);
    assert.deepEqual(rows[0], ['Código', 'Quantidade', 'Início']);
    assert.equal(rows[1]![0], '000101');
    assert.equal(rows[1]![1], 12.5);
    // the wall-clock time in São Paulo (UTC-3), as Excel shows dates
    assert.equal((rows[1]![2] as Date).toISOString(), '2026-11-27T09:00:00.000Z');
    assert.equal(rows[2]![0], '7891234567895');
  } finally {
    await worker.close();
    await tmp.cleanup();
  }
});

test('an error of the workbook comes back from the thread as the outbox error naming the file', { timeout: 20_000 }, async () => {
  const tmp = await makeTempDir('wmsbridge-xlsx-worker-');
  const worker = startXlsxWorker();
  try {
    const path = join(tmp.dir, 'no-such-folder', 'report.xlsx');
    await assert.rejects(worker.write(path, sheets(ROWS), { timeZone: 'UTC' }), (err: unknown) => {
      assert.ok(isBridgeError(err), `not a BridgeError: ${String(err)}`);
      assert.equal(err.code, ErrorCode.OUTBOX);
      assert.match(err.message, /report\.xlsx/);
      return true;
    });
  } finally {
    await worker.close();
    await tmp.cleanup();
  }
});

test('a thread that is gone, or rows that cannot cross to it, are written on this thread', async () => {
  const tmp = await makeTempDir('wmsbridge-xlsx-worker-');
  const worker = startXlsxWorker();
  try {
    // a value structured cloning refuses (a function): written here
    const odd = join(tmp.dir, 'odd.xlsx');
    assert.deepEqual(await worker.write(odd, sheets([{ code: 'A1', qty: 1, at: null, extra: () => 1 }]), { timeZone: 'UTC' }), [1]);
    assert.equal((await readBack(odd))[1]![0], 'A1');
    await worker.close();
    const after = join(tmp.dir, 'after.xlsx');
    assert.deepEqual(await worker.write(after, sheets(ROWS), { timeZone: 'UTC' }), [2]);
    assert.equal((await readBack(after))[2]![0], '7891234567895');
  } finally {
    await worker.close();
    await tmp.cleanup();
  }
});

test('writeXlsx in a folder that is not there rejects with the outbox error (it waited forever for the file to drain)', { timeout: 20_000 }, async () => {
  const tmp = await makeTempDir('wmsbridge-xlsx-worker-');
  try {
    const path = join(tmp.dir, 'gone', 'report.xlsx');
    await assert.rejects(writeXlsx(path, sheets(ROWS), { timeZone: 'UTC' }), (err: unknown) => {
      assert.ok(isBridgeError(err), `not a BridgeError: ${String(err)}`);
      assert.equal(err.code, ErrorCode.OUTBOX);
      assert.match(err.message, /report\.xlsx.*ENOENT/);
      return true;
    });
  } finally {
    await tmp.cleanup();
  }
});
