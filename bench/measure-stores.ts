/**
 * Compares the journal stores' write and read rates (not a test: figures depend on the disk and the
 * server). Runnable directly:
 *   node --import tsx bench/measure-stores.ts [records=100000] [batch=1000] [postgres-url]
 *   node dist/bench/measure-stores.js
 * The PostgreSQL URL defaults to $WMSBRIDGE_PG_URL or postgres://postgres@127.0.0.1:5432/test; a
 * scratch schema is created and dropped. Prints one JSON line per store: bulk addRecords
 * (records/s), keyset paging of the whole file (rows/s), and the per-record markSending + settle
 * cycle (records/s, sequential: one instance, one record at a time).
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { createSqliteJournal } from '../src/journal/sqlite.js';
import { createPostgresJournal } from '../src/journal/postgres.js';
import type { Journal, NewRecord } from '../src/journal/types.js';

export interface StoreMeasure {
  store: string;
  records: number;
  batchSize: number;
  insertsPerSecond: number;
  pagedRowsPerSecond: number;
  sendCyclesMeasured: number;
  sendCyclesPerSecond: number;
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
    raw: [
      {
        line: i + 2,
        fields: {},
        cells: [key, `Produto ${i}`, `CAT-${i % 50}`, 'UN', '7891234567895', '1,25'],
        text: `${key};Produto ${i};CAT-${i % 50};UN;7891234567895;1,25`,
      },
    ],
  };
}

/** Measures one open journal (left open: the caller closes it). */
export async function measureStore(store: string, j: Journal, records: number, batchSize: number): Promise<StoreMeasure> {
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
  if (paged !== records) throw new Error(`measure ${store}: paging saw ${paged} of ${records} records`);

  const rows = await j.listRecords({ fileIds: [file.id], limit: Math.min(records, 2000) });
  const t1 = performance.now();
  for (const r of rows) {
    await j.markSending(r.id);
    await j.settle(r.id, { status: 'sent', outcome: 'created', wmsId: `wms-${r.id}` });
  }
  const cycleMs = performance.now() - t1;
  return {
    store,
    records,
    batchSize,
    insertsPerSecond: Math.round(records / (insertMs / 1000)),
    pagedRowsPerSecond: Math.round(paged / (pageMs / 1000)),
    sendCyclesMeasured: rows.length,
    sendCyclesPerSecond: Math.round(rows.length / (cycleMs / 1000)),
  };
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const records = Number(process.argv[2] ?? 100_000);
  const batchSize = Number(process.argv[3] ?? 1000);
  const url = process.argv[4] ?? process.env['WMSBRIDGE_PG_URL'] ?? 'postgres://postgres@127.0.0.1:5432/test';

  const dir = await mkdtemp(join(tmpdir(), 'wmsbridge-measure-'));
  try {
    for (const synchronous of ['FULL', 'NORMAL'] as const) {
      const j = await createSqliteJournal({ path: join(dir, `journal-${synchronous}.db`), synchronous });
      try {
        console.log(JSON.stringify(await measureStore(`sqlite synchronous=${synchronous}`, j, records, batchSize)));
      } finally {
        await j.close();
      }
    }
  } finally {
    await rm(dir, { recursive: true, force: true });
  }

  const schema = `wmsbridge_measure_${process.pid}`;
  const j = await createPostgresJournal({ url, schema });
  try {
    console.log(JSON.stringify(await measureStore('postgres', j, records, batchSize)));
  } finally {
    await j.close();
    const admin = new pg.Client({ connectionString: url });
    await admin.connect();
    await admin.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
    await admin.end();
  }
}
