/**
 * How DateTimes are written in what wmsbridge sends (`wms.dateTimes`). The interface shows samples "with a
 * trailing Z or none" and a field-table format without a zone, so a WMS may expect local time:
 * - `utc` (default): as mapped, UTC with a trailing Z (`2026-01-10T03:00:00.000Z`);
 * - `local-offset`: the wall time of `wms.timeZone` with its offset (`2026-01-10T00:00:00-03:00`);
 * - `local`: the wall time of `wms.timeZone` without an offset (`2026-01-10T00:00:00`).
 * Only values in the UTC form (…Z) are rewritten; bare dates (`2026-01-10`) and values already carrying
 * an offset or none are sent as they are.
 */
import { wallClock, zoneOffsetMs } from '../shared/time.js';

export const DATE_TIMES_MODES = ['utc', 'local-offset', 'local'] as const;
export type DateTimesMode = (typeof DATE_TIMES_MODES)[number];

const UTC_DT = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(?::\d{2}(?:\.\d{1,9})?)?Z$/;

const pad = (n: number, w = 2): string => String(Math.abs(n)).padStart(w, '0');

/** One UTC instant written as `mode` says, in `timeZone`. */
export function formatDateTime(iso: string, mode: DateTimesMode, timeZone: string): string {
  if (mode === 'utc' || !UTC_DT.test(iso)) return iso;
  const ms = Date.parse(iso);
  if (!Number.isFinite(ms)) return iso;
  const w = wallClock(ms, timeZone);
  const local = `${w.year}-${pad(w.month)}-${pad(w.day)}T${pad(w.hour)}:${pad(w.minute)}:${pad(w.second)}`;
  if (mode === 'local') return local;
  const off = Math.round(zoneOffsetMs(ms, timeZone) / 60_000);
  return `${local}${off < 0 ? '-' : '+'}${pad(Math.trunc(off / 60))}:${pad(off % 60)}`;
}

/** A JSON body with every UTC DateTime rewritten (a copy; the input is not changed). */
export function withDateTimes(json: unknown, mode: DateTimesMode, timeZone: string): unknown {
  if (mode === 'utc') return json;
  const walk = (v: unknown): unknown => {
    if (typeof v === 'string') return UTC_DT.test(v) ? formatDateTime(v, mode, timeZone) : v;
    if (Array.isArray(v)) return v.map(walk);
    if (v && typeof v === 'object') {
      const out: Record<string, unknown> = {};
      for (const [k, x] of Object.entries(v)) out[k] = walk(x);
      return out;
    }
    return v;
  };
  return walk(json);
}
