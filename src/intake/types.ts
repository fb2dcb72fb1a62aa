/** Shapes shared by the intake modules (watcher, claim) and their callers (run/watch pipeline). */

/** A file the readiness rule of its channel declared complete. */
export interface ReadyFile {
  channel: string;
  /** the channel's inbox folder */
  dir: string;
  /** absolute path of the file in the inbox */
  path: string;
  name: string;
  size: number;
  mtimeMs: number;
  /** marker files (absolute paths) that belong to this file: moved along with it, never data */
  markers: string[];
  /** the batch trigger file that released it, if any (consumed: the watcher archives it when it releases the batch) */
  trigger?: string;
}

/** Where a channel's files go once claimed. Defaults live under the inbox so renames stay atomic. */
export interface ChannelFolders {
  work: string;
  archive: string;
  error: string;
}
