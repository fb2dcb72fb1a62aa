/**
 * Wall-clock time in an IANA time zone with Intl only (no dependency): the one place that reads a
 * zone's calendar fields, used by date transforms (map), schedules (pull) and CSV dates (outbox).
 */
export interface WallClock {
  year: number;
  /** 1-12 */
  month: number;
  day: number;
  hour: number;
  minute: number;
  second: number;
  /** 0 Sunday .. 6 Saturday */
  weekday: number;
}

const formatters = new Map<string, Intl.DateTimeFormat>();

/** The cached formatter of a zone (undefined: the machine's zone); throws RangeError for an unknown zone. */
function formatter(timeZone: string | undefined): Intl.DateTimeFormat {
  const key = timeZone ?? '';
  let f = formatters.get(key);
  if (!f) {
    f = new Intl.DateTimeFormat('en-US', {
      timeZone,
      hourCycle: 'h23',
      year: 'numeric',
      month: 'numeric',
      day: 'numeric',
      hour: 'numeric',
      minute: 'numeric',
      second: 'numeric',
      weekday: 'short',
    });
    formatters.set(key, f);
  }
  return f;
}

/** An instant's calendar fields in a zone as zero-padded text (yyyy, MM, dd, HH, mm, ss), for dates people read. */
export function wallClockText(instant: number, timeZone: string | undefined): Record<'year' | 'month' | 'day' | 'hour' | 'minute' | 'second', string> {
  const w = wallClock(instant, timeZone);
  const two = (n: number): string => String(n).padStart(2, '0');
  return { year: String(w.year).padStart(4, '0'), month: two(w.month), day: two(w.day), hour: two(w.hour), minute: two(w.minute), second: two(w.second) };
}

/** Whether `timeZone` is an IANA zone this runtime knows. */
export function isValidTimeZone(timeZone: string): boolean {
  try {
    formatter(timeZone);
    return true;
  } catch {
    return false;
  }
}

const WEEKDAYS: Record<string, number> = { Sun: 0, Mon: 1, Tue: 2, Wed: 3, Thu: 4, Fri: 5, Sat: 6 };

/**
 * Answers by (zone, second): the same seconds come back (the events of one second, an expiry date on every row of
 * an export), and formatToParts costs ~8 us a call (the webhook outbox spent 2.6 % of its CPU in it). Each caller
 * gets its own object.
 */
const wallClocks = new Map<string, WallClock>();
const WALL_CLOCK_CACHE_MAX = 2048;

/** The calendar fields of an instant (ms since the epoch) in a zone. */
export function wallClock(instant: number, timeZone: string | undefined): WallClock {
  const second = Math.floor(instant / 1000);
  if (!Number.isFinite(second)) return wallClockUncached(instant, timeZone);
  const key = `${timeZone ?? ''}|${second}`;
  const hit = wallClocks.get(key);
  if (hit) return { ...hit };
  const w = wallClockUncached(instant, timeZone);
  if (wallClocks.size >= WALL_CLOCK_CACHE_MAX) wallClocks.clear();
  wallClocks.set(key, { ...w });
  return w;
}

function wallClockUncached(instant: number, timeZone: string | undefined): WallClock {
  const w: WallClock = { year: 0, month: 0, day: 0, hour: 0, minute: 0, second: 0, weekday: 0 };
  for (const p of formatter(timeZone).formatToParts(new Date(instant))) {
    switch (p.type) {
      case 'year':
        w.year = Number(p.value);
        break;
      case 'month':
        w.month = Number(p.value);
        break;
      case 'day':
        w.day = Number(p.value);
        break;
      case 'hour':
        w.hour = Number(p.value) % 24;
        break;
      case 'minute':
        w.minute = Number(p.value);
        break;
      case 'second':
        w.second = Number(p.value);
        break;
      case 'weekday':
        w.weekday = WEEKDAYS[p.value] ?? 0;
        break;
      default:
        break;
    }
  }
  return w;
}

/** The zone's UTC offset at an instant, in ms (its wall clock read as UTC, minus the instant to the second). */
export function zoneOffsetMs(instant: number, timeZone: string | undefined): number {
  if (timeZone === 'UTC' || timeZone === 'Etc/UTC') return 0;
  const w = wallClock(instant, timeZone);
  return Date.UTC(w.year, w.month - 1, w.day, w.hour, w.minute, w.second) - Math.floor(instant / 1000) * 1000;
}
