/**
 * The command-line options of every command, in one table: each common option (--config, --state-dir,
 * --log-level, --sandbox, --json, --wms-url...) is defined once here, and each command declares which of
 * them it takes plus its own (defineCommand). parseCommand parses argv against that declaration
 * (node:util parseArgs, strict), folds deprecated spellings into their option, checks closed sets of
 * values, and answers an unknown option with the nearest one ("did you mean --state-dir?"); commandHelp
 * writes `--help` from the same declaration. A usage error is a ConfigError: exit 2.
 */
import { parseArgs } from 'node:util';
import { ConfigError } from '../shared/errors.js';

export interface OptionSpec {
  readonly type: 'string' | 'boolean';
  /** one-letter spelling (-c) */
  readonly short?: string;
  /** placeholder of the value in --help (FILE, DIR, N) */
  readonly arg?: string;
  /** one line (or several, with \n) for --help */
  readonly help: string;
  /** older spellings still accepted, said to be deprecated in --help and on stderr when used */
  readonly deprecatedAliases?: readonly string[];
  /** the only values accepted */
  readonly choices?: readonly string[];
}

export const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;

/** The options several commands share: one definition each. */
export const COMMON = {
  config: { type: 'string', short: 'c', arg: 'FILE', help: 'configuration file (default: ./wmsbridge.config.yaml|.yml|.json, or $WMSBRIDGE_CONFIG)' },
  inbox: { type: 'string', arg: 'DIR', help: 'inbox folder (one sub-folder per channel)' },
  outbox: { type: 'string', arg: 'DIR', help: 'outbox folder' },
  'state-dir': { type: 'string', arg: 'DIR', help: 'journal, lock and sandbox state', deprecatedAliases: ['state'] },
  mappings: { type: 'string', arg: 'DIR', help: 'mapping files' },
  'wms-url': { type: 'string', arg: 'URL', help: 'WMS base URL (or wms.url, $WMS_URL); secret from $WMS_SECRET_KEY. Without one the\ncommand stops (exit 2)' },
  'access-key-id': { type: 'string', arg: 'ID', help: 'WMS access key id (or wms.accessKeyId, $WMS_ACCESS_KEY_ID)' },
  sandbox: { type: 'boolean', help: 'use the embedded sandbox WMS (same as wms.url: sandbox)' },
  'wms-changed': { type: 'boolean', help: 'the journal delivered to another WMS before: accept the new one (held records\nwill be sent to it)' },
  'log-level': { type: 'string', arg: 'LEVEL', help: LOG_LEVELS.join('|'), choices: LOG_LEVELS },
  json: { type: 'boolean', help: 'print the result as JSON' },
  help: { type: 'boolean', short: 'h', help: 'this help' },
} as const satisfies Record<string, OptionSpec>;

export type CommonName = keyof typeof COMMON;

/** What the commands that read the configuration and the journal all take. */
export const APP_OPTIONS = [
  'config',
  'inbox',
  'outbox',
  'state-dir',
  'mappings',
  'wms-url',
  'sandbox',
  'wms-changed',
  'log-level',
] as const satisfies readonly CommonName[];

export interface CommandSpec<C extends readonly CommonName[] = readonly CommonName[], O extends Record<string, OptionSpec> = Record<string, OptionSpec>> {
  /** the command name (wmsbridge <name>) */
  readonly name: string;
  /** what follows `wmsbridge <name>` in the usage line, e.g. '<what> [options]' */
  readonly usage: string;
  /** paragraphs after the usage line */
  readonly description?: string;
  /** the common options it takes (--help always) */
  readonly common: C;
  /** its own options */
  readonly options: O;
  /** a different --help line for a common option in this command */
  readonly commonHelp?: Partial<Record<C[number], string>>;
  readonly allowPositionals?: boolean;
  /** text after the options (what the positionals are, exit codes) */
  readonly footer?: string;
}

/** Declares a command's options (keeps the literal types for parseCommand). */
export function defineCommand<const C extends readonly CommonName[], const O extends Record<string, OptionSpec>>(spec: CommandSpec<C, O>): CommandSpec<C, O> {
  for (const name of Object.keys(spec.options))
    if (name in COMMON) throw new Error(`cli: ${spec.name} redefines the common option --${name}: list it in common`);
  return spec;
}

