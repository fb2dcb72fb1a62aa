/**
 * Watches the channels' inbox folders and reports files that are complete ('ready-file').
 *
 * The folder listing is the source of truth: chokidar events (polling for SMB/NFS/CIFS shares, where
 * native events never arrive) only make a listing happen sooner, a channel with files still being
 * written is listed every `intervalMs` of its readiness rule, and every channel is listed again every
 * `rescanIntervalMs` so nothing is missed (a share that disappears and comes back, a lost event).
 * Listing errors are warnings, retried, never fatal. Subfolders are not recursed; dot-files (the
 * `.wmsbridge` folder, wmsbridge's own hidden temp files) are never data.
 *
 * `scanOnce()` / `scan()` (no chokidar, no timers left behind) serve the one-shot `run`: list every
 * channel, wait for readiness up to `maxWaitMs`, report what is ready and what was skipped.
 */
import { EventEmitter } from 'node:events';
import * as fsp from 'node:fs/promises';
import { basename, dirname, join, resolve } from 'node:path';
import { watch, type FSWatcher } from 'chokidar';
import type { Logger } from '../shared/logger.js';
import { errorMessage } from '../shared/errors.js';
import { archiveLooseFile, claimFile, moveToError, resolveChannelFolders, type FolderOverrides } from './claim.js';
import { createNameFilter, createReadinessTracker, type DirEntryInfo, type ReadinessDecision, type ReadinessSpec, type ReadinessTracker } from './readiness.js';
import type { ChannelFolders, ReadyFile } from './types.js';
import { CONTROL_IN_NAME, displayName, openForWriting, refusalOf, utf8Name, type RefusedEntry } from './safety.js';

export type { ReadyFile } from './types.js';

export interface ChannelWatchSpec {
  name: string;
  /** the channel's inbox folder */
  dir: string;
  /** @default { mode: 'stable' } */
  readiness?: ReadinessSpec;
  /** file name globs to take (case-insensitive) @default ['*'] */
  patterns?: string[];
  /** file name globs never taken @default ['*.tmp', '*.part', '~*', '.*'] */
  ignore?: string[];
  /** work/archive/error overrides (default under `<dir>/.wmsbridge/`) */
  folders?: FolderOverrides;
  /**
   * Whether a mapping claims this file name: a file it refuses stays where it is, reported once
   * ('no mapping matches'). @default every name
   */
  accepts?: (name: string) => boolean;
  /**
   * Whether a sub-folder of the channel is one its mappings read files from (the attachments of an attachment
   * mapping, `pedidos/anexos`): not data, and not a mistake either, so not reported. @default none
   */
  readsFolder?: (name: string) => boolean;
}

export interface InboxWatcherOptions {
  channels: ChannelWatchSpec[];
  /** poll the folders instead of OS events: required on SMB/NFS/CIFS shares @default false */
  usePolling?: boolean;
  /** chokidar's polling interval when usePolling @default 2000 */
  pollIntervalMs?: number;
  /** full listing of every channel, whatever the events say @default 60000 */
  rescanIntervalMs?: number;
  /** scan()/scanOnce(): how long to wait for files still being written before skipping them @default 30000 */
  maxWaitMs?: number;
  /** move 0-byte files past their grace period to the error folder (reason "empty file") @default true */
  handleEmptyFiles?: boolean;
  /** run id written into reason files */
  runId?: string;
}

export interface InboxWatcherDeps {
  logger: Logger;
}

export interface EmptyFileReport {
  channel: string;
  name: string;
  path: string;
  emptyForMs: number;
  /** where it was moved (null when the move did not happen: handleEmptyFiles false, or lost a race) */
  errorPath: string | null;
}

export interface WaitingFile {
  channel: string;
  name: string;
  path: string;
  reason: string;
}

export interface ScanReport {
  ready: ReadyFile[];
  empty: EmptyFileReport[];
  /** skipped this run: still being written, no marker yet, empty within the grace period */
  waiting: WaitingFile[];
  /** channels whose folder could not be listed */
  errors: { channel: string; dir: string; message: string }[];
  /**
   * entries not taken, left where they are, with why: a name that is not UTF-8 or holds control
   * characters, a symlink, a hard link, a FIFO or other non-regular file, a folder, no mapping matches
   */
  refused: RefusedEntry[];
}

