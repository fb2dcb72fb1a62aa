/** The send loop's entrance (push/pipeline.ts sendTier, push/share.ts sendClaimed) and its window. */
import type { Logger } from '../shared/logger.js';
import type { Journal, RecordRow } from '../journal/types.js';
import { TARGET_INFO, type RefResource } from '../wms/targets.js';

/**
 * Reads ahead, with one query per resource, the cross-reference entries the records of a page will be checked
 * against before they are sent (journal/xref-memo.ts): not one query per record. Only a speed-up: a failure is
 * logged and each record reads its own entry, as without it.
 */
export async function prefetchXrefsOf(journal: Journal, logger: Logger, rows: readonly RecordRow[]): Promise<void> {
  const keys = new Map<RefResource, string[]>();
  for (const r of rows) {
    const resource = TARGET_INFO[r.target].xref;
    if (!resource) continue;
    const list = keys.get(resource);
    if (list) list.push(r.key);
    else keys.set(resource, [r.key]);
  }
  for (const [resource, list] of keys) {
    try {
      await journal.prefetchXrefs(resource, list);
    } catch (err) {
      logger.debug({ err, resource }, 'cross-reference entries not read ahead: each record reads its own');
    }
  }
}

/**
 * Records entered into the send loop with back-pressure: `push` returns once fewer than `limit` are queued. A
 * counter and one waiter: a Promise.race over the queued tasks would add a reaction to each of them at every turn
 * (quadratic work and memory: found with --cpu-prof on 20,000 records).
 */
export function createSendQueue(logger: Logger, runInOrder: (row: RecordRow) => Promise<void>, limit: number) {
  let queued = 0;
  let slotFree: (() => void) | null = null;
  let allDone: (() => void) | null = null;
  return {
    async push(row: RecordRow): Promise<void> {
      queued++;
      runInOrder(row)
        .catch((err: unknown) => {
          logger.error({ err, recordKey: row.key, resource: row.target }, 'unexpected error while sending');
        })
        .finally(() => {
          queued--;
          slotFree?.();
          if (queued === 0) allDone?.();
        });
      while (queued >= limit) await new Promise<void>((r) => (slotFree = r));
      slotFree = null;
    },
    async drain(): Promise<void> {
      if (queued > 0) await new Promise<void>((r) => (allDone = r));
    },
  };
}

/**
 * The send window: at most `size` tasks hold a place at once, in arrival order. A task may give its place back
 * before it ends (`release`, idempotent); it is given back at its end otherwise. A freed place goes straight to
 * the first waiting task.
 */
export function createWindow(size: number): <T>(fn: (release: () => void) => Promise<T>) => Promise<T> {
  let free = size;
  const waiting: Array<() => void> = [];
  return async (fn) => {
    if (free > 0) free--;
    else await new Promise<void>((r) => waiting.push(r));
    let held = true;
    const release = (): void => {
      if (!held) return;
      held = false;
      const next = waiting.shift();
      if (next) next();
      else free++;
    };
    try {
      return await fn(release);
    } finally {
      release();
    }
  };
}

/**
 * Records in the send window for a given request concurrency: the requests in flight plus a quarter more
 * (at least 2) being prepared, whose 'sending' marks commit while the requests are out. A crash leaves at
 * most this many records in doubt; only the `concurrency` in flight can have reached the WMS.
 */
export function sendWindow(concurrency: number): number {
  return concurrency + Math.max(2, Math.ceil(concurrency / 4));
}
