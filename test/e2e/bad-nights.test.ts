/**
 * Bad nights, as an operator lives them, through the CLI against the real sandbox: the WMS down for a
 * whole run, a WMS answering 500 to everything, a wrong secret. An outage is never a data error: nothing
 * is rejected, nothing goes to error/, the run exits 75 and the next one delivers everything.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { cp, readdir, writeFile, mkdir, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { makeTempDir } from '../helpers/tmp.js';
import { runCli, PROJECT_ROOT, workspaceFlags } from '../helpers/cli.js';
import { startSandbox, sandboxCall, type Sandbox } from '../helpers/sandbox.js';
import { watchLog, type LogWatch } from '../helpers/wait.js';

let tmp: { dir: string; cleanup: () => Promise<void> };

before(async () => {
  tmp = await makeTempDir('wmsbridge-e2e-nights-');
});

after(async () => {
  await tmp?.cleanup();
});

/** A copy of the sample inbox and the flags of a run over it. */
async function night(name: string, config: Record<string, unknown>): Promise<{ dir: string; flags: string[] }> {
  const dir = join(tmp.dir, name);
  await mkdir(dir, { recursive: true });
  await cp(join(PROJECT_ROOT, 'inbox'), join(dir, 'inbox'), { recursive: true, filter: (s) => !s.includes('.wmsbridge') });
  await writeFile(join(dir, 'config.json'), JSON.stringify(config));
  const flags = ['--config', join(dir, 'config.json'), ...workspaceFlags(dir)];
  return { dir, flags };
}

/** Every file under the channels' error folders. */
async function filesInError(inbox: string): Promise<string[]> {
  const out: string[] = [];
  for (const ch of await readdir(inbox)) {
    const err = join(inbox, ch, '.wmsbridge', 'error');
    const found = await readdir(err, { recursive: true }).catch(() => [] as string[]);
    out.push(...found.map((f) => join(ch, String(f))));
  }
  return out;
}

/** Files still in the channels (not in .wmsbridge), recursively: the inbox as the ERP left it. */
async function inboxFiles(inbox: string): Promise<string[]> {
  // attachments (pedidos/anexos) are read where they are, never moved
  const all = (await readdir(inbox, { recursive: true })).map(String).filter((p) => !p.includes('.wmsbridge') && !p.includes('anexos'));
  const files: string[] = [];
  for (const p of all) if ((await stat(join(inbox, p))).isFile()) files.push(p);
  return files.sort();
}

async function status(
  flags: string[],
  env: Record<string, string>,
): Promise<{ records: Record<string, number>; attention: Array<{ status: string; error: string }> }> {
  const r = await runCli(['status', '--json', '--limit', '1000', ...flags], { env });
  assert.equal(r.code, 0, r.stderr);
  return JSON.parse(r.stdout);
}

test('the WMS down for a whole run: exit 75, nothing rejected, nothing in error/; the next run delivers everything', { timeout: 180_000 }, async () => {
  // a sandbox's address with nothing listening on it: connection refused
  let sb: Sandbox = await startSandbox({ seed: 31 });
  const port = Number(new URL(sb.url).port);
  const creds = { accessKeyID: sb.accessKeyID, secretKey: sb.secretKey };
  await sb.close();
  const { dir, flags } = await night('down', { wms: { url: `http://127.0.0.1:${port}`, accessKeyId: creds.accessKeyID, retries: 2, timeoutMs: 2000 } });
  const env = { WMS_SECRET_KEY: creds.secretKey, WMSBRIDGE_LOG_LEVEL: 'warn' };

  const down = await runCli(['run', ...flags], { env, timeoutMs: 120_000 });
  assert.equal(down.code, 75, `an outage exits 75 (EX_TEMPFAIL)\n${down.stdout}\n${down.stderr.slice(-3000)}`);
  assert.match(down.stdout, /o WMS ficou inacessível a partir de \d\d\/\d\d\/\d{4} \d\d:\d\d; \d+ registro\(s\) aguardam a próxima execução/);
  assert.deepEqual(await filesInError(join(dir, 'inbox')), [], 'no file goes to error/ for an outage');
  const st = await status(flags, env);
  assert.equal(st.records['rejected'] ?? 0, 0, `nothing rejected: ${JSON.stringify(st.attention.slice(0, 5))}`);
  assert.equal(st.records['failed'] ?? 0, 0, 'nothing failed for good');
  assert.equal(st.records['sending'] ?? 0, 0);
  for (const a of st.attention.filter((x) => x.status === 'held')) assert.match(a.error, /^waiting for /);
  // the report says it in one line
  const reports = (await readdir(join(dir, 'outbox', 'reports'))).filter((f) => !f.endsWith('.html'));
  assert.equal(reports.length, 1);
  const { readFile } = await import('node:fs/promises');
  const html = await readFile(join(dir, 'outbox', 'reports', reports[0]!, 'report.html'), 'utf8');
  assert.match(html, /O WMS ficou indisponível: [^<]*desde \d\d\/\d\d\/\d{4} \d\d:\d\d\. \d+ registros aguardam e serão enviados na próxima execução/);

  // the WMS is back (same address, same credentials)
  sb = await startSandbox({ seed: 31, port });
  try {
    const back = await runCli(['run', ...flags], { env, timeoutMs: 120_000 });
    assert.equal(back.code, 0, `the next run delivers everything\n${back.stdout}\n${back.stderr.slice(-3000)}`);
    assert.doesNotMatch(back.stdout, /recusad/);
    const after = await status(flags, env);
    assert.equal(after.records['rejected'] ?? 0, 0, JSON.stringify(after.attention.filter((a) => a.status === 'rejected').slice(0, 5)));
    assert.equal(
      (after.records['pending'] ?? 0) + (after.records['held'] ?? 0) + (after.records['failed'] ?? 0) + (after.records['in_doubt'] ?? 0),
      0,
      JSON.stringify(after.records),
    );
    assert.ok((after.records['sent'] ?? 0) >= 100, JSON.stringify(after.records));
    assert.deepEqual(await filesInError(join(dir, 'inbox')), []);
    assert.deepEqual(await inboxFiles(join(dir, 'inbox')), [], 'every file was archived');
  } finally {
    await sb.close();
  }
});

