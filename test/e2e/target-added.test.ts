/**
 * Adding a WMS target is one file in src/wms/targets, its schema and a line in the registry list (issue 43,
 * docs/ARCHITECTURE.md "Adding a target"). This test proves it on a copy of src/: it adds a "Widget" master-data
 * target (one reference, to a Category) with exactly those three edits, type-checks and compiles the copy (nothing
 * else needed editing: the build passes), and runs the copy's CLI against the copy's sandbox: a mapping of a widgets
 * file, the categories it refers to, the push, the sandbox storing each widget with its category's id (the foreign
 * key checked from the spec's refs), and the read-back: the result file and the cross-reference (a second drop of
 * the same rows is unchanged, read from the journal), and a widget naming an unknown category rejected.
 */
import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { cp, mkdir, readFile, symlink, writeFile, copyFile } from 'node:fs/promises';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { makeTempDir, walkFiles } from '../helpers/tmp.js';
import { PROJECT_ROOT } from '../helpers/cli.js';
import { silentLogger } from '../../src/shared/logger.js';
import type { Sandbox } from '../../src/sandbox/index.js';

/** The whole of the new target: its spec file. */
const WIDGET_SPEC = `import * as S from '../schemas.js';
import { defineTarget } from './spec.js';

export const widget = defineTarget({
  name: 'Widget',
  label: 'widget',
  tier: 1,
  schema: S.WidgetCreate,
  key: { parts: [['codeERP']], label: 'codeERP' },
  items: null,
  ops: ['create'],
  defaultOp: 'create',
  xref: 'Widget',
  lookupBy: ['codeERP'],
  refs: { categoryID: 'Category' },
  document: false,
  inDoubtPolicy: 'resend',
  duplicates: 'skip',
  endpoints: {
    createWidget: { method: 'POST', path: '/open/v1/widget', response: 'single', request: S.WidgetCreate, record: S.WidgetRecord, answer: 'record' },
  },
  send: { kind: 'create', create: 'createWidget' },
  readBack: null,
  sequence: null,
  sandbox: 'Widget',
});
`;

/** Its schema, appended to src/wms/schemas.ts. */
const WIDGET_SCHEMA = `
/** Widget (a target added by the test of issue 43). */
export const WidgetCreate = z.strictObject({ codeERP: ReqStr, name: ReqStr, categoryID: Guid });
export const WidgetRecord = readable({ id: Guid, codeERP: Str, name: Str, categoryID: Guid });
`;

const WIDGET_MAPPING = `name: widgets
match: { channel: cadastros, files: WIDGETS_*.csv }
source: { format: delimited, delimiter: ';' }
target: Widget
fields:
  codeERP: { col: codigo }
  name: { col: nome }
  categoryID: { ref: Category, from: { col: categoria } }
`;

let tmp: { dir: string; cleanup: () => Promise<void> };
let sb: Sandbox | undefined;
const work = (...p: string[]): string => join(tmp.dir, 'work', ...p);

function exec(args: string[], env: Record<string, string> = {}, timeoutMs = 240_000): Promise<{ code: number | null; out: string }> {
  const child = spawn(process.execPath, args, { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, WMSBRIDGE_LOG_PRETTY: '0', ...env } });
  let out = '';
  child.stdout.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr.on('data', (d: Buffer) => (out += d.toString()));
  const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
  return new Promise((resolve, reject) => {
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, out });
    });
  });
}

