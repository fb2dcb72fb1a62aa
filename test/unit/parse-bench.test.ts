import { test } from 'node:test';
import assert from 'node:assert/strict';
import { benchParse } from '../../bench/parse.js';

// Smoke test of the benchmark harness (not a timing test): every phase runs in its own child process
// and must read exactly the generated number of rows; figures are reported for each phase.
test('benchParse runs every phase on a small file and reports rates, peak RSS and ratios', async () => {
  const res = await benchParse({ rows: 3000 });
  assert.equal(res.name, 'parse');
  assert.equal(res.figures.rows, 3000);
  for (const p of ['decode-only', 'csv-parse-arrays', 'csv-parse-columns', 'openParser']) {
    assert.equal(typeof res.figures[`${p} rows/s`], 'number', p);
    assert.ok((res.figures[`${p} peak RSS MB`] as number) > 0, p);
  }
  assert.equal(typeof res.figures['openParser / csv-parse-arrays'], 'number');
});
