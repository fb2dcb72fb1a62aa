/**
 * Measures the SQLite journal's write rates (not a test: figures depend on the disk). Importable by the
 * bench suite; runnable directly:
 *   node --import tsx src/journal/measure.ts [records=200000] [batch=1000]
 *   node dist/src/journal/measure.js
 * Prints one JSON line per configuration: bulk addRecords (records/s), keyset paging of the whole
 * file (rows/s), and the per-record markSending + settle cycle (records/s), for synchronous FULL and
 * NORMAL.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createSqliteJournal } from './sqlite.js';
import type { NewRecord } from './types.js';

export interface MeasureResult {
  synchronous: 'FULL' | 'NORMAL';
  records: number;
  batchSize: number;
  insertsPerSecond: number;
  /** keyset paging over the whole file, pages of batchSize */
  pagedRowsPerSecond: number;
  sendCyclesMeasured: number;
  sendCyclesPerSecond: number;
  dbBytesPerRecord: number;
}

function sampleRecord(i: number): NewRecord {
  const key = `PROD-${String(i).padStart(8, '0')}`;
  return {
    target: 'Product',
    op: 'upsert',
    key,
    source: { line: i + 2 },
    mapping: 'produtos',
    payload: {
      codeERP: key,
      name: `Produto de teste número ${i} com descrição razoável`,
      categoryID: { $ref: { resource: 'Category', value: `CAT-${i % 50}` } },
      unitMeasurementID: { $ref: { resource: 'UnitMeasurement', value: 'UN' } },
      ean: '7891234567895',
      weight: 1.25,
      status: 1,
    },
    payloadHash: `${i.toString(16).padStart(64, '0')}`,
    raw: [{ line: i + 2, fields: {}, cells: [key, `Produto ${i}`, `CAT-${i % 50}`, 'UN', '7891234567895', '1,25'], text: `${key};Produto ${i};CAT-${i % 50};UN;7891234567895;1,25` }],
  };
}

export async function measureJournalInserts(options: { records?: number; batchSize?: number; synchronous: 'FULL' | 'NORMAL'; dir?: string }): Promise<MeasureResult> {
  const records = options.records ?? 200_000;
  const batchSize = options.batchSize ?? 1000;
  const dir = options.dir ?? (await mkdtemp(join(tmpdir(), 'wmsbridge-measure-')));
  const path = join(dir, `journal-${options.synchronous}.db`);
  const j = await createSqliteJournal({ path, synchronous: options.synchronous });
  try {
    const file = await j.addFile({ channel: 'bench', name: 'bench.csv', path: '/bench.csv', size: 0, sha256: `bench-${Date.now()}`, runId: 'bench' });
    let batch: NewRecord[] = [];
    const t0 = performance.now();
    for (let i = 0; i < records; i++) {
      batch.push(sampleRecord(i));
      if (batch.length === batchSize) {
        await j.addRecords(file.id, batch);
        batch = [];
      }
    }
    if (batch.length) await j.addRecords(file.id, batch);
    const insertMs = performance.now() - t0;

    const tp = performance.now();
    let afterId = 0;
    let paged = 0;
    for (;;) {
      const page = await j.listRecords({ fileIds: [file.id], statuses: ['pending'], afterId, limit: batchSize });
      if (page.length === 0) break;
      paged += page.length;
      afterId = page[page.length - 1]!.id;
    }
    const pageMs = performance.now() - tp;
    if (paged !== records) throw new Error(`paging saw ${paged} of ${records} records`);

    const cycles = Math.min(records, 2000);
    const rows = await j.listRecords({ fileIds: [file.id], limit: cycles });
    const t1 = performance.now();
    for (const r of rows) {
      await j.markSending(r.id);
      await j.settle(r.id, { status: 'sent', outcome: 'created', wmsId: `wms-${r.id}` });
    }
    const cycleMs = performance.now() - t1;
    await j.close();
    const { statSync } = await import('node:fs');
    const bytes = statSync(path).size + (statSync(`${path}-wal`, { throwIfNoEntry: false })?.size ?? 0);
    return {
      synchronous: options.synchronous,
      records,
      batchSize,
      insertsPerSecond: Math.round(records / (insertMs / 1000)),
      pagedRowsPerSecond: Math.round(paged / (pageMs / 1000)),
      sendCyclesMeasured: rows.length,
      sendCyclesPerSecond: Math.round(rows.length / (cycleMs / 1000)),
      dbBytesPerRecord: Math.round(bytes / records),
    };
  } finally {
    await j.close();
    if (!options.dir) await rm(dir, { recursive: true, force: true });
  }
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const records = Number(process.argv[2] ?? 200_000);
  const batchSize = Number(process.argv[3] ?? 1000);
  for (const synchronous of ['FULL', 'NORMAL'] as const) {
    console.log(JSON.stringify(await measureJournalInserts({ records, batchSize, synchronous })));
  }
}
