/**
 * Entry of the SQLite journal's writer thread (see sqlite-writer.ts): its own connection to the journal
 * file, applying batches of the send loop's writes, each batch in one transaction. The commit (and its
 * fsync under synchronous=FULL) happens here, so it never blocks the main thread's event loop.
 */
import Database from 'better-sqlite3';
import { parentPort, receiveMessageOnPort, workerData } from 'node:worker_threads';
import { applyBatch, packResults, statementCache, type QueuedWriteOp } from './sqlite-writes.js';
import type { WriterRequest, WriterResponse, WriterThreadOptions } from './sqlite-writer.js';

const port = parentPort;
if (!port) throw new Error('sqlite-writer-thread runs as a worker thread only');
const options = workerData as WriterThreadOptions;

let db: Database.Database | null = null;
let openError: string | null = null;
try {
  db = new Database(options.path);
  db.pragma(`busy_timeout = ${options.busyTimeoutMs}`);
  db.pragma(`synchronous = ${options.synchronous}`);
  db.pragma('foreign_keys = ON');
} catch (err) {
  openError = `cannot open the journal in the writer thread: ${err instanceof Error ? err.message : String(err)}`;
}
const stmt = db ? statementCache(db) : null;

type BatchRequest = Extract<WriterRequest, { type: 'batch' }>;

/**
 * Group commit on this side too: every batch the main thread posted while the last transaction committed
 * (it keeps up to maxBatchesInFlight in flight) is applied in the next ONE transaction, so one fsync serves
 * them all and the thread never waits for a round trip to the main thread between two commits (issue 19).
 * Each batch is answered on its own; a transaction that fails as a whole fails every batch in it.
 */
function commitBatches(batches: BatchRequest[]): void {
  if (batches.length === 0) return;
  if (!db || !stmt) {
    for (const b of batches) port!.postMessage({ type: 'batch', id: b.id, error: openError ?? 'the writer thread is closed' } satisfies WriterResponse);
    return;
  }
  const opsOf = batches.map((b) => (typeof b.ops === 'string' ? (JSON.parse(b.ops) as QueuedWriteOp[]) : b.ops));
  let results;
  try {
    results = applyBatch(db, stmt, opsOf.flat());
  } catch (err) {
    const error = err instanceof Error ? err.message : String(err);
    for (const b of batches) port!.postMessage({ type: 'batch', id: b.id, error } satisfies WriterResponse);
    return;
  }
  let at = 0;
  batches.forEach((b, i) => {
    const n = opsOf[i]!.length;
    port!.postMessage({ type: 'batch', id: b.id, results: packResults(results.slice(at, at + n)), transaction: i === 0 } satisfies WriterResponse);
    at += n;
  });
}

port.on('message', (first: WriterRequest) => {
  const batches: BatchRequest[] = [];
  let close = false;
  for (let msg: WriterRequest | undefined = first; msg; msg = (receiveMessageOnPort(port)?.message as WriterRequest | undefined) ?? undefined) {
    if (msg.type === 'close') {
      close = true; // after the batches posted before it
      break;
    }
    batches.push(msg);
  }
  commitBatches(batches);
  if (close) {
    stmt?.clear();
    db?.close();
    db = null;
    port.postMessage({ type: 'closed' } satisfies WriterResponse);
    port.close();
  }
});
