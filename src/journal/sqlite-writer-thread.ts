/**
 * Entry of the SQLite journal's writer thread (see sqlite-writer.ts): its own connection to the journal
 * file, applying batches of the send loop's writes, each batch in one transaction. The commit (and its
 * fsync under synchronous=FULL) happens here, so it never blocks the main thread's event loop.
 */
import Database from 'better-sqlite3';
import { parentPort, workerData } from 'node:worker_threads';
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

port.on('message', (msg: WriterRequest) => {
  if (msg.type === 'close') {
    stmt?.clear();
    db?.close();
    db = null;
    port.postMessage({ type: 'closed' } satisfies WriterResponse);
    port.close();
    return;
  }
  let reply: WriterResponse;
  if (!db || !stmt) reply = { type: 'batch', id: msg.id, error: openError ?? 'the writer thread is closed' };
  else {
    try {
      reply = { type: 'batch', id: msg.id, results: packResults(applyBatch(db, stmt, JSON.parse(msg.ops) as QueuedWriteOp[])) };
    } catch (err) {
      reply = { type: 'batch', id: msg.id, error: err instanceof Error ? err.message : String(err) };
    }
  }
  port.postMessage(reply);
});
