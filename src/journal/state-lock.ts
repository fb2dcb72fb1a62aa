/**
 * One process per state folder. An exclusive lock file holds {pid, host, command, startedAt}: written and synced
 * under a name of its own, then hard-linked to the lock's name (link() fails if the lock exists, as open 'wx'
 * does), so the lock is never seen empty or half written. With open 'wx' then write, a kill -9 between the two
 * left an empty lock that the next run had to refuse ("being written") until it was 10 s old (found by the
 * crash-resume test's kill loop); a filesystem without hard links falls back to open 'wx'.
 * A lock whose pid is not alive on this host (process.kill(pid, 0) ->
 * ESRCH: a crash, kill -9) is stale and taken over, with a log line; a live one is refused with a
 * LockedError that says who holds it. The takeover itself is guarded by a second exclusive file so two
 * starters cannot both take over the same stale lock.
 */
import { closeSync, fsyncSync, linkSync, openSync, readdirSync, readFileSync, statSync, unlinkSync, writeSync, mkdirSync } from 'node:fs';
import { hostname } from 'node:os';
import { join, resolve } from 'node:path';
import { randomBytes } from 'node:crypto';
import { LockedError } from '../shared/errors.js';
import type { Logger } from '../shared/logger.js';
import { JournalError } from './errors.js';

export const LOCK_FILE = 'wmsbridge.lock';

export interface LockInfo {
  pid: number;
  host: string;
  command: string;
  startedAt: string;
  /** random token: release() removes the file only while it is still ours */
  token: string;
}

export interface StateLock {
  readonly path: string;
  readonly info: LockInfo;
  /** Removes the lock file (only if it is still ours). Synchronous: safe in exit and signal handlers. */
  release(): void;
}

export interface StateLockOptions {
  /** the command holding the lock, for the message a second process gets (e.g. 'watch') */
  command: string;
  logger?: Logger;
  /** a lock file that cannot be read as JSON and is older than this is stale (a crash mid-write) @default 10000 */
  unreadableStaleMs?: number;
}

const errCode = (err: unknown): string | undefined => (err as NodeJS.ErrnoException | null)?.code;

/** Whether a pid is alive on this host. EPERM means it exists but belongs to someone else. */
export function isPidAlive(pid: number): boolean {
  if (!Number.isInteger(pid) || pid <= 0) return false;
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return errCode(err) === 'EPERM';
  }
}

function readLock(path: string): { info: LockInfo | null; mtimeMs: number } | null {
  try {
    const text = readFileSync(path, 'utf8');
    const mtimeMs = statSync(path).mtimeMs;
    try {
      const v = JSON.parse(text) as Partial<LockInfo>;
      if (typeof v.pid === 'number' && typeof v.host === 'string') {
        return {
          info: { pid: v.pid, host: v.host, command: String(v.command ?? '?'), startedAt: String(v.startedAt ?? '?'), token: String(v.token ?? '') },
          mtimeMs,
        };
      }
    } catch {
      // fall through: unreadable
    }
    return { info: null, mtimeMs };
  } catch (err) {
    if (errCode(err) === 'ENOENT') return null;
    throw err;
  }
}

/** codes of a filesystem that has no hard links (FAT, some network mounts): the lock is created in place instead */
const NO_LINKS = new Set(['EPERM', 'ENOTSUP', 'EOPNOTSUPP', 'ENOSYS', 'EXDEV']);