type ValueOf<S> = S extends { readonly type: 'string' } ? string : boolean;
export type ValuesOf<C extends readonly CommonName[], O extends Record<string, OptionSpec>> = {
  -readonly [K in C[number] | 'help']?: ValueOf<(typeof COMMON)[K]>;
} & {
  -readonly [K in keyof O]?: ValueOf<O[K]>;
};

function optionsOf(spec: CommandSpec): Map<string, OptionSpec> {
  const all = new Map<string, OptionSpec>();
  for (const name of [...spec.common, 'help'] as CommonName[]) all.set(name, COMMON[name]);
  for (const [name, o] of Object.entries(spec.options)) all.set(name, o);
  return all;
}

/**
 * Parses a command's arguments against its declaration. Throws ConfigError (exit 2) on an unknown
 * option (with the nearest known one), a missing value or a value outside the option's choices.
 * `warn` receives the note about a deprecated spelling (default: stderr).
 */
export function parseCommand<const C extends readonly CommonName[], const O extends Record<string, OptionSpec>>(
  spec: CommandSpec<C, O>,
  args: string[],
  warn: (line: string) => void = (line) => process.stderr.write(`${line}\n`),
): { values: ValuesOf<C, O>; positionals: string[] } {
  const all = optionsOf(spec as CommandSpec);
  const config: Record<string, { type: 'string' | 'boolean'; short?: string }> = {};
  const aliasOf = new Map<string, string>();
  for (const [name, o] of all) {
    config[name] = { type: o.type, ...(o.short ? { short: o.short } : {}) };
    for (const alias of o.deprecatedAliases ?? []) {
      config[alias] = { type: o.type };
      aliasOf.set(alias, name);
    }
  }
  let parsed;
  try {
    parsed = parseArgs({ args, options: config, allowPositionals: spec.allowPositionals === true, strict: true });
  } catch (err) {
    throw usageError(spec as CommandSpec, all, aliasOf, err);
  }
  const values = parsed.values as Record<string, string | boolean | undefined>;
  for (const [alias, name] of aliasOf) {
    if (values[alias] === undefined) continue;
    warn(`wmsbridge ${spec.name}: --${alias} is a deprecated spelling of --${name} (it still works)`);
    if (values[name] === undefined) values[name] = values[alias];
    delete values[alias];
  }
  for (const [name, o] of all) {
    const v = values[name];
    if (o.choices && typeof v === 'string' && !o.choices.includes(v)) {
      const near = nearest(v, o.choices);
      throw new ConfigError(`--${name} must be one of ${o.choices.join(', ')}, got "${v}"${near ? `; did you mean ${near}?` : ''}`);
    }
  }
  return { values: values as ValuesOf<C, O>, positionals: parsed.positionals };
}

function usageError(spec: CommandSpec, all: Map<string, OptionSpec>, aliasOf: Map<string, string>, err: unknown): ConfigError {
  const message = err instanceof Error ? err.message : String(err);
  const code = (err as { code?: string }).code;
  const seeHelp = `(see wmsbridge ${spec.name} --help)`;
  if (code === 'ERR_PARSE_ARGS_UNKNOWN_OPTION') {
    const given = /Unknown option '([^']+)'/.exec(message)?.[1] ?? '';
    const bare = given.replace(/^--?/, '').split('=')[0] ?? '';
    const known = [...all.keys(), ...aliasOf.keys()];
    if (bare in COMMON && !all.has(bare)) return new ConfigError(`Unknown option '${given}': wmsbridge ${spec.name} does not take --${bare} ${seeHelp}`);
    const near = given.startsWith('--') ? nearest(bare, known) : null;
    const canonical = near ? (aliasOf.get(near) ?? near) : null;
    return new ConfigError(`Unknown option '${given}'${canonical ? `; did you mean --${canonical}?` : ''} ${seeHelp}`);
  }
  if (code === 'ERR_PARSE_ARGS_UNEXPECTED_POSITIONAL') {
    const arg = /Unexpected argument '([^']+)'/.exec(message)?.[1];
    return new ConfigError(`${arg !== undefined ? `unexpected argument '${arg}': wmsbridge ${spec.name} takes no positional argument` : message} ${seeHelp}`);
  }
  return new ConfigError(`${message.replace(/\. To specify a positional.*$/, '')} ${seeHelp}`);
}

