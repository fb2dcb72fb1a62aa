/**
 * What every benchmark shares: the result shape, the CLI command (compiled or through tsx), a sandbox in
 * a child process (so the measured process's CPU and memory are its own), and small helpers.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { request } from 'undici';

export interface BenchResult {
  name: string;
  figures: Record<string, number | string>;
  notes?: string;
}

const here = fileURLToPath(import.meta.url);
export const FROM_TS = here.endsWith('.ts');
/** the repository root, from bench/*.ts or dist/bench/*.js */
export const PROJECT_ROOT = fileURLToPath(new URL(FROM_TS ? '../' : '../../', import.meta.url));

/** `node <main>` for the wmsbridge CLI: compiled when running compiled, through tsx otherwise. */
export function cliCommand(): { cmd: string; args: string[] } {
  if (FROM_TS) return { cmd: process.execPath, args: ['--import', 'tsx', `${PROJECT_ROOT}src/cli/main.ts`] };
  const main = `${PROJECT_ROOT}dist/src/cli/main.js`;
  if (!existsSync(main)) throw new Error(`${main} missing: run npm run build`);
  return { cmd: process.execPath, args: [main] };
}

/** a compiled (or tsx) module of bench/ as a child: `node [--import tsx] <file> ...args` */
export function benchModuleCommand(name: string): { cmd: string; args: string[] } {
  if (FROM_TS) return { cmd: process.execPath, args: ['--import', 'tsx', `${PROJECT_ROOT}bench/${name}.ts`] };
  return { cmd: process.execPath, args: [`${PROJECT_ROOT}dist/bench/${name}.js`] };
}

export interface SandboxChild {
  url: string;
  accessKeyID: string;
  secretKey: string;
  child: ChildProcess;
  close(): Promise<void>;
}

/** Starts `wmsbridge sandbox --port 0 ...extraArgs` and reads its one JSON line. */
export async function startSandboxChild(extraArgs: string[] = []): Promise<SandboxChild> {
  const { cmd, args } = cliCommand();
  const child = spawn(cmd, [...args, 'sandbox', '--port', '0', ...extraArgs], {
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, WMSBRIDGE_LOG_LEVEL: 'warn', WMSBRIDGE_LOG_PRETTY: '0' },
  });
  let stderr = '';
  child.stderr?.on('data', (d: Buffer) => (stderr = (stderr + d.toString()).slice(-4000)));
  return new Promise<SandboxChild>((resolve, reject) => {
    let buf = '';
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`sandbox did not start within 60 s: ${stderr}`));
    }, 60_000);
    child.stdout?.on('data', (d: Buffer) => {
      buf += d.toString();
      const nl = buf.indexOf('\n');
      if (nl < 0) return;
      clearTimeout(timer);
      try {
        const info = JSON.parse(buf.slice(0, nl)) as { url: string; accessKeyID: string; secretKey: string };
        resolve({ ...info, child, close: () => stopChild(child) });
      } catch (err) {
        child.kill('SIGKILL');
        reject(new Error(`sandbox printed an unexpected line: ${buf.slice(0, nl)} (${String(err)})`));
      }
    });
    child.on('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`sandbox exited with ${code}: ${stderr}`));
    });
  });
}

export async function stopChild(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  await new Promise<void>((resolve) => {
    const t = setTimeout(() => child.kill('SIGKILL'), 5000);
    child.once('exit', () => {
      clearTimeout(t);
      resolve();
    });
    child.kill('SIGTERM');
  });
}

/** POST /__sandbox/faults on a running sandbox. */
export async function setSandboxFaults(url: string, faults: Record<string, number>): Promise<void> {
  const res = await request(`${url}/__sandbox/faults`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'user-agent': 'wmsbridge-bench' },
    body: JSON.stringify(faults),
  });
  await res.body.dump();
  if (res.statusCode !== 200) throw new Error(`POST /__sandbox/faults answered ${res.statusCode}`);
}