export interface InboxWatcher {
  on(event: 'ready-file', listener: (file: ReadyFile) => void): this;
  on(event: 'empty-file', listener: (report: EmptyFileReport) => void): this;
  /** an entry is not taken (once per entry while it stays) */
  on(event: 'refused-entry', listener: (entry: RefusedEntry) => void): this;
  off(event: string, listener: (...args: never[]) => void): this;
  /** Starts watching (chokidar + checks + periodic rescan); resolves once the first listing is done. */
  start(): Promise<void>;
  /** One-shot: every channel listed, readiness applied with a bounded wait. No watching. */
  scan(): Promise<ScanReport>;
  scanOnce(): Promise<ReadyFile[]>;
  close(): Promise<void>;
}

interface ChannelState {
  spec: ChannelWatchSpec;
  dir: string;
  folders: ChannelFolders;
  isData: (name: string) => boolean;
  tracker: ReadinessTracker;
  /** name -> "size:mtime" last emitted, so a file is reported once per version */
  emitted: Map<string, string>;
  timer: NodeJS.Timeout | null;
  dueAt: number;
  running: boolean;
  current: Promise<void> | null;
  rerun: boolean;
  rerunRescan: boolean;
  listErrorStreak: number;
  /** refused entries already reported ("name|reason"), so each is logged once while it stays */
  refusedSeen: Set<string>;
}

export interface FolderListing {
  /** plain regular files (one name, not a symlink) with size and mtime */
  files: DirEntryInfo[];
  /** every other entry (dot-names excepted), with why it is not taken */
  refused: Array<Omit<RefusedEntry, 'channel'>>;
}

/**
 * Lists a folder by raw name bytes (a Latin-1 name on a Windows share is not lost in decoding), lstat
 * each entry (never following a link; d_type is unreliable on shares). Dot-names (wmsbridge's own folder
 * and temp files) are skipped; every other entry is a data file candidate or refused with a reason.
 */
export async function listInboxFolder(dir: string): Promise<FolderListing> {
  const raw = await fsp.readdir(dir, { encoding: 'buffer' });
  const out: FolderListing = { files: [], refused: [] };
  for (const bytes of raw) {
    if (bytes[0] === 0x2e) continue; // '.'
    const name = utf8Name(bytes);
    const shown = displayName(bytes);
    if (name === null) {
      out.refused.push({
        name: shown,
        path: join(dir, shown),
        kind: 'name-encoding',
        reason: 'the name is not UTF-8 (a Latin-1/windows-1252 name from a Windows share?): rename it with the ERP or the share set to UTF-8 names',
      });
      continue;
    }
    if (CONTROL_IN_NAME.test(name)) {
      out.refused.push({
        name: shown,
        path: join(dir, shown),
        kind: 'name-control',
        reason: 'the name holds a control character (newline, tab, bidi override): rename it',
      });
      continue;
    }
    try {
      const st = await fsp.lstat(join(dir, name));
      const why = refusalOf(st);
      if (why) out.refused.push({ name, path: join(dir, name), ...why });
      else out.files.push({ name, size: st.size, mtimeMs: st.mtimeMs });
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
    }
  }
  return out;
}

/** What the watcher's parts share: its logger, its events, its options. */
interface WatcherContext {
  log: Logger;
  emitter: EventEmitter;
  handleEmpty: boolean;
  runId?: string | undefined;
  maxWaitMs: number;
}

function newChannelState(spec: ChannelWatchSpec): ChannelState {
  const isData = createNameFilter(spec.patterns, spec.ignore);
  const accepts = spec.accepts ?? (() => true);
  const dir = resolve(spec.dir);
  return {
    spec,
    dir,
    folders: resolveChannelFolders(dir, spec.folders),
    isData: (n) => !n.startsWith('.') && isData(n),
    tracker: createReadinessTracker(spec.readiness, (n) => !n.startsWith('.') && isData(n) && accepts(n)),
    emitted: new Map(),
    timer: null,
    dueAt: 0,
    running: false,
    current: null,
    rerun: false,
    rerunRescan: false,
    listErrorStreak: 0,
    refusedSeen: new Set(),
  };
}

/**
 * Lists a channel: data file candidates, plus every entry not taken with why (the folder listing's
 * refusals, and files of the channel's patterns that no mapping claims; markers and batch triggers are
 * companions, not refusals). Refusals are reported (logged, emitted) once while the entry stays.
 */
