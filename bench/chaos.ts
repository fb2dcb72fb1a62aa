/**
 * The chaos suite (`npm run chaos`): wmsbridge against a fresh sandbox under five kinds of trouble, each
 * followed by a comparison of what the sandbox holds with what the dropped files say.
 *
 *  a. kill -9 of `wmsbridge run` at random points across many cycles (a new slice of the drop each cycle),
 *     then a final uninterrupted run;
 *  b. sandbox faults: 500s, 429s, dropped connections, latency spikes and a 1 s token lifetime;
 *  c. the sandbox itself (a child with --state-file, fixed port) stopped and restarted while runs go on;
 *  d. a full outbox disk (a 64 KB tmpfs when mount works, else an outbox path whose writes fail);
 *  e. the inbox share disappearing (renamed away) and coming back under `wmsbridge watch` with polling;
 *  f. issue 41 "Done when" (`--scenario combined`, `--runs=N`, `--seed=N`): every fault at once and a kill -9 in
 *     each of 25 runs, then two clean runs; measured by the WMS: records once, requests inside a Retry-After
 *     window, records in doubt against the requests on the wire at each kill, requests outside the interface
 *     (docs/perf/chaos-combined.json and its section of docs/RELIABILITY.md).
 *
 * Counted per scenario: records expected, LOST (neither in the WMS nor listed as held: must be 0),
 * DUPLICATED (created more than once), HELD (documents listed for a person because a send may have reached
 * the WMS). Results go to docs/perf/chaos.json and a table in docs/RELIABILITY.md is written from them.
 * Loopback only, bounded (each scenario has a deadline), stops by itself.
 *
 * The functions are exported for test/e2e/chaos-fast.test.ts (a small subset run in CI).
 */
import { spawn, execFileSync, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, readdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir, cpus, totalmem, platform, release } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { request } from 'undici';
import Database from 'better-sqlite3';
import { cliCommand, PROJECT_ROOT } from './lib.js';
import { createSandbox, type Sandbox } from '../src/sandbox/index.js';
import type { WireEntry } from '../src/sandbox/wire-log.js';
import { silentLogger } from '../src/shared/logger.js';
import { cnpjCheckDigits } from '../src/map/checks.js';
import { categoryMapping, familyMapping, pickingListMapping, providerMapping } from '../test/helpers/fixtures.js';

// ------------------------------------------------------------------------------------------ types

export interface ChaosResult {
  scenario: string;
  cycles: number;
  records: number;
  lost: number;
  duplicated: number;
  /** duplicates of master data without a read-back (at-least-once: only from sends in flight at a crash) */
  duplicatedNoReadBack: number;
  held: number;
  /** records whose retries ran out (listed with their reason; they wait for `wmsbridge resolve --retry`) */
  failed: number;
  durationMs: number;
  notes: string;
  /** the first few lost / duplicated keys, for the report */
  details: string[];
  /** scenario e: what wmsbridge created where the vanished inbox folder was */
  recreated?: string[];
  /** scenario e: dropped files not archived after the end (left in work/ or the inbox) */
  stuck?: number;
}

export interface Scale {
  /** number of slices (one per kill cycle); each slice is one set of files */
  slices: number;
  categories: number;
  families: number;
  products: number;
  providers: number;
  orders: number;
  purchaseOrders: number;
}

export const BENCH_SCALE: Scale = { slices: 24, categories: 960, families: 240, products: 960, providers: 480, orders: 480, purchaseOrders: 240 };
export const TEST_SCALE: Scale = { slices: 5, categories: 100, families: 25, products: 50, providers: 50, orders: 40, purchaseOrders: 15 };
export const FAST_SCALE: Scale = { slices: 6, categories: 240, families: 60, products: 120, providers: 120, orders: 90, purchaseOrders: 30 };

/** What the files say: the natural keys the sandbox counts creations by. */
export interface Expected {
  Category: string[];
  Family: string[];
  Product: string[];
  Provider: string[];
  /** order numbers (sandbox key `${order}|${ownerID}`) */
  PickingList: string[];
  /** invoice numbers (sandbox key `${nf}|${providerID}`) */
  PurchaseOrder: string[];
}

export interface Workspace {
  dir: string;
  inbox: string;
  outbox: string;
  state: string;
  config: string;
  cleanup(): Promise<void>;
}

interface WmsTarget {
  url: string;
  accessKeyID: string;
  secretKey: string;
}

// ------------------------------------------------------------------------------------------ helpers

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/** deterministic pseudo-random numbers (a run must be repeatable) */
export function rng(seed: number): () => number {
  let x = seed >>> 0 || 1;
  return () => {
    x ^= x << 13;
    x >>>= 0;
    x ^= x >>> 17;
    x ^= x << 5;
    x >>>= 0;
    return x / 2 ** 32;
  };
}

function cnpj(i: number): string {
  const base = `${String(20_000_000 + i).padStart(8, '0')}0001`;
  return base + cnpjCheckDigits(base);
}

export function spawnWmsbridge(args: string[], env: Record<string, string>): ChildProcess {
  const { cmd, args: pre } = cliCommand();
  return spawn(cmd, [...pre, ...args], {
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, WMSBRIDGE_LOG_PRETTY: '0', WMSBRIDGE_LOG_LEVEL: 'warn', ...env },
  });
}

export interface Finished {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

function collect(child: ChildProcess): () => Promise<Finished> {
  let stdout = '';
  let stderr = '';
  child.stdout?.on('data', (d: Buffer) => (stdout = (stdout + d.toString()).slice(-200_000)));
  child.stderr?.on('data', (d: Buffer) => (stderr = (stderr + d.toString()).slice(-200_000)));
  const done = new Promise<Finished>((resolve) => child.once('close', (code, signal) => resolve({ code, signal, stdout, stderr })));
  return () => done;
}

/** Runs the CLI to the end, bounded (SIGKILL past the deadline). */
export async function runWmsbridge(args: string[], env: Record<string, string>, timeoutMs = 180_000): Promise<Finished> {
  const child = spawnWmsbridge(args, env);
  const done = collect(child);
  const t = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
  const r = await done();
  clearTimeout(t);
  return r;
}

async function poll<T>(what: string, fn: () => Promise<T | undefined | false>, timeoutMs: number, everyMs = 200): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await fn();
    if (v) return v;
    if (Date.now() > deadline) throw new Error(`chaos: timed out after ${timeoutMs} ms waiting for ${what}`);
    await sleep(everyMs);
  }
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- the sandbox's inspection JSON, read field by field
async function inspect(url: string, path: string): Promise<any> {
  const r = await request(`${url}${path}`, { headers: { 'user-agent': 'wmsbridge-chaos', accept: 'application/json' } });
  const text = await r.body.text();
  if (r.statusCode !== 200) throw new Error(`chaos: ${path}: HTTP ${r.statusCode} ${text.slice(0, 200)}`);
  return JSON.parse(text);
}

/** A free TCP port on 127.0.0.1 (for a sandbox that must come back on the same port). */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const port = (s.address() as { port: number }).port;
      s.close(() => resolve(port));
    });
  });
}

// ------------------------------------------------------------------------------------------ the drop

const CHANNELS = ['cadastros', 'pedidos'] as const;

function mappings(productId: string): Record<string, string> {
  return {
    'cat.yaml': categoryMapping({ channel: 'cadastros', files: 'CAT_*.csv' }),
    'fam.yaml': familyMapping({ channel: 'cadastros', files: 'FAM_*.csv' }),
    'prod.yaml': `name: prod
match: { channel: cadastros, files: "PROD_*.csv" }
source: { format: delimited, delimiter: ';', encoding: utf-8 }
target: Product
fields:
  code: { col: codigo }
  codeERP: { col: codigo }
  name: { col: nome }
  categoryID: { ref: Category, from: categoria }
  familyID: { ref: Family, from: familia }
  logisticsProfileID: { lookup: LogisticsProfile, by: mnemonic, from: { const: PADRAO } }
  unitmeasurement: { const: UN }
`,
    'prov.yaml': providerMapping({ channel: 'cadastros', files: 'PROV_*.csv' }),
    'ped.yaml': pickingListMapping({ channel: 'pedidos', files: 'PED_*.csv', productId }),
    'po.yaml': `name: po
match: { channel: pedidos, files: "PO_*.csv" }
source: { format: delimited, delimiter: ';', encoding: utf-8 }
target: PurchaseOrder
group: { by: { col: nf }, items: purchaseOrderItens, itemFields: { productID: { const: '${productId}' }, quantity: { col: qtd, transforms: [number] } } }
fields:
  nf: { col: nf }
  codeERP: { template: 'PurchaseOrder:{nf}', transforms: [uuid5] }
  companyID: { lookup: Company, by: name, from: { const: Distribuidora Paulista de Alimentos Ltda } }
  branchID: { lookup: Branch, by: name, from: { const: Matriz São Paulo } }
  warehouseID: { lookup: Warehouse, by: codeERP, from: { const: CD-SP01 } }
  providerID: { ref: Provider, from: fornecedor }
  ownersID: { lookup: Owners, by: code, from: { const: '001' } }
`,
  };
}

