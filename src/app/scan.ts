/**
 * The one-shot scan of `run`: every channel listed once, readiness applied with a bounded wait.
 */
import type { ResolvedConfig, ResolvedChannel } from '../config/load.js';
import { createInboxWatcher, type ChannelWatchSpec, type InboxWatcherOptions, type ReadyFile } from '../intake/watcher.js';
import type { Logger } from '../shared/logger.js';

export function watchSpecOf(channel: ResolvedChannel): ChannelWatchSpec {
  return {
    name: channel.name,
    dir: channel.dir,
    readiness: channel.readiness,
    ...(channel.patterns ? { patterns: channel.patterns } : {}),
    ...(channel.ignore ? { ignore: channel.ignore } : {}),
  };
}

export function watcherOptions(config: ResolvedConfig, extra: Partial<InboxWatcherOptions> = {}): InboxWatcherOptions {
  return {
    channels: config.channels.map(watchSpecOf),
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
  const isDir = (p: string) => stat(p).then((s) => s.isDirectory(), () => false);
  if (!(await isDir(config.inboxDir))) return [config.inboxDir];
  const missing: string[] = [];
  for (const c of config.channels) if (!(await isDir(c.dir))) missing.push(c.dir);
  return missing;
}

export async function scanReadyFiles(config: ResolvedConfig, opts: { logger: Logger; maxWaitMs?: number }): Promise<ReadyFile[]> {
  const watcher = createInboxWatcher(watcherOptions(config, opts.maxWaitMs !== undefined ? { maxWaitMs: opts.maxWaitMs } : {}), { logger: opts.logger });
  try {
    const report = await watcher.scan();
    for (const w of report.waiting) opts.logger.warn({ file: w.name, channel: w.channel }, `not taken this run: ${w.reason}`);
    for (const e of report.empty) opts.logger.warn({ file: e.name, channel: e.channel, errorPath: e.errorPath }, 'empty file moved to the error folder');
    for (const e of report.errors) opts.logger.error({ channel: e.channel, dir: e.dir }, `inbox folder cannot be listed: ${e.message}`);
    return report.ready;
  } finally {
    await watcher.close();
  }
}
