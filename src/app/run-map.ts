/**
 * Phase 3 of a run: map every claimed file into the journal (parsed as a stream, records and rejects in
 * batches). A file that changed while it was read has its records withdrawn; a file whose WMS lookups got
 * no answer stays claimed for the next run.
 *
 * Files of at least `sending.streamFrom` bytes are streamed (docs/ARCHITECTURE.md, "Streaming"): mapped
 * while the send phase runs, each committed batch published to it (feed.ts) after a check that the file is
 * still as claimed. What was published may have been sent; a file that changes or cannot be read to its end
 * has only the rest withdrawn, and says how much of it went.
 */
import { changedSinceClaim } from '../intake/claim.js';
import { errorMessage, isBridgeError } from '../shared/errors.js';
import { createProgress } from '../shared/progress.js';
import { isWmsUnavailable } from '../push/decide.js';
import type { StreamFeed } from '../push/feed.js';
import { TARGET_INFO } from '../wms/targets.js';
import { mapFileToJournal } from './map-file.js';
import type { RunState, Working } from './run-state.js';
import { FILE_META } from '../journal/policy.js';

/** Where a streamed file's mapping stands: outputs journaled and published, and the id of the last one. */
interface StreamPoint {
  outputs: number;
  lastId: number;
}

/** The files to map, in the order they are mapped (streamed files by tier: a tier's dependencies come first). */
function toMap(run: RunState): Working[] {
  const out: Working[] = [];
  for (const w of run.working) {
    if (w.row.status === 'duplicate') continue;
    if (!w.mapping) {
      w.error = noMappingMessage(run, w);
      continue;
    }
    if (w.row.status === 'claimed') out.push(w);
  }
  return out;
}

/**
 * Whether a file is sent while it is mapped: large enough (or streamed by an earlier run that stopped half-way:
 * it goes on from there), and not a stock synchronisation (one snapshot, sent whole or not at all) nor a file several
 * mappings share.
 */
export async function streamsWhileMapped(run: RunState, w: Working): Promise<boolean> {
  if (run.opts.dryRun || !w.mapping || w.row.status !== 'claimed' || TARGET_INFO[w.mapping.target].send.kind === 'session') return false;
  // several mappings on one file give records of several tiers: the feed publishes one tier per file
  if (w.mapping.parts) return false;
  if (w.row.size >= run.ctx.config.sending.streamFrom) return true;
  return (await run.ctx.journal.getMeta(FILE_META.stream(w.row.id))) !== undefined;
}

/**
 * Maps the files that are not streamed, one after the other; returns the ones to stream (by tier), their WMS
 * lookups already loaded: the only WMS reads of a mapping happen before the send phase starts, so a file left
 * unread because the WMS did not answer is known before anything is sent.
 */
export async function mapFiles(run: RunState): Promise<Working[]> {
  const streamed: Working[] = [];
  for (const w of toMap(run)) {
    if (run.opts.signal?.aborted) continue; // interrupted: stays claimed, mapped by the next run
    if (!(await streamsWhileMapped(run, w))) await mapOne(run, w);
    else if (await lookupsLoaded(run, w)) streamed.push(w);
  }
  return streamed.sort((a, b) => TARGET_INFO[a.mapping!.target].tier - TARGET_INFO[b.mapping!.target].tier);
}

/** Maps the streamed files one after the other (the feed knows them), publishing each batch to the send phase running beside. */
export async function mapStreamed(run: RunState, files: readonly Working[], feed: StreamFeed): Promise<void> {
  for (const w of files) {
    try {
      if (!run.opts.signal?.aborted && !run.working.some((x) => x.waitingForWms)) await mapOne(run, w, feed);
    } finally {
      feed.end(w.row.id);
    }
  }
}

async function lookupsLoaded(run: RunState, w: Working): Promise<boolean> {
  try {
    await run.ctx.refCache.load(w.mapping!.referenceNeeds.map((r) => r.resource));
    return true;
  } catch (err) {
    if (!isWmsUnavailable(err)) throw err;
    w.waitingForWms = errorMessage(err);
    run.wmsDownSince ??= run.ctx.client.availability?.().unavailableSince ?? new Date().toISOString();
    run.log.warn({ file: w.row.name, err }, 'file not read: a WMS lookup got no answer; the next run reads it again');
    return false;
  }
}

