/**
 * Pull schedules: a tiny grammar, pure. No timers here: the caller (run --pulls, the watch loop)
 * asks `isDue(schedule, lastRun, now)` whenever it likes (the watch loop: every minute).
 *
 * Grammar (case-insensitive, spaces between tokens free):
 *   every <N>m                   every N minutes   (1 <= N <= 1440), counted from the last run
 *   every <N>h                   every N hours     (1 <= N <= 168),  counted from the last run
 *   daily HH:MM [ZONE]           every day at HH:MM wall-clock time
 *   weekdays HH:MM [ZONE]        Monday to Friday at HH:MM wall-clock time
 *   M H DOM MON DOW [ZONE]       a standard 5-field cron expression (`30 1 * * *`, `0,30 6-18 * * 1-5`,
 *                                names JAN-DEC and SUN-SAT, @daily...), computed by croner; day of month
 *                                and day of week combine with OR, as in Vixie cron
 * ZONE is an IANA time zone name (America/Sao_Paulo). Without it, the `timeZone` option of
 * parseSchedule applies, and without that the local time zone of the process (TZ).
 *
 * Rules (docs/PULL.md):
 * - A schedule that never ran (lastRun null) is due at once: the first check runs it.
 * - `every`: due lastRun + interval. A lastRun in the future (clock moved back) counts as now.
 * - `daily` / `weekdays` / cron: due at the first slot strictly after lastRun. Missed slots (process down
 *   for days) are caught up ONCE, not once per missed slot.
 * - A slot inside a DST gap (02:30 on a spring-forward day) is the instant the clock jumps over it
 *   (reads 03:30 after a one-hour jump); in a repeated hour (fall-back) the first occurrence. A cron
 *   slot inside a gap runs at the jump (croner's rule: 03:00 after a jump from 02:00 to 03:00).
 */
import { Cron } from 'croner';
import { wallClock, zoneOffsetMs } from './time.js';
import { ConfigError } from './errors.js';

export type Schedule =
  | { readonly kind: 'every'; readonly intervalMs: number; readonly source: string }
  | {
      readonly kind: 'daily' | 'weekdays';
      readonly hour: number;
      readonly minute: number;
      /** IANA zone; undefined: the local time zone of the process */
      readonly timeZone: string | undefined;
      readonly source: string;
    }
  | {
      readonly kind: 'cron';
      /** the 5 fields (or an @nickname) as written */
      readonly expression: string;
      /** IANA zone; undefined: the local time zone of the process */
      readonly timeZone: string | undefined;
      readonly source: string;
    };

export interface ScheduleOptions {
  /** IANA time zone for daily/weekdays/cron when the schedule string names none. @default process local zone */
  timeZone?: string;
}

export const SCHEDULE_GRAMMAR =
  "'every <N>m' | 'every <N>h' | 'daily HH:MM [Zone/Name]' | 'weekdays HH:MM [Zone/Name]' | a 5-field cron 'M H DOM MON DOW [Zone/Name]'";

const CRON_NICKNAMES = new Set(['@yearly', '@annually', '@monthly', '@weekly', '@daily', '@midnight', '@hourly']);

const MINUTE = 60_000;
const HOUR = 60 * MINUTE;
const DAY = 24 * HOUR;

/** Parses a schedule string; throws ConfigError naming the string and the grammar. */
export function parseSchedule(s: string, options: ScheduleOptions = {}): Schedule {
  const source = s.trim();
  const fail = (why: string): never => {
    throw new ConfigError(`schedule "${s}": ${why} (expected ${SCHEDULE_GRAMMAR})`, { details: { schedule: s } });
  };
  const tokens = source.split(/\s+/).filter((t) => t.length > 0);
  const head = tokens[0]?.toLowerCase();
  if (head === 'every') {
    if (tokens.length !== 2) fail('"every" takes one interval like 30m or 2h');
    const m = /^(\d{1,4})\s*([mh])$/i.exec(tokens[1] ?? '');
    if (!m) return fail(`interval "${tokens[1] ?? ''}" is not <N>m or <N>h`);
    const n = Number(m[1]);
    const unit = (m[2] ?? 'm').toLowerCase();
    if (n < 1) fail('the interval must be at least 1');
    if (unit === 'm' && n > 1440) fail('at most 1440 minutes (use daily HH:MM for daily runs)');
    if (unit === 'h' && n > 168) fail('at most 168 hours');
    return { kind: 'every', intervalMs: n * (unit === 'h' ? HOUR : MINUTE), source };
  }
  if (head === 'daily' || head === 'weekdays') {
    if (tokens.length < 2 || tokens.length > 3) fail(`"${head}" takes a time HH:MM and optionally a time zone`);
    const m = /^(\d{1,2}):(\d{2})$/.exec(tokens[1] ?? '');
    if (!m) return fail(`time "${tokens[1] ?? ''}" is not HH:MM`);
    const hour = Number(m[1]);
    const minute = Number(m[2]);
    if (hour > 23 || minute > 59) fail(`time "${tokens[1] ?? ''}" is out of range (00:00 to 23:59)`);
    const timeZone = tokens[2] ?? options.timeZone;
    if (timeZone !== undefined && !isValidTimeZone(timeZone)) fail(`unknown time zone "${timeZone}"`);
    return { kind: head, hour, minute, timeZone, source };
  }
  const cron = parseCron(tokens, options, fail);
  if (cron) return { ...cron, source };
  return fail(source.length === 0 ? 'empty' : `unknown form "${tokens[0] ?? ''}"`);
}

