/**
 * Security checks, end to end:
 * - the sample inbox runs at debug log level with a distinctive secret against a sandbox created with it,
 *   through a recording proxy that learns every access and refresh token the sandbox issues (1 s token
 *   lifetime, so refreshes happen); then a run with a wrong secret; then the webhook receiver with a secret.
 *   stdout, stderr, every outbox file and every state file (the SQLite journal included) hold none of the
 *   secrets, none of the tokens, and no 'Bearer '.
 * - the webhook receiver refuses unauthenticated (401) and oversized (413) requests.
 * - TLS verification is on: a WMS URL served with a self-signed certificate fails with E_WMS_NETWORK naming
 *   the certificate problem.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { cp, readdir, readFile, writeFile } from 'node:fs/promises';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { createServer, type Server } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import { execFileSync } from 'node:child_process';
import { once } from 'node:events';
import type { AddressInfo } from 'node:net';
import { request } from 'undici';
import { makeTempDir } from '../helpers/tmp.js';
import { runCli, spawnCli, PROJECT_ROOT, type CliResult, workspaceFlags } from '../helpers/cli.js';
import { startSandbox, type Sandbox } from '../helpers/sandbox.js';
import { createWmsClient } from '../../src/wms/client.js';
import { WmsError } from '../../src/wms/errors.js';

const SECRET = 'S3cr3t-wmsbridge-canary-7f3a9c1e';
const WRONG_SECRET = 'Wr0ng-wmsbridge-canary-55d0b2aa';
const HOOK_SECRET = 'H00k-wmsbridge-canary-9e8d7c6b';

let sb: Sandbox;
let proxy: Server;
let proxyUrl = '';
let tmp: { dir: string; cleanup: () => Promise<void> };
const tokens = new Set<string>();
const outputs: Array<{ what: string; text: string }> = [];

async function walk(dir: string): Promise<string[]> {
  if (!existsSync(dir)) return [];
  const out: string[] = [];
  for (const e of await readdir(dir, { withFileTypes: true })) {
    const p = join(dir, e.name);
    if (e.isDirectory()) out.push(...(await walk(p)));
    else if (e.isFile()) out.push(p);
  }
  return out;
}

/** A forwarding proxy in front of the sandbox that records the tokens it hands out. */
function startRecordingProxy(target: string): Promise<Server> {
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const headers = { ...req.headers };
      delete headers['host'];
      delete headers['connection'];
      delete headers['content-length'];
      const body = chunks.length ? Buffer.concat(chunks) : undefined;
      request(`${target}${req.url ?? '/'}`, { method: (req.method ?? 'GET') as 'GET', headers, body })
        .then(async (r) => {
          const buf = Buffer.from(await r.body.arrayBuffer());
          const auth = req.headers['authorization'];
          if (typeof auth === 'string' && auth.startsWith('Bearer ')) tokens.add(auth.slice(7));
          try {
            const j = JSON.parse(buf.toString('utf8')) as { data?: Record<string, unknown> };
            for (const k of ['token', 'refreshToken', 'accessToken', 'dataRefreshToken']) {
              const v = j.data?.[k];
              if (typeof v === 'string' && v.length >= 8) tokens.add(v);
            }
          } catch {
            // not JSON
          }
          const h: Record<string, string | string[]> = {};
          for (const [k, v] of Object.entries(r.headers)) if (v !== undefined && !['connection', 'transfer-encoding', 'content-length'].includes(k)) h[k] = v;
          res.writeHead(r.statusCode, h);
          res.end(buf);
        })
        .catch(() => {
          res.destroy();
        });
    });
  });
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve(server)));
}

const dirs = (): string[] => workspaceFlags(tmp.dir);

function record(what: string, r: CliResult): void {
  outputs.push({ what: `${what} stdout`, text: r.stdout }, { what: `${what} stderr`, text: r.stderr });
}

