/**
 * Records that are still arriving: a large file is sent while it is still being mapped (docs/ARCHITECTURE.md,
 * "Streaming"). The mapper publishes each committed batch (up to the id of its last record); the send loop
 * reads a streamed file's records only up to what was published and, while such a file may still add records
 * of the tier it sends, waits for the next batch instead of ending the tier.
 *
 * What is published stays published: a file that turns out to have changed, or that cannot be read to its end,
 * has only its unpublished records withdrawn (the mapper's business); the send loop never sees those.
 */
import type { Target } from '../wms/targets.js';

export interface RecordFeed {
  /** whether the send loop may read this record now (a record of a streamed file above its last published batch may not) */
  published(row: { fileId: number; id: number }): boolean;
  /** whether a file not mapped to its end yet may still publish records of one of these targets */
  open(targets: readonly Target[]): boolean;
  /** settles at the next publication or end of a file (or at once when nothing is open) */
  next(): Promise<void>;
}

export interface StreamFeed extends RecordFeed {
  /** a file whose records stream: nothing of it is readable beyond `publishedUpTo` (a resumed file's earlier batches) */
  add(fileId: number, target: Target, publishedUpTo: number): void;
  publish(fileId: number, lastId: number): void;
  /** the file's mapping ended (to its end, or not): what it published stays readable (and only that), it adds nothing more */
  end(fileId: number): void;
  /** the id of the file's last published record (0: none) */
  publishedUpTo(fileId: number): number;
}

export function createStreamFeed(): StreamFeed {
  const files = new Map<number, { target: Target; upTo: number; open: boolean }>();
  let wake: { promise: Promise<void>; resolve: () => void } | null = null;
  const signal = (): void => {
    const w = wake;
    wake = null;
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
      return wake.promise;
    },
    add(fileId, target, publishedUpTo) {
      files.set(fileId, { target, upTo: publishedUpTo, open: true });
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
  };
}
