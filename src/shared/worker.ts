/**
 * A worker thread running one of wmsbridge's own modules: `entry` is the module's URL beside its caller, given with
 * the caller's extension (.js when compiled; .ts when run from source, as the tests do under `node --import tsx`,
 * where a worker does not inherit tsx's loader: a small bootstrap registers it first).
 */
import { Worker } from 'node:worker_threads';

/** The URL of the worker module `name` (no extension) beside `callerUrl` (import.meta.url), with the caller's extension. */
export function workerEntry(callerUrl: string, name: string): URL {
  return new URL(`./${name}${callerUrl.endsWith('.ts') ? '.ts' : '.js'}`, callerUrl);
}

export function spawnModuleWorker(entry: URL, workerData: unknown): Worker {
  // execArgv: [] - the parent's flags are not the thread's (some, like --input-type, make a worker fail)
  if (!entry.pathname.endsWith('.ts')) return new Worker(entry, { workerData, execArgv: [] });
  const tsxApi = import.meta.resolve('tsx/esm/api');
  const bootstrap = `import(${JSON.stringify(tsxApi)}).then((m) => { m.register(); return import(${JSON.stringify(entry.href)}); });`;
  return new Worker(bootstrap, { eval: true, workerData, execArgv: [] });
}
