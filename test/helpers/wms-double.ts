/**
 * A WMS client double for the pusher's tests: the methods a case scripts, with the client's statistics; any other
 * method throws naming itself (a test that reaches it is wrong), and the double is not a thenable.
 */
import type { WmsClient } from '../../src/wms/client-types.js';

export function wmsClientDouble(impl: Partial<WmsClient>, requests: () => number, label = 'the scripted client'): WmsClient {
  const withStats: Partial<WmsClient> = {
    stats: () => ({ requests: requests(), retries: 0, refreshes: 0, authorizations: 0, failures: 0, latencyBucketsMs: [], latencyCounts: [], latencySumMs: 0 }),
    ...impl,
  };
  return new Proxy(withStats, {
    get(target, prop) {
      if (prop in target) return target[prop as keyof WmsClient];
      if (prop === 'then' || prop === 'availability') return undefined;
      return () => {
        throw new Error(`${label} has no ${String(prop)}`);
      };
    },
  }) as WmsClient;
}