/** The files of one slice (0-based) of the drop, and the keys they should produce. */
export function sliceFiles(scale: Scale, slice: number, prefix: string): { files: Array<{ channel: string; name: string; text: string }>; expected: Expected } {
  const part = (total: number): [number, number] => {
    const per = Math.ceil(total / scale.slices);
    return [slice * per, Math.min(total, (slice + 1) * per)];
  };
  const e: Expected = { Category: [], Family: [], Product: [], Provider: [], PickingList: [], PurchaseOrder: [] };
  const files: Array<{ channel: string; name: string; text: string }> = [];
  const tag = `${prefix}${String(slice).padStart(2, '0')}`;
  const range = (total: number): number[] => {
    const [a, b] = part(total);
    return Array.from({ length: Math.max(0, b - a) }, (_, i) => a + i);
  };
  const cats = range(scale.categories);
  if (cats.length) {
    files.push({ channel: 'cadastros', name: `CAT_${tag}.csv`, text: ['codigo;nome', ...cats.map((i) => `${prefix}C${i};Categoria ${i}`)].join('\n') + '\n' });
    e.Category.push(...cats.map((i) => `${prefix}C${i}`));
  }
  const fams = range(scale.families);
  if (fams.length) {
    // a family's category comes from its own slice range (delivered in the same run, or before)
    const catOf = (i: number): string => `${prefix}C${Math.floor((i * scale.categories) / scale.families)}`;
    files.push({
      channel: 'cadastros',
      name: `FAM_${tag}.csv`,
      text: ['codigo;nome;categoria', ...fams.map((i) => `${prefix}F${i};Familia ${i};${catOf(i)}`)].join('\n') + '\n',
    });
    e.Family.push(...fams.map((i) => `${prefix}F${i}`));
  }
  const prods = range(scale.products);
  if (prods.length) {
    const famOf = (i: number): number => Math.floor((i * scale.families) / scale.products);
    const catOfFam = (f: number): string => `${prefix}C${Math.floor((f * scale.categories) / scale.families)}`;
    files.push({
      channel: 'cadastros',
      name: `PROD_${tag}.csv`,
      text: ['codigo;nome;categoria;familia', ...prods.map((i) => `${prefix}P${i};Produto ${i};${catOfFam(famOf(i))};${prefix}F${famOf(i)}`)].join('\n') + '\n',
    });
    e.Product.push(...prods.map((i) => `${prefix}P${i}`));
  }
  const provs = range(scale.providers);
  if (provs.length) {
    files.push({
      channel: 'cadastros',
      name: `PROV_${tag}.csv`,
      text: ['codigo;cnpj;nome', ...provs.map((i) => `${prefix}V${i};${cnpj(i)};Fornecedor ${i} Ltda`)].join('\n') + '\n',
    });
    e.Provider.push(...provs.map((i) => `${prefix}V${i}`));
  }
  const base = prefix.split('').reduce((s, c) => s + c.charCodeAt(0), 0) * 100_000;
  const orders = range(scale.orders);
  if (orders.length) {
    const lines = ['pedido;qtd'];
    for (const i of orders) for (let l = 0; l <= i % 3; l++) lines.push(`${base + 10_000_000 + i};${1 + ((i + l) % 9)}`);
    files.push({ channel: 'pedidos', name: `PED_${tag}.csv`, text: lines.join('\n') + '\n' });
    e.PickingList.push(...orders.map((i) => String(base + 10_000_000 + i)));
  }
  const pos = range(scale.purchaseOrders);
  if (pos.length) {
    // the provider of an invoice is one delivered in this slice or before (refs resolve from the cross-reference)
    const provOf = (i: number): string => `${prefix}V${Math.floor((i * scale.providers) / scale.purchaseOrders)}`;
    const lines = ['nf;fornecedor;qtd'];
    for (const i of pos) for (let l = 0; l <= i % 2; l++) lines.push(`${base + 20_000_000 + i};${provOf(i)};${2 + l}`);
    files.push({ channel: 'pedidos', name: `PO_${tag}.csv`, text: lines.join('\n') + '\n' });
    e.PurchaseOrder.push(...pos.map((i) => String(base + 20_000_000 + i)));
  }
  return { files, expected: e };
}

export function mergeExpected(a: Expected, b: Expected): Expected {
  const out = {} as Expected;
  for (const k of Object.keys(a) as Array<keyof Expected>) out[k] = [...a[k], ...b[k]];
  return out;
}

export function emptyExpected(): Expected {
  return { Category: [], Family: [], Product: [], Provider: [], PickingList: [], PurchaseOrder: [] };
}

export function countExpected(e: Expected): number {
  return Object.values(e).reduce((s, l) => s + l.length, 0);
}

/** A workspace: inbox channels, mappings, a config file pointing at the WMS. */
export async function makeWorkspace(wms: WmsTarget, opts: { watch?: boolean; outbox?: string } = {}): Promise<Workspace> {
  const dir = await mkdtemp(join(tmpdir(), 'wmsbridge-chaos-'));
  const inbox = join(dir, 'inbox');
  const outbox = opts.outbox ?? join(dir, 'outbox');
  const state = join(dir, 'state');
  for (const ch of CHANNELS) await mkdir(join(inbox, ch), { recursive: true });
  await mkdir(join(dir, 'mappings'));
  const products = (await inspect(wms.url, '/__sandbox/state?resource=Product')) as Array<{ id: string }>;
  for (const [name, text] of Object.entries(mappings(products[0]!.id))) await writeFile(join(dir, 'mappings', name), text);
  const config = join(dir, 'wmsbridge.config.json');
  await writeConfig(config, { dir, inbox, outbox, state, wms, watch: opts.watch ?? false });
  return {
    dir,
    inbox,
    outbox,
    state,
    config,
    cleanup: async () => {
      await rm(dir, { recursive: true, force: true, maxRetries: 3 });
    },
  };
}

async function writeConfig(config: string, o: { dir: string; inbox: string; outbox: string; state: string; wms: WmsTarget; watch: boolean }): Promise<void> {
  await writeFile(
    config,
    JSON.stringify(
      {
        inboxDir: o.inbox,
        outboxDir: o.outbox,
        stateDir: o.state,
        mappingsDir: join(o.dir, 'mappings'),
        channels: CHANNELS.map((name) => ({ name, readiness: { mode: 'stable', checks: 1, intervalMs: 10 } })),
        wms: { url: o.wms.url, accessKeyId: o.wms.accessKeyID, retries: 4, timeoutMs: 4000 },
        sending: { concurrency: 8 },
        ...(o.watch ? { watch: { usePolling: true, pollIntervalMs: 200, rescanIntervalMs: 500, batchDelayMs: 100, metricsPort: 0 } } : {}),
      },
      null,
      2,
    ),
  );
}

export async function dropSlice(ws: Workspace, files: Array<{ channel: string; name: string; text: string }>): Promise<void> {
  // written under a hidden name, then renamed: a file is complete when it appears
  for (const f of files) {
    const tmp = join(ws.inbox, f.channel, `.${f.name}.part`);
    await writeFile(tmp, f.text);
    await rename(tmp, join(ws.inbox, f.channel, f.name));
  }
}

// ------------------------------------------------------------------------------------------ the comparison

interface StatusJson {
  records: Record<string, number>;
  attention: Array<{ target: string; key: string; status: string; error?: string }>;
}

export async function status(ws: Workspace, env: Record<string, string>): Promise<StatusJson> {
  const r = await runWmsbridge(['status', '--json', '--limit', '1000000', '--config', ws.config], env, 60_000);
  if (r.code !== 0) throw new Error(`chaos: status exit ${r.code}: ${r.stderr.slice(-1000)}`);
  return JSON.parse(r.stdout) as StatusJson;
}

/**
 * Compares the sandbox's creation counts with what the files say.
 * lost: an expected record created 0 times and not listed as held/in doubt;
 * duplicated: created more than once (for Category/Family/Product, which have no read-back, counted apart).
 */