/**
 * A proxy in front of the sandbox that answers 500 to every write (reads and authorize pass): the WMS
 * "half down" (its write side fails), so mapping lookups work and sends fail.
 */
async function failingWritesProxy(sb: Sandbox): Promise<{ url: string; failing: { on: boolean }; close: () => Promise<void> }> {
  const { createServer, request } = await import('node:http');
  const target = new URL(sb.url);
  const failing = { on: true };
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      if (failing.on && req.method !== 'GET' && !(req.url ?? '').endsWith('/authorize') && !(req.url ?? '').includes('/search')) {
        res.writeHead(500, { 'content-type': 'application/json' }).end(JSON.stringify({ code: 500, message: 'internal error (proxy)', data: null }));
        return;
      }
      const up = request({ host: target.hostname, port: target.port, path: req.url, method: req.method, headers: req.headers }, (r) => {
        res.writeHead(r.statusCode ?? 502, r.headers);
        r.pipe(res);
      });
      up.on('error', () => res.destroy());
      up.end(Buffer.concat(chunks));
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  const port = (server.address() as { port: number }).port;
  return { url: `http://127.0.0.1:${port}`, failing, close: () => new Promise<void>((r) => server.close(() => r())) };
}

test('a WMS whose writes answer 500: dependants wait ("waiting for ..."), exit 75; the next run sends them, 0 rejects', { timeout: 180_000 }, async () => {
  const sb = await startSandbox({ seed: 32 });
  const proxy = await failingWritesProxy(sb);
  try {
    const { dir, flags } = await night('http500', { wms: { url: proxy.url, accessKeyId: sb.accessKeyID, retries: 1 } });
    const env = { WMS_SECRET_KEY: sb.secretKey, WMSBRIDGE_LOG_LEVEL: 'warn' };
    const r1 = await runCli(['run', ...flags], { env, timeoutMs: 120_000 });
    assert.equal(r1.code, 75, `${r1.stdout}\n${r1.stderr.slice(-3000)}`);
    assert.deepEqual(await filesInError(join(dir, 'inbox')), []);
    const st = await status(flags, env);
    assert.equal(st.records['rejected'] ?? 0, 0, JSON.stringify(st.attention.filter((a) => a.status === 'rejected').slice(0, 5)));
    assert.equal(st.records['failed'] ?? 0, 0, JSON.stringify(st.attention.filter((a) => a.status === 'failed').slice(0, 5)));
    const held = st.attention.filter((a) => a.status === 'held');
    assert.ok(held.length > 0, 'records depending on an undelivered one are held');
    for (const a of held) assert.match(a.error, /^waiting for /, `held only while waiting for a dependency: ${a.error}`);
    assert.ok((st.records['pending'] ?? 0) > 0);

    proxy.failing.on = false;
    const r2 = await runCli(['run', ...flags], { env, timeoutMs: 120_000 });
    assert.equal(r2.code, 0, `${r2.stdout}\n${r2.stderr.slice(-3000)}`);
    const after = await status(flags, env);
    assert.equal(after.records['rejected'] ?? 0, 0, JSON.stringify(after.attention.filter((a) => a.status === 'rejected').slice(0, 5)));
    assert.equal((after.records['pending'] ?? 0) + (after.records['held'] ?? 0) + (after.records['failed'] ?? 0), 0, JSON.stringify(after.records));
    const c = (await sandboxCall(sb, 'GET', '/__sandbox/counts')).json as { creations: Record<string, Record<string, number>> };
    for (const resource of ['Provider', 'ShippingCompany', 'Owners', 'PickingList', 'PurchaseOrder']) {
      for (const [key, n] of Object.entries(c.creations[resource] ?? {})) assert.ok(n <= 1, `${resource} ${key} created ${n} times`);
    }
  } finally {
    await proxy.close();
    await sb.close();
  }
});

