import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readdirSync } from 'node:fs';
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { once } from 'node:events';
import { startSandbox, sandboxCall, sandboxToken } from '../helpers/sandbox.js';
import { makeTempDir } from '../helpers/tmp.js';
import { spawnCli } from '../helpers/cli.js';

let tmp: { dir: string; cleanup: () => Promise<void> };
before(async () => {
  tmp = await makeTempDir('wmsbridge-sandbox-state-');
});
after(() => tmp.cleanup());

describe('state file', () => {
  test('state survives a restart; ids continue; the save is atomic (no temp file left)', async () => {
    const file = join(tmp.dir, 'state.json');
    const sb1 = await startSandbox({ seed: 'state', stateFile: file });
    const { token } = await sandboxToken(sb1);
    const r = await sandboxCall(sb1, 'POST', '/open/v1/category', { token, body: { name: 'Persistida', codeERP: 'CAT-P', status: 1 } });
    assert.equal(r.status, 200);
    const lock = await sandboxCall(sb1, 'PUT', '/open/v1/Stock/lock', {
      token,
      body: {
        warehouseId: sb1.state.stock[0]!.warehouseId,
        productId: sb1.state.stock[0]!.productId,
        lotNumber: sb1.state.stock[0]!.lotNumber!,
        materialStatusId: sb1.state.collections.MaterialStatus[1]!.id,
      },
    });
    assert.equal(lock.status, 200);
    await sb1.close();
    assert.ok(existsSync(file));
    assert.deepEqual(
      readdirSync(tmp.dir).filter((f) => f.endsWith('.tmp')),
      [],
    );

    const sb2 = await startSandbox({ seed: 'state', stateFile: file });
    try {
      const { token: t2 } = await sandboxToken(sb2);
      const cats = await sandboxCall(sb2, 'GET', '/open/v1/category', { token: t2 });
      assert.equal(cats.status, 405, 'categories have no list endpoint in the interface');
      assert.ok(sb2.state.collections.Category.some((c) => c.id === r.json.data.id && c['codeERP'] === 'CAT-P'));
      assert.equal(sb2.state.stock[0]!.materialStatusName, 'Bloqueado');
      assert.equal(sb2.state.creations['Category']?.['CAT-P'], 1);
      const again = await sandboxCall(sb2, 'POST', '/open/v1/category', { token: t2, body: { name: 'Outra', status: 1 } });
      assert.notEqual(again.json.data.id, r.json.data.id, 'the id sequence continues after a restart');
    } finally {
      await sb2.close();
    }
  });

  test('a state file that cannot be written is refused at start', async () => {
    await assert.rejects(startSandbox({ stateFile: join(tmp.dir, 'no-such-dir', 'state.json') }), /cannot write the state file/);
  });

  test('a file that is not a sandbox state is refused, not overwritten', async () => {
    const file = join(tmp.dir, 'foreign.json');
    await writeFile(file, '{"hello":"world"}');
    await assert.rejects(startSandbox({ stateFile: file }), /not a sandbox state file/);
    assert.equal(await readFile(file, 'utf8'), '{"hello":"world"}');
  });
});

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
