/**
 * Atomic file writes for the outbox. Data goes to a hidden temp file in the SAME folder
 * (`.<name>.<pid>.<rand>.tmp`), is fsynced, then renamed over the final name: a reader polling the
 * folder (an ERP import job, Excel, a sync client) sees either nothing or the complete file, never a
 * partial one. rename() is atomic only within one filesystem, hence the same folder. Temp names start
 * with '.' so naive globs (`*.csv`) skip them. An optional `<name>.done` marker is written after the
 * rename for importers that wait for a marker.
 *
 * A full disk (ENOSPC, EDQUOT) aborts the write, removes the temp file and throws BridgeError E_OUTBOX
 * whose message tells the operator what to do: the journal holds the truth, the outbox is rebuilt.
 */
import { createHash, randomBytes, type Hash } from 'node:crypto';
import { open as fsOpen, rename as fsRename, unlink as fsUnlink } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { Writable } from 'node:stream';
import { BridgeError, ErrorCode, errorMessage } from '../shared/errors.js';

/**
 * Mode of new outbox files when a write does not say (the default of config outbox.fileMode; the umask still
 * applies). There is no module-wide setting: the composition root passes outbox.fileMode to each writer (`mode`).
 */
export const DEFAULT_OUTBOX_FILE_MODE = 0o640;

/** outbox.fileMode ('0640') as a mode; refused when it is not one. */
export function outboxFileMode(octal: string): number {
  const mode = parseInt(octal, 8);
  if (!Number.isInteger(mode) || mode < 0 || mode > 0o777) throw new RangeError(`outbox file mode must be between 0 and 0777 (got ${octal})`);
  return mode;
}

/** `{ mode }` when a mode is given, else nothing (the writer's default): for spreading into writer options. */
export function modeOption(mode: number | undefined): { mode?: number } {
  return mode !== undefined ? { mode } : {};
}

/** The part of a FileHandle the writer uses (injectable for tests: a failing disk, /dev/full). */
export interface AtomicFileHandle {
  write(buffer: Uint8Array, offset: number, length: number): Promise<{ bytesWritten: number }>;
  sync(): Promise<void>;
  close(): Promise<void>;
}

/** The filesystem operations the writer uses. Defaults to node:fs/promises. */
export interface AtomicFsLayer {
  open(path: string, flags: string, mode?: number): Promise<AtomicFileHandle>;
  rename(from: string, to: string): Promise<void>;
  unlink(path: string): Promise<void>;
}

export const nodeFsLayer: AtomicFsLayer = {
  open: (path, flags, mode) => fsOpen(path, flags, mode),
  rename: (from, to) => fsRename(from, to),
  unlink: (path) => fsUnlink(path),
};

export interface AtomicWriteOptions {
  /**
   * Also write `<name>.done` after the rename (content: `<name> <bytes> <sha256>`), for importers that
   * wait for a marker file.
   * @default false
   */
  doneFile?: boolean;
  /**
   * File mode of the new file.
   * @default DEFAULT_OUTBOX_FILE_MODE (0640); the app passes outbox.fileMode
   */
  mode?: number;
  /** fsync the folder after the rename so the new name survives a power cut (best effort). @default true */
  syncDir?: boolean;
}

export interface AtomicWriteDeps {
  fs?: AtomicFsLayer;
}

export interface AtomicWriteStream {
  /** write the content here; errors are BridgeError E_OUTBOX (the temp file is already removed) */
  stream: Writable;
  /** ends the stream, fsyncs, renames into place, writes the done file; resolves when the file is visible */
  commit(): Promise<{ bytes: number; sha256: string }>;
  /** discards everything written; removes the temp file. Safe to call twice or after an error. */
  abort(): Promise<void>;
  /** the temp file's path (for tests and diagnostics) */
  readonly tempPath: string;
}

const FULL_CODES = new Set(['ENOSPC', 'EDQUOT']);

/** The temp name used for `path`: hidden, same folder, unique per process and call. */
export function tempPathFor(path: string): string {
  return join(dirname(path), `.${basename(path)}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`);
}

/** true for names made by tempPathFor: watchers and listings of the outbox should skip them */
export function isAtomicTempName(name: string): boolean {
  return /^\..+\.\d+\.[0-9a-f]{8}\.tmp$/.test(name);
}