async function listChannel(ch: ChannelState, wc: WatcherContext): Promise<{ files: DirEntryInfo[]; refused: RefusedEntry[]; fresh: RefusedEntry[] }> {
  const listing = await listInboxFolder(ch.dir);
  const reads = ch.spec.readsFolder;
  // a folder the channel's mappings read (its attachments) is where it should be: not named as not taken
  const refused: RefusedEntry[] = listing.refused.filter((r) => !(r.kind === 'folder' && reads?.(r.name))).map((r) => ({ channel: ch.spec.name, ...r }));
  const accepts = ch.spec.accepts;
  if (accepts) {
    const spec = ch.tracker.spec;
    const triggers = new Set(spec.batchTriggers.map((t) => t.toLowerCase()));
    const companion = (n: string): boolean => {
      const l = n.toLowerCase();
      return spec.mode === 'marker' && (triggers.has(l) || spec.suffixes.some((x) => l.endsWith(x.toLowerCase()) && l.length > x.length));
    };
    for (const f of listing.files) {
      if (ch.isData(f.name) && !companion(f.name) && !accepts(f.name)) {
        refused.push({
          channel: ch.spec.name,
          name: f.name,
          path: join(ch.dir, f.name),
          kind: 'no-mapping',
          reason: `no mapping matches this file name in channel ${ch.spec.name}: left where it is`,
        });
      }
    }
  }
  const keys = new Set(refused.map((r) => `${r.name}|${r.kind}`));
  for (const k of [...ch.refusedSeen]) if (!keys.has(k)) ch.refusedSeen.delete(k);
  const fresh: RefusedEntry[] = [];
  for (const r of refused) {
    const k = `${r.name}|${r.kind}`;
    if (ch.refusedSeen.has(k)) continue;
    ch.refusedSeen.add(k);
    fresh.push(r);
    // a sub-folder (the attachments' folder, say) is named once at info level; what may be data is a warning
    wc.log[r.kind === 'folder' ? 'info' : 'warn']({ file: r.path, channel: r.channel, kind: r.kind }, `not taken: ${r.reason}`);
    wc.emitter.emit('refused-entry', r);
  }
  return { files: listing.files, refused, fresh };
}

/** Ready decisions whose file another local process still holds open for writing become waits. */
async function holdOpenFiles(ch: ChannelState, decisions: ReadinessDecision[]): Promise<ReadinessDecision[]> {
  const ready = decisions.filter((d) => d.kind === 'ready');
  if (ready.length === 0) return decisions;
  const open = await openForWriting(ready.map((d) => join(ch.dir, d.entry.name)));
  if (open.size === 0) return decisions;
  return decisions.map((d) => {
    const pids = d.kind === 'ready' ? open.get(join(ch.dir, d.entry.name)) : undefined;
    return pids ? { kind: 'waiting', entry: d.entry, reason: `open for writing by another process (pid ${pids.join(', ')})` } : d;
  });
}

const toReady = (ch: ChannelState, e: DirEntryInfo, markers: string[], trigger?: string): ReadyFile => ({
  channel: ch.spec.name,
  dir: ch.dir,
  path: join(ch.dir, e.name),
  name: e.name,
  size: e.size,
  mtimeMs: e.mtimeMs,
  markers: markers.map((m) => join(ch.dir, m)),
  ...(trigger ? { trigger: join(ch.dir, trigger) } : {}),
});

async function rejectEmpty(ch: ChannelState, e: DirEntryInfo, emptyForMs: number, wc: WatcherContext): Promise<EmptyFileReport> {
  const path = join(ch.dir, e.name);
  let errorPath: string | null = null;
  if (wc.handleEmpty) {
    const claimed = await claimFile(toReady(ch, e, []), { ...ch.spec.folders, logger: wc.log });
    if (claimed) {
      const moved = await moveToError(
        claimed,
        `empty file: 0 bytes for ${Math.round(emptyForMs / 1000)} s (an ERP that truncates and rewrites a file must not make wmsbridge process an empty file)`,
        { ...ch.spec.folders, logger: wc.log, ...(wc.runId ? { runId: wc.runId } : {}) },
      );
      errorPath = moved.path;
    }
  }
  wc.log.warn({ file: path, channel: ch.spec.name, emptyForMs, errorPath }, 'empty file moved to the error folder');
  return { channel: ch.spec.name, name: e.name, path, emptyForMs, errorPath };
}

