/**
 * What one pass of the main job carries from phase to phase (run.ts): the files it works on, the problems
 * found, the leases it holds, the send timeline. Each phase (run-resume, run-intake, run-map, run-send,
 * run-finish, run-report) reads and adds to it.
 */
import type { XlsxWorker } from '../outbox/xlsx-worker.js';
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import type { AppContext } from './context.js';
import type { ResolvedChannel } from '../config/load.js';
import type { FileRow, RecordResult, RecordRow } from '../journal/types.js';
import { composeMappings, type CompiledMapping } from '../map/index.js';
import { TARGET_INFO, type Target } from '../wms/targets.js';
import { resolveChannelFolders, type ClaimedFile, type ReadyFile } from '../intake/claim.js';
import type { RefusedEntry } from '../intake/safety.js';
import type { FileFigures, FileFinish } from './finish-file.js';
import type { PushStats } from '../push/pipeline.js';
import type { WmsClientStats } from '../wms/client-types.js';
import type { RunSummary } from '../outbox/types.js';
import { isWaitingForWms } from '../shared/reason.js';

export interface RunOptions {
  command: string;
  /** ready files to take (the one-shot scan, or a batch from the watcher) */
  ready: ReadyFile[];
  mappings: CompiledMapping[];
  dryRun?: boolean;
  /** process a file again even when its content was processed before */
  force?: boolean;
  signal?: AbortSignal;
  /** show progress bars on a terminal */
  progress?: boolean;
  onSettled?: (row: RecordRow, result: RecordResult) => void;
  /** rows of a file rejected while mapping (never sent: settled as rejected when the file is mapped), by target */
  onMapRejected?: (target: string, count: number) => void;
  /** configuration problems found before the run (a mapping that did not load): logged, counted, exit 2 (verdict.ts) */
  problems?: string[];
  /** inbox entries the scan did not take (named in the report; refusals of possible data make exit 1) */
  refused?: RefusedEntry[];
}

/** One file of the run, from its claim (or resume) to its result. */
export interface Working {
  row: FileRow;
  /** a finished file taken up again to retry records that failed (its original is already archived) */
  archived?: boolean;
  claimed: ClaimedFile;
  channel: ResolvedChannel;
  mapping: CompiledMapping | null;
  error?: string;
  /** not mapped: a WMS lookup got no answer (the file stays claimed and is read again by the next run) */
  waitingForWms?: string;
  duplicateOf?: string;
  figures?: FileFigures;
  /** where the original went when the file is in error (the error/ folder) */
  errorPath?: string;
  startedMs: number;
  finishedMs?: number;
  rows: number;
  /** a streamed file that published records: it has results (what was sent) even when it was not read to its end */
  streamed?: boolean;
  /** its result and rejects files, written behind the send loop (run-finish.ts finishBehindSend) and completed by the finish */
  finish?: FileFinish;
}

/** A file this run found claimed by another instance: its channel, the channel's folder, its name in the inbox. */
export interface ClaimedElsewhere {
  channel: string;
  dir: string;
  name: string;
  /** the claimer's copy, when it was seen in the work folder (its journal row names the file by it) */
  workPath?: string;
}

export interface RunState {
  ctx: AppContext;
  opts: RunOptions;
  runId: string;
  started: Date;
  /** performance.now() at the start (the timeline's origin) */
  t0: number;
  log: AppContext['logger'];
  channels: Map<string, ResolvedChannel>;
  working: Working[];
  problems: string[];
  /** this instance, as the owner of file leases */
  owner: string;
  ttl: number;
  /** marks a file busy for this run and the process's other runs (watch runs several batches) */
  take(id: number): void;
  release(id: number): void;
  /** the client's figures at the start (the client lives as long as the process: a run's are differences) */
  wmsAtStart: WmsClientStats;
  timeline: Array<{ atMs: number; settled: number }>;
  /** records sent for other instances' files (a shared journal), when there were some */
  helped: NonNullable<RunSummary['helped']> | null;
  /** files another instance claimed under this run (a shared journal): the help waits until they show in the journal */
  claimedElsewhere: ClaimedElsewhere[];
  /** a file could not be read because a WMS lookup got no answer: since when */
  wmsDownSince: string | null;
  pushed: PushStats | null;
  /** sending stopped: the credentials were refused */
  fatal: unknown;
  /** the report's workbook thread, started with the send phase (xlsx-worker.ts); closed with the run */
  workbook: XlsxWorker | null;
  /** stops renewing leases and frees the files this run took */
  close(): void;
}

