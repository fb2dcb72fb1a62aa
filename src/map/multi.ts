/**
 * One file, several mappings (issue 39): every mapping whose file pattern matches a file applies to it, each
 * with its own `filter`. The file is parsed once; each row goes to every mapping in turn (lockstep: a mapping
 * maps the row, then waits for the next one), so the records of all of them are journaled in line order and
 * memory does not grow with the file. The tiers order what is sent (a level-1 category before the families of
 * the same table that refer to it). A row no mapping selects is told to the context's sink as not selected.
 *
 * Mappings share a file only on purpose: each pair of them declares it (`sharesFilesWith` in one of the two),
 * and they read it with the same `source` (one parse). Otherwise the file is an error naming the mappings and
 * their patterns, and `wmsbridge check` says so before any file arrives (sharedFileProblems).
 */
import { InputError } from '../shared/errors.js';
import type { ParsedItem } from '../parse/types.js';
import { jsonItemPathOf } from '../parse/index.js';
import type { ParseOptions } from '../parse/options.js';
import { TARGET_INFO } from '../wms/targets.js';
import type { CompiledMapping } from './compile.js';
import type { MapContext, MapOutput, MapStats, UnsentSink } from './types.js';

const patterns = (m: CompiledMapping): string => `${m.name} (${m.match.files.join(', ')})`;

/** Whether mappings a and b declared that they read the same files (either one naming the other). */
export function declaredShared(a: CompiledMapping, b: CompiledMapping): boolean {
  return (a.spec.sharesFilesWith ?? []).includes(b.name) || (b.spec.sharesFilesWith ?? []).includes(a.name);
}

/** Why these mappings (all matching one file) cannot share it; null when they can. */
export function sharingProblem(parts: readonly CompiledMapping[]): string | null {
  const undeclared: string[] = [];
  for (let i = 0; i < parts.length; i++)
    for (let j = i + 1; j < parts.length; j++) if (!declaredShared(parts[i]!, parts[j]!)) undeclared.push(`${parts[i]!.name} and ${parts[j]!.name}`);
  if (undeclared.length > 0)
    return (
      `taken by ${parts.length} mappings: ${parts.map(patterns).join('; ')}. ` +
      `If each of them is meant to read it, declare it (sharesFilesWith: [${parts[1]!.name}] in mapping ${parts[0]!.name}; ` +
      `not declared: ${undeclared.join(', ')}); otherwise narrow match.files`
    );
  const source = JSON.stringify(sameButItemPath(parts[0]!.source));
  const other = parts.find((p) => JSON.stringify(sameButItemPath(p.source)) !== source);
  if (other)
    return `taken by mappings ${parts[0]!.name} and ${other.name}, which read it with different source options: mappings that share a file read it the same way (the same source block)`;
  return null;
}

/**
 * A source without what mappings sharing a JSON file may read differently: its itemPath (the levels of one
 * document: departamentos -> Category, departamentos/secoes -> Family). Other formats: the source as it is.
 */
function sameButItemPath(source: ParseOptions): unknown {
  if (source.format !== 'json' || Array.isArray(source.itemPath)) return source;
  return { ...source, itemPath: undefined };
}

/** Each part's own JSON itemPath when the parts read one file at different levels (rows go to their level's parts). */
function levelsOf(parts: readonly CompiledMapping[]): Array<string | undefined> | null {
  const paths = parts.map((p) => (p.source.format === 'json' && !Array.isArray(p.source.itemPath) ? (p.source.itemPath ?? '') : undefined));
  if (paths.some((p) => p === undefined) || new Set(paths).size < 2) return null;
  return paths;
}

/** The source a file shared at several JSON levels is read with: every level's items, one level after the other. */
function composedSource(parts: readonly CompiledMapping[]): ParseOptions {
  const levels = levelsOf(parts);
  const first = parts[0]!.source;
  if (!levels || first.format !== 'json') return first;
  return { ...first, itemPath: [...new Set(levels as string[])] };
}

