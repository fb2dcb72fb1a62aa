/**
 * outbox.fileMode reaches every file the outbox writes as a parameter (issue 43: no module-level setting): the run
 * report's files, its workbook written on the workbook thread (which never saw the main thread's settings), and a
 * writer given no mode keeps the default 0640. The umask is cleared for the test so the modes are the ones asked.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { stat } from 'node:fs/promises';
import { join } from 'node:path';
import { makeTempDir } from '../helpers/tmp.js';
import { sampleRunSummary } from '../helpers/sample-summary.js';
import { writeRunReport } from '../../src/outbox/report.js';
import { startXlsxWorker } from '../../src/outbox/xlsx-worker.js';
import { DEFAULT_OUTBOX_FILE_MODE, outboxFileMode, writeFileAtomic } from '../../src/outbox/atomic.js';
import { createRejectsWriter } from '../../src/outbox/rejects.js';

const modeOf = async (path: string): Promise<number> => (await stat(path)).mode & 0o777;

test('outbox.fileMode: the report files and the workbook written on its thread get the mode passed; no mode is 0640', async () => {
  const tmp = await makeTempDir('wmsbridge-file-mode-');
  const umask = process.umask(0);
  const worker = startXlsxWorker();
  try {
    const outbox = join(tmp.dir, 'outbox');
    const p = await writeRunReport(outbox, sampleRunSummary(), { timeZone: 'UTC', locale: 'en', fileMode: 0o600, xlsx: worker.write });
    for (const file of [p.html, p.csv, p.json, p.latest, p.xlsx, join(p.dir, 'files.csv')]) {
      assert.equal((await modeOf(file)).toString(8), '600', file);
    }
    const plain = join(tmp.dir, 'plain.txt');
    await writeFileAtomic(plain, 'x');
    assert.equal(await modeOf(plain), DEFAULT_OUTBOX_FILE_MODE);
    assert.equal(outboxFileMode('0644'), 0o644);
    assert.throws(() => outboxFileMode('rw-r-----'), RangeError);
  } finally {
    process.umask(umask);
    await worker.close();
    await tmp.cleanup();
  }
});

test('outbox.fileMode: a text rejects file gets the mode passed; no mode is 0640', async () => {
  const tmp = await makeTempDir('wmsbridge-file-mode-rejects-');
  const umask = process.umask(0);
  try {
    for (const [name, mode] of [
      ['given.csv', 0o600],
      ['default.csv', undefined],
    ] as const) {
      const out = join(tmp.dir, name);
      const w = createRejectsWriter(out, {
        format: 'delimited',
        delimiter: ';',
        headerCells: ['codigo'],
        ...(mode !== undefined ? { fileMode: mode } : {}),
      } as never);
      w.write({ line: 2, cells: ['x'], reasons: 'r' });
      await w.close();
      assert.equal((await modeOf(out)).toString(8), (mode ?? DEFAULT_OUTBOX_FILE_MODE).toString(8), out);
    }
  } finally {
    process.umask(umask);
    await tmp.cleanup();
  }
});