export function newRunId(now = new Date()): string {
  return `${now.toISOString().replace(/[-:]/g, '').replace(/\..*$/, '')}-${randomBytes(3).toString('hex')}`;
}

export function startRun(ctx: AppContext, opts: RunOptions): RunState {
  const started = new Date();
  const runId = newRunId(started);
  const log = ctx.logger.child({ runId });
  const owner = ctx.instanceId;
  const ttl = ctx.leaseTtlMs;
  // the files this run works on, marked busy for the process's other runs the moment they are taken
  const taken = new Set<number>();
  const renew = setInterval(
    () => {
      ctx.journal.renewLeases(owner, ttl).catch((err: unknown) => log.warn({ err }, 'could not renew file leases'));
    },
    Math.max(500, Math.floor(ttl / 3)),
  );
  renew.unref();
  return {
    ctx,
    opts,
    runId,
    started,
    t0: performance.now(),
    log,
    channels: new Map(ctx.config.channels.map((c) => [c.name, c])),
    working: [],
    problems: [...(opts.problems ?? [])],
    owner,
    ttl,
    take(id) {
      taken.add(id);
      ctx.busyFiles.add(id);
    },
    release(id) {
      taken.delete(id);
      ctx.busyFiles.delete(id);
    },
    wmsAtStart: ctx.client.stats(),
    timeline: [],
    helped: null,
    claimedElsewhere: [],
    wmsDownSince: null,
    pushed: null,
    fatal: null,
    workbook: null,
    close() {
      clearInterval(renew);
      for (const id of taken) ctx.busyFiles.delete(id);
      void this.workbook?.close();
    },
  };
}

/**
 * The mapping for a file: bound to its channel (explicitly or by match.channel) and matching its name. Every
 * mapping that matches applies (map/multi.ts): several are one mapping that maps each row with each of them, or,
 * when they did not declare that they share the file, one that refuses it naming them.
 */
export function pickMapping(mappings: CompiledMapping[], channel: ResolvedChannel, fileName: string): CompiledMapping | null {
  const bound = channel.mappings ? mappings.filter((m) => channel.mappings!.includes(m.name)) : mappings;
  const matching = bound.filter((m) => m.matches(channel.name, fileName));
  return matching.length === 0 ? null : composeMappings(matching, fileName);
}

/** The target a journaled file (of any instance) maps to here; null when no channel or mapping of this instance takes it. */
export function targetOfFile(config: Pick<AppContext['config'], 'channels'>, mappings: CompiledMapping[], f: Pick<FileRow, 'channel' | 'name'>): Target | null {
  const channel = config.channels.find((c) => c.name === f.channel);
  return channel ? (pickMapping(mappings, channel, f.name)?.target ?? null) : null;
}

/**
 * Whether a file another instance is still mapping may hold what a file of `tier` refers to: one of a lower tier
 * (a file refers to lower tiers only: the send loop's tiers), or whose target this instance cannot tell. A streamed
 * file maps for as long as it is sent (hours for a nightly 1 GB export): files of its tier or above need not wait.
 */
export function mayHoldDependencyOf(
  config: Pick<AppContext['config'], 'channels'>,
  mappings: CompiledMapping[],
  file: Pick<FileRow, 'channel' | 'name'>,
  tier: number | null,
): boolean {
  const t = targetOfFile(config, mappings, file);
  return t === null || tier === null || TARGET_INFO[t].tier < tier;
}

export function claimedFromRow(row: FileRow, channel: ResolvedChannel): ClaimedFile {
  return {
    channel: row.channel,
    name: row.name,
    originalPath: join(channel.dir, row.name),
    workPath: row.path,
    size: row.size,
    sha256: row.sha256,
    markers: [],
    claimedAt: row.createdAt,
    folders: resolveChannelFolders(channel.dir),
  };
}

/** Records held only because a dependency (or an earlier operation) waited for the WMS: the next run sends them again. */
export async function listWaitingForWms(journal: AppContext['journal']): Promise<RecordRow[]> {
  return (await journal.listRecords({ statuses: ['held'], limit: 100_000 })).filter((r) => isWaitingForWms(r));
}