before(async () => {
  sb = await startSandbox({ secretKey: SECRET, tokenTtlSeconds: 1, latencyMs: 2 });
  proxy = await startRecordingProxy(sb.url);
  proxyUrl = `http://127.0.0.1:${(proxy.address() as AddressInfo).port}`;
  tmp = await makeTempDir('wmsbridge-sec-');
  await cp(join(PROJECT_ROOT, 'inbox'), join(tmp.dir, 'inbox'), { recursive: true, filter: (s) => !s.includes('.wmsbridge') });
});

after(async () => {
  proxy?.close();
  await sb?.close();
  await tmp?.cleanup();
});

test('a debug-level run, a refused login and the webhook receiver leak no secret and no token anywhere', { timeout: 180_000 }, async () => {
  const env = { WMS_URL: proxyUrl, WMS_ACCESS_KEY_ID: sb.accessKeyID, WMS_SECRET_KEY: SECRET, WMSBRIDGE_LOG_LEVEL: 'debug' };
  const run = await runCli(['run', ...dirs()], { env, timeoutMs: 150_000 });
  record('run', run);
  assert.ok(run.code === 0 || run.code === 1, `run exit ${run.code}: ${run.stderr.slice(-2000)}`);
  assert.ok(tokens.size >= 2, `the proxy saw the tokens issued (${tokens.size})`);
  assert.ok(run.stderr.length > 1000, 'debug logging produced output to search');

  // a refused login (a new file, so the run must log in): exit 2 and a clear message, no secret
  await writeFile(join(tmp.dir, 'inbox', 'cadastros', 'CATEGORIAS_20991231.csv'), 'codigo;descricao;situacao\r\nSECX;SEGURANCA;A\r\n');
  const bad = await runCli(['run', ...dirs()], { env: { ...env, WMS_SECRET_KEY: WRONG_SECRET }, timeoutMs: 60_000 });
  record('refused run', bad);
  assert.equal(bad.code, 2, `refused credentials stop the run: exit ${bad.code}\n${bad.stderr.slice(-1500)}`);
  assert.match(bad.stdout + bad.stderr, /E_WMS_AUTH|credential|authoriz/i);

  // the webhook receiver with a secret
  const hook = spawnCli(
    ['webhooks', '--port', '0', '--state-dir', join(tmp.dir, 'state-hooks'), '--outbox', join(tmp.dir, 'outbox'), '--secret-env', 'HOOK_SECRET_VAR'],
    {
      env: { HOOK_SECRET_VAR: HOOK_SECRET, WMSBRIDGE_LOG_LEVEL: 'debug' },
    },
  );
  let hookOut = '';
  let hookErr = '';
  hook.stdout?.on('data', (d: Buffer) => (hookOut += d.toString()));
  hook.stderr?.on('data', (d: Buffer) => (hookErr += d.toString()));
  try {
    const deadline = Date.now() + 20_000;
    let url = '';
    while (!url) {
      const m = /listening on (http:\/\/127\.0\.0\.1:\d+)/.exec(hookErr + hookOut);
      if (m) url = m[1]!;
      else if (Date.now() > deadline || hook.exitCode !== null) throw new Error(`webhooks did not start: ${hookErr}`);
      else await new Promise((r) => setTimeout(r, 50)); // poll interval of a wait on the start line
    }
    const body = JSON.stringify({ kind: 'stock', productCode: 'ARROZ-5KG', quantity: 3 });
    const post = async (headers: Record<string, string>, data: string | Buffer = body): Promise<number> => {
      const r = await request(`${url}/webhooks/stock`, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: data });
      await r.body.text();
      return r.statusCode;
    };
    assert.equal(await post({}), 401, 'no secret: 401');
    assert.equal(await post({ 'x-webhook-secret': `${HOOK_SECRET}x` }), 401, 'wrong secret: 401');
    assert.equal(await post({ 'x-webhook-secret': HOOK_SECRET }, JSON.stringify({ kind: 'stock', pad: 'x'.repeat(2 * 1024 * 1024) })), 413, 'oversized: 413');
    assert.equal(await post({ 'x-webhook-secret': HOOK_SECRET }), 200, 'with the secret: 200');
    // the stored event reaches the outbox
    const hookFiles = async (): Promise<string[]> => (await walk(join(tmp.dir, 'outbox', 'webhooks'))).filter((p) => p.endsWith('.jsonl'));
    const until = Date.now() + 15_000;
    while ((await hookFiles()).length === 0 && Date.now() < until) await new Promise((r) => setTimeout(r, 100)); // poll interval of a wait on the file
    assert.ok((await hookFiles()).length > 0, 'the accepted webhook was written to the outbox');
  } finally {
    hook.kill('SIGTERM');
    if (hook.exitCode === null) await once(hook, 'exit');
  }
  outputs.push({ what: 'webhooks stdout', text: hookOut }, { what: 'webhooks stderr', text: hookErr });

  // search everything
  const needles = [SECRET, WRONG_SECRET, HOOK_SECRET, ...tokens];
  const hits: string[] = [];
  const scan = (what: string, text: string): void => {
    for (const n of needles)
      if (text.includes(n)) hits.push(`${what}: ${n === SECRET || n === WRONG_SECRET || n === HOOK_SECRET ? 'a secret' : `token ${n.slice(0, 6)}...`}`);
    if (/Bearer [A-Za-z0-9]/.test(text)) hits.push(`${what}: 'Bearer '`);
  };
  for (const o of outputs) scan(o.what, o.text);
  const files = [...(await walk(join(tmp.dir, 'outbox'))), ...(await walk(join(tmp.dir, 'state'))), ...(await walk(join(tmp.dir, 'state-hooks')))];
  assert.ok(
    files.some((p) => p.endsWith('journal.db')),
    'the journal was searched too',
  );
  for (const p of files) scan(p.slice(tmp.dir.length + 1), (await readFile(p)).toString('latin1'));
  assert.deepEqual(hits, [], `secrets or tokens found:\n${hits.join('\n')}`);
});

