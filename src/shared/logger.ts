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

export function createLogger(options: LoggerOptions = {}): Logger {
  const level = options.level ?? (process.env['WMSBRIDGE_LOG_LEVEL'] as LevelWithSilent | undefined) ?? 'info';
  const fd = options.fd ?? 2;
  const pretty =
    options.pretty ??
    (process.env['WMSBRIDGE_LOG_PRETTY'] === '1' || (process.env['WMSBRIDGE_LOG_PRETTY'] !== '0' && fd === 2 && process.stderr.isTTY === true));
  const base = {
    level,
    name: options.name ?? 'wmsbridge',
    redact: { paths: REDACT_PATHS, censor: '[redacted]' },
  };
  if (pretty) {
    return pino(
      base,
      pino.transport({ target: 'pino-pretty', options: { destination: fd, colorize: true, translateTime: 'SYS:HH:MM:ss', ignore: 'pid,hostname,name' } }),
    );
  }
  return pino(base, pino.destination({ fd, sync: true }));
}

/** A logger that prints nothing (tests, library use). */
export function silentLogger(): Logger {
  return pino({ level: 'silent' });
}