async function archiveConsumedTriggers(ch: ChannelState, spent: string[], log: Logger): Promise<void> {
  for (const t of spent) {
    try {
      const to = await archiveLooseFile(join(ch.dir, t), ch.folders, new Date(), { logger: log });
      if (to) log.info({ file: join(ch.dir, t), to }, 'batch trigger consumed and archived: its batch is released');
    } catch (err) {
      log.warn({ file: join(ch.dir, t), err: errorMessage(err) }, 'batch trigger could not be archived, will retry');
    }
  }
}

/**
 * One channel of a one-shot scan: listed until every file is ready, empty, waiting for a marker, or past
 * the deadline (then reported waiting), polling at the readiness interval.
 */
async function scanChannel(spec: ChannelWatchSpec, wc: WatcherContext, report: ScanReport, deadline: number): Promise<void> {
  const log = wc.log;
  const ch = newChannelState(spec); // fresh tracker: a one-shot scan owes nothing to a running watcher
  const done = new Set<string>();
  for (;;) {
    let entries: DirEntryInfo[];
    try {
      const listed = await listChannel(ch, wc);
      entries = listed.files;
      report.refused.push(...listed.fresh);
    } catch (err) {
      report.errors.push({ channel: spec.name, dir: ch.dir, message: errorMessage(err) });
      log.warn({ channel: spec.name, dir: ch.dir, err: errorMessage(err) }, 'cannot list inbox folder, channel skipped this run');
      return;
    }
    const observed = ch.tracker.observe(entries, Date.now());
    const { consumedTriggers } = observed;
    const decisions = await holdOpenFiles(ch, observed.decisions);
    const pending: WaitingFile[] = [];
    for (const d of decisions) {
      if (done.has(d.entry.name)) continue;
      if (d.kind === 'ready') {
        done.add(d.entry.name);
        report.ready.push(toReady(ch, d.entry, d.markers, d.trigger));
      } else if (d.kind === 'empty') {
        done.add(d.entry.name);
        try {
          report.empty.push(await rejectEmpty(ch, d.entry, d.emptyForMs, wc));
        } catch (err) {
          report.errors.push({ channel: spec.name, dir: ch.dir, message: `${d.entry.name}: ${errorMessage(err)}` });
        }
      } else {
        const w: WaitingFile = { channel: spec.name, name: d.entry.name, path: join(ch.dir, d.entry.name), reason: d.reason };
        // a missing marker or an empty file within its grace will not change within one run
        if (ch.tracker.spec.mode === 'marker' || d.entry.size === 0) {
          done.add(d.entry.name);
          report.waiting.push(w);
        } else pending.push(w);
      }
    }
    if (consumedTriggers.length) await archiveConsumedTriggers(ch, consumedTriggers, log);
    if (pending.length === 0) return;
    const wait = ch.tracker.spec.intervalMs;
    if (Date.now() + wait > deadline) {
      for (const w of pending) {
        report.waiting.push({ ...w, reason: `${w.reason}; not ready within ${wc.maxWaitMs} ms, skipped this run` });
      }
      return;
    }
    await new Promise((r) => setTimeout(r, wait)); // the readiness poll interval itself
  }
}

function assertDistinctChannels(channels: readonly ChannelWatchSpec[]): void {
  const names = new Set<string>();
  for (const c of channels) {
    if (names.has(c.name)) throw new RangeError(`intake: channel ${c.name} is declared twice`);
    names.add(c.name);
  }
}

/**
 * chokidar on the channel folders (polling for shares): an add, change or unlink only makes the
 * channel's listing happen sooner (`onEvent` with the path); errors are warnings.
 */
function watchChannelFolders(channels: ChannelState[], options: InboxWatcherOptions, log: Logger, onEvent: (path: string) => void): FSWatcher {
  const w = watch(
    channels.map((c) => c.dir),
    {
      persistent: true,
      ignoreInitial: true,
      depth: 0,
      usePolling: options.usePolling ?? false,
      interval: options.pollIntervalMs ?? 2000,
      binaryInterval: options.pollIntervalMs ?? 2000,
      ignorePermissionErrors: true,
      // dot-files are never data; the channel folders themselves must not be ignored
      ignored: (p: string) => basename(p).startsWith('.') && !channels.some((c) => c.dir === resolve(p)),
    },
  );
  w.on('add', onEvent).on('change', onEvent).on('unlink', onEvent);
  w.on('error', (err: unknown) => log.warn({ err: errorMessage(err) }, 'watch error (the periodic rescan still runs)'));
  return w;
}

