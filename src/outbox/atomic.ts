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
import { createHash, randomBytes } from 'node:crypto';
import { open as fsOpen, rename as fsRename, unlink as fsUnlink } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { Writable } from 'node:stream';
import { BridgeError, ErrorCode, errorMessage } from '../shared/errors.js';

/** mode of new outbox files unless a write says otherwise (config outbox.fileMode; the umask still applies) */
let defaultFileMode = 0o640;

/** Sets the mode of new outbox files (the composition root does, from outbox.fileMode). */
export function setOutboxFileMode(mode: number): void {
  if (!Number.isInteger(mode) || mode < 0 || mode > 0o777) throw new RangeError(`outbox file mode must be between 0 and 0777 (got ${mode})`);
  defaultFileMode = mode;
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
   * @default outbox.fileMode (0640), see setOutboxFileMode
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
  const tempPath = tempPathFor(path);
  const hash = createHash('sha256');
  let handle: AtomicFileHandle | undefined;
  let opened = false; // the temp file exists on disk
  let bytes = 0;
  let failure: BridgeError | undefined;
  let state: 'open' | 'committing' | 'committed' | 'aborted' = 'open';
  let cleanup: Promise<void> | undefined;

  const removeTemp = (): Promise<void> => {
    cleanup ??= (async () => {
      const h = handle;
      handle = undefined;
      if (h) await h.close().catch(() => undefined);
      if (opened) await fs.unlink(tempPath).catch(() => undefined);
      opened = false;
    })();
    return cleanup;
  };

  const fail = (err: unknown): BridgeError => {
    failure ??= outboxError(path, err);
    return failure;
  };

  async function writeAll(buf: Uint8Array): Promise<void> {
    if (!handle) throw new Error('temp file not open');
    let off = 0;
    while (off < buf.length) {
      const { bytesWritten } = await handle.write(buf, off, buf.length - off);
      if (bytesWritten <= 0) {
        const e = new Error('write returned 0 bytes') as NodeJS.ErrnoException;
        e.code = 'ENOSPC';
        throw e;
      }
      off += bytesWritten;
    }
    hash.update(buf);
    bytes += buf.length;
  }

  const stream = new Writable({
    highWaterMark: 64 * 1024,
    construct(callback) {
      fs.open(tempPath, 'wx', options.mode ?? defaultFileMode).then(
        (h) => {
          handle = h;
          opened = true;
          callback();
        },
        (err: unknown) => callback(fail(err)),
      );
    },
    write(chunk: Buffer, _encoding, callback) {
      writeAll(chunk).then(
        () => callback(),
        (err: unknown) => {
          const e = fail(err);
          void removeTemp().then(() => callback(e));
        },
      );
    },
    writev(chunks, callback) {
      const buf = chunks.length === 1 ? chunks[0]!.chunk : Buffer.concat(chunks.map((c) => c.chunk as Buffer));
      writeAll(buf as Buffer).then(
        () => callback(),
        (err: unknown) => {
          const e = fail(err);
          void removeTemp().then(() => callback(e));
        },
      );
    },
    final(callback) {
      const h = handle;
      if (!h) {
        callback(fail(new Error('temp file not open')));
        return;
      }
      h.sync()
        .then(() => h.close())
        .then(
          () => {
            handle = undefined;
            callback();
          },
          (err: unknown) => {
            const e = fail(err);
            void removeTemp().then(() => callback(e));
          },
        );
    },
    destroy(err, callback) {
      // autoDestroy after a clean finish: commit() is about to rename the temp file, keep it
      if (state === 'committed' || (!err && state === 'committing')) {
        callback(err);
        return;
      }
      // the temp file must not outlive a destroyed stream
      void removeTemp().then(() => callback(err));
    },
  });
  // an error is reported by commit(); keep an unhandled 'error' event from crashing the process
  stream.on('error', (err) => {
    fail(err);
  });

  async function syncDir(dir: string): Promise<void> {
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

  async function commit(): Promise<{ bytes: number; sha256: string }> {
    if (state === 'committed') throw new BridgeError(ErrorCode.OUTBOX, `outbox: ${path} was already committed`);
    if (state === 'aborted') throw failure ?? new BridgeError(ErrorCode.OUTBOX, `outbox: writing ${path} was aborted`);
    if (state === 'committing') throw new BridgeError(ErrorCode.OUTBOX, `outbox: ${path} is already being committed`);
    state = 'committing';
    try {
      if (failure) throw failure;
      await new Promise<void>((resolve, reject) => {
        if (stream.writableFinished) return resolve();
        const onFinish = (): void => {
          stream.off('error', onError);
          stream.off('close', onClose);
          resolve();
        };
        const onError = (err: Error): void => {
          stream.off('finish', onFinish);
          stream.off('close', onClose);
          reject(fail(err));
        };
        const onClose = (): void => {
          if (!stream.writableFinished) onError(failure ?? new Error('stream closed before it finished'));
        };
        stream.once('finish', onFinish);
        stream.once('error', onError);
        stream.once('close', onClose);
        if (!stream.writableEnded) stream.end();
      });
      if (failure) throw failure;
      try {
        await fs.rename(tempPath, path);
      } catch (err) {
        throw fail(err);
      }
      opened = false;
      state = 'committed';
      await syncDir(dirname(path));
      const sha256 = hash.digest('hex');
      if (options.doneFile) {
        await writeFileAtomic(`${path}.done`, `${basename(path)} ${bytes} ${sha256}\n`, { syncDir: options.syncDir }, deps);
      }
      return { bytes, sha256 };
    } catch (err) {
      if (state !== 'committed') {
        state = 'aborted';
        stream.destroy();
        await removeTemp();
      }
      throw outboxError(path, err);
    }
  }

  async function abort(): Promise<void> {
    if (state === 'committed') return;
    state = 'aborted';
    if (!stream.destroyed) stream.destroy();
    await removeTemp();
    // construct() may still be opening the file: wait for the stream to settle, then clean again
    if (!stream.closed) await new Promise<void>((resolve) => stream.once('close', () => resolve()));
    cleanup = undefined;
    await removeTemp();
  }

  return {
    stream,
    commit,
    abort,
    get tempPath() {
      return tempPath;
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