/** `text` in a new file at `path` (exclusive: false if it exists), synced before it is closed. */
function createExclusive(path: string, text: string): boolean {
  let fd: number;
  try {
    fd = openSync(path, 'wx', 0o644);
  } catch (err) {
    if (errCode(err) === 'EEXIST') return false;
    throw err;
  }
  try {
    writeSync(fd, text);
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
  return true;
}

/** The lock's own temporary name: `<lock>.<pid>.<token>` (leftovers of a dead pid are removed: removeLeftovers). */
const LEFTOVER = /\.(\d+)\.[0-9a-f]{16}$/;

function tryCreate(path: string, info: LockInfo): boolean {
  const text = `${JSON.stringify(info)}\n`;
  const own = `${path}.${info.pid}.${info.token}`;
  createExclusive(own, text);
  try {
    linkSync(own, path);
    return true;
  } catch (err) {
    // EEXIST: the lock is held; ENOENT: our own file was removed meanwhile (another host's start, on a share): try again
    if (errCode(err) === 'EEXIST' || errCode(err) === 'ENOENT') return false;
    if (NO_LINKS.has(errCode(err) ?? '')) return createExclusive(path, text);
    throw err;
  } finally {
    try {
      unlinkSync(own);
    } catch {
      // already gone
    }
  }
}

/**
 * Temporary lock files a killed process left: its own file, written on this host by a pid that is not alive, or
 * one older than `staleMs` (a start takes milliseconds between writing it and linking it; a state folder on a
 * share may hold another host's, whose pid means nothing here).
 */
function removeLeftovers(dir: string, staleMs: number): void {
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch {
    return;
  }
  for (const name of names) {
    if (!name.startsWith(LOCK_FILE) || !LEFTOVER.test(name)) continue;
    const path = join(dir, name);
    try {
      const left = readLock(path);
      if (!left) continue;
      const dead = left.info !== null && left.info.host === hostname() && !isPidAlive(left.info.pid);
      if (dead || Date.now() - left.mtimeMs > staleMs) unlinkSync(path);
    } catch {
      // removed by another starter, or not ours to read
    }
  }
}

function describe(stateDir: string, holder: LockInfo): string {
  const where = holder.host === hostname() ? '' : ` on host ${holder.host}`;
  return `state folder ${stateDir} is in use by \`wmsbridge ${holder.command}\`${where} (pid ${holder.pid}, since ${holder.startedAt}); stop it or use another --state-dir`;
}

/**
 * Takes the state folder's lock or throws LockedError. Call `release()` on exit; an 'exit' listener
 * also releases it when the process ends normally or through process.exit (signal handlers of the
 * caller should call release() or process.exit()).
 */
export async function acquireStateLock(stateDir: string, options: StateLockOptions): Promise<StateLock> {
  const dir = resolve(stateDir);
  const path = join(dir, LOCK_FILE);
  const takeoverPath = `${path}.takeover`;
  const unreadableStaleMs = options.unreadableStaleMs ?? 10_000;
  try {
    mkdirSync(dir, { recursive: true, mode: 0o700 }); // the journal holds business data: owner only
  } catch (err) {
    throw new JournalError(`state folder ${dir}: cannot create: ${(err as Error).message}`, { cause: err });
  }
  const info: LockInfo = {
    pid: process.pid,
    host: hostname(),
    command: options.command,
    startedAt: new Date().toISOString(),
    token: randomBytes(8).toString('hex'),
  };

  removeLeftovers(dir, unreadableStaleMs);
  for (let attempt = 0; attempt < 5; attempt++) {
    if (tryCreate(path, info)) return makeLock(path, info);
    const current = readLock(path);
    if (current === null) continue; // released meanwhile: try again
    const holder = current.info;
    let staleReason: string | null = null;
    if (holder) {
      if (holder.host !== hostname()) throw new LockedError(describe(dir, holder), { details: { lockFile: path } });
      if (isPidAlive(holder.pid)) throw new LockedError(describe(dir, holder), { details: { lockFile: path } });
      staleReason = `pid ${holder.pid} (\`wmsbridge ${holder.command}\`, since ${holder.startedAt}) is not running`;
    } else if (Date.now() - current.mtimeMs > unreadableStaleMs) {
      staleReason = 'the lock file is unreadable and old (a crash while writing it)';
    } else {
      throw new LockedError(`state folder ${dir} is being locked by another process (lock file ${path} is being written); try again`, {
        details: { lockFile: path },
      });
    }
    // take over under a second exclusive file, re-checking that the lock is the same stale one
    const guard: LockInfo = { ...info };
    if (!tryCreate(takeoverPath, guard)) {
      const g = readLock(takeoverPath);
      const guardStale = g && ((g.info && g.info.host === hostname() && !isPidAlive(g.info.pid)) || Date.now() - g.mtimeMs > unreadableStaleMs);
      if (guardStale) {
        try {
          unlinkSync(takeoverPath);
        } catch (err) {
          if (errCode(err) !== 'ENOENT') throw err;
        }
        continue;
      }
      throw new LockedError(`state folder ${dir} is being taken over by another process; try again`, { details: { lockFile: path } });
    }
    try {
      const again = readLock(path);
      if (again && again.mtimeMs === current.mtimeMs && JSON.stringify(again.info) === JSON.stringify(holder)) {
        unlinkSync(path);
        options.logger?.warn({ lockFile: path, stale: holder ?? null }, `taking over a stale lock: ${staleReason}`);
      }
    } finally {
      try {
        unlinkSync(takeoverPath);
      } catch {
        // already gone
      }
    }
  }
  throw new LockedError(`state folder ${dir}: could not take the lock ${path} after several attempts; try again`, { details: { lockFile: path } });
}

function makeLock(path: string, info: LockInfo): StateLock {
  let released = false;
  const release = (): void => {
    if (released) return;
    released = true;
    process.off('exit', release);
    try {
      const text = readFileSync(path, 'utf8');
      const v = JSON.parse(text) as Partial<LockInfo>;
      if (v.token === info.token) unlinkSync(path);
    } catch {
      // gone or unreadable: not ours to remove
    }
  };
  process.on('exit', release);
  return { path, info, release };
}