test('TLS verification is on: a self-signed WMS certificate fails with E_WMS_NETWORK naming the certificate', { timeout: 60_000 }, async () => {
  const dir = await makeTempDir('wmsbridge-tls-');
  const key = join(dir.dir, 'key.pem');
  const cert = join(dir.dir, 'cert.pem');
  execFileSync('openssl', ['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-keyout', key, '-out', cert, '-days', '1', '-subj', '/CN=127.0.0.1'], {
    stdio: 'ignore',
  });
  let reached = 0;
  const server = createHttpsServer({ key: await readFile(key), cert: await readFile(cert) }, (_req, res) => {
    reached++;
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ code: 200, data: { token: 'tls-should-not-get-here', refreshToken: 'x', expiresIn: 900 } }));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  const url = `https://127.0.0.1:${(server.address() as AddressInfo).port}`;
  try {
    const r = await runCli(['check', '--wms', ...dirs(), '--state-dir', join(dir.dir, 'state')], {
      env: { WMS_URL: url, WMS_ACCESS_KEY_ID: 'k', WMS_SECRET_KEY: SECRET, WMSBRIDGE_LOG_LEVEL: 'warn', NODE_TLS_REJECT_UNAUTHORIZED: '' },
      timeoutMs: 45_000,
    });
    const out = r.stdout + r.stderr;
    assert.equal(r.code, 2, `exit ${r.code}: ${out.slice(-2000)}`);
    assert.match(out, /certificate|SELF_SIGNED|self-signed|self signed/i, out.slice(-2000));
    // the client itself: a WmsError with the stable code E_WMS_NETWORK, naming the certificate problem
    const client = createWmsClient({ baseUrl: url, accessKeyID: 'k', secretKey: SECRET, retry: { retries: 0 }, timeoutMs: 5000 });
    try {
      await assert.rejects(client.authorize(), (err: unknown) => {
        assert.ok(err instanceof WmsError, `a WmsError, got ${String(err)}`);
        assert.equal(err.code, 'E_WMS_NETWORK');
        assert.match(err.message, /certificate|SELF_SIGNED/i);
        assert.ok(!err.message.includes(SECRET));
        return true;
      });
    } finally {
      await client.close();
    }
    assert.equal(reached, 0, 'no request was answered over the unverified connection');
    assert.ok(!out.includes(SECRET), 'the secret is not printed');
  } finally {
    server.close();
    await dir.cleanup();
  }
});
