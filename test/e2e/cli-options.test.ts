/**
 * The one option table (src/cli/options.ts) through the real CLI: a misspelt option or command is
 * answered with the nearest one and exit 2, the deprecated `--state` still works, --config is read by
 * pull and preview, preview --sandbox resolves lookups, --help is written from the table, and a bad
 * schedule in the config is a configuration error naming the setting.
 */
import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { PROJECT_ROOT, runCli } from '../helpers/cli.js';
import { makeTempDir } from '../helpers/tmp.js';
import { editDistance, nearest } from '../../src/cli/options.js';

const TIMEOUT = { timeoutMs: 60_000 };
let tmp: { dir: string; cleanup: () => Promise<void> };

/** an env without a WMS and without a config file in reach */
function envNoWms(): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env, WMSBRIDGE_LOG_LEVEL: 'warn' };
  for (const k of ['WMS_URL', 'WMS_ACCESS_KEY_ID', 'WMS_SECRET_KEY', 'WMSBRIDGE_CONFIG']) delete env[k];
  return env;
}

before(async () => {
  tmp = await makeTempDir('wmsbridge-cli-options-');
});
after(async () => {
  await tmp?.cleanup();
});

describe('did you mean', () => {
  test('the distance and the nearest candidate', () => {
    assert.equal(editDistance('state-dir', 'stat-dir'), 1);
    assert.equal(editDistance('sandbox', 'sadnbox'), 1, 'a swap of neighbours costs 1');
    assert.equal(editDistance('config', 'config'), 0);
    assert.equal(editDistance('log-level', ''), 9);
    assert.equal(editDistance('ca', 'abc'), 3, 'optimal string alignment: a swapped pair is not edited again');
    assert.equal(nearest('stat-dir', ['state-dir', 'outbox', 'config']), 'state-dir');
    assert.equal(nearest('dry', ['dry-run', 'force']), 'dry-run', 'a unique prefix');
    assert.equal(nearest('verbose', ['state-dir', 'outbox', 'config']), null, 'nothing near: no guess');
    assert.equal(nearest('ab', ['ac', 'ad']), null, 'a tie: no guess');
  });

  test('a misspelt option exits 2 naming the nearest option of that command', async () => {
    const cases: Array<[string[], RegExp]> = [
      [['run', '--dryrun'], /Unknown option '--dryrun'; did you mean --dry-run\?/],
      [['status', '--stat-dir', 'x'], /Unknown option '--stat-dir'; did you mean --state-dir\?/],
      [['pull', 'stock', '--sandobx'], /Unknown option '--sandobx'; did you mean --sandbox\?/],
      [['webhooks', '--prot', '1'], /Unknown option '--prot'; did you mean --port\?/],
      [['preview', '--inbox', 'x', 'a.yaml', 'b.csv'], /wmsbridge preview does not take --inbox/],
      [['run', '--log-level', 'debg'], /--log-level must be one of fatal, error, warn, info, debug, trace, silent, got "debg"; did you mean debug\?/],
    ];
    const results = await Promise.all(cases.map(([args]) => runCli(args, { ...TIMEOUT, cwd: tmp.dir, env: envNoWms() })));
    for (const [i, [args, re]] of cases.entries()) {
      const r = results[i]!;
      assert.equal(r.code, 2, `${args.join(' ')}: ${r.stderr}`);
      assert.match(r.stderr, re, args.join(' '));
      assert.equal(r.stdout, '', `${args.join(' ')}: nothing on stdout`);
    }
  });

  test('a misspelt command exits 2 naming the nearest command', async () => {
    const r = await runCli(['reconcle', 'stock', 'x.txt'], TIMEOUT);
    assert.equal(r.code, 2);
    assert.match(r.stderr, /unknown command "reconcle"; did you mean "reconcile"\?/);
    const far = await runCli(['frobnicate'], TIMEOUT);
    assert.equal(far.code, 2);
    assert.match(far.stderr, /unknown command "frobnicate"\n/, 'no guess when nothing is near');
  });
});

