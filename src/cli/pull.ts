/**
 * `wmsbridge pull <what>`: one export from the WMS into the outbox (default ./outbox/exports). The composition is
 * app/pull-command.ts (runPullCommand, reusable by config-driven callers); this file only turns argv and the
 * environment into its options.
 */
import {
  isPullKind,
  PULL_FORMATS,
  PULL_KINDS,
  pullWmsFromConfig,
  runPullCommand,
  type CsvFormatOptions,
  type PullCommandOptions,
  type PullCommandResult,
  type PullFormat,
  type StockSearchFilters,
} from '../app/pull-command.js';
import { ConfigError } from '../shared/errors.js';
import { envLogger, processEnv } from '../config/load.js';
import type { CliIo } from './types.js';
import { commandHelp, defineCommand, parseCommand, type OptionSpec } from './options.js';

const FILTER_FLAGS: ReadonlyArray<[string, keyof StockSearchFilters]> = [
  ['warehouse-id', 'warehouseId'],
  ['owner-id', 'ownerId'],
  ['product-id', 'productId'],
  ['lot-number', 'lotNumber'],
  ['material-status-id', 'materialStatusId'],
  ['container-code', 'containerCode'],
  ['unit-measurement-id', 'unitMeasurementId'],
  ['manufacturing-date', 'manufacturingDate'],
  ['expiration-date', 'expirationDate'],
];

const str = (arg: string, help: string): OptionSpec => ({ type: 'string', arg, help });

export const PULL_COMMAND = defineCommand({
  name: 'pull',
  usage: '<what> [options]',
  description: `what: ${PULL_KINDS.join(', ')}`,
  common: ['config', 'outbox', 'state-dir', 'log-level', 'json', 'wms-url', 'access-key-id', 'sandbox'],
  commonHelp: {
    outbox: 'outbox folder (default ./outbox)',
    'state-dir': 'state folder with journal.db (default ./state)',
    json: 'print the result as one JSON line',
    'wms-url': "the WMS to read (or $WMS_URL; overrides the config file's wms.url)",
    sandbox: 'use an in-process sandbox (also: wms.url: sandbox in the config)',
  },
  options: {
    format: str('csv|jsonl|json', 'file format (default csv)'),
    encoding: str('utf-8-bom|utf-8|windows-1252', 'CSV encoding (default utf-8-bom)'),
    delimiter: str("';'|','|tab|'|'", 'CSV delimiter (default ;)'),
    decimal: str(',|.', 'CSV decimal separator (default ,)'),
    'date-format': str("iso|dd/MM/yyyy|'dd/MM/yyyy HH:mm:ss'", 'CSV dates (default dd/MM/yyyy HH:mm:ss)'),
    'line-ending': str('crlf|lf', 'CSV line ending (default crlf)'),
    'time-zone': str('ZONE', "IANA zone CSV instants are shown in (default: this machine's)"),
    'done-file': { type: 'boolean', help: 'also write <file>.done after the file appears' },
    'file-name': str('NAME', 'fixed file name (replaced atomically) instead of <what>-YYYYMMDD-HHmmss.<ext>'),
    out: str('DIR', 'exports folder (default <outbox>/exports)'),
    'page-size': str('N', 'records per page asked of the WMS'),
    force: { type: 'boolean', help: 'inventory-finished: export again inventories exported before' },
    'secret-key-env': str('VAR', 'NAME of the env variable holding the secret (default WMS_SECRET_KEY)'),
    'sandbox-seed': str('S', 'seed of that sandbox (default 1)'),
    'sandbox-state-file': str('PATH', 'state file of that sandbox (loaded, and saved on exit)'),
    ...Object.fromEntries(
      FILTER_FLAGS.map(([flag]): [string, OptionSpec] => [
        flag,
        str(flag === 'lot-number' ? 'LOT' : flag === 'container-code' ? 'CODE' : flag.endsWith('-date') ? 'DATE' : 'ID', 'stock-search filter'),
      ]),
    ),
  },
  allowPositionals: true,
  footer: "WMS: the config file's wms settings, else --wms-url (or --sandbox); without a WMS the command stops with exit 2.",
});