/** A 5-field cron expression (or an @nickname), optionally followed by a zone; null: not cron-shaped. */
function parseCron(
  tokens: string[],
  options: ScheduleOptions,
  fail: (why: string) => never,
): { kind: 'cron'; expression: string; timeZone: string | undefined } | null {
  const nickname = tokens[0] !== undefined && CRON_NICKNAMES.has(tokens[0].toLowerCase());
  const fields = nickname ? 1 : 5;
  // cron-shaped: digits, * / , - ? L W # and month or day names in the first field
  if (!nickname && (tokens.length < 5 || !/^[\d*/,?-]+$/.test(tokens[0] ?? ''))) return null;
  if (tokens.length > fields + 1)
    fail(
      `a cron expression has ${fields === 1 ? 'one nickname' : '5 fields'} (minute hour day-of-month month day-of-week) and optionally a time zone, got ${tokens.length} tokens`,
    );
  const expression = tokens.slice(0, fields).join(' ');
  const timeZone = tokens[fields] ?? options.timeZone;
  if (timeZone !== undefined && !isValidTimeZone(timeZone))
    fail(
      tokens[fields] !== undefined && /^[\d*/,?-]+$/.test(tokens[fields]!)
        ? 'a cron expression has 5 fields (seconds are not supported)'
        : `unknown time zone "${timeZone}"`,
    );
  try {
    cronOf(expression, timeZone);
  } catch (err) {
    fail(`invalid cron expression "${expression}": ${(err instanceof Error ? err.message : String(err)).replace(/^CronPattern: /, '')}`);
  }
  return { kind: 'cron', expression: nickname ? expression.toLowerCase() : expression, timeZone };
}

function cronOf(expression: string, timeZone: string | undefined): Cron {
  return new Cron(expression, { mode: '5-part', paused: true, ...(timeZone !== undefined ? { timezone: timeZone } : {}) });
}

/** When the schedule is next due, given its last run (null: never ran). */
export function nextRun(schedule: Schedule, lastRun: Date | null, now: Date): Date {
  if (lastRun === null || Number.isNaN(lastRun.getTime())) return new Date(now.getTime());
  const last = Math.min(lastRun.getTime(), now.getTime());
  if (schedule.kind === 'every') return new Date(last + schedule.intervalMs);
  if (schedule.kind === 'cron') return nextCronSlotAfter(schedule, last);
  return new Date(nextSlotAfter(schedule, last));
}

/** Whether the schedule should run now. */
export function isDue(schedule: Schedule, lastRun: Date | null, now: Date): boolean {
  return nextRun(schedule, lastRun, now).getTime() <= now.getTime();
}

// ---------------------------------------------------------------------------------------------
// Wall-clock arithmetic in a time zone, with Intl only (no dependency).
// ---------------------------------------------------------------------------------------------

/** Offset of the zone at an instant, in ms (wall clock read as UTC minus the instant). */
const offsetAt = (instant: number, timeZone: string | undefined): number => zoneOffsetMs(instant, timeZone);

/**
 * The instant at which the wall clock of the zone reads y-m-d hh:mm. In a repeated hour, the first
 * occurrence; in a gap, the instant the clock jumps over it (the pre-transition offset applied).
 */
export function instantOfWallClock(y: number, m: number, d: number, hh: number, mm: number, timeZone: string | undefined): number {
  const wall = Date.UTC(y, m - 1, d, hh, mm, 0);
  const before = offsetAt(wall - DAY / 2, timeZone);
  const after = offsetAt(wall + DAY / 2, timeZone);
  const candidates = [wall - before, wall - after].filter((t) => {
    const w = wallClock(t, timeZone);
    return w.year === y && w.month === m && w.day === d && w.hour === hh && w.minute === mm;
  });
  if (candidates.length > 0) return Math.min(...candidates);
  return wall - before;
}

function nextSlotAfter(schedule: Extract<Schedule, { kind: 'daily' | 'weekdays' }>, after: number): number {
  const tz = schedule.timeZone;
  const start = wallClock(after, tz);
  // walk calendar days from the day of `after`; 8 days always reach a weekday slot
  for (let i = 0; i < 10; i++) {
    const day = new Date(Date.UTC(start.year, start.month - 1, start.day + i));
    const y = day.getUTCFullYear();
    const m = day.getUTCMonth() + 1;
    const d = day.getUTCDate();
    const weekday = day.getUTCDay();
    if (schedule.kind === 'weekdays' && (weekday === 0 || weekday === 6)) continue;
    const slot = instantOfWallClock(y, m, d, schedule.hour, schedule.minute, tz);
    if (slot > after) return slot;
  }
  /* c8 ignore next */
  throw new Error(`schedule "${schedule.source}": no slot found after ${new Date(after).toISOString()}`);
}

function nextCronSlotAfter(schedule: Extract<Schedule, { kind: 'cron' }>, after: number): Date {
  // croner's next run is strictly after the instant it is given (to the second): an instant inside the
  // slot's own second is moved to its end first
  const next = cronOf(schedule.expression, schedule.timeZone).nextRun(new Date(Math.floor(after / 1000) * 1000 + 999));
  /* c8 ignore next */
  if (!next) throw new Error(`schedule "${schedule.source}": no slot found after ${new Date(after).toISOString()}`);
  return next;
}

function isValidTimeZone(tz: string): boolean {
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: tz });
    return true;
  } catch {
    return false;
  }
}
