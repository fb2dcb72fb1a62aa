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

const memoKey = (resource: string, key: string): string => `${resource}\u0000${key}`;

/** A key a store gives back exactly as it was asked. */
const plainKey = (key: string): boolean => !key.includes('\u0000') && key.isWellFormed();

export function createXrefMemo(options: { maxAgeMs: number; now?: () => number }): XrefMemo {
  const now = options.now ?? Date.now;
  const entries = new Map<string, { at: number; entry: XrefEntry | undefined }>();
  /** keys with a write in flight, and how many */
  const inFlight = new Map<string, number>();
  /** per read ahead in flight: the keys written meanwhile */
  const reads = new Set<Set<string>>();

  /** whether the key has an entry young enough to serve */
  const fresh = (mk: string): boolean => {
    const e = entries.get(mk);
    return e !== undefined && now() - e.at <= options.maxAgeMs;
  };

  return {
    async prefetch(resource, keys, read) {
      const wanted = [...new Set(keys)].filter((k) => plainKey(k) && !fresh(memoKey(resource, k)) && !inFlight.has(memoKey(resource, k)));
      if (wanted.length === 0) return;
      const touched = new Set<string>();
      reads.add(touched);
      const at = now();
      let found: XrefEntry[];
      try {
        found = await read(wanted);
      } finally {
        reads.delete(touched);
      }
      if (entries.size + wanted.length > MEMO_MAX_ENTRIES) {
        let drop = Math.ceil(entries.size / 2);
        for (const k of entries.keys()) {
          if (drop-- <= 0) break;
          entries.delete(k);
        }
      }
      const byKey = new Map(found.map((e) => [e.key, e]));
      for (const k of wanted) {
        const mk = memoKey(resource, k);
        if (touched.has(mk)) continue; // written while the read was in flight (a write still in flight is in it too)
        entries.set(mk, { at, entry: byKey.get(k) });
      }
    },
    lookup(resource, key) {
      const mk = memoKey(resource, key);
      const e = entries.get(mk);
      if (!e) return null;
      if (now() - e.at > options.maxAgeMs) {
        entries.delete(mk);
        return null;
      }
      return { entry: e.entry };
    },
    writing(resource, key) {
      const mk = memoKey(resource, key);
      entries.delete(mk);
      for (const t of reads) t.add(mk);
      inFlight.set(mk, (inFlight.get(mk) ?? 0) + 1);
      let done = false;
      return () => {
        if (done) return;
        done = true;
        const n = (inFlight.get(mk) ?? 1) - 1;
        if (n > 0) inFlight.set(mk, n);
        else inFlight.delete(mk);
        // what the memo held before the write is gone; a read after it goes to the store
        entries.delete(mk);
      };
    },
    size: () => entries.size,
  };
}