test('a wrong secret: exit 2 before anything is claimed, the inbox untouched', { timeout: 60_000 }, async () => {
  const sb = await startSandbox({ seed: 33 });
  try {
    const { dir, flags } = await night('secret', { wms: { url: sb.url, accessKeyId: sb.accessKeyID } });
    const before = await inboxFiles(join(dir, 'inbox'));
    const r = await runCli(['run', ...flags], { env: { WMS_SECRET_KEY: 'not-the-secret', WMSBRIDGE_LOG_LEVEL: 'warn' } });
    assert.equal(r.code, 2, `${r.stdout}\n${r.stderr}`);
    assert.match(r.stderr, /refused the credentials/);
    assert.doesNotMatch(r.stderr, /not-the-secret/, 'the secret is never printed');
    assert.deepEqual(await inboxFiles(join(dir, 'inbox')), before, 'every file left where it was');
    const work = await readdir(join(dir, 'inbox', 'cadastros', '.wmsbridge', 'work')).catch(() => []);
    assert.deepEqual(work, []);
  } finally {
    await sb.close();
  }
});

test(
  'no WMS configured: run, resolve --retry and watch stop with exit 2 saying how to configure one; demo and --sandbox still work',
  { timeout: 120_000 },
  async () => {
    const { dir, flags } = await night('nowms', {});
    const env: Record<string, string> = { WMSBRIDGE_LOG_LEVEL: 'warn' };
    const clean = { ...process.env, ...env };
    delete clean['WMS_URL'];
    delete clean['WMS_ACCESS_KEY_ID'];
    delete clean['WMS_SECRET_KEY'];
    const before = await inboxFiles(join(dir, 'inbox'));
    for (const args of [['run'], ['resolve', '--retry', '--all'], ['watch']]) {
      const r = await runCli([...args, ...flags], { env: clean, timeoutMs: 30_000 });
      assert.equal(r.code, 2, `${args.join(' ')}: exit ${r.code}\n${r.stdout}\n${r.stderr}`);
      assert.match(r.stderr, /no WMS configured: set wms\.url .*--sandbox or wms\.url: sandbox/, args.join(' '));
    }
    assert.deepEqual(await inboxFiles(join(dir, 'inbox')), before, 'nothing claimed');
    // reading the journal needs no WMS
    const list = await runCli(['resolve', '--list', ...flags], { env: clean });
    assert.equal(list.code, 0, list.stderr);

    // the sandbox when asked: --sandbox delivers the samples to it
    const r = await runCli(['run', '--sandbox', ...flags], { env: clean, timeoutMs: 90_000 });
    assert.equal(r.code, 0, `${r.stdout}\n${r.stderr.slice(-2000)}`);
    // npm start (demo) needs nothing configured
    const demo = await runCli(['demo', '--state-dir', join(dir, 'demo-state')], { env: clean, timeoutMs: 90_000, cwd: PROJECT_ROOT });
    assert.equal(demo.code, 0, `${demo.stdout}\n${demo.stderr.slice(-2000)}`);
    assert.match(demo.stdout, /embedded sandbox/);
  },
);

