/** The send loop's entrance (push/pipeline.ts sendTier, push/share.ts sendClaimed) and its window. */
import type { Logger } from '../shared/logger.js';
import type { RecordRow, CrossReference } from '../journal/types.js';
import { TARGET_INFO, type RefResource } from '../wms/targets.js';
import { collectRefs } from './refs.js';
import { isReadOnlyResource } from './reference-cache.js';

/**
 * Reads ahead, with one query per resource, the cross-reference entries the records of a page will be checked
 * against before they are sent (journal/xref-memo.ts): not one query per record. That is each record's own key,
 * and the keys its `$ref`s name (a family's category, a product's family: refs.ts resolves them by key first; a
 * page of 10,000 families read them one statement each). Only a speed-up: a failure is logged and each record
 * reads its own entries, as without it.
 */
export async function prefetchXrefsOf(journal: CrossReference, logger: Logger, rows: readonly RecordRow[]): Promise<void> {
  const keys = new Map<RefResource, string[]>();
  const add = (resource: RefResource, key: string): void => {
    const list = keys.get(resource);
    if (list) list.push(key);
    else keys.set(resource, [key]);
  };
  for (const r of rows) {
    const resource = TARGET_INFO[r.target].xref;
    if (resource) add(resource, r.key);
    // the WMS's own lists (warehouses, statuses) are not in the cross-reference; a ref by id is no lookup
    for (const ref of collectRefs(r.payload)) if (!isReadOnlyResource(ref.resource) && ref.by?.toLowerCase() !== 'id') add(ref.resource, ref.value);
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
