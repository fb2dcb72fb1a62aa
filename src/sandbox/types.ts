/**
 * The sandbox's public types: its options, fault knobs and handle (index.ts re-exports them; server.ts
 * implements them without importing index.ts).
 */
import type { Logger } from '../shared/logger.js';
import type { SandboxState } from './state.js';
import type { DialectSpec, SandboxDialect } from './dialect.js';

export interface SandboxOptions {
  /** TCP port. @default 0 (a free port) */
  port?: number;
  /** Interface to bind. @default '127.0.0.1' */
  host?: string;
  /** Seed of the deterministic seed data, ids, credentials and fault RNG. @default 1 */
  seed?: number | string;
  /** Access token lifetime in seconds. @default 900 */
  tokenTtlSeconds?: number;
  /** Latency added to every API request (not /__sandbox). @default 0 */
  latencyMs?: number;
  /**
   * Up to this much more latency, drawn per request: concurrent requests are then applied in another order
   * than they arrived (a WMS with several workers), which shows whether a client keeps order itself. @default 0
   */
  latencyJitterMs?: number;
  /** Fraction of API requests answered HTTP 500 (envelope code 500), without state change. @default 0 */
  failRate?: number;
  /** Fraction of API requests answered HTTP 429 with Retry-After: 1, without state change. @default 0 */
  rate429?: number;
  /** the Retry-After of an injected 429, in seconds (default 1) */
  retryAfterSeconds?: number;
  /** Fraction of API requests whose connection is destroyed without an answer. @default 0 */
  resetRate?: number;
  /**
   * Fraction of changing API requests applied, then their connection destroyed without an answer (the client
   * cannot tell whether the request took effect); a read is reset without an answer. @default 0
   */
  resetAfterRate?: number;
  /** JSON file holding the state: loaded at start, saved atomically (debounced) on change and on close. */
  stateFile?: string;
  /** @default derived from the seed */
  accessKeyID?: string;
  /** @default derived from the seed */
  secretKey?: string;
  /** Base URL of the webhook receiver; webhooks go to <webhookUrl>/webhooks/<kind>. */
  webhookUrl?: string;
  /** Delays between webhook resends (at most 3 resends). @default [1000, 5000, 15000] */
  webhookRetryDelaysMs?: number[];
  /** Largest PagingLimit honoured (larger values are clamped). @default 500 */
  maxPageSize?: number;
  /** Synthetic stock records derived from their index (memory-light; for the pull benchmark). @default 0 */
  stockRecords?: number;
  /**
   * The choices this sandbox makes where the interface leaves them open: a preset name (`default`,
   * `alt`), a `preset,k=v,...` list or an object (dialect.ts, docs/SANDBOX.md "Dialects"). @default 'default'
   */
  dialect?: DialectSpec;
  logger?: Logger;
  /** the time token expiry reads (epoch ms): a test advances its own clock instead of waiting for a token to expire @default Date.now */
  now?: () => number;
}

export type SandboxFaults = Partial<
  Pick<SandboxOptions, 'latencyMs' | 'latencyJitterMs' | 'failRate' | 'rate429' | 'retryAfterSeconds' | 'resetRate' | 'resetAfterRate' | 'tokenTtlSeconds'>
>;

export interface Sandbox {
  url: string;
  accessKeyID: string;
  secretKey: string;
  /** The live state (direct access for tests: read-only use). Replaced by reset(). */
  readonly state: SandboxState;
  /** the dialect this sandbox speaks */
  readonly dialect: SandboxDialect;
  setFaults(f: SandboxFaults): void;
  /** Sets the number of synthetic stock records (derived from their index, not stored). */
  seedStock(n: number): void;
  /** Back to the seed data (credentials and issued tokens are kept). */
  reset(): void;
  close(): Promise<void>;
}
