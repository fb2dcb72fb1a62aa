import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { parseSchedule, nextRun, isDue, instantOfWallClock } from '../../src/shared/schedule.js';
import { isBridgeError } from '../../src/shared/errors.js';

const d = (iso: string) => new Date(iso);

describe('parseSchedule', () => {
  test('every minutes and hours', () => {
    assert.deepEqual(parseSchedule('every 30m'), { kind: 'every', intervalMs: 30 * 60_000, source: 'every 30m' });
    assert.equal((parseSchedule('  EVERY   2h ') as { intervalMs: number }).intervalMs, 2 * 3_600_000);
    assert.equal((parseSchedule('every 1440m') as { intervalMs: number }).intervalMs, 86_400_000);
  });

  test('daily and weekdays, with and without zone', () => {
    assert.deepEqual(parseSchedule('daily 02:00'), { kind: 'daily', hour: 2, minute: 0, timeZone: undefined, source: 'daily 02:00' });
    assert.deepEqual(parseSchedule('weekdays 6:30', { timeZone: 'UTC' }), { kind: 'weekdays', hour: 6, minute: 30, timeZone: 'UTC', source: 'weekdays 6:30' });
    const s = parseSchedule('daily 23:59 America/Sao_Paulo', { timeZone: 'UTC' });
    assert.equal(s.kind === 'daily' && s.timeZone, 'America/Sao_Paulo');
  });

  for (const bad of [
    '',
    'every',
    'every 0m',
    'every 30',
    'every 30s',
    'every 1441m',
    'every 169h',
    'every 3 m',
    'daily',
    'daily 24:00',
    'daily 12:60',
    'daily 2',
    'daily 02:00 Mars/Olympus',
    'weekly 02:00',
    'hourly',
    'daily 02:00 UTC extra',
  ]) {
    test(`refuses ${JSON.stringify(bad)} with a config error naming it`, () => {
      assert.throws(
        () => parseSchedule(bad),
        (err: unknown) => isBridgeError(err) && err.code === 'E_CONFIG' && err.message.includes(`"${bad}"`) && err.message.includes('every <N>m'),
      );
    });
  }
});

describe('nextRun / isDue: every', () => {
  const s = parseSchedule('every 30m');
  test('never ran: due at once', () => {
    const now = d('2026-03-10T10:00:00Z');
    assert.equal(nextRun(s, null, now).getTime(), now.getTime());
    assert.equal(isDue(s, null, now), true);
  });
  test('counted from the last run', () => {
    const last = d('2026-03-10T10:00:00Z');
    assert.equal(nextRun(s, last, d('2026-03-10T10:10:00Z')).toISOString(), '2026-03-10T10:30:00.000Z');
    assert.equal(isDue(s, last, d('2026-03-10T10:29:59.999Z')), false);
    assert.equal(isDue(s, last, d('2026-03-10T10:30:00Z')), true);
    assert.equal(isDue(s, last, d('2026-03-12T00:00:00Z')), true);
  });
  test('a last run in the future (clock moved back) counts as now', () => {
    const now = d('2026-03-10T10:00:00Z');
    assert.equal(nextRun(s, d('2026-03-11T10:00:00Z'), now).toISOString(), '2026-03-10T10:30:00.000Z');
  });
});