/** argv (+ env) to PullCommandOptions; throws ConfigError on a bad flag. Exported for tests. */
export function parsePullArgs(
  args: string[],
  env: NodeJS.ProcessEnv,
): PullCommandOptions & { json: boolean; help: boolean; sandbox?: boolean; configFile?: string } {
  const parsed = parseCommand(PULL_COMMAND, args);
  const v = parsed.values as Record<string, string | boolean | undefined>;
  const s = (k: string): string | undefined => (typeof v[k] === 'string' ? (v[k] as string) : undefined);
  const help = v['help'] === true;
  const [what, ...extra] = parsed.positionals;
  if (help) return { what: what ?? '', json: false, help: true };
  if (!what) throw new ConfigError(`pull: missing <what> (one of ${PULL_KINDS.join(', ')})`);
  if (extra.length > 0) throw new ConfigError(`pull: unexpected argument "${extra[0]}"`);
  if (!isPullKind(what)) throw new ConfigError(`pull: unknown kind "${what}" (expected one of ${PULL_KINDS.join(', ')})`);

  const out: PullCommandOptions & { json: boolean; help: boolean; sandbox?: boolean; configFile?: string } = { what, json: v['json'] === true, help: false };
  const format = s('format');
  if (format !== undefined) {
    if (!(PULL_FORMATS as readonly string[]).includes(format))
      throw new ConfigError(`pull: --format must be one of ${PULL_FORMATS.join(', ')}, got "${format}"`);
    out.format = format as PullFormat;
  }
  const csv: Record<string, unknown> = {};
  if (s('encoding') !== undefined) csv['encoding'] = s('encoding');
  const delimiter = s('delimiter');
  if (delimiter !== undefined) csv['delimiter'] = delimiter === 'tab' || delimiter === '\\t' ? '\t' : delimiter;
  if (s('decimal') !== undefined) csv['decimalSeparator'] = s('decimal');
  if (s('date-format') !== undefined) csv['dateFormat'] = s('date-format');
  const lineEnding = s('line-ending');
  if (lineEnding !== undefined) {
    if (lineEnding !== 'crlf' && lineEnding !== 'lf') throw new ConfigError(`pull: --line-ending must be crlf or lf, got "${lineEnding}"`);
    csv['lineEnding'] = lineEnding === 'crlf' ? '\r\n' : '\n';
  }
  if (s('time-zone') !== undefined) csv['timeZone'] = s('time-zone');
  if (Object.keys(csv).length > 0) out.csv = csv as CsvFormatOptions;

  const filters: Record<string, string> = {};
  for (const [flag, key] of FILTER_FLAGS) {
    const value = s(flag);
    if (value !== undefined) filters[key] = value;
  }
  if (Object.keys(filters).length > 0) {
    if (what !== 'stock-search') throw new ConfigError(`pull ${what}: the stock filters (--warehouse-id ...) apply to stock-search only`);
    out.filters = filters as StockSearchFilters;
  }
  if (v['done-file'] === true) out.doneFile = true;
  if (v['force'] === true) out.force = true;
  if (s('file-name') !== undefined) out.fileName = s('file-name')!;
  if (s('out') !== undefined) out.outDir = s('out')!;
  if (s('outbox') !== undefined) out.outboxDir = s('outbox')!;
  if (s('state-dir') !== undefined) out.stateDir = s('state-dir')!; // --state, the old spelling, is folded into it
  const level = s('log-level');
  if (level !== undefined) {
    // (one of LOG_LEVELS: the option table checks it)
    out.logger = envLogger({ level: level as 'info' });
  }
  const pageSize = s('page-size');
  if (pageSize !== undefined) {
    const n = Number(pageSize);
    if (!Number.isInteger(n) || n < 1) throw new ConfigError(`pull: --page-size must be a positive integer, got "${pageSize}"`);
    out.pageSize = n;
  }
  if (s('sandbox-seed') !== undefined) {
    const seed = s('sandbox-seed')!;
    out.sandboxSeed = /^\d+$/.test(seed) ? Number(seed) : seed;
  }

  if (s('sandbox-state-file') !== undefined) out.sandboxStateFile = s('sandbox-state-file')!;

  const url = s('wms-url') ?? env['WMS_URL'];
  if (v['sandbox'] !== true && url) {
    const accessKeyID = s('access-key-id') ?? env['WMS_ACCESS_KEY_ID'];
    const secretEnv = s('secret-key-env') ?? 'WMS_SECRET_KEY';
    const secretKey = env[secretEnv];
    if (!accessKeyID) throw new ConfigError('pull: --wms-url needs --access-key-id or WMS_ACCESS_KEY_ID');
    if (!secretKey) throw new ConfigError(`pull: --wms-url needs the secret key in the environment variable ${secretEnv} (it is never a flag)`);
    out.wms = { url, accessKeyID, secretKey };
  }
  if (v['sandbox'] === true) out.sandbox = true;
  if (s('config') !== undefined) out.configFile = s('config')!;
  return out;
}

export { runPullCommand, type PullCommandOptions, type PullCommandResult };

export default async function pull(args: string[], io: CliIo): Promise<number> {
  let parsed: ReturnType<typeof parsePullArgs>;
  try {
    parsed = parsePullArgs(args, processEnv());
  } catch (err) {
    io.stderr.write(`wmsbridge pull: ${(err as Error).message}\n\n${commandHelp(PULL_COMMAND)}`);
    return 2;
  }
  if (parsed.help) {
    io.stdout.write(commandHelp(PULL_COMMAND));
    return 0;
  }
  const { json, help: _help, sandbox: askedSandbox, configFile, ...options } = parsed;
  // no WMS on the command line: the config file's (wms.url, accessKeyId, secret, userAgent); the embedded
  // sandbox only when asked (--sandbox or wms.url: sandbox)
  if (!options.wms && !askedSandbox) {
    const fromConfig = await pullWmsFromConfig(configFile);
    if ('error' in fromConfig) {
      io.stderr.write(`wmsbridge pull: ${fromConfig.error}\n`);
      return 2;
    }
    if (fromConfig.wms) options.wms = fromConfig.wms;
    options.fileMode = fromConfig.fileMode;
  }
  // Ctrl-C / SIGTERM: abort the requests, remove the temp file, exit without a partial export
  const ac = new AbortController();
  const onSignal = (): void => ac.abort(new Error('interrupted'));
  process.once('SIGINT', onSignal);
  process.once('SIGTERM', onSignal);
  let result: PullCommandResult;
  try {
    result = await runPullCommand({ ...options, signal: ac.signal });
  } finally {
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
  }
  if (json) {
    io.stdout.write(`${JSON.stringify(result)}\n`);
    return 0;
  }
  if (result.file === null) {
    io.stdout.write(`no new finished inventory to export (${result.skipped ?? 0} already exported; --force exports them again)\n`);
    return 0;
  }
  let line = `${result.file}\t${result.records} records`;
  if (result.inventories !== undefined) line += `, ${result.inventories} inventories`;
  if (result.skipped) line += `, ${result.skipped} finished inventories skipped (already exported; --force exports them again)`;
  if (result.replacedChars) line += `, ${result.replacedChars} characters not representable in windows-1252 written as ?`;
  io.stdout.write(`${line}\n`);
  return 0;
}
