/**
 * Loads the configuration: defaults < file < environment < command-line flags. The only module that
 * reads process.env. Errors name the file, the key path and the problem.
 */
import { readFile, readdir, stat } from 'node:fs/promises';
import { existsSync, readFileSync } from 'node:fs';
import { dirname, isAbsolute, join, resolve } from 'node:path';
import { parseDocument } from 'yaml';
import { formatZodIssues } from '../shared/zod-issues.js';
import { ConfigError } from '../shared/errors.js';
import { createLogger, type Logger, type LoggerOptions } from '../shared/logger.js';
import { ConfigSchema, ChannelSchema, type ChannelConfig, type Config } from './schema.js';

/**
 * The process environment. This module is the only one of src/ that reads process.env (eslint.config.js refuses it
 * elsewhere); the others take what they need from the functions here, or an `env` parameter defaulting to this.
 */
export function processEnv(): NodeJS.ProcessEnv {
  return process.env;
}

/** One environment variable (undefined when unset). */
export function envValue(name: string, env: NodeJS.ProcessEnv = process.env): string | undefined {
  return env[name];
}

/** The logger settings the environment asks for: WMSBRIDGE_LOG_LEVEL, WMSBRIDGE_LOG_PRETTY (1 text, 0 JSON). */
export function loggerEnv(env: NodeJS.ProcessEnv = process.env): Pick<LoggerOptions, 'level' | 'pretty'> {
  const out: Pick<LoggerOptions, 'level' | 'pretty'> = {};
  const level = env['WMSBRIDGE_LOG_LEVEL'];
  if (level) out.level = level as NonNullable<LoggerOptions['level']>;
  const pretty = env['WMSBRIDGE_LOG_PRETTY'];
  if (pretty === '1') out.pretty = true;
  else if (pretty === '0') out.pretty = false;
  return out;
}

/** A logger with the environment's settings (loggerEnv) under the given options (an explicit level wins). */
export function envLogger(options: LoggerOptions = {}, env: NodeJS.ProcessEnv = process.env): Logger {
  const given = Object.fromEntries(Object.entries(options).filter(([, v]) => v !== undefined)) as LoggerOptions;
  return createLogger({ ...loggerEnv(env), ...given });
}

export const CONFIG_FILE_NAMES = ['wmsbridge.config.yaml', 'wmsbridge.config.yml', 'wmsbridge.config.json'];

export interface LoadConfigOptions {
  /** explicit config file (--config) */
  file?: string;
  /** folder to look for a config file in and to resolve relative paths against (default cwd) */
  cwd?: string;
  /** overrides from flags, applied last (paths relative to cwd) */
  overrides?: Partial<Pick<Config, 'inboxDir' | 'outboxDir' | 'mappingsDir' | 'stateDir'>> & { wmsUrl?: string };
  env?: NodeJS.ProcessEnv;
}

export interface ResolvedChannel extends ChannelConfig {
  dir: string;
}

export interface ResolvedConfig extends Omit<Config, 'channels'> {
  /** the file it came from, or null for defaults only */
  file: string | null;
  /** folder relative paths were resolved against */
  baseDir: string;
  channels: ResolvedChannel[];
  /** whether channels were discovered from the inbox sub-folders */
  channelsDiscovered: boolean;
}

export function findConfigFile(cwd: string, env: NodeJS.ProcessEnv): string | null {
  const fromEnv = env['WMSBRIDGE_CONFIG'];
  if (fromEnv) return resolve(cwd, fromEnv);
  for (const name of CONFIG_FILE_NAMES) {
    const p = join(cwd, name);
    if (existsSync(p)) return p;
  }
  return null;
}

/** Parses YAML or JSON text; syntax errors name the file, line and column. */
export function parseConfigText(file: string, text: string): unknown {
  if (file.endsWith('.json')) {
    try {
      return JSON.parse(text) as unknown;
    } catch (err) {
      throw new ConfigError(`${file}: invalid JSON: ${(err as Error).message}`);
    }
  }
  const doc = parseDocument(text, { prettyErrors: true, uniqueKeys: true });
  if (doc.errors.length > 0) {
    const e = doc.errors[0]!;
    const pos = e.linePos?.[0];
    throw new ConfigError(`${file}${pos ? `:${pos.line}:${pos.col}` : ''}: invalid YAML: ${e.message.split('\n')[0]}`);
  }
  return doc.toJS() ?? {};
}