/** The watcher's state: its channels, the folder watcher and rescan timer, whether it started or closed. */
interface Watching {
  wc: WatcherContext;
  options: InboxWatcherOptions;
  channels: ChannelState[];
  rescanIntervalMs: number;
  watcher: FSWatcher | null;
  rescanTimer: NodeJS.Timeout | null;
  closed: boolean;
  started: boolean;
}

/** A check of the channel in `delayMs` (an earlier one already due is kept); `rescan`: ready files are emitted again. */
function schedule(wt: Watching, ch: ChannelState, delayMs: number, rescan = false): void {
  if (wt.closed || !wt.started) return;
  if (rescan) ch.rerunRescan = true;
  const due = Date.now() + delayMs;
  if (ch.timer && ch.dueAt <= due) return;
  if (ch.timer) clearTimeout(ch.timer);
  ch.dueAt = due;
  ch.timer = setTimeout(() => {
    ch.timer = null;
    ch.current = check(wt, ch);
  }, delayMs);
}

/** The channel's files, or undefined when the folder cannot be listed (logged, and a check scheduled with back-off). */
async function listOrBackOff(wt: Watching, ch: ChannelState): Promise<DirEntryInfo[] | undefined> {
  const { log } = wt.wc;
  try {
    const entries = (await listChannel(ch, wt.wc)).files;
    if (ch.listErrorStreak > 0) log.info({ channel: ch.spec.name, dir: ch.dir }, 'inbox folder readable again');
    ch.listErrorStreak = 0;
    return entries;
  } catch (err) {
    ch.listErrorStreak++;
    if (ch.listErrorStreak === 1 || ch.listErrorStreak % 20 === 0) {
      log.warn({ channel: ch.spec.name, dir: ch.dir, err: errorMessage(err), attempt: ch.listErrorStreak }, 'cannot list inbox folder, will retry');
    }
    schedule(wt, ch, Math.min(wt.rescanIntervalMs, Math.max(ch.tracker.spec.intervalMs, 1000) * Math.min(ch.listErrorStreak, 30)));
    return undefined;
  }
}

/**
 * Emits what the decisions found (a ready file once per version unless rescanning, an empty one rejected): true when
 * a file still waits, undefined when the watcher closed meanwhile (the check stops there).
 */
async function emitDecisions(wt: Watching, ch: ChannelState, decisions: ReadinessDecision[], rescan: boolean): Promise<boolean | undefined> {
  const { emitter, log } = wt.wc;
  let waiting = false;
  for (const d of decisions) {
    if (wt.closed) return undefined;
    if (d.kind === 'ready') {
      const version = `${d.entry.size}:${d.entry.mtimeMs}`;
      if (!rescan && ch.emitted.get(d.entry.name) === version) continue;
      ch.emitted.set(d.entry.name, version);
      emitter.emit('ready-file', toReady(ch, d.entry, d.markers, d.trigger));
    } else if (d.kind === 'empty') {
      try {
        emitter.emit('empty-file', await rejectEmpty(ch, d.entry, d.emptyForMs, wt.wc));
      } catch (err) {
        log.warn({ file: join(ch.dir, d.entry.name), err: errorMessage(err) }, 'empty file could not be moved to the error folder, will retry');
      }
    } else {
      // still being written, waiting for its marker, or empty within its grace: look again soon
      // (markers and triggers on a share without events are found by this poll, not by the rescan)
      log.trace({ file: join(ch.dir, d.entry.name), size: d.entry.size, reason: d.reason }, 'not ready yet');
      waiting = true;
    }
  }
  return waiting;
}

