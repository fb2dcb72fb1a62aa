/**
 * `wmsbridge pull` as a child process: the user's view. Without a WMS the command starts its own
 * in-process sandbox; with --wms-url it reads the given one (a sandbox started here).
 */
import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import iconv from 'iconv-lite';
import { parse } from 'csv-parse/sync';
import { mkdir, symlink } from 'node:fs/promises';
import { PROJECT_ROOT, runCli, spawnCli } from '../helpers/cli.js';
import { makeTempDir } from '../helpers/tmp.js';
import { startSandbox, type Sandbox } from '../helpers/sandbox.js';
import { COLUMN_SETS } from '../../src/pull/columns.js';
import { stockSlice, stockTotal } from '../../src/sandbox/stock.js';

let tmp: { dir: string; cleanup: () => Promise<void> };
let sandbox: Sandbox;

before(async () => {
  tmp = await makeTempDir('wmsbridge-pull-cli-');
  sandbox = await startSandbox({ stockRecords: 50 });
});
after(async () => {
  await sandbox?.close();
  await tmp?.cleanup();
});

const TIMEOUT = { timeoutMs: 60_000 };
/** an env without a WMS, so the command uses its in-process sandbox */
function envNoWms(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env, WMSBRIDGE_LOG_LEVEL: 'warn' };
  delete env['WMS_URL'];
  delete env['WMS_ACCESS_KEY_ID'];
  delete env['WMS_SECRET_KEY'];
  return { ...env, ...extra };
}

