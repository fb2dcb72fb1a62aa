/**
 * `wmsbridge doctor` names every sandbox dialect (the CLI as a child process against a real sandbox per
 * dialect, no dialect setting on the wmsbridge side), and `pull stock` against a WMS it cannot page exits
 * 2 without writing an export (a short read is never an empty warehouse).
 */
import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { readdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { makeTempDir } from '../helpers/tmp.js';
import { runCli } from '../helpers/cli.js';
import { startSandbox, type Sandbox } from '../helpers/sandbox.js';
import { dialectMatrix, formatDialect } from '../../src/sandbox/dialect.js';

let tmp: { dir: string; cleanup: () => Promise<void> };
before(async () => {
  tmp = await makeTempDir('wmsbridge-doctor-');
});
after(() => tmp.cleanup());

function envFor(sb: Pick<Sandbox, 'url' | 'accessKeyID' | 'secretKey'>, extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  return { ...process.env, WMS_URL: sb.url, WMS_ACCESS_KEY_ID: sb.accessKeyID, WMS_SECRET_KEY: sb.secretKey, WMSBRIDGE_LOG_LEVEL: 'warn', ...extra };
}

describe('doctor names each sandbox dialect', () => {
  for (const { name, dialect } of dialectMatrix()) {
    test(`dialect ${name}`, { timeout: 60_000 }, async () => {
      const sb = await startSandbox({ dialect });
      try {
        const r = await runCli(['doctor', '--json', '--probe-writes', '--state-dir', join(tmp.dir, `st-${name}`)], { env: envFor(sb), timeoutMs: 50_000 });
        const report = JSON.parse(r.stdout);
        assert.equal(report.dialect, formatDialect(dialect), `${r.stdout}\n${r.stderr}`);
        assert.equal(report.login.ok, true);
        assert.equal(report.counts.Warehouse, 3);
        assert.equal(report.counts.MaterialStatus, 5);
        // the only thing the default configuration gets wrong for a sandbox dialect is local DateTimes
        if (dialect.dateTimes === 'local') {
          assert.equal(r.code, 2);
          assert.deepEqual(report.problems, ['wms.dateTimes is utc but the WMS answers local DateTimes: set wms.dateTimes: local (and wms.timeZone)']);
          assert.ok(report.configLines.some((l: string) => l.startsWith('wms.dateTimes: local')));
        } else {
          assert.equal(r.code, 0, JSON.stringify(report.problems));
          assert.deepEqual(report.problems, []);
        }
        assert.ok(report.configLines.some((l: string) => l.startsWith(`wms.pagingBase: auto   # found ${dialect.pagingBase}`)));
      } finally {
        await sb.close();
      }
    });
  }

  test('text output; a configuration that disagrees with the WMS is a problem; bad credentials exit 2', { timeout: 60_000 }, async () => {
    const sb = await startSandbox({ dialect: 'pagingBase=0' });
    try {
      const cfg = join(tmp.dir, 'pinned.yaml');
      await writeFile(cfg, 'wms:\n  pagingBase: 1\n');
      const r = await runCli(['doctor', '--config', cfg, '--state-dir', join(tmp.dir, 'st-pinned')], { env: envFor(sb), timeoutMs: 50_000 });
      assert.equal(r.code, 2, r.stdout + r.stderr);
      assert.match(r.stdout, /page base +0 +\(PagingIndex 0 answers the first page and 1 the second/);
      assert.match(r.stdout, /wms\.pagingBase is 1 but the WMS numbers pages from 0: set wms\.pagingBase: auto \(or 0\)/);
      assert.match(r.stdout, /as a sandbox dialect +pagingBase=0 /);
      const bad = await runCli(['doctor', '--state-dir', join(tmp.dir, 'st-bad')], { env: envFor(sb, { WMS_SECRET_KEY: 'wrong' }), timeoutMs: 50_000 });
      assert.equal(bad.code, 2);
      assert.match(bad.stdout, /login +FAILED: POST \/open\/v1\/authorize answered 401: invalid credentials/);
    } finally {
      await sb.close();
    }
  });
});

describe('pull stock against a WMS it cannot page', () => {
  let server: Server;
  let url = '';
  before(async () => {
    // counts 3 stock records but answers every page empty: no page base reads them
    server = createServer((req, res) => {
      res.setHeader('content-type', 'application/json');
      if (req.url?.startsWith('/open/v1/authorize')) res.end(JSON.stringify({ code: 200, message: 'ok', data: { token: 't', refreshToken: 'r' }, error: '' }));
      else res.end(JSON.stringify({ code: 200, message: 'ok', count: 3, totalPages: 1, pagingLimit: 100, pagingIndex: 1, data: [], error: '' }));
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  after(() => new Promise<void>((r) => server.close(() => r())));

  test('exits 2 naming wms.pagingBase and writes no file', { timeout: 60_000 }, async () => {
    const out = join(tmp.dir, 'exports');
    const r = await runCli(['pull', 'stock', '--wms-url', url, '--access-key-id', 'k', '--out', out, '--state', join(tmp.dir, 'st-pull')], {
      env: { ...process.env, WMS_SECRET_KEY: 's', WMSBRIDGE_LOG_LEVEL: 'warn' },
      timeoutMs: 50_000,
    });
    assert.equal(r.code, 2, r.stdout + r.stderr);
    assert.match(r.stderr, /E_WMS_PAGING: \[GET\] \/open\/v1\/Stock: read 0 of the 3 Stock records the WMS counts .*check wms\.pagingBase/);
    const files = await readdir(out).catch(() => [] as string[]);
    assert.deepEqual(files, [], 'no export file, not even an empty one');
  });
});
