/** Keyset paging over the journal's records, one batch in memory at a time. */
import type { RecordQueue, RecordRow } from './types.js';
import type { Target } from '../wms/targets.js';

export async function* iterate(
  journal: Pick<RecordQueue, 'listRecords'>,
  query: { fileIds: number[]; targets?: Target[]; statuses: RecordRow['status'][]; afterId?: number; withoutRaw?: boolean },
  batchSize: number,
  /** each page as it is read, before its records are yielded */
  onPage?: (rows: readonly RecordRow[]) => Promise<void>,
): AsyncGenerator<RecordRow> {
  let afterId = query.afterId ?? 0;
  for (;;) {
    const rows = await journal.listRecords({ ...query, afterId, limit: batchSize });
    if (rows.length === 0) return;
    await onPage?.(rows);
    for (const r of rows) yield r;
    afterId = rows[rows.length - 1]!.id;
    if (rows.length < batchSize) return;
  }
}