export async function loadConfig(options: LoadConfigOptions = {}): Promise<ResolvedConfig> {
  const env = options.env ?? process.env;
  const cwd = resolve(options.cwd ?? process.cwd());
  const file = options.file ? resolve(cwd, options.file) : findConfigFile(cwd, env);
  let raw: unknown = {};
  if (file) {
    let text: string;
    try {
      text = await readFile(file, 'utf8');
    } catch (err) {
      throw new ConfigError(`cannot read config file ${file}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`);
    }
    raw = parseConfigText(file, text);
  }
  const parsed = ConfigSchema.safeParse(raw);
  if (!parsed.success)
    throw new ConfigError(
      `invalid configuration\n${formatZodIssues(parsed.error, { file: file ?? '(defaults)', max: Infinity, layout: 'lines', index: 'brackets' })}`,
    );
  const config = parsed.data;
  const baseDir = file ? dirname(file) : cwd;
  const abs = (p: string, base = baseDir) => (isAbsolute(p) ? p : resolve(base, p));

  // environment, then flags
  const o = options.overrides ?? {};
  if (env['WMSBRIDGE_STATE_DIR']) config.stateDir = env['WMSBRIDGE_STATE_DIR'];
  if (env['WMS_URL'] !== undefined && env['WMS_URL'] !== '') config.wms.url = env['WMS_URL'];
  if (env['WMS_ACCESS_KEY_ID']) config.wms.accessKeyId = env['WMS_ACCESS_KEY_ID'];
  if (env['WMSBRIDGE_LOG_LEVEL']) config.log.level = env['WMSBRIDGE_LOG_LEVEL'] as Config['log']['level'];
  if (o.wmsUrl !== undefined) config.wms.url = o.wmsUrl;

  const resolved: ResolvedConfig = {
    ...config,
    file,
    baseDir,
    inboxDir: o.inboxDir ? abs(o.inboxDir, cwd) : abs(config.inboxDir),
    outboxDir: o.outboxDir ? abs(o.outboxDir, cwd) : abs(config.outboxDir),
    mappingsDir: o.mappingsDir ? abs(o.mappingsDir, cwd) : abs(config.mappingsDir),
    stateDir: o.stateDir ? abs(o.stateDir, cwd) : abs(config.stateDir),
    channels: [],
    channelsDiscovered: config.channels === undefined,
  };
  if (resolved.journal.kind === 'sqlite' && resolved.journal.path) resolved.journal = { ...resolved.journal, path: abs(resolved.journal.path) };
  if (resolved.sandbox.stateFile) resolved.sandbox = { ...resolved.sandbox, stateFile: abs(resolved.sandbox.stateFile) };

  if (config.channels) {
    const names = new Set<string>();
    for (const [i, ch] of config.channels.entries()) {
      if (names.has(ch.name)) throw new ConfigError(`${file ?? '(defaults)'}: channels[${i}].name: duplicate channel name "${ch.name}"`);
      names.add(ch.name);
      resolved.channels.push({ ...ch, dir: ch.dir ? abs(ch.dir) : join(resolved.inboxDir, ch.name) });
    }
  } else {
    resolved.channels = await discoverChannels(resolved.inboxDir);
  }
  return resolved;
}

/** Default channels: every sub-folder of the inbox (except wmsbridge's own), with default settings. */
export async function discoverChannels(inboxDir: string): Promise<ResolvedChannel[]> {
  let names: string[];
  try {
    names = await readdir(inboxDir);
  } catch {
    return [];
  }
  const out: ResolvedChannel[] = [];
  for (const name of names.sort()) {
    if (name.startsWith('.')) continue;
    const dir = join(inboxDir, name);
    try {
      if (!(await stat(dir)).isDirectory()) continue;
    } catch {
      continue;
    }
    const ch = ChannelSchema.safeParse({ name });
    if (ch.success) out.push({ ...ch.data, dir });
  }
  return out;
}

