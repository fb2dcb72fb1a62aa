/**
 * Webhook receiver benchmark: bounded load on loopback against an in-process receiver with a temp
 * SQLite journal. The 32 senders run in a child process of their own (`--senders`), as the WMS does: the
 * receiver's event loop does not also run their HTTP client. They still share the machine's cores, so the
 * figures are a floor. `in-process durable` repeats the durable run with the senders on the receiver's own
 * event loop (how this bench measured before issue 19: the load generator's CPU was charged to the receiver).
 *
 * Two runs: `durable` with the journal's default synchronous=FULL (every answered event is fsynced:
 * what production gets; the disk's fsync rate bounds it), and `normal` with synchronous=NORMAL (the
 * receiver's own overhead: HTTP, verification, dedup, SQLite without the per-commit fsync).
 * Figures per run: webhooks/s answered, p50/p99 answer latency, duplicates answered/s (resends hit
 * the dedup path), and the outbox flush rate (events/s written to JSONL + CSV).
 * Run alone: `npm run build && node dist/bench/webhook.js` (or `node --import tsx bench/webhook.ts`).
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { Pool } from 'undici';
import { createSqliteJournal } from '../src/journal/sqlite.js';
import { createPostgresJournal } from '../src/journal/postgres.js';
import type { Journal } from '../src/journal/types.js';
import { silentLogger } from '../src/shared/logger.js';
import { createWebhookReceiver } from '../src/webhook/receiver.js';
import { WEBHOOK_KINDS } from '../src/webhook/kinds.js';
import { benchModuleCommand, isMainModule, round, runJsonChild, type BenchResult } from './lib.js';

export interface BenchWebhooksOptions {
  /** distinct events sent in the synchronous=NORMAL run. @default 20000 */
  events?: number;
  /** distinct events sent in the synchronous=FULL run (bounded by the disk's fsync rate). @default 4000 */
  durableEvents?: number;
  /** requests in flight. @default 32 */
  concurrency?: number;
  /** resends of already-stored events sent after the first pass. @default 2000 */
  duplicates?: number;
  /** stop issuing new requests past this (the figures then cover what was sent). @default 90000 */
  maxDurationMs?: number;
}

const PG_URL = process.env['WMSBRIDGE_TEST_PG_URL'] ?? 'postgres://postgres@127.0.0.1:5432/test';

async function pgAdmin(sql: string): Promise<void> {
  const c = new pg.Client({ connectionString: PG_URL });
  await c.connect();
  try {
    await c.query(sql);
  } finally {
    await c.end();
  }
}

/** whether the PostgreSQL run can run (the server of the tests and of bench/cluster.ts) */
async function postgresReachable(): Promise<boolean> {
  try {
    await pgAdmin('SELECT 1');
    return true;
  } catch {
    return false;
  }
}

function percentile(sorted: number[], p: number): number {
  if (sorted.length === 0) return 0;
  const i = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return sorted[i] ?? 0;
}

function payload(i: number): { kind: string; id: string; body: string } {
  const kind = WEBHOOK_KINDS[i % WEBHOOK_KINDS.length]!;
  const id = `bench-${i}`;
  const body = JSON.stringify({
    eventId: id,
    kind,
    occurredAt: new Date(1_790_000_000_000 + i * 1000).toISOString(),
    data: {
      pickingListId: `00000000-0000-4000-8000-${String(i).padStart(12, '0')}`,
      order: `PED-${i}`,
      pickingStatus: '4',
      items: [
        { id: `it-${i}-1`, productID: 'p-1', quantity: 3, separateQuantity: 3 },
        { id: `it-${i}-2`, productID: 'p-2', quantity: 1.5, separateQuantity: 1.5 },
      ],
    },
  });
  return { kind, id, body };
}

interface RunOptions {
  events: number;
  concurrency: number;
  duplicates: number;
  maxDurationMs: number;
  synchronous: 'FULL' | 'NORMAL';
  /** the journal: a temp SQLite file, or a fresh schema on PG_URL (synchronous_commit as the server says). @default 'sqlite' */
  store?: 'sqlite' | 'postgres';
  /** where the senders run. @default 'process' */
  senders?: 'process' | 'in-process';
}

/** What the senders report: per pass, requests sent and the time taken; first-pass answer latencies. */
interface SendersResult {
  /** the warm-up: one event per connection, all at once, on new connections to a receiver that answered nothing yet */
  warm: { sent: number; maxMs: number };
  first: { sent: number; ms: number };
  dup: { sent: number; ms: number };
  /** first pass, sorted ascending (ms) */
  latencies: number[];
  errors: number;
}