test('the journal keeps the WMS it delivers to: another WMS is refused (exit 2) unless --wms-changed', { timeout: 120_000 }, async () => {
  const a = await startSandbox({ seed: 34 });
  const b = await startSandbox({ seed: 34 });
  try {
    const { dir, flags } = await night('moved', {});
    await writeFile(join(dir, 'inbox', 'cadastros', 'CATEGORIAS_20991231.csv'), 'codigo;descricao;situacao\r\nMOVED;MUDOU;A\r\n');
    const envFor = (sb: Sandbox) => ({ WMS_URL: sb.url, WMS_ACCESS_KEY_ID: sb.accessKeyID, WMS_SECRET_KEY: sb.secretKey, WMSBRIDGE_LOG_LEVEL: 'warn' });
    const first = await runCli(['run', ...flags], { env: envFor(a), timeoutMs: 90_000 });
    assert.equal(first.code, 0, first.stderr.slice(-2000));
    const other = await runCli(['resolve', '--retry', '--all', ...flags], { env: envFor(b) });
    assert.equal(other.code, 2, `${other.stdout}\n${other.stderr}`);
    assert.match(other.stderr, new RegExp(`delivers to ${a.url.replace(/[.]/g, '\\.')}.*pointed at ${b.url.replace(/[.]/g, '\\.')}.*--wms-changed`));
    const run = await runCli(['run', ...flags], { env: envFor(b) });
    assert.equal(run.code, 2, run.stderr);
    const moved = await runCli(['run', '--wms-changed', ...flags], { env: envFor(b) });
    assert.equal(moved.code, 0, moved.stderr.slice(-2000));
    const back = await runCli(['run', ...flags], { env: envFor(a) });
    assert.equal(back.code, 2, 'the journal now delivers to the new WMS');
  } finally {
    await a.close();
    await b.close();
  }
});

test(
  'SIGINT in the middle of a run: requests in flight settle, results and report written, nothing left sending, exit 130; the next run finishes',
  { timeout: 180_000 },
  async () => {
    const sb = await startSandbox({ seed: 35, latencyMs: 80 });
    try {
      const { dir, flags } = await night('sigint', { wms: { url: sb.url, accessKeyId: sb.accessKeyID }, sending: { concurrency: 2 } });
      const env = { WMS_SECRET_KEY: sb.secretKey, WMSBRIDGE_LOG_LEVEL: 'warn' };
      const { spawnCli } = await import('../helpers/cli.js');
      const child = spawnCli(['run', ...flags], { env: { ...env } });
      let stdout = '';
      let stderr = '';
      child.stdout?.on('data', (d: Buffer) => (stdout += d.toString()));
      child.stderr?.on('data', (d: Buffer) => (stderr += d.toString()));
      const exited = new Promise<number | null>((r) => child.on('close', (code) => r(code)));
      // wait until sending is under way
      const deadline = Date.now() + 60_000;
      for (;;) {
        const c = (await sandboxCall(sb, 'GET', '/__sandbox/counts')).json as { creations: Record<string, Record<string, number>> };
        const created = Object.values(c.creations).reduce((n, byKey) => n + Object.keys(byKey).length, 0);
        if (created >= 4) break;
        assert.ok(Date.now() < deadline, 'the run started sending');
        await new Promise((r) => setTimeout(r, 50)); // poll interval: the sandbox counts have no push
      }
      const signalledAt = Date.now();
      child.kill('SIGINT');
      const code = await exited;
      const tookMs = Date.now() - signalledAt;
      assert.equal(code, 130, `${stdout}\n${stderr.slice(-2000)}`);
      assert.ok(tookMs < 15_000, `stopped within the requests in flight (${tookMs} ms)`);
      assert.match(stdout, /interrompida \(SIGINT\): .*relatório .*report\.html \(exit 130\)/);
      const reports = (await readdir(join(dir, 'outbox', 'reports'))).filter((f) => !f.endsWith('.html'));
      assert.equal(reports.length, 1, 'the report is written');
      const st = await status(flags, env);
      assert.equal(st.records['sending'] ?? 0, 0, 'nothing left sending');
      assert.equal(st.records['in_doubt'] ?? 0, 0, 'nothing in doubt: every request in flight was settled');
      assert.ok((st.records['pending'] ?? 0) > 0, 'the rest waits, pending');
      assert.equal(st.records['rejected'] ?? 0, 0);

      const next = await runCli(['run', ...flags], { env, timeoutMs: 120_000 });
      assert.equal(next.code, 0, `${next.stdout}\n${next.stderr.slice(-2000)}`);
      const after = await status(flags, env);
      assert.equal(
        (after.records['pending'] ?? 0) + (after.records['held'] ?? 0) + (after.records['failed'] ?? 0) + (after.records['in_doubt'] ?? 0),
        0,
        JSON.stringify(after.records),
      );
      assert.deepEqual(await filesInError(join(dir, 'inbox')), []);
    } finally {
      await sb.close();
    }
  },
);