/** Runs a child to completion and parses the last stdout line as JSON. */
export function runJsonChild<T>(cmd: string, args: string[], env: NodeJS.ProcessEnv = {}, timeoutMs = 600_000): Promise<T> {
  const child = spawn(cmd, args, { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, WMSBRIDGE_LOG_LEVEL: 'warn', ...env } });
  let out = '';
  let err = '';
  child.stdout.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr.on('data', (d: Buffer) => (err = (err + d.toString()).slice(-4000)));
  const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
  return new Promise<T>((resolve, reject) => {
    child.on('close', (code) => {
      clearTimeout(timer);
      const last = out.trim().split('\n').pop() ?? '';
      if (code !== 0) return reject(new Error(`${args.join(' ')} exited ${code}: ${err}`));
      try {
        resolve(JSON.parse(last) as T);
      } catch {
        reject(new Error(`${args.join(' ')} printed no JSON result: ${last} ${err}`));
      }
    });
  });
}

/**
 * A Linux process's or thread's name and CPU so far, from its /proc `stat` file (`/proc/<pid>/stat`,
 * `/proc/<pid>/task/<tid>/stat`): utime + stime in seconds (clock ticks, USER_HZ 100 on Linux). Throws when the
 * file cannot be read (the process or thread ended, or not Linux).
 */
export function procStat(path: string): { name: string; cpuS: number } {
  const st = readFileSync(path, 'utf8');
  const f = st.slice(st.lastIndexOf(')') + 2).split(' ');
  return { name: st.slice(st.indexOf('(') + 1, st.lastIndexOf(')')), cpuS: (Number(f[11]) + Number(f[12])) / 100 };
}

/** procStat of every thread of process `pid` ('self': this one), by thread id; empty when it cannot be listed. */
export function threadStats(pid: number | 'self'): Map<string, { name: string; cpuS: number }> {
  const out = new Map<string, { name: string; cpuS: number }>();
  let tids: string[];
  try {
    tids = readdirSync(`/proc/${pid}/task`);
  } catch {
    return out; // the process ended, or not Linux
  }
  for (const tid of tids) {
    try {
      out.set(tid, procStat(`/proc/${pid}/task/${tid}/stat`));
    } catch {
      // the thread ended between the listing and the read
    }
  }
  return out;
}

export function round(n: number, digits = 0): number {
  const f = 10 ** digits;
  return Math.round(n * f) / f;
}

export function isMainModule(url: string): boolean {
  return process.argv[1] !== undefined && fileURLToPath(url) === process.argv[1];
}

/** the categories mapping of the end-to-end benchmarks (CATEGORIAS_*.csv: codigo;descricao;obs) */
export const CATEGORY_MAPPING = `name: bench-categorias
match: { channel: cadastros, files: "CATEGORIAS_*.csv" }
source: { format: delimited, delimiter: ';', encoding: utf-8 }
target: Category
fields:
  codeERP: { col: codigo, transforms: [trim] }
  name: { col: descricao, transforms: [trim] }
  description: { col: obs }
`;

/**
 * In a benchmark child: the real pipeline of the workspace `dir` (its config, mappings and context, a silent
 * logger), as `wmsbridge run` builds it, with the scan and runOnce to drive it.
 */
export async function loadPipeline(dir: string) {
  const { loadConfig } = await import('../src/config/load.js');
  const { createAppContext } = await import('../src/app/context.js');
  const { loadMappingsDir } = await import('../src/map/index.js');
  const { runOnce } = await import('../src/app/run.js');
  const { scanReadyFiles } = await import('../src/app/scan.js');
  const { silentLogger } = await import('../src/shared/logger.js');
  const config = await loadConfig({ cwd: dir });
  const logger = silentLogger();
  const { mappings } = await loadMappingsDir(config.mappingsDir);
  const ctx = await createAppContext(config, { logger });
  return { config, logger, mappings, ctx, runOnce, scan: () => scanReadyFiles(config, { logger, maxWaitMs: 5000 }) };
}

/** A benchmark module run by itself: prints its result as JSON (one line for a child, indented for a person). */
export function printResult(result: Promise<unknown>, options: { indent?: boolean } = {}): void {
  result
    .then((r) => process.stdout.write(`${JSON.stringify(r, null, options.indent ? 2 : undefined)}\n`))
    .catch((err: unknown) => {
      process.stderr.write(`${String((err as Error).stack ?? err)}\n`);
      process.exitCode = 1;
    });
}
