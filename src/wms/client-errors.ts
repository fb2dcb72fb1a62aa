/**
 * What the client makes of an answer or a failure: the envelope check, and the WmsError of a network
 * failure, of a refused answer and of a token that could not be obtained. Pure: `scrub` removes the
 * secrets (the client's secret key, tokens) from every text that leaves the client.
 */
import { WmsError, WmsErrorCode, codeForStatus, formatWmsMessage, type WmsErrorCode as WmsErrorCodeT } from './errors.js';
import { parseRetryAfter } from './retry.js';
import type { AttemptFailure, RawResponse } from './transport.js';

export type Scrub = (text: string) => string;

/** A successful answer's envelope. */
export type Envelope = Record<string, unknown> & { code: number };

export function isPlainObject(v: unknown): v is Record<string, unknown> {
  return v !== null && typeof v === 'object' && !Array.isArray(v);
}

export function parseBody(res: RawResponse): Record<string, unknown> | undefined {
  if (res.body.length === 0) return undefined;
  try {
    const v = JSON.parse(res.body.toString('utf8')) as unknown;
    return isPlainObject(v) ? v : undefined;
  } catch {
    return undefined;
  }
}

export function isSuccess(res: RawResponse, env: Record<string, unknown> | undefined): env is Envelope {
  return (
    res.status >= 200 &&
    res.status < 300 &&
    env !== undefined &&
    env['code'] === 200 &&
    (env['error'] === undefined || env['error'] === null || env['error'] === '')
  );
}

export function isUnauthorized(res: RawResponse, env: Record<string, unknown> | undefined): boolean {
  return res.status === 401 || (res.status >= 200 && res.status < 300 && env?.['code'] === 401);
}

function sanitizeCause(err: Error, scrub: Scrub): Error {
  const e = new Error(scrub(err.message));
  e.name = err.name;
  (e as { code?: unknown }).code = (err as { code?: unknown }).code;
  return e;
}

/** The error of an attempt that got no answer (timeout, reset, refused connection, answer too large). */
export function networkError(scrub: Scrub, method: string, path: string, f: AttemptFailure, attempts: number, idempotent: boolean): WmsError {
  const cause = f.failure as { code?: string; message?: string } | undefined;
  const netCode = f.aborted ? 'ABORTED' : (cause?.code ?? 'UNKNOWN');
  if (netCode === 'WMS_RESPONSE_TOO_LARGE') {
    return new WmsError(WmsErrorCode.RESPONSE, formatWmsMessage(method, path, cause?.message ?? 'answer too large'), {
      method,
      path,
      attempts,
      mayHaveReachedServer: true,
      networkCode: netCode,
    });
  }
  const timeout = f.timedOut || netCode === 'UND_ERR_HEADERS_TIMEOUT' || netCode === 'UND_ERR_BODY_TIMEOUT';
  const code = timeout ? WmsErrorCode.TIMEOUT : WmsErrorCode.NETWORK;
  const what = timeout ? `timeout (${scrub(cause?.message ?? 'no answer')})` : `network error ${netCode} (${scrub(cause?.message ?? 'no message')})`;
  const inDoubt = f.sent && !idempotent ? '; the request was sent completely: in doubt' : '';
  return new WmsError(code, formatWmsMessage(method, path, what + inDoubt), {
    method,
    path,
    attempts,
    mayHaveReachedServer: f.sent,
    networkCode: netCode,
    // the undici error is kept as cause: it holds no headers, tokens or bodies
    cause: f.failure instanceof Error ? sanitizeCause(f.failure, scrub) : undefined,
  });
}

/** The error of an answer that is not a success (HTTP status, envelope code, or not an envelope at all). */
export function answerError(
  scrub: Scrub,
  method: string,
  path: string,
  res: RawResponse,
  envelope: Record<string, unknown> | undefined,
  attempts: number,
  idempotent: boolean,
  /** now (epoch ms), for a Retry-After given as an HTTP date */
  nowMs: number = Date.now(),
): WmsError {
  const envelopeCode = typeof envelope?.['code'] === 'number' ? (envelope['code'] as number) : undefined;
  const envelopeMessage = typeof envelope?.['message'] === 'string' ? scrub(envelope['message'] as string) : undefined;
  const envelopeError = typeof envelope?.['error'] === 'string' ? scrub(envelope['error'] as string) : undefined;
  let code: WmsErrorCodeT = codeForStatus(res.status, envelopeCode);
  const is2xx = res.status >= 200 && res.status < 300;
  if (is2xx && envelope === undefined) code = WmsErrorCode.RESPONSE;
  let text = envelopeError || envelopeMessage;
  if (!text) {
    const snippet = res.body.subarray(0, 200).toString('utf8').replace(/\s+/g, ' ').trim();
    text = envelope === undefined ? (snippet ? `non-JSON answer: ${scrub(snippet)}` : 'empty answer') : 'no error text';
  }
  const statusText =
    is2xx && envelopeCode !== undefined
      ? `${envelopeCode} (HTTP ${res.status})`
      : envelopeCode !== undefined && envelopeCode !== res.status
        ? `${res.status} (envelope ${envelopeCode})`
        : `${res.status}`;
  const retryAfterMs = parseRetryAfter(res.headers['retry-after'], nowMs);
  // a gateway timeout / bad gateway to a non-idempotent call: the upstream may have applied it
  const inDoubt = !idempotent && (res.status === 502 || res.status === 504);
  // a refusal that names a record (a 409 conflict's existing record): its id, for the caller
  const data = envelope?.['data'];
  const answerId = isPlainObject(data) && typeof data['id'] === 'string' ? data['id'] : undefined;
  return new WmsError(code, formatWmsMessage(method, path, `${statusText} - ${text}`), {
    ...(answerId !== undefined ? { answerId } : {}),
    method,
    path,
    httpStatus: res.status,
    ...(envelopeCode !== undefined ? { envelopeCode } : {}),
    ...(envelopeMessage !== undefined ? { envelopeMessage } : {}),
    ...(envelopeError !== undefined ? { envelopeError } : {}),
    ...(retryAfterMs !== undefined ? { retryAfterMs } : {}),
    attempts,
    mayHaveReachedServer: inDoubt,
  });
}

/** The error of a call whose token could not be obtained. */
export function authFailure(scrub: Scrub, err: unknown, method: string, path: string): WmsError {
  if (err instanceof WmsError) {
    if (err.code === WmsErrorCode.AUTH) return err;
    // the token could not be obtained: keep the underlying kind (network, timeout, ...) but say why
    return new WmsError(err.code as WmsErrorCodeT, formatWmsMessage(method, path, `could not obtain a token: ${err.message}`), {
      method,
      path,
      attempts: 0,
      ...(err.httpStatus !== undefined ? { httpStatus: err.httpStatus } : {}),
      ...(err.networkCode !== undefined ? { networkCode: err.networkCode } : {}),
      cause: err,
    });
  }
  return new WmsError(WmsErrorCode.AUTH, formatWmsMessage(method, path, `could not obtain a token: ${scrub(String((err as Error)?.message ?? err))}`), {
    method,
    path,
    attempts: 0,
  });
}

/** A call given up before it was sent (aborted, closed, circuit open, ...): E_WMS_NETWORK with that code. */
export function notSent(
  method: string,
  path: string,
  attempts: number,
  networkCode: string,
  what: string,
  extra: { mayHaveReachedServer?: boolean } = {},
): WmsError {
  return new WmsError(WmsErrorCode.NETWORK, formatWmsMessage(method, path, what), { method, path, attempts, networkCode, ...extra });
}