/** A config whose inbox is on a "share" that is not mounted (the folder does not exist). */
async function unmountedShare(name: string, sb: Sandbox, extra: Record<string, unknown> = {}): Promise<{ dir: string; share: string; config: string }> {
  const dir = join(tmp.dir, name);
  await mkdir(dir, { recursive: true });
  const share = join(dir, 'share');
  const config = join(dir, 'config.json');
  await writeFile(
    config,
    JSON.stringify({
      inboxDir: join(share, 'inbox'),
      outboxDir: join(dir, 'outbox'),
      stateDir: join(dir, 'state'),
      mappingsDir: join(PROJECT_ROOT, 'mappings'),
      channels: [{ name: 'cadastros', readiness: { mode: 'stable', checks: 1, intervalMs: 10 } }],
      wms: { url: sb.url, accessKeyId: sb.accessKeyID },
      watch: { metricsPort: 0, batchDelayMs: 100 },
      ...extra,
    }),
  );
  return { dir, share, config };
}

const exists = (p: string) =>
  stat(p).then(
    () => true,
    () => false,
  );

test('inbox share missing: run exits 2 naming the folder and creates nothing', { timeout: 60_000 }, async () => {
  const sb = await startSandbox({ seed: 36 });
  try {
    const { share, config } = await unmountedShare('missing-run', sb);
    const r = await runCli(['run', '--config', config], { env: { WMS_SECRET_KEY: sb.secretKey, WMSBRIDGE_LOG_LEVEL: 'warn' } });
    assert.equal(r.code, 2, `${r.stdout}\n${r.stderr}`);
    assert.ok(r.stderr.includes(join(share, 'inbox')), r.stderr);
    assert.match(r.stderr, /does not exist \(share not mounted\?\)/);
    assert.equal(await exists(share), false, 'nothing created where the share should be');
  } finally {
    await sb.close();
  }
});

test(
  'inbox share missing: watch answers SIGTERM at once, reports unhealthy, creates nothing, recovers when the share is back',
  { timeout: 90_000 },
  async () => {
    const sb = await startSandbox({ seed: 37 });
    const { spawnCli } = await import('../helpers/cli.js');
    // trace: the daemon logs each check of the inbox folders ('inbox folders checked'), the event the test waits on
    const env = { WMS_SECRET_KEY: sb.secretKey, WMSBRIDGE_LOG_LEVEL: 'trace' };
    const started: ReturnType<typeof spawnCli>[] = [];
    try {
      const { share, config } = await unmountedShare('missing-watch', sb);
      const start = (): {
        child: ReturnType<typeof spawnCli>;
        metrics: Promise<string>;
        exited: Promise<number | null>;
        err: () => string;
        log: LogWatch;
      } => {
        const child = spawnCli(['watch', '--config', config], { env });
        started.push(child);
        const log = watchLog(child.stderr!);
        let err = '';
        const metrics = new Promise<string>((resolve, reject) => {
          child.stderr?.on('data', (d: Buffer) => {
            err += d.toString();
            const m = /metrics (http:\/\/[^/\s]+)\/metrics/.exec(err);
            if (m) resolve(m[1]!);
          });
          child.on('close', () => reject(new Error(`watch exited early: ${err.slice(-2000)}`)));
        });
        const exited = new Promise<number | null>((r) => child.on('close', (code) => r(code)));
        return { child, metrics, exited, err: () => err, log };
      };

      // SIGTERM right after start-up, the share missing: answered within 2 s, or within the time the process took to
      // start when the machine is that loaded (a full suite on 2 cores: start-up itself then takes seconds, and so
      // does a process's exit); a watch that waited for the share would take its check interval or forever
      let t = Date.now();
      const early = start();
      early.metrics.catch(() => {});
      // once wmsbridge runs (its first log line: the share is missing), whatever it is doing
      await early.log.waitFor('watch to log the missing share', (l) => /inbox folder missing/.test(l.msg ?? ''), { timeoutMs: 15_000 });
      const startupMs = Date.now() - t;
      t = Date.now();
      early.child.kill('SIGTERM');
      const earlyCode = await early.exited;
      const exitMs = Date.now() - t;
      assert.ok(exitMs < Math.max(2000, startupMs), `SIGTERM answered in ${exitMs} ms (start-up took ${startupMs} ms)`);
      assert.ok(earlyCode === 0 || earlyCode === 143, `exit ${earlyCode}: ${early.err().slice(-1500)}`);

      const w = start();
      const base = await w.metrics;
      const health = async () => {
        const res = await fetch(`${base}/healthz`);
        return { status: res.status, body: (await res.json()) as { ok: boolean; inboxMissing?: string[] } };
      };
      const h1 = await health();
      assert.equal(h1.status, 503);
      assert.equal(h1.body.ok, false);
      assert.deepEqual(h1.body.inboxMissing, [join(share, 'inbox')]);
      assert.match(await (await fetch(`${base}/metrics`)).text(), /^wmsbridge_inbox_available 0$/m);
      // a few checks later: not a pause of a guessed length but two more checks the daemon logged, each finding
      // the share still missing (on a loaded machine a fixed pause may cover no check at all)
      await w.log.waitFor(
        'two more checks of the missing inbox',
        (l) => l.msg === 'inbox folders checked' && Array.isArray(l['missing']) && l['missing'].length > 0,
        { from: w.log.mark(), n: 2, timeoutMs: 30_000 },
      );
      assert.equal(await exists(share), false, 'nothing created where the share should be');

      // the share is mounted again, with a file in it
      await mkdir(join(share, 'inbox', 'cadastros'), { recursive: true });
      await cp(join(PROJECT_ROOT, 'inbox', 'cadastros', 'CATEGORIAS_20241105.csv'), join(share, 'inbox', 'cadastros', 'CATEGORIAS_20241105.csv'));
      const deadline = Date.now() + 30_000;
      for (;;) {
        const c = (await sandboxCall(sb, 'GET', '/__sandbox/counts')).json as { creations: Record<string, Record<string, number>> };
        if (Object.keys(c.creations['Category'] ?? {}).length > 0) break;
        assert.ok(Date.now() < deadline, `the file was processed after recovery\n${w.err().slice(-2000)}`);
        await new Promise((r) => setTimeout(r, 100)); // poll interval: the sandbox counts have no push
      }
      const h2 = await health();
      assert.equal(h2.status, 200, JSON.stringify(h2.body));
      assert.match(await (await fetch(`${base}/metrics`)).text(), /^wmsbridge_inbox_available 1$/m);

      t = Date.now();
      w.child.kill('SIGTERM');
      const code = await w.exited;
      assert.ok(Date.now() - t < 2000, `SIGTERM answered in ${Date.now() - t} ms`);
      assert.ok(code === 0 || code === 143, `exit ${code}`);
    } finally {
      // a failed assertion leaves a watch running, and the file would never end
      for (const c of started) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
      await sb.close();
    }
  },
);