export async function compare(
  wmsUrl: string,
  ws: Workspace,
  env: Record<string, string>,
  expected: Expected,
): Promise<Pick<ChaosResult, 'records' | 'lost' | 'duplicated' | 'duplicatedNoReadBack' | 'held' | 'failed' | 'details'> & { open: Record<string, number> }> {
  const counts = (await inspect(wmsUrl, '/__sandbox/counts')) as { creations: Record<string, Record<string, number>> };
  const st = await status(ws, env);
  const heldKeys = new Set(st.attention.filter((a) => a.status === 'held' || a.status === 'in_doubt').map((a) => `${a.target}:${a.key.split('|')[0]}`));
  const failedKeys = new Map(st.attention.filter((a) => a.status === 'failed').map((a) => [`${a.target}:${a.key.split('|')[0]}`, a.error ?? '']));
  let lost = 0;
  let duplicated = 0;
  let duplicatedNoReadBack = 0;
  let held = 0;
  let failed = 0;
  const details: string[] = [];
  const creationsByPrefix = (resource: string): Map<string, number> => {
    const m = new Map<string, number>();
    for (const [k, n] of Object.entries(counts.creations[resource] ?? {})) {
      const head = k.split('|')[0]!;
      m.set(head, (m.get(head) ?? 0) + n);
    }
    return m;
  };
  for (const resource of Object.keys(expected) as Array<keyof Expected>) {
    const made =
      resource === 'PickingList' || resource === 'PurchaseOrder' ? creationsByPrefix(resource) : new Map(Object.entries(counts.creations[resource] ?? {}));
    const noReadBack = resource === 'Category' || resource === 'Family' || resource === 'Product';
    for (const key of expected[resource]) {
      const n = made.get(key) ?? 0;
      const isHeld = heldKeys.has(`${resource}:${key}`);
      const failReason = failedKeys.get(`${resource}:${key}`);
      if (isHeld) held++;
      if (n === 0 && failReason !== undefined) {
        failed++;
        if (details.length < 20) details.push(`FAILED (listed) ${resource} ${key}: ${failReason.slice(0, 160)}`);
      }
      if (n === 0 && !isHeld && failReason === undefined) {
        lost++;
        if (details.length < 20) details.push(`LOST ${resource} ${key}`);
      }
      if (n > 1) {
        if (noReadBack) duplicatedNoReadBack += n - 1;
        else {
          duplicated += n - 1;
          if (details.length < 20) details.push(`DUPLICATED ${resource} ${key} x${n}`);
        }
      }
    }
  }
  const open: Record<string, number> = {};
  for (const s of ['pending', 'sending', 'failed', 'rejected', 'held', 'in_doubt']) if (st.records[s]) open[s] = st.records[s]!;
  return { records: countExpected(expected), lost, duplicated, duplicatedNoReadBack, held, failed, details, open };
}

// ------------------------------------------------------------------------------------------ scenarios

function envFor(wms: WmsTarget): Record<string, string> {
  return { WMS_SECRET_KEY: wms.secretKey };
}

async function inProcessSandbox(): Promise<Sandbox> {
  return createSandbox({ port: 0, host: '127.0.0.1', logger: silentLogger(), latencyMs: 2 });
}

/** Kills `wmsbridge run` with SIGKILL after a random delay; returns whether it was killed mid-run. */
async function runAndKill(ws: Workspace, env: Record<string, string>, delayMs: number): Promise<boolean> {
  const child = spawnWmsbridge(['run', '--config', ws.config], env);
  const done = collect(child);
  const exited = await Promise.race([done().then(() => true), sleep(delayMs).then(() => false)]);
  if (exited) return false;
  child.kill('SIGKILL');
  await done();
  return true;
}

async function totalCreations(url: string): Promise<number> {
  const c = (await inspect(url, '/__sandbox/counts')) as { creations: Record<string, Record<string, number>> };
  let n = 0;
  for (const byKey of Object.values(c.creations)) for (const v of Object.values(byKey)) n += v;
  return n;
}

/**
 * Kills `wmsbridge run` with SIGKILL once the WMS has received `afterCreations` more creations (so the kill
 * lands while records are being sent, not during start-up); false when the run ended first.
 */
async function runAndKillWhileSending(ws: Workspace, env: Record<string, string>, wmsUrl: string, afterCreations: number): Promise<boolean> {
  const base = await totalCreations(wmsUrl);
  const child = spawnWmsbridge(['run', '--config', ws.config], env);
  const done = collect(child);
  let exited = false;
  void done().then(() => (exited = true));
  const deadline = Date.now() + 120_000;
  while (!exited && Date.now() < deadline) {
    if ((await totalCreations(wmsUrl)) - base >= afterCreations) break;
    await sleep(15);
  }
  if (exited) return false;
  child.kill('SIGKILL');
  await done();
  return true;
}

/** a. kill -9 at random points across `cycles` cycles, a new slice dropped each cycle; then a final run. */
export async function scenarioKills(scale: Scale, opts: { cycles: number; seed?: number; log?: (s: string) => void } = { cycles: 20 }): Promise<ChaosResult> {
  const t0 = Date.now();
  const sb = await inProcessSandbox();
  const ws = await makeWorkspace(sb);
  const env = envFor(sb);
  const rand = rng(opts.seed ?? 42);
  let expected = emptyExpected();
  let kills = 0;
  try {
    for (let c = 0; c < opts.cycles; c++) {
      if (c < scale.slices) {
        const s = sliceFiles(scale, c, 'K');
        await dropSlice(ws, s.files);
        expected = mergeExpected(expected, s.expected);
      }
      // half the kills at a random time (start-up, mapping, sending), half after a random number of creations
      const killed =
        c % 2 === 0
          ? await runAndKill(ws, env, 300 + Math.floor(rand() * 1500))
          : await runAndKillWhileSending(ws, env, sb.url, 1 + Math.floor(rand() * (countExpected(sliceFiles(scale, 0, 'K').expected) * 0.8)));
      if (killed) kills++;
      opts.log?.(`  kill cycle ${c + 1}/${opts.cycles}: ${kills} kill(s) so far`);
    }
    for (let s = opts.cycles; s < scale.slices; s++) {
      const sl = sliceFiles(scale, s, 'K');
      await dropSlice(ws, sl.files);
      expected = mergeExpected(expected, sl.expected);
    }
    const final = await runWmsbridge(['run', '--config', ws.config], env);
    if (final.code !== 0 && final.code !== 1) throw new Error(`chaos kills: final run exit ${final.code}: ${final.stderr.slice(-2000)}`);
    const cmp = await compare(sb.url, ws, env, expected);
    return {
      scenario: 'a. kill -9 at random points',
      cycles: opts.cycles,
      ...cmp,
      durationMs: Date.now() - t0,
      notes: `${kills} run(s) killed mid-way; open after the final run: ${JSON.stringify(cmp.open)}`,
    };
  } finally {
    await sb.close();
    await ws.cleanup();
  }
}

/** b. 500s, 429s, dropped connections, latency spikes and a 1-2 s token lifetime, over `cycles` runs. */
export async function scenarioFaults(
  scale: Scale,
  opts: { cycles: number; spikeMs?: number; log?: (s: string) => void } = { cycles: 3 },
): Promise<ChaosResult> {
  const t0 = Date.now();
  const sb = await inProcessSandbox();
  const ws = await makeWorkspace(sb);
  const env = envFor(sb);
  let expected = emptyExpected();
  let spikes = 0;
  const spiker = setInterval(() => {
    spikes++;
    sb.setFaults({ latencyMs: spikes % 4 === 0 ? (opts.spikeMs ?? 1500) : 5, tokenTtlSeconds: 1 + (spikes % 2) });
  }, 700);
  try {
    sb.setFaults({ failRate: 0.1, rate429: 0.05, resetRate: 0.02, tokenTtlSeconds: 1, latencyMs: 5 });
    const perCycle = Math.ceil(scale.slices / opts.cycles);
    let codes = '';
    for (let c = 0; c < opts.cycles; c++) {
      for (let s = c * perCycle; s < Math.min(scale.slices, (c + 1) * perCycle); s++) {
        const sl = sliceFiles(scale, s, 'B');
        await dropSlice(ws, sl.files);
        expected = mergeExpected(expected, sl.expected);
      }
      const r = await runWmsbridge(['run', '--config', ws.config], env);
      codes += `${r.code} `;
      // 75: records the WMS did not take (5xx or throttling beyond the retries) wait for the next run (the
      // operations contract since issue 18); the next cycle and the final run send them
      if (r.code !== 0 && r.code !== 1 && r.code !== 75) throw new Error(`chaos faults: run exit ${r.code}: ${r.stderr.slice(-2000)}`);
      opts.log?.(`  fault cycle ${c + 1}/${opts.cycles}: exit ${r.code}`);
    }
    clearInterval(spiker);
    sb.setFaults({ failRate: 0, rate429: 0, resetRate: 0, latencyMs: 0, tokenTtlSeconds: 900 });
    const counts = (await inspect(sb.url, '/__sandbox/counts')) as { stats: Record<string, unknown> };
    // a last clean run settles what the faults left pending; held documents stay held (a person decides)
    const final = await runWmsbridge(['run', '--config', ws.config], env);
    const cmp = await compare(sb.url, ws, env, expected);
    return {
      scenario: 'b. 500s, 429s, resets, latency spikes, 1-2 s tokens',
      cycles: opts.cycles,
      ...cmp,
      durationMs: Date.now() - t0,
      notes: `fault rates 10% 500, 5% 429, 2% reset; ${spikes} latency/token changes; exits ${codes.trim()}; final exit ${final.code}; faults injected ${JSON.stringify(counts.stats['faults'] ?? counts.stats)}; open ${JSON.stringify(cmp.open)}`,
    };
  } finally {
    clearInterval(spiker);
    await sb.close();
    await ws.cleanup();
  }
}

