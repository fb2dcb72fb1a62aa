/**
 * `wmsbridge webhooks` as the user runs it: flags, the config file, the secret from the environment,
 * the ready line on stderr, and a clean stop on SIGTERM that flushes the outbox.
 */
import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { once } from 'node:events';
import { readdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { ChildProcess } from 'node:child_process';
import Database from 'better-sqlite3';
import { Pool, request } from 'undici';
import { makeTempDir } from '../helpers/tmp.js';
import { runCli, spawnCli } from '../helpers/cli.js';
import { loadConfig } from '../../src/config/load.js';
import { parseWebhooksArgs, webhooksOptionsFromConfig } from '../../src/cli/webhooks.js';

let tmp: { dir: string; cleanup: () => Promise<void> };
const children: ChildProcess[] = [];

before(async () => {
  tmp = await makeTempDir('wmsbridge-webhook-cli-');
});
after(async () => {
  for (const c of children) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
  await tmp.cleanup();
});

function readyUrl(child: ChildProcess): Promise<{ url: string; stderr: () => string }> {
  let err = '';
  return new Promise((resolve, reject) => {
    child.stderr?.on('data', (d: Buffer) => {
      err += d.toString();
      const m = /listening on (https?:\/\/\S+)/.exec(err);
      if (m) resolve({ url: m[1]!, stderr: () => err });
    });
    child.on('exit', (code) => reject(new Error(`exited (${code}) before ready: ${err}`)));
  });
}

describe('parseWebhooksArgs and the config mapping', () => {
  test('flags', () => {
    assert.equal(parseWebhooksArgs(['--help'], {}), 'help');
    const o = parseWebhooksArgs(['--port', '0', '--host', '0.0.0.0', '--state-dir', 's', '--outbox', 'o', '--secret-env', 'S', '--max-body-bytes', '2048'], {
      S: 'sekret-value',
    });
    assert.notEqual(o, 'help');
    assert.deepEqual(o, { port: 0, host: '0.0.0.0', stateDir: 's', outboxDir: 'o', secret: 'sekret-value', maxBodyBytes: 2048 });
    assert.throws(() => parseWebhooksArgs(['--port', '70000'], {}), /--port must be an integer between 0 and 65535/);
    assert.throws(() => parseWebhooksArgs(['--port', 'x'], {}), /--port/);
    assert.throws(() => parseWebhooksArgs(['--tls-cert', 'c.pem'], {}), /--tls-cert and --tls-key go together/);
    assert.throws(() => parseWebhooksArgs(['--bogus'], {}), /bogus/);
    assert.throws(() => parseWebhooksArgs(['--secret-env', 'MISSING'], {}), /MISSING is not set or empty/);
    assert.throws(() => parseWebhooksArgs(['--secret-env', 'EMPTY'], { EMPTY: '' }), /EMPTY is not set or empty/);
    // --log-level like every other command
    assert.deepEqual(parseWebhooksArgs(['--log-level', 'debug'], {}), { logLevel: 'debug' });
    assert.throws(() => parseWebhooksArgs(['--log-level', 'loud'], {}), /--log-level must be one of fatal, error, warn, info, debug, trace, silent/);
  });

  test('webhooksOptionsFromConfig: section, folders, journal path, TLS paths relative to the config file, strict secret', async () => {
    const dir = join(tmp.dir, 'cfg-map');
    await import('node:fs/promises').then((fs) => fs.mkdir(dir, { recursive: true }));
    await writeFile(
      join(dir, 'wmsbridge.config.yaml'),
      [
        'outboxDir: out',
        'stateDir: st',
        'journal: { kind: sqlite, path: db/j.db }',
        'webhooks:',
        '  enabled: true',
        '  port: 9999',
        '  basePath: /hooks',
        '  secretEnv: HOOK_SECRET',
        '  tls: { certFile: c.pem, keyFile: k.pem }',
        '',
      ].join('\n'),
    );
    const config = await loadConfig({ cwd: dir, env: {} });
    const o = webhooksOptionsFromConfig(config, { HOOK_SECRET: 'from-the-env-123' });
    assert.equal(o.port, 9999);
    assert.equal(o.basePath, '/hooks');
    assert.equal(o.secret, 'from-the-env-123');
    assert.equal(o.outboxDir, join(dir, 'out'));
    assert.equal(o.stateDir, join(dir, 'st'));
    assert.deepEqual(o.journalSpec, { kind: 'sqlite', path: join(dir, 'db', 'j.db') });
    assert.deepEqual(o.tls, { certFile: join(dir, 'c.pem'), keyFile: join(dir, 'k.pem') });
    assert.throws(() => webhooksOptionsFromConfig(config, {}), /webhooks\.secretEnv HOOK_SECRET: the environment variable HOOK_SECRET is not set/);
  });
});

describe('wmsbridge webhooks (child process)', () => {
  test('--help exits 0; a missing secret variable exits 2 with a one-line error', async () => {
    const help = await runCli(['webhooks', '--help'], { timeoutMs: 30_000 });
    assert.equal(help.code, 0);
    assert.match(help.stdout, /usage: wmsbridge webhooks/);
    const bad = await runCli(['webhooks', '--port', '0', '--state-dir', join(tmp.dir, 'st'), '--secret-env', 'WMSBRIDGE_TEST_NO_SUCH_VAR'], {
      timeoutMs: 30_000,
    });
    assert.equal(bad.code, 2);
    assert.match(bad.stderr, /E_CONFIG: --secret-env WMSBRIDGE_TEST_NO_SUCH_VAR: the environment variable WMSBRIDGE_TEST_NO_SUCH_VAR is not set or empty/);
  });

  test('with a config file: listens, needs the secret, stops on SIGTERM with exit 0 after flushing', async () => {
    const dir = join(tmp.dir, 'cfg-run');
    await import('node:fs/promises').then((fs) => fs.mkdir(dir, { recursive: true }));
    await writeFile(join(dir, 'wmsbridge.config.yaml'), ['webhooks:', '  port: 0', '  basePath: /hooks', '  secretEnv: HOOK_SECRET', ''].join('\n'));
    const secret = 'cli-secret-value-42';
    // a long flush interval: what reaches the outbox is flushed by the SIGTERM stop
    // --config rather than a cwd: the tsx loader of the .ts test run resolves from the project folder
    const child = spawnCli(['webhooks', '--config', join(dir, 'wmsbridge.config.yaml'), '--flush-interval-ms', '3600000'], {
      env: { HOOK_SECRET: secret, WMSBRIDGE_LOG_LEVEL: 'info' },
    });
    children.push(child);
    const { url, stderr } = await readyUrl(child);
    assert.match(url, /^http:\/\/127\.0\.0\.1:\d+$/);
    assert.match(stderr(), /POST \/hooks\/<kind>/);

    const send = async (headers: Record<string, string>) => {
      const res = await request(`${url}/hooks/estoque`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...headers },
        body: JSON.stringify({ eventId: 'cli-1', data: { positions: [{ productId: 'p', quantity: 2 }] } }),
      });
      await res.body.dump();
      return res.statusCode;
    };
    assert.equal(await send({}), 401);
    assert.equal(await send({ 'x-webhook-secret': 'wrong-secret-value' }), 401);
    assert.equal(await send({ 'x-webhook-secret': secret }), 200);
    const health = await request(`${url}/hooks/healthz`);
    assert.equal(health.statusCode, 200);
    await health.body.dump();

    const exited = once(child, 'exit');
    child.kill('SIGTERM');
    const [code] = (await exited) as [number | null];
    assert.equal(code, 0, stderr());
    assert.ok(!stderr().includes(secret), 'the secret never appears in the logs');

    const stockDir = join(dir, 'outbox', 'webhooks', 'stock');
    const files = (await readdir(stockDir)).sort();
    assert.equal(files.length, 2, files.join(','));
    const jsonl = await readFile(
      join(
        stockDir,
        files.find((f) => f.endsWith('.jsonl'))!,
      ),
      'utf8',
    );
    assert.equal((JSON.parse(jsonl.trim()) as { eventId: string }).eventId, 'cli-1');
  });
});