test(
  'a throttling WMS (429 + Retry-After: 1): no request arrives inside a Retry-After window, and the night still finishes',
  { timeout: 180_000 },
  async () => {
    const sb = await startSandbox({ seed: 38, latencyMs: 20 });
    try {
      // one tier of 600 categories: 16 requests in flight all the time, so a client that let the others go on
      // during a Retry-After would show here
      const d = join(tmp.dir, 'throttled');
      await mkdir(join(d, 'inbox', 'cadastros'), { recursive: true });
      await mkdir(join(d, 'mappings'));
      await writeFile(
        join(d, 'mappings', 'cat.yaml'),
        'name: cat\nmatch: { channel: cadastros, files: "CAT_*.csv" }\nsource: { format: delimited, delimiter: ";" }\ntarget: Category\nfields:\n  codeERP: { col: codigo }\n  name: { col: nome }\n',
      );
      const rows = Array.from({ length: 600 }, (_, i) => `T${i};Categoria ${i}`).join('\n');
      await writeFile(join(d, 'inbox', 'cadastros', 'CAT_throttle.csv'), `codigo;nome\n${rows}\n`);
      await writeFile(
        join(d, 'config.json'),
        JSON.stringify({
          inboxDir: join(d, 'inbox'),
          outboxDir: join(d, 'outbox'),
          stateDir: join(d, 'state'),
          mappingsDir: join(d, 'mappings'),
          channels: [{ name: 'cadastros', readiness: { mode: 'stable', checks: 1, intervalMs: 10 } }],
          wms: { url: sb.url, accessKeyId: sb.accessKeyID, retries: 8, connections: 16 },
          sending: { concurrency: 16 },
        }),
      );
      const env = { WMS_SECRET_KEY: sb.secretKey, WMSBRIDGE_LOG_LEVEL: 'warn' };
      sb.setFaults({ rate429: 0.02 });
      const r = await runCli(['run', '--config', join(d, 'config.json')], { env, timeoutMs: 150_000 });
      sb.setFaults({ rate429: 0 });
      assert.equal(r.code, 0, `${r.stdout}\n${r.stderr.slice(-2000)}`);
      assert.match(r.stdout, /600 criados/);
      const stats = (await sandboxCall(sb, 'GET', '/__sandbox/counts')).json.stats as { retryAfter: { windows: number; inside: number } };
      assert.ok(stats.retryAfter.windows >= 3, `the WMS throttled the run (${stats.retryAfter.windows} windows)`);
      // the sandbox counts requests that arrived more than 250 ms into a 1 s Retry-After window (the grace is
      // for requests already on their way when the 429 left)
      const late = ((await sandboxCall(sb, 'GET', '/__sandbox/retry-after')).json as Array<{ inside: Array<{ at: number; method: string; path: string }> }>)
        .flatMap((w) => w.inside)
        .filter((r) => r.at >= 250)
        .map((r) => `${r.method} ${r.path} ${r.at.toFixed(1)} ms into a window`);
      assert.equal(
        stats.retryAfter.inside,
        0,
        `${stats.retryAfter.inside} request(s) arrived inside one of ${stats.retryAfter.windows} Retry-After windows: ${late.join('; ')}`,
      );
    } finally {
      await sb.close();
    }
  },
);

