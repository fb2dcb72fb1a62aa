/**
 * Issue 39: a stock sync with a rejected row (a negative position the interface refuses). Holding it stays the
 * default, and `resolve --retry --all` does not release it; a person sends it without the rejected row with
 * `resolve --send-valid` (shown, then confirmed with --yes, journaled); a mapping may declare it the business rule
 * (`onRejected: sendValid`). Through the CLI as a child process against a real sandbox.
 */
import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { copyFile, cp, mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { makeTempDir } from '../helpers/tmp.js';
import { runCli, PROJECT_ROOT } from '../helpers/cli.js';
import { startSandbox, sandboxCall, type Sandbox } from '../helpers/sandbox.js';
import { dialectMatrix } from '../../src/sandbox/dialect.js';

const FIXTURES = join(PROJECT_ROOT, 'test/fixtures/erp-shapes');

// the default dialect and `alt` (every knob changed: paging, owners' codeERP, CNPJ format...)
for (const { name, dialect } of dialectMatrix().filter((d) => d.name === 'default' || d.name === 'alt'))
  describe(`a stock sync with a rejected row, sandbox dialect ${name}`, () => {
    let sb: Sandbox;
    let tmp: { dir: string; cleanup: () => Promise<void> };
    const flags = (): string[] => [
      '--inbox',
      join(tmp.dir, 'inbox'),
      '--outbox',
      join(tmp.dir, 'outbox'),
      '--state-dir',
      join(tmp.dir, 'state'),
      '--mappings',
      join(FIXTURES, 'stock-rules'),
    ];
    const env = (): NodeJS.ProcessEnv => ({ WMS_URL: sb.url, WMS_ACCESS_KEY_ID: sb.accessKeyID, WMS_SECRET_KEY: sb.secretKey, WMSBRIDGE_LOG_LEVEL: 'warn' });
    /** the completed sessions' products by product code */
    const sessions = async (): Promise<Array<Record<string, number>>> => {
      const s = (await sandboxCall(sb, 'GET', '/__sandbox/state?resource=SyncSession')).json as Record<
        string,
        { completed: boolean; products: Record<string, number> }
      >;
      const products = (await sandboxCall(sb, 'GET', '/__sandbox/state?resource=Product')).json as Array<Record<string, string>>;
      return Object.values(s)
        .filter((x) => x.completed)
        .map((x) => Object.fromEntries(Object.entries(x.products).map(([id, q]) => [products.find((p) => p['id']!.toLowerCase() === id)!['code']!, q])));
    };

    before(async () => {
      sb = await startSandbox({ dialect });
      tmp = await makeTempDir('wmsbridge-e2e-stock-rules-');
      for (const ch of ['estoque-retido', 'estoque-regra']) {
        await mkdir(join(tmp.dir, 'inbox', ch), { recursive: true });
        await copyFile(join(FIXTURES, 'inbox/estoque/OITW_20241105.csv'), join(tmp.dir, 'inbox', ch, 'OITW_20241105.csv'));
      }
      await cp(join(FIXTURES, 'stock-rules'), join(tmp.dir, 'mappings'), { recursive: true });
    });
    after(async () => {
      await sb?.close();
      await tmp?.cleanup();
    });

    const VALID = { 'ARROZ-5KG': 120, 'LEITE-UHT-1L': 36, 'DETERG-500': 18 };

    test('held by default; sent at once where the mapping declares the rule (onRejected: sendValid)', { timeout: 120_000 }, async () => {
      const res = await runCli(['run', ...flags()], { env: env(), timeoutMs: 100_000 });
      assert.equal(res.code, 1, res.stdout + res.stderr.slice(-2000));
      // one session: the rule's file, without its two rejected rows; the other file's sync is held whole
      assert.deepEqual(await sessions(), [VALID]);
    });

    test('resolve --retry --all does not release the held sync', { timeout: 120_000 }, async () => {
      const res = await runCli(['resolve', '--retry', '--all', ...flags()], { env: env(), timeoutMs: 100_000 });
      assert.equal(res.code, 1, res.stdout + res.stderr);
      assert.match(res.stdout, /sent now: 0/);
      assert.equal((await sessions()).length, 1);
    });

    test('resolve --send-valid shows the decision and sends nothing without --yes', { timeout: 120_000 }, async () => {
      const res = await runCli(['resolve', '--send-valid', '--all', ...flags()], { env: env(), timeoutMs: 100_000 });
      assert.equal(res.code, 1, res.stdout + res.stderr);
      assert.match(res.stdout, /stock sync OITW_20241105\.csv \(file #\d+\): 2 row\(s\) rejected \(line\(s\) 3, 5\), 3 valid row\(s\) held/);
      assert.match(res.stdout, /may zero it/);
      assert.match(res.stdout, /nothing sent: add --yes/);
      assert.equal((await sessions()).length, 1);
    });

    test('resolve --send-valid --yes sends the valid rows and journals the decision', { timeout: 120_000 }, async () => {
      const res = await runCli(['resolve', '--send-valid', '--all', '--yes', ...flags()], { env: env(), timeoutMs: 100_000 });
      assert.equal(res.code, 0, res.stdout + res.stderr);
      assert.match(res.stdout, /3 record\(s\) requeued; sent now: 3; still open: 0/);
      assert.deepEqual(await sessions(), [VALID, VALID]);
      const list = await runCli(['resolve', '--list', ...flags()], { env: env() });
      assert.match(list.stdout, /nothing to resolve/);
      // who decided, and when, is kept with the file in the journal
      const db = new Database(join(tmp.dir, 'state', 'journal.db'), { readonly: true });
      try {
        const rows = db.prepare("SELECT key, value FROM meta WHERE key LIKE 'send-valid:%' ORDER BY key").all() as Array<{ key: string; value: string }>;
        assert.deepEqual(rows.map((r) => (JSON.parse(r.value) as { by: string }).by.replace(/operator \S+/, 'operator <user>')).sort(), [
          'mapping estoque-regra (onRejected: sendValid)',
          'operator <user> (resolve --send-valid)',
        ]);
      } finally {
        db.close();
      }
    });
  });