/**
 * The senders: `concurrency` loops on one undici Pool. A warm-up of one distinct event per connection, all at once
 * (the pool opens its connections, the receiver answers its first events: measured apart, as the cold start), then a
 * first pass of `events` distinct events (latency of each answer recorded: the steady state), then `duplicates`
 * resends of the first ones (the dedup path). Without the warm-up the 32 first answers, 0.8 % of a 4,000-event pass,
 * took most of its p99 (23-60 ms against 10-20 for the rest, 2026-11-27).
 */
async function runSenders(url: string, events: number, concurrency: number, duplicates: number, deadline: number): Promise<SendersResult> {
  const pool = new Pool(url, { connections: concurrency, pipelining: 1 });
  try {
    const latencies: number[] = [];
    let errors = 0;
    async function pass(count: number, record: boolean, from = 0): Promise<{ sent: number; ms: number }> {
      let next = 0;
      const started = performance.now();
      async function worker(): Promise<void> {
        while (next < count && Date.now() < deadline) {
          const { kind, id, body } = payload(from + next++);
          const t0 = performance.now();
          const res = await pool.request({
            method: 'POST',
            path: `/webhooks/${kind}`,
            headers: { 'content-type': 'application/json', 'x-wms-event-id': id },
            body,
          });
          await res.body.dump();
          if (res.statusCode !== 200) errors++;
          if (record) latencies.push(performance.now() - t0);
        }
      }
      await Promise.all(Array.from({ length: concurrency }, () => worker()));
      return { sent: Math.min(next, count), ms: performance.now() - started };
    }
    // the warm-up's events come after every event of the passes (distinct ids: each is stored once)
    const warm = await pass(concurrency, true, events);
    const warmMaxMs = Math.max(0, ...latencies);
    latencies.length = 0;
    const first = await pass(events, true);
    const dup = await pass(Math.min(duplicates, first.sent), false);
    latencies.sort((a, b) => a - b);
    return { warm: { sent: warm.sent, maxMs: warmMaxMs }, first, dup, latencies, errors };
  } finally {
    await pool.close();
  }
}