function noMappingMessage(run: RunState, w: Working): string {
  const names = run.opts.mappings.filter((m) => !m.match.channel || m.match.channel === w.channel.name).map((m) => `${m.name} (${m.match.files.join(', ')})`);
  return `no mapping matches channel "${w.channel.name}" and file name "${w.row.name}"${names.length ? `; mappings for this channel: ${names.join('; ')}` : '; no mapping is bound to this channel'}`;
}

/** A streamed file that changed since its claim, seen at a batch: the mapping stops there. */
class ChangedWhileStreaming extends Error {
  constructor(readonly change: string) {
    super(change);
  }
}

/** The run was interrupted while a file streamed: it stays claimed, the next run goes on after what was published. */
class StreamInterrupted extends Error {}

async function mapOne(run: RunState, w: Working, feed?: StreamFeed): Promise<void> {
  const { ctx, opts, log } = run;
  const { journal, config } = ctx;
  const mapping = w.mapping!;
  const from = feed ? await streamPointOf(run, w) : null;
  // a mapping interrupted by a crash starts over (nothing of it was sent); a streamed one from its last published batch
  await journal.deleteRecords(w.row.id, from ? { afterId: from.lastId } : undefined);
  if (from) {
    feed!.publish(w.row.id, from.lastId);
    w.streamed = true;
  }
  const progress = opts.progress ? createProgress({ label: `map ${w.row.name}` }) : null;
  try {
    await ctx.refCache.load(mapping.referenceNeeds.map((r) => r.resource));
    const res = await mapFileToJournal({
      fileId: w.row.id,
      path: w.claimed.workPath,
      fileName: w.row.name,
      mapping,
      journal,
      ctx: { file: w.row.name, refs: ctx.refCache, now: run.started },
      batchSize: config.sending.batchSize,
      ...(progress ? { onRow: () => progress.tick(1) } : {}),
      ...(feed
        ? {
            firstBatchSize: STREAM_FIRST_BATCH,
            skip: from?.outputs ?? 0,
            onBatch: (lastId: number, outputs: number) => publishBatch(run, w, feed, { lastId, outputs }),
          }
        : {}),
    });
    w.rows = res.rows;
    // a claimed file is exactly what was parsed: a writer that went on writing into it must not get
    // half of it delivered. Nothing of a file mapped whole was sent yet: its records are withdrawn
    const changed = opts.dryRun ? null : await changedSinceClaim(w.claimed);
    if (changed) return await stopped(run, w, feed, `the file changed while it was being read (${changed}): another process is still writing it`, changed);
    await journal.updateFile(w.row.id, { status: 'mapped' });
    w.row = { ...w.row, status: 'mapped' };
    // rows rejected while mapping are settled now, as the WMS's refusals are when answered (/metrics counts both)
    for (const [target, n] of res.rejectsByTarget) opts.onMapRejected?.(target, n);
    log.info({ file: w.row.name, records: res.records, rejects: res.rejects, mapping: mapping.name, ...(feed ? { streamed: true } : {}) }, 'file mapped');
  } catch (err) {
    if (err instanceof StreamInterrupted) return;
    if (err instanceof ChangedWhileStreaming) {
      await stopped(run, w, feed, `the file changed while it was being read (${err.change}): another process is still writing it`, err.change);
      return;
    }
    if (isWmsUnavailable(err)) {
      // not the file's fault: it stays claimed in the work folder and is read again by the next run
      w.waitingForWms = errorMessage(err);
      run.wmsDownSince ??= ctx.client.availability?.().unavailableSince ?? new Date().toISOString();
      log.warn({ file: w.row.name, err }, 'file not read: a WMS lookup got no answer; the next run reads it again');
      return;
    }
    // the file is named as dropped, not by its path in the work folder
    const asDropped = (m: string): string => m.split(w.claimed.workPath).join(w.row.name);
    const why = asDropped(isBridgeError(err) ? err.message : `unexpected error: ${errorMessage(err)}`);
    if (feed && feed.publishedUpTo(w.row.id) > 0) return await stopped(run, w, feed, why, null);
    // the records mapped before the error are never sent (the file goes to the error folder): withdrawn
    await journal.deleteRecords(w.row.id).catch((e: unknown) => log.warn({ file: w.row.name, err: e }, 'could not withdraw the records of a file in error'));
    w.error = why;
    log.error({ file: w.row.name, error: w.error, ...(isBridgeError(err) ? {} : { err }) }, 'file could not be read');
  } finally {
    progress?.done();
  }
}