test('a configuration error or an unexpected error is one line on stderr, exit 2 (the stack only at debug level)', { timeout: 60_000 }, async () => {
  const { dir, flags } = await night('oneline', { channels: [{ name: 'cadastros', readiness: { mode: 'stable', intervalMs: 0 } }], wms: { url: 'sandbox' } });
  const r = await runCli(['run', ...flags], { env: { WMSBRIDGE_LOG_LEVEL: 'warn' } });
  assert.equal(r.code, 2, r.stderr);
  assert.match(r.stderr, /channels\[0\]\.readiness\.intervalMs/);
  assert.doesNotMatch(r.stderr, /^\s+at /m, 'no stack trace');
  // an unexpected error (the state folder is a file): one line, its stack only at debug level
  await writeFile(join(dir, 'state-file'), 'not a folder');
  const flagsFileState = flags.map((f) => (f === join(dir, 'state') ? join(dir, 'state-file') : f));
  await writeFile(join(dir, 'config.json'), JSON.stringify({ wms: { url: 'sandbox' } }));
  const u = await runCli(['run', ...flagsFileState], { env: { WMSBRIDGE_LOG_LEVEL: 'warn' } });
  assert.equal(u.code, 2, u.stderr);
  assert.equal(
    u.stderr
      .trim()
      .split('\n')
      .filter((l) => l.startsWith('wmsbridge run:')).length,
    1,
    u.stderr,
  );
  assert.doesNotMatch(u.stderr, /^\s+at /m, u.stderr);
  const d = await runCli(['run', ...flagsFileState, '--log-level', 'debug'], { env: {} });
  assert.equal(d.code, 2);
  assert.match(d.stderr, /^\s+at /m, 'the stack at debug level');
});

test(
  'safe by default: state 0700, journal 0600, outbox files 0640 (outbox.fileMode); the receiver refuses a network address without a secret',
  { timeout: 90_000 },
  async () => {
    const { dir, flags } = await night('modes', { wms: { url: 'sandbox' } });
    const r = await runCli(['run', ...flags], { env: { WMSBRIDGE_LOG_LEVEL: 'warn' }, timeoutMs: 60_000 });
    assert.equal(r.code, 0, r.stderr.slice(-2000));
    const mode = async (p: string) => ((await stat(p)).mode & 0o777).toString(8);
    assert.equal(await mode(join(dir, 'state')), '700');
    assert.equal(await mode(join(dir, 'state', 'journal.db')), '600');
    const results = (await readdir(join(dir, 'outbox'), { recursive: true })).map(String).filter((p) => p.endsWith('.csv'));
    assert.ok(results.length > 0);
    for (const f of results) assert.equal(await mode(join(dir, 'outbox', f)), '640', f);
    // a share whose group must write: outbox.fileMode
    const g = await night('modes-group', { wms: { url: 'sandbox' }, outbox: { fileMode: '0660' } });
    const rg = await runCli(['run', ...g.flags], { env: { WMSBRIDGE_LOG_LEVEL: 'warn' }, timeoutMs: 60_000 });
    assert.equal(rg.code, 0, rg.stderr.slice(-2000));
    const anyCsv = (await readdir(join(g.dir, 'outbox'), { recursive: true })).map(String).find((p) => p.endsWith('.csv'))!;
    const expected = (0o660 & ~process.umask()).toString(8);
    assert.equal(await mode(join(g.dir, 'outbox', anyCsv)), expected);

    // the webhook receiver on 0.0.0.0 without a secret: refused (exit 2), unless --insecure
    const hook = await runCli(['webhooks', '--host', '0.0.0.0', '--port', '0', '--state-dir', join(dir, 'state-hooks'), '--outbox', join(dir, 'outbox')], {
      timeoutMs: 30_000,
    });
    assert.equal(hook.code, 2, hook.stderr);
    assert.match(hook.stderr, /0\.0\.0\.0 is reachable from the network and no secret is set/);
    const { spawnCli } = await import('../helpers/cli.js');
    const child = spawnCli(
      ['webhooks', '--host', '0.0.0.0', '--port', '0', '--insecure', '--state-dir', join(dir, 'state-hooks'), '--outbox', join(dir, 'outbox')],
      { env: { WMSBRIDGE_LOG_LEVEL: 'warn' } },
    );
    let err = '';
    await new Promise<void>((resolve, reject) => {
      child.stderr?.on('data', (d: Buffer) => {
        err += d.toString();
        if (/listening on/.test(err)) resolve();
      });
      child.on('close', () => reject(new Error(`webhooks --insecure exited: ${err}`)));
    });
    const closed = new Promise((r) => child.on('close', r));
    child.kill('SIGTERM');
    await closed;
  },
);

