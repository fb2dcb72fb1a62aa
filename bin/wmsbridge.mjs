#!/usr/bin/env node
// Entry point for `npx wmsbridge`. The TypeScript sources are compiled to dist/ by `npm install`
// (the "prepare" script), so the CLI starts without a TypeScript loader.
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
const main = fileURLToPath(new URL('../dist/src/cli/main.js', import.meta.url));
if (!existsSync(main)) {
  process.stderr.write('wmsbridge: dist/ is missing; run `npm install` (or `npm run build`) first\n');
  process.exit(2);
}
await import(main);
