/**
 * Client benchmark: GET reads per second at concurrency 32 against the sandbox run as a CHILD process
 * (so process.cpuUsage measures the client alone), at 0 ms and at 20 ms added latency, plus the ratio
 * to the Little's-law bound (32 in flight / 0.020 s = 1600 req/s) and client CPU time per request.
 *
 * Runnable alone: `node dist/bench/client.js` (or `node --import tsx bench/client.ts`).
 */
import { startSandboxChild, stopChild, type BenchResult } from './lib.js';
import { fileURLToPath } from 'node:url';
import { loadavg } from 'node:os';
import { request } from 'undici';
import { createWmsClient } from '../src/wms/client.js';
import type { WmsClient } from '../src/wms/client-types.js';

const CONCURRENCY = 32;
const LATENCY_MS = 20;

async function setLatency(url: string, latencyMs: number): Promise<void> {
  const res = await request(`${url}/__sandbox/faults`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'user-agent': 'wmsbridge-bench' },
    body: JSON.stringify({ latencyMs }),
  });
  await res.body.dump();
  if (res.statusCode !== 200) throw new Error(`POST /__sandbox/faults answered ${res.statusCode}`);
}

interface RunFigures {
  requests: number;
  seconds: number;
  rps: number;
  cpuUsPerRequest: number;
  meanLatencyMs: number;
  failures: number;
}

/** `CONCURRENCY` workers issuing GET reads back to back for `seconds`. */
async function drive(client: WmsClient, ids: string[], seconds: number): Promise<RunFigures> {
  // warm-up: fill the pool's connections
  await Promise.all(Array.from({ length: CONCURRENCY * 2 }, (_, i) => client.getMaterialStatus(ids[i % ids.length]!)));
  const statsBefore = client.stats();
  const cpu0 = process.cpuUsage();
  const t0 = performance.now();
  const deadline = t0 + seconds * 1000;
  let requests = 0;
  let failures = 0;
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async (_, w) => {
      let i = w;
      while (performance.now() < deadline) {
        try {
          await client.getMaterialStatus(ids[i++ % ids.length]!);
          requests++;
        } catch {
          failures++;
        }
      }
    }),
  );
  const elapsed = (performance.now() - t0) / 1000;
  const cpu = process.cpuUsage(cpu0);
  const statsAfter = client.stats();
  const sent = statsAfter.requests - statsBefore.requests;
  return {
    requests,
    seconds: round(elapsed, 2),
    rps: round(requests / elapsed, 0),
    cpuUsPerRequest: round((cpu.user + cpu.system) / Math.max(1, sent), 1),
    meanLatencyMs: round((statsAfter.latencySumMs - statsBefore.latencySumMs) / Math.max(1, sent), 2),
    failures,
  };
}

function round(n: number, digits: number): number {
  const f = 10 ** digits;
  return Math.round(n * f) / f;
}

export async function benchClient(options: { seconds?: number } = {}): Promise<BenchResult> {
  const seconds = options.seconds ?? 5;
  const sb = await startSandboxChild();
  const client = createWmsClient({
    baseUrl: sb.url,
    accessKeyID: sb.accessKeyID,
    secretKey: sb.secretKey,
    concurrency: CONCURRENCY,
    userAgent: 'wmsbridge-bench',
  });
  try {
    const ids: string[] = [];
    for await (const s of client.listMaterialStatuses()) ids.push(s.id);
    if (ids.length === 0) throw new Error('the sandbox has no material statuses to read');

    const fast = await drive(client, ids, seconds);
    await setLatency(sb.url, LATENCY_MS);
    const slow = await drive(client, ids, seconds);
    const bound = CONCURRENCY / (LATENCY_MS / 1000);
    const ratio = round(slow.rps / bound, 3);
    return {
      name: 'client',
      figures: {
        concurrency: CONCURRENCY,
        rps_0ms: fast.rps,
        cpu_us_per_request_0ms: fast.cpuUsPerRequest,
        requests_0ms: fast.requests,
        mean_latency_ms_0ms: fast.meanLatencyMs,
        rps_20ms: slow.rps,
        littles_law_bound_20ms: bound,
        ratio_to_bound_20ms: ratio,
        target_ratio: 0.95,
        meets_target: ratio >= 0.95 ? 'yes' : 'no',
        cpu_us_per_request_20ms: slow.cpuUsPerRequest,
        requests_20ms: slow.requests,
        mean_latency_ms_20ms: slow.meanLatencyMs,
        load_average_1m: round(loadavg()[0] ?? 0, 2),
        failures: fast.failures + slow.failures,
      },
      notes:
        'GET /open/v1/MaterialStatus/{id} through the full client (auth, limits, envelope and zod record check), ' +
        `${CONCURRENCY} workers, ~${seconds} s per run, sandbox as a child process (CPU figures are the client's own). ` +
        'The 20 ms bound is concurrency / latency; the sandbox timer itself adds ~1 ms per request on top, ' +
        'and mean_latency_ms_20ms shows the latency the client actually saw (rps ~= 32 / mean latency). ' +
        'Figures from a loaded machine (see load_average_1m) measure the machine, not the client.',
    };
  } finally {
    await client.close();
    await stopChild(sb.child);
  }
}

const invokedDirectly = process.argv[1] !== undefined && fileURLToPath(import.meta.url) === process.argv[1];
if (invokedDirectly) {
  benchClient()
    .then((r) => {
      process.stdout.write(`${JSON.stringify(r, null, 2)}\n`);
    })
    .catch((err: unknown) => {
      process.stderr.write(`bench client failed: ${String(err)}\n`);
      process.exitCode = 1;
    });
}
