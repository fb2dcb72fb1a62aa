/**
 * The sandbox WMS: a faithful, strict local implementation of the WMS interface document with real
 * state, bound to 127.0.0.1 on node:http. It is the demo's WMS (other commands use it when asked) and what every test
 * talks to. Decisions where the spec says "not shown" are listed in docs/SANDBOX.md.
 */
import { startSandboxServer } from './server.js';

export { DIALECT_PRESETS, DIALECT_KNOBS, dialectMatrix, formatDialect, parseDialect, type SandboxDialect, type DialectSpec } from './dialect.js';

export type { SandboxState } from './state.js';

export type { Sandbox, SandboxFaults, SandboxOptions } from './types.js';
import type { Sandbox, SandboxOptions } from './types.js';

export function createSandbox(options: SandboxOptions = {}): Promise<Sandbox> {
  return startSandboxServer(options);
}
