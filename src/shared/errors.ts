import type { RowIssueCode } from './reason-codes.js';

/**
 * One small error hierarchy with stable codes. Callers branch on `code`, never on message text.
 * Messages name the operation and never contain a token or a secret.
 */
export const ErrorCode = {
  CONFIG: 'E_CONFIG',
  MAPPING: 'E_MAPPING',
  PARSE: 'E_PARSE',
  INPUT: 'E_INPUT',
  JOURNAL: 'E_JOURNAL',
  LOCKED: 'E_LOCKED',
  INTAKE: 'E_INTAKE',
  WMS_HTTP: 'E_WMS_HTTP',
  WMS_NETWORK: 'E_WMS_NETWORK',
  WMS_TIMEOUT: 'E_WMS_TIMEOUT',
  WMS_ENVELOPE: 'E_WMS_ENVELOPE',
  WMS_AUTH: 'E_WMS_AUTH',
  WMS_RATE_LIMIT: 'E_WMS_RATE_LIMIT',
  WMS_VALIDATION: 'E_WMS_VALIDATION',
  WMS_RESPONSE: 'E_WMS_RESPONSE',
  /** a list read that cannot be paged completely (wms.pagingBase): a configuration problem, never an empty result */
  WMS_PAGING: 'E_WMS_PAGING',
  OUTBOX: 'E_OUTBOX',
  WEBHOOK: 'E_WEBHOOK',
} as const;
export type ErrorCode = (typeof ErrorCode)[keyof typeof ErrorCode];

export interface BridgeErrorOptions {
  cause?: unknown;
  /** Structured context for logs (file, line, field, ...). Must never hold secrets. */
  details?: Record<string, unknown>;
}

export class BridgeError extends Error {
  readonly code: ErrorCode;
  readonly details: Record<string, unknown>;
  constructor(code: ErrorCode, message: string, options: BridgeErrorOptions = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'BridgeError';
    this.code = code;
    this.details = options.details ?? {};
  }
}

/** Configuration and mapping errors: name the file, the key path and the problem. */
export class ConfigError extends BridgeError {
  constructor(message: string, options: BridgeErrorOptions = {}) {
    super(ErrorCode.CONFIG, message, options);
    this.name = 'ConfigError';
  }
}

export class MappingError extends BridgeError {
  constructor(message: string, options: BridgeErrorOptions = {}) {
    super(ErrorCode.MAPPING, message, options);
    this.name = 'MappingError';
  }
}

/** A whole file that cannot be read (not a bad row: rows are data, see RowIssue). */
export class InputError extends BridgeError {
  constructor(message: string, options: BridgeErrorOptions = {}) {
    super(ErrorCode.INPUT, message, options);
    this.name = 'InputError';
  }
}

/** Another process holds the state folder. */
export class LockedError extends BridgeError {
  constructor(message: string, options: BridgeErrorOptions = {}) {
    super(ErrorCode.LOCKED, message, options);
    this.name = 'LockedError';
  }
}

/**
 * A problem with one row or document: data, not an exception. Shaped like zod's issues so both can be
 * written to the result and rejects files alike.
 */
export interface RowIssue {
  /** stable short code from the registry (reason-codes.ts): 'required', 'invalid_number', 'lookup_not_found', 'schema', ... */
  code: RowIssueCode;
  /** the target field (dot path), or the source column when no target field applies */
  field?: string;
  /** the source column(s) the field reads, as the person editing the file knows them (`peso_bruto`), comma separated */
  column?: string;
  /** the offending source value, if any */
  value?: string;
  /** a spreadsheet's sheet and cell ("D7") holding the value */
  sheet?: string;
  cell?: string;
  /** a multi-record file's line: its record type (`I`) and the record type(s) it needed before it (`C`) */
  recordType?: string;
  expected?: string;
  message: string;
}

/** Narrowing helper for catch clauses. */
export function isBridgeError(err: unknown): err is BridgeError {
  return err instanceof BridgeError;
}

export function errorMessage(err: unknown): string {
  if (err instanceof Error) return err.message;
  return String(err);
}
