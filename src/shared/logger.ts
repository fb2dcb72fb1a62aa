/**
 * pino logger factory. JSON lines by default (for files and journald); human-readable when
 * WMSBRIDGE_LOG_PRETTY=1 or when stderr is a terminal. Secrets and tokens are redacted by path, and
 * messages never carry them in the first place (see src/shared/errors.ts).
 * Log-field vocabulary: file, line, resource, recordKey, attempt, status, durationMs.
 */
import pino, { type Logger, type LevelWithSilent } from 'pino';

export type { Logger };

export const REDACT_PATHS = [
  'secretKey',
  '*.secretKey',
  'token',
  '*.token',
  'refreshToken',
  '*.refreshToken',
  'dataRefreshToken',
  '*.dataRefreshToken',
  'authorization',
  '*.authorization',
  'headers.authorization',
  'password',
  '*.password',
  'secret',
  '*.secret',
  'body',
  '*.body',
];

export interface LoggerOptions {
  level?: LevelWithSilent;
  pretty?: boolean;
  /** destination file descriptor (default 2: stderr, so stdout stays for command output) */
  fd?: number;
  name?: string;
}

/**
 * A pino logger. It reads no environment: WMSBRIDGE_LOG_LEVEL and WMSBRIDGE_LOG_PRETTY reach it through
 * config/load.ts (`envLogger`), the one module that reads process.env.
 */
export function createLogger(options: LoggerOptions = {}): Logger {
  const level = options.level ?? 'info';
  const fd = options.fd ?? 2;
  const pretty = options.pretty ?? (fd === 2 && process.stderr.isTTY === true);
  const base = {
    level,
    name: options.name ?? 'wmsbridge',
    redact: { paths: REDACT_PATHS, censor: '[redacted]' },
    hooks: { logMethod: withoutBoundKeys },
  };
  if (pretty) {
    return pino(
      base,
      pino.transport({ target: 'pino-pretty', options: { destination: fd, colorize: true, translateTime: 'SYS:HH:MM:ss', ignore: 'pid,hostname,name' } }),
    );
  }
  return pino(base, pino.destination({ fd, sync: true }));
}

/** each logger's bound fields (its own and its parents'), read once */
const boundKeys = new WeakMap<Logger, ReadonlySet<string>>();

/**
 * A JSON line carries each key once: a field the logger (or a parent) already binds is not written again from the
 * call's object (a child bound to `component: 'intake'` handed to code that binds it too; `file` bound by a help
 * session and logged by the send loop). The bound value is the one kept.
 */
function withoutBoundKeys(this: Logger, args: Parameters<Logger['info']>, method: Logger['info']): void {
  const obj = args[0] as unknown;
  if (obj !== null && typeof obj === 'object' && !(obj instanceof Error)) {
    let bound = boundKeys.get(this);
    if (!bound) boundKeys.set(this, (bound = new Set(Object.keys(this.bindings()))));
    if (bound.size > 0 && Object.keys(obj).some((k) => bound.has(k))) {
      const kept = Object.fromEntries(Object.entries(obj).filter(([k]) => !bound.has(k)));
      method.apply(this, [kept, ...args.slice(1)] as Parameters<Logger['info']>);
      return;
    }
  }
  method.apply(this, args);
}

/** A logger that prints nothing (tests, library use). */
export function silentLogger(): Logger {
  return pino({ level: 'silent' });
}
