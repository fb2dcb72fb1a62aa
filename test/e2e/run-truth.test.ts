/**
 * Issue 42: what people read is true on every surface. Three nights through the CLI (a child process) against the
 * real sandbox, read as the operator and the accountant read them: the exit code, the JSON log on stderr, the
 * report's first screen (latest.html), the workbook's summary sheet and /metrics, in pt-BR (the default).
 *   - `run` stopped by SIGTERM mid-send: 143, "Interrompida (SIGTERM)", how many not sent yet, "execute de novo";
 *     the next run reports what it did (not the records the stopped run created).
 *   - `watch` stopped by SIGTERM mid-send: its batch is interrupted (never "Tudo entregue", never exitCode 0 in the
 *     log); restarted, the pending records resume at start and its report counts only what it sent.
 *   - a file with rows rejected while mapping and rows refused by the WMS: /metrics counts both, as the journal does.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { copyFile, cp, mkdir, readdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { spawn, type ChildProcess } from 'node:child_process';
import ExcelJS from 'exceljs';
import { request } from 'undici';
import { makeTempDir } from '../helpers/tmp.js';
import { PROJECT_ROOT, runCli, spawnCli, workspaceFlags } from '../helpers/cli.js';
import { startSandbox, sandboxCall, type Sandbox } from '../helpers/sandbox.js';
import type { RunSummary } from '../../src/outbox/types.js';

let tmp: { dir: string; cleanup: () => Promise<void> };
const children: ChildProcess[] = [];

before(async () => {
  tmp = await makeTempDir('wmsbridge-e2e-truth-');
});

after(async () => {
  for (const c of children) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
  await tmp?.cleanup();
});

const CATEGORY_MAPPING = `name: categorias\nmatch: { channel: categorias, files: "CAT_*.csv" }\nsource: { format: delimited, delimiter: ';', header: false, columns: [codigo, nome] }\ntarget: Category\nfields:\n  codeERP: { col: codigo }\n  name: { col: nome }\n`;

function categoryRows(prefix: string, n: number): string {
  let s = '';
  for (let i = 0; i < n; i++) s += `${prefix}${i};Categoria ${prefix} ${i}\n`;
  return s;
}

/** A workspace with one channel `categorias` (Category rows) and the flags of a run over it. */
async function categoryNight(name: string, sb: Sandbox, extra: Record<string, unknown> = {}): Promise<{ dir: string; flags: string[] }> {
  const dir = join(tmp.dir, name);
  await mkdir(join(dir, 'inbox', 'categorias'), { recursive: true });
  await mkdir(join(dir, 'mappings'), { recursive: true });
  await writeFile(join(dir, 'mappings', 'categorias.yaml'), CATEGORY_MAPPING);
  await writeFile(
    join(dir, 'config.json'),
    JSON.stringify({
      channels: [{ name: 'categorias', readiness: { mode: 'stable', checks: 1, intervalMs: 20 } }],
      wms: { url: sb.url, accessKeyId: sb.accessKeyID },
      sending: { concurrency: 2 },
      ...extra,
    }),
  );
  return { dir, flags: ['--config', join(dir, 'config.json'), ...workspaceFlags(dir, join(dir, 'mappings'))] };
}

async function createdCount(sb: Sandbox, prefix: string): Promise<number> {
  const c = (await sandboxCall(sb, 'GET', '/__sandbox/counts')).json as { creations: Record<string, Record<string, number>> };
  return Object.keys(c.creations['Category'] ?? {}).filter((k) => k.startsWith(prefix)).length;
}