/** A sandbox child on a fixed port with a state file, stoppable and restartable. */
async function sandboxChild(port: number, stateFile: string): Promise<{ child: ChildProcess; info: WmsTarget }> {
  const { cmd, args } = cliCommand();
  const child = spawn(cmd, [...args, 'sandbox', '--port', String(port), '--state-file', stateFile, '--latency-ms', '3'], {
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, WMSBRIDGE_LOG_LEVEL: 'warn', WMSBRIDGE_LOG_PRETTY: '0' },
  });
  let out = '';
  let err = '';
  child.stderr?.on('data', (d: Buffer) => (err = (err + d.toString()).slice(-5000)));
  const info = await new Promise<WmsTarget>((resolve, reject) => {
    const t = setTimeout(() => reject(new Error(`chaos: sandbox did not start: ${err}`)), 30_000);
    child.stdout?.on('data', (d: Buffer) => {
      out += d.toString();
      const nl = out.indexOf('\n');
      if (nl >= 0) {
        clearTimeout(t);
        resolve(JSON.parse(out.slice(0, nl)) as WmsTarget);
      }
    });
    child.once('exit', (code) => {
      clearTimeout(t);
      reject(new Error(`chaos: sandbox exited ${code}: ${err}`));
    });
  });
  return { child, info };
}

async function stopChild(child: ChildProcess, signal: NodeJS.Signals): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((r) => child.once('exit', r));
  child.kill(signal);
  await exited;
}

/** c. the sandbox stopped (SIGTERM: its state file is saved) and restarted on the same port while runs go on. */
export async function scenarioSandboxRestart(
  scale: Scale,
  opts: { restarts: number; seed?: number; log?: (s: string) => void } = { restarts: 6 },
): Promise<ChaosResult> {
  const t0 = Date.now();
  const port = await freePort();
  const stateDir = await mkdtemp(join(tmpdir(), 'wmsbridge-chaos-sbx-'));
  const stateFile = join(stateDir, 'sandbox.json');
  let sbx = await sandboxChild(port, stateFile);
  const ws = await makeWorkspace(sbx.info);
  const env = envFor(sbx.info);
  const rand = rng(opts.seed ?? 7);
  let expected = emptyExpected();
  let restarts = 0;
  let midRun = 0;
  try {
    const perCycle = Math.ceil(scale.slices / opts.restarts);
    for (let c = 0; c < opts.restarts; c++) {
      // a new part of the drop each cycle, so every restart lands in a run with work to do
      for (let s = c * perCycle; s < Math.min(scale.slices, (c + 1) * perCycle); s++) {
        const sl = sliceFiles(scale, s, 'R');
        await dropSlice(ws, sl.files);
        expected = mergeExpected(expected, sl.expected);
      }
      const base = await totalCreations(sbx.info.url);
      const child = spawnWmsbridge(['run', '--config', ws.config], env);
      const done = collect(child);
      let exited = false;
      void done().then(() => (exited = true));
      // the restart lands while records are being sent: after a random number of creations
      const threshold = 1 + Math.floor(rand() * countExpected(sliceFiles(scale, 0, 'R').expected) * perCycle * 0.7);
      const until = Date.now() + 120_000;
      while (!exited && Date.now() < until && (await totalCreations(sbx.info.url)) - base < threshold) await sleep(15);
      if (!exited) midRun++;
      await stopChild(sbx.child, 'SIGTERM');
      await sleep(300 + Math.floor(rand() * 700)); // the WMS is away for a moment
      sbx = await sandboxChild(port, stateFile);
      restarts++;
      const r = await done();
      opts.log?.(`  sandbox restart ${c + 1}/${opts.restarts}: run exit ${r.code}`);
      if (r.signal) throw new Error(`chaos restart: run killed by ${r.signal}`);
    }
    const final = await runWmsbridge(['run', '--config', ws.config], env);
    const final2 = await runWmsbridge(['run', '--config', ws.config], env);
    const cmp = await compare(sbx.info.url, ws, env, expected);
    return {
      scenario: 'c. sandbox restarted mid-run (same port, state file)',
      cycles: restarts,
      ...cmp,
      durationMs: Date.now() - t0,
      notes: `${midRun} of ${restarts} restart(s) while a run was sending; final runs exit ${final.code} and ${final2.code}; open ${JSON.stringify(cmp.open)}`,
    };
  } finally {
    await stopChild(sbx.child, 'SIGTERM');
    await ws.cleanup();
    await rm(stateDir, { recursive: true, force: true });
  }
}

