#!/usr/bin/env node
// Writes the three sample run reports (clean night, night with rejects, outage night) into <out-dir>
// (default ./sample-reports) and, with --screenshots DIR, takes their PNGs with headless Chromium (the
// docs/img/report-*.png images). Needs a build (npm run build). Usage:
//   node scripts/sample-reports.mjs [out-dir] [--locale pt-BR|en] [--screenshots docs/img]
import { spawnSync } from 'node:child_process';
import { join, resolve, dirname } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: { locale: { type: 'string', default: 'pt-BR' }, screenshots: { type: 'string' } },
});
const out = resolve(positionals[0] ?? 'sample-reports');
const { writeRunReport } = await import(pathToFileURL(join(root, 'dist/src/outbox/report.js')).href);
const { sampleRunSummary } = await import(pathToFileURL(join(root, 'dist/test/helpers/sample-summary.js')).href);
for (const scenario of ['clean', 'rejects', 'outage']) {
  const p = await writeRunReport(join(out, scenario), sampleRunSummary({ scenario }), { timeZone: 'America/Sao_Paulo', locale: values.locale });
  console.log(p.html);
  if (values.screenshots) {
    const png = join(resolve(values.screenshots), `report-${scenario}.png`);
    const r = spawnSync(
      process.execPath,
      [join(root, 'scripts/screenshot-report.mjs'), p.html, png, '--width', '1280', '--height', scenario === 'rejects' ? '1500' : '1100'],
      { stdio: 'inherit' },
    );
    if (r.status !== 0) process.exit(r.status ?? 1);
  }
}
