#!/usr/bin/env node
// Bundles the studio's page (web/studio: CodeMirror 6, the YAML mode, lint and completion) into
// dist/studio-web/studio.js and studio.css with esbuild, so `wmsbridge studio` serves it with no network access.
// `npm run build` and scripts/prepare.mjs (npm install) run it after tsc. Exits 0 without esbuild (a production
// install from a packed tarball already holds dist/studio-web).
import { copyFileSync, existsSync, mkdirSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
const out = `${root}dist/studio-web`;
let esbuild;
try {
  esbuild = await import('esbuild');
} catch {
  if (existsSync(`${out}/studio.js`)) process.exit(0);
  process.stderr.write('wmsbridge: esbuild is not installed (--omit=dev): the studio page is not built (dist/studio-web)\n');
  process.exit(0);
}
mkdirSync(out, { recursive: true });
await esbuild.build({
  entryPoints: [`${root}web/studio/main.js`],
  bundle: true,
  format: 'iife',
  target: ['chrome110', 'firefox110', 'safari16'],
  minify: true,
  legalComments: 'eof',
  outfile: `${out}/studio.js`,
  logLevel: 'warning',
});
copyFileSync(`${root}web/studio/studio.css`, `${out}/studio.css`);
