/**
 * When is a dropped file complete? Decided per channel from repeated listings of its folder (never from
 * watch events alone: they do not arrive on network shares, and chokidar's awaitWriteFinish ignores files
 * present at start-up). The tracker is a pure state machine: feed it listings with the time they were
 * taken, it answers which files are ready, which are empty for too long, and which are still waiting.
 *
 * Modes:
 * - stable: size and mtime unchanged for `checks` polls `intervalMs` apart (also for files already present
 *   at start-up: the first sighting only starts the clock).
 * - marker: `<name><suffix>` exists (default '.done'), or a batch trigger file (e.g. 'LOTE.OK') releases
 *   every file present when it appears. Markers and triggers are never data.
 * - rename: the ERP writes temp names (ignored by the ignore globs) and renames; one stability check.
 * 0-byte files: under stable/rename never ready; after `emptyFileGraceMs` of being empty they are reported
 * 'empty' (the caller moves them to the error folder). Under marker an empty file with its marker is ready.
 */

export type ReadinessSpec =
  | {
      mode: 'stable';
      /** @default 3 */
      checks?: number;
      /** @default 2000 */
      intervalMs?: number;
      /** @default 60000 */
      emptyFileGraceMs?: number;
    }
  | {
      mode: 'marker';
      /** marker suffixes appended to the data file name (case-insensitive) @default ['.done'] */
      suffixes?: string[];
      /** batch trigger file names (case-insensitive), e.g. ['LOTE.OK'] @default [] */
      batchTriggers?: string[];
      /** how often the folder is listed while waiting for a marker @default 1000 */
      intervalMs?: number;
    }
  | {
      mode: 'rename';
      /** @default 1000 */
      intervalMs?: number;
      /** @default 60000 */
      emptyFileGraceMs?: number;
    };

export interface ResolvedReadiness {
  mode: 'stable' | 'marker' | 'rename';
  checks: number;
  intervalMs: number;
  emptyFileGraceMs: number;
  suffixes: string[];
  batchTriggers: string[];
}

/** Names never taken as data: temp files of the ERP and of wmsbridge itself, dot-files and folders. */
export const DEFAULT_IGNORE = ['*.tmp', '*.part', '~*', '.*'];

export function resolveReadiness(spec: ReadinessSpec | undefined): ResolvedReadiness {
  const s = spec ?? { mode: 'stable' };
  // stable: a 6 s window by default (a writer pausing 4.5 s mid-file was taken with the old 3 s); rename and
  // marker keep 1 s (their readiness does not depend on a pause)
  const intervalMs = s.intervalMs ?? (s.mode === 'stable' ? 2000 : 1000);
  if (!(intervalMs > 0)) throw new RangeError(`readiness.intervalMs must be > 0 (got ${intervalMs})`);
  switch (s.mode) {
    case 'stable': {
      const checks = s.checks ?? 3;
      if (!Number.isInteger(checks) || checks < 1) throw new RangeError(`readiness.checks must be an integer >= 1 (got ${checks})`);
      return { mode: 'stable', checks, intervalMs, emptyFileGraceMs: s.emptyFileGraceMs ?? 60_000, suffixes: [], batchTriggers: [] };
    }
    case 'rename':
      return { mode: 'rename', checks: 1, intervalMs, emptyFileGraceMs: s.emptyFileGraceMs ?? 60_000, suffixes: [], batchTriggers: [] };
    case 'marker': {
      const suffixes = s.suffixes ?? ['.done'];
      if (suffixes.some((x) => x.length === 0)) throw new RangeError('readiness.suffixes must not contain an empty suffix');
      return { mode: 'marker', checks: 0, intervalMs, emptyFileGraceMs: 0, suffixes, batchTriggers: s.batchTriggers ?? [] };
    }
  }
}

/** A glob on a file name: `*` any run, `?` one character; case-insensitive (Windows shares). */
export function globToRegExp(glob: string): RegExp {
  let re = '';
  for (const ch of glob) {
    if (ch === '*') re += '.*';
    else if (ch === '?') re += '.';
    else re += ch.replace(/[\\^$.|+()[\]{}]/g, '\\$&');
  }
  return new RegExp(`^${re}$`, 'i');
}

export function createNameFilter(patterns: readonly string[] | undefined, ignore: readonly string[] | undefined): (name: string) => boolean {
  const inc = (patterns && patterns.length ? patterns : ['*']).map(globToRegExp);
  const exc = (ignore ?? DEFAULT_IGNORE).map(globToRegExp);
  return (name) => inc.some((r) => r.test(name)) && !exc.some((r) => r.test(name));
}

