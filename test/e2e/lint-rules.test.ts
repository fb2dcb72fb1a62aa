// The lint holds the line (issue 17): the layer rules, the function length limit and the cycle check refuse
// what they are meant to refuse, through the project's real eslint.config.js and scripts/check-cycles.mjs.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { ESLint } from 'eslint';
import { PROJECT_ROOT } from '../helpers/cli.js';
import { makeTempDir } from '../helpers/tmp.js';

const eslint = new ESLint({ cwd: PROJECT_ROOT });

/** The rule ids eslint reports for `code` as if it were the file `path` of the project (the file need not exist). */
async function ruleIds(path: string, code: string): Promise<string[]> {
  const [result] = await eslint.lintText(code, { filePath: join(PROJECT_ROOT, path) });
  assert.ok(result, 'eslint returned no result');
  const fatal = result.messages.filter((m) => m.fatal);
  assert.deepEqual(fatal, [], 'the probe does not parse');
  return result.messages.map((m) => m.ruleId ?? '');
}

test('layers: an import against the direction of docs/ARCHITECTURE.md is a lint error; along it is not', { timeout: 60_000 }, async () => {
  const probe = (what: string): string => `import { x } from '${what}';\nexport const y = x;\n`;
  // lower layers import nothing above them
  assert.deepEqual(await ruleIds('src/shared/probe.ts', probe('../journal/types.js')), ['no-restricted-imports']);
  assert.deepEqual(await ruleIds('src/wms/probe.ts', probe('../push/senders.js')), ['no-restricted-imports']);
  // the middle layer never imports the composition root or the CLI, nor an unrelated stage
  assert.deepEqual(await ruleIds('src/push/probe.ts', probe('../app/context.js')), ['no-restricted-imports']);
  assert.deepEqual(await ruleIds('src/map/probe.ts', probe('../journal/types.js')), ['no-restricted-imports']);
  assert.deepEqual(await ruleIds('src/parse/probe.ts', probe('../push/refs.js')), ['no-restricted-imports']);
  assert.deepEqual(await ruleIds('src/parse/probe.ts', probe('../map/compile.js')), ['no-restricted-imports']);
  // the journal stands on the record model's floor (shared/record-model.ts), not on the stages that produce records;
  // the configuration declares the CSV format from the floor too (shared/csv-format.ts), not from the outbox
  assert.deepEqual(await ruleIds('src/journal/probe.ts', probe('../map/types.js')), ['no-restricted-imports']);
  assert.deepEqual(await ruleIds('src/journal/probe.ts', probe('../parse/types.js')), ['no-restricted-imports']);
  assert.deepEqual(await ruleIds('src/config/probe.ts', probe('../outbox/csv.js')), ['no-restricted-imports']);
  // from a sub-folder too
  assert.deepEqual(await ruleIds('src/wms/targets/probe.ts', probe('../../app/run.js')), ['no-restricted-imports']);
  // src never imports test or bench code
  assert.deepEqual(await ruleIds('src/journal/probe.ts', probe('../../test/helpers/tmp.js')), ['no-restricted-imports']);
  // packages that belong to one layer, and the undici client built by the composition roots only
  assert.deepEqual(await ruleIds('src/push/probe.ts', probe('better-sqlite3')), ['no-restricted-imports']);
  assert.deepEqual(await ruleIds('src/push/probe.ts', probe('../wms/client.js')), ['no-restricted-imports']);
  // allowed edges
  assert.deepEqual(await ruleIds('src/push/probe.ts', probe('../wms/client-types.js')), []);
  assert.deepEqual(await ruleIds('src/push/probe.ts', probe('../journal/types.js')), []);
  assert.deepEqual(await ruleIds('src/app/probe.ts', probe('../wms/client.js')), []);
  assert.deepEqual(await ruleIds('src/cli/probe.ts', probe('../app/run.js')), []);
  assert.deepEqual(await ruleIds('src/cli/probe.ts', probe('../config/load.js')), []);
  assert.deepEqual(await ruleIds('src/cli/probe.ts', probe('../shared/errors.js')), []);
  // cli/ parses arguments and calls the composition root (issue 43): no stage, no journal, no client, no i18n
  assert.deepEqual(await ruleIds('src/cli/probe.ts', probe('../journal/index.js')), ['no-restricted-imports']);
  assert.deepEqual(await ruleIds('src/cli/probe.ts', probe('../wms/targets.js')), ['no-restricted-imports']);
  assert.deepEqual(await ruleIds('src/cli/probe.ts', probe('../sandbox/index.js')), ['no-restricted-imports']);
  assert.deepEqual(await ruleIds('src/cli/probe.ts', probe('../i18n/index.js')), ['no-restricted-imports']);
  assert.deepEqual(await ruleIds('src/journal/probe.ts', probe('better-sqlite3')), []);
});

