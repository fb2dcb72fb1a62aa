/**
 * Stock synchronisation files: the whole file is one session per owner, or nothing (a partial session
 * would zero the stock of the products it leaves out).
 */
import type { RecordRow } from '../journal/types.js';
import type { WmsError } from '../wms/errors.js';
import { isWmsError } from '../wms/errors.js';
import { SESSION_TARGETS, TARGET_INFO } from '../wms/targets.js';
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
type SyncRun = Pick<PushRun, 'journal' | 'client' | 'resolver' | 'settle' | 'waitForWms'>;
type SyncOptions = { batchSize: number; chunkSize: number; signal?: AbortSignal | undefined };
/** The file's rows still to send (read again by each pass). */
type Unsent = () => AsyncIterable<RecordRow>;

export async function pushStockSync(file: { id: number; name: string; sha256: string }, run: SyncRun, opts: SyncOptions): Promise<void> {
  const q = { fileIds: [file.id], targets: [...SESSION_TARGETS] };
  const unsent: Unsent = () => iterate(run.journal, { ...q, statuses: ['pending', 'in_doubt'], withoutRaw: true }, opts.batchSize);
  const counts = await run.journal.countRecords(q);
  if ((counts.pending ?? 0) + (counts.in_doubt ?? 0) === 0) return;
  // pass 1: resolve every row; refuse the session if any row is refused
  const checked = await checkRows(run, unsent);
  const refused = checked.refused + (counts.rejected ?? 0);
  // the business rule (the mapping's onRejected: sendValid) or a person's decision (resolve --send-valid) sends the rest
  const decided = refused > 0 ? await run.journal.getMeta(FILE_META.sendValid(file.id)) : undefined;
  if (refused > 0 && decided === undefined) {
    await holdRefusedFile(file, refused, run, unsent);
    return;
  }
  if (checked.waiting > 0) return;
  // pass 2: one session per owner, chunked
  for (const ownerId of checked.owners) {
    const sessionId = uuid5(`${file.sha256}:${file.id}:${ownerId}`, STOCK_SYNC_NAMESPACE);
    if (!(await sendSession(new SessionChunks(run, sessionId, ownerId), run, unsent, opts))) return;
  }
}

/** Pass 1: every row resolved and checked; the refused ones and those waiting for the WMS are settled, counted. */
async function checkRows(run: SyncRun, unsent: Unsent): Promise<{ refused: number; waiting: number; owners: Set<string> }> {
  let refused = 0;
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
    const c = TARGET_INFO[row.target].schema.safeParse(r.payload);
    if (!c.success) {
      await run.settle(row, schemaRejection(c.error.issues));
      refused++;
      continue;
    }
    owners.add(String(r.payload['ownerId']));
  }
  return { refused, waiting, owners };
}

/** A file with refused rows and no decision to send the rest: every row still to send is held. */
async function holdRefusedFile(file: { name: string }, refused: number, run: SyncRun, unsent: Unsent): Promise<void> {
  for await (const row of unsent()) {
    await run.settle(row, {
      status: 'held',
      outcome: 'held',
      error: `stock sync of ${file.name} not sent: ${refused} row(s) were refused, and a partial synchronisation may zero the stock of the missing products; fix the rejects and drop the whole file again, or have it sent without them (wmsbridge resolve --send-valid)`,
      reason: { code: PushReason.STOCK_SYNC_NOT_SENT, params: { file: file.name, refused } },
    });
  }
}

interface SyncEntry {
  row: RecordRow;
  productId: string;
  quantity: number;
}

/** The chunks of one owner's session: each sent with isLastChunk on the last; after a failed chunk, the rest are held. */
class SessionChunks {
  private broken: string | null = null;

  constructor(
    private readonly run: SyncRun,
    readonly sessionId: string,
    readonly ownerId: string,
  ) {}

  async send(rows: SyncEntry[], isLast: boolean): Promise<void> {
    const { run, sessionId, ownerId } = this;
    if (this.broken) {
      // an earlier chunk failed: sending the rest (and the last chunk) would apply a partial session
      const error = `stock sync session ${sessionId} stopped: ${this.broken}`;
      await Promise.all(rows.map((c) => run.settle(c.row, { status: 'held', outcome: 'held', error, reason: { code: PushReason.STOCK_SYNC_STOPPED } })));
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
      this.broken = `a chunk failed: ${describeError(err)}`;
      await Promise.all(
        rows.map((c) => run.settle(c.row, { status, outcome: status, error: `stock sync session ${sessionId}: ${describeError(err)}`, reason: reasonOf(err) })),
      );
    }
  }
}

/** Pass 2 for one owner: its rows in chunks, with a look-ahead of one chunk so the last is known when sent. false: aborted. */
async function sendSession(session: SessionChunks, run: SyncRun, unsent: Unsent, opts: SyncOptions): Promise<boolean> {
  let chunk: SyncEntry[] = [];
  let pending: SyncEntry[] | null = null;
  for await (const row of unsent()) {
    if (opts.signal?.aborted) return false;
    const r = await run.resolver.resolve(row.payload);
    if (!r.ok || String(r.payload['ownerId']) !== session.ownerId) continue;
    chunk.push({ row, productId: String(r.payload['productId']), quantity: Number(r.payload['quantity']) });
    if (chunk.length >= opts.chunkSize) {
      if (pending) await session.send(pending, false);
      pending = chunk;
      chunk = [];
    }
  }
  if (pending) await session.send(pending, chunk.length === 0);
  if (chunk.length > 0) await session.send(chunk, true);
  return true;
}
