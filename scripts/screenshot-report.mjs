#!/usr/bin/env node
// Takes a PNG screenshot of a run report with headless Chromium (no network, throwaway profile).
// Usage: node scripts/screenshot-report.mjs <report.html> [out.png] [--width 1280] [--height 2000] [--chromium /usr/bin/chromium]
// Exits 2 when Chromium is missing (install it with `apt-get install -y chromium`).
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';

const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: {
    width: { type: 'string', default: '1280' },
    height: { type: 'string', default: '2000' },
    chromium: { type: 'string', default: process.env.CHROMIUM ?? '/usr/bin/chromium' },
    timeout: { type: 'string', default: '60000' },
  },
});
const [input, outArg] = positionals;
if (!input) {
  console.error('usage: node scripts/screenshot-report.mjs <report.html> [out.png] [--width 1280] [--height 2000]');
  process.exit(64);
}
if (!existsSync(values.chromium)) {
  console.error(`screenshot-report: ${values.chromium} not found (apt-get install -y chromium, or pass --chromium)`);
  process.exit(2);
}
const html = resolve(input);
const out = resolve(outArg ?? html.replace(/\.html?$/i, '') + '.png');
const profile = mkdtempSync(join(tmpdir(), 'wmsbridge-chromium-'));
const args = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  '--hide-scrollbars',
  `--user-data-dir=${profile}`,
  `--screenshot=${out}`,
  `--window-size=${values.width},${values.height}`,
  pathToFileURL(html).href,
];
const child = spawn(values.chromium, args, { stdio: ['ignore', 'ignore', 'pipe'] });
let stderr = '';
child.stderr.on('data', (d) => {
  stderr = (stderr + d.toString()).slice(-4000);
});
const timer = setTimeout(() => child.kill('SIGKILL'), Number(values.timeout));
child.on('close', (code) => {
  clearTimeout(timer);
  rmSync(profile, { recursive: true, force: true });
  if (!existsSync(out) || statSync(out).size === 0) {
    console.error(`screenshot-report: chromium exited ${code} without writing ${out}\n${stderr}`);
    process.exit(1);
  }
  console.log(out);
});
