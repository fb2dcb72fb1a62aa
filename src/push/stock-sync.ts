/**
 * Stock synchronisation files: the whole file is one session per owner, or nothing (a partial session
 * would zero the stock of the products it leaves out).
 */
import type { RecordRow } from '../journal/types.js';
import type { WmsError } from '../wms/errors.js';
import { isWmsError } from '../wms/errors.js';
import { TARGET_INFO, type Target } from '../wms/targets.js';
import { PushReason } from '../shared/reason.js';
import { STOCK_SYNC_NAMESPACE, uuid5 } from '../shared/uuid.js';
import { iterate } from '../journal/iterate.js';
import { FILE_META } from '../journal/policy.js';
import { describeError, isRejection, isWmsUnavailable, reasonOf } from './decide.js';
import { refReason, schemaRejection, type PushRun } from './record.js';

/**
 * Stock synchronisation: one file is one session per owner (a stable sessionId derived from the file,
 * so a resumed session is the same session), sent in chunks with isLastChunk on the last. A failed chunk
 * is retried by the client, not the session. If any row of the file was refused, nothing is sent: a
 * partial synchronisation would zero the stock of the missing products; unless sending the valid rows was
 * decided (FILE_META.sendValid: the mapping's `onRejected: sendValid`, or `wmsbridge resolve --send-valid`).
 */
export async function pushStockSync(
  file: { id: number; name: string; sha256: string },
  run: Pick<PushRun, 'journal' | 'client' | 'resolver' | 'settle' | 'waitForWms'>,
  opts: { batchSize: number; chunkSize: number; signal?: AbortSignal | undefined },
): Promise<void> {
  const q = { fileIds: [file.id], targets: ['StockSync' as Target] };
  // the rows still to send, read again by each pass
  const unsent = () => iterate(run.journal, { ...q, statuses: ['pending', 'in_doubt'], withoutRaw: true }, opts.batchSize);
  const counts = await run.journal.countRecords(q);
  if ((counts.pending ?? 0) + (counts.in_doubt ?? 0) === 0) return;
  // pass 1: resolve every row; refuse the session if any row is refused
  let refused = counts.rejected ?? 0;
  let waiting = 0;
  const owners = new Set<string>();
  for await (const row of unsent()) {
    const r = await run.resolver.resolve(row.payload);
    if (!r.ok && r.code === 'dependency_waiting') {
      // not the data: this row waits, and the session with it (the other rows stay pending)
      await run.settle(row, { status: 'held', outcome: 'held', error: r.message, reason: refReason(r) });
      waiting++;
      continue;
    }
    if (!r.ok) {
      const status = r.status === 'rejected' ? 'rejected' : 'held';
      await run.settle(row, { status, outcome: status, error: `${r.field}: ${r.message}`, reason: refReason(r) });
      refused++;
      continue;
    }
    const c = TARGET_INFO.StockSync.schema.safeParse(r.payload);
    if (!c.success) {
      await run.settle(row, schemaRejection(c.error.issues));
      refused++;
      continue;
    }
    owners.add(String(r.payload['ownerId']));
  }
  // the business rule (the mapping's onRejected: sendValid) or a person's decision (resolve --send-valid) sends the rest
  const decided = refused > 0 ? await run.journal.getMeta(FILE_META.sendValid(file.id)) : undefined;
  if (refused > 0 && decided === undefined) {
    for await (const row of unsent()) {
      await run.settle(row, {
        status: 'held',
        outcome: 'held',
        error: `stock sync of ${file.name} not sent: ${refused} row(s) were refused, and a partial synchronisation may zero the stock of the missing products; fix the rejects and drop the whole file again, or have it sent without them (wmsbridge resolve --send-valid)`,
        reason: { code: PushReason.STOCK_SYNC_NOT_SENT, params: { file: file.name, refused } },
      });
    }
    return;
  }
  if (waiting > 0) return;
  // pass 2: one session per owner, chunked
  for (const ownerId of owners) {
    const sessionId = uuid5(`${file.sha256}:${file.id}:${ownerId}`, STOCK_SYNC_NAMESPACE);
    let chunk: Array<{ row: RecordRow; productId: string; quantity: number }> = [];
    let broken: string | null = null;
    const flush = async (isLast: boolean) => {
      const rows = chunk;
      chunk = [];
      if (broken) {
        // an earlier chunk failed: sending the rest (and the last chunk) would apply a partial session
        await Promise.all(
          rows.map((c) =>
            run.settle(c.row, {
              status: 'held',
              outcome: 'held',
              error: `stock sync session ${sessionId} stopped: ${broken}`,
              reason: { code: PushReason.STOCK_SYNC_STOPPED },
            }),
          ),
        );
        return;
      }
      // issued together: one commit for the whole chunk, not one per row
      await Promise.all(rows.map((c) => run.journal.markSending(c.row.id)));
      try {
        await run.client.syncStock(
          { sessionId, ownerId, isLastChunk: isLast, products: rows.map((c) => ({ productId: c.productId, quantity: c.quantity })) },
          { idempotent: true },
        );
        await Promise.all(rows.map((c) => run.settle(c.row, { status: 'sent', outcome: 'updated', wmsId: null, error: null })));
      } catch (err) {
        if (isWmsUnavailable(err)) {
          // nothing of this chunk was applied: its rows, and the rest of the session, wait for the next run
          for (const c of rows) await run.waitForWms(c.row, err as WmsError, true);
          throw err;
        }
        const status = isWmsError(err) && isRejection(err) ? 'rejected' : 'failed';
        broken = `a chunk failed: ${describeError(err)}`;
        await Promise.all(
          rows.map((c) =>
            run.settle(c.row, { status, outcome: status, error: `stock sync session ${sessionId}: ${describeError(err)}`, reason: reasonOf(err) }),
          ),
        );
      }
    };
    // look-ahead of one chunk, so the last chunk is known when it is sent
    let pending: typeof chunk | null = null;
    for await (const row of unsent()) {
      if (opts.signal?.aborted) return;
      const r = await run.resolver.resolve(row.payload);
      if (!r.ok || String(r.payload['ownerId']) !== ownerId) continue;
      chunk.push({ row, productId: String(r.payload['productId']), quantity: Number(r.payload['quantity']) });
      if (chunk.length >= opts.chunkSize) {
        if (pending) {
          const next = chunk;
          chunk = pending;
          await flush(false);
          chunk = [];
          pending = next;
        } else {
          pending = chunk;
          chunk = [];
        }
      }
    }
    const tail = chunk;
    if (pending) {
      chunk = pending;
      await flush(tail.length === 0);
    }
    if (tail.length > 0) {
      chunk = tail;
      await flush(true);
    }
  }
}