async function until<T>(what: string, fn: () => Promise<T | undefined | false>, log: () => string, timeoutMs = 60_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await fn();
    if (v) return v;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}\n${log().slice(-3000)}`);
    await new Promise((r) => setTimeout(r, 50)); // poll interval of a wait on a condition
  }
}

/** `wmsbridge watch` started and announcing itself; `out.stderr` grows with what it writes. */
async function startedWatch(flags: string[], env: Record<string, string>, what = 'watch to start'): Promise<{ child: ChildProcess; out: { stderr: string } }> {
  const out = { stderr: '' };
  const child = spawnCli(['watch', ...flags], { env });
  children.push(child);
  child.stderr?.on('data', (d: Buffer) => (out.stderr += d.toString()));
  await until(
    what,
    async () => /wmsbridge watch: watching/.test(out.stderr),
    () => out.stderr,
  );
  return { child, out };
}

/** The keys of a JSON object's top level, in order, as written (JSON.parse keeps only the last of a repeated key). */
function topLevelKeys(line: string): string[] {
  const keys: string[] = [];
  let depth = 0;
  for (let i = 0; i < line.length; i++) {
    const c = line[i];
    if (c === '"') {
      let j = i + 1;
      while (line[j] !== '"') j += line[j] === '\\' ? 2 : 1;
      if (depth === 1 && line[j + 1] === ':') keys.push(line.slice(i + 1, j));
      i = j;
    } else if (c === '{' || c === '[') depth++;
    else if (c === '}' || c === ']') depth--;
  }
  return keys;
}

/** Every line of the CLI's stderr off a TTY: one JSON object (what `jq` reads), no key twice. */
function jsonLines(stderr: string): Array<Record<string, unknown>> {
  return stderr
    .split('\n')
    .filter((l) => l.trim() !== '')
    .map((l) => {
      let obj: Record<string, unknown>;
      try {
        obj = JSON.parse(l) as Record<string, unknown>;
      } catch {
        assert.fail(`a stderr line that is not JSON (jq would stop here): ${l.slice(0, 300)}`);
      }
      const keys = topLevelKeys(l);
      assert.equal(new Set(keys).size, keys.length, `a key twice in: ${l.slice(0, 400)}`);
      return obj;
    });
}

/** The report folders (oldest first) and their summaries. */
async function summaries(outbox: string): Promise<Array<{ dir: string; summary: RunSummary }>> {
  const reports = join(outbox, 'reports');
  const dirs = (await readdir(reports, { withFileTypes: true }).catch(() => [])).filter((d) => d.isDirectory()).map((d) => d.name);
  const out: Array<{ dir: string; summary: RunSummary }> = [];
  for (const d of dirs.sort()) {
    const text = await readFile(join(reports, d, 'summary.json'), 'utf8').catch(() => null);
    if (text) out.push({ dir: join(reports, d), summary: JSON.parse(text) as RunSummary });
  }
  return out;
}

/** The first screen of a report page: the status badge and "what happened and what to do", as text. */
function firstScreen(html: string): string {
  const start = html.indexOf('<div class="status');
  const end = html.indexOf('</section>', start);
  assert.ok(start > 0 && end > start, 'the report has a status and a first section');
  return html
    .slice(start, end)
    .replace(/<[^>]+>/g, ' ')
    .replace(/&#39;/g, "'")
    .replace(/&quot;/g, '"')
    .replace(/&amp;/g, '&')
    .replace(/\s+/g, ' ');
}

/** The workbook's summary sheet: metric -> value. */
async function workbookSummary(reportDir: string): Promise<Map<string, unknown>> {
  const wb = new ExcelJS.Workbook();
  await wb.xlsx.readFile(join(reportDir, 'report.xlsx'));
  const ws = wb.getWorksheet('Resumo');
  assert.ok(ws, `sheets: ${wb.worksheets.map((w) => w.name).join(', ')}`);
  const m = new Map<string, unknown>();
  ws.eachRow((row) => {
    const v = row.values as unknown[];
    m.set(String(v[1]), v[2]);
  });
  return m;
}

async function journalStatus(flags: string[], env: Record<string, string>): Promise<Record<string, number>> {
  const r = await runCli(['status', '--json', ...flags], { env });
  assert.equal(r.code, 0, r.stderr);
  return (JSON.parse(r.stdout) as { records: Record<string, number> }).records;
}

test('run interrupted by SIGTERM: 143, and every surface says interrupted, how many wait, and "run again"', { timeout: 240_000 }, async () => {
  const sb = await startSandbox({ seed: 42, latencyMs: 60 });
  try {
    const { dir, flags } = await categoryNight('run-sigterm', sb);
    await writeFile(join(dir, 'inbox', 'categorias', 'CAT_noite.csv'), categoryRows('R', 300));
    const env = { WMS_SECRET_KEY: sb.secretKey, WMSBRIDGE_LOG_LEVEL: 'info' };
    const child = spawnCli(['run', ...flags], { env });
    children.push(child);
    let stdout = '';
    let stderr = '';
    child.stdout?.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr?.on('data', (d: Buffer) => (stderr += d.toString()));
    const exited = new Promise<number | null>((r) => child.on('close', (code) => r(code)));
    await until(
      'sending to start',
      async () => (await createdCount(sb, 'R')) >= 4,
      () => stderr,
    );
    child.kill('SIGTERM');
    const code = await exited;
    assert.equal(code, 143, `${stdout}\n${stderr.slice(-2000)}`);
    const records = await journalStatus(flags, env);
    const pending = (records['pending'] ?? 0) + (records['sending'] ?? 0);
    assert.ok(pending > 0, `records wait for the next run: ${JSON.stringify(records)}`);

    // the command's line and the log: the same verdict
    assert.match(stdout, /interrompida \(SIGTERM\): .* \(exit 143\)/);
    const log = jsonLines(stderr);
    const summaryLog = log.find((l) => l['outcome'] !== undefined);
    assert.ok(summaryLog, `a summary line in the log:\n${stderr.slice(-2000)}`);
    assert.equal(summaryLog['exitCode'], 143);
    assert.equal(summaryLog['outcome'], 'interrupted');
    assert.equal(summaryLog['notSent'], pending);
    assert.match(String(summaryLog['msg']), /^interrupted \(SIGTERM\): /);

    // the report: the JSON's verdict, the first screen of latest.html, the workbook's summary
    const [first] = await summaries(join(dir, 'outbox'));
    assert.ok(first);
    assert.deepEqual(first.summary.verdict, { kind: 'interrupted', exitCode: 143, signal: 'SIGTERM', notSent: pending });
    const screen = firstScreen(await readFile(join(dir, 'outbox', 'reports', 'latest.html'), 'utf8'));
    assert.match(screen, new RegExp(`Interrompida \\(SIGTERM\\): ${pending} registros ainda não enviados`));
    assert.match(screen, /execute de novo \(`wmsbridge run`\)/);
    assert.doesNotMatch(screen, /Tudo entregue|Tudo foi entregue|falhou/);
    const wb = await workbookSummary(first.dir);
    assert.equal(wb.get('código de saída'), 143);
    assert.match(String(wb.get('situação')), /^Interrompida \(SIGTERM\): \d+ registros ainda não enviados/);

    // the next run sends the rest and reports what IT did: not the records the stopped run created
    const createdBefore = first.summary.totals.created;
    assert.equal(createdBefore, await createdCount(sb, 'R'), 'the stopped run counted what it created');
    const next = await runCli(['run', ...flags], { env, timeoutMs: 120_000 });
    assert.equal(next.code, 0, `${next.stdout}\n${next.stderr.slice(-2000)}`);
    const second = (await summaries(join(dir, 'outbox'))).at(-1)!;
    assert.equal(await createdCount(sb, 'R'), 300);
    assert.equal(second.summary.totals.created, 300 - createdBefore, 'the resumed run counts the records it created');
    assert.equal(second.summary.files[0]?.earlier, createdBefore, 'and says how many an earlier run settled');
    assert.equal(second.summary.verdict?.kind, 'delivered');
    assert.match(firstScreen(await readFile(join(dir, 'outbox', 'reports', 'latest.html'), 'utf8')), /Tudo entregue/);
  } finally {
    await sb.close();
  }
});

test(
  'watch stopped by SIGTERM mid-send: its batch is interrupted on every surface; restarted, it resumes at start and counts only what it sent',
  { timeout: 240_000 },
  async () => {
    const sb = await startSandbox({ seed: 43, latencyMs: 40 });
    try {
      const { dir, flags } = await categoryNight('watch-sigterm', sb, { watch: { batchDelayMs: 100, metricsPort: 0 } });
      const env = { WMS_SECRET_KEY: sb.secretKey, WMSBRIDGE_LOG_LEVEL: 'info' };
      const { child: watch, out } = await startedWatch(flags, env);
      await writeFile(join(dir, 'inbox', 'categorias', 'CAT_grande.csv'), categoryRows('W', 600));
      await until(
        'sending to start',
        async () => (await createdCount(sb, 'W')) >= 20,
        () => out.stderr,
      );
      const url = /metrics (http:\/\/[^/\s]+)\/metrics/.exec(out.stderr)?.[1];
      assert.ok(url, 'metrics URL announced');
      watch.kill('SIGTERM');
      assert.equal(await new Promise<number | null>((r) => watch.once('close', (c) => r(c))), 0, 'the daemon stops cleanly');
      const records = await journalStatus(flags, env);
      const pending = records['pending'] ?? 0;
      assert.ok(pending > 0, JSON.stringify(records));

      const log = jsonLines(out.stderr);
      const batch = log.find((l) => l['outcome'] !== undefined);
      assert.ok(batch, `the batch's summary line:\n${out.stderr.slice(-2000)}`);
      assert.equal(batch['exitCode'], 143, 'never exitCode 0 for a batch stopped mid-send');
      assert.equal(batch['outcome'], 'interrupted');
      assert.equal(batch['notSent'], pending);
      assert.ok(!log.some((l) => /no WMS configured/.test(String(l['msg']))), 'a WMS is configured');

      const [stopped] = await summaries(join(dir, 'outbox'));
      assert.ok(stopped);
      assert.equal(stopped.summary.verdict?.kind, 'interrupted');
      assert.equal(stopped.summary.exitCode, 143);
      const screen = firstScreen(await readFile(join(dir, 'outbox', 'reports', 'latest.html'), 'utf8'));
      assert.doesNotMatch(screen, /Tudo entregue|Tudo foi entregue/);
      assert.match(screen, new RegExp(`Interrompida \\(SIGTERM\\): ${pending} registros ainda não enviados`));
      assert.match(screen, /quando o `wmsbridge watch` voltar a rodar/);
      assert.match(String((await workbookSummary(stopped.dir)).get('situação')), /^Interrompida \(SIGTERM\)/);
      const createdBefore = stopped.summary.totals.created;
      assert.equal(createdBefore, await createdCount(sb, 'W'));

      // restarted: what was left resumes at start (the periodic look for resumable files comes half a lease, 15 s, later)
      const { child: again, out: out2 } = await startedWatch(flags, env, 'watch to start again');
      const startedAt = Date.now();
      const resumed = await until(
        'the resumed batch',
        async () => (await summaries(join(dir, 'outbox'))).find((s) => s.summary.verdict?.kind === 'delivered'),
        () => out2.stderr,
      );
      assert.ok(Date.parse(resumed.summary.startedAt) - startedAt < 15_000, 'the resume started before the first periodic check');
      assert.equal(await createdCount(sb, 'W'), 600);
      assert.equal(resumed.summary.totals.created, 600 - createdBefore, 'the resumed batch counts what it created, not the 4 before the stop');
      again.kill('SIGTERM');
      await new Promise((r) => again.once('close', r));
      jsonLines(out2.stderr);
    } finally {
      await sb.close();
    }
  },
);