/** The mapping a file goes through: the one that matches it, or all of them as one (in the order given). */
export function composeMappings(parts: readonly CompiledMapping[], fileName: string): CompiledMapping {
  if (parts.length === 1) return parts[0]!;
  const first = parts[0]!;
  const problemText = sharingProblem(parts);
  const lowest = [...parts].sort((a, b) => TARGET_INFO[a.target].tier - TARGET_INFO[b.target].tier)[0]!;
  const needs = new Map(parts.flatMap((p) => p.referenceNeeds).map((n) => [`${n.resource}|${n.by}`, n]));
  return {
    name: parts.map((p) => p.name).join('+'),
    file: first.file,
    match: { files: [...new Set(parts.flatMap((p) => p.match.files))] },
    source: composedSource(parts),
    // the lowest tier: what a file may hold that others depend on (run-state.ts targetOfFile), the duplicate policy
    target: lowest.target,
    op: lowest.op,
    referenceNeeds: [...needs.values()],
    columnsRead: [...new Set(parts.flatMap((p) => p.columnsRead))],
    // a field's source columns: the first mapping that reads that field (two mappings of one file seldom read one field from two columns)
    sourceColumns: (field) => parts.map((p) => p.sourceColumns(field)).find((c) => c !== undefined),
    spec: first.spec,
    parts: [...parts],
    matches: (ch, name) => parts.some((p) => p.matches(ch, name)),
    mapItems: (items, ctx) => {
      if (problemText !== null) return refuse(`${fileName}: ${problemText}`);
      return mapTogether(parts, items, ctx);
    },
  };
}

// eslint-disable-next-line require-yield
async function* refuse(message: string): AsyncGenerator<MapOutput> {
  throw new InputError(message);
}

/** The items one mapping reads: handed over one at a time by mapTogether. */
class Feed implements AsyncIterableIterator<ParsedItem> {
  private slot: IteratorResult<ParsedItem> | null = null;
  private waiter: ((r: IteratorResult<ParsedItem>) => void) | null = null;
  private ended = false;
  /** resolved when the mapping asks for an item it has not been given yet */
  hungry!: Promise<null>;
  private signal!: () => void;

  constructor() {
    this.arm();
  }
  arm(): void {
    this.hungry = new Promise((resolve) => (this.signal = () => resolve(null)));
  }
  [Symbol.asyncIterator](): this {
    return this;
  }
  next(): Promise<IteratorResult<ParsedItem>> {
    if (this.slot) {
      const s = this.slot;
      this.slot = null;
      return Promise.resolve(s);
    }
    if (this.ended) return Promise.resolve({ done: true, value: undefined });
    return new Promise((resolve) => {
      this.waiter = resolve;
      this.signal();
    });
  }
  return(): Promise<IteratorResult<ParsedItem>> {
    this.ended = true;
    return Promise.resolve({ done: true, value: undefined });
  }
  push(r: IteratorResult<ParsedItem>): void {
    if (r.done) this.ended = true;
    const w = this.waiter;
    this.waiter = null;
    if (w) w(r);
    else this.slot = r;
  }
}

interface Part {
  feed: Feed;
  out: AsyncIterator<MapOutput>;
  pending: Promise<IteratorResult<MapOutput>> | null;
  done: boolean;
}

/** The outputs of one mapping until it asks for the next item (or, at the end, until it ends). */
async function* drain(p: Part, toEnd: boolean): AsyncGenerator<MapOutput> {
  while (!p.done) {
    p.pending ??= p.out.next();
    const r = toEnd ? await p.pending : await Promise.race([p.pending, p.feed.hungry]);
    if (r === null) {
      p.feed.arm();
      return;
    }
    p.pending = null;
    if (r.done) p.done = true;
    else yield r.value;
  }
}

/**
 * Every row to every mapping, in turn. A line that could not be read goes to the first mapping only (one reject,
 * not one per mapping). A row is not selected when each mapping's filter left it.
 */
