/**
 * Starts a real sandbox WMS on 127.0.0.1, port 0, with a silent logger. Close it in `after()`.
 */
import { createSandbox, type Sandbox, type SandboxOptions } from '../../src/sandbox/index.js';
import { silentLogger } from '../../src/shared/logger.js';

export type { Sandbox, SandboxOptions };

export function startSandbox(opts: SandboxOptions = {}): Promise<Sandbox> {
  return createSandbox({ port: 0, host: '127.0.0.1', logger: silentLogger(), ...opts });
}

/** Headers every API call of a test needs (User-Agent is mandatory; Authorization when a token is given). */
export function apiHeaders(token?: string, extra: Record<string, string> = {}): Record<string, string> {
  const h: Record<string, string> = { 'user-agent': 'wmsbridge-test', accept: 'application/json', ...extra };
  if (token) h['authorization'] = `Bearer ${token}`;
  return h;
}

export interface CallResult {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  /** parsed JSON body (undefined when the body is empty or not JSON) */
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- any reply of the interface, asserted field by field
  json: any;
}

/** One raw HTTP call through undici `request` (sends a body on GET too, as Stock/search needs). */
export async function sandboxCall(
  sb: Pick<Sandbox, 'url'>,
  method: 'GET' | 'POST' | 'PUT' | 'DELETE',
  path: string,
  opts: { token?: string; body?: unknown; headers?: Record<string, string>; rawBody?: Buffer | string } = {},
): Promise<CallResult> {
  const { request } = await import('undici');
  const headers: Record<string, string> = { ...apiHeaders(opts.token), ...(opts.headers ?? {}) };
  let body: string | Buffer | undefined = opts.rawBody;
  if (opts.body !== undefined) {
    body = JSON.stringify(opts.body);
    headers['content-type'] ??= 'application/json';
  }
  const res = await request(`${sb.url}${path}`, { method, headers, body });
  const text = await res.body.text();
  let json: unknown;
  try {
    json = text ? JSON.parse(text) : undefined;
  } catch {
    json = undefined;
  }
  return { status: res.statusCode, headers: res.headers, json };
}

/** Authorizes with the sandbox's credentials; returns the token pair. */
export async function sandboxToken(sb: Pick<Sandbox, 'url' | 'accessKeyID' | 'secretKey'>): Promise<{ token: string; refreshToken: string }> {
  const r = await sandboxCall(sb, 'POST', '/open/v1/authorize', { body: { accessKeyID: sb.accessKeyID, secretKey: sb.secretKey } });
  if (r.status !== 200) throw new Error(`sandbox authorize failed: ${r.status} ${JSON.stringify(r.json)}`);
  return r.json.data;
}
