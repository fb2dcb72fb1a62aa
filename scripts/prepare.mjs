#!/usr/bin/env node
// `npm install` runs this ("prepare"): it compiles the TypeScript sources to dist/ when TypeScript is
// installed (a development install), then bundles the studio's page (scripts/build-studio.mjs). A production
// install (`npm install --omit=dev`) has no TypeScript: from a packed tarball (`npm pack`, which builds first) dist/ is already there; from a bare clone it is not,
// and this says how to get it instead of failing on `tsc: not found`.
import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const require = createRequire(import.meta.url);
let tsc = null;
try {
  tsc = require.resolve('typescript/bin/tsc');
} catch {
  tsc = null;
}
if (tsc) {
  const r = spawnSync(process.execPath, [tsc, '-p', 'tsconfig.json'], { stdio: 'inherit' });
  if (r.status !== 0) process.exit(r.status ?? 1);
  // the studio's page (esbuild bundles CodeMirror into dist/studio-web: it loads without network access)
  const s = spawnSync(process.execPath, [fileURLToPath(new URL('./build-studio.mjs', import.meta.url))], { stdio: 'inherit' });
  process.exit(s.status ?? 1);
}
if (existsSync(new URL('../dist/src/cli/main.js', import.meta.url))) process.exit(0);
process.stderr.write(
  'wmsbridge: TypeScript is not installed (--omit=dev) and dist/ is missing.\n' +
    '  Production install from a clone: npm ci && npm prune --omit=dev\n' +
    '  or build a package once (npm pack) and install it: npm install --omit=dev ./wmsbridge-<version>.tgz\n',
);
process.exit(0);
