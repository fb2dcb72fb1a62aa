/**
 * Rows read and not sent, never dropped in silence (issue 39): the rows no mapping of a file selected (`filter`)
 * and the rows a `skip` rule excluded, with its reason. Counted exactly, their lines kept as ranges (a filter
 * usually leaves runs of lines), at most MAX_RANGES ranges per group. The app journals the tally with the file
 * (journal meta) and the finish lists it in the result file and the report.
 */
import type { UnsentSink } from './types.js';

export type UnsentKind = 'not-selected' | 'excluded';

export interface UnsentGroup {
  kind: UnsentKind;
  /** excluded: the mapping whose rule excluded the rows (and its target), and the rule's reason */
  mapping?: string;
  target?: string;
  reason?: string;
  count: number;
  /** [first line, last line] of each run of consecutive rows, in line order */
  ranges: Array<[number, number]>;
  /** rows counted beyond the ranges kept */
  unlisted?: number;
}

export interface UnsentRows {
  groups: UnsentGroup[];
}

/** ranges kept per group (the count stays exact) */
export const MAX_RANGES = 20_000;

export class UnsentTally implements UnsentSink {
  private readonly groups = new Map<string, UnsentGroup>();

  notSelected(line: number, lineEnd?: number): void {
    this.add('not-selected', undefined, undefined, line, lineEnd ?? line);
  }

  excluded(line: number, mapping: string, reason: string, lineEnd?: number, target?: string): void {
    this.add('excluded', mapping, reason, line, lineEnd ?? line, target);
  }

  get size(): number {
    let n = 0;
    for (const g of this.groups.values()) n += g.count;
    return n;
  }

  toJSON(): UnsentRows {
    return { groups: [...this.groups.values()] };
  }

  private add(kind: UnsentKind, mapping: string | undefined, reason: string | undefined, line: number, end: number, target?: string): void {
    const k = `${kind}\u0000${mapping ?? ''}\u0000${reason ?? ''}`;
    let g = this.groups.get(k);
    if (!g) {
      g = { kind, count: 0, ranges: [] };
      if (mapping !== undefined) g.mapping = mapping;
      if (target !== undefined) g.target = target;
      if (reason !== undefined) g.reason = reason;
      this.groups.set(k, g);
    }
    g.count++;
    const last = g.ranges[g.ranges.length - 1];
    if (last && line <= last[1] + 1 && line >= last[0]) last[1] = Math.max(last[1], end);
    else if (g.ranges.length < MAX_RANGES) g.ranges.push([line, end]);
    else g.unlisted = (g.unlisted ?? 0) + 1;
  }
}

/** The lines of a group as text: "3, 7-9, 12" (at most `max` ranges, then "and N more"). */
export function linesText(g: Pick<UnsentGroup, 'ranges' | 'unlisted'>, max = 20): string {
  const shown = g.ranges.slice(0, max).map(([a, b]) => (a === b ? String(a) : `${a}-${b}`));
  const more = g.ranges.length - shown.length;
  return `${shown.join(', ')}${more > 0 ? ` (+${more} more)` : ''}${g.unlisted ? ` (+${g.unlisted} rows not listed)` : ''}`;
}