test('watch through an outage: nothing rejected while the WMS is down, everything delivered once it answers again', { timeout: 120_000 }, async () => {
  let sb: Sandbox = await startSandbox({ seed: 39 });
  const port = Number(new URL(sb.url).port);
  const creds = { accessKeyID: sb.accessKeyID, secretKey: sb.secretKey };
  await sb.close();
  const { spawnCli } = await import('../helpers/cli.js');
  const dir = join(tmp.dir, 'watch-outage');
  await mkdir(join(dir, 'inbox', 'cadastros'), { recursive: true });
  const config = join(dir, 'config.json');
  await writeFile(
    config,
    JSON.stringify({
      inboxDir: join(dir, 'inbox'),
      outboxDir: join(dir, 'outbox'),
      stateDir: join(dir, 'state'),
      mappingsDir: join(PROJECT_ROOT, 'mappings'),
      channels: [{ name: 'cadastros', readiness: { mode: 'stable', checks: 1, intervalMs: 10 } }],
      wms: { url: `http://127.0.0.1:${port}`, accessKeyId: creds.accessKeyID, retries: 1, timeoutMs: 2000, circuitBreaker: { failures: 3, cooldownMs: 500 } },
      watch: { batchDelayMs: 100 },
    }),
  );
  const env = { WMS_SECRET_KEY: creds.secretKey, WMSBRIDGE_LOG_LEVEL: 'info' };
  const child = spawnCli(['watch', '--config', config], { env });
  let err = '';
  child.stderr?.on('data', (d: Buffer) => (err += d.toString()));
  const exited = new Promise<number | null>((r) => child.on('close', (code) => r(code)));
  try {
    for (const f of ['CATEGORIAS_20241105.csv', 'FAMILIAS_20241105.csv'])
      await cp(join(PROJECT_ROOT, 'inbox', 'cadastros', f), join(dir, 'inbox', 'cadastros', f));
    // a batch ran against the dead WMS: exit 75, nothing rejected
    for (let i = 0; !/"exitCode":75/.test(err); i++) {
      assert.ok(i < 400, `a batch ends with exit 75 while the WMS is down\n${err.slice(-3000)}`);
      await new Promise((r) => setTimeout(r, 50)); // poll interval of a wait on the log line
    }
    assert.doesNotMatch(err, /"exitCode":1\b/);
    assert.deepEqual(await filesInError(join(dir, 'inbox')), []);
    // the WMS answers again: the daemon delivers by itself (its resume pass, every 15 s at most)
    sb = await startSandbox({ seed: 39, port });
    const deadline = Date.now() + 60_000;
    for (;;) {
      const c = (await sandboxCall(sb, 'GET', '/__sandbox/counts')).json as { creations: Record<string, Record<string, number>> };
      if (Object.keys(c.creations['Family'] ?? {}).length > 0 && (await inboxFiles(join(dir, 'inbox'))).length === 0) {
        const st = await status(['--config', config], env);
        if ((st.records['pending'] ?? 0) + (st.records['held'] ?? 0) === 0) {
          assert.equal(st.records['rejected'] ?? 0, 0);
          assert.equal(st.records['failed'] ?? 0, 0);
          break;
        }
      }
      assert.ok(Date.now() < deadline, `delivered after the WMS came back\n${err.slice(-3000)}`);
      await new Promise((r) => setTimeout(r, 250)); // poll interval: status is read by a CLI run
    }
  } finally {
    child.kill('SIGTERM');
    await exited;
    await sb.close();
  }
});