function tryMount(dir: string, size: string): boolean {
  try {
    execFileSync('mount', ['-t', 'tmpfs', '-o', `size=${size}`, 'tmpfs', dir], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

/** d. a full outbox disk; then space comes back and a run finishes the job. */
export async function scenarioFullDisk(scale: Scale, opts: { log?: (s: string) => void } = {}): Promise<ChaosResult> {
  const t0 = Date.now();
  const sb = await inProcessSandbox();
  const outboxParent = await mkdtemp(join(tmpdir(), 'wmsbridge-chaos-outbox-'));
  const outbox = join(outboxParent, 'outbox');
  await mkdir(outbox);
  let mounted = tryMount(outbox, '64k');
  const simulated = mounted ? 'a 64 KB tmpfs mounted on the outbox, filled' : 'no mount allowed: the outbox path is a file (writes fail ENOTDIR)';
  if (mounted) {
    // fill it so the first outbox write fails with ENOSPC
    try {
      await writeFile(join(outbox, 'filler.bin'), Buffer.alloc(63 * 1024));
    } catch {
      // full already
    }
  } else {
    // no mount: the outbox is a FILE, every write under it fails (ENOTDIR)
    await rm(outbox, { recursive: true, force: true });
    await writeFile(outbox, 'not a folder\n');
  }
  const ws = await makeWorkspace(sb, { outbox });
  const env = envFor(sb);
  let expected = emptyExpected();
  try {
    for (let s = 0; s < scale.slices; s++) {
      const sl = sliceFiles(scale, s, 'D');
      await dropSlice(ws, sl.files);
      expected = mergeExpected(expected, sl.expected);
    }
    const full = await runWmsbridge(['run', '--config', ws.config], env);
    opts.log?.(`  run with a full outbox: exit ${full.code}`);
    if (full.signal) throw new Error(`chaos disk: run killed by ${full.signal}`);
    const fullSaid = /ENOSPC|no space|ENOTDIR|not a directory/i.test(full.stderr + full.stdout);
    // space comes back
    if (mounted) {
      execFileSync('umount', [outbox]);
      mounted = false;
    } else {
      await rm(outbox, { force: true });
      await mkdir(outbox);
    }
    const after = await runWmsbridge(['run', '--config', ws.config], env);
    const results = existsSync(join(outbox, 'results'))
      ? (await readdir(join(outbox, 'results'), { recursive: true })).filter((f) => String(f).endsWith('.result.csv')).length
      : 0;
    const cmp = await compare(sb.url, ws, env, expected);
    return {
      scenario: 'd. full outbox disk',
      cycles: 2,
      ...cmp,
      durationMs: Date.now() - t0,
      notes: `${simulated}; full-disk run exit ${full.code}${fullSaid ? ' naming the write error' : ' WITHOUT naming the write error'}; after space came back: exit ${after.code}, ${results} result file(s) written; open ${JSON.stringify(cmp.open)}`,
    };
  } finally {
    if (mounted) {
      try {
        execFileSync('umount', [outbox]);
      } catch {
        // already gone
      }
    }
    await sb.close();
    await ws.cleanup();
    await rm(outboxParent, { recursive: true, force: true });
  }
}

/** Where the dropped files are: archived, still in work/, or still in the inbox. */
export async function originals(ws: Workspace): Promise<{ archived: number; work: number; inbox: number; error: number }> {
  const r = { archived: 0, work: 0, inbox: 0, error: 0 };
  for (const ch of CHANNELS) {
    const base = join(ws.inbox, ch);
    if (!existsSync(base)) continue;
    const all = (await readdir(base, { recursive: true, withFileTypes: true })).filter(
      (e) => e.isFile() && !e.name.endsWith('.reason.txt') && !e.name.startsWith('.'),
    );
    for (const e of all) {
      const p = e.parentPath ?? (e as unknown as { path: string }).path;
      if (p === base) r.inbox++;
      else if (p.includes(`${join('.wmsbridge', 'archive')}`)) r.archived++;
      else if (p.includes(`${join('.wmsbridge', 'work')}`)) r.work++;
      else if (p.includes(`${join('.wmsbridge', 'error')}`)) r.error++;
    }
  }
  return r;
}

/** e. `wmsbridge watch` with polling; the inbox folder renamed away mid-watch and back; later files still taken. */
export async function scenarioShareGone(
  scale: Scale,
  opts: { outages: number; outageMs?: number; log?: (s: string) => void } = { outages: 2 },
): Promise<ChaosResult> {
  const t0 = Date.now();
  const sb = await inProcessSandbox();
  const ws = await makeWorkspace(sb, { watch: true });
  const env = { ...envFor(sb), WMSBRIDGE_LOG_LEVEL: 'info' };
  let expected = emptyExpected();
  const recreated: string[] = [];
  const watch = spawnWmsbridge(['watch', '--config', ws.config], env);
  const done = collect(watch);
  let stderr = '';
  watch.stderr?.on('data', (d: Buffer) => (stderr = (stderr + d.toString()).slice(-50_000)));
  const delivered = async (e: Expected): Promise<boolean> => {
    const c = (await inspect(sb.url, '/__sandbox/counts')) as { creations: Record<string, Record<string, number>> };
    for (const resource of Object.keys(e) as Array<keyof Expected>) {
      const made = Object.keys(c.creations[resource] ?? {}).map((k) => k.split('|')[0]!);
      const have = new Set(made);
      if (!e[resource].every((k) => have.has(k))) return false;
    }
    return true;
  };
  try {
    await poll(
      'watch to start',
      async () => {
        if (watch.exitCode !== null) throw new Error(`chaos share: watch exited ${watch.exitCode} before starting: ${stderr.slice(-2000)}`);
        return /watching/.test(stderr);
      },
      30_000,
      100,
    );
    const slicesPer = Math.max(1, Math.floor(scale.slices / (opts.outages + 1)));
    let next = 0;
    for (let o = 0; o <= opts.outages; o++) {
      let part = emptyExpected();
      for (let s = next; s < Math.min(scale.slices, next + slicesPer); s++) {
        const sl = sliceFiles(scale, s, 'E');
        await dropSlice(ws, sl.files);
        part = mergeExpected(part, sl.expected);
      }
      next += slicesPer;
      expected = mergeExpected(expected, part);
      await poll(`watch to deliver batch ${o + 1}`, () => delivered(part), 120_000, 250);
      if (watch.exitCode !== null) throw new Error(`chaos share: watch exited ${watch.exitCode}: ${stderr.slice(-2000)}`);
      if (o === opts.outages) break;
      // the share disappears: the whole inbox folder goes away, then comes back
      const gone = `${ws.inbox}.gone`;
      await rename(ws.inbox, gone);
      await sleep(opts.outageMs ?? 2500); // the outage lasts this long (a duration, not a condition)
      if (existsSync(ws.inbox)) {
        // wmsbridge created a local folder where the share was mounted: note what, set it aside
        const what = (await readdir(ws.inbox, { recursive: true })).map(String).sort();
        recreated.push(`outage ${o + 1}: ${what.join(', ') || '(empty folder)'}`);
        await rename(ws.inbox, `${ws.inbox}.recreated-${o}`);
      }
      await rename(gone, ws.inbox);
      opts.log?.(`  share outage ${o + 1}/${opts.outages}: inbox away ${opts.outageMs ?? 2500} ms and back; watch alive: ${watch.exitCode === null}`);
    }
    const alive = watch.exitCode === null;
    await stopChild(watch, 'SIGTERM');
    const end = await done();
    const stopped = await originals(ws);
    const stoppedStatus = await status(ws, envFor(sb));
    // the next start: a plain run takes up whatever the stop left
    const nextRun = await runWmsbridge(['run', '--config', ws.config], envFor(sb));
    const where = await originals(ws);
    const cmp = await compare(sb.url, ws, { ...envFor(sb) }, expected);
    return {
      scenario: 'e. inbox share disappears and comes back (watch, polling)',
      cycles: opts.outages,
      ...cmp,
      durationMs: Date.now() - t0,
      notes: `watch survived every outage: ${alive}; stopped with exit ${end.code} leaving ${stopped.work} file(s) in work/ and records ${JSON.stringify(stoppedStatus.records)}; the next run exit ${nextRun.code}; then originals: ${where.archived} archived, ${where.work} left in work/, ${where.inbox} left in the inbox; open ${JSON.stringify(cmp.open)}${recreated.length ? `; wmsbridge RE-CREATED the missing inbox folder during the outage (${recreated.join('; ')})` : ''}`,
      recreated,
      stuck: where.work + where.inbox,
    };
  } finally {
    await stopChild(watch, 'SIGKILL');
    await sb.close();
    if (existsSync(`${ws.inbox}.gone`) && !existsSync(ws.inbox)) await rename(`${ws.inbox}.gone`, ws.inbox);
    await ws.cleanup();
  }
}

// ------------------------------------------------------------------------------------------ f. combined (issue 41)

/** The faults of the combined scenario, all at once (issue 41 "Done when"). */
export const COMBINED_FAULTS = { failRate: 0.05, rate429: 0.03, retryAfterSeconds: 1, resetAfterRate: 0.03, tokenTtlSeconds: 3, latencyMs: 15 } as const;

/** One slice per run (66 records): master data and documents, so documents are in flight at some kills. */
export function combinedScale(runs: number): Scale {
  const n = Math.max(1, runs);
  return { slices: n, categories: 12 * n, families: 4 * n, products: 12 * n, providers: 8 * n, orders: 20 * n, purchaseOrders: 10 * n };
}

const DOCUMENT_TARGETS = new Set(['PickingList', 'PurchaseOrder', 'PickingListAttachment']);
const DOCUMENT_PATHS = ['/open/v1/pickinglist', '/open/v1/purchaseorder', '/wms/v1/pickinglist/attachment'];
const AUTH_PATHS = ['/open/v1/authorize', '/open/v1/refreshtoken'];

/** GET /__sandbox/wire entry (src/sandbox/wire-log.ts), its body read as a JSON object */
type WireEntryJson = Omit<WireEntry, 'body'> & { body: Record<string, unknown> | null };

/** What one kill left, as the journal and the WMS tell it. */
export interface KillFigures {
  run: number;
  /** ms after the run started */
  atMs: number;
  /** documents `sending` in the journal after the kill (held in doubt by the next run) */
  heldDocuments: number;
  /** document requests really on the wire at the kill: arrived and not answered, or answered and left unread */
  documentsOnWire: number;
  /** master data `sending` after the kill (read back or sent again by the next run) */
  sendingMaster: number;
  /** master data requests on the wire at the kill */
  masterOnWire: number;
  /** held documents whose own request was on the wire at the kill */
  heldOnWire: number;
  /** held documents whose request arrived and was answered before the kill (the answer read, its settle not yet committed) */
  heldAnsweredBeforeKill: number;
  /** held documents no request of which reached the WMS in that run (marked, not written) */
  heldNeverArrived: number;
  /** master data `sending` whose request was on the wire / answered before the kill (not yet settled) / never arrived */
  masterSendingOnWire: number;
  masterAnsweredBeforeKill: number;
  masterNeverArrived: number;
  /** for each record `sending` whose request never arrived: ms between its mark (journal updated_at) and the kill */
  neverArrivedMarkedMsBefore: number[];
  /** records still `sending` from the kill before (this run was killed before its in-doubt pass): not counted again above */
  carriedOver: number;
}

export interface CombinedResult extends ChaosResult {
  seed: number;
  runs: number;
  killed: number;
  faults: typeof COMBINED_FAULTS;
  faultsInjected: Record<string, number>;
  perTarget: Record<string, { expected: number; once: number; missing: number; held: number; duplicates: number; readBack: boolean }>;
  retryAfter: { windows: number; strict: number; beyondGrace: number; firstOnConnection: number; examples: string[] };
  kills: KillFigures[];
  heldAtKills: number;
  documentsOnWireAtKills: number;
  /** document requests in doubt for another reason: reset after applying, or the connection gone before the answer */
  documentsInDoubtOtherwise: number;
  outsideInterface: { count: number; last: string[] };
  validationFailures: number;
  exits: string;
}

/** The documents and master data marked `sending` in a journal (read directly, as after a kill). */
function sendingInJournal(state: string): Array<{ target: string; key: string; updatedAt: string }> {
  const db = new Database(join(state, 'journal.db'), { readonly: true, fileMustExist: true });
  try {
    return db.prepare(`SELECT target, key, updated_at AS updatedAt FROM records WHERE status = 'sending'`).all() as Array<{
      target: string;
      key: string;
      updatedAt: string;
    }>;
  } finally {
    db.close();
  }
}

/** the document key a wire entry's body names (a picking list's order, a purchase order's invoice) */
function documentKeyOf(e: WireEntryJson): string | undefined {
  const v = e.body?.['order'] ?? e.body?.['nf'];
  return v === undefined || v === null ? undefined : String(v);
}

/** picking lists and purchase orders the in-process sandbox created */
function documentsCreated(sb: Sandbox): number {
  let n = 0;
  for (const r of ['PickingList', 'PurchaseOrder']) for (const v of Object.values(sb.state.creations[r] ?? {})) n += v;
  return n;
}

/**
 * A record `sending` at a kill whose request never arrived, marked longer than this before the kill, waited marked
 * (the issue 41 defect: marked while waiting out a Retry-After of 1 s, a slot or a retry's delay).
 */
const STALE_MARK_MS = 1000;

/** Waits until every Retry-After window the WMS opened has ended: a new process cannot know of one a killed run got. */
async function afterWindows(url: string): Promise<void> {
  const windows = (await inspect(url, '/__sandbox/retry-after')) as Array<{ until: number }>;
  const until = windows.reduce((m, w) => Math.max(m, w.until), 0);
  const wait = until - performance.now();
  if (wait > 0) await sleep(Math.ceil(wait) + 20);
}

/**
 * f. The issue 41 measurement: `runs` runs of `wmsbridge run` (a new slice of master data and documents dropped
 * before each) against a sandbox answering 5 % 500, 3 % 429 with Retry-After: 1, resetting 3 % of the changing
 * requests after applying them, with 3 s tokens and 15 ms latency; each run killed with SIGKILL at a random moment
 * (seeded: a random delay after its first request or its first document); then `cleanRuns` runs without faults. Measured by the WMS (the in-process
 * sandbox: its clock is this process's performance.now()): each expected record created once (duplicates and
 * missing by target), requests arriving inside a Retry-After window, at each kill the documents left `sending` in
 * the journal against the document requests really on the wire, and the requests outside the interface.
 */
export async function scenarioCombined(
  scale: Scale,
  opts: { runs: number; seed: number; cleanRuns?: number; deadlineMs?: number; log?: (s: string) => void },
): Promise<CombinedResult> {
  const t0 = Date.now();
  const deadline = t0 + (opts.deadlineMs ?? 8 * 60_000);
  const rand = rng(opts.seed);
  const sb = await createSandbox({ port: 0, host: '127.0.0.1', logger: silentLogger(), seed: opts.seed });
  const ws = await makeWorkspace(sb);
  const env = envFor(sb);
  let expected = emptyExpected();
  const kills: KillFigures[] = [];
  let exits = '';
  let killed = 0;
  let wireSeq = 0;
  let documentsInDoubtOtherwise = 0;
  const allChanges: WireEntryJson[] = [];
  /** each run's start, kill and end on the sandbox's clock (this process's performance.now()) */
  const timeline: Array<{ run: string; startedAt: number; killAt: number; endedAt: number }> = [];
  let lastSending = new Set<string>();
  try {
    sb.setFaults(COMBINED_FAULTS);
    for (let run = 0; run < opts.runs; run++) {
      if (Date.now() > deadline) {
        opts.log?.(`  combined: the time budget is spent after ${run} run(s)`);
        break;
      }
      if (run < scale.slices) {
        const sl = sliceFiles(scale, run, 'G');
        await dropSlice(ws, sl.files);
        expected = mergeExpected(expected, sl.expected);
      }
      await afterWindows(sb.url);
      // the kill lands at a random moment while the run sends, not during start-up: a random delay after its first
      // API request, or (every other run, drawn) after its first document created, so documents are in flight at
      // some kills (a run sends them last, after the master data it was given and what the killed runs left). A
      // delay, not an event: a kill right after an answer would fall where the client settles and marks the next
      // records, and over-count marks not yet written
      const byDocuments = rand() < 0.5;
      const delayMs = Math.floor(rand() * (byDocuments ? 1500 : 4000));
      const progress = (): number => (byDocuments ? documentsCreated(sb) : sb.state.stats.requests);
      const base = progress();
      const started = performance.now();
      const child = spawnWmsbridge(['run', '--config', ws.config], env);
      const done = collect(child);
      let exited = false;
      void done().then(() => (exited = true));
      const until = Date.now() + 120_000;
      while (!exited && Date.now() < until && progress() === base) await sleep(2);
      const killBy = Date.now() + delayMs;
      while (!exited && Date.now() < killBy) await sleep(Math.min(5, killBy - Date.now()));
      let killAt = -1;
      let killWall = 0;
      if (!exited) {
        killAt = performance.now();
        killWall = Date.now();
        child.kill('SIGKILL');
      }
      const r = await done();
      timeline.push({ run: String(run + 1), startedAt: started, killAt, endedAt: performance.now() });
      exits += `${r.signal === 'SIGKILL' ? 'K' : String(r.code)} `;
      // the dead client's connections close, the requests it left are answered (or not) by now
      await sleep(300);
      const wire = (await inspect(sb.url, `/__sandbox/wire?since=${wireSeq}`)) as { entries: WireEntryJson[] };
      wireSeq = wire.entries.at(-1)?.seq ?? wireSeq;
      const runChanges = wire.entries.filter((e) => !AUTH_PATHS.includes(e.path));
      allChanges.push(...runChanges);
      // a record still `sending` from an earlier kill (this run was killed before its in-doubt pass) was sent then
      const changes = allChanges;
      const isDoc = (e: WireEntryJson): boolean => DOCUMENT_PATHS.includes(e.path);
      const onWire = (e: WireEntryJson): boolean => e.arrivedAt <= killAt && (e.endedAt === null || e.endedAt > killAt || e.unread);
      documentsInDoubtOtherwise += runChanges.filter((e) => isDoc(e) && (e.fate === 'reset-after' || e.fate === 'gone') && !(killAt >= 0 && onWire(e))).length;
      if (killAt < 0) {
        if (r.code !== 0 && r.code !== 1 && r.code !== 75) throw new Error(`chaos combined: run exit ${r.code}: ${r.stderr.slice(-2000)}`);
        opts.log?.(`  combined run ${run + 1}/${opts.runs}: ended before its kill, exit ${r.code}`);
        continue;
      }
      killed++;
      const allSending = sendingInJournal(ws.state);
      const sending = allSending.filter((x) => !lastSending.has(`${x.target}:${x.key}`));
      const carriedOver = allSending.length - sending.length;
      lastSending = new Set(allSending.map((x) => `${x.target}:${x.key}`));
      const heldDocs = sending.filter((s) => DOCUMENT_TARGETS.has(s.target));
      // on the wire at this kill: this run's requests (an earlier run's were answered, or left unread, at its own kill)
      const docsOnWire = runChanges.filter((e) => isDoc(e) && onWire(e));
      const onWireKeys = new Set(docsOnWire.map(documentKeyOf));
      const arrivedKeys = new Set(changes.filter((e) => isDoc(e) && e.arrivedAt <= killAt).map(documentKeyOf));
      const keyOf = (k: string): string => k.split('|')[0]!;
      const masterSending = sending.filter((s) => !DOCUMENT_TARGETS.has(s.target)).map((s) => keyOf(s.key));
      const masterOnWireKeys = new Set(runChanges.filter((e) => !isDoc(e) && onWire(e)).map((e) => String(e.body?.['codeERP'] ?? e.body?.['code'] ?? '')));
      const masterArrivedKeys = new Set(
        changes.filter((e) => !isDoc(e) && e.arrivedAt <= killAt).map((e) => String(e.body?.['codeERP'] ?? e.body?.['code'] ?? '')),
      );
      const k: KillFigures = {
        run: run + 1,
        atMs: Math.round(killAt - started),
        heldDocuments: heldDocs.length,
        documentsOnWire: docsOnWire.length,
        sendingMaster: sending.length - heldDocs.length,
        masterOnWire: runChanges.filter((e) => !isDoc(e) && onWire(e)).length,
        heldOnWire: heldDocs.filter((h) => onWireKeys.has(keyOf(h.key))).length,
        heldAnsweredBeforeKill: heldDocs.filter((h) => !onWireKeys.has(keyOf(h.key)) && arrivedKeys.has(keyOf(h.key))).length,
        heldNeverArrived: heldDocs.filter((h) => !arrivedKeys.has(keyOf(h.key))).length,
        // how long before the kill each held document whose request never arrived was marked (the journal's
        // updated_at): marked right before the kill, its request not yet written (the mark must be durable before the
        // write), or marked and left. Documents only: master data is marked before its slot (resent when in doubt)
        neverArrivedMarkedMsBefore: heldDocs.filter((h) => !arrivedKeys.has(keyOf(h.key))).map((h) => killWall - Date.parse(h.updatedAt)),
        masterSendingOnWire: masterSending.filter((m) => masterOnWireKeys.has(m)).length,
        masterAnsweredBeforeKill: masterSending.filter((m) => !masterOnWireKeys.has(m) && masterArrivedKeys.has(m)).length,
        masterNeverArrived: masterSending.filter((m) => !masterArrivedKeys.has(m)).length,
        carriedOver,
      };
      kills.push(k);
      opts.log?.(
        `  combined run ${run + 1}/${opts.runs}: killed at ${k.atMs} ms (${delayMs} ms after its first ${byDocuments ? 'document created' : 'request'}): documents sending ${k.heldDocuments} / on the wire ${k.documentsOnWire} (never arrived ${k.heldNeverArrived}); master data sending ${k.sendingMaster} / on the wire ${k.masterOnWire} (never arrived ${k.masterNeverArrived}); carried over ${k.carriedOver}${k.neverArrivedMarkedMsBefore.length ? `; never arrived, marked ms before the kill: ${k.neverArrivedMarkedMsBefore.join(', ')}` : ''}`,
      );
    }
    sb.setFaults({ failRate: 0, rate429: 0, resetAfterRate: 0, latencyMs: 0, tokenTtlSeconds: 900 });
    const counts = (await inspect(sb.url, '/__sandbox/counts')) as {
      creations: Record<string, Record<string, number>>;
      stats: {
        faults: Record<string, number>;
        retryAfter?: { windows: number; inside: number; strict?: number };
        outsideInterface?: { count: number; last: string[] };
        validationFailures: number;
      };
    };
    for (let c = 0; c < (opts.cleanRuns ?? 2); c++) {
      await afterWindows(sb.url);
      const startedAt = performance.now();
      const r = await runWmsbridge(['run', '--config', ws.config], env);
      timeline.push({ run: `clean ${c + 1}`, startedAt, killAt: -1, endedAt: performance.now() });
      exits += `clean:${r.code} `;
      opts.log?.(`  combined clean run ${c + 1}: exit ${r.code}`);
    }
    const after = (await inspect(sb.url, '/__sandbox/counts')) as typeof counts;
    const windows = (await inspect(sb.url, '/__sandbox/retry-after')) as Array<{
      from: number;
      inside: Array<{ at: number; method: string; path: string }>;
      firstOnConnection: number;
    }>;
    // where each request inside a window fell: the run the 429 went to, and the run the request came from
    const runAt = (t: number): string => {
      const r = timeline.find((x) => t >= x.startedAt && t <= x.endedAt);
      if (!r) return 'between runs';
      return r.killAt >= 0 && t > r.killAt
        ? `run ${r.run}, ${Math.round(t - r.killAt)} ms after its kill`
        : `run ${r.run}, ${Math.round(t - r.startedAt)} ms after its start`;
    };
    const insideWhere = windows.flatMap((w) =>
      w.inside.map((i) => `${i.method} ${i.path} arrived ${i.at} ms into a window (429 written in ${runAt(w.from)}; request in ${runAt(w.from + i.at)})`),
    );
    const cmp = await compare(sb.url, ws, env, expected);
    const st = await status(ws, env);
    const perTarget = combinedPerTarget(after.creations, expected, st);
    const ra = after.stats.retryAfter ?? { windows: 0, inside: 0, strict: 0 };
    const heldAtKills = kills.reduce((s, k) => s + k.heldDocuments, 0);
    const documentsOnWireAtKills = kills.reduce((s, k) => s + k.documentsOnWire, 0);
    const outside = after.stats.outsideInterface ?? { count: 0, last: [] };
    return {
      scenario: 'f. combined: 500s, 429s, resets after applying, 3 s tokens, latency, kill -9 in every run',
      cycles: opts.runs,
      ...cmp,
      durationMs: Date.now() - t0,
      notes: `seed ${opts.seed}; ${killed} of ${opts.runs} run(s) killed; exits ${exits.trim()}; Retry-After windows ${ra.windows}, requests arriving inside one ${ra.strict ?? 0} (first on a new connection, arrival unknown: ${windows.reduce((s, w) => s + w.firstOnConnection, 0)}); documents sending after the kills ${heldAtKills}, on the wire at the kills ${documentsOnWireAtKills}; requests outside the interface ${outside.count}; faults injected ${JSON.stringify(counts.stats.faults)}; open ${JSON.stringify(cmp.open)}`,
      seed: opts.seed,
      runs: opts.runs,
      killed,
      faults: COMBINED_FAULTS,
      faultsInjected: counts.stats.faults,
      perTarget,
      retryAfter: {
        windows: ra.windows,
        strict: ra.strict ?? 0,
        beyondGrace: ra.inside,
        firstOnConnection: windows.reduce((s, w) => s + w.firstOnConnection, 0),
        examples: insideWhere.slice(0, 10),
      },
      kills,
      heldAtKills,
      documentsOnWireAtKills,
      documentsInDoubtOtherwise,
      outsideInterface: outside,
      validationFailures: after.stats.validationFailures,
      exits: exits.trim(),
    };
  } finally {
    await sb.close();
    await ws.cleanup();
  }
}

/** Per target: expected, created exactly once, missing (not created, not listed), held (listed), duplicate creations. */
function combinedPerTarget(creations: Record<string, Record<string, number>>, expected: Expected, st: StatusJson): CombinedResult['perTarget'] {
  const listed = new Set(st.attention.map((a) => `${a.target}:${a.key.split('|')[0]}`));
  const out: CombinedResult['perTarget'] = {};
  for (const resource of Object.keys(expected) as Array<keyof Expected>) {
    const made = new Map<string, number>();
    for (const [k, n] of Object.entries(creations[resource] ?? {})) {
      const head = resource === 'PickingList' || resource === 'PurchaseOrder' ? k.split('|')[0]! : k;
      made.set(head, (made.get(head) ?? 0) + n);
    }
    const t = { expected: expected[resource].length, once: 0, missing: 0, held: 0, duplicates: 0, readBack: resource === 'Provider' };
    for (const key of expected[resource]) {
      const n = made.get(key) ?? 0;
      if (n === 1) t.once++;
      if (n > 1) t.duplicates += n - 1;
      if (listed.has(`${resource}:${key}`)) t.held++;
      else if (n === 0) t.missing++;
    }
    out[resource] = t;
  }
  return out;
}

/** The combined scenario's figures as markdown (docs/RELIABILITY.md, between the chaos-combined markers). */
export function combinedMarkdown(r: CombinedResult, command: string, machine: string, date: string): string {
  const rows = Object.entries(r.perTarget).map(
    ([t, v]) =>
      `| ${t} | ${v.expected} | ${v.once} | ${v.duplicates} | ${v.missing} | ${v.held} | ${v.readBack || DOCUMENT_TARGETS.has(t) ? 'exactly once (or held for a person)' : 'at least once (no read-back)'} |`,
  );
  const docsOnWire = r.documentsOnWireAtKills;
  return [
    `\`${command}\` on ${machine}, ${date.slice(0, 16).replace('T', ' ')} UTC: seed ${r.seed}, ${r.runs} faulty runs (${r.killed} killed with SIGKILL), then 2 clean runs; ${(r.durationMs / 1000).toFixed(1)} s; exits ${r.exits}.`,
    '',
    '| target | expected | created once | duplicate creations | missing | held (listed) | guarantee |',
    '|---|---|---|---|---|---|---|',
    ...rows,
    '',
    `- Requests inside a Retry-After window, by arrival at the WMS: **${r.retryAfter.strict}** over ${r.retryAfter.windows} windows${r.retryAfter.examples.length ? ` (${r.retryAfter.examples.join('; ')})` : ''}; more than 250 ms into one: ${r.retryAfter.beyondGrace}; first requests of a new connection, whose arrival the sandbox cannot time: ${r.retryAfter.firstOnConnection}.`,
    `- At the kills: documents left \`sending\` (held in doubt by the next run) **${r.heldAtKills}**, document requests really on the wire **${docsOnWire}** (per kill: ${r.kills.map((k) => `${k.heldDocuments}/${k.documentsOnWire}`).join(', ')}); of the held documents, on the wire ${r.kills.reduce((s, k) => s + k.heldOnWire, 0)}, answered before the kill but not yet settled ${r.kills.reduce((s, k) => s + k.heldAnsweredBeforeKill, 0)}, never arrived ${r.kills.reduce((s, k) => s + k.heldNeverArrived, 0)}. Records whose request never arrived were marked at most ${Math.max(0, ...r.kills.flatMap((k) => k.neverArrivedMarkedMsBefore))} ms before the kill (marked longer than ${STALE_MARK_MS} ms before it, i.e. left marked while waiting: ${r.kills.reduce((n, k) => n + k.neverArrivedMarkedMsBefore.filter((ms) => ms > STALE_MARK_MS).length, 0)}). Master data left \`sending\` ${r.kills.reduce((s, k) => s + k.sendingMaster, 0)} (its request on the wire ${r.kills.reduce((s, k) => s + k.masterSendingOnWire, 0)}, answered before the kill and not yet settled ${r.kills.reduce((s, k) => s + k.masterAnsweredBeforeKill, 0)}, never arrived ${r.kills.reduce((s, k) => s + k.masterNeverArrived, 0)}), master data requests on the wire ${r.kills.reduce((s, k) => s + k.masterOnWire, 0)}.`,
    `- Documents held at the end: ${r.held}; document requests in doubt for another reason (reset after applying, connection gone before the answer): ${r.documentsInDoubtOtherwise}.`,
    `- Requests outside the interface: **${r.outsideInterface.count}**; bodies refused by validation: ${r.validationFailures}; lost: ${r.lost}; faults injected ${JSON.stringify(r.faultsInjected)}.`,
  ].join('\n');
}

/** Rewrites the combined scenario's figures between the chaos-combined markers of docs/RELIABILITY.md. */
export async function writeCombinedSection(text: string): Promise<void> {
  const doc = join(PROJECT_ROOT, 'docs', 'RELIABILITY.md');
  if (!existsSync(doc)) return;
  const all = await readFile(doc, 'utf8');
  const begin = '<!-- chaos-combined:begin -->';
  const end = '<!-- chaos-combined:end -->';
  const a = all.indexOf(begin);
  const b = all.indexOf(end);
  if (a < 0 || b < a) return;
  await writeFile(doc, `${all.slice(0, a + begin.length)}\n${text}\n${all.slice(b)}`);
}

// ------------------------------------------------------------------------------------------ main

export function markdownTable(results: ChaosResult[]): string {
  const rows = results.map(
    (r) =>
      `| ${r.scenario} | ${r.cycles} | ${r.records} | ${r.lost} | ${r.duplicated} | ${r.duplicatedNoReadBack} | ${r.held} | ${r.failed} | ${(r.durationMs / 1000).toFixed(1)} s |`,
  );
  return [
    '| scenario | cycles | records | lost | duplicated (read-back) | duplicated (no read-back) | held | failed, listed | duration |',
    '|---|---|---|---|---|---|---|---|---|',
    ...rows,
  ].join('\n');
}

interface ChaosFile {
  date: string;
  command: string;
  machine: string;
  scale: Scale;
  results: ChaosResult[];
}

/** Rewrites the table between the chaos markers of docs/RELIABILITY.md from a chaos.json. */
export async function writeReliabilityTable(out: ChaosFile): Promise<void> {
  const doc = join(PROJECT_ROOT, 'docs', 'RELIABILITY.md');
  if (!existsSync(doc)) return;
  const text = await readFile(doc, 'utf8');
  const begin = '<!-- chaos:begin -->';
  const end = '<!-- chaos:end -->';
  const a = text.indexOf(begin);
  const b = text.indexOf(end);
  if (a < 0 || b < a) return;
  const body = [
    `\`${out.command}\` on ${out.machine}, ${out.date.slice(0, 16).replace('T', ' ')} UTC. Drop per scenario: ${countExpected(mergeAll(out.scale))} records in ${out.scale.slices} slices.`,
    '',
    markdownTable(out.results),
    '',
    ...out.results.map((r) => `- ${r.scenario}: ${r.notes}`),
  ].join('\n');
  await writeFile(doc, `${text.slice(0, a + begin.length)}\n${body}\n${text.slice(b)}`);
}

function mergeAll(scale: Scale): Expected {
  let e = emptyExpected();
  for (let s = 0; s < scale.slices; s++) e = mergeExpected(e, sliceFiles(scale, s, 'X').expected);
  return e;
}

/** `--name=value` or `--name value` */
function argValue(name: string): string | undefined {
  const i = process.argv.findIndex((a) => a === name || a.startsWith(`${name}=`));
  if (i < 0) return undefined;
  const a = process.argv[i]!;
  return a.includes('=') ? a.slice(a.indexOf('=') + 1) : process.argv[i + 1];
}

/** The issue 41 "Done when", as the combined scenario measures it. */
export function combinedHolds(r: CombinedResult): boolean {
  const exactlyOnce = Object.entries(r.perTarget).every(([t, v]) => v.missing === 0 && (!(v.readBack || DOCUMENT_TARGETS.has(t)) || v.duplicates === 0));
  // no record left marked while it waited (a Retry-After, a slot, a retry's delay): one whose request never arrived
  // was marked right before the kill, its write next (the mark is durable before the write: that gap cannot close)
  const staleMarks = r.kills.reduce((n, k) => n + k.neverArrivedMarkedMsBefore.filter((ms) => ms > STALE_MARK_MS).length, 0);
  return exactlyOnce && r.retryAfter.beyondGrace === 0 && staleMarks === 0 && r.outsideInterface.count === 0 && r.lost === 0;
}

async function main(): Promise<void> {
  if (process.argv.includes('--render')) {
    await writeReliabilityTable(JSON.parse(await readFile(join(PROJECT_ROOT, 'docs', 'perf', 'chaos.json'), 'utf8')) as ChaosFile);
    const combinedFile = join(PROJECT_ROOT, 'docs', 'perf', 'chaos-combined.json');
    if (existsSync(combinedFile)) {
      const c = JSON.parse(await readFile(combinedFile, 'utf8')) as CombinedResult & { date: string; command: string; machine: string };
      await writeCombinedSection(combinedMarkdown(c, c.command, c.machine, c.date));
    }
    return;
  }
  const quick = process.argv.includes('--quick');
  const scale = quick ? FAST_SCALE : BENCH_SCALE;
  // scenarios a-e share a 10 minute budget; f (combined) has its own (8 minutes by default)
  const deadline = Date.now() + 10 * 60_000;
  const log = (s: string): void => void process.stderr.write(`${s}\n`);
  const results: ChaosResult[] = [];
  const runs = Number(argValue('--runs') ?? (quick ? 8 : 25));
  const seed = Number(argValue('--seed') ?? Math.floor(Math.random() * 2 ** 31));
  let combined: CombinedResult | undefined;
  const scenarios: Array<[string, () => Promise<ChaosResult>]> = [
    ['a', () => scenarioKills(scale, { cycles: quick ? 5 : 20, log })],
    ['b', () => scenarioFaults(scale, { cycles: 3, log })],
    ['c', () => scenarioSandboxRestart(scale, { restarts: quick ? 2 : 6, log })],
    ['d', () => scenarioFullDisk(scale, { log })],
    ['e', () => scenarioShareGone(scale, { outages: 2, log })],
    [
      'f',
      async () => {
        log(`chaos: combined scenario: seed ${seed} (--seed=${seed} repeats it), ${runs} runs`);
        const budget = Number(argValue('--combined-minutes') ?? 8) * 60_000;
        combined = await scenarioCombined(combinedScale(runs), { runs, seed, deadlineMs: budget, log });
        return combined;
      },
    ],
  ];
  const scenario = argValue('--scenario');
  const only = scenario === 'combined' ? 'f' : (scenario ?? process.argv.find((a) => a.startsWith('--only='))?.slice('--only='.length));
  for (const [id, run] of scenarios) {
    if (only && !only.split(',').includes(id)) continue;
    if (id !== 'f' && Date.now() > deadline) {
      log(`chaos: skipping scenario ${id}: the 10 minute budget is spent`);
      continue;
    }
    log(`chaos: scenario ${id}...`);
    try {
      const r = await run();
      results.push(r);
      log(
        `chaos: ${r.scenario}: records ${r.records}, lost ${r.lost}, duplicated ${r.duplicated} (+${r.duplicatedNoReadBack} without read-back), held ${r.held}, failed ${r.failed}, ${(r.durationMs / 1000).toFixed(1)} s`,
      );
      for (const d of r.details) log(`   ${d}`);
    } catch (err) {
      log(`chaos: scenario ${id} FAILED: ${(err as Error).stack ?? String(err)}`);
      results.push({
        scenario: `${id}. FAILED`,
        cycles: 0,
        records: 0,
        lost: -1,
        duplicated: -1,
        duplicatedNoReadBack: -1,
        held: -1,
        failed: -1,
        durationMs: 0,
        notes: String(err).slice(0, 500),
        details: [],
      });
    }
  }
  const machine = `${platform()} ${release()}, ${cpus().length} x ${cpus()[0]?.model ?? 'cpu'}, ${Math.round(totalmem() / 2 ** 30)} GB, Node ${process.version}`;
  const out = {
    date: new Date().toISOString(),
    command: `npm run chaos${quick ? ' -- --quick' : ''}`,
    machine,
    scale,
    results: results.filter((r) => r !== combined),
  };
  await mkdir(join(PROJECT_ROOT, 'docs', 'perf'), { recursive: true });
  if (!only && !quick) {
    await writeFile(join(PROJECT_ROOT, 'docs', 'perf', 'chaos.json'), `${JSON.stringify(out, null, 2)}\n`);
    await writeReliabilityTable(out);
  }
  process.stdout.write(`${markdownTable(results)}\n\n${out.command} on ${machine}, ${out.date}\n`);
  for (const r of results) process.stdout.write(`- ${r.scenario}: ${r.notes}\n`);
  if (combined) {
    const command = `npm run chaos -- --scenario combined --runs=${runs} --seed=${seed}`;
    const text = combinedMarkdown(combined, command, machine, out.date);
    process.stdout.write(`\n${text}\n`);
    if (!quick && runs >= 25) {
      await writeFile(
        join(PROJECT_ROOT, 'docs', 'perf', 'chaos-combined.json'),
        `${JSON.stringify({ date: out.date, command, machine, ...combined }, null, 2)}\n`,
      );
      await writeCombinedSection(text);
    }
  }
  const bad = results.some((r) => r.lost !== 0 || r.duplicated !== 0) || (combined !== undefined && !combinedHolds(combined));
  process.exitCode = bad ? 1 : 0;
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  process.on('exit', (code) => process.stderr.write(`chaos: process exit ${code}\n`));
  process.on('unhandledRejection', (err) => process.stderr.write(`chaos: unhandled rejection: ${(err as Error)?.stack ?? String(err)}\n`));
  main().catch((err) => {
    process.stderr.write(`chaos: ${(err as Error).stack ?? String(err)}\n`);
    process.exitCode = 2;
  });
}