/**
 * Optimal string alignment distance (Damerau-Levenshtein with adjacent transpositions): insertions,
 * deletions, substitutions and swaps of two neighbours cost 1.
 */
export function editDistance(a: string, b: string): number {
  const d: number[][] = Array.from({ length: a.length + 1 }, (_, i) => Array.from({ length: b.length + 1 }, (_, j) => (i === 0 ? j : j === 0 ? i : 0)));
  for (let i = 1; i <= a.length; i++) {
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      let v = Math.min(d[i - 1]![j]! + 1, d[i]![j - 1]! + 1, d[i - 1]![j - 1]! + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) v = Math.min(v, d[i - 2]![j - 2]! + 1);
      d[i]![j] = v;
    }
  }
  return d[a.length]![b.length]!;
}

/**
 * The candidate nearest to `word`, when it is near enough to be a slip: a distance of at most a third of
 * the word (at least 1), or the word is the start of exactly one candidate (--dry for --dry-run). Null
 * otherwise, or when two candidates are equally near.
 */
export function nearest(word: string, candidates: readonly string[]): string | null {
  const w = word.toLowerCase();
  if (w.length === 0) return null;
  const prefixed = candidates.filter((c) => w.length >= 3 && c.startsWith(w));
  if (prefixed.length === 1) return prefixed[0]!;
  const limit = Math.max(1, Math.floor(w.length / 3));
  let best: string | null = null;
  let bestD = Infinity;
  let tie = false;
  for (const c of candidates) {
    const dist = editDistance(w, c.toLowerCase());
    if (dist < bestD) {
      best = c;
      bestD = dist;
      tie = false;
    } else if (dist === bestD) tie = true;
  }
  return best !== null && bestD <= limit && !tie ? best : null;
}

function flagsOf(name: string, o: OptionSpec): string {
  return `${o.short ? `-${o.short}, ` : ''}--${name}${o.arg ? ` ${o.arg}` : ''}`;
}

function optionLines(entries: Array<[string, OptionSpec, string]>, width: number): string[] {
  const lines: string[] = [];
  for (const [name, o, help] of entries) {
    const flags = flagsOf(name, o);
    const text = o.deprecatedAliases?.length ? `${help}\n(--${o.deprecatedAliases.join(', --')}: the same, deprecated spelling)` : help;
    const [first, ...rest] = text.split('\n');
    lines.push(flags.length + 2 > width ? `  ${flags}\n${' '.repeat(width + 2)} ${first}` : `  ${flags.padEnd(width)} ${first}`);
    for (const r of rest) lines.push(`${' '.repeat(width + 2)} ${r}`);
  }
  return lines;
}

/** `wmsbridge <command> --help`, written from the command's declaration. */
export function commandHelp(spec: CommandSpec): string {
  const own = Object.entries(spec.options).map(([n, o]): [string, OptionSpec, string] => [n, o, o.help]);
  const overrides = (spec.commonHelp ?? {}) as Partial<Record<CommonName, string>>;
  const common = [...spec.common, 'help' as const].map((n): [string, OptionSpec, string] => [n, COMMON[n], overrides[n] ?? COMMON[n].help]);
  const width = Math.min(24, Math.max(20, ...[...own, ...common].map(([n, o]) => flagsOf(n, o).length)));
  const out = [`usage: wmsbridge ${spec.name} ${spec.usage}`.trimEnd()];
  if (spec.description) out.push('', spec.description);
  if (own.length) out.push('', 'options:', ...optionLines(own, width));
  out.push('', own.length ? 'common options:' : 'options:', ...optionLines(common, width));
  if (spec.footer) out.push('', spec.footer);
  return `${out.join('\n')}\n`;
}
