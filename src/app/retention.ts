/**
 * Retention: the journal and the outbox do not grow forever.
 * - `journal.retainDays` (default 90): settled files (done, error, duplicate) last updated before the
 *   cutoff, none of whose records waits for anything, are removed with their records (payloads, raw rows)
 *   and parse facts (Journal.pruneSettled). Their content is then no longer a duplicate when dropped again.
 *   Webhook events received before the same cutoff and already written to the outbox go too (their files
 *   stay in the outbox for `outbox.retainDays`); one not delivered yet stays, however old.
 * - `outbox.retainDays` (default 90): result files and run reports in the outbox, and each channel's
 *   archive day folders (`.wmsbridge/archive/YYYY-MM-DD`), older than the cutoff are deleted. Rejects and
 *   the error folders are never deleted here: a person must act on them.
 * - hidden temp files an outbox write left when its process was killed (atomic.ts: `.<name>.<pid>.<rand>.tmp`, a
 *   result file is written behind the send for as long as a file is sent) in results/ and rejects/, untouched for a
 *   day, whatever outbox.retainDays says: they are no one's file.
 * Applied after a run (not a dry run), at most once every 6 hours: `retention:last` (journal meta) is when the last one
 * finished. One in progress notes when it started in `retention:running`: instances sharing a PostgreSQL journal do
 * not start theirs while another's is younger than RUNNING_LEASE_MS. A retention that failed, was stopped or was
 * killed (-9) is not noted as done, so the next run goes on with it (with SQLite at once: one process per state
 * folder; with PostgreSQL once the killed one's lease is over).
 */
import * as fsp from 'node:fs/promises';
import { join } from 'node:path';
import type { ResolvedConfig } from '../config/load.js';
import { resolveChannelFolders } from '../intake/claim.js';
import type { MetaStore, JournalUpkeep } from '../journal/types.js';
import type { Logger } from '../shared/logger.js';
import { errorMessage } from '../shared/errors.js';
import { isAtomicTempName } from '../outbox/atomic.js';

export const DEFAULT_RETAIN_DAYS = 90;
const DAY = 86_400_000;
const EVERY_MS = 6 * 3_600_000;
const LAST_KEY = 'retention:last';
const RUNNING_KEY = 'retention:running';
/** how long a retention in progress keeps the other instances of a shared journal from starting theirs */
export const RUNNING_LEASE_MS = 3_600_000;

export function retention(config: ResolvedConfig): { journalDays: number; outboxDays: number } {
  return { journalDays: config.journal.retainDays ?? DEFAULT_RETAIN_DAYS, outboxDays: config.outbox.retainDays ?? DEFAULT_RETAIN_DAYS };
}

export interface RetentionResult {
  files: number;
  records: number;
  webhookEvents: number;
  outboxFiles: number;
  archiveDays: number;
}

/**
 * Deletes files (recursively) under `dir` last modified before `cutoffMs`; a folder goes too once empty, if it was
 * itself last changed before the cutoff (read before its old files were deleted, which changes it). A folder another
 * process has just made (a run's report folder, before its first file is written: instances share the outbox) is
 * recent, so it stays: removing every empty folder made that run's report fail (ENOENT), found by the cluster test.
 * `keepTop`: the folders right under `dir` stay even then (the results' channel folders, which a run writes into
 * without making them anew).
 */
export async function pruneTree(dir: string, cutoffMs: number, keepTop = false): Promise<number> {
  let entries;
  try {
    entries = await fsp.readdir(dir, { withFileTypes: true });
  } catch {
    return 0;
  }
  let n = 0;
  for (const e of entries) {
    const p = join(dir, e.name);
    if (e.isDirectory()) {
      const before = await fsp.stat(p).catch(() => null);
      n += await pruneTree(p, cutoffMs);
      if (!keepTop && before && before.mtimeMs < cutoffMs) await fsp.rmdir(p).catch(() => undefined); // only when empty
    } else if (e.isFile()) {
      const st = await fsp.stat(p).catch(() => null);
      if (st && st.mtimeMs < cutoffMs) {
        await fsp.rm(p, { force: true });
        n++;
      }
    }
  }
  return n;
}

/**
 * Deletes the hidden temp files of outbox writes (atomic.ts tempPathFor) in each folder right under `dir` (a
 * channel's results or rejects) last modified before `cutoffMs`: what a killed process was writing. A live write
 * touches its temp file at least at every step (results behind the send: every second while records settle).
 */
