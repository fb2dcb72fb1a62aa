/**
 * undici's Pool, required by its own path: undici's main entry loads fetch, WebSocket, the cache and the mock agent
 * too (~105 ms at every start of the CLI on this machine); the pool alone loads in ~36 ms. undici has no "exports"
 * map, so the path is public in practice; the version is pinned by the lockfile (test/unit/wms-*.test.ts would fail on
 * a move).
 */
declare module 'undici/lib/dispatcher/pool.js' {
  import type { Pool } from 'undici';
  const PoolClass: typeof Pool;
  export default PoolClass;
}

/** undici's connector, by its own path for the same reason (transport.ts wraps it: a new socket's first write waits for the check phase). */
declare module 'undici/lib/core/connect.js' {
  import type { buildConnector as BuildConnector } from 'undici';
  const buildConnector: typeof BuildConnector;
  export default buildConnector;
}
