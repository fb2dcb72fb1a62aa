/**
 * Group commit, shared by the SQLite and PostgreSQL journals for the send loop's per-record writes.
 *
 * Writes added while `maxInFlight` batches are committing gather into the next batch; a batch starts on
 * the next turn of the event loop (so the writes of one turn share it) or as soon as a committing batch
 * ends. Each write's promise settles with its own outcome after its batch committed; a batch that fails
 * as a whole rejects all of its writes. The figures (batches, writes, commit latency) feed
 * Journal.writeStats().
 */
import { createLatencyRecorder } from '../shared/latency.js';
import { COMMIT_BUCKETS_MS, type JournalWriteStats } from './types.js';

/** One write's outcome in a committed batch. */
export type WriteOutcome = { ok: true; value: unknown } | { ok: false; error: unknown };

export interface GroupCommit<W> {
  add(write: W): Promise<unknown>;
  /** resolves when every write added so far has committed or failed */
  drain(): Promise<void>;
  stats(): JournalWriteStats;
}

export function createGroupCommit<W>(opts: {
  /** batches committing at once */
  maxInFlight: number;
  /** commits one batch; returns one outcome per write, in order; throws if the batch failed as a whole */
  commit: (batch: W[]) => Promise<WriteOutcome[]> | WriteOutcome[];
}): GroupCommit<W> {
  type Pending = { write: W; resolve: (v: unknown) => void; reject: (e: unknown) => void };
  let queue: Pending[] = [];
  let scheduled = false;
  const inFlight = new Set<Promise<void>>();
  const counts = { batches: 0, writes: 0 };
  const latency = createLatencyRecorder(COMMIT_BUCKETS_MS);

  async function run(batch: Pending[]): Promise<void> {
    const started = performance.now();
    let outcomes: WriteOutcome[];
    try {
      outcomes = await opts.commit(batch.map((p) => p.write));
    } catch (err) {
      for (const p of batch) p.reject(err);
      return;
    }
    counts.batches++;
    counts.writes += batch.length;
    latency.observe(performance.now() - started);
    batch.forEach((p, i) => {
      const o = outcomes[i]!;
      if (o.ok) p.resolve(o.value);
      else p.reject(o.error);
    });
  }

  function flush(): void {
    scheduled = false;
    if (inFlight.size >= opts.maxInFlight || queue.length === 0) return;
    const batch = queue;
    queue = [];
    const p: Promise<void> = run(batch).finally(() => {
      inFlight.delete(p);
      flush(); // what gathered while the batches committed
    });
    inFlight.add(p);
  }

  return {
    add(write) {
      return new Promise((resolve, reject) => {
        queue.push({ write, resolve, reject });
        if (!scheduled && inFlight.size < opts.maxInFlight) {
          scheduled = true;
          setImmediate(flush);
        }
      });
    },
    async drain() {
      for (;;) {
        if (queue.length > 0 && inFlight.size < opts.maxInFlight) flush();
        else if (inFlight.size > 0) await Promise.race(inFlight);
        else return;
      }
    },
    stats: () => ({ ...counts, commit: latency.snapshot() }),
  };
}
