import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import {
  createNameFilter,
  createReadinessTracker,
  globToRegExp,
  resolveReadiness,
  type DirEntryInfo,
  type ReadinessDecision,
} from '../../src/intake/readiness.js';

const kinds = (ds: ReadinessDecision[]): Record<string, string> => Object.fromEntries(ds.map((d) => [d.entry.name, d.kind]));
const e = (name: string, size: number, mtimeMs: number): DirEntryInfo => ({ name, size, mtimeMs });

describe('readiness: stable', () => {
  test('ready only after size and mtime held for `checks` polls intervalMs apart', () => {
    const t = createReadinessTracker({ mode: 'stable', checks: 3, intervalMs: 100 });
    assert.deepEqual(kinds(t.observe([e('a.csv', 10, 1)], 0).decisions), { 'a.csv': 'waiting' });
    assert.deepEqual(kinds(t.observe([e('a.csv', 20, 2)], 100).decisions), { 'a.csv': 'waiting' }, 'grew: clock restarts');
    assert.deepEqual(kinds(t.observe([e('a.csv', 20, 2)], 200).decisions), { 'a.csv': 'waiting' });
    assert.deepEqual(kinds(t.observe([e('a.csv', 20, 2)], 300).decisions), { 'a.csv': 'waiting' });
    assert.deepEqual(kinds(t.observe([e('a.csv', 20, 2)], 400).decisions), { 'a.csv': 'ready' });
  });

  test('a same-size rewrite (mtime changes) restarts the clock', () => {
    const t = createReadinessTracker({ mode: 'stable', checks: 1, intervalMs: 100 });
    t.observe([e('a.csv', 10, 1)], 0);
    assert.deepEqual(kinds(t.observe([e('a.csv', 10, 5)], 100).decisions), { 'a.csv': 'waiting' });
    assert.deepEqual(kinds(t.observe([e('a.csv', 10, 5)], 200).decisions), { 'a.csv': 'ready' });
  });

  test('rapid observations (events) do not shortcut the time condition', () => {
    const t = createReadinessTracker({ mode: 'stable', checks: 3, intervalMs: 100 });
    for (let now = 0; now < 299; now += 10) assert.equal(t.observe([e('a.csv', 10, 1)], now).decisions[0]?.kind, 'waiting', `at ${now}`);
    assert.equal(t.observe([e('a.csv', 10, 1)], 300).decisions[0]?.kind, 'ready');
  });

  test('files present at start-up with an old mtime still wait the checks', () => {
    const t = createReadinessTracker({ mode: 'stable', checks: 2, intervalMs: 100 });
    const old = -3_600_000;
    assert.equal(t.observe([e('old.csv', 10, old)], 0).decisions[0]?.kind, 'waiting');
    assert.equal(t.observe([e('old.csv', 10, old)], 200).decisions[0]?.kind, 'waiting', 'one poll only');
    assert.equal(t.observe([e('old.csv', 10, old)], 300).decisions[0]?.kind, 'ready');
  });

  test('0-byte files are never ready; empty after the grace period; growing resets', () => {
    const t = createReadinessTracker({ mode: 'stable', checks: 1, intervalMs: 100, emptyFileGraceMs: 1000 });
    assert.equal(t.observe([e('z.csv', 0, 0)], 0).decisions[0]?.kind, 'waiting');
    assert.equal(t.observe([e('z.csv', 0, 0)], 900).decisions[0]?.kind, 'waiting');
    const d = t.observe([e('z.csv', 0, 0)], 1000).decisions[0];
    assert.equal(d?.kind, 'empty');
    assert.equal(d?.kind === 'empty' && d.emptyForMs, 1000);
    const t2 = createReadinessTracker({ mode: 'stable', checks: 1, intervalMs: 100, emptyFileGraceMs: 1000 });
    t2.observe([e('z.csv', 0, 0)], 0);
    t2.observe([e('z.csv', 0, 0)], 900);
    assert.equal(t2.observe([e('z.csv', 5, 950)], 950).decisions[0]?.kind, 'waiting', 'rewritten with data');
    assert.equal(t2.observe([e('z.csv', 5, 950)], 1100).decisions[0]?.kind, 'ready');
  });

  test('an old 0-byte file is judged by its mtime once it held still for a poll', () => {
    const t = createReadinessTracker({ mode: 'stable', checks: 3, intervalMs: 100, emptyFileGraceMs: 60_000 });
    const now = 10_000_000;
    assert.equal(t.observe([e('z.csv', 0, now - 120_000)], now).decisions[0]?.kind, 'waiting', 'first sighting never decides');
    assert.equal(t.observe([e('z.csv', 0, now - 120_000)], now + 100).decisions[0]?.kind, 'empty');
  });

  test('a file that disappears is forgotten', () => {
    const t = createReadinessTracker({ mode: 'stable', checks: 1, intervalMs: 100 });
    t.observe([e('a.csv', 10, 1)], 0);
    assert.deepEqual(t.observe([], 100).decisions, []);
    assert.equal(t.observe([e('a.csv', 10, 1)], 200).decisions[0]?.kind, 'waiting', 'starts over');
  });
});

