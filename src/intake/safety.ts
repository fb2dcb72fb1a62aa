/**
 * What the intake refuses to touch: an inbox that is a system folder (or the state/outbox folder), folder
 * entries that are not plain data files of the inbox (symlinks, hard links, FIFOs, names that are not
 * UTF-8), and files another process still holds open for writing (Linux: /proc/<pid>/fd).
 */
import { readdirSync, readFileSync, readlinkSync, type Stats } from 'node:fs';
import { homedir } from 'node:os';
import { isAbsolute, relative, resolve } from 'node:path';
import { ConfigError } from '../shared/errors.js';

/** Folders an inbox must never be: listing and moving files there would take what is not ours. */
const SYSTEM_FOLDERS = [
  '/',
  '/bin',
  '/boot',
  '/dev',
  '/etc',
  '/home',
  '/lib',
  '/lib32',
  '/lib64',
  '/media',
  '/mnt',
  '/opt',
  '/proc',
  '/root',
  '/run',
  '/sbin',
  '/srv',
  '/sys',
  '/tmp',
  '/usr',
  '/var',
  '/var/tmp',
  '/var/lib',
  '/var/log',
];

const isInside = (child: string, parent: string): boolean => {
  const r = relative(parent, child);
  return r === '' || (!r.startsWith('..') && !isAbsolute(r));
};

function isSystemFolder(dir: string): boolean {
  const d = resolve(dir);
  if (SYSTEM_FOLDERS.includes(d)) return true;
  if (d === resolve(homedir())) return true;
  // Windows: a drive root or the system folders of a drive
  if (/^[a-zA-Z]:\\?$/.test(d) || /^[a-zA-Z]:\\(windows|program files( \(x86\))?|programdata|users)\\?$/i.test(d)) return true;
  return false;
}

/**
 * Throws a ConfigError (exit 2) when `inboxDir` (or a channel folder) is `/`, a system folder, the home
 * folder, or the state or outbox folder (or inside them): `run` and `watch` would claim files that are not
 * exports of the ERP.
 */
export function checkInboxSafety(a: { inboxDir: string; stateDir: string; outboxDir: string; channelDirs?: readonly string[]; file?: string | null }): void {
  const where = a.file ?? '(defaults)';
  const inbox = resolve(a.inboxDir);
  const check = (dir: string, what: string): void => {
    const d = resolve(dir);
    if (isSystemFolder(d)) {
      throw new ConfigError(`${where}: ${what} is ${d}, a system folder: wmsbridge refuses to take files from it; point it at the folder the ERP exports to`);
    }
    for (const [other, name] of [
      [a.stateDir, 'stateDir'],
      [a.outboxDir, 'outboxDir'],
    ] as const) {
      const o = resolve(other);
      if (isInside(d, o))
        throw new ConfigError(`${where}: ${what} (${d}) is ${d === o ? '' : 'inside '}the ${name} folder (${o}): wmsbridge would take its own files as input`);
    }
  };
  check(inbox, 'inboxDir');
  for (const dir of a.channelDirs ?? []) check(dir, `channel folder ${resolve(dir)}`);
}

/** A folder entry the intake does not take, and why (named in the log and the run report). */
export interface RefusedEntry {
  channel: string;
  /** the name as shown to people (bytes that are not UTF-8 as \xNN) */
  name: string;
  path: string;
  reason: string;
  /** short machine-readable kind, for /metrics */
  kind: 'name-encoding' | 'name-control' | 'symlink' | 'hardlink' | 'not-regular' | 'folder' | 'no-mapping';
}

/** The name decoded as UTF-8, or null when its bytes are not valid UTF-8. */
export function utf8Name(raw: Buffer): string | null {
  const s = raw.toString('utf8');
  return Buffer.from(s, 'utf8').equals(raw) ? s : null;
}

/** A name for people: valid UTF-8 kept, other bytes and control characters as \xNN. */
export function displayName(raw: Buffer | string): string {
  const buf = typeof raw === 'string' ? Buffer.from(raw, 'utf8') : raw;
  let out = '';
  let i = 0;
  while (i < buf.length) {
    const b = buf[i]!;
    const len = b < 0x80 ? 1 : b >= 0xc2 && b <= 0xdf ? 2 : b >= 0xe0 && b <= 0xef ? 3 : b >= 0xf0 && b <= 0xf4 ? 4 : 0;
    const piece = len > 0 && i + len <= buf.length ? buf.subarray(i, i + len) : null;
    const text = piece ? utf8Name(piece) : null;
    // eslint-disable-next-line no-control-regex -- finding control characters is what this expression is for
    if (text !== null && !/[\u0000-\u001f\u007f\u0080-\u009f\u202a-\u202e\u2066-\u2069]/.test(text)) {
      out += text;
      i += len;
    } else {
      out += `\\x${b.toString(16).padStart(2, '0')}`;
      i++;
    }
  }
  return out;
}