export interface WmsCredentials {
  url: string;
  accessKeyID: string;
  secretKey: string;
}

/**
 * The WMS to talk to: null means the embedded sandbox. The secret comes from the environment variable
 * named by wms.secretKeyEnv or from wms.secretKeyFile, never from the config file itself.
 */
/** wms.url value (or --sandbox) that asks for the embedded sandbox explicitly */
export const SANDBOX_URL = 'sandbox';

/** How to configure a WMS, for commands run without one (exit 2). */
export const NO_WMS_CONFIGURED =
  'no WMS configured: set wms.url (and wms.accessKeyId) in the config file, or $WMS_URL / --wms-url, with the secret in $WMS_SECRET_KEY or wms.secretKeyFile; ' +
  'to run against the embedded sandbox say so: --sandbox or wms.url: sandbox';

/** Credentials of the configured WMS; null when none is configured or the embedded sandbox is asked for (wms.url: sandbox). */
export function resolveWmsCredentials(config: ResolvedConfig, env: NodeJS.ProcessEnv = process.env): WmsCredentials | null {
  if (!config.wms.url || config.wms.url === SANDBOX_URL) return null;
  const where = config.file ?? '(defaults)';
  let url: URL;
  try {
    url = new URL(config.wms.url);
  } catch {
    throw new ConfigError(`${where}: wms.url: "${config.wms.url}" is not a URL`);
  }
  if (url.username || url.password)
    throw new ConfigError(`${where}: wms.url: credentials in the URL are refused; use wms.accessKeyId and ${config.wms.secretKeyEnv}`);
  const accessKeyID = config.wms.accessKeyId;
  if (!accessKeyID) throw new ConfigError(`${where}: wms.accessKeyId: required when wms.url is set (or set WMS_ACCESS_KEY_ID)`);
  let secretKey = env[config.wms.secretKeyEnv];
  if (!secretKey && config.wms.secretKeyFile) {
    const p = isAbsolute(config.wms.secretKeyFile) ? config.wms.secretKeyFile : resolve(config.baseDir, config.wms.secretKeyFile);
    try {
      secretKey = readFileSync(p, 'utf8').trim();
    } catch (err) {
      throw new ConfigError(`${where}: wms.secretKeyFile: cannot read ${p}: ${(err as NodeJS.ErrnoException).code ?? ''}`);
    }
  }
  if (!secretKey)
    throw new ConfigError(`${where}: the WMS secret key is missing: set the environment variable ${config.wms.secretKeyEnv} or wms.secretKeyFile`);
  return { url: url.toString().replace(/\/$/, ''), accessKeyID, secretKey };
}

/**
 * The journal store a configuration names. PostgreSQL's password comes from the environment variable
 * named by journal.passwordEnv, never from the file or the URL.
 */
export function journalSpecOf(
  config: ResolvedConfig,
  env: NodeJS.ProcessEnv = process.env,
): { kind: 'sqlite'; path: string; synchronous: 'FULL' | 'NORMAL' } | { kind: 'postgres'; url: string; password?: string; schema: string } {
  const j = config.journal;
  if (j.kind === 'sqlite') return { kind: 'sqlite', path: j.path ?? join(config.stateDir, 'journal.db'), synchronous: j.synchronous };
  let url: URL;
  try {
    url = new URL(j.url);
  } catch {
    throw new ConfigError(`${config.file ?? '(defaults)'}: journal.url: "${j.url}" is not a postgres:// URL`);
  }
  if (url.password) throw new ConfigError(`${config.file ?? '(defaults)'}: journal.url: a password in the URL is refused; use journal.passwordEnv`);
  const password = j.passwordEnv ? env[j.passwordEnv] : undefined;
  if (j.passwordEnv && !password)
    throw new ConfigError(`${config.file ?? '(defaults)'}: journal.passwordEnv: the environment variable ${j.passwordEnv} is not set`);
  return { kind: 'postgres', url: j.url, ...(password ? { password } : {}), schema: j.schema };
}

/** Several instances share the work only through a shared journal store. */
export function isSharedJournal(config: ResolvedConfig): boolean {
  return config.journal.kind === 'postgres';
}