test('a file with map-time and send-time rejects: /metrics counts every reject the journal holds', { timeout: 240_000 }, async () => {
  const sb = await startSandbox({ seed: 44 });
  try {
    const dir = join(tmp.dir, 'rejects');
    const channel = join(dir, 'inbox', 'cadastros');
    await mkdir(channel, { recursive: true });
    // the shipped sample master data (the project's own inbox), products with four bad rows: two the mapping rejects
    // (an NCM with a letter, a weight that is not a number), two the WMS refuses (a unit it does not have)
    for (const f of ['CATEGORIAS', 'FAMILIAS', 'UNIDADES', 'DEPOSITANTES'])
      await copyFile(join(PROJECT_ROOT, 'inbox', 'cadastros', `${f}_20241105.csv`), join(channel, `${f}_20241105.csv`));
    const rows = (await readFile(join(PROJECT_ROOT, 'inbox', 'cadastros', 'PRODUTOS_20241105.csv'), 'latin1')).split('\n');
    const set = (i: number, col: number, v: string): void => {
      const cells = rows[i]!.split(';');
      cells[col] = v;
      rows[i] = cells.join(';');
    };
    set(1, 6, '1006302X');
    set(2, 7, 'abc');
    set(5, 4, 'ZZ');
    set(6, 4, 'QQ');
    await writeFile(join(channel, 'PRODUTOS_20241105.csv'), rows.join('\n'), 'latin1');
    await writeFile(
      join(dir, 'config.json'),
      JSON.stringify({
        channels: [{ name: 'cadastros', readiness: { mode: 'stable', checks: 1, intervalMs: 20 } }],
        wms: { url: sb.url, accessKeyId: sb.accessKeyID },
        watch: { batchDelayMs: 100, metricsPort: 0 },
      }),
    );
    const flags = ['--config', join(dir, 'config.json'), ...workspaceFlags(dir)];
    const env = { WMS_SECRET_KEY: sb.secretKey, WMSBRIDGE_LOG_LEVEL: 'info' };
    const { child: watch, out } = await startedWatch(flags, env);
    const url = /metrics (http:\/\/[^/\s]+)\/metrics/.exec(out.stderr)?.[1];
    // every file of the night finished (five files, in one batch or more) and its batch counted
    const text = await until(
      'the five files done and their batches counted',
      async () => {
        const t = await (await request(`${url}/metrics`)).body.text();
        return /^wmsbridge_files\{status="done"\} 5$/m.test(t) && /^wmsbridge_runs_total\{status="attention"\} [1-9]/m.test(t) ? t : undefined;
      },
      () => out.stderr,
    );
    const done = await summaries(join(dir, 'outbox'));
    const settled = (outcome: string): number =>
      [...text.matchAll(new RegExp(`^wmsbridge_records_settled_total\\{target="[^"]+",outcome="${outcome}"\\} (\\d+)$`, 'gm'))].reduce(
        (n, m) => n + Number(m[1]),
        0,
      );
    watch.kill('SIGTERM');
    await new Promise((r) => watch.once('close', r));

    const records = await journalStatus(flags, env);
    assert.equal(records['rejected'], 4, JSON.stringify(records));
    assert.equal(
      settled('rejected'),
      records['rejected'],
      `/metrics counts the map-time rejects too:\n${text
        .split('\n')
        .filter((l) => l.includes('settled'))
        .join('\n')}`,
    );
    const all = [...text.matchAll(/^wmsbridge_records_settled_total\{[^}]*\} (\d+)$/gm)].reduce((n, m) => n + Number(m[1]), 0);
    assert.equal(all, (records['sent'] ?? 0) + (records['rejected'] ?? 0), 'every record of the night settled once: sent or rejected');
    // the same night in the report and the log: 4 rejected, exit 1
    const totals = done.reduce((n, s) => n + s.summary.totals.rejected, 0);
    assert.equal(totals, 4);
    const product = done.find((s) => s.summary.files.some((f) => f.name.startsWith('PRODUTOS')))!;
    assert.equal(product.summary.verdict?.kind, 'attention');
    assert.equal((await workbookSummary(product.dir)).get('Recusados'), 4);
    const lines = jsonLines(out.stderr).filter((l) => l['outcome'] !== undefined);
    assert.ok(
      lines.some((l) => l['outcome'] === 'attention' && l['exitCode'] === 1),
      JSON.stringify(lines),
    );
  } finally {
    await sb.close();
  }
});

