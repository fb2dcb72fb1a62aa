/**
 * Claiming a ready file: move it (the original itself, never a copy left behind) into the channel's
 * working folder, then on to the archive or the error folder. rename(2) is atomic only within one
 * filesystem, so the default folders live under the channel's inbox (`<inbox>/.wmsbridge/{work,archive,
 * error}`); a cross-device move (EXDEV, overridden folders on another disk) falls back to copy + fsync +
 * verify sha256 + unlink of the source. Two claimers racing for one file: exactly one rename wins, the
 * other sees ENOENT and skips.
 */
import { createHash, randomBytes } from 'node:crypto';
import { createReadStream, createWriteStream } from 'node:fs';
import * as fsp from 'node:fs/promises';
import { basename, dirname, extname, join, resolve, sep } from 'node:path';
import { Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { Logger } from '../shared/logger.js';
import { silentLogger } from '../shared/logger.js';
import { BridgeError, ErrorCode, errorMessage } from '../shared/errors.js';
import type { ChannelFolders, ReadyFile } from './types.js';

export type { ChannelFolders, ReadyFile } from './types.js';

/** The file system operations claim uses that tests may replace (simulate EXDEV, EBUSY). */
export interface IntakeFs {
  rename(from: string, to: string): Promise<void>;
  unlink(path: string): Promise<void>;
}

const realFs: IntakeFs = { rename: fsp.rename, unlink: fsp.unlink };

export interface ClaimedFile {
  channel: string;
  /** the file name as dropped */
  name: string;
  /** where it was dropped */
  originalPath: string;
  /** where it is now (the working folder) */
  workPath: string;
  size: number;
  /** modification time at claim (ms); with size and sha256, checked again after parsing */
  mtimeMs?: number;
  sha256: string;
  /** marker files moved along with it (paths in the working folder) */
  markers: string[];
  claimedAt: string;
  folders: ChannelFolders;
}

export interface FolderOverrides {
  workDir?: string;
  archiveDir?: string;
  errorDir?: string;
}

export interface ClaimOptions extends FolderOverrides {
  logger?: Logger;
  fs?: Partial<IntakeFs>;
  /**
   * Retries when the file is busy (EBUSY, EPERM, EACCES: a Windows share with the file still open).
   * @default 3
   */
  busyRetries?: number;
  /** first retry delay, doubled each time @default 200 */
  busyBaseDelayMs?: number;
  now?: () => Date;
  /** called when claimFile returns null because the file is gone (another instance won the race, or it was removed) */
  onGone?: () => void;
}

/** Internal folder name under each inbox. Dot-named: ignored by every channel's listing. */
export const STATE_SUBDIR = '.wmsbridge';

export function resolveChannelFolders(inboxDir: string, overrides: FolderOverrides = {}): ChannelFolders {
  return {
    work: overrides.workDir ?? join(inboxDir, STATE_SUBDIR, 'work'),
    archive: overrides.archiveDir ?? join(inboxDir, STATE_SUBDIR, 'archive'),
    error: overrides.errorDir ?? join(inboxDir, STATE_SUBDIR, 'error'),
  };
}

/** `20261122T001500123Z`: sorts by time, safe in file names. */
export function workStamp(d: Date): string {
  return d.toISOString().replace(/[-:.]/g, '');
}
const STAMP_PREFIX = /^\d{8}T\d{9}Z-/;

/** Local calendar date (the operator's day) for archive/error subfolders. */
export function dayFolder(d: Date): string {
  const p = (n: number): string => String(n).padStart(2, '0');
  return `${d.getFullYear()}-${p(d.getMonth() + 1)}-${p(d.getDate())}`;
}

const code = (err: unknown): string | undefined => (err as NodeJS.ErrnoException | null)?.code;
const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/** Whether `path` exists (not following a final symlink); an error other than ENOENT is thrown. */
export async function exists(path: string): Promise<boolean> {
  try {
    await fsp.lstat(path);
    return true;
  } catch (err) {
    if (code(err) === 'ENOENT') return false;
    throw err;
  }
}

/** `name`, or `stem-2.ext`, `stem-3.ext`... : the first name not taken in `dir`. */
export async function freeName(dir: string, name: string): Promise<string> {
  if (!(await exists(join(dir, name)))) return name;
  const ext = extname(name);
  const stem = ext && ext !== name ? name.slice(0, -ext.length) : name;
  for (let i = 2; ; i++) {
    const candidate = `${stem}-${i}${ext}`;
    if (!(await exists(join(dir, candidate)))) return candidate;
  }
}

/**
 * Whether a copy of `name` sits in the channel's work folder (`<stamp>-<name>`, or `<stamp>-<stem>-N<ext>` when the
 * name was taken): another instance claimed it and has not archived it yet.
 */
export async function inWorkFolder(channelDir: string, name: string): Promise<boolean> {
  let entries: string[];
  try {
    entries = await fsp.readdir(resolveChannelFolders(channelDir).work);
  } catch (err) {
    if (code(err) === 'ENOENT') return false;
    throw err;
  }
  const ext = extname(name);
  const stem = ext && ext !== name ? name.slice(0, -ext.length) : name;
  return entries.some((e) => {
    if (!STAMP_PREFIX.test(e)) return false;
    const n = e.replace(STAMP_PREFIX, '');
    return n === name || (n.startsWith(`${stem}-`) && n.endsWith(ext) && /^\d+$/.test(n.slice(stem.length + 1, n.length - ext.length)));
  });
}

export async function sha256File(path: string): Promise<string> {
  const hash = createHash('sha256');
  await pipeline(createReadStream(path), async function (src: AsyncIterable<Buffer>) {
    for await (const chunk of src) hash.update(chunk);
  });
  return hash.digest('hex');
}

async function fsyncPath(path: string, flags = 'r+'): Promise<void> {
  const fh = await fsp.open(path, flags);
  try {
    await fh.sync();
  } finally {
    await fh.close();
  }
}

/**
 * Copies across filesystems: hidden temp file beside `dest`, hashed while copying, fsync, re-read and
 * compared, then renamed to `dest` (same folder, atomic). The source is left in place.
 */
async function copyVerified(src: string, dest: string, fs: IntakeFs): Promise<string> {
  const tmp = join(dirname(dest), `.${basename(dest)}.wmsbridge-tmp-${process.pid}-${randomBytes(4).toString('hex')}`);
  const hash = createHash('sha256');
  try {
    await pipeline(
      createReadStream(src),
      new Transform({
        transform(chunk: Buffer, _enc, cb) {
          hash.update(chunk);
          cb(null, chunk);
        },
      }),
      createWriteStream(tmp, { flags: 'wx' }),
    );
    await fsyncPath(tmp);
    const expected = hash.digest('hex');
    const actual = await sha256File(tmp);
    if (actual !== expected) {
      throw new BridgeError(ErrorCode.INTAKE, `copy of ${src} to ${dest} does not verify (sha256 ${actual} != ${expected})`);
    }
    await fs.rename(tmp, dest);
    return expected;
  } catch (err) {
    await fsp.rm(tmp, { force: true });
    throw err;
  }
}

/**
 * mkdir -p of a work/archive/error folder, only while the channel folder it lives under (the share's
 * root, the part before `.wmsbridge`) exists: on an unmounted share, folders created now would land on the
 * local disk under the mount point and hide the share once it is back. The folders below the root are made one
 * at a time, never recursively: a root that vanishes after the check (the share unmounted in between; the chaos
 * test renamed it away there on a slow machine) fails the next mkdir instead of being created again.
 */
export async function mkdirUnderShareRoot(destDir: string): Promise<void> {
  const parts = resolve(destDir).split(sep);
  const i = parts.lastIndexOf(STATE_SUBDIR);
  const root = i > 0 ? parts.slice(0, i).join(sep) || sep : null;
  if (root === null) {
    await fsp.mkdir(destDir, { recursive: true });
    return;
  }
  const gone = (): BridgeError =>
    new BridgeError(
      ErrorCode.INTAKE,
      `folder ${root} is gone (share unmounted?): ${destDir} is not created; the file is taken up again when the folder is back`,
    );
  // no separate check of the root: a plain mkdir of the first folder below it fails with ENOENT when it is gone
  let dir = root;
  for (const part of parts.slice(i)) {
    dir = join(dir, part);
    try {
      await fsp.mkdir(dir);
    } catch (err) {
      if (code(err) === 'EEXIST') continue;
      if (code(err) === 'ENOENT') throw gone();
      throw err;
    }
  }
}

interface MoveOptions {
  fs: IntakeFs;
  busyRetries: number;
  busyBaseDelayMs: number;
  logger: Logger;
}

type MoveResult = { ok: true; path: string; sha256?: string } | { ok: false; reason: 'gone' | 'busy'; message: string };

/**
 * Moves `src` into `destDir` as `name` (or a free variant): rename, or copy-verify-unlink across
 * devices. Never overwrites. 'gone' when the source vanished (another claimer won).
 */
async function moveFile(src: string, destDir: string, name: string, o: MoveOptions): Promise<MoveResult> {
  // never re-create a vanished share on the local disk: the destination folders are created only while
  // the source's own folder is there (an unmounted share would otherwise be shadowed by local folders)
  try {
    await fsp.stat(src);
  } catch (err) {
    if (code(err) !== 'ENOENT') throw err;
    if (!(await exists(dirname(src)))) {
      throw new BridgeError(
        ErrorCode.INTAKE,
        `folder ${dirname(src)} is gone (share unmounted?): ${basename(src)} stays where it is and is taken up again when the folder is back`,
      );
    }
    return { ok: false, reason: 'gone', message: `${src} is gone (claimed by another instance or removed)` };
  }
  await mkdirUnderShareRoot(destDir);
  for (let attempt = 0; ; attempt++) {
    const dest = join(destDir, await freeName(destDir, name));
    try {
      await o.fs.rename(src, dest);
      return { ok: true, path: dest };
    } catch (err) {
      const c = code(err);
      if (c === 'ENOENT' && !(await exists(destDir))) throw err;
      if (c === 'ENOENT') return { ok: false, reason: 'gone', message: `${src} is gone (claimed by another instance or removed)` };
      if (c === 'EXDEV') return moveAcross(src, dest, o);
      if (c === 'EBUSY' || c === 'EPERM' || c === 'EACCES') {
        if (attempt >= o.busyRetries) {
          return { ok: false, reason: 'busy', message: `${src} is busy (${c}) after ${attempt + 1} attempts; left for the next scan` };
        }
        const delay = o.busyBaseDelayMs * 2 ** attempt;
        o.logger.debug({ file: src, attempt: attempt + 1, delayMs: delay, code: c }, 'file busy, retrying the move');
        await sleep(delay);
        continue;
      }
      throw err;
    }
  }
}

async function moveAcross(src: string, dest: string, o: MoveOptions): Promise<MoveResult> {
  let sha: string;
  try {
    sha = await copyVerified(src, dest, o.fs);
  } catch (err) {
    if (code(err) === 'ENOENT') return { ok: false, reason: 'gone', message: `${src} is gone (claimed by another instance or removed)` };
    throw err;
  }
  try {
    await o.fs.unlink(src);
  } catch (err) {
    const c = code(err);
    // another claimer removed the source first: it owns the file, drop our copy
    await fsp.rm(dest, { force: true });
    if (c === 'ENOENT') return { ok: false, reason: 'gone', message: `${src} is gone (claimed by another instance or removed)` };
    if (c === 'EBUSY' || c === 'EPERM' || c === 'EACCES')
      return { ok: false, reason: 'busy', message: `${src} cannot be removed after copying (${c}); left for the next scan` };
    throw err;
  }
  o.logger.info({ file: src, to: dest }, 'moved across filesystems (copy, fsync, verify, unlink)');
  return { ok: true, path: dest, sha256: sha };
}

function moveOptions(options: ClaimOptions | undefined): MoveOptions {
  return {
    fs: { ...realFs, ...(options?.fs ?? {}) },
    busyRetries: options?.busyRetries ?? 3,
    busyBaseDelayMs: options?.busyBaseDelayMs ?? 200,
    logger: options?.logger ?? silentLogger(),
  };
}

/**
 * Moves a ready file into the working folder and hashes it. Returns null when another instance won
 * the race (the file is gone) or the file stayed busy (left for the next scan): both are logged.
 */
export async function claimFile(ready: ReadyFile, options: ClaimOptions = {}): Promise<ClaimedFile | null> {
  const o = moveOptions(options);
  const folders = resolveChannelFolders(ready.dir, options);
  const when = (options.now ?? (() => new Date()))();
  const workName = `${workStamp(when)}-${ready.name}`;
  const moved = await moveFile(ready.path, folders.work, workName, o).catch((err: unknown) => {
    throw new BridgeError(ErrorCode.INTAKE, `claim ${ready.path}: cannot move into ${folders.work}: ${errorMessage(err)}`, { cause: err });
  });
  if (!moved.ok) {
    (moved.reason === 'busy' ? o.logger.warn.bind(o.logger) : o.logger.info.bind(o.logger))({ file: ready.path, reason: moved.reason }, moved.message);
    if (moved.reason === 'gone') options.onGone?.();
    return null;
  }
  const workPath = moved.path;
  const markers: string[] = [];
  for (const m of ready.markers) {
    const suffix = basename(m).slice(ready.name.length);
    const r = await moveFile(m, folders.work, `${basename(workPath)}${suffix}`, o).catch((err: unknown) => ({
      ok: false as const,
      reason: 'busy' as const,
      message: errorMessage(err),
    }));
    if (r.ok) markers.push(r.path);
    else o.logger.warn({ file: m, reason: r.message }, 'marker file not moved with its data file');
  }
  const sha256 = moved.sha256 ?? (await sha256File(workPath));
  const st = await fsp.stat(workPath);
  return {
    channel: ready.channel,
    name: ready.name,
    originalPath: ready.path,
    workPath,
    size: st.size,
    mtimeMs: st.mtimeMs,
    sha256,
    markers,
    claimedAt: when.toISOString(),
    folders,
  };
}

/**
 * Whether the claimed file is still what was claimed (size, mtime, sha256): null when it is, else what
 * changed, in words. A writer that paused longer than the readiness window and went on writing into the
 * file (same inode, now in the work folder) is caught here, after parsing and before anything is sent.
 */
export async function changedSinceClaim(claimed: ClaimedFile, options?: { contentHash?: boolean }): Promise<string | null> {
  let st;
  try {
    st = await fsp.stat(claimed.workPath);
  } catch (err) {
    return `it disappeared from ${dirname(claimed.workPath)} (${code(err) ?? errorMessage(err)})`;
  }
  if (st.size !== claimed.size) return `its size went from ${claimed.size} to ${st.size} bytes`;
  // mtime compared to the millisecond (what every filesystem and share keeps); closer, the hash decides
  if (claimed.mtimeMs !== undefined && Math.abs(st.mtimeMs - claimed.mtimeMs) >= 1)
    return `it was written again (modified ${new Date(st.mtimeMs).toISOString()})`;
  if (!claimed.sha256 || options?.contentHash === false) return null;
  const sha = await sha256File(claimed.workPath);
  return sha === claimed.sha256 ? null : 'its content changed (same size, different sha256)';
}

async function moveWithMarkers(claimed: ClaimedFile, destDir: string, options: ClaimOptions | undefined): Promise<{ path: string; markers: string[] }> {
  const o = moveOptions(options);
  const r = await moveFile(claimed.workPath, destDir, claimed.name, o);
  if (!r.ok) throw new BridgeError(ErrorCode.INTAKE, `move ${claimed.workPath} to ${destDir}: ${r.message}`);
  const markers: string[] = [];
  const workBase = basename(claimed.workPath);
  for (const m of claimed.markers) {
    const suffix = basename(m).startsWith(workBase) ? basename(m).slice(workBase.length) : `.${basename(m)}`;
    const mr = await moveFile(m, destDir, `${basename(r.path)}${suffix}`, o).catch((err: unknown) => ({
      ok: false as const,
      reason: 'busy' as const,
      message: errorMessage(err),
    }));
    if (mr.ok) markers.push(mr.path);
    else o.logger.warn({ file: m, reason: mr.message }, 'marker file not moved with its data file');
  }
  return { path: r.path, markers };
}

/** Moves a processed file (and its markers) to `<archive>/YYYY-MM-DD/<name>`; returns the new path. */
export async function archiveFile(claimed: ClaimedFile, date: Date = new Date(), options?: ClaimOptions): Promise<string> {
  const { path } = await moveWithMarkers(claimed, join(claimed.folders.archive, dayFolder(date)), options);
  return path;
}

export interface MoveToErrorOptions extends ClaimOptions {
  runId?: string;
  date?: Date;
}

/**
 * Moves a file that could not be processed to `<error>/YYYY-MM-DD/<name>` and writes
 * `<name>.reason.txt` beside it: what went wrong, when, which run, how to retry.
 */
export async function moveToError(claimed: ClaimedFile, reason: string, options: MoveToErrorOptions = {}): Promise<{ path: string; reasonPath: string }> {
  const date = options.date ?? new Date();
  const { path } = await moveWithMarkers(claimed, join(claimed.folders.error, dayFolder(date)), options);
  const reasonPath = `${path}.reason.txt`;
  const inbox = dirname(claimed.originalPath);
  const text = [
    `file:      ${claimed.name} (channel ${claimed.channel})`,
    `dropped:   ${claimed.originalPath}`,
    `size:      ${claimed.size} bytes, sha256 ${claimed.sha256}`,
    `when:      ${date.toISOString()}`,
    `run:       ${options.runId ?? '-'}`,
    `problem:   ${reason}`,
    `to retry:  fix the file and drop it again into inbox/${claimed.channel} (${inbox}${inbox.endsWith('/') ? '' : '/'})`,
    '',
  ].join('\n');
  const tmp = join(dirname(reasonPath), `.${basename(reasonPath)}.wmsbridge-tmp-${process.pid}-${randomBytes(4).toString('hex')}`);
  await fsp.writeFile(tmp, text, { flag: 'wx' });
  await fsp.rename(tmp, reasonPath);
  return { path, reasonPath };
}

export interface LeftoverOptions extends FolderOverrides {
  channel?: string;
  /** the channel's inbox (default: two levels above a default work folder) */
  inboxDir?: string;
}

/**
 * Files left in a working folder by an interrupted run, oldest claim first, as ClaimedFile (hashed
 * again), with their marker files attached. For resume at start-up.
 */
export async function listClaimedLeftovers(workDir: string, options: LeftoverOptions = {}): Promise<ClaimedFile[]> {
  let names: string[];
  try {
    names = (await fsp.readdir(workDir, { withFileTypes: true })).filter((d) => d.isFile() && !d.name.startsWith('.')).map((d) => d.name);
  } catch (err) {
    if (code(err) === 'ENOENT') return [];
    throw err;
  }
  names.sort();
  const dataNames = names.filter((n) => !names.some((other) => other !== n && n.startsWith(`${other}.`)));
  const inboxDir =
    options.inboxDir ?? (basename(workDir) === 'work' && basename(dirname(workDir)) === STATE_SUBDIR ? dirname(dirname(workDir)) : dirname(workDir));
  const folders = resolveChannelFolders(inboxDir, { workDir, ...options });
  const out: ClaimedFile[] = [];
  for (const n of dataNames) {
    const workPath = join(workDir, n);
    const stamp = /^(\d{4})(\d{2})(\d{2})T(\d{2})(\d{2})(\d{2})(\d{3})Z-/.exec(n);
    const name = n.replace(STAMP_PREFIX, '');
    const [st, sha256] = await Promise.all([fsp.stat(workPath), sha256File(workPath)]);
    out.push({
      channel: options.channel ?? basename(inboxDir),
      name,
      originalPath: join(inboxDir, name),
      workPath,
      size: st.size,
      sha256,
      markers: names.filter((m) => m !== n && m.startsWith(`${n}.`)).map((m) => join(workDir, m)),
      claimedAt: stamp ? `${stamp[1]}-${stamp[2]}-${stamp[3]}T${stamp[4]}:${stamp[5]}:${stamp[6]}.${stamp[7]}Z` : st.mtime.toISOString(),
      folders,
    });
  }
  return out;
}

/**
 * Moves a loose inbox file that is not data (a spent batch trigger, an orphan marker) to
 * `<archive>/YYYY-MM-DD/`. Returns the new path, or null when it was already gone.
 */
export async function archiveLooseFile(path: string, folders: ChannelFolders, date: Date = new Date(), options?: ClaimOptions): Promise<string | null> {
  const r = await moveFile(path, join(folders.archive, dayFolder(date)), basename(path), moveOptions(options));
  return r.ok ? r.path : null;
}