describe('nextRun / isDue: daily and weekdays', () => {
  test('daily in UTC: first slot strictly after the last run', () => {
    const s = parseSchedule('daily 02:00', { timeZone: 'UTC' });
    const now = d('2026-03-10T12:00:00Z');
    assert.equal(nextRun(s, d('2026-03-10T02:00:05Z'), now).toISOString(), '2026-03-11T02:00:00.000Z');
    assert.equal(nextRun(s, d('2026-03-10T01:59:00Z'), now).toISOString(), '2026-03-10T02:00:00.000Z');
    assert.equal(isDue(s, d('2026-03-10T01:59:00Z'), now), true);
    assert.equal(isDue(s, d('2026-03-10T02:00:05Z'), now), false);
    // exactly at the slot: the slot is not strictly after, so the next is tomorrow
    assert.equal(nextRun(s, d('2026-03-10T02:00:00Z'), now).toISOString(), '2026-03-11T02:00:00.000Z');
  });

  test('missed slots are caught up once', () => {
    const s = parseSchedule('daily 02:00', { timeZone: 'UTC' });
    const now = d('2026-03-20T09:00:00Z');
    assert.equal(isDue(s, d('2026-03-10T02:00:00Z'), now), true);
    // after that catch-up run, the next is tomorrow's slot, not another missed one
    assert.equal(nextRun(s, now, now).toISOString(), '2026-03-21T02:00:00.000Z');
  });

  test('daily in America/Sao_Paulo (UTC-3)', () => {
    const s = parseSchedule('daily 02:00 America/Sao_Paulo');
    assert.equal(nextRun(s, d('2026-03-10T06:00:00Z'), d('2026-03-10T06:00:00Z')).toISOString(), '2026-03-11T05:00:00.000Z');
    // 23:30 local on the 10th is 02:30Z on the 11th: the next slot is 02:00 local on the 11th
    assert.equal(nextRun(s, d('2026-03-11T02:30:00Z'), d('2026-03-11T02:30:00Z')).toISOString(), '2026-03-11T05:00:00.000Z');
  });

  test('the process zone is used when none is given', () => {
    const s = parseSchedule('daily 02:00');
    const last = d('2026-03-10T12:00:00Z');
    const next = nextRun(s, last, last);
    assert.ok(next.getTime() > last.getTime());
    assert.equal(next.getHours(), 2);
    assert.equal(next.getMinutes(), 0);
    assert.ok(next.getTime() - last.getTime() <= 24 * 3_600_000 + 3_600_000);
  });

  test('weekdays skip Saturday and Sunday', () => {
    const s = parseSchedule('weekdays 06:30', { timeZone: 'UTC' });
    // Friday 2026-03-13 07:00 -> Monday 2026-03-16 06:30
    assert.equal(nextRun(s, d('2026-03-13T07:00:00Z'), d('2026-03-13T07:00:00Z')).toISOString(), '2026-03-16T06:30:00.000Z');
    assert.equal(isDue(s, d('2026-03-13T07:00:00Z'), d('2026-03-15T12:00:00Z')), false); // Sunday
    assert.equal(isDue(s, d('2026-03-13T07:00:00Z'), d('2026-03-16T06:30:00Z')), true);
    // Monday 05:00 -> Monday 06:30
    assert.equal(nextRun(s, d('2026-03-16T05:00:00Z'), d('2026-03-16T05:00:00Z')).toISOString(), '2026-03-16T06:30:00.000Z');
  });

  test('weekday is judged in the schedule zone, not in UTC', () => {
    // Friday 22:00 in Sao Paulo is Saturday 01:00Z; a Friday 23:00 local slot still belongs to Friday
    const s = parseSchedule('weekdays 23:00 America/Sao_Paulo');
    assert.equal(nextRun(s, d('2026-03-14T01:00:00Z'), d('2026-03-14T01:00:00Z')).toISOString(), '2026-03-14T02:00:00.000Z');
    // after it ran, the next is Monday 23:00 local = Tuesday 02:00Z
    assert.equal(nextRun(s, d('2026-03-14T02:00:01Z'), d('2026-03-14T02:00:01Z')).toISOString(), '2026-03-17T02:00:00.000Z');
  });

  test('DST: a slot in the spring-forward gap runs when the clock jumps over it', () => {
    // Europe/Berlin 2026-03-29: 02:00 CET -> 03:00 CEST; 02:30 does not exist
    const t = instantOfWallClock(2026, 3, 29, 2, 30, 'Europe/Berlin');
    assert.equal(new Date(t).toISOString(), '2026-03-29T01:30:00.000Z'); // reads 03:30 CEST
    const s = parseSchedule('daily 02:30 Europe/Berlin');
    assert.equal(nextRun(s, d('2026-03-28T12:00:00Z'), d('2026-03-28T12:00:00Z')).toISOString(), '2026-03-29T01:30:00.000Z');
    assert.equal(nextRun(s, d('2026-03-29T01:30:00Z'), d('2026-03-29T01:30:00Z')).toISOString(), '2026-03-30T00:30:00.000Z');
  });

  test('DST: a slot in the repeated hour runs once, at its first occurrence', () => {
    // Europe/Berlin 2026-10-25: 03:00 CEST -> 02:00 CET; 02:30 happens twice (00:30Z and 01:30Z)
    const s = parseSchedule('daily 02:30 Europe/Berlin');
    assert.equal(nextRun(s, d('2026-10-24T12:00:00Z'), d('2026-10-24T12:00:00Z')).toISOString(), '2026-10-25T00:30:00.000Z');
    assert.equal(nextRun(s, d('2026-10-25T00:30:00Z'), d('2026-10-25T00:30:00Z')).toISOString(), '2026-10-26T01:30:00.000Z');
  });
});

