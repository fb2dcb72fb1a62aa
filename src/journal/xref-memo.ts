/**
 * Cross-references read ahead for the send loop (Journal.prefetchXrefs, issue 19). Before each record is sent its
 * key is looked up in the cross-reference (push/decide.ts decideBeforeSend: already delivered, or created with
 * other data?): one query per record, a round trip to PostgreSQL (with the settle and the mark, a third of the
 * statements a record costs the server) or, in SQLite, a read transaction of its own (2 fcntl and an fstat on
 * this machine). The send loop reads a page of records at a time; their entries are read with ONE query per page
 * and serve getXref from memory.
 *
 * An entry is exactly what a getXref would read, as long as:
 * - this journal has not written its key since: putXref and deleteXref forget it at once, a key with a write in
 *   flight is not memoized, and neither is one written while the read ahead was in flight (its answer may predate
 *   the write);
 * - no other process wrote it: SQLite has one process per state folder (the state lock); a store other processes
 *   write to (PostgreSQL) keeps an entry for SHARED_MAX_AGE_MS only. Two instances sending the same key at the same
 *   time already race between the read and the send (the claims share out records, not keys); the read ahead
 *   widens that by at most this long.
 * Keys a store could not give back as they were asked (NUL, a lone surrogate: PostgreSQL text stores U+FFFD) are
 * not read ahead: getXref asks for them one by one, as before.
 */
import type { RefResource } from '../wms/targets.js';
import type { XrefEntry } from './types.js';

/** How long an entry serves when other processes write to the store (PostgreSQL). */
export const SHARED_MAX_AGE_MS = 250;
/** How long an entry serves otherwise: a page of the send loop is sent well within it. */
export const LOCAL_MAX_AGE_MS = 10_000;
/** Entries kept at most: beyond, the oldest half is dropped (a run that stopped reading what it read ahead). */
export const MEMO_MAX_ENTRIES = 50_000;

export interface XrefMemo {
  /** reads the entries of `keys` not yet in memory with `read` (one query) and keeps them */
  prefetch(resource: RefResource, keys: readonly string[], read: (keys: string[]) => Promise<XrefEntry[]>): Promise<void>;
  /** the entry read ahead (`undefined` inside: the key has none), or null when there is nothing valid in memory */
  lookup(resource: RefResource, key: string): { entry: XrefEntry | undefined } | null;
  /** a write of the key starts: forget it; `done` when it committed or failed */
  writing(resource: RefResource, key: string): () => void;
  size(): number;
}

/** A key a store gives back exactly as it was asked. */
const plainKey = (key: string): boolean => !key.includes('\u0000') && key.isWellFormed();

/**
 * Everything is kept per resource, by the key as given. Keyed by one string made of both (built for each call,
 * hashed at each lookup), the memo cost the send loop's main thread ~180 ms for 20,000 categories (--cpu-prof of a
 * 0 ms run: writing 85, prefetch 54, lookup 41); the send loop's calls alone over 20,000 keys: 107-121 ms, now 30-39.
 */
export function createXrefMemo(options: { maxAgeMs: number; now?: () => number }): XrefMemo {
  const now = options.now ?? Date.now;
  interface Kept {
    at: number;
    entry: XrefEntry | undefined;
  }
  interface PerResource {
    entries: Map<string, Kept>;
    /** keys with a write in flight, and how many */
    inFlight: Map<string, number>;
    /** per read ahead in flight: the keys written meanwhile */
    reads: Set<Set<string>>;
  }
  const resources = new Map<string, PerResource>();
  const of = (resource: string): PerResource => {
    let r = resources.get(resource);
    if (!r) resources.set(resource, (r = { entries: new Map(), inFlight: new Map(), reads: new Set() }));
    return r;
  };
  const size = (): number => {
    let n = 0;
    for (const r of resources.values()) n += r.entries.size;
    return n;
  };
  /** the oldest half of every resource's entries (a run that stopped reading what it read ahead) */
  const dropOldestHalf = (): void => {
    for (const r of resources.values()) {
      let drop = Math.ceil(r.entries.size / 2);
      for (const k of r.entries.keys()) {
        if (drop-- <= 0) break;
        r.entries.delete(k);
      }
    }
  };

  return {
    async prefetch(resource, keys, read) {
      const r = of(resource);
      const t = now();
      const wanted: string[] = [];
      const seen = new Set<string>();
      for (const k of keys) {
        if (seen.has(k)) continue;
        seen.add(k);
        if (!plainKey(k) || r.inFlight.has(k)) continue;
        const e = r.entries.get(k);
        if (e === undefined || t - e.at > options.maxAgeMs) wanted.push(k);
      }
      if (wanted.length === 0) return;
      const touched = new Set<string>();
      r.reads.add(touched);
      const at = now();
      let found: XrefEntry[];
      try {
        found = await read(wanted);
      } finally {
        r.reads.delete(touched);
      }
      if (size() + wanted.length > MEMO_MAX_ENTRIES) dropOldestHalf();
      const byKey = new Map(found.map((e) => [e.key, e]));
      for (const k of wanted) {
        if (touched.has(k)) continue; // written while the read was in flight (a write still in flight is in it too)
        r.entries.set(k, { at, entry: byKey.get(k) });
      }
    },
    lookup(resource, key) {
      const r = resources.get(resource);
      const e = r?.entries.get(key);
      if (!e) return null;
      if (now() - e.at > options.maxAgeMs) {
        r!.entries.delete(key);
        return null;
      }
      return { entry: e.entry };
    },
    writing(resource, key) {
      const r = of(resource);
      r.entries.delete(key);
      for (const t of r.reads) t.add(key);
      r.inFlight.set(key, (r.inFlight.get(key) ?? 0) + 1);
      let done = false;
      return () => {
        if (done) return;
        done = true;
        const n = (r.inFlight.get(key) ?? 1) - 1;
        if (n > 0) r.inFlight.set(key, n);
        else r.inFlight.delete(key);
        // what the memo held before the write is gone; a read after it goes to the store
        r.entries.delete(key);
      };
    },
    size,
  };
}
