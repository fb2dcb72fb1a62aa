/**
 * The SQLite journal's writer thread, seen from the main thread.
 *
 * better-sqlite3 is synchronous: a commit with synchronous=FULL waits for fsync (0.5-5 ms here) with the
 * event loop stopped, and every answer the WMS sends in that time waits too (profiled: 27 % of the send
 * loop's wall time was commits). The send loop's writes therefore go to a worker thread with its own
 * connection to the same WAL file; the main thread keeps its connection for reads and for the rest of
 * the writes. A write's promise resolves after its batch committed, so "marked 'sending' before the
 * request leaves" holds as before, and the next read on the main connection sees it (WAL: every read
 * starts from the latest commit).
 *
 * The thread is started at the first write and holds the process open only while a batch is in flight.
 */
import { spawnModuleWorker, workerEntry } from '../shared/worker.js';
import { unpackResults, type QueuedWriteOp, type QueuedWriteResult } from './sqlite-writes.js';

export interface WriterThreadOptions {
  path: string;
  synchronous: 'FULL' | 'NORMAL';
  busyTimeoutMs: number;
}

/**
 * The send loop's batches cross as one JSON string (`ops`: QueuedWriteOp[]; `results`: packResults, the writes
 * that did not simply succeed): copying a string is cheaper than structured-cloning their small objects
 * (postMessage was 4 % of the send loop's CPU). A batch of new records (insertRecords: arrays of strings, the
 * mapping's batches) crosses as it is: structured-cloning 1,000 records' columns takes 0.5 ms of the main thread
 * where stringifying them (JSON texts inside JSON: every quote escaped) and posting the string takes 3 ms, and
 * the thread has nothing to parse (crossesAsIs).
 */
export type WriterRequest = { type: 'batch'; id: number; ops: string | QueuedWriteOp[] } | { type: 'close' };

/** Whether a batch crosses as it is (structured clone) rather than as a JSON string: it inserts records. */
export function crossesAsIs(ops: readonly QueuedWriteOp[]): boolean {
  return ops.some((op) => op.name === 'insertRecords');
}
export type WriterResponse =
  /** transaction: whether this batch is the first of its transaction (the thread merges the batches waiting for it) */
  | { type: 'batch'; id: number; results: string; transaction: boolean; error?: undefined }
  | { type: 'batch'; id: number; error: string; results?: undefined }
  | { type: 'closed' };

export interface WriterThread {
  /** Applies the batch in one transaction on the thread; rejects if the transaction failed as a whole. */
  submit(ops: QueuedWriteOp[]): Promise<QueuedWriteResult[]>;
  /** Closes the thread's connection and ends it (after the batches already submitted). */
  close(): Promise<void>;
  /** transactions committed so far (the thread merges the batches waiting for it into one) */
  transactions(): number;
}

const ENTRY = workerEntry(import.meta.url, 'sqlite-writer-thread');

export function startWriterThread(options: WriterThreadOptions): WriterThread {
  const worker = spawnModuleWorker(ENTRY, options);
  worker.unref();
  const pending = new Map<number, { resolve: (r: QueuedWriteResult[]) => void; reject: (e: Error) => void }>();
  let nextId = 1;
  let dead: Error | null = null;
  let onClosed: (() => void) | null = null;
  let transactions = 0;

  const failAll = (err: Error): void => {
    dead ??= err;
    for (const p of pending.values()) p.reject(err);
    pending.clear();
    worker.unref();
  };
  worker.on('message', (msg: WriterResponse) => {
    if (msg.type === 'closed') {
      onClosed?.();
      return;
    }
    const p = pending.get(msg.id);
    if (!p) return;
    pending.delete(msg.id);
    if (pending.size === 0) worker.unref();
    if (msg.error !== undefined) p.reject(new Error(msg.error));
    else {
      if (msg.transaction) transactions++;
      p.resolve(unpackResults(msg.results));
    }
  });
  worker.on('error', (err) => failAll(new Error(`the journal's writer thread failed: ${err.message}`)));
  worker.on('exit', (code) => {
    onClosed?.();
    failAll(new Error(`the journal's writer thread exited (code ${code})`));
  });

  return {
    submit(ops) {
      if (dead) return Promise.reject(dead);
      const id = nextId++;
      return new Promise<QueuedWriteResult[]>((resolve, reject) => {
        pending.set(id, { resolve, reject });
        worker.ref(); // a write in flight keeps the process alive until it committed
        worker.postMessage({ type: 'batch', id, ops: crossesAsIs(ops) ? ops : JSON.stringify(ops) } satisfies WriterRequest);
      });
    },
    async close() {
      if (dead) return;
      await new Promise<void>((resolve) => {
        onClosed = resolve;
        worker.ref();
        worker.postMessage({ type: 'close' } satisfies WriterRequest);
      });
      dead = new Error('the journal is closed');
      await worker.terminate().catch(() => undefined);
    },
    transactions: () => transactions,
  };
}