describe('cron expressions (croner), beside the friendly forms', () => {
  test('a 5-field expression parses, in the given zone or the one named after it', () => {
    assert.deepEqual(parseSchedule('30 1 * * *', { timeZone: 'America/Sao_Paulo' }), {
      kind: 'cron',
      expression: '30 1 * * *',
      timeZone: 'America/Sao_Paulo',
      source: '30 1 * * *',
    });
    assert.deepEqual(parseSchedule(' 0 6  * * 1-5   UTC ', { timeZone: 'America/Sao_Paulo' }), {
      kind: 'cron',
      expression: '0 6 * * 1-5',
      timeZone: 'UTC',
      source: '0 6  * * 1-5   UTC',
    });
    assert.equal(parseSchedule('@DAILY').kind, 'cron');
  });

  test('next run in UTC and in America/Sao_Paulo (UTC-3 all year): strictly after the last run', () => {
    const utc = parseSchedule('30 1 * * *', { timeZone: 'UTC' });
    assert.equal(nextRun(utc, d('2026-03-10T01:00:00Z'), d('2026-03-10T12:00:00Z')).toISOString(), '2026-03-10T01:30:00.000Z');
    assert.equal(
      nextRun(utc, d('2026-03-10T01:30:00Z'), d('2026-03-10T12:00:00Z')).toISOString(),
      '2026-03-11T01:30:00.000Z',
      'exactly at the slot: the next day',
    );
    assert.equal(
      nextRun(utc, d('2026-03-10T01:30:00.400Z'), d('2026-03-10T12:00:00Z')).toISOString(),
      '2026-03-11T01:30:00.000Z',
      'inside the slot second: the next day',
    );
    const sp = parseSchedule('30 1 * * *', { timeZone: 'America/Sao_Paulo' });
    assert.equal(nextRun(sp, d('2026-03-10T01:00:00Z'), d('2026-03-10T12:00:00Z')).toISOString(), '2026-03-10T04:30:00.000Z');
    assert.equal(nextRun(sp, d('2026-03-10T04:30:00Z'), d('2026-03-10T12:00:00Z')).toISOString(), '2026-03-11T04:30:00.000Z');
    // November, when Sao Paulo used to start summer time: no gap since 2019
    assert.equal(nextRun(sp, d('2026-11-01T00:00:00Z'), d('2026-11-02T00:00:00Z')).toISOString(), '2026-11-01T04:30:00.000Z');
    assert.equal(isDue(sp, d('2026-03-10T04:30:00Z'), d('2026-03-11T04:29:59Z')), false);
    assert.equal(isDue(sp, d('2026-03-10T04:30:00Z'), d('2026-03-11T04:30:00Z')), true);
    assert.equal(isDue(sp, null, d('2026-03-10T00:00:00Z')), true, 'never ran: due at once, like the friendly forms');
  });

  test('day of month and day of week combine with OR (Vixie cron)', () => {
    const s = parseSchedule('0 9 1 * MON', { timeZone: 'UTC' });
    const runs: string[] = [];
    let last = d('2026-05-31T12:00:00Z');
    for (let i = 0; i < 4; i++) runs.push((last = nextRun(s, last, d('2027-01-01T00:00:00Z'))).toISOString().slice(0, 10));
    assert.deepEqual(runs, ['2026-06-01', '2026-06-08', '2026-06-15', '2026-06-22']);
    const m = parseSchedule('0 9 1 * MON', { timeZone: 'UTC' });
    assert.equal(nextRun(m, d('2026-06-22T09:00:00Z'), d('2027-01-01T00:00:00Z')).toISOString(), '2026-06-29T09:00:00.000Z');
    assert.equal(nextRun(m, d('2026-06-29T09:00:00Z'), d('2027-01-01T00:00:00Z')).toISOString(), '2026-07-01T09:00:00.000Z');
  });

  for (const zone of ['UTC', 'America/Sao_Paulo']) {
    test(`the friendly forms and their cron spelling agree on every next run (${zone}, two weeks, every 37 minutes)`, () => {
      const pairs: Array<[string, string]> = [
        ['daily 02:00', '0 2 * * *'],
        ['weekdays 06:30', '30 6 * * 1-5'],
        ['daily 23:59', '59 23 * * *'],
      ];
      for (const [friendly, cron] of pairs) {
        const f = parseSchedule(friendly, { timeZone: zone });
        const c = parseSchedule(cron, { timeZone: zone });
        for (let t = d('2026-03-06T00:00:00Z').getTime(); t < d('2026-03-20T00:00:00Z').getTime(); t += 37 * 60_000) {
          const last = new Date(t);
          assert.equal(nextRun(c, last, last).toISOString(), nextRun(f, last, last).toISOString(), `${friendly} vs ${cron} after ${last.toISOString()}`);
        }
      }
    });
  }

  for (const [bad, why] of [
    ['61 1 * * *', /minute: 61/],
    ['30 25 * * *', /hour: 25/],
    ['0 30 1 * * *', /5 fields/],
    ['30 1 * * * Mars/Olympus', /unknown time zone "Mars\/Olympus"/],
    ['30 1 * * FOO', /invalid cron expression/],
  ] as const) {
    test(`refuses the cron expression ${JSON.stringify(bad)} with a config error naming it`, () => {
      assert.throws(
        () => parseSchedule(bad),
        (err: unknown) =>
          isBridgeError(err) && err.code === 'E_CONFIG' && err.message.includes(`"${bad}"`) && why.test(err.message) && err.message.includes('5-field cron'),
      );
    });
  }
});
