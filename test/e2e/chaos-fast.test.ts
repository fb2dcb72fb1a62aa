/**
 * The fast subset of the chaos suite (bench/chaos.ts, `npm run chaos` runs all of it): 5 kill -9 cycles,
 * one fault scenario (500s, 429s, resets, latency spikes, 1-2 s tokens), and the inbox share disappearing
 * and coming back under `wmsbridge watch` with polling. Each compares the sandbox with what the files say:
 * nothing lost, nothing duplicated where a read-back allows.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { scenarioKills, scenarioFaults, scenarioShareGone, TEST_SCALE, type ChaosResult } from '../../bench/chaos.js';

function check(r: ChaosResult): void {
  const why = `${r.scenario}: ${r.notes}\n${r.details.join('\n')}`;
  assert.ok(r.records > 200, `the drop has records (${r.records})`);
  assert.equal(r.lost, 0, `records lost: ${why}`);
  assert.equal(r.duplicated, 0, `records duplicated where a read-back allows: ${why}`);
}

test('5 kill -9 cycles, then a final run: nothing lost', { timeout: 60_000 }, async () => {
  const r = await scenarioKills(TEST_SCALE, { cycles: 5, seed: 11 });
  check(r);
  assert.match(r.notes, /^[1-9]\d* run\(s\) killed mid-way/, `the scenario must really kill runs: ${r.notes}`);
});

test('sandbox faults: 500s, 429s, resets, latency spikes, 1-2 s tokens: nothing lost', { timeout: 60_000 }, async () => {
  const r = await scenarioFaults(TEST_SCALE, { cycles: 1, spikeMs: 400 });
  check(r);
  assert.match(r.notes, /"failRate":[1-9]/, `faults were injected: ${r.notes}`);
});

test('the inbox share disappears and comes back: watch survives, takes later files, nothing lost', { timeout: 60_000 }, async () => {
  const r = await scenarioShareGone(TEST_SCALE, { outages: 1, outageMs: 1500 });
  check(r);
  assert.match(r.notes, /watch survived every outage: true/, r.notes);
  assert.equal(r.stuck, 0, `every original ends archived: ${r.notes}`);
  // while the share is away wmsbridge must not create a local folder where it was mounted (files would
  // go to the local disk, and the share could not be mounted back over a non-empty folder)
  assert.deepEqual(r.recreated, [], `the vanished inbox folder was re-created: ${(r.recreated ?? []).join('; ')}`);
});
