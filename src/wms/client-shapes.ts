/**
 * The shapes of calls over the call policy: a request body checked against its Create schema before it is
 * sent, a record checked against its schema when it comes back, a read of one record (null on 404), a send
 * whose answer the spec shows and one whose answer it does not.
 */
import type { z } from 'zod';
import type { CallOptions } from './client-types.js';
import { isPlainObject, type Envelope } from './client-errors.js';
import { formatZodIssues } from '../shared/zod-issues.js';
import type { CallPolicy, CallSpec } from './call-policy.js';
import { ENDPOINTS, buildPath, type EndpointName } from './endpoints.js';
import { WmsError, WmsErrorCode, formatWmsMessage } from './errors.js';

export interface Shapes {
  /** the body, checked against its schema unless validation is off (refused locally: E_WMS_VALIDATION) */
  requestBody<T extends z.ZodType>(name: EndpointName, schema: T, body: unknown, label: string): z.output<T>;
  responseError(name: EndpointName, params: Record<string, string> | undefined, label: string, what: string, details?: Record<string, unknown>): WmsError;
  /** `data` checked against the record schema (E_WMS_RESPONSE when it does not fit) */
  record<T extends z.ZodType>(name: EndpointName, params: Record<string, string> | undefined, schema: T, label: string, data: unknown): z.output<T>;
  /** a call with the caller's signal and idempotency */
  callWith(spec: CallSpec, opts: CallOptions | undefined): Promise<Envelope>;
  getOne<T extends z.ZodType>(name: EndpointName, params: Record<string, string>, schema: T, label: string, opts?: CallOptions): Promise<z.output<T> | null>;
  sendRequired<T extends z.ZodType>(name: EndpointName, json: unknown, schema: T, label: string, opts?: CallOptions): Promise<z.output<T>>;
  sendOptional<T extends z.ZodType>(name: EndpointName, json: unknown, schema: T, opts?: CallOptions): Promise<z.output<T> | null>;
  /** a changing call with no record in its answer */
  sendNothing(name: EndpointName, params: Record<string, string>, opts?: CallOptions): Promise<void>;
}

const isNotFound = (err: unknown): boolean =>
  err instanceof WmsError && (err.httpStatus === 404 || (err.httpStatus !== undefined && err.httpStatus < 300 && err.envelopeCode === 404));

function requestBody<T extends z.ZodType>(
  core: CallPolicy,
  validateRequests: boolean,
  name: EndpointName,
  schema: T,
  body: unknown,
  label: string,
): z.output<T> {
  if (!validateRequests) return body as z.output<T>;
  const parsed = schema.safeParse(body);
  if (parsed.success) return parsed.data;
  const ep = ENDPOINTS[name];
  core.counters.failures++;
  throw new WmsError(WmsErrorCode.VALIDATION, formatWmsMessage(ep.method, ep.path, `invalid ${label}, not sent - ${formatZodIssues(parsed.error)}`), {
    method: ep.method,
    path: ep.path,
    attempts: 0,
    details: { local: true, issues: parsed.error.issues.slice(0, 10).map((i) => ({ path: i.path.join('.'), message: i.message })) },
  });
}

function responseError(
  name: EndpointName,
  params: Record<string, string> | undefined,
  label: string,
  what: string,
  details?: Record<string, unknown>,
): WmsError {
  const ep = ENDPOINTS[name];
  const path = buildPath(ep.path, params);
  return new WmsError(WmsErrorCode.RESPONSE, formatWmsMessage(ep.method, path, `answer does not fit ${label} - ${what}`), {
    method: ep.method,
    path,
    httpStatus: 200,
    envelopeCode: 200,
    ...(details ? { details } : {}),
  });
}

function record<T extends z.ZodType>(
  core: CallPolicy,
  name: EndpointName,
  params: Record<string, string> | undefined,
  schema: T,
  label: string,
  data: unknown,
): z.output<T> {
  const parsed = schema.safeParse(data);
  if (parsed.success) return parsed.data;
  core.counters.failures++;
  throw responseError(name, params, label, formatZodIssues(parsed.error));
}

function callWith(core: CallPolicy, spec: CallSpec, opts: CallOptions | undefined): Promise<Envelope> {
  return core.call({
    ...spec,
    signal: opts?.signal,
    ...(opts?.idempotent !== undefined ? { idempotent: opts.idempotent } : {}),
    ...(opts?.write !== undefined ? { write: opts.write } : {}),
  });
}

/** A read of one record: null when the WMS answers 404 (or data is null). */
async function getOne<T extends z.ZodType>(
  core: CallPolicy,
  name: EndpointName,
  params: Record<string, string>,
  schema: T,
  label: string,
  opts?: CallOptions,
): Promise<z.output<T> | null> {
  let env: Envelope;
  try {
    env = await callWith(core, { name, params }, opts);
  } catch (err) {
    if (isNotFound(err)) {
      core.counters.failures--; // a 404 on a by-id/by-code read is an answer, not a failure
      return null;
    }
    throw err;
  }
  const data = env['data'];
  if (data === null || data === undefined) return null;
  // some servers wrap a single record in a one-element array
  const one = Array.isArray(data) ? (data.length === 0 ? null : data[0]) : data;
  if (one === null) return null;
  return record(core, name, params, schema, label, one);
}

/** A send whose answer the spec shows: the record is required. */
async function sendRequired<T extends z.ZodType>(
  core: CallPolicy,
  name: EndpointName,
  json: unknown,
  schema: T,
  label: string,
  opts?: CallOptions,
): Promise<z.output<T>> {
  const env = await callWith(core, { name, json }, opts);
  return record(core, name, undefined, schema, label, env['data']);
}

/** A send whose answer the spec does not show: the record if data holds one that fits, else null. */
async function sendOptional<T extends z.ZodType>(
  core: CallPolicy,
  name: EndpointName,
  json: unknown,
  schema: T,
  opts?: CallOptions,
): Promise<z.output<T> | null> {
  const env = await callWith(core, { name, json }, opts);
  const data = env['data'];
  if (!isPlainObject(data)) return null;
  const parsed = schema.safeParse(data);
  if (parsed.success) return parsed.data;
  core.log.debug({ op: name }, 'wms: answer data does not fit the record schema; returning null');
  return null;
}

export function createShapes(core: CallPolicy, validateRequests: boolean): Shapes {
  return {
    requestBody: (name, schema, body, label) => requestBody(core, validateRequests, name, schema, body, label),
    responseError,
    record: (name, params, schema, label, data) => record(core, name, params, schema, label, data),
    callWith: (spec, opts) => callWith(core, spec, opts),
    getOne: (name, params, schema, label, opts) => getOne(core, name, params, schema, label, opts),
    sendRequired: (name, json, schema, label, opts) => sendRequired(core, name, json, schema, label, opts),
    sendOptional: (name, json, schema, opts) => sendOptional(core, name, json, schema, opts),
    // a changing call with no record in its answer
    sendNothing: async (name, params, opts) => {
      await callWith(core, { name, params }, opts);
    },
  };
}