export async function pruneOrphanTemps(dir: string, cutoffMs: number): Promise<number> {
  let n = 0;
  for (const ch of await fsp.readdir(dir, { withFileTypes: true }).catch(() => [])) {
    if (!ch.isDirectory()) continue;
    for (const name of await fsp.readdir(join(dir, ch.name)).catch(() => [] as string[])) {
      if (!isAtomicTempName(name)) continue;
      const p = join(dir, ch.name, name);
      const st = await fsp.stat(p).catch(() => null);
      if (st?.isFile() && st.mtimeMs < cutoffMs) {
        await fsp.rm(p, { force: true });
        n++;
      }
    }
  }
  return n;
}

function dayOf(name: string): number | null {
  const m = /^(\d{4})-(\d{2})-(\d{2})$/.exec(name);
  return m ? new Date(Number(m[1]), Number(m[2]) - 1, Number(m[3])).getTime() : null;
}

export async function applyRetention(a: {
  config: ResolvedConfig;
  journal: MetaStore & JournalUpkeep;
  logger: Logger;
  now?: Date;
  force?: boolean;
  /**
   * a stopping run or daemon: not started once aborted; aborted while the journal is pruned, the prune stops after
   * its current slice, the outbox is left for later and the time of this retention is not kept, so the next run
   * goes on with it (instead of 6 hours later)
   */
  signal?: AbortSignal;
}): Promise<RetentionResult | null> {
  const now = a.now ?? new Date();
  if (a.signal?.aborted) return null;
  const since = async (key: string): Promise<number> => now.getTime() - Date.parse((await a.journal.getMeta(key)) ?? '');
  if (!a.force) {
    if ((await since(LAST_KEY)) < EVERY_MS) return null;
    // only a shared journal can have another process's retention in progress: with SQLite the state lock holds one
    // process, so a noted start is a killed run's and the prune goes on
    if (a.config.journal.kind === 'postgres' && (await since(RUNNING_KEY)) < RUNNING_LEASE_MS) return null;
  }
  await a.journal.setMeta(RUNNING_KEY, now.toISOString());
  const { journalDays, outboxDays } = retention(a.config);
  const res: RetentionResult = { files: 0, records: 0, webhookEvents: 0, outboxFiles: 0, archiveDays: 0 };
  /** the retention is over (done or not): no longer in progress, and noted as done only when it finished */
  const over = async (finished: boolean): Promise<void> => {
    if (finished) await a.journal.setMeta(LAST_KEY, now.toISOString());
    await a.journal.setMeta(RUNNING_KEY, '');
  };
  try {
    if (journalDays > 0) Object.assign(res, await a.journal.pruneSettled(new Date(now.getTime() - journalDays * DAY), { signal: a.signal }));
    if (a.signal?.aborted) {
      await over(false);
      a.logger.info({ ...res }, 'retention stopped with the run; the next run goes on with it');
      return res;
    }
    for (const sub of ['results', 'rejects']) res.outboxFiles += await pruneOrphanTemps(join(a.config.outboxDir, sub), now.getTime() - DAY);
    if (outboxDays > 0) {
      const cutoff = now.getTime() - outboxDays * DAY;
      res.outboxFiles += await pruneTree(join(a.config.outboxDir, 'results'), cutoff, true);
      res.outboxFiles += await pruneTree(join(a.config.outboxDir, 'reports'), cutoff);
      for (const ch of a.config.channels) {
        const archive = resolveChannelFolders(ch.dir).archive;
        let days: string[];
        try {
          days = await fsp.readdir(archive);
        } catch {
          continue;
        }
        for (const d of days) {
          const t = dayOf(d);
          // a day folder is removed once its whole day lies before the cutoff
          if (t !== null && t + DAY <= cutoff) {
            await fsp.rm(join(archive, d), { recursive: true, force: true });
            res.archiveDays++;
          }
        }
      }
    }
  } catch (err) {
    await over(false).catch(() => undefined);
    a.logger.warn({ err: errorMessage(err) }, 'retention could not finish; it is tried again after the next run');
    return res;
  }
  await over(true);
  if (res.files || res.webhookEvents || res.outboxFiles || res.archiveDays) {
    a.logger.info(
      { ...res, journalRetainDays: journalDays, outboxRetainDays: outboxDays },
      'retention: old settled journal rows, outbox files and archive days removed',
    );
  }
  return res;
}
