#!/usr/bin/env node
// Runs the compiled test files with Node's test runner. Node 20's runner does not glob and ignores
// .ts files, and exits 0 when it finds nothing: this script lists the files itself and fails when
// no file or no test ran. Usage: node scripts/run-tests.mjs [substring-filter ...]
import { existsSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { spawn } from 'node:child_process';

const root = 'dist/test';
const filters = process.argv.slice(2);
function walk(dir) {
  let out = [];
  for (const name of readdirSync(dir)) {
    const p = join(dir, name);
    if (statSync(p).isDirectory()) out = out.concat(walk(p));
    else if (name.endsWith('.test.js')) out.push(p);
  }
  return out;
}
let files;
try {
  files = walk(root).sort();
} catch {
  files = [];
}
// a compiled test whose source is gone (moved, say from test/unit to test/e2e) is left behind by tsc: not run
const stale = files.filter((f) => !existsSync(f.replace(/^dist[\\/]/, '').replace(/\.test\.js$/, '.test.ts')));
if (stale.length) console.error(`run-tests: skipped ${stale.length} compiled test(s) without a source (left in dist/ by a move): ${stale.join(', ')}`);
files = files.filter((f) => !stale.includes(f));
if (filters.length) files = files.filter((f) => filters.some((s) => f.includes(s)));
if (files.length === 0) {
  console.error(`run-tests: no test files found under ${root} (did the build run?)`);
  process.exit(1);
}
const child = spawn(process.execPath, ['--test', '--test-concurrency=2', '--test-reporter=spec', ...files], {
  stdio: ['ignore', 'pipe', 'inherit'],
  env: { ...process.env, WMSBRIDGE_LOG_LEVEL: process.env.WMSBRIDGE_LOG_LEVEL ?? 'silent' },
});
let tail = '';
child.stdout.on('data', (d) => {
  process.stdout.write(d);
  tail = (tail + d.toString()).slice(-4000);
});
child.on('exit', (code) => {
  const m = /ℹ tests (\d+)/.exec(tail);
  const ran = m ? Number(m[1]) : 0;
  if (code === 0 && ran === 0) {
    console.error('run-tests: the runner reported 0 tests: failing on purpose');
    process.exit(1);
  }
  process.exit(code ?? 1);
});