function envNoWms(): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env, WMSBRIDGE_LOG_LEVEL: 'warn' };
  for (const k of ['WMS_URL', 'WMS_ACCESS_KEY_ID', 'WMS_SECRET_KEY', 'WMSBRIDGE_CONFIG']) delete env[k];
  return env;
}

test('check says what run will stop on: no WMS configured is exit 2 for both, unless the sandbox is asked for', { timeout: 120_000 }, async () => {
  const dir = join(tmp.dir, 'check');
  await mkdir(join(dir, 'inbox', 'categorias'), { recursive: true });
  await mkdir(join(dir, 'mappings'), { recursive: true });
  await writeFile(join(dir, 'mappings', 'categorias.yaml'), CATEGORY_MAPPING);
  const flags = workspaceFlags(dir, join(dir, 'mappings'));
  const env = envNoWms();
  const check = await runCli(['check', ...flags], { cwd: dir, env });
  assert.equal(check.code, 2, `${check.stdout}\n${check.stderr}`);
  assert.match(check.stderr, /wms: no WMS configured: .* --sandbox or wms\.url: sandbox \(`wmsbridge run` stops here with exit 2\)/);
  assert.doesNotMatch(check.stdout, /^ok:/m);
  const run = await runCli(['run', ...flags], { cwd: dir, env });
  assert.equal(run.code, 2, 'run stops where check said');
  const sandboxed = await runCli(['check', '--sandbox', ...flags], { cwd: dir, env });
  assert.equal(sandboxed.code, 0, `${sandboxed.stdout}\n${sandboxed.stderr}`);
  assert.match(sandboxed.stdout, /wms: the embedded sandbox \(as asked/);
  assert.match(sandboxed.stdout, /^ok: configuration and mappings are valid$/m);
  // asked for, the sandbox is not "no WMS configured" in the log
  const runSandbox = await runCli(['run', '--sandbox', ...flags], { cwd: dir, env: { ...env, WMSBRIDGE_LOG_LEVEL: 'info' } });
  assert.equal(runSandbox.code, 0, runSandbox.stderr.slice(-2000));
  const log = jsonLines(runSandbox.stderr);
  assert.ok(!log.some((l) => /no WMS configured/.test(String(l['msg']))), 'the sandbox was asked for');
  assert.ok(log.some((l) => /using the embedded sandbox \(as asked/.test(String(l['msg']))));
});

test("the demo's next: hints are commands that work as written", { timeout: 240_000 }, async () => {
  const dir = join(tmp.dir, 'demo');
  await mkdir(dir, { recursive: true });
  await cp(join(PROJECT_ROOT, 'inbox'), join(dir, 'inbox'), { recursive: true, filter: (s) => !s.includes('.wmsbridge') });
  await cp(join(PROJECT_ROOT, 'mappings'), join(dir, 'mappings'), { recursive: true });
  const env = envNoWms();
  const demo = await runCli(['demo'], { cwd: dir, env });
  assert.equal(demo.code, 0, `${demo.stdout}\n${demo.stderr.slice(-2000)}`);
  const next = /next: (.*)$/m.exec(demo.stdout)?.[1] ?? '';
  const commands = [...next.matchAll(/`([^`]+)`/g)].map((m) => m[1]!);
  assert.ok(commands.length >= 2, `hints: ${next}`);
  assert.ok(
    commands.every((c) => !c.startsWith('npx ')),
    `no npx (it fetches a package of that name outside an install): ${next}`,
  );
  for (const c of commands.filter((x) => / (status|run)\b/.test(x))) {
    const [cmd, ...args] = c.split(' ');
    assert.equal(cmd, 'node');
    const r = await new Promise<{ code: number | null; out: string }>((resolve) => {
      const p = spawn(process.execPath, args, { cwd: dir, env: { ...env, WMSBRIDGE_LOG_PRETTY: '0' }, stdio: ['ignore', 'pipe', 'pipe'] });
      let out = '';
      p.stdout.on('data', (d: Buffer) => (out += d.toString()));
      p.stderr.on('data', (d: Buffer) => (out += d.toString()));
      p.on('close', (code) => resolve({ code, out }));
    });
    assert.equal(r.code, 0, `\`${c}\` works as written: ${r.out.slice(-2000)}`);
  }
});
