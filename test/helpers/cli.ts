/**
 * Runs the real CLI as a child process. From compiled tests (dist/test/...) it runs dist/src/cli/main.js;
 * from a .ts test run with tsx it runs src/cli/main.ts through tsx, so helpers can iterate without a build.
 */
import { spawn, type ChildProcess, type SpawnOptions } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { existsSync } from 'node:fs';
import { join } from 'node:path';

const here = fileURLToPath(import.meta.url);
const fromTs = here.endsWith('.ts');
export const PROJECT_ROOT = fileURLToPath(new URL(fromTs ? '../../' : '../../../', import.meta.url));
/** The CLI flags of a workspace in `dir` (its inbox, outbox and state folders), with the shipped mappings by default. */
export function workspaceFlags(dir: string, mappingsDir = join(PROJECT_ROOT, 'mappings')): string[] {
  return ['--inbox', join(dir, 'inbox'), '--outbox', join(dir, 'outbox'), '--state-dir', join(dir, 'state'), '--mappings', mappingsDir];
}
/** Real-world samples written by others (origin and licence: each folder's SOURCE.txt). */
export const SAMPLES_DIR = fileURLToPath(new URL(fromTs ? '../fixtures/samples/' : '../../../test/fixtures/samples/', import.meta.url));

export function cliCommand(): { cmd: string; args: string[] } {
  if (fromTs) return { cmd: process.execPath, args: ['--import', 'tsx', `${PROJECT_ROOT}src/cli/main.ts`] };
  const main = `${PROJECT_ROOT}dist/src/cli/main.js`;
  if (!existsSync(main)) throw new Error(`${main} missing: run npm run build`);
  return { cmd: process.execPath, args: [main] };
}

export interface CliResult {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

export function spawnCli(args: string[], options: SpawnOptions = {}): ChildProcess {
  const { cmd, args: pre } = cliCommand();
  return spawn(cmd, [...pre, ...args], {
    stdio: ['ignore', 'pipe', 'pipe'],
    ...options,
    env: { ...process.env, WMSBRIDGE_LOG_PRETTY: '0', ...(options.env ?? {}) },
  });
}

/** Runs the CLI to completion (bounded by timeoutMs; killed with SIGKILL past it). */
export function runCli(args: string[], options: SpawnOptions & { timeoutMs?: number } = {}): Promise<CliResult> {
  const child = spawnCli(args, options);
  let stdout = '';
  let stderr = '';
  child.stdout?.on('data', (d: Buffer) => (stdout += d.toString()));
  child.stderr?.on('data', (d: Buffer) => (stderr += d.toString()));
  const timer = setTimeout(() => child.kill('SIGKILL'), options.timeoutMs ?? 120_000);
  return new Promise((resolve, reject) => {
    child.on('error', reject);
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      resolve({ code, signal, stdout, stderr });
    });
  });
}

/**
 * `count` long-running CLI processes (`wmsbridge watch` instances of a cluster test) started with the same
 * arguments; each one's stderr tail (last 40,000 characters) is kept in `logs` at its index, for waits and failure
 * messages. The processes are added to `procs`, which the test kills in its after().
 */
export function spawnInstances(count: number, args: string[], options: SpawnOptions, procs: ChildProcess[], logs: string[]): void {
  for (let i = 0; i < count; i++) {
    const p = spawnCli(args, options);
    const at = procs.length;
    logs[at] = '';
    p.stderr?.on('data', (d: Buffer) => (logs[at] = (logs[at]! + d.toString()).slice(-40_000)));
    procs.push(p);
  }
}

/** Kills (SIGKILL) every process of a test that is still running. */
export function killAll(procs: readonly ChildProcess[]): void {
  for (const p of procs) if (p.exitCode === null && p.signalCode === null) p.kill('SIGKILL');
}
