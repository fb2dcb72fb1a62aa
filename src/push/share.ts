/**
 * Several instances sending one file (docs/SCALING.md, "Record batches"): the records of a tier whose order does not
 * matter are claimed in batches from a shared journal (claimRecordBatch) instead of read, so other instances may
 * send batches of the same files. The file's owner also sends its in-doubt records and, before its next tier, waits
 * until what other instances claimed is settled.
 */
import type { Logger } from '../shared/logger.js';
import type { RecordRow, RecordQueue, RecordClaims, CrossReference } from '../journal/types.js';
import { iterate } from '../journal/iterate.js';
import { TARGET_INFO, type Target } from '../wms/targets.js';
import type { RecordFeed } from './feed.js';
import { createSendQueue, prefetchXrefsOf, sendWindow } from './send-queue.js';

export interface ShareOptions {
  /** the claims' owner: this instance */
  owner: string;
  leaseTtlMs: number;
  /**
   * helping another instance's files: only claimed batches, only while `mayTake` answers true (asked at most once a
   * second); `upTo`: a file still streamed by its owner, up to its last published record (asked at each claim)
   */
  helper?: { mayTake: () => Promise<boolean>; upTo?: () => Promise<ReadonlyMap<number, number> | undefined> };
}

/** Targets whose records may be sent by any instance in any order within their tier: no source-order rule, no session. */
export function shareableTarget(target: Target): boolean {
  const info = TARGET_INFO[target];
  return info.sequence === null && info.send.kind !== 'session';
}

/** What the claim loop needs of the run (PushOptions). */
export interface ClaimLoopOptions {
  journal: RecordQueue & RecordClaims & CrossReference;
  logger: Logger;
  /** records read from the journal per batch: a claim is at most this many */
  batchSize: number;
  concurrency: number;
}

/** How often a file's owner looks again at the records other instances claimed, at the end of a tier. */
const CLAIM_POLL_MS = 100;

/**
 * A tier's shareable records through claims (PushOptions.share): batches of pending records claimed in id order
 * until none is left. The owner first sends the tier's in-doubt records (never claimed: the in-doubt policy is
 * the owner's), then waits until what other instances claimed is settled; a claim that expired with records in
 * flight turns them in doubt and the owner settles them. Each record enters the send loop once: `entered` holds the
 * records entered and not settled yet (the caller removes a record at its settle, unless settled in doubt: a record
 * settled otherwise is never claimed nor in doubt again, and remembering every record of a 1 GB file held hundreds
 * of MB: 4 M ids, 160 MB).
 * `feed`: the owner's files still being mapped (streamed): claims (its own and the helpers') take their records
 * only up to each file's last published batch, and the tier waits for the next batch while such a file may still
 * add records of it.
 */
export async function sendClaimed(
  opts: ClaimLoopOptions,
  share: ShareOptions,
  fileIds: number[],
  targets: Target[],
  runInOrder: (row: RecordRow) => Promise<void>,
  stopping: () => boolean,
  entered: Set<number>,
  feed?: RecordFeed,
): Promise<void> {
  const { journal, logger } = opts;
  // claimed and queued records stay pending until marked: a page of them, a send window's worth twice over
  const page = Math.min(opts.batchSize, Math.max(16, 2 * sendWindow(opts.concurrency)));
  const queue = createSendQueue(opts.logger, runInOrder, page);
  const enter = async (row: RecordRow): Promise<void> => {
    if (entered.has(row.id)) return;
    entered.add(row.id);
    await queue.push(row);
  };
  const sendInDoubt = async (): Promise<void> => {
    const ahead = (rows: readonly RecordRow[]): Promise<void> => prefetchXrefsOf(journal, logger, rows);
    for await (const row of iterate(journal, { fileIds, targets, statuses: ['in_doubt'], withoutRaw: true }, page, ahead)) {
      if (stopping()) break;
      await enter(row);
    }
  };
  const mayTake = throttled(share.helper?.mayTake);
  if (!share.helper) await sendInDoubt();
  let settledOthers = false;
  // claims read on from the last record handed out; once that finds none, from the start again: a record given back
  // (a helper that stopped) or whose claim expired may lie behind it
  let cursor = 0;
  // how far the streamed files had published (their bounds summed; they only grow): a claim that found nothing
  // waits for more only if nothing was published since it was asked
  const published = (bounds: ReadonlyMap<number, number>): number => [...bounds.values()].reduce((a, b) => a + b, 0);
  while (!stopping()) {
    if (!(await mayTake())) break;
    const bounds = feed?.bounds();
    const upTo = bounds ?? (await share.helper?.upTo?.());
    const asked = bounds ? published(bounds) : 0;
    const rows = await journal.claimRecordBatch(fileIds, targets, share.owner, page, share.leaseTtlMs, cursor, upTo);
    if (rows.length > 0) {
      settledOthers = false;
      cursor = rows.at(-1)!.id;
      await prefetchXrefsOf(journal, logger, rows);
      for (const row of rows) {
        if (stopping()) break;
        feed?.taken(row);
        await enter(row);
      }
      continue;
    }
    if (cursor > 0) {
      cursor = 0;
      continue;
    }
    // a streamed file may still publish records of these targets: the next batch (or the end of its mapping)
    if (feed?.open(targets)) {
      if (published(feed.bounds()) === asked) await feed.next();
      continue;
    }
    if (share.helper) break;
    // nothing left to claim: the records other instances hold settle (or their claims expire) before the next tier
    const recovered = await journal.recoverExpiredClaims(fileIds);
    if (recovered > 0) {
      logger.warn({ count: recovered }, 'an instance stopped renewing its claims while sending: its records in flight are in doubt, settling them here');
      await sendInDoubt();
      continue;
    }
    if ((await journal.countClaimedByOthers(fileIds, targets, share.owner)) === 0) {
      // one more claim after the last claim was given back (a helper that stopped releases what it did not send)
      if (settledOthers) break;
      settledOthers = true;
      continue;
    }
    settledOthers = false;
    await new Promise((r) => setTimeout(r, CLAIM_POLL_MS));
  }
  await queue.drain();
}

/** A check asked at most once a second (its last answer in between); none: always true. */
function throttled(check: (() => Promise<boolean>) | undefined): () => Promise<boolean> {
  if (!check) return () => Promise.resolve(true);
  let at = 0;
  let last = true;
  return async () => {
    if (Date.now() - at >= 1000) {
      last = await check();
      at = Date.now();
    }
    return last;
  };
}