test('environment: only src/config/load.ts reads process.env (issue 43)', { timeout: 60_000 }, async () => {
  const read = `export const level = process.env['WMSBRIDGE_LOG_LEVEL'];\n`;
  const destructured = `const { env } = process;\nexport const level = env['WMSBRIDGE_LOG_LEVEL'];\n`;
  assert.deepEqual(await ruleIds('src/app/probe.ts', read), ['no-restricted-properties']);
  assert.deepEqual(await ruleIds('src/shared/probe.ts', read), ['no-restricted-properties']);
  assert.deepEqual(await ruleIds('src/cli/probe.ts', destructured), ['no-restricted-properties']);
  assert.deepEqual(await ruleIds('src/config/load.ts', read), []);
  // tests set up child processes' environments freely
  assert.deepEqual(await ruleIds('test/unit/probe.test.ts', read), []);
});

test('function length: over 100 lines (blank lines and comments not counted) is a lint error in src/ (issue 43)', { timeout: 60_000 }, async () => {
  const fn = (lines: number): string => `export function long(): number {\n  let n = 0;\n${'  n++;\n\n  // a comment\n'.repeat(lines - 4)}  return n;\n}\n`;
  assert.deepEqual(await ruleIds('src/map/probe.ts', fn(100)), []);
  assert.deepEqual(await ruleIds('src/map/probe.ts', fn(101)), ['max-lines-per-function']);
  // tests are not held to it
  assert.deepEqual(await ruleIds('test/unit/probe.test.ts', fn(101)), []);
});

test('check-cycles: an import loop (type-only included) fails naming its files; a tree without one passes', { timeout: 60_000 }, async () => {
  const tmp = await makeTempDir('wmsbridge-lint-cycles-');
  try {
    const dir = join(tmp.dir, 'src', 'a');
    await mkdir(dir, { recursive: true });
    await writeFile(join(dir, 'one.ts'), `import { two } from './two.js';\nexport const one = two + 1;\n`);
    await writeFile(join(dir, 'three.ts'), `export const three = 3;\n`);
    await writeFile(join(dir, 'two.ts'), `import { three } from './three.js';\nexport const two = three - 1;\n`);
    const script = join(PROJECT_ROOT, 'scripts', 'check-cycles.mjs');
    const clean = spawnSync(process.execPath, [script, join(tmp.dir, 'src')], { cwd: tmp.dir, encoding: 'utf8' });
    assert.equal(clean.status, 0, clean.stderr);
    assert.match(clean.stdout, /3 files, no import cycle/);

    await writeFile(join(dir, 'three.ts'), `import type { one } from './one.js';\nexport const three = 3;\nexport type One = typeof one;\n`);
    const loop = spawnSync(process.execPath, [script, join(tmp.dir, 'src')], { cwd: tmp.dir, encoding: 'utf8' });
    assert.equal(loop.status, 1, loop.stdout);
    assert.match(loop.stderr, /import cycle \(3 files\): src\/a\/one\.ts -> src\/a\/two\.ts -> src\/a\/three\.ts -> src\/a\/one\.ts/);
  } finally {
    await tmp.cleanup();
  }
});