/** Maps a low-level error to the BridgeError the outbox contract promises. */
export function outboxError(path: string, err: unknown, operation = 'writing'): BridgeError {
  if (err instanceof BridgeError) return err;
  const code = (err as NodeJS.ErrnoException | undefined)?.code;
  const dir = dirname(path);
  const name = basename(path);
  if (code !== undefined && FULL_CODES.has(code)) {
    return new BridgeError(
      ErrorCode.OUTBOX,
      `outbox ${dir} is full (${code}) ${operation} ${name}: nothing was lost, the journal keeps the results; ` +
        'free space and run wmsbridge again: files whose results could not be written stay in work/ and are finished by the next run',
      { cause: err, details: { file: path, errno: code } },
    );
  }
  return new BridgeError(ErrorCode.OUTBOX, `outbox ${dir}: ${operation} ${name} failed: ${errorMessage(err)}`, {
    cause: err,
    details: { file: path, errno: code },
  });
}

/** One atomic write's temp file and where it stands (shared by its stream, commit and abort). */
interface TempFile {
  readonly path: string;
  readonly tempPath: string;
  readonly fs: AtomicFsLayer;
  readonly hash: Hash;
  handle: AtomicFileHandle | undefined;
  /** the temp file exists on disk */
  opened: boolean;
  bytes: number;
  failure: BridgeError | undefined;
  state: 'open' | 'committing' | 'committed' | 'aborted';
  cleanup: Promise<void> | undefined;
}

/** Closes and removes the temp file (once; `t.cleanup` is the removal under way). */
function removeTemp(t: TempFile): Promise<void> {
  t.cleanup ??= (async () => {
    const h = t.handle;
    t.handle = undefined;
    if (h) await h.close().catch(() => undefined);
    if (t.opened) await t.fs.unlink(t.tempPath).catch(() => undefined);
    t.opened = false;
  })();
  return t.cleanup;
}

/** The write's error: the first one met, as the outbox contract promises it. */
function failWith(t: TempFile, err: unknown): BridgeError {
  t.failure ??= outboxError(t.path, err);
  return t.failure;
}

async function writeAll(t: TempFile, buf: Uint8Array): Promise<void> {
  if (!t.handle) throw new Error('temp file not open');
  let off = 0;
  while (off < buf.length) {
    const { bytesWritten } = await t.handle.write(buf, off, buf.length - off);
    if (bytesWritten <= 0) {
      const e = new Error('write returned 0 bytes') as NodeJS.ErrnoException;
      e.code = 'ENOSPC';
      throw e;
    }
    off += bytesWritten;
  }
  t.hash.update(buf);
  t.bytes += buf.length;
}

/** The stream into the temp file: opened on construct, fsynced and closed on final, removed when destroyed early. */
function tempFileStream(t: TempFile, mode: number): Writable {
  /** a failed step removes the temp file before the stream reports the error */
  const failed =
    (callback: (e?: Error | null) => void) =>
    (err: unknown): void => {
      const e = failWith(t, err);
      void removeTemp(t).then(() => callback(e));
    };
  return new Writable({
    highWaterMark: 64 * 1024,
    construct(callback) {
      t.fs.open(t.tempPath, 'wx', mode).then(
        (h) => {
          t.handle = h;
          t.opened = true;
          callback();
        },
        (err: unknown) => callback(failWith(t, err)),
      );
    },
    write(chunk: Buffer, _encoding, callback) {
      writeAll(t, chunk).then(() => callback(), failed(callback));
    },
    writev(chunks, callback) {
      const buf = chunks.length === 1 ? chunks[0]!.chunk : Buffer.concat(chunks.map((c) => c.chunk as Buffer));
      writeAll(t, buf as Buffer).then(() => callback(), failed(callback));
    },
    final(callback) {
      const h = t.handle;
      if (!h) {
        callback(failWith(t, new Error('temp file not open')));
        return;
      }
      h.sync()
        .then(() => h.close())
        .then(() => {
          t.handle = undefined;
          callback();
        }, failed(callback));
    },
    destroy(err, callback) {
      // autoDestroy after a clean finish: commit() is about to rename the temp file, keep it
      if (t.state === 'committed' || (!err && t.state === 'committing')) {
        callback(err);
        return;
      }
      // the temp file must not outlive a destroyed stream
      void removeTemp(t).then(() => callback(err));
    },
  });
}

