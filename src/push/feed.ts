/**
 * Records that are still arriving: a large file is sent while it is still being mapped (docs/ARCHITECTURE.md,
 * "Streaming"). The mapper publishes each committed batch (up to the id of its last record); the send loop
 * reads a streamed file's records only up to what was published and, while such a file may still add records
 * of the tier it sends, waits for the next batch instead of ending the tier.
 *
 * What is published stays published: a file that turns out to have changed, or that cannot be read to its end,
 * has only its unpublished records withdrawn (the mapper's business); the send loop never sees those.
 *
 * Back-pressure: the mapper reads far faster than the WMS takes records (a 1 GB file maps in minutes and sends
 * in hours), and mapping ahead only competes with sending for the event loop (measured: 138 records/s sent at
 * 20 ms and concurrency 32 while a 100 MB file was mapped flat out, bench/stream.ts). So the mapper waits while a
 * file has more than a lead of published records the send loop has not taken yet, unless the send loop is itself
 * waiting for a publication (a file of a later tier, records all rejected) or has stopped.
 */
import type { Target } from '../wms/targets.js';

export interface RecordFeed {
  /** whether the send loop may read this record now (a record of a streamed file above its last published batch may not) */
  published(row: { fileId: number; id: number }): boolean;
  /** whether a file not mapped to its end yet may still publish records of one of these targets */
  open(targets: readonly Target[]): boolean;
  /** settles at the next publication or end of a file (or at once when nothing is open) */
  next(): Promise<void>;
  /** the send loop took this record (a streamed file's published record): the mapper may read further */
  taken(row: { fileId: number; id: number }): void;
  /** each streamed file's last published record id (what a claim may take of it: claimRecordBatch `upTo`) */
  bounds(): ReadonlyMap<number, number>;
}

export interface StreamFeed extends RecordFeed {
  /** a file whose records stream: nothing of it is readable until it publishes (a resumed file publishes its earlier batches first) */
  add(fileId: number, target: Target): void;
  publish(fileId: number, lastId: number): void;
  /** the file's mapping ended (to its end, or not): what it published stays readable (and only that), it adds nothing more */
  end(fileId: number): void;
  /** the id of the file's last published record (0: none) */
  publishedUpTo(fileId: number): number;
  /**
   * settles when the send loop has taken the file's published records down to `lead` untaken ones, waits for a
   * publication, or stopped reading (release), or when `signal` aborts
   */
  room(fileId: number, lead: number, signal?: AbortSignal): Promise<void>;
  /** the send loop stopped reading: nothing waits for it any more */
  release(): void;
}

export function createStreamFeed(): StreamFeed {
  const files = new Map<number, { target: Target; upTo: number; open: boolean; taken: number }>();
  let wake: { promise: Promise<void>; resolve: () => void } | null = null;
  /** the send loop waits for a publication, or stopped reading: the mapper must not wait for it */
  let readerWaiting = false;
  let released = false;
  /** the mapper waiting for room (one file is mapped at a time) */
  let roomWaiter: { fileId: number; lead: number; resolve: () => void } | null = null;
  const checkRoom = (): void => {
    const w = roomWaiter;
    if (!w) return;
    const f = files.get(w.fileId);
    if (released || readerWaiting || !f || f.upTo - f.taken <= w.lead) {
      roomWaiter = null;
      w.resolve();
    }
  };
  const signal = (): void => {
    const w = wake;
    wake = null;
    readerWaiting = false;
    w?.resolve();
  };
  return {
    published: (row) => {
      const f = files.get(row.fileId);
      return !f || row.id <= f.upTo;
    },
    open: (targets) => [...files.values()].some((f) => f.open && targets.includes(f.target)),
    next() {
      if (![...files.values()].some((f) => f.open)) return Promise.resolve();
      if (!wake) {
        let resolve!: () => void;
        const promise = new Promise<void>((r) => (resolve = r));
        wake = { promise, resolve };
      }
      readerWaiting = true;
      checkRoom();
      return wake.promise;
    },
    taken(row) {
      const f = files.get(row.fileId);
      if (!f || row.id <= f.taken) return;
      f.taken = row.id;
      checkRoom();
    },
    add(fileId, target) {
      files.set(fileId, { target, upTo: 0, open: true, taken: 0 });
    },
    publish(fileId, lastId) {
      const f = files.get(fileId);
      if (!f) return;
      f.upTo = Math.max(f.upTo, lastId);
      signal();
    },
    end(fileId) {
      const f = files.get(fileId);
      if (f) f.open = false;
      signal();
    },
    publishedUpTo: (fileId) => files.get(fileId)?.upTo ?? 0,
    bounds: () => new Map([...files].map(([id, f]) => [id, f.upTo])),
    room(fileId, lead, abort) {
      return new Promise<void>((resolve) => {
        if (abort?.aborted) return resolve();
        const onAbort = (): void => {
          if (roomWaiter?.resolve === done) roomWaiter = null;
          resolve();
        };
        const done = (): void => {
          abort?.removeEventListener('abort', onAbort);
          resolve();
        };
        roomWaiter = { fileId, lead, resolve: done };
        abort?.addEventListener('abort', onAbort, { once: true });
        checkRoom();
      });
    },
    release() {
      released = true;
      checkRoom();
    },
  };
}
