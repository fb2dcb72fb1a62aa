// ESLint (flat config): typescript-eslint's recommended rules (syntax only, no type information, so `npm run
// lint` stays fast), the layers of docs/ARCHITECTURE.md as import rules, and a length limit on functions in src/.
// Import cycles are checked by scripts/check-cycles.mjs (`npm run lint` runs both). Formatting is prettier's
// (eslint-config-prettier turns off every rule that would fight it).
import { readdirSync } from 'node:fs';
import js from '@eslint/js';
import tseslint from 'typescript-eslint';
import prettier from 'eslint-config-prettier';
import globals from 'globals';

// ---------------------------------------------------------------------------------------------------------------
// Layers (docs/ARCHITECTURE.md, "Layout and direction of dependencies"):
//   cli -> app -> {intake, parse, map, push, pull, webhook, outbox, reconcile, journal, wms, sandbox, infer,
//   config} -> {i18n, wms types, shared}; cli reads config and shared too, nothing else (issue 43)
// For each folder of src/, the other folders it may import. Every folder not listed is refused. A new folder of
// src/ must be added here (the config refuses to load otherwise); a new edge between two folders is a decision:
// make it here, keep the graph free of cycles (scripts/check-cycles.mjs) and update ARCHITECTURE.md.
const LOWER = ['shared', 'i18n', 'wms'];
const LAYERS = {
  shared: [],
  i18n: ['shared'],
  wms: ['shared'],
  parse: [...LOWER],
  map: [...LOWER, 'parse'],
  intake: [...LOWER],
  sandbox: [...LOWER],
  journal: [...LOWER], // the record model (RawRow, RecordOp, SourceLocation) is on the floor: shared/record-model.ts
  outbox: [...LOWER, 'journal', 'parse'], // parse: the rejects writer writes rows in their source format
  config: [...LOWER], // the CSV format's schema is on the floor: shared/csv-format.ts
  push: [...LOWER, 'journal', 'map'],
  pull: [...LOWER, 'journal', 'outbox'],
  infer: [...LOWER, 'map', 'parse'],
  studio: [...LOWER, 'map', 'parse', 'infer'], // the studio's server and API: reads with parse, maps with map, drafts with infer
  webhook: [...LOWER, 'config', 'journal', 'outbox'],
  reconcile: [...LOWER, 'intake', 'journal', 'map', 'outbox', 'pull', 'push'],
  app: [...LOWER, 'intake', 'parse', 'map', 'push', 'pull', 'webhook', 'outbox', 'reconcile', 'journal', 'sandbox', 'infer', 'config', 'studio'],
  // cli/ parses arguments, calls the composition root and prints: what a person reads in another language is
  // rendered by app/ (so not i18n), and every stage is built there (issue 43)
  cli: ['shared', 'app', 'config'],
};
// An import against the direction, allowed for one module of a folder: none today (issue 17 moved RawRow into parse).
/** @type {Record<string, {folder: string, module: string}>} */
const EXCEPTIONS = {};

// Packages that belong to one layer: the SQL drivers to the journal; undici to the client, the sandbox's webhook
// sender and the composition root (doctor probes raw HTTP). push/ depends on the WmsClient and Journal interfaces.
const PACKAGES = {
  'better-sqlite3': ['journal'],
  pg: ['journal'],
  undici: ['wms', 'sandbox', 'app'],
};
// The undici client itself is built by the composition root only (everything else takes a WmsClient).
const WMS_CLIENT_BUILDERS = ['app'];
// The one module that reads the process environment (docs/ARCHITECTURE.md): the others take what they need from it.
const ENV_READER = 'src/config/load.ts';

const folders = readdirSync(new URL('./src', import.meta.url), { withFileTypes: true })
  .filter((d) => d.isDirectory())
  .map((d) => d.name);
