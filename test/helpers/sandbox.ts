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
