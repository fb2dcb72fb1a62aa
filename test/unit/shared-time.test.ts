/** wallClock answers from a cache by (zone, second): the same fields as Intl, and each caller its own object. */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { wallClock, zoneOffsetMs } from '../../src/shared/time.js';

function fromIntl(instant: number, timeZone: string): number[] {
  const f = new Intl.DateTimeFormat('en-US', {
    timeZone,
    hourCycle: 'h23',
    year: 'numeric',
    month: 'numeric',
    day: 'numeric',
    hour: 'numeric',
    minute: 'numeric',
    second: 'numeric',
  });
  const p = Object.fromEntries(f.formatToParts(new Date(instant)).map((x) => [x.type, Number(x.value)]));
  return [p['year']!, p['month']!, p['day']!, p['hour']! % 24, p['minute']!, p['second']!];
}

test('wallClock: the fields of every instant in several zones, cached or not (twice each), across DST changes and negative instants', () => {
  const zones = ['America/Sao_Paulo', 'Europe/Lisbon', 'UTC', 'Asia/Kolkata', 'America/Manaus'];
  // a DST change of Lisbon (2026-03-29 01:00Z), instants before the epoch, sub-second parts of one second
  const instants = [Date.UTC(2026, 2, 29, 0, 59, 59, 999), Date.UTC(2026, 2, 29, 1, 0, 0, 1), -1, -1500, 0, 999, 1000, Date.UTC(2019, 1, 16, 2, 30)];
  for (let i = 0; i < 500; i++) instants.push(Math.floor(Math.random() * 4e12) - 1e12);
  for (const tz of zones)
    for (const t of instants)
      for (let pass = 0; pass < 2; pass++) {
        const w = wallClock(t, tz);
        assert.deepEqual([w.year, w.month, w.day, w.hour, w.minute, w.second], fromIntl(t, tz), `${tz} ${new Date(t).toISOString()} pass ${pass}`);
      }
  assert.equal(zoneOffsetMs(Date.UTC(2026, 6, 1), 'Europe/Lisbon'), 3600_000);
});

test('wallClock: a caller that changes its answer does not change the next one', () => {
  const t = Date.UTC(2026, 10, 26, 12, 0, 0);
  const a = wallClock(t, 'America/Sao_Paulo');
  a.hour = 99;
  assert.equal(wallClock(t + 500, 'America/Sao_Paulo').hour, 9);
  assert.throws(() => wallClock(Number.NaN, 'UTC'), RangeError);
});