describe('one table', () => {
  test('--help is written from the table: the command options, then the common ones it takes', async () => {
    const run = await runCli(['run', '--help'], TIMEOUT);
    assert.equal(run.code, 0);
    for (const flag of [
      '--dry-run',
      '--force',
      '--pulls',
      '--max-wait-ms N',
      '-c, --config FILE',
      '--state-dir DIR',
      '--wms-changed',
      '--log-level LEVEL',
      '-h, --help',
    ]) {
      assert.ok(run.stdout.includes(flag), `run --help lists ${flag}`);
    }
    assert.match(run.stdout, /--state: the same, deprecated spelling/);
    const preview = await runCli(['preview', '--help'], TIMEOUT);
    assert.equal(preview.code, 0);
    assert.match(preview.stdout, /-c, --config FILE\s+resolve read-only lookups against the config file's WMS/);
    assert.match(preview.stdout, /--sandbox\s+resolve read-only lookups against an embedded sandbox WMS/);
    assert.doesNotMatch(preview.stdout, /--inbox/, 'only the options preview takes');
  });

  test('pull --state (the old spelling) still works as --state-dir, and says it is deprecated', async () => {
    const state = join(tmp.dir, 'state-alias');
    const out = join(tmp.dir, 'out-alias');
    const r = await runCli(['pull', 'material-statuses', '--sandbox', '--out', out, '--state', state, '--json'], { ...TIMEOUT, cwd: tmp.dir, env: envNoWms() });
    assert.equal(r.code, 0, r.stderr);
    assert.ok(existsSync(join(state, 'journal.db')), 'the journal is in the --state folder');
    assert.match(r.stderr, /--state is a deprecated spelling of --state-dir/);
    const res = JSON.parse(r.stdout) as { file: string; records: number };
    assert.ok(res.records > 0 && res.file.startsWith(out), r.stdout);
  });

  test('pull --config: the WMS of that file (wms.url: sandbox); without it, no WMS and exit 2', async () => {
    const dir = join(tmp.dir, 'pull-config');
    await mkdir(dir, { recursive: true });
    const cfg = join(dir, 'elsewhere.json');
    await writeFile(cfg, JSON.stringify({ wms: { url: 'sandbox' } }));
    const args = ['pull', 'warehouse', '--out', join(dir, 'out'), '--state-dir', join(dir, 'state'), '--json'];
    const withConfig = await runCli([...args, '--config', cfg], { ...TIMEOUT, cwd: dir, env: envNoWms() });
    assert.equal(withConfig.code, 0, withConfig.stderr);
    assert.equal((JSON.parse(withConfig.stdout) as { wms: { sandbox: boolean } }).wms.sandbox, true);
    const short = await runCli([...args, '-c', cfg], { ...TIMEOUT, cwd: dir, env: envNoWms() });
    assert.equal(short.code, 0, short.stderr);
    const without = await runCli(args, { ...TIMEOUT, cwd: dir, env: envNoWms() });
    assert.equal(without.code, 2);
    assert.match(without.stderr, /no WMS configured/);
  });

  test('preview --config reads that file (an invalid one is exit 2 naming it); preview --sandbox resolves lookups', async () => {
    const dir = join(tmp.dir, 'preview');
    await mkdir(dir, { recursive: true });
    const data = join(dir, 'BLOQUEIOS_x.csv');
    await writeFile(data, 'cd;produto;lote;situacao;motivo\nCD-SP01;000210;L1;Quarentena;x\n');
    const mapping = join(PROJECT_ROOT, 'mappings', 'bloqueios.yaml');
    const bad = join(dir, 'broken.json');
    await writeFile(bad, JSON.stringify({ wms: { timeoutMs: 0 } }));
    const r = await runCli(['preview', mapping, data, '--json', '--config', bad], { ...TIMEOUT, cwd: dir, env: envNoWms() });
    assert.equal(r.code, 2, r.stderr);
    assert.match(r.stderr, /broken\.json: wms\.timeoutMs/);

    const plain = await runCli(['preview', mapping, data, '--json'], { ...TIMEOUT, cwd: dir, env: envNoWms() });
    assert.equal(plain.code, 0, plain.stderr);
    assert.match(plain.stdout, /<lookup Warehouse/, 'no WMS: lookups print as placeholders');
    const sb = await runCli(['preview', mapping, data, '--json', '--sandbox'], { ...TIMEOUT, cwd: dir, env: envNoWms() });
    assert.equal(sb.code, 0, sb.stderr);
    const rec = JSON.parse(sb.stdout.trim().split('\n')[0]!) as { payload: Record<string, unknown> };
    assert.match(String(rec.payload['warehouseId']), /^[0-9a-f]{8}-[0-9a-f]{4}-/, 'resolved against the embedded sandbox');
  });
});

test('an invalid cron expression in the config is a configuration error naming the setting (exit 2)', async () => {
  const dir = join(tmp.dir, 'cron');
  await mkdir(join(dir, 'inbox', 'estoque'), { recursive: true });
  await mkdir(join(dir, 'mappings'), { recursive: true });
  const cfg = join(dir, 'wmsbridge.config.json');
  await writeFile(
    cfg,
    JSON.stringify({
      pulls: [
        { name: 'noite', what: 'stock', schedule: '30 1 * * *' },
        { name: 'madrugada', what: 'stock', schedule: '61 1 * * *' },
      ],
    }),
  );
  for (const command of ['check', 'run']) {
    const r = await runCli([command, '--config', cfg, '--sandbox'], { ...TIMEOUT, cwd: dir, env: envNoWms() });
    assert.equal(r.code, 2, `${command}: ${r.stderr}`);
    assert.match(r.stderr, /wmsbridge\.config\.json: pulls\[1\]\.schedule: schedule "61 1 \* \* \*": invalid cron expression/, command);
  }
  await writeFile(cfg, JSON.stringify({ pulls: [{ name: 'noite', what: 'stock', schedule: '30 1 * * *' }] }));
  const ok = await runCli(['check', '--config', cfg], { ...TIMEOUT, cwd: dir, env: envNoWms() });
  assert.doesNotMatch(ok.stderr, /schedule/, `a valid cron schedule is accepted: ${ok.stderr}`);
});
