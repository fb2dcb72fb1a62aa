/**
 * Sequencing by what an operation touches. Operations whose effect depends on their order (stock lock and
 * unlock, updates and deletes of one conversion factor, upserts of one provider or carrier key) are applied
 * in source order: a record waits until every earlier record touching the same target has settled (its
 * answer received and journaled). Records touching different targets keep the full concurrency.
 *
 * Source order is the journal's record order: files are mapped in the order they were dropped (then name)
 * and each file's records in line order, so ids follow the source. The send loop walks records by id and
 * enters each into the gate in that order.
 *
 * Stock is touched per warehouse + product + lot; an operation with no lot touches every lot of the
 * product, so it waits for every earlier operation on the product and every later one waits for it.
 * Values are compared as mapped (a reference's natural key, a lookup's resolved id): conservative at worst.
 */
import { isRef } from '../map/types.js';
import type { RecordRow } from '../journal/types.js';
import { TARGET_INFO } from '../wms/targets.js';

/** What an operation touches: a scope (stock of one product in one warehouse, or one keyed record) and,
 * within it, a part (a lot) or the whole scope (null). */
export interface Touch {
  scope: string;
  part: string | null;
}

function text(v: unknown): string {
  if (isRef(v)) return `${v.$ref.resource}:${v.$ref.value}`.trim().toUpperCase();
  if (v === undefined || v === null) return '';
  return String(v).trim().toUpperCase();
}

/** The target a record's effect depends on, or null when its order does not matter (its target's sequence rule, src/wms/targets/). */
export function touchOf(row: Pick<RecordRow, 'target' | 'key' | 'payload'>): Touch | null {
  const rule = TARGET_INFO[row.target].sequence;
  if (!rule) return null;
  const p = row.payload;
  switch (rule.by) {
    case 'key':
      return { scope: `${rule.scope}|${text(row.key)}`, part: null };
    case 'refKey': {
      // the field names the record by reference (its natural key) or by id
      const v = p[rule.field];
      return { scope: `${rule.scope}|${isRef(v) ? text(v.$ref.value) : text(v)}`, part: null };
    }
    case 'fields': {
      const part = rule.part === undefined ? '' : text(p[rule.part]);
      return { scope: [rule.scope, ...rule.fields.map((f) => text(p[f]))].join('|'), part: part === '' ? null : part };
    }
  }
}

/**
 * What a settled operation tells those after it: null when they may go (delivered, or refused for good),
 * else why they must not be applied before it (it failed, is in doubt, or was not sent).
 */
export type Blocker = string | null;

interface Scope {
  /** the last whole-scope operation */
  whole: Promise<Blocker>;
  /** operations on one part since the last whole-scope one */
  parts: Map<string, Promise<Blocker>>;
}

export interface SequenceGate {
  /**
   * Enters a record in source order (call synchronously in that order). Returns what it must wait for
   * (resolving to the first blocker of its predecessors, or null) and `done`, to call once it settled.
   */
  enter(touch: Touch): { ready: Promise<Blocker>; done: (b: Blocker) => void };
}

export function createSequenceGate(): SequenceGate {
  const scopes = new Map<string, Scope>();
  const first = async (ps: Array<Promise<Blocker>>): Promise<Blocker> => {
    for (const b of await Promise.all(ps)) if (b) return b;
    return null;
  };
  return {
    enter(touch) {
      let s = scopes.get(touch.scope);
      if (!s) scopes.set(touch.scope, (s = { whole: Promise.resolve(null), parts: new Map() }));
      let done!: (b: Blocker) => void;
      const mine = new Promise<Blocker>((r) => (done = r));
      let ready: Promise<Blocker>;
      if (touch.part === null) {
        ready = first([s.whole, ...s.parts.values()]);
        s.whole = mine;
        s.parts = new Map();
      } else {
        const prev = s.parts.get(touch.part);
        ready = first(prev ? [s.whole, prev] : [s.whole]);
        s.parts.set(touch.part, mine);
      }
      return { ready, done };
    },
  };
}
