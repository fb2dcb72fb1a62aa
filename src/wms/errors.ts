/**
 * WmsError: every failure of the WMS client. Callers branch on `code` (stable) and, for sends, on
 * `mayHaveReachedServer` (true = in doubt: the request was fully written and no answer arrived, so
 * the WMS may or may not have applied it).
 *
 * Messages have the shape `[POST] /open/v1/product: 400 - categoryID: does not exist`. They name the
 * method and the path (never the base URL's credentials, never a token or a secret).
 */
import { BridgeError, ErrorCode } from '../shared/errors.js';

export const WmsErrorCode = {
  HTTP: ErrorCode.WMS_HTTP,
  NETWORK: ErrorCode.WMS_NETWORK,
  TIMEOUT: ErrorCode.WMS_TIMEOUT,
  ENVELOPE: ErrorCode.WMS_ENVELOPE,
  AUTH: ErrorCode.WMS_AUTH,
  RATE_LIMIT: ErrorCode.WMS_RATE_LIMIT,
  VALIDATION: ErrorCode.WMS_VALIDATION,
  RESPONSE: ErrorCode.WMS_RESPONSE,
  PAGING: ErrorCode.WMS_PAGING,
} as const;
export type WmsErrorCode = (typeof WmsErrorCode)[keyof typeof WmsErrorCode];

export interface WmsErrorInit {
  method: string;
  path: string;
  httpStatus?: number;
  envelopeCode?: number;
  envelopeMessage?: string;
  envelopeError?: string;
  /** attempts made (0 when the request was refused before sending, e.g. a local schema failure) */
  attempts?: number;
  mayHaveReachedServer?: boolean;
  /** Retry-After of a 429/503 answer, in ms (already parsed) */
  retryAfterMs?: number;
  /** low-level error code of a network failure (ECONNREFUSED, UND_ERR_SOCKET, ...) */
  networkCode?: string;
  /** the id a refusal names in its envelope data (`data.id`, e.g. the existing record of a 409 conflict) */
  answerId?: string;
  cause?: unknown;
  details?: Record<string, unknown>;
}

export class WmsError extends BridgeError {
  readonly method: string;
  readonly path: string;
  readonly httpStatus: number | undefined;
  readonly envelopeCode: number | undefined;
  readonly envelopeMessage: string | undefined;
  readonly envelopeError: string | undefined;
  attempts: number;
  readonly mayHaveReachedServer: boolean;
  readonly retryAfterMs: number | undefined;
  readonly networkCode: string | undefined;
  readonly answerId: string | undefined;

  constructor(code: WmsErrorCode, message: string, init: WmsErrorInit) {
    super(code, message, {
      cause: init.cause,
      details: {
        method: init.method,
        path: init.path,
        ...(init.httpStatus !== undefined ? { httpStatus: init.httpStatus } : {}),
        ...(init.envelopeCode !== undefined ? { envelopeCode: init.envelopeCode } : {}),
        ...(init.envelopeError ? { envelopeError: init.envelopeError } : {}),
        ...(init.networkCode ? { networkCode: init.networkCode } : {}),
        ...(init.details ?? {}),
      },
    });
    this.name = 'WmsError';
    this.method = init.method;
    this.path = init.path;
    this.httpStatus = init.httpStatus;
    this.envelopeCode = init.envelopeCode;
    this.envelopeMessage = init.envelopeMessage;
    this.envelopeError = init.envelopeError;
    this.attempts = init.attempts ?? 1;
    this.mayHaveReachedServer = init.mayHaveReachedServer ?? false;
    this.retryAfterMs = init.retryAfterMs;
    this.answerId = init.answerId;
    this.networkCode = init.networkCode;
  }

  /** A plain object for logs and result files (no cause chain, no secrets). */
  toJSON(): Record<string, unknown> {
    return {
      name: this.name,
      code: this.code,
      message: this.message,
      method: this.method,
      path: this.path,
      httpStatus: this.httpStatus,
      envelopeCode: this.envelopeCode,
      envelopeMessage: this.envelopeMessage,
      envelopeError: this.envelopeError,
      attempts: this.attempts,
      mayHaveReachedServer: this.mayHaveReachedServer,
      networkCode: this.networkCode,
    };
  }
}

export function isWmsError(err: unknown): err is WmsError {
  return err instanceof WmsError;
}

/** `[METHOD] /path: <what>` */
export function formatWmsMessage(method: string, path: string, what: string): string {
  return `[${method}] ${path}: ${what}`;
}

/**
 * The code for an answer that is not a success: HTTP status first, then the envelope code when the
 * HTTP status is 2xx (a failure reported only in the envelope).
 */
export function codeForStatus(httpStatus: number, envelopeCode: number | undefined): WmsErrorCode {
  const effective = httpStatus >= 200 && httpStatus < 300 ? (envelopeCode ?? httpStatus) : httpStatus;
  if (effective === 400 || effective === 422) return WmsErrorCode.VALIDATION;
  if (effective === 401 || effective === 403) return WmsErrorCode.AUTH;
  if (effective === 429) return WmsErrorCode.RATE_LIMIT;
  if (httpStatus >= 200 && httpStatus < 300) return WmsErrorCode.ENVELOPE;
  return WmsErrorCode.HTTP;
}