export interface DirEntryInfo {
  name: string;
  size: number;
  mtimeMs: number;
}

export type ReadinessDecision =
  /** complete: process it; `markers` are companion files (names) to move along with it */
  | { kind: 'ready'; entry: DirEntryInfo; markers: string[]; trigger?: string }
  /** 0 bytes for longer than the grace period under stable/rename: move to the error folder */
  | { kind: 'empty'; entry: DirEntryInfo; emptyForMs: number }
  /** not ready yet (still changing, no marker yet, empty within the grace period) */
  | { kind: 'waiting'; entry: DirEntryInfo; reason: string };

export interface TrackerObservation {
  decisions: ReadinessDecision[];
  /**
   * batch trigger files that just released their batch: consumed, the caller archives them (a batch
   * released but not claimed when the process dies waits for the trigger to be dropped again)
   */
  consumedTriggers: string[];
}

interface Track {
  size: number;
  mtimeMs: number;
  /** when these exact values were first seen */
  since: number;
  /** observations of these exact values after the first one */
  polls: number;
  /** when the file was first seen with 0 bytes (continuously) */
  zeroSince: number | null;
}

interface Batch {
  trigger: string;
  members: Set<string>;
}

export interface ReadinessTracker {
  readonly spec: ResolvedReadiness;
  /** Feeds one complete listing of the folder taken at `nowMs`; returns a decision per data file. */
  observe(entries: readonly DirEntryInfo[], nowMs: number): TrackerObservation;
}

const lower = (s: string): string => s.toLowerCase();

/** A tracker's state across polls: the files it follows, the batches a trigger released, the triggers consumed. */
interface Readiness {
  r: ResolvedReadiness;
  isData: (name: string) => boolean;
  tracks: Map<string, Track>;
  batches: Batch[];
  /** trigger versions (name|size|mtime) already consumed, while still present */
  consumed: Set<string>;
  triggerSet: Set<string>;
  suffixes: string[];
}

/** The marker and trigger files of a listing (marker mode): recognised before the data filter. */
interface Companions {
  /** data name (lower) -> marker names */
  markerOf: Map<string, string[]>;
  triggersPresent: DirEntryInfo[];
  isCompanion: Set<string>;
}

function stableDecision(st: Readiness, e: DirEntryInfo, t: Track, nowMs: number, checks: number): ReadinessDecision {
  const { r } = st;
  if (e.size === 0) {
    // a 0-byte file's mtime is when it became empty; trusted once it held still for one poll
    const since = t.zeroSince ?? nowMs;
    const emptyForMs = nowMs - (t.polls >= 1 && e.mtimeMs <= nowMs ? Math.min(since, e.mtimeMs) : since);
    if (emptyForMs >= r.emptyFileGraceMs) return { kind: 'empty', entry: e, emptyForMs };
    return {
      kind: 'waiting',
      entry: e,
      reason: `empty file (0 bytes for ${Math.round(emptyForMs / 1000)} s, grace ${Math.round(r.emptyFileGraceMs / 1000)} s)`,
    };
  }
  if (t.polls >= checks && nowMs - t.since >= checks * r.intervalMs) return { kind: 'ready', entry: e, markers: [] };
  return { kind: 'waiting', entry: e, reason: t.polls === 0 ? 'first seen, checking that it is complete' : 'still being written (size or time changed)' };
}

function companionsOf(st: Readiness, entries: readonly DirEntryInfo[]): Companions {
  const c: Companions = { markerOf: new Map(), triggersPresent: [], isCompanion: new Set() };
  if (st.r.mode !== 'marker') return c;
  for (const e of entries) {
    const l = lower(e.name);
    if (st.triggerSet.has(l)) {
      c.triggersPresent.push(e);
      c.isCompanion.add(e.name);
      continue;
    }
    for (const suf of st.suffixes) {
      if (l.endsWith(suf) && l.length > suf.length) {
        const dataLower = l.slice(0, -suf.length);
        const list = c.markerOf.get(dataLower) ?? [];
        list.push(e.name);
        c.markerOf.set(dataLower, list);
        c.isCompanion.add(e.name);
      }
    }
  }
  return c;
}

