import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFile, writeFile, mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { loadConfig, resolveWmsCredentials } from '../../src/config/load.js';
import { configJsonSchema, configReferenceMarkdown } from '../../src/config/reference.js';
import { makeTempDir } from '../helpers/tmp.js';
import { PROJECT_ROOT } from '../helpers/cli.js';

test('no file: defaults run against the sandbox, channels discovered from the inbox', async () => {
  const t = await makeTempDir();
  try {
    await mkdir(join(t.dir, 'inbox', 'pedidos'), { recursive: true });
    await mkdir(join(t.dir, 'inbox', '.hidden'), { recursive: true });
    const c = await loadConfig({ cwd: t.dir, env: {} });
    assert.equal(c.file, null);
    assert.equal(c.wms.url, '');
    assert.equal(resolveWmsCredentials(c, {}), null, 'no WMS configured (commands other than demo then stop, or use --sandbox)');
    assert.deepEqual(
      c.channels.map((ch) => ch.name),
      ['pedidos'],
    );
    assert.equal(c.channels[0]!.readiness.mode, 'stable');
    assert.equal(c.stateDir, join(t.dir, 'state'));
  } finally {
    await t.cleanup();
  }
});

test('errors name the file, the key and the problem', async () => {
  const t = await makeTempDir();
  try {
    const f = join(t.dir, 'wmsbridge.config.yaml');
    await writeFile(f, 'channels:\n  - name: a\n    readiness: { mode: sometimes }\nsending: { concurrency: 0 }\nbogus: 1\n');
    await assert.rejects(loadConfig({ cwd: t.dir, env: {} }), (err: Error) => {
      assert.match(err.message, /wmsbridge\.config\.yaml: channels\[0\]\.readiness\.mode/);
      assert.match(err.message, /sending\.concurrency/);
      assert.match(err.message, /bogus/);
      return true;
    });
    await writeFile(f, 'inboxDir: [unclosed\n');
    await assert.rejects(loadConfig({ cwd: t.dir, env: {} }), /wmsbridge\.config\.yaml:\d+:\d+: invalid YAML/);
  } finally {
    await t.cleanup();
  }
});

test('a value that could not work at run time is refused by the schema, naming the key', async () => {
  const t = await makeTempDir();
  try {
    const f = join(t.dir, 'wmsbridge.config.json');
    const cases: Array<[unknown, RegExp]> = [
      [{ channels: [{ name: 'a', readiness: { mode: 'stable', intervalMs: 0 } }] }, /channels\[0\]\.readiness\.intervalMs/],
      [{ channels: [{ name: 'a', readiness: { mode: 'marker', intervalMs: 0 } }] }, /channels\[0\]\.readiness\.intervalMs/],
      [{ channels: [{ name: 'a', readiness: { mode: 'rename', intervalMs: 0 } }] }, /channels\[0\]\.readiness\.intervalMs/],
      [{ wms: { timeoutMs: 0 } }, /wms\.timeoutMs/],
      [{ wms: { circuitBreaker: { failures: 0 } } }, /wms\.circuitBreaker\.failures/],
      [{ watch: { pollIntervalMs: 0 } }, /watch\.pollIntervalMs/],
      [{ watch: { rescanIntervalMs: 0 } }, /watch\.rescanIntervalMs/],
    ];
    for (const [config, re] of cases) {
      await writeFile(f, JSON.stringify(config));
      await assert.rejects(loadConfig({ cwd: t.dir, env: {} }), re, JSON.stringify(config));
    }
  } finally {
    await t.cleanup();
  }
});

test('precedence: file < environment < flags; secrets only from the environment or a file', async () => {
  const t = await makeTempDir();
  try {
    await writeFile(join(t.dir, 'wmsbridge.config.json'), JSON.stringify({ stateDir: 'st-file', wms: { url: 'https://wms.example/', accessKeyId: 'K' } }));
    const c = await loadConfig({ cwd: t.dir, env: { WMSBRIDGE_STATE_DIR: 'st-env', WMS_SECRET_KEY: 's3cret' }, overrides: { outboxDir: 'out-flag' } });
    assert.equal(c.stateDir, join(t.dir, 'st-env'));
    assert.equal(c.outboxDir, join(t.dir, 'out-flag'));
    assert.deepEqual(resolveWmsCredentials(c, { WMS_SECRET_KEY: 's3cret' }), { url: 'https://wms.example', accessKeyID: 'K', secretKey: 's3cret' });
    assert.throws(() => resolveWmsCredentials(c, {}), /WMS_SECRET_KEY/);
    await writeFile(join(t.dir, 'wmsbridge.config.json'), JSON.stringify({ wms: { url: 'https://u:p@wms.example/', accessKeyId: 'K' } }));
    const c2 = await loadConfig({ cwd: t.dir, env: {} });
    assert.throws(() => resolveWmsCredentials(c2, { WMS_SECRET_KEY: 'x' }), /credentials in the URL are refused/);
  } finally {
    await t.cleanup();
  }
});

test('docs/CONFIG.md and schemas/config.schema.json are generated from the model and up to date', async () => {
  const md = await readFile(join(PROJECT_ROOT, 'docs', 'CONFIG.md'), 'utf8');
  assert.equal(md, configReferenceMarkdown(), 'run `npm run build && node scripts/gen-config-doc.mjs`');
  const schema = JSON.parse(await readFile(join(PROJECT_ROOT, 'schemas', 'config.schema.json'), 'utf8')) as unknown;
  assert.deepEqual(schema, JSON.parse(JSON.stringify(configJsonSchema())));
  assert.match(md, /\| `wms\.url` \| string \| `""` \|/);
});

test('schedules: cron expressions and the friendly forms load; a bad one is a config error naming the setting', async () => {
  const t = await makeTempDir();
  try {
    const f = join(t.dir, 'wmsbridge.config.json');
    await writeFile(
      f,
      JSON.stringify({
        pulls: [
          { name: 'a', what: 'stock', schedule: '30 1 * * *' },
          { name: 'b', what: 'company', schedule: 'daily 02:00' },
        ],
        outbox: { reconcileSchedule: { schedule: '0 6 * * 1-5', dir: 'x' } },
      }),
    );
    const c = await loadConfig({ cwd: t.dir, env: {} });
    assert.deepEqual(
      c.pulls.map((p) => p.schedule),
      ['30 1 * * *', 'daily 02:00'],
    );
    const cases: Array<[unknown, RegExp]> = [
      [
        {
          pulls: [
            { name: 'a', what: 'stock', schedule: 'daily 02:00' },
            { name: 'b', what: 'stock', schedule: '61 1 * * *' },
          ],
        },
        /wmsbridge\.config\.json: pulls\[1\]\.schedule: schedule "61 1 \* \* \*": invalid cron expression/,
      ],
      [
        { outbox: { reconcileSchedule: { schedule: '0 30 1 * * *', dir: 'x' } } },
        /wmsbridge\.config\.json: outbox\.reconcileSchedule\.schedule: schedule "0 30 1 \* \* \*"/,
      ],
    ];
    for (const [config, re] of cases) {
      await writeFile(f, JSON.stringify(config));
      await assert.rejects(
        loadConfig({ cwd: t.dir, env: {} }),
        (err: Error) => (assert.match(err.message, re), (err as { code?: string }).code === 'E_CONFIG'),
        JSON.stringify(config),
      );
    }
  } finally {
    await t.cleanup();
  }
});