/** Ends the stream and resolves once everything written is fsynced and closed; rejects with the write's error. */
function finished(t: TempFile, stream: Writable): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    if (stream.writableFinished) return resolve();
    const onFinish = (): void => {
      stream.off('error', onError);
      stream.off('close', onClose);
      resolve();
    };
    const onError = (err: Error): void => {
      stream.off('finish', onFinish);
      stream.off('close', onClose);
      reject(failWith(t, err));
    };
    const onClose = (): void => {
      if (!stream.writableFinished) onError(t.failure ?? new Error('stream closed before it finished'));
    };
    stream.once('finish', onFinish);
    stream.once('error', onError);
    stream.once('close', onClose);
    if (!stream.writableEnded) stream.end();
  });
}

/** fsyncs a folder so a rename in it survives a power cut (best effort; only on the real filesystem). */
async function syncDir(dir: string, options: AtomicWriteOptions, fs: AtomicFsLayer): Promise<void> {
  if (options.syncDir === false || fs !== nodeFsLayer) return;
  try {
    const h = await fsOpen(dir, 'r');
    try {
      await h.sync();
    } finally {
      await h.close();
    }
  } catch {
    // some filesystems (SMB, Windows) refuse to fsync a folder: the rename is still atomic
  }
}

/**
 * A writable stream into a hidden temp file next to `path`; `commit()` makes it appear as `path`
 * atomically. Nothing is visible under `path` until commit resolves.
 */
export function createAtomicWriteStream(
  path: string,
  options: AtomicWriteOptions = {},
  deps: AtomicWriteDeps = {},
): AtomicWriteStream {
  const fs = deps.fs ?? nodeFsLayer;
  const t: TempFile = {
    path,
    tempPath: tempPathFor(path),
    fs,
    hash: createHash('sha256'),
    handle: undefined,
    opened: false,
    bytes: 0,
    failure: undefined,
    state: 'open',
    cleanup: undefined,
  };
  const stream = tempFileStream(t, options.mode ?? DEFAULT_OUTBOX_FILE_MODE);
  // an error is reported by commit(); keep an unhandled 'error' event from crashing the process
  stream.on('error', (err) => {
    failWith(t, err);
  });

  async function commit(): Promise<{ bytes: number; sha256: string }> {
    if (t.state === 'committed') throw new BridgeError(ErrorCode.OUTBOX, `outbox: ${path} was already committed`);
    if (t.state === 'aborted') throw t.failure ?? new BridgeError(ErrorCode.OUTBOX, `outbox: writing ${path} was aborted`);
    if (t.state === 'committing') throw new BridgeError(ErrorCode.OUTBOX, `outbox: ${path} is already being committed`);
    t.state = 'committing';
    try {
      if (t.failure) throw t.failure;
      await finished(t, stream);
      if (t.failure) throw t.failure;
      try {
        await fs.rename(t.tempPath, path);
      } catch (err) {
        throw failWith(t, err);
      }
      t.opened = false;
      t.state = 'committed';
      await syncDir(dirname(path), options, fs);
      const sha256 = t.hash.digest('hex');
      if (options.doneFile) {
        await writeFileAtomic(`${path}.done`, `${basename(path)} ${t.bytes} ${sha256}\n`, { syncDir: options.syncDir }, deps);
      }
      return { bytes: t.bytes, sha256 };
    } catch (err) {
      if (t.state !== 'committed') {
        t.state = 'aborted';
        stream.destroy();
        await removeTemp(t);
      }
      throw outboxError(path, err);
    }
  }

  async function abort(): Promise<void> {
    if (t.state === 'committed') return;
    t.state = 'aborted';
    if (!stream.destroyed) stream.destroy();
    await removeTemp(t);
    // construct() may still be opening the file: wait for the stream to settle, then clean again
    if (!stream.closed) await new Promise<void>((resolve) => stream.once('close', () => resolve()));
    t.cleanup = undefined;
    await removeTemp(t);
  }

  return {
    stream,
    commit,
    abort,
    get tempPath() {
      return t.tempPath;
    },
  };
}

/** Writes `data` to `path` atomically (temp file + fsync + rename). */
export async function writeFileAtomic(
  path: string,
  data: string | Uint8Array,
  options: AtomicWriteOptions = {},
  deps: AtomicWriteDeps = {},
): Promise<{ bytes: number; sha256: string }> {
  const w = createAtomicWriteStream(path, options, deps);
  try {
    const buf = typeof data === 'string' ? Buffer.from(data, 'utf8') : data;
    if (buf.length > 0) w.stream.write(buf);
    return await w.commit();
  } catch (err) {
    await w.abort();
    throw outboxError(path, err);
  }
}