async function edit(file: string, change: (s: string) => string): Promise<void> {
  const before = await readFile(file, 'utf8');
  const after = change(before);
  assert.notEqual(after, before, `${file} changed`);
  await writeFile(file, after);
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- sandbox state rows, asserted field by field
async function state(resource: string): Promise<Array<Record<string, any>>> {
  const r = await fetch(`${sb!.url}/__sandbox/state?resource=${resource}`, { headers: { 'user-agent': 'wmsbridge-test' } });
  assert.equal(r.status, 200, `state of ${resource}`);
  const j = (await r.json()) as Record<string, unknown>;
  return (Array.isArray(j) ? j : (j[resource] ?? j['data'] ?? j['records'])) as Array<Record<string, unknown>>;
}

function runCopy(): Promise<{ code: number | null; out: string }> {
  const flags = ['--inbox', work('inbox'), '--outbox', work('outbox'), '--state-dir', work('state'), '--mappings', work('mappings')];
  return exec([join(tmp.dir, 'dist', 'src', 'cli', 'main.js'), 'run', ...flags], {
    WMS_URL: sb!.url,
    WMS_ACCESS_KEY_ID: sb!.accessKeyID,
    WMS_SECRET_KEY: sb!.secretKey,
    WMSBRIDGE_LOG_LEVEL: 'warn',
  });
}

async function drop(name: string, text: string): Promise<void> {
  await mkdir(work('inbox', 'cadastros'), { recursive: true });
  await writeFile(work('inbox', 'cadastros', name), text);
}

describe('a new target added in its registry alone (a test build with a Widget target)', () => {
  before(async () => {
    tmp = await makeTempDir('wmsbridge-e2e-target-added-');
    await cp(join(PROJECT_ROOT, 'src'), join(tmp.dir, 'src'), { recursive: true });
    await copyFile(join(PROJECT_ROOT, 'package.json'), join(tmp.dir, 'package.json'));
    await symlink(join(PROJECT_ROOT, 'node_modules'), join(tmp.dir, 'node_modules'), 'dir');
    const tsconfig = JSON.parse(await readFile(join(PROJECT_ROOT, 'tsconfig.json'), 'utf8')) as { include: string[]; compilerOptions: Record<string, unknown> };
    tsconfig.include = ['src/**/*.ts'];
    tsconfig.compilerOptions['sourceMap'] = false;
    await writeFile(join(tmp.dir, 'tsconfig.json'), JSON.stringify(tsconfig));
    // adding the target: its spec file, its schema, a line in the registry list; nothing else
    const targets = join(tmp.dir, 'src', 'wms', 'targets');
    await writeFile(join(targets, 'widget.ts'), WIDGET_SPEC);
    await edit(join(tmp.dir, 'src', 'wms', 'schemas.ts'), (s) => s + WIDGET_SCHEMA);
    await edit(join(targets, 'index.ts'), (s) =>
      s
        .replace("import { unitMeasurement } from './unit-measurement.js';", "$&\nimport { widget } from './widget.js';")
        .replace('  pickingListAttachment,\n]', '  pickingListAttachment,\n  widget,\n]'),
    );
  });
  after(async () => {
    await sb?.close();
    await tmp?.cleanup();
  });

  test('the copy with the new target type-checks and builds', { timeout: 300_000 }, async () => {
    const tsc = await exec([join(PROJECT_ROOT, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', join(tmp.dir, 'tsconfig.json')], {}, 290_000);
    assert.equal(tsc.code, 0, `tsc of the copy failed:\n${tsc.out.slice(-4000)}`);
  });

  test('mapping -> push -> the sandbox stores it -> read back; an unknown reference is rejected', { timeout: 300_000 }, async () => {
    const built = (p: string): string => pathToFileURL(join(tmp.dir, 'dist', 'src', p)).href;
    const { createSandbox } = (await import(built('sandbox/index.js'))) as typeof import('../../src/sandbox/index.js');
    sb = await createSandbox({ port: 0, host: '127.0.0.1', logger: silentLogger() });
    await mkdir(work('mappings'), { recursive: true });
    await copyFile(join(PROJECT_ROOT, 'mappings', 'categorias.yaml'), work('mappings', 'categorias.yaml'));
    await writeFile(work('mappings', 'widgets.yaml'), WIDGET_MAPPING);
    await drop('CATEGORIAS_20261128.csv', 'codigo;descricao;situacao\nMERC;MERCEARIA;A\nLATIC;LATICINIOS;A\n');
    await drop('WIDGETS_20261128.csv', 'codigo;nome;categoria\nW1;Widget um;MERC\nW2;Widget dois;LATIC\nW3;Widget sem categoria;NADA\n');

    const first = await runCopy();
    assert.equal(first.code, 1, `exit 1 expected (one widget rejected: data needs attention)\n${first.out.slice(-3000)}`);
    // the sandbox stored the two widgets, each with its category's id (its foreign key checked from the spec's refs)
    const categories = await state('Category');
    const widgets = await state('Widget');
    const idOf = (code: string): string | undefined => categories.find((c) => c['codeERP'] === code)?.['id'] as string | undefined;
    assert.deepEqual(widgets.map((w) => [w['codeERP'], w['name'], w['categoryID']]).sort(), [
      ['W1', 'Widget um', idOf('MERC')],
      ['W2', 'Widget dois', idOf('LATIC')],
    ]);
    // read back: the result file names each widget's WMS id, and the unknown category's row is rejected
    const results = (await walkFiles(work('outbox'))).filter((f) => /WIDGETS_20261128.*\.csv$/.test(f) && !/rejeit|reject/i.test(f));
    assert.ok(results.length > 0, 'a result file for the widgets');
    const text = (await Promise.all(results.map((f) => readFile(f, 'utf8')))).join('\n');
    for (const w of widgets) assert.ok(text.includes(String(w['id'])), `the result file names widget ${String(w['codeERP'])}'s WMS id`);
    assert.match(text, /W3/, 'the rejected widget is listed');

    // the same widgets dropped again in a new file: the cross-reference knows them, nothing new is created
    await drop('WIDGETS_20261129.csv', 'codigo;nome;categoria\nW1;Widget um;MERC\nW2;Widget dois;LATIC\n');
    const second = await runCopy();
    assert.equal(second.code, 0, `exit 0 expected\n${second.out.slice(-3000)}`);
    assert.equal((await state('Widget')).length, 2, 'no widget created twice');
  });
});