describe('durability', () => {
  test('kill -9 while 32 senders are answered: every event answered 200 is in the journal', async () => {
    const dir = join(tmp.dir, 'kill9');
    // the journal's defaults (synchronous=FULL, writer thread merging the batches waiting for it); no flush, so every
    // answered event must be found in the journal itself
    const child = spawnCli(['webhooks', '--port', '0', '--state-dir', join(dir, 'state'), '--outbox', join(dir, 'outbox'), '--flush-interval-ms', '0'], {
      env: { WMSBRIDGE_LOG_LEVEL: 'warn' },
    });
    children.push(child);
    const { url } = await readyUrl(child);
    const pool = new Pool(url, { connections: 32 });
    const answered: string[] = [];
    let next = 0;
    let killed = false;
    const sender = async (): Promise<void> => {
      while (!killed) {
        const id = `k9-${next++}`;
        try {
          const res = await pool.request({
            method: 'POST',
            path: '/webhooks/stock',
            headers: { 'content-type': 'application/json', 'x-wms-event-id': id },
            body: JSON.stringify({ eventId: id, data: { positions: [{ productId: 'p', quantity: next }] } }),
          });
          await res.body.dump();
          if (res.statusCode === 200) answered.push(id);
        } catch {
          return; // the connection died with the process: that request was not answered
        }
      }
    };
    const senders = Array.from({ length: 32 }, () => sender());
    // kill once a good number of answers left (the process is mid-stream: requests in flight, batches committing)
    while (answered.length < 600) await new Promise((r) => setTimeout(r, 5)); // poll interval of a wait on the answers counted by the senders
    const exited = once(child, 'exit');
    child.kill('SIGKILL');
    killed = true;
    await exited;
    await Promise.all(senders);
    await pool.destroy();

    const db = new Database(join(dir, 'state', 'journal.db'), { readonly: true });
    try {
      const stored = new Set((db.prepare('SELECT dedup_key FROM webhook_events').all() as Array<{ dedup_key: string }>).map((r) => r.dedup_key));
      const lost = answered.filter((id) => !stored.has(id));
      assert.deepEqual(lost, [], `${lost.length} of ${answered.length} answered events are not in the journal`);
      assert.ok(stored.size >= answered.length);
    } finally {
      db.close();
    }
  });
});