describe('wmsbridge pull', () => {
  test('defaults with --sandbox: in-process sandbox, ./outbox/exports, ./state, prints the file and the count', async () => {
    const cwd = join(tmp.dir, 'defaults');
    await mkdir(cwd, { recursive: true });
    // when this test runs from .ts, the child loads tsx from its cwd: give the temp cwd the modules
    await symlink(join(PROJECT_ROOT, 'node_modules'), join(cwd, 'node_modules'), 'dir');
    const r = await runCli(['pull', 'warehouse', '--sandbox'], { ...TIMEOUT, cwd, env: envNoWms() });
    assert.equal(r.code, 0, r.stderr);
    const files = readdirSync(join(cwd, 'outbox', 'exports'));
    assert.deepEqual(readdirSync(cwd).sort(), ['node_modules', 'outbox', 'state']);
    assert.equal(files.length, 1);
    assert.match(files[0]!, /^warehouse-\d{8}-\d{6}\.csv$/);
    assert.equal(r.stdout, `${join(cwd, 'outbox', 'exports', files[0]!)}\t3 records\n`);
    assert.ok(existsSync(join(cwd, 'state', 'journal.db')));
  });

  test('--json, --format jsonl, --out', async () => {
    const out = join(tmp.dir, 'out-json');
    const r = await runCli(['pull', 'material-statuses', '--sandbox', '--format', 'jsonl', '--out', out, '--state', join(tmp.dir, 'state-json'), '--json'], {
      ...TIMEOUT,
      env: envNoWms(),
    });
    assert.equal(r.code, 0, r.stderr);
    const res = JSON.parse(r.stdout) as { file: string; records: number; what: string; wms: { sandbox: boolean } };
    assert.equal(res.what, 'material-statuses');
    assert.equal(res.wms.sandbox, true);
    assert.ok(res.file.startsWith(out));
    const lines = readFileSync(res.file, 'utf8').trim().split('\n');
    assert.equal(lines.length, res.records);
    assert.ok(res.records >= 5);
    assert.deepEqual(Object.keys(JSON.parse(lines[0]!) as object), [...COLUMN_SETS['material-statuses'].columns]);
  });

  test('against a given WMS with CSV options and stock-search filters; the secret comes from a named env var', async () => {
    const out = join(tmp.dir, 'out-wms');
    const wh = sandbox.state.collections.Warehouse[0]!.id;
    const r = await runCli(
      [
        'pull',
        'stock-search',
        '--wms-url',
        sandbox.url,
        '--access-key-id',
        sandbox.accessKeyID,
        '--secret-key-env',
        'MY_WMS_SECRET',
        '--warehouse-id',
        wh,
        '--encoding',
        'windows-1252',
        '--delimiter',
        'tab',
        '--decimal',
        ',',
        '--date-format',
        'dd/MM/yyyy',
        '--line-ending',
        'lf',
        '--page-size',
        '7',
        '--done-file',
        '--out',
        out,
        '--state',
        join(tmp.dir, 'state-wms'),
      ],
      { ...TIMEOUT, env: envNoWms({ MY_WMS_SECRET: sandbox.secretKey }) },
    );
    assert.equal(r.code, 0, r.stderr);
    assert.equal(r.stderr.includes(sandbox.secretKey), false, 'the secret is never printed');
    const files = readdirSync(out).sort();
    assert.equal(files.length, 2);
    assert.match(files[0]!, /^stock-search-\d{8}-\d{6}\.csv$/);
    assert.equal(files[1], `${files[0]}.done`);
    const text = iconv.decode(readFileSync(join(out, files[0]!)), 'win1252');
    const [header, ...rows] = parse(text, { delimiter: '\t' }) as string[][];
    assert.deepEqual(header, [...COLUMN_SETS.stock.columns]);
    const expected = stockSlice(sandbox.state, 0, stockTotal(sandbox.state)).filter((s) => s.warehouseId === wh);
    assert.equal(rows.length, expected.length);
    assert.match(r.stdout, new RegExp(`\\t${expected.length} records\\n$`));
    const col = (n: string) => header!.indexOf(n);
    assert.equal(rows[0]![col('productName')], expected[0]!.productName);
    assert.match(rows[0]![col('expirationDate')]!, /^\d{2}\/\d{2}\/\d{4}$/);
    assert.ok(rows.some((row) => row[col('productName')] === 'Feijão Carioca 1kg'));
  });

  test('inventory-finished: exported once, skipped next time, again with --force', async () => {
    const args = ['pull', 'inventory-finished', '--sandbox', '--out', join(tmp.dir, 'out-inv'), '--state', join(tmp.dir, 'state-inv')];
    const first = await runCli(args, { ...TIMEOUT, env: envNoWms() });
    assert.equal(first.code, 0, first.stderr);
    assert.match(first.stdout, /inventory-finished-\d{8}-\d{6}\.csv\t\d+ records, 2 inventories\n$/);
    const second = await runCli(args, { ...TIMEOUT, env: envNoWms() });
    assert.equal(second.code, 0, second.stderr);
    assert.equal(second.stdout, 'no new finished inventory to export (2 already exported; --force exports them again)\n');
    const forced = await runCli([...args, '--force'], { ...TIMEOUT, env: envNoWms() });
    assert.equal(forced.code, 0, forced.stderr);
    assert.match(forced.stdout, /\d+ records, 2 inventories\n$/);
    assert.equal(readdirSync(join(tmp.dir, 'out-inv')).length, 2);
  });

  test('reads the WMS of the config file (wms.url, accessKeyId, the secret variable): not the sandbox', async () => {
    const { writeFile } = await import('node:fs/promises');
    const cfg = join(tmp.dir, 'pull-config.json');
    await writeFile(cfg, JSON.stringify({ wms: { url: sandbox.url, accessKeyId: sandbox.accessKeyID, secretKeyEnv: 'PULL_CFG_SECRET' } }));
    const r = await runCli(
      ['pull', 'stock', '--config', cfg, '--json', '--out', join(tmp.dir, 'out-cfg'), '--state-dir', join(tmp.dir, 'state-cfg'), '--log-level', 'warn'],
      {
        ...TIMEOUT,
        env: envNoWms({ PULL_CFG_SECRET: sandbox.secretKey }),
      },
    );
    assert.equal(r.code, 0, r.stderr);
    const res = JSON.parse(r.stdout) as { records: number; wms: { url: string; sandbox: boolean } };
    assert.equal(res.wms.sandbox, false);
    assert.equal(res.wms.url, sandbox.url);
    assert.ok(existsSync(join(tmp.dir, 'state-cfg', 'journal.db')), '--state-dir is the state folder, as for every command');
    assert.equal(res.records, stockTotal(sandbox.state), 'the stock of the configured WMS (with its 50 synthetic records), not a seed sandbox');
  });

  test('usage errors exit 2 with a one-line reason', async () => {
    const cases: Array<[string[], RegExp]> = [
      [['pull'], /missing <what>/],
      [['pull', 'stocks'], /unknown kind "stocks"/],
      [['pull', 'stock', '--format', 'xml'], /--format must be one of csv, jsonl, json/],
      [['pull', 'stock', '--warehouse-id', 'x'], /apply to stock-search only/],
      [['pull', 'stock', '--bogus'], /Unknown option '--bogus'/],
      [['pull', 'stock', '--wms-url', 'http://127.0.0.1:1', '--access-key-id', 'k'], /secret key in the environment variable WMS_SECRET_KEY/],
      // no WMS configured and no --sandbox: the sandbox's made-up stock is never exported by surprise
      [
        ['pull', 'stock', '--state', join(tmp.dir, 'state-nowms'), '--out', join(tmp.dir, 'out-nowms')],
        /no WMS configured: set wms.url .* --sandbox or wms.url: sandbox/,
      ],
    ];
    const results = await Promise.all(cases.map(([args]) => runCli(args, { ...TIMEOUT, env: envNoWms() })));
    for (const [i, [args, re]] of cases.entries()) {
      const r = results[i]!;
      assert.equal(r.code, 2, `${args.join(' ')}: ${r.stderr}`);
      assert.match(r.stderr, re);
      assert.equal(r.stdout, '');
    }
  });

  test('a bad filter value is refused before anything is written', async () => {
    const out = join(tmp.dir, 'out-bad');
    const r = await runCli(['pull', 'stock-search', '--sandbox', '--warehouse-id', 'not-a-guid', '--out', out, '--state', join(tmp.dir, 'state-bad')], {
      ...TIMEOUT,
      env: envNoWms(),
    });
    assert.equal(r.code, 2);
    assert.match(r.stderr, /E_CONFIG: pull stock-search: invalid filter: warehouseId: must be a UUID/);
    assert.equal(existsSync(out) ? readdirSync(out).length : 0, 0);
  });

  test('Ctrl-C during an export removes the temp file: nothing appears', async () => {
    const out = join(tmp.dir, 'out-int');
    sandbox.setFaults({ latencyMs: 100 });
    try {
      const child = spawnCli(
        [
          'pull',
          'stock',
          '--page-size',
          '5',
          '--wms-url',
          sandbox.url,
          '--access-key-id',
          sandbox.accessKeyID,
          '--out',
          out,
          '--state',
          join(tmp.dir, 'state-int'),
        ],
        { env: envNoWms({ WMS_SECRET_KEY: sandbox.secretKey }) },
      );
      let stderr = '';
      child.stderr?.on('data', (d: Buffer) => (stderr += d.toString()));
      let gone = false;
      const exited = new Promise<number | null>((resolve) =>
        child.once('exit', (code) => {
          gone = true;
          resolve(code);
        }),
      );
      // wait (poll with a deadline) until the export is under way: its hidden temp file exists
      const deadline = Date.now() + 30_000;
      while (!gone && !(existsSync(out) && readdirSync(out).some((n) => n.startsWith('.'))) && Date.now() < deadline) {
        await new Promise((r) => setTimeout(r, 10)); // poll interval of a wait on the temp file
      }
      assert.ok(existsSync(out) && readdirSync(out).some((n) => n.startsWith('.')), `the export started: ${stderr}`);
      child.kill('SIGINT');
      const code = await exited;
      assert.equal(code, 2, stderr);
      assert.match(stderr, /interrupted|aborted/i);
      assert.deepEqual(readdirSync(out), [], 'no file and no temp file left');
    } finally {
      sandbox.setFaults({ latencyMs: 0 });
    }
  });

  test('--sandbox-state-file reads the state a sandbox left behind', async () => {
    const stateFile = join(tmp.dir, 'sandbox-state.json');
    const sb = await startSandbox({ stateFile });
    const { createWmsClient } = await import('../../src/wms/client.js');
    const c = createWmsClient({ baseUrl: sb.url, accessKeyID: sb.accessKeyID, secretKey: sb.secretKey });
    try {
      await c.createOwner({ companyID: sb.state.collections.Company[0]!.id, name: 'Dono Persistido', code: 'PERSIST-1' });
    } finally {
      await c.close();
      await sb.close();
    }
    const out = join(tmp.dir, 'out-state');
    const r = await runCli(['pull', 'owners', '--sandbox', '--sandbox-state-file', stateFile, '--out', out, '--state', join(tmp.dir, 'state-sf')], {
      ...TIMEOUT,
      env: envNoWms(),
    });
    assert.equal(r.code, 0, r.stderr);
    const files = readdirSync(out);
    assert.equal(files.length, 1);
    assert.match(readFileSync(join(out, files[0]!), 'utf8'), /;Dono Persistido;PERSIST-1;/);
  });

  test('--help prints the kinds and options', async () => {
    const r = await runCli(['pull', '--help'], { ...TIMEOUT, env: envNoWms() });
    assert.equal(r.code, 0);
    assert.match(r.stdout, /usage: wmsbridge pull <what>/);
    assert.match(r.stdout, /inventory-finished/);
    assert.match(r.stdout, /--secret-key-env VAR/);
  });
});