/** One look at a channel (one at a time per channel: a check asked meanwhile runs after it). */
async function check(wt: Watching, ch: ChannelState): Promise<void> {
  if (wt.closed) return;
  if (ch.running) {
    ch.rerun = true;
    return;
  }
  ch.running = true;
  const rescan = ch.rerunRescan;
  ch.rerunRescan = false;
  let waiting = false;
  try {
    const entries = await listOrBackOff(wt, ch);
    if (entries === undefined) return;
    const observed = ch.tracker.observe(entries, Date.now());
    const { consumedTriggers } = observed;
    const decisions = await holdOpenFiles(ch, observed.decisions);
    const present = new Set(entries.map((e) => e.name));
    for (const n of [...ch.emitted.keys()]) if (!present.has(n)) ch.emitted.delete(n);
    const still = await emitDecisions(wt, ch, decisions, rescan);
    if (still === undefined) return;
    waiting = still;
    if (consumedTriggers.length) await archiveConsumedTriggers(ch, consumedTriggers, wt.wc.log);
  } catch (err) {
    wt.wc.log.warn({ channel: ch.spec.name, err: errorMessage(err) }, 'inbox check failed, will retry');
    waiting = true;
  } finally {
    ch.running = false;
  }
  if (ch.rerun) {
    ch.rerun = false;
    schedule(wt, ch, 0);
  } else if (waiting) {
    schedule(wt, ch, ch.tracker.spec.intervalMs);
  }
}

/** Watches the channel folders (an event checks its channel), rescans them periodically, and checks each once now. */
async function startWatching(wt: Watching): Promise<void> {
  if (wt.started) throw new Error('intake watcher already started');
  if (wt.closed) throw new Error('intake watcher is closed');
  wt.started = true;
  const { channels, options } = wt;
  const w = (wt.watcher = watchChannelFolders(channels, options, wt.wc.log, (path) => {
    const dir = dirname(resolve(path));
    const ch = channels.find((c) => c.dir === dir);
    if (ch) schedule(wt, ch, 0);
  }));
  await new Promise<void>((res) => w.once('ready', () => res()));
  if (wt.closed) return;
  wt.rescanTimer = setInterval(() => {
    for (const ch of channels) schedule(wt, ch, 0, true);
  }, wt.rescanIntervalMs);
  await Promise.all(channels.map((ch) => (ch.current = check(wt, ch))));
  wt.wc.log.info(
    { channels: channels.map((c) => c.spec.name), usePolling: options.usePolling ?? false, rescanIntervalMs: wt.rescanIntervalMs },
    'watching inbox folders',
  );
}

/** One pass over every channel, waiting up to maxWaitMs for files still being written. */
async function scanAll(wt: Watching): Promise<ScanReport> {
  const report: ScanReport = { ready: [], empty: [], waiting: [], errors: [], refused: [] };
  const deadline = Date.now() + wt.wc.maxWaitMs;
  await Promise.all(wt.options.channels.map((spec) => scanChannel(spec, wt.wc, report, deadline)));
  for (const w of report.waiting) wt.wc.log.info({ file: w.path, channel: w.channel, reason: w.reason }, 'file not ready, skipped');
  return report;
}

async function closeWatching(wt: Watching): Promise<void> {
  if (wt.closed) return;
  wt.closed = true;
  if (wt.rescanTimer) clearInterval(wt.rescanTimer);
  for (const ch of wt.channels) if (ch.timer) clearTimeout(ch.timer);
  if (wt.watcher) await wt.watcher.close();
  // let a check in progress finish (it stops at its next step once closed)
  await Promise.all(wt.channels.map((c) => c.current));
}

export function createInboxWatcher(options: InboxWatcherOptions, deps: InboxWatcherDeps): InboxWatcher {
  const log = deps.logger.child({ component: 'intake' });
  const emitter = new EventEmitter();
  assertDistinctChannels(options.channels);
  const wt: Watching = {
    wc: { log, emitter, handleEmpty: options.handleEmptyFiles ?? true, runId: options.runId, maxWaitMs: options.maxWaitMs ?? 30_000 },
    options,
    channels: options.channels.map(newChannelState),
    rescanIntervalMs: options.rescanIntervalMs ?? 60_000,
    watcher: null,
    rescanTimer: null,
    closed: false,
    started: false,
  };
  const api: InboxWatcher = {
    on(event: string, listener: (...args: never[]) => void) {
      emitter.on(event, listener as (...args: unknown[]) => void);
      return api;
    },
    off(event: string, listener: (...args: never[]) => void) {
      emitter.off(event, listener as (...args: unknown[]) => void);
      return api;
    },
    start: () => startWatching(wt),
    scan: () => scanAll(wt),
    scanOnce: async () => (await scanAll(wt)).ready,
    close: () => closeWatching(wt),
  };
  return api;
}
