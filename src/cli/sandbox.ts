/**
 * `wmsbridge sandbox`: runs the local sandbox WMS until SIGTERM/SIGINT. When ready it prints EXACTLY
 * ONE JSON line to stdout, {"url":...,"accessKeyID":...,"secretKey":...}, and nothing else there
 * (logs go to stderr): operators' scripts read that line.
 */
import { ConfigError } from '../shared/errors.js';
import { envLogger, envValue } from '../config/load.js';
import { parseDialect, serveSandbox, type SandboxOptions } from '../app/sandbox-command.js';
import type { CliIo } from './types.js';
import { commandHelp, defineCommand, parseCommand } from './options.js';

const str = (arg: string, help: string) => ({ type: 'string', arg, help }) as const;

export const SANDBOX_COMMAND = defineCommand({
  name: 'sandbox',
  usage: '[options]',
  description: `Runs the local sandbox WMS (the whole interface, strict, with real state) on 127.0.0.1.
Prints one JSON line {"url","accessKeyID","secretKey"} to stdout when ready; logs go to stderr.
Stops cleanly on SIGTERM or SIGINT (exit 0).`,
  common: ['access-key-id'],
  commonHelp: { 'access-key-id': 'credential (default derived from the seed)' },
  options: {
    port: str('N', 'TCP port (default 0: a free port)'),
    host: str('H', 'interface (default 127.0.0.1)'),
    seed: str('S', 'seed of the data, ids and credentials (default 1)'),
    'token-ttl': str('SECONDS', 'access token lifetime (default 900)'),
    'latency-ms': str('N', 'latency added to every API request (default 0)'),
    'fail-rate': str('F', 'fraction of requests answered 500 (0..1, default 0)'),
    'rate-429': str('F', 'fraction of requests answered 429 Retry-After: 1 (0..1, default 0)'),
    'reset-rate': str('F', 'fraction of connections destroyed without an answer (0..1, default 0)'),
    'state-file': str('PATH', 'JSON state file: loaded at start, saved atomically on change and exit'),
    'webhook-url': str('URL', 'webhook receiver base URL (webhooks go to URL/webhooks/<kind>)'),
    'stock-records': str('N', 'synthetic stock records derived from their index (default 0)'),
    'max-page-size': str('N', 'largest PagingLimit honoured (default 500)'),
    'secret-key': str('KEY', 'credential (default derived from the seed; prefer WMSBRIDGE_SANDBOX_SECRET)'),
    dialect: str(
      'D',
      `choices where the interface leaves them open: a preset (default, alt) and/or
knob=value,... (pagingBase=0|1, cnpjFormat=digits|masked, ownersCodeerpMatches=
code|codeERP, pickingListTypeRequired=true|false, dateTimes=utc|local,
duplicates=accept|refuse), e.g. "alt" or "pagingBase=0,cnpjFormat=masked"`,
    ),
  },
});

function num(name: string, v: string | undefined, opts: { min?: number; max?: number; int?: boolean } = {}): number | undefined {
  if (v === undefined) return undefined;
  const n = Number(v);
  if (
    v.trim() === '' ||
    !Number.isFinite(n) ||
    (opts.int && !Number.isInteger(n)) ||
    (opts.min !== undefined && n < opts.min) ||
    (opts.max !== undefined && n > opts.max)
  ) {
    const range = opts.max !== undefined ? ` between ${opts.min ?? '-inf'} and ${opts.max}` : opts.min !== undefined ? ` >= ${opts.min}` : '';
    throw new ConfigError(`--${name}: expected a${opts.int ? 'n integer' : ' number'}${range}, got "${v}"`);
  }
  return n;
}

export default async function sandbox(args: string[], io: CliIo): Promise<number> {
  let values;
  try {
    ({ values } = parseCommand(SANDBOX_COMMAND, args));
  } catch (err) {
    io.stderr.write(`wmsbridge sandbox: ${err instanceof Error ? err.message : String(err)}\n\n${commandHelp(SANDBOX_COMMAND)}`);
    return 2;
  }
  if (values.help) {
    // stdout carries only the JSON line, even for --help
    io.stderr.write(commandHelp(SANDBOX_COMMAND));
    return 0;
  }
  const webhookUrl = values['webhook-url'];
  if (webhookUrl !== undefined && !/^https?:\/\/[^\s]+$/.test(webhookUrl)) throw new ConfigError(`--webhook-url: expected an http(s) URL, got "${webhookUrl}"`);
  const options: SandboxOptions = {
    port: num('port', values.port, { min: 0, max: 65535, int: true }) ?? 0,
    host: values.host ?? '127.0.0.1',
    seed: values.seed ?? 1,
    tokenTtlSeconds: num('token-ttl', values['token-ttl'], { min: 1 }),
    latencyMs: num('latency-ms', values['latency-ms'], { min: 0 }),
    failRate: num('fail-rate', values['fail-rate'], { min: 0, max: 1 }),
    rate429: num('rate-429', values['rate-429'], { min: 0, max: 1 }),
    resetRate: num('reset-rate', values['reset-rate'], { min: 0, max: 1 }),
    stateFile: values['state-file'],
    webhookUrl,
    stockRecords: num('stock-records', values['stock-records'], { min: 0, int: true }),
    maxPageSize: num('max-page-size', values['max-page-size'], { min: 1, int: true }),
    accessKeyID: values['access-key-id'],
    secretKey: values['secret-key'] ?? envValue('WMSBRIDGE_SANDBOX_SECRET'),
    dialect: values.dialect !== undefined ? parseDialect(values.dialect, '--dialect') : undefined,
    logger: envLogger({ name: 'wms-sandbox' }),
  };
  for (const k of Object.keys(options) as Array<keyof SandboxOptions>) if (options[k] === undefined) delete options[k];

  return serveSandbox(options, io);
}
