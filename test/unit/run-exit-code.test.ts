/**
 * The operations contract as one pure function (src/app/run-report.ts exitCodeOf): 0 delivered, 1 data needs
 * attention, 2 credentials, 75 the WMS was unavailable and work waits, 130/143 interrupted.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { exitCodeOf, type ExitFacts } from '../../src/app/run-report.js';

const clean: ExitFacts = { attention: 0, open: 0, refusedData: 0, fileErrors: 0, problems: 0, noChangeAttention: false, outage: false, fatal: false };

test('exit codes: each fact alone, and which one wins when several hold', () => {
  assert.equal(exitCodeOf(clean), 0);
  for (const k of ['attention', 'open', 'refusedData', 'fileErrors', 'problems'] as const) assert.equal(exitCodeOf({ ...clean, [k]: 1 }), 1, k);
  assert.equal(exitCodeOf({ ...clean, noChangeAttention: true }), 1);
  assert.equal(exitCodeOf({ ...clean, outage: true }), 75);
  assert.equal(exitCodeOf({ ...clean, attention: 3, outage: true }), 75, 'an outage says more than rejects: try later');
  assert.equal(exitCodeOf({ ...clean, outage: true, fatal: true }), 2, 'credentials first');
  assert.equal(exitCodeOf({ ...clean, attention: 1, interruptedBy: 'SIGINT' }), 130);
  assert.equal(exitCodeOf({ ...clean, outage: true, interruptedBy: 'SIGTERM' }), 143);
  assert.equal(exitCodeOf({ ...clean, fatal: true, interruptedBy: 'SIGTERM' }), 2, 'refused credentials are not hidden by the stop');
  assert.equal(exitCodeOf({ ...clean, interruptedBy: 'abort' }), 0, 'an abort without a signal name is not an interruption code');
});
