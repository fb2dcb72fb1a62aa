/**
 * Runs of `wmsbridge` (the CLI as a child process) watched from outside, for the crash and concurrency
 * tests: a run may wait for its first request to the sandbox, be killed with SIGKILL after a delay, and
 * have its journal sampled through a read-only connection while it lives. crashLoop repeats such runs.
 */
import Database from 'better-sqlite3';
import { spawnCli } from './cli.js';
import { sandboxCall, type Sandbox } from './sandbox.js';

/** Deterministic pseudo-random kill delays from `minMs` to `minMs` + 1199 ms (a test must be repeatable). */
export function* killDelays(seed: number, minMs: number): Generator<number> {
  let x = seed;
  for (;;) {
    x = (x * 1103515245 + 12345) % 2 ** 31;
    yield minMs + (x % 1200);
  }
}

export interface WatchedRunOptions {
  args: string[];
  env: NodeJS.ProcessEnv;
  /** count `killAfterMs` from the run's first request to this sandbox (a loaded machine may take seconds to start it) */
  firstRequestOn?: Sandbox;
  /** SIGKILL the run this long after it started (or after its first request); without it the run ends by itself */
  killAfterMs?: number;
  /** sample the run's SQLite journal (read-only) every `intervalMs` (default 3) while it lives */
  journal?: { path: string; sample: (db: Database.Database) => void; intervalMs?: number };
}

export interface WatchedRun {
  /** the run was killed (false: it ended before its kill) */
  killed: boolean;
  code: number | null;
  stderr: string;
  /** journal samples taken (those that found the journal readable) */
  samples: number;
}

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));
const requestCount = async (sb: Sandbox): Promise<number> => (await sandboxCall(sb, 'GET', '/__sandbox/counts')).json.stats.requests as number;

/** Samples the journal until `done()`; returns how many samples found it readable. */
async function pollJournal(o: NonNullable<WatchedRunOptions['journal']>, done: () => boolean): Promise<number> {
  let samples = 0;
  let db: Database.Database | null = null;
  while (!done()) {
    try {
      db ??= new Database(o.path, { readonly: true, fileMustExist: true });
      o.sample(db);
      samples++;
    } catch {
      // not created yet, or its schema not yet migrated
    }
    await sleep(o.intervalMs ?? 3); // sampling interval, not a wait for a condition
  }
  db?.close();
  return samples;
}

/** One run of the CLI, watched (see WatchedRunOptions). */
export async function runCliWatched(o: WatchedRunOptions): Promise<WatchedRun> {
  const before = o.firstRequestOn ? await requestCount(o.firstRequestOn) : 0;
  const child = spawnCli(o.args, { env: o.env });
  let stderr = '';
  child.stdout?.resume();
  child.stderr?.on('data', (d: Buffer) => (stderr += d.toString()));
  let exited = false;
  const exit = new Promise<number | null>((resolve) => child.once('exit', (code) => ((exited = true), resolve(code))));
  const polling = o.journal ? pollJournal(o.journal, () => exited) : Promise.resolve(0);
  if (o.firstRequestOn) while (!exited && (await requestCount(o.firstRequestOn)) <= before) await sleep(25); // poll interval: the sandbox counts its requests but pushes no event
  let killed = false;
  if (o.killAfterMs !== undefined && !exited) {
    let timer: NodeJS.Timeout | undefined;
    const ended = await Promise.race([exit.then(() => true), new Promise<boolean>((resolve) => (timer = setTimeout(() => resolve(false), o.killAfterMs)))]); // the kill delay IS the test (a random point of the run), not a wait for a condition
    clearTimeout(timer);
    if (!ended) {
      child.kill('SIGKILL');
      killed = true;
    }
  }
  const code = await exit;
  return { killed, code, stderr, samples: await polling };
}

export interface CrashLoopOptions extends Omit<WatchedRunOptions, 'killAfterMs' | 'journal'> {
  /** runs started at most */
  maxRuns: number;
  /** each run's kill delay (killDelays) */
  delays: Iterator<number>;
  /** a run that ends before its kill ends the loop ('stop') or is followed by the next run ('continue') */
  whenARunEnds: 'stop' | 'continue';
}

/** Runs the CLI again and again, killing each run with SIGKILL after its delay; returns how many were killed. */
export async function crashLoop(o: CrashLoopOptions): Promise<number> {
  let kills = 0;
  for (let i = 0; i < o.maxRuns; i++) {
    const r = await runCliWatched({
      args: o.args,
      env: o.env,
      killAfterMs: o.delays.next().value as number,
      ...(o.firstRequestOn ? { firstRequestOn: o.firstRequestOn } : {}),
    });
    if (r.killed) kills++;
    else if (o.whenARunEnds === 'stop') break;
  }
  return kills;
}