async function runOnce(o: RunOptions): Promise<{ figures: Record<string, number | string>; stopped: boolean }> {
  const { events, concurrency, duplicates, maxDurationMs } = o;
  const dir = await mkdtemp(join(tmpdir(), 'wmsbridge-bench-webhook-'));
  const schema = `wmsbridge_bench_webhook_${process.pid}`;
  const journal: Journal =
    o.store === 'postgres'
      ? await createPostgresJournal({ url: PG_URL, schema })
      : await createSqliteJournal({ path: join(dir, 'journal.db'), synchronous: o.synchronous });
  const receiver = await createWebhookReceiver({ port: 0, outboxDir: join(dir, 'outbox'), flushIntervalMs: 0 }, { journal, logger: silentLogger() });
  const cpu0 = process.cpuUsage();
  try {
    const deadline = Date.now() + maxDurationMs;
    let sent: SendersResult;
    if (o.senders === 'in-process') sent = await runSenders(receiver.url, events, concurrency, duplicates, deadline);
    else {
      const { cmd, args } = benchModuleCommand('webhook');
      sent = await runJsonChild<SendersResult>(cmd, [
        ...args,
        '--senders',
        receiver.url,
        String(events),
        String(concurrency),
        String(duplicates),
        String(deadline),
      ]);
    }
    // the receiver process's CPU (every thread: event loop, journal writer) per event answered, both passes
    const cpu = process.cpuUsage(cpu0);
    const { warm, first, dup, latencies, errors } = sent;
    const stored = (await journal.listWebhookEvents({ undeliveredOnly: true })).length;
    // group commit: how many events (both passes) shared one commit, and what a commit took
    const commits = journal.writeStats();

    const f0 = performance.now();
    const flushed = await receiver.flush();
    const flushMs = performance.now() - f0;

    return {
      stopped: first.sent < events,
      figures: {
        events: first.sent,
        'webhooks/s': round(first.sent / (first.ms / 1000), 0),
        'p50 ms': round(percentile(latencies, 50), 2),
        'p99 ms': round(percentile(latencies, 99), 2),
        'max ms': round(latencies.at(-1) ?? 0, 2),
        'duplicates/s': dup.sent > 0 ? round(dup.sent / (dup.ms / 1000), 0) : 0,
        'first answers max ms (cold start)': round(warm.maxMs, 2),
        'stored once': stored === first.sent + warm.sent ? 'yes' : `no (${stored} stored for ${first.sent + warm.sent})`,
        'non-200 answers': errors,
        'events per commit': round(commits.writes / Math.max(1, commits.transactions ?? commits.batches), 1),
        'commit mean ms': commits.commit.count > 0 ? round(commits.commit.sumMs / commits.commit.count, 2) : 0,
        'receiver CPU us/event': round((cpu.user + cpu.system) / Math.max(1, warm.sent + first.sent + dup.sent), 0),
        'flush events/s': flushMs > 0 ? round(flushed / (flushMs / 1000), 0) : 0,
      },
    };
  } finally {
    await receiver.close();
    await journal.close();
    await rm(dir, { recursive: true, force: true });
    if (o.store === 'postgres') await pgAdmin(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
  }
}

export async function benchWebhooks(options: BenchWebhooksOptions = {}): Promise<BenchResult> {
  const concurrency = options.concurrency ?? 32;
  const duplicates = options.duplicates ?? 2_000;
  const maxDurationMs = options.maxDurationMs ?? 60_000;
  // the machine's load when the bench started: on a shared machine the figures below depend on it
  const load = loadavg()[0] ?? 0;
  const durable = await runOnce({ events: options.durableEvents ?? 4_000, concurrency, duplicates, maxDurationMs, synchronous: 'FULL' });
  const normal = await runOnce({ events: options.events ?? 20_000, concurrency, duplicates, maxDurationMs, synchronous: 'NORMAL' });
  const inProcess = await runOnce({
    events: options.durableEvents ?? 4_000,
    concurrency,
    duplicates,
    maxDurationMs,
    synchronous: 'FULL',
    senders: 'in-process',
  });
  const postgres = (await postgresReachable())
    ? await runOnce({ events: options.durableEvents ?? 4_000, concurrency, duplicates, maxDurationMs, synchronous: 'FULL', store: 'postgres' })
    : undefined;
  const figures: Record<string, number | string> = { concurrency, 'load average (1 min) at start': round(load, 1) };
  for (const [prefix, run] of [
    ['durable', durable],
    ['normal', normal],
    ['in-process durable', inProcess],
    ['postgres', postgres],
  ] as const) {
    for (const [k, v] of Object.entries(run?.figures ?? {})) figures[`${prefix} ${k}`] = v;
  }
  // the bench process: the receiver, its journal and (for the in-process run) the senders
  figures['peak RSS MB'] = round(process.resourceUsage().maxRSS / 1024, 1);
  const stopped = [
    durable.stopped ? 'durable' : '',
    normal.stopped ? 'normal' : '',
    inProcess.stopped ? 'in-process durable' : '',
    postgres?.stopped ? 'postgres' : '',
  ].filter(Boolean);
  return {
    name: 'webhooks',
    figures,
    notes:
      (load > cpus().length
        ? `**Measured on a busy machine** (load average ${round(load, 1)} on ${cpus().length} cores when it started): every rate is low and every ` +
          "latency high for that reason alone; compare the runs of this table with each other, not with a quiet machine's figures. "
        : '') +
      'receiver on 127.0.0.1 in the bench process; 32 senders (one undici Pool) in a child process on the same cores, as the WMS ' +
      'would be; answer latency as the senders see it, after a warm-up of one event per connection (its slowest answer is ' +
      '`first answers max ms (cold start)`: new connections to a receiver that has answered nothing yet). durable = journal synchronous=FULL (the default: ' +
      "concurrent events share one commit and fsync, on the journal's writer thread); normal = synchronous=NORMAL (receiver overhead without the fsync). " +
      "in-process durable = the durable run with the senders on the receiver's own event loop (how this bench measured before " +
      'issue 19). ' +
      (postgres
        ? 'postgres = the durable run on a PostgreSQL journal (local server, synchronous_commit as configured; one INSERT per event). '
        : 'postgres = not run (no server at WMSBRIDGE_TEST_PG_URL). ') +
      "events per commit = events stored / journal transactions. receiver CPU us/event = the bench process's CPU (all threads) per request answered, senders excluded except in-process. " +
      `${stopped.length ? `${stopped.join(', ')} run stopped at ${maxDurationMs} ms; ` : ''}flush = JSONL + CSV per kind, atomic.`,
  };
}

if (isMainModule(import.meta.url) && process.argv[2] === '--senders') {
  const [, , , url, events, concurrency, duplicates, deadline] = process.argv;
  runSenders(url!, Number(events), Number(concurrency), Number(duplicates), Number(deadline)).then(
    (r) => process.stdout.write(`${JSON.stringify(r)}\n`),
    (err: unknown) => {
      process.stderr.write(`webhook senders failed: ${String((err as Error).stack ?? err)}\n`);
      process.exitCode = 1;
    },
  );
} else if (isMainModule(import.meta.url)) {
  const events = Number(process.env['BENCH_WEBHOOK_EVENTS'] ?? 20_000);
  const durableEvents = Number(process.env['BENCH_WEBHOOK_DURABLE_EVENTS'] ?? 4_000);
  benchWebhooks({ events, durableEvents }).then(
    (r) => process.stdout.write(`${JSON.stringify(r, null, 2)}\n`),
    (err: unknown) => {
      process.stderr.write(`bench webhooks failed: ${String(err)}\n`);
      process.exitCode = 1;
    },
  );
}