describe('readiness: marker', () => {
  test('ready when <name>.done exists; the marker is never data; suffix case-insensitive', () => {
    const t = createReadinessTracker({ mode: 'marker' });
    assert.deepEqual(kinds(t.observe([e('a.csv', 10, 1), e('b.csv', 10, 1)], 0).decisions), { 'a.csv': 'waiting', 'b.csv': 'waiting' });
    const { decisions } = t.observe([e('a.csv', 10, 1), e('a.csv.done', 0, 2), e('b.csv', 10, 1), e('B.CSV.DONE', 0, 2)], 10);
    assert.deepEqual(kinds(decisions), { 'a.csv': 'ready', 'b.csv': 'ready' });
    const a = decisions.find((d) => d.entry.name === 'a.csv');
    assert.deepEqual(a?.kind === 'ready' && a.markers, ['a.csv.done']);
  });

  test('configurable suffixes (.ok), empty data file with a marker is ready, orphan markers ignored', () => {
    const t = createReadinessTracker({ mode: 'marker', suffixes: ['.done', '.ok'] });
    const { decisions } = t.observe([e('empty.csv', 0, 1), e('empty.csv.ok', 0, 1), e('ghost.csv.done', 0, 1)], 0);
    assert.deepEqual(kinds(decisions), { 'empty.csv': 'ready' });
  });

  test('a batch trigger releases the files present when it appears, once; later files wait', () => {
    const t = createReadinessTracker({ mode: 'marker', batchTriggers: ['LOTE.OK'] });
    assert.deepEqual(kinds(t.observe([e('a.csv', 1, 1), e('b.csv', 1, 1)], 0).decisions), { 'a.csv': 'waiting', 'b.csv': 'waiting' });
    const o = t.observe([e('a.csv', 1, 1), e('b.csv', 1, 1), e('lote.ok', 0, 5)], 10);
    assert.deepEqual(kinds(o.decisions), { 'a.csv': 'ready', 'b.csv': 'ready' });
    assert.deepEqual(o.consumedTriggers, ['lote.ok']);
    const d = o.decisions[0];
    assert.equal(d?.kind === 'ready' && d.trigger, 'lote.ok');
    // trigger still there (not archived yet): not consumed twice; a file arriving now waits
    const o2 = t.observe([e('a.csv', 1, 1), e('b.csv', 1, 1), e('c.csv', 1, 1), e('lote.ok', 0, 5)], 20);
    assert.deepEqual(o2.consumedTriggers, []);
    assert.deepEqual(kinds(o2.decisions), { 'a.csv': 'ready', 'b.csv': 'ready', 'c.csv': 'waiting' });
    // trigger archived, a claimed: b stays released
    assert.deepEqual(kinds(t.observe([e('b.csv', 1, 1), e('c.csv', 1, 1)], 30).decisions), { 'b.csv': 'ready', 'c.csv': 'waiting' });
    // a new trigger releases c
    const o3 = t.observe([e('c.csv', 1, 1), e('LOTE.OK', 0, 50)], 40);
    assert.deepEqual(kinds(o3.decisions), { 'c.csv': 'ready' });
    assert.deepEqual(o3.consumedTriggers, ['LOTE.OK']);
  });
});

describe('readiness: rename', () => {
  test('temp names are ignored; a final name is ready after one stability check', () => {
    const filter = createNameFilter(undefined, undefined);
    const t = createReadinessTracker({ mode: 'rename', intervalMs: 100 }, filter);
    assert.deepEqual(t.observe([e('a.csv.tmp', 10, 1), e('b.part', 1, 1), e('~lock.csv', 1, 1), e('.hidden', 1, 1)], 0).decisions, []);
    assert.deepEqual(t.observe([e('a.csv.tmp', 10, 1)], 100).decisions, []);
    assert.deepEqual(kinds(t.observe([e('a.csv', 10, 1)], 200).decisions), { 'a.csv': 'waiting' });
    assert.deepEqual(kinds(t.observe([e('a.csv', 10, 1)], 300).decisions), { 'a.csv': 'ready' });
  });
});

describe('readiness: options and globs', () => {
  test('defaults and validation', () => {
    assert.deepEqual(resolveReadiness(undefined), { mode: 'stable', checks: 3, intervalMs: 2000, emptyFileGraceMs: 60_000, suffixes: [], batchTriggers: [] });
    assert.deepEqual(resolveReadiness({ mode: 'marker' }).suffixes, ['.done']);
    assert.throws(() => resolveReadiness({ mode: 'stable', checks: 0 }), RangeError);
    assert.throws(() => resolveReadiness({ mode: 'stable', intervalMs: 0 }), RangeError);
    assert.throws(() => resolveReadiness({ mode: 'marker', suffixes: [''] }), RangeError);
  });

  test('globs are anchored, case-insensitive, and escape regex characters', () => {
    assert.ok(globToRegExp('*.csv').test('A.CSV'));
    assert.ok(!globToRegExp('*.csv').test('a.csv.tmp'));
    assert.ok(globToRegExp('pedido?.txt').test('pedido1.txt'));
    assert.ok(!globToRegExp('a+b(1).csv').test('aab1.csv'));
    assert.ok(globToRegExp('a+b(1).csv').test('a+b(1).csv'));
    const f = createNameFilter(['*.csv', '*.txt'], ['*.tmp', 'skip*']);
    assert.deepEqual(['a.csv', 'b.txt', 'c.xml', 'skip.csv', 'd.tmp'].filter(f), ['a.csv', 'b.txt']);
  });
});