/** Follows each data file's size and mtime across polls (a change starts it over); forgets the ones gone. The names seen. */
function updateTracks(st: Readiness, data: DirEntryInfo[], nowMs: number): Set<string> {
  const seen = new Set<string>();
  for (const e of data) {
    seen.add(e.name);
    const t = st.tracks.get(e.name);
    if (!t) {
      st.tracks.set(e.name, { size: e.size, mtimeMs: e.mtimeMs, since: nowMs, polls: 0, zeroSince: e.size === 0 ? nowMs : null });
    } else if (t.size === e.size && t.mtimeMs === e.mtimeMs) {
      if (nowMs > t.since) t.polls++;
    } else {
      t.size = e.size;
      t.mtimeMs = e.mtimeMs;
      t.since = nowMs;
      t.polls = 0;
      t.zeroSince = e.size === 0 ? (t.zeroSince ?? nowMs) : null;
    }
  }
  for (const name of [...st.tracks.keys()]) if (!seen.has(name)) st.tracks.delete(name);
  return seen;
}

/**
 * Batch triggers: a trigger seen for the first time (or rewritten) releases every data file present now; it is
 * consumed at once (the caller archives it), the released files stay released until gone. The triggers consumed.
 */
function consumeTriggers(st: Readiness, triggersPresent: DirEntryInfo[], data: DirEntryInfo[], seen: Set<string>): string[] {
  const consumedTriggers: string[] = [];
  const { consumed, batches } = st;
  const presentVersions = new Set(triggersPresent.map((t) => `${t.name}|${t.size}|${t.mtimeMs}`));
  for (const v of [...consumed]) if (!presentVersions.has(v)) consumed.delete(v);
  for (const t of triggersPresent) {
    const v = `${t.name}|${t.size}|${t.mtimeMs}`;
    if (consumed.has(v)) continue;
    consumed.add(v);
    consumedTriggers.push(t.name);
    batches.push({ trigger: t.name, members: new Set(data.map((d) => d.name)) });
  }
  for (const b of batches) for (const m of [...b.members]) if (!seen.has(m)) b.members.delete(m);
  for (let i = batches.length - 1; i >= 0; i--) if (batches[i]!.members.size === 0) batches.splice(i, 1);
  return consumedTriggers;
}

/** Marker mode: ready with its marker, or released by a trigger's batch, else waiting for one of them. */
function markerDecision(st: Readiness, e: DirEntryInfo, markerOf: Map<string, string[]>): ReadinessDecision {
  const markers = markerOf.get(lower(e.name));
  if (markers) return { kind: 'ready', entry: e, markers };
  const batch = st.batches.find((b) => b.members.has(e.name));
  if (batch) return { kind: 'ready', entry: e, markers: [], trigger: batch.trigger };
  const want = [...st.r.suffixes.map((s) => `${e.name}${s}`), ...st.r.batchTriggers].join(' or ');
  return { kind: 'waiting', entry: e, reason: `waiting for marker ${want}` };
}

function observe(st: Readiness, entries: readonly DirEntryInfo[], nowMs: number): ReturnType<ReadinessTracker['observe']> {
  const { r } = st;
  const { markerOf, triggersPresent, isCompanion } = companionsOf(st, entries);
  const data = entries.filter((e) => !isCompanion.has(e.name) && st.isData(e.name));
  const seen = updateTracks(st, data, nowMs);
  const consumedTriggers = r.mode === 'marker' ? consumeTriggers(st, triggersPresent, data, seen) : [];
  const decisions: ReadinessDecision[] = [];
  for (const e of data) {
    const t = st.tracks.get(e.name) as Track;
    if (r.mode === 'stable') decisions.push(stableDecision(st, e, t, nowMs, r.checks));
    else if (r.mode === 'rename') decisions.push(stableDecision(st, e, t, nowMs, 1));
    else decisions.push(markerDecision(st, e, markerOf));
  }
  return { decisions, consumedTriggers };
}

/**
 * `isData` filters the listing (patterns and ignore globs); marker and trigger files are recognised
 * before that filter, so a '.done' marker of an included file is never data even when '*' matches it.
 */
export function createReadinessTracker(spec: ReadinessSpec | undefined, isData: (name: string) => boolean = () => true): ReadinessTracker {
  const r = resolveReadiness(spec);
  const st: Readiness = {
    r,
    isData,
    tracks: new Map(),
    batches: [],
    consumed: new Set(),
    triggerSet: new Set(r.batchTriggers.map(lower)),
    suffixes: r.suffixes.map(lower),
  };
  return { spec: r, observe: (entries, nowMs) => observe(st, entries, nowMs) };
}
