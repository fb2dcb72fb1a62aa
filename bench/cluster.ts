/**
 * Several instances: records/s with 1, 2 and 3 `wmsbridge run` processes sharing one inbox and one
 * PostgreSQL journal, against the sandbox (child process) with 20 ms added latency. Each instance sends
 * with concurrency 8, so one instance's Little's-law bound is 8 / 0.020 = 400 records/s and n instances'
 * is n x 400: the figure is how close the cluster gets to n x the single-instance rate. Two drops: several
 * files (shared out by file), and one big file (shared out by record batches, issue 19: target 3 instances
 * >= 2.5 x one).
 */
import { spawn } from 'node:child_process';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { readdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { cliCommand, isMainModule, procStat, round, setSandboxFaults, startSandboxChild, type BenchResult } from './lib.js';

const PG_URL = process.env['WMSBRIDGE_TEST_PG_URL'] ?? 'postgres://postgres@127.0.0.1:5432/test';
const LATENCY_MS = 20;
const CONCURRENCY = 8;
const FILES = 6;

async function admin(sql: string): Promise<void> {
  const c = new pg.Client({ connectionString: PG_URL });
  await c.connect();
  try {
    await c.query(sql);
  } finally {
    await c.end();
  }
}

function runInstance(configPath: string, secret: string): Promise<number> {
  const { cmd, args } = cliCommand();
  const child = spawn(cmd, [...args, 'run', '--config', configPath], {
    stdio: ['ignore', 'ignore', 'pipe'],
    env: { ...process.env, WMS_SECRET_KEY: secret, WMSBRIDGE_LOG_LEVEL: 'warn' },
  });
  let err = '';
  child.stderr.on('data', (d: Buffer) => (err = (err + d.toString()).slice(-2000)));
  return new Promise((resolve, reject) => child.on('exit', (code) => (code === 0 ? resolve(0) : reject(new Error(`instance exited ${code}: ${err}`)))));
}

/** CPU seconds of each local PostgreSQL server process (Linux /proc, named `postgres`), by pid; empty elsewhere. */
function postgresCpuSeconds(): Map<string, number> {
  const out = new Map<string, number>();
  let pids: string[] = [];
  try {
    pids = readdirSync('/proc').filter((d) => /^\d+$/.test(d));
  } catch {
    return out;
  }
  for (const pid of pids) {
    try {
      const p = procStat(`/proc/${pid}/stat`);
      if (p.name === 'postgres') out.set(pid, p.cpuS);
    } catch {
      // the process ended meanwhile, or is not ours to read
    }
  }
  return out;
}

/**
 * The local PostgreSQL server's CPU while `work` runs (seconds; undefined when no server process is visible): its
 * processes polled every 100 ms, as each backend ends with its connection (what a backend used in its last 100 ms
 * before it ended is missed).
 */
async function withServerCpu<T>(work: () => Promise<T>): Promise<{ value: T; serverCpuS: number | undefined }> {
  const before = postgresCpuSeconds();
  const last = new Map(before);
  const poll = (): void => {
    for (const [pid, s] of postgresCpuSeconds()) last.set(pid, Math.max(s, last.get(pid) ?? 0));
  };
  const timer = setInterval(poll, 100);
  try {
    const value = await work();
    poll();
    let used = 0;
    for (const [pid, s] of last) used += s - (before.get(pid) ?? 0);
    return { value, serverCpuS: last.size > 0 ? used : undefined };
  } finally {
    clearInterval(timer);
  }
}

/** n `wmsbridge run` processes started together on one inbox and one fresh schema; returns the wall time (s). */
async function clusterRun(
  sb: { url: string; accessKeyID: string; secretKey: string },
  dirs: string[],
  n: number,
  label: string,
  files: string[][],
  sending: { streamFrom?: number } = {},
): Promise<{ seconds: number; serverCpuS: number | undefined }> {
  const schema = `wmsbridge_bench_${process.pid}_${label}_${n}`;
  await admin(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
  const dir = await mkdtemp(join(tmpdir(), 'wmsbridge-bench-cluster-'));
  dirs.push(dir);
  const inbox = join(dir, 'inbox', 'cadastros');
  await mkdir(inbox, { recursive: true });
  await mkdir(join(dir, 'mappings'));
  await writeFile(
    join(dir, 'mappings', 'cat.yaml'),
    `name: cat\nmatch: { channel: cadastros, files: "CAT_*.csv" }\nsource: { format: delimited, delimiter: ';' }\ntarget: Category\nfields:\n  codeERP: { col: codigo }\n  name: { col: nome }\n`,
  );
  for (const [f, rows] of files.entries()) await writeFile(join(inbox, `CAT_${f}.csv`), `codigo;nome\n${rows.join('\n')}\n`);
  const config = {
    journal: { kind: 'postgres', url: PG_URL, schema, leaseTtlMs: 10_000 },
    channels: [{ name: 'cadastros', readiness: { mode: 'stable', checks: 1, intervalMs: 10 } }],
    wms: { url: sb.url, accessKeyId: sb.accessKeyID, connections: CONCURRENCY },
    sending: { concurrency: CONCURRENCY, ...sending },
    log: { level: 'warn' },
  };
  const configPath = join(dir, 'wmsbridge.config.json');
  await writeFile(configPath, JSON.stringify(config));
  const t0 = performance.now();
  const { serverCpuS } = await withServerCpu(() => Promise.all(Array.from({ length: n }, () => runInstance(configPath, sb.secretKey))));
  const seconds = (performance.now() - t0) / 1000;
  await admin(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
  return { seconds, serverCpuS };
}

export async function benchCluster(
  options: { records?: number; instances?: number[]; bigFileRecords?: number; slowRecords?: number } = {},
): Promise<BenchResult> {
  const records = options.records ?? 6000;
  const counts = options.instances ?? [1, 2, 3];
  const bigRecords = options.bigFileRecords ?? 20_000;
  const sb = await startSandboxChild(['--latency-ms', String(LATENCY_MS)]);
  const figures: Record<string, number | string> = {
    records,
    latency_ms: LATENCY_MS,
    concurrency_per_instance: CONCURRENCY,
    bound_per_instance_rps: CONCURRENCY / (LATENCY_MS / 1000),
  };
  const dirs: string[] = [];
  try {
    await setSandboxFaults(sb.url, { latencyMs: LATENCY_MS });
    // several files: shared out by the claim race and the file leases
    let base = 0;
    for (const n of counts) {
      const per = Math.ceil(records / FILES);
      const files = Array.from({ length: FILES }, (_, f) =>
        Array.from({ length: Math.max(0, Math.min(per, records - f * per)) }, (_, i) => `N${n}_${f}_${i};Categoria ${f} ${i}`),
      );
      const rps = records / (await clusterRun(sb, dirs, n, 'files', files)).seconds;
      if (n === counts[0]) base = rps;
      figures[`rps_${n}_instance${n > 1 ? 's' : ''}`] = round(rps);
      figures[`speedup_${n}`] = round(rps / base, 2);
    }
    // one big file: its owner maps it, every instance sends claimed record batches of it (issue 19)
    figures['bigfile_records'] = bigRecords;
    let bigBase = 0;
    for (const n of [1, 3]) {
      const rows = Array.from({ length: bigRecords }, (_, i) => `B${n}_${i};Categoria grande ${i}`);
      const run = await clusterRun(sb, dirs, n, 'big', [rows]);
      const rps = bigRecords / run.seconds;
      if (n === 1) bigBase = rps;
      figures[`bigfile_rps_${n}_instance${n > 1 ? 's' : ''}`] = round(rps);
      if (run.serverCpuS !== undefined) {
        figures[`bigfile_postgres_cpu_us_per_record_${n}_instance${n > 1 ? 's' : ''}`] = round((run.serverCpuS * 1e6) / bigRecords);
        figures[`bigfile_postgres_cores_busy_${n}_instance${n > 1 ? 's' : ''}`] = round(run.serverCpuS / run.seconds, 2);
      }
      if (n > 1) figures[`bigfile_speedup_${n}`] = round(rps / bigBase, 2);
    }
    // the same file streamed (sent while its owner still maps it, as a file of sending.streamFrom, 32 MiB, or more
    // is): the helpers claim what it has published. 3 instances against the one-instance figure above
    {
      const rows = Array.from({ length: bigRecords }, (_, i) => `T3_${i};Categoria grande ${i}`);
      const run = await clusterRun(sb, dirs, 3, 'bigstream', [rows], { streamFrom: 0 });
      figures['bigfile_streamed_rps_3_instances'] = round(bigRecords / run.seconds);
      figures['bigfile_streamed_speedup_3'] = round(bigRecords / run.seconds / bigBase, 2);
    }
    // the same at 200 ms: latency-bound even on these 2 cores (bound 40/s per instance), what sharing adds
    // when the WMS, not the CPU, sets the pace
    {
      const slow = 200;
      const n200 = options.slowRecords ?? 2400;
      await setSandboxFaults(sb.url, { latencyMs: slow });
      try {
        let slowBase = 0;
        for (const n of [1, 3]) {
          const rows = Array.from({ length: n200 }, (_, i) => `S${n}_${i};Categoria lenta ${i}`);
          const rps = n200 / (await clusterRun(sb, dirs, n, 'slow', [rows])).seconds;
          if (n === 1) slowBase = rps;
          figures[`bigfile_200ms_rps_${n}_instance${n > 1 ? 's' : ''}`] = round(rps, 1);
          if (n > 1) figures[`bigfile_200ms_speedup_${n}`] = round(rps / slowBase, 2);
        }
        figures['bigfile_200ms_records'] = n200;
        figures['bigfile_200ms_bound_per_instance_rps'] = CONCURRENCY / (slow / 1000);
      } finally {
        await setSandboxFaults(sb.url, { latencyMs: LATENCY_MS });
      }
    }
    return {
      name: 'cluster',
      figures,
      notes:
        `${records} Category records in ${FILES} files, n \`wmsbridge run\` processes started together on one inbox with a PostgreSQL journal ` +
        '(the files are shared out by the claim race and leases), whole-run wall time including process start-up, against one sandbox child. ' +
        `bigfile: ${bigRecords} Category records in ONE file, 1 then 3 instances: the claimer maps it, every instance sends claimed batches of its ` +
        'records (claimRecordBatch, docs/SCALING.md "Record batches"). bigfile_streamed_*: the same file sent while its owner still maps ' +
        'it (streamFrom 0, as any file of 32 MiB or more), 3 instances against bigfile_rps_1_instance. bigfile_200ms_*: the same with 200 ms added latency on a smaller file, ' +
        'latency-bound on this machine (what sharing adds when the WMS sets the pace). ' +
        "bigfile_postgres_*: the local PostgreSQL server processes' CPU during the run (Linux /proc, polled every 100 ms), per record " +
        'and as cores kept busy. On 2 cores the instances, the sandbox and PostgreSQL share the CPU: the speedup shows coordination ' +
        'overhead, not what separate machines would add.',
    };
  } finally {
    await sb.close();
    for (const d of dirs) await rm(d, { recursive: true, force: true });
  }
}

if (isMainModule(import.meta.url)) {
  benchCluster()
    .then((r) => process.stdout.write(`${JSON.stringify(r, null, 2)}\n`))
    .catch((err: unknown) => {
      process.stderr.write(`${String(err)}\n`);
      process.exitCode = 1;
    });
}