/** Control characters and bidi overrides make a name that logs, reports and shells show wrongly. */
// eslint-disable-next-line no-control-regex -- finding control characters is what this expression is for
export const CONTROL_IN_NAME = /[\u0000-\u001f\u007f\u0080-\u009f\u202a-\u202e\u2066-\u2069]/;

function kindOf(st: Stats): string {
  if (st.isDirectory()) return 'a folder';
  if (st.isFIFO()) return 'a FIFO (named pipe)';
  if (st.isSocket()) return 'a socket';
  if (st.isCharacterDevice() || st.isBlockDevice()) return 'a device';
  return 'not a regular file';
}

/**
 * Why an entry (lstat'ed, never followed) is not taken as a data file, or null when it is a plain regular
 * file with one name.
 */
export function refusalOf(st: Stats): { kind: RefusedEntry['kind']; reason: string } | null {
  if (st.isSymbolicLink()) {
    return {
      kind: 'symlink',
      reason: 'a symbolic link: only regular files placed in the inbox are taken (it may point outside the inbox); copy the file in instead',
    };
  }
  if (st.isDirectory()) return { kind: 'folder', reason: 'a folder: sub-folders of a channel are not read (one channel per folder)' };
  if (!st.isFile()) return { kind: 'not-regular', reason: `${kindOf(st)}: only regular files are taken` };
  if (st.nlink > 1) {
    return {
      kind: 'hardlink',
      reason: `a hard link (${st.nlink} names for the same data, possibly outside the inbox): only files with one name are taken; copy the file in instead`,
    };
  }
  return null;
}

/**
 * Descriptors looked at between two turns of the event loop in openForWriting: /proc answers from memory (a few
 * microseconds a readlink), so a batch holds the loop about a millisecond.
 */
export const OPEN_SCAN_BATCH = 256;

/**
 * Which of `paths` another process holds open for writing, with the holders' pids. Linux only (reads
 * /proc/<pid>/fd and fdinfo); elsewhere, or when /proc cannot be read, an empty map. It sees processes of
 * this machine only: a writer on another machine of an SMB/NFS share is invisible (use marker or rename
 * readiness there).
 *
 * /proc is read synchronously, OPEN_SCAN_BATCH descriptors between two turns of the event loop: each asynchronous
 * readlink was a round trip through libuv's thread pool, ~75 us a descriptor one after the other (45 ms for the
 * 589 descriptors of a quiet 2-core machine, before every claim of a `run`; seconds on a file server holding tens
 * of thousands), where a synchronous one is a few microseconds.
 */
export async function openForWriting(paths: readonly string[]): Promise<Map<string, number[]>> {
  const out = new Map<string, number[]>();
  if (process.platform !== 'linux' || paths.length === 0) return out;
  const wanted = new Set(paths.map((p) => resolve(p)));
  let pids: string[];
  try {
    pids = readdirSync('/proc').filter((n) => /^\d+$/.test(n) && Number(n) !== process.pid);
  } catch {
    return out;
  }
  let looked = 0;
  for (const pid of pids) {
    let fds: string[];
    try {
      fds = readdirSync(`/proc/${pid}/fd`);
    } catch {
      continue; // gone, or another user's process we may not look into
    }
    for (const fd of fds) {
      if (++looked % OPEN_SCAN_BATCH === 0) await new Promise<void>((r) => setImmediate(r));
      let target: string;
      try {
        target = readlinkSync(`/proc/${pid}/fd/${fd}`);
      } catch {
        continue; // closed meanwhile, or the process ended
      }
      if (!wanted.has(target)) continue;
      try {
        const info = readFileSync(`/proc/${pid}/fdinfo/${fd}`, 'utf8');
        const flags = /^flags:\s*([0-7]+)/m.exec(info);
        // O_ACCMODE: 0 read-only, 1 write-only, 2 read-write
        if (flags && (parseInt(flags[1]!, 8) & 3) !== 0) out.set(target, [...(out.get(target) ?? []), Number(pid)]);
      } catch {
        continue;
      }
    }
  }
  return out;
}