const unlisted = folders.filter((f) => !(f in LAYERS));
if (unlisted.length) {
  throw new Error(`eslint.config.js: src/${unlisted.join(', src/')} not in LAYERS: say what it may import`);
}

/** `../x/` or `../../x/` (a file in a sub-folder), as a regular expression on the import string. */
const up = (what) => `^(\\.\\./)+(${what})(/|$)`;

function layerRules(folder) {
  const exception = EXCEPTIONS[folder];
  const refused = folders.filter((f) => f !== folder && !LAYERS[folder].includes(f) && f !== exception?.folder);
  const patterns = [
    {
      regex: up('test|bench|scripts'),
      message: 'src/ must not import test, bench or script code.',
    },
  ];
  if (refused.length) {
    patterns.push({
      regex: up(refused.join('|')),
      message: `src/${folder} may import only ${LAYERS[folder].join(', ') || 'nothing else in src'} (docs/ARCHITECTURE.md; the layers are in eslint.config.js).`,
    });
  }
  if (exception) {
    patterns.push({
      regex: `^(\\.\\./)+${exception.folder}/(?!${exception.module.replaceAll('.', '\\.')}$)`,
      message: `src/${folder} may import only ${exception.folder}/${exception.module} from src/${exception.folder} (issue 17 exception).`,
    });
  }
  if (!WMS_CLIENT_BUILDERS.includes(folder)) {
    patterns.push({
      regex: '^(\\.\\./)+wms/client\\.js$',
      message: 'Only the composition root (app) builds the undici client; take a WmsClient (wms/client-types.ts).',
    });
  }
  const paths = Object.entries(PACKAGES)
    .filter(([, owners]) => !owners.includes(folder))
    .map(([name, owners]) => ({ name, message: `${name} is used in src/${owners.join(', src/')} only.` }));
  return { 'no-restricted-imports': ['error', { paths, patterns }] };
}

// ---------------------------------------------------------------------------------------------------------------
// Function length: at most 100 lines (blank lines and comments not counted) in src/ (issue 43: a function a reader
// can hold; `node scripts/function-lengths.mjs 100` lists them counting every line). A file allowed longer functions
// goes in LONG_FUNCTIONS with why: none today.
/** @type {Array<[string, string]>} */
const LONG_FUNCTIONS = [];

export default tseslint.config(
  { ignores: ['dist/', 'node_modules/', 'outbox/', 'inbox/', 'state/', 'coverage/', '**/.wmsbridge/'] },
  js.configs.recommended,
  tseslint.configs.recommended,
  {
    languageOptions: { globals: { ...globals.node } },
    linterOptions: { reportUnusedDisableDirectives: 'error' },
    rules: {
      // `_name` says "unused on purpose" (a parameter an interface requires, a field left out of `...rest`)
      '@typescript-eslint/no-unused-vars': [
        'error',
        { argsIgnorePattern: '^_', varsIgnorePattern: '^_', caughtErrorsIgnorePattern: '^_', ignoreRestSiblings: true },
      ],
    },
  },
  // the studio's page (bundled by scripts/build-studio.mjs) runs in the browser
  { files: ['web/**/*.js'], languageOptions: { globals: { ...globals.browser } } },
  ...folders.map((folder) => ({ files: [`src/${folder}/**/*.ts`], rules: layerRules(folder) })),
  {
    files: ['src/**/*.ts'],
    rules: { 'max-lines-per-function': ['error', { max: 100, skipBlankLines: true, skipComments: true }] },
  },
  {
    files: ['src/**/*.ts'],
    ignores: [ENV_READER],
    rules: {
      'no-restricted-properties': [
        'error',
        { object: 'process', property: 'env', message: `only ${ENV_READER} reads the environment: take processEnv(), envValue() or envLogger() from it.` },
      ],
    },
  },
  ...(LONG_FUNCTIONS.length ? [{ files: LONG_FUNCTIONS.map(([file]) => file), rules: { 'max-lines-per-function': 'off' } }] : []),
  prettier,
);
