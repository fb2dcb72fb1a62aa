import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { readFile, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { makeTempDir } from '../helpers/tmp.js';
import { PROJECT_ROOT } from '../helpers/cli.js';
import { writeRunReport } from '../../src/outbox/report.js';
import { sampleRunSummary } from '../helpers/sample-summary.js';

const CHROMIUM = '/usr/bin/chromium';
const skip = existsSync(CHROMIUM) ? false : `${CHROMIUM} not installed: screenshot of the report not taken (apt-get install -y chromium)`;

let dir: string;
let cleanup: () => Promise<void>;
before(async () => ({ dir, cleanup } = await makeTempDir()));
after(async () => cleanup());

test('the report renders in headless Chromium to a non-trivial PNG', { skip, timeout: 55_000 }, async () => {
  const paths = await writeRunReport(join(dir, 'outbox'), sampleRunSummary({ hostile: true }), { timeZone: 'UTC' });
  const png = join(dir, 'report.png');
  const { code, err } = await new Promise<{ code: number | null; err: string }>((resolve, reject) => {
    const child = spawn(process.execPath, [join(PROJECT_ROOT, 'scripts', 'screenshot-report.mjs'), paths.html, png, '--timeout', '45000'], {
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    let err = '';
    child.stderr.on('data', (d: Buffer) => (err += d.toString()));
    child.on('error', reject);
    child.on('close', (c) => resolve({ code: c, err }));
  });
  assert.equal(code, 0, `screenshot exited ${code}: ${err}`);
  const s = await stat(png);
  assert.ok(s.size > 20_000, `PNG is ${s.size} bytes`);
  const head = await readFile(png);
  assert.deepEqual([...head.subarray(0, 8)], [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
  // width and height from the IHDR chunk
  assert.equal(head.readUInt32BE(16), 1280);
  assert.equal(head.readUInt32BE(20), 2000);
});
