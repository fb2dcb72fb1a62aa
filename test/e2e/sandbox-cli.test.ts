/**
 * `wmsbridge sandbox` as a child process: its one JSON line when ready, SIGTERM, a busy port and bad options
 * (the sandbox's state file and dialects in process: test/unit/sandbox-state.test.ts, sandbox-dialect.test.ts).
 */
import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { once } from 'node:events';
import { startSandbox, sandboxCall, sandboxToken } from '../helpers/sandbox.js';
import { makeTempDir } from '../helpers/tmp.js';
import { runCli, spawnCli } from '../helpers/cli.js';

let tmp: { dir: string; cleanup: () => Promise<void> };
before(async () => {
  tmp = await makeTempDir('wmsbridge-sandbox-cli-');
});
after(() => tmp.cleanup());

describe('wmsbridge sandbox (CLI)', () => {
  test('prints exactly one JSON line when ready, serves, and exits 0 on SIGTERM', async () => {
    const file = join(tmp.dir, 'cli-state.json');
    const child = spawnCli(['sandbox', '--seed', 'cli', '--token-ttl', '60', '--state-file', file]);
    let stdout = '';
    let stderr = '';
    child.stderr!.on('data', (d: Buffer) => (stderr += d.toString()));
    const killer = setTimeout(() => child.kill('SIGKILL'), 40_000);
    try {
      const line = await new Promise<string>((resolve, reject) => {
        child.stdout!.on('data', (d: Buffer) => {
          stdout += d.toString();
          if (stdout.includes('\n')) resolve(stdout.split('\n')[0]!);
        });
        child.once('exit', (code) => reject(new Error(`exited early (${code}): ${stderr}`)));
      });
      const info = JSON.parse(line) as { url: string; accessKeyID: string; secretKey: string };
      assert.deepEqual(Object.keys(info), ['url', 'accessKeyID', 'secretKey']);
      assert.match(info.url, /^http:\/\/127\.0\.0\.1:\d+$/);
      const { token } = await sandboxToken(info);
      assert.equal((await sandboxCall(info, 'GET', '/open/v1/company', { token })).status, 200);
      const exited = once(child, 'exit');
      child.kill('SIGTERM');
      const [code, signal] = (await exited) as [number | null, NodeJS.Signals | null];
      assert.equal(signal, null);
      assert.equal(code, 0, stderr);
      assert.equal(stdout, `${line}\n`, 'nothing else on stdout');
      assert.ok(existsSync(file), 'state saved on exit');
      assert.ok(!stderr.includes(info.secretKey), 'the secret is not logged');
    } finally {
      clearTimeout(killer);
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    }
  });

  test('a port already in use is a one-line error, exit 2', async () => {
    const busy = await startSandbox();
    try {
      const port = new URL(busy.url).port;
      const child = spawnCli(['sandbox', '--port', port]);
      let stdout = '';
      let stderr = '';
      child.stdout!.on('data', (d: Buffer) => (stdout += d.toString()));
      child.stderr!.on('data', (d: Buffer) => (stderr += d.toString()));
      const [code] = (await once(child, 'exit')) as [number | null];
      assert.equal(code, 2);
      assert.equal(stdout, '');
      assert.match(stderr, /cannot listen on 127\.0\.0\.1:\d+ \(EADDRINUSE\)/);
    } finally {
      await busy.close();
    }
  });

  test('a bad option is refused with exit code 2 and nothing on stdout', async () => {
    const child = spawnCli(['sandbox', '--fail-rate', '3']);
    let stdout = '';
    child.stdout!.on('data', (d: Buffer) => (stdout += d.toString()));
    const [code] = (await once(child, 'exit')) as [number | null];
    assert.equal(code, 2);
    assert.equal(stdout, '');
  });
});

describe('wmsbridge sandbox --dialect', () => {
  test('a bad dialect exits 2 with a one-line message and nothing on stdout', async () => {
    const r = await runCli(['sandbox', '--dialect', 'pagingBase=7']);
    assert.equal(r.code, 2);
    assert.equal(r.stdout, '');
    assert.match(r.stderr, /--dialect: pagingBase must be one of 1, 0/);
  });
});
