/**
 * The run report's workbook, written on a thread of its own. exceljs's writer and archiver take ~80 ms of the main
 * thread to load, and the workbook ~20-40 ms to write, at the very end of a run: started when the send phase of a
 * run that sends starts (run.ts), the thread has loaded them by the time the report is written, and writes the
 * workbook while the main thread writes the CSVs and the HTML (a 20,000-record run's tail: report 130-200 ms -> 75-95 ms, see
 * docs/perf/profile-run.md). Anything but an error of the workbook itself (the thread did not start, or died)
 * falls back to writing it here, so a report is never lost to the thread.
 */
import type { Worker } from 'node:worker_threads';
import { BridgeError, type ErrorCode } from '../shared/errors.js';
import { spawnModuleWorker, workerEntry } from '../shared/worker.js';
import { writeXlsx, type XlsxSheet, type XlsxWrite } from './xlsx.js';
import { modeOption } from './atomic.js';

/** rows cross as arrays: a sheet's rows are cloned to the thread */
export interface XlsxRequest {
  id: number;
  path: string;
  sheets: Array<Omit<XlsxSheet, 'rows'> & { rows: Array<Record<string, unknown>> }>;
  timeZone: string;
  mode?: number;
}
export type XlsxResponse =
  | { id: number; counts: number[]; error?: undefined }
  | { id: number; error: string; code?: ErrorCode; details?: Record<string, unknown>; counts?: undefined };

export interface XlsxWorker {
  /** writeXlsx on the thread (in this thread when the thread is gone) */
  write: XlsxWrite;
  /** ends the thread (a write still in progress is then written in this thread) */
  close(): Promise<void>;
}

const ENTRY = workerEntry(import.meta.url, 'xlsx-thread');

export function startXlsxWorker(): XlsxWorker {
  let worker: Worker | null = null;
  try {
    worker = spawnModuleWorker(ENTRY, null);
  } catch {
    worker = null; // written in this thread
  }
  const pending = new Map<number, { resolve: (counts: number[]) => void; reject: (err: Error) => void; local: () => void }>();
  let nextId = 1;
  let gone = worker === null;
  if (worker) {
    worker.unref();
    worker.on('message', (msg: XlsxResponse) => {
      const p = pending.get(msg.id);
      if (!p) return;
      pending.delete(msg.id);
      if (pending.size === 0) worker?.unref();
      if (msg.error === undefined) p.resolve(msg.counts);
      else p.reject(msg.code ? new BridgeError(msg.code, msg.error, msg.details ? { details: msg.details } : {}) : new Error(msg.error));
    });
    // the thread is gone: what it was asked is written here
    const lost = (): void => {
      gone = true;
      for (const p of pending.values()) p.local();
      pending.clear();
    };
    worker.on('error', lost);
    worker.on('exit', lost);
  }

  return {
    async write(path, sheets, options) {
      if (gone || !worker) return writeXlsx(path, sheets, options);
      const rows: XlsxRequest['sheets'] = [];
      for (const s of sheets) {
        if (!Array.isArray(s.rows)) return writeXlsx(path, sheets, options); // a stream of rows stays here
        rows.push({ name: s.name, columns: s.columns, rows: s.rows as Array<Record<string, unknown>> });
      }
      const id = nextId++;
      const w = worker;
      return new Promise<number[]>((resolve, reject) => {
        const local = (): void => void writeXlsx(path, sheets, options).then(resolve, reject);
        pending.set(id, { resolve, reject, local });
        w.ref(); // a workbook being written keeps the process alive
        try {
          w.postMessage({ id, path, sheets: rows, timeZone: options.timeZone, ...modeOption(options.mode) } satisfies XlsxRequest);
        } catch {
          pending.delete(id); // not cloneable: written here
          local();
        }
      });
    },
    async close() {
      if (!worker || gone) return;
      gone = true;
      await worker.terminate().catch(() => undefined);
    },
  };
}