async function* mapTogether(parts: readonly CompiledMapping[], items: AsyncIterable<ParsedItem>, ctx: MapContext): AsyncGenerator<MapOutput> {
  const stats = ctx.stats;
  let leftBy = 0;
  const sink: UnsentSink = {
    notSelected: () => void leftBy++,
    excluded: (line, mapping, reason, lineEnd, target) => ctx.unsent?.excluded(line, mapping, reason, lineEnd, target),
  };
  const levels = levelsOf(parts);
  const owns: MapStats[] = [];
  const running: Part[] = parts.map((m) => {
    const feed = new Feed();
    const own: MapStats = { rows: 0, skipped: 0, records: 0, rejects: 0 };
    owns.push(own);
    const out = m.mapItems(feed, { ...ctx, stats: own, unsent: sink })[Symbol.asyncIterator]();
    return { feed, out, pending: null, done: false };
  });
  const counted = (o: MapOutput): MapOutput => {
    if (stats) {
      if (o.ok) stats.records++;
      else stats.rejects++;
    }
    return o;
  };
  try {
    for await (const item of items) {
      if (stats) stats.rows++;
      leftBy = 0;
      // a JSON file read at several levels: a row goes to the mappings of its level only
      const level = levels && item.kind === 'row' ? jsonItemPathOf(item.row.recordType) : undefined;
      const to = item.kind === 'error' ? running.slice(0, 1) : level !== undefined ? running.filter((_, i) => levels![i] === level) : running;
      for (const p of to) {
        p.feed.push({ done: false, value: item });
        for await (const o of drain(p, false)) yield counted(o);
      }
      if (item.kind === 'row' && leftBy === to.length) {
        if (stats) stats.skipped++;
        ctx.unsent?.notSelected(item.row.line, item.row.lineEnd);
      }
    }
    for (const p of running) {
      p.feed.push({ done: true, value: undefined });
      for await (const o of drain(p, true)) yield counted(o);
    }
  } finally {
    // a mapping left half-way (an error, or the reader stopped): its feed ends, so it can end too
    for (const p of running)
      if (!p.done) {
        p.feed.push({ done: true, value: undefined });
        p.out.return?.(undefined).catch(() => {});
      }
  }
  if (stats) stats.excluded = owns.reduce((n, s) => n + (s.excluded ?? 0), 0);
}

/** Names a glob matches, for the check: each `{a,b}` alternative, `*` as nothing and as '0', `?` as '0', a class as one of its characters. */
export function globExamples(glob: string): string[] {
  const out = new Set<string>();
  const expand = (g: string): string[] => {
    const open = g.indexOf('{');
    const close = open < 0 ? -1 : g.indexOf('}', open);
    if (open < 0 || close < 0) return [g];
    return g
      .slice(open + 1, close)
      .split(',')
      .flatMap((alt) => expand(g.slice(0, open) + alt + g.slice(close + 1)));
  };
  for (const g of expand(glob)) {
    const cls = g.replace(/\[(!?)([^\]]*)\]/g, (_m, not: string, body: string) => (not ? (/[0_]/.test(body) ? 'z' : '0') : (body.replace(/^\\/, '')[0] ?? '')));
    for (const star of ['', '0']) out.add(cls.replace(/\*/g, star).replace(/\?/g, '0'));
  }
  return [...out];
}

/** A file name both mappings take in `channel` (from their patterns' examples and the names given), or null. */
export function sharedFileName(a: CompiledMapping, b: CompiledMapping, channel: string, names: readonly string[]): string | null {
  const candidates = [...names, ...a.match.files.flatMap(globExamples), ...b.match.files.flatMap(globExamples)];
  return candidates.find((n) => a.matches(channel, n) && b.matches(channel, n)) ?? null;
}

/**
 * What `wmsbridge check` says about one channel's mappings: which mappings take which file patterns (notes), and
 * every pair that takes the same files (a problem unless they declared it, or when they read it differently).
 */
export function channelSharing(channel: string, bound: readonly CompiledMapping[], names: readonly string[]): { notes: string[]; problems: string[] } {
  const notes: string[] = [];
  const problems: string[] = [];
  const known = new Set(bound.map((m) => m.name));
  for (const m of bound) {
    notes.push(`  ${m.name} -> ${m.target}: files ${m.match.files.map((f) => `'${f}'`).join(', ')}`);
    for (const other of m.spec.sharesFilesWith ?? [])
      if (!known.has(other)) problems.push(`channel ${channel}: mapping ${m.name} declares sharesFilesWith ${other}, which is not a mapping of this channel`);
  }
  for (let i = 0; i < bound.length; i++)
    for (let j = i + 1; j < bound.length; j++) {
      const a = bound[i]!;
      const b = bound[j]!;
      const name = sharedFileName(a, b, channel, names);
      if (name === null) continue;
      const problem = sharingProblem([a, b]);
      if (problem === null) notes.push(`  files like '${name}' are read by ${a.name} and ${b.name} (declared: sharesFilesWith)`);
      else problems.push(`channel ${channel}: a file like '${name}' is ${problem}`);
    }
  return { notes, problems };
}