async function streamPointOf(run: RunState, w: Working): Promise<StreamPoint | null> {
  const text = await run.ctx.journal.getMeta(FILE_META.stream(w.row.id));
  if (text === undefined) return null;
  const p = JSON.parse(text) as StreamPoint;
  run.log.info({ file: w.row.name, records: p.outputs }, 'resuming a streamed file after the records an earlier run published');
  return p;
}

/**
 * A streamed batch is committed: if the file is still as claimed (size and modification time: the hash is
 * for the end), its place is noted (a crash resumes from it) and the send phase may read it.
 */
async function publishBatch(run: RunState, w: Working, feed: StreamFeed, point: StreamPoint): Promise<void> {
  const changed = await changedSinceClaim(w.claimed, { contentHash: false });
  if (changed) throw new ChangedWhileStreaming(changed);
  await run.ctx.journal.setMeta(FILE_META.stream(w.row.id), JSON.stringify(point));
  feed.publish(w.row.id, point.lastId);
  w.streamed = true;
  // no further ahead of the send loop than a few of its batches (feed.ts, back-pressure)
  await feed.room(w.row.id, STREAM_LEAD_BATCHES * run.ctx.config.sending.batchSize, run.opts.signal);
  if (run.opts.signal?.aborted) throw new StreamInterrupted();
}

/** how many send batches (sending.batchSize records) a streamed file is mapped ahead of the send loop */
const STREAM_LEAD_BATCHES = 4;
/** a streamed file's first batch: small, so that the first requests leave as soon as possible */
const STREAM_FIRST_BATCH = 100;

/**
 * The mapping of a file stopped before its end (it changed, or could not be read further). Records not
 * published are withdrawn. A file mapped whole, or streamed but with nothing published, is in error as a whole
 * (none of its records was sent). A streamed file whose first batches were published may have had them sent:
 * it is finished like a mapped file (results of what was sent, rejects) and its original goes to the error
 * folder with the reason, which names how many records went.
 */
async function stopped(run: RunState, w: Working, feed: StreamFeed | undefined, why: string, change: string | null): Promise<void> {
  const { journal } = run.ctx;
  const upTo = feed?.publishedUpTo(w.row.id) ?? 0;
  await journal.deleteRecords(w.row.id, upTo > 0 ? { afterId: upTo } : undefined);
  if (upTo === 0) {
    w.rows = 0;
    w.error = `${w.row.name}: ${why}. None of its records were sent; drop it again once the export is complete${change ? ' (for an ERP that pauses while writing, use readiness marker or rename)' : ''}`;
    run.log.error(
      { file: w.row.name, ...(change ? { change } : {}) },
      change ? 'file changed after it was claimed; its records are withdrawn' : 'file could not be read',
    );
    return;
  }
  const published = Object.values(await journal.countRecords({ fileIds: [w.row.id] })).reduce((a, b) => a + b, 0);
  const message = `${w.row.name}: ${why}. It was being sent while it was read (sending.streamFrom): the ${published.toLocaleString('en-US')} record(s) read before that went on to the WMS (see the result file); the rest was not read. Fix the file and drop it again: records already delivered come back unchanged or already existing`;
  await journal.updateFile(w.row.id, { status: 'mapped', error: message });
  w.row = { ...w.row, status: 'mapped', error: message };
  run.log.error(
    { file: w.row.name, published, ...(change ? { change } : {}) },
    'streamed file stopped before its end; what was published is sent, the rest withdrawn',
  );
}
