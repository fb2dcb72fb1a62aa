/**
 * The one-shot scan of `run`: every channel listed once, readiness applied with a bounded wait.
 */
import type { ResolvedConfig, ResolvedChannel } from '../config/load.js';
import { createInboxWatcher, type ChannelWatchSpec, type InboxWatcherOptions, type ReadyFile } from '../intake/watcher.js';
import { checkInboxSafety, type RefusedEntry } from '../intake/safety.js';
import type { CompiledMapping } from '../map/index.js';
import type { Logger } from '../shared/logger.js';
import { TARGET_INFO } from '../wms/targets.js';

/** The mappings a channel may use: bound by name (channel.mappings) or by match.channel (unset: any). */
export function mappingsOf(channel: ResolvedChannel, mappings: readonly CompiledMapping[]): CompiledMapping[] {
  const bound = channel.mappings ? mappings.filter((m) => channel.mappings!.includes(m.name)) : mappings;
  return bound.filter((m) => !m.match.channel || m.match.channel === channel.name);
}

export function watchSpecOf(channel: ResolvedChannel, mappings?: readonly CompiledMapping[]): ChannelWatchSpec {
  const mine = mappings ? mappingsOf(channel, mappings) : null;
  return {
    name: channel.name,
    dir: channel.dir,
    readiness: channel.readiness,
    ...(channel.patterns ? { patterns: channel.patterns } : {}),
    ...(channel.ignore ? { ignore: channel.ignore } : {}),
    // only what a mapping claims is touched: other files stay in the inbox, reported
    ...(mine ? { accepts: (name: string) => mine.some((m) => m.matches(channel.name, name)) } : {}),
    // an attachment mapping reads its files from inside the channel folder (attachmentPath): its sub-folders
    // (pedidos/anexos) are where those files are meant to be
    ...(mine?.some((m) => TARGET_INFO[m.target].send.kind === 'attachment') ? { readsFolder: () => true } : {}),
  };
}

/**
 * Refuses (ConfigError, exit 2) an inbox that is a system folder or the state/outbox folder, and, given
 * the mappings, keeps the channels that have one: a discovered sub-folder no mapping is bound to is not
 * a channel (its files are not touched).
 */
export function watcherOptions(config: ResolvedConfig, extra: Partial<InboxWatcherOptions> = {}, mappings?: readonly CompiledMapping[]): InboxWatcherOptions {
  checkInboxSafety({
    inboxDir: config.inboxDir,
    stateDir: config.stateDir,
    outboxDir: config.outboxDir,
    channelDirs: config.channels.map((c) => c.dir),
    file: config.file,
  });
  const channels = mappings && config.channelsDiscovered ? config.channels.filter((c) => mappingsOf(c, mappings).length > 0) : config.channels;
  return {
    channels: channels.map((c) => watchSpecOf(c, mappings)),
    usePolling: config.watch.usePolling,
    pollIntervalMs: config.watch.pollIntervalMs,
    rescanIntervalMs: config.watch.rescanIntervalMs,
    ...extra,
  };
}

/**
 * The inbox folder and channel folders that do not exist (or are not folders): an unmounted share. `run`
 * stops on them (exit 2), `watch` reports them unhealthy and waits for them; neither creates them (a
 * folder created under the mount point would hide the share once it is back).
 */
export async function missingInboxFolders(config: ResolvedConfig): Promise<string[]> {
  const { stat } = await import('node:fs/promises');
  const isDir = (p: string) =>
    stat(p).then(
      (s) => s.isDirectory(),
      () => false,
    );
  if (!(await isDir(config.inboxDir))) return [config.inboxDir];
  const missing: string[] = [];
  for (const c of config.channels) if (!(await isDir(c.dir))) missing.push(c.dir);
  return missing;
}

export interface InboxScan {
  ready: ReadyFile[];
  /** entries left in the inbox, with why (also logged) */
  refused: RefusedEntry[];
}

export async function scanInbox(
  config: ResolvedConfig,
  opts: { logger: Logger; maxWaitMs?: number; mappings?: readonly CompiledMapping[] },
): Promise<InboxScan> {
  const watcher = createInboxWatcher(watcherOptions(config, opts.maxWaitMs !== undefined ? { maxWaitMs: opts.maxWaitMs } : {}, opts.mappings), {
    logger: opts.logger,
  });
  try {
    const report = await watcher.scan();
    for (const w of report.waiting) opts.logger.warn({ file: w.name, channel: w.channel }, `not taken this run: ${w.reason}`);
    for (const e of report.empty) opts.logger.warn({ file: e.name, channel: e.channel, errorPath: e.errorPath }, 'empty file moved to the error folder');
    for (const e of report.errors) opts.logger.error({ channel: e.channel, dir: e.dir }, `inbox folder cannot be listed: ${e.message}`);
    return { ready: report.ready, refused: report.refused };
  } finally {
    await watcher.close();
  }
}

export async function scanReadyFiles(
  config: ResolvedConfig,
  opts: { logger: Logger; maxWaitMs?: number; mappings?: readonly CompiledMapping[] },
): Promise<ReadyFile[]> {
  return (await scanInbox(config, opts)).ready;
}
