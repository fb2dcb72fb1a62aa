/**
 * runDuePulls: runs the scheduled pulls that are due, one after the other (one WMS, no stampede).
 * Called by `run --pulls` and by the watch loop (every minute). The last run of each pull lives in the
 * journal (meta `pull-last:<name>`, ISO time of the run's start), so a restart does not rerun or forget.
 * A failed pull keeps its last run (it is still due) but is not retried before `retryDelayMs`
 * (meta `pull-failed:<name>`), so a WMS outage does not turn into one failing export per minute.
 */
import { ConfigError, errorMessage, isBridgeError } from '../shared/errors.js';
import { isDue, nextRun, parseSchedule, type Schedule } from '../shared/schedule.js';
import { runPull } from './run.js';
import type { PullDeps, PullRequest } from './types.js';

export interface ScheduledPull {
  /** unique name; the journal keys its last run on it */
  name: string;
  /** see src/pull/schedule.ts: 'every 30m', 'every 2h', 'daily 02:00', 'weekdays 06:30' */
  schedule: string;
  request: Omit<PullRequest, 'outDir'>;
}

export interface RunDuePullsDeps extends PullDeps {
  /** the exports folder (<outbox>/exports) */
  outDir: string;
  /** IANA zone for daily/weekdays schedules that name none. @default the process's local zone */
  timeZone?: string;
  /** a failed pull is not retried before this delay (unless its schedule is next due later). @default 300000 */
  retryDelayMs?: number;
  /** mode of the export files (outbox.fileMode). @default DEFAULT_OUTBOX_FILE_MODE */
  fileMode?: number;
}

export interface DuePullResult {
  name: string;
  status: 'ran' | 'not-due' | 'failed' | 'retry-later';
  /** when the pull is next due (ISO); for 'ran' computed from this run */
  nextRun: string;
  file?: string | null;
  records?: number;
  skipped?: number;
  /** failed: the error's code and one-line message */
  error?: { code: string; message: string };
}

export function pullLastKey(name: string): string {
  return `pull-last:${name}`;
}
export function pullFailedKey(name: string): string {
  return `pull-failed:${name}`;
}

/** Parses every schedule up front; throws one ConfigError listing every bad entry (nothing runs). */
export function resolveSchedules(pulls: readonly ScheduledPull[], timeZone?: string): Map<string, Schedule> {
  const out = new Map<string, Schedule>();
  const problems: string[] = [];
  for (const p of pulls) {
    if (!p.name) problems.push('a pull has no name');
    else if (out.has(p.name)) problems.push(`pull name "${p.name}" is used twice`);
    try {
      out.set(p.name, parseSchedule(p.schedule, timeZone === undefined ? {} : { timeZone }));
    } catch (err) {
      problems.push(`pull "${p.name}": ${errorMessage(err)}`);
    }
  }
  if (problems.length > 0) throw new ConfigError(`pulls: ${problems.join('; ')}`);
  return out;
}

function parseStamp(s: string | undefined): Date | null {
  if (s === undefined) return null;
  const d = new Date(s);
  return Number.isNaN(d.getTime()) ? null : d;
}

export async function runDuePulls(pulls: readonly ScheduledPull[], deps: RunDuePullsDeps): Promise<DuePullResult[]> {
  const schedules = resolveSchedules(pulls, deps.timeZone);
  const clock = deps.now ?? (() => new Date());
  const retryDelayMs = deps.retryDelayMs ?? 300_000;
  const results: DuePullResult[] = [];
  for (const p of pulls) {
    const schedule = schedules.get(p.name)!;
    const now = clock();
    const lastRun = parseStamp(await deps.journal.getMeta(pullLastKey(p.name)));
    if (!isDue(schedule, lastRun, now)) {
      results.push({ name: p.name, status: 'not-due', nextRun: nextRun(schedule, lastRun, now).toISOString() });
      continue;
    }
    const failedAt = parseStamp(await deps.journal.getMeta(pullFailedKey(p.name)));
    if (failedAt && failedAt.getTime() <= now.getTime() && now.getTime() - failedAt.getTime() < retryDelayMs) {
      results.push({ name: p.name, status: 'retry-later', nextRun: new Date(failedAt.getTime() + retryDelayMs).toISOString() });
      continue;
    }
    const log = deps.logger.child({ pullName: p.name });
    try {
      const r = await runPull(
        { ...p.request, outDir: deps.outDir, ...(deps.fileMode !== undefined ? { fileMode: deps.fileMode } : {}) },
        { ...deps, logger: log },
      );
      await deps.journal.setMeta(pullLastKey(p.name), now.toISOString());
      if (failedAt) await deps.journal.setMeta(pullFailedKey(p.name), '');
      const entry: DuePullResult = { name: p.name, status: 'ran', nextRun: nextRun(schedule, now, now).toISOString(), file: r.file, records: r.records };
      if (r.skipped !== undefined) entry.skipped = r.skipped;
      results.push(entry);
    } catch (err) {
      await deps.journal.setMeta(pullFailedKey(p.name), now.toISOString());
      const code = isBridgeError(err) ? err.code : (((err as { code?: unknown } | null)?.code as string | undefined) ?? 'E_UNKNOWN');
      log.error({ err, what: p.request.what }, 'scheduled pull failed; will retry');
      results.push({
        name: p.name,
        status: 'failed',
        nextRun: new Date(now.getTime() + retryDelayMs).toISOString(),
        error: { code: String(code), message: errorMessage(err) },
      });
    }
  }
  return results;
}
