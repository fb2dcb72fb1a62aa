#!/usr/bin/env node
/**
 * Reads the .cpuprofile files of one `wmsbridge run` (main thread, and optionally the journal's writer thread)
 * and prints: the busy time by phase of the run, the top self-time functions with file:line, and the self time
 * by file / package. Used for docs/perf/profile-run.md (issue 19); no dependency.
 *
 *   node docs/perf/cpuprofile-summary.mjs MAIN.cpuprofile [WRITER.cpuprofile] [--records N]
 *        [--main-cpu-s S] [--writer-cpu-s S] [--top 25]
 *
 * --main-cpu-s / --writer-cpu-s: each thread's CPU seconds as the OS counted them (the `cpuSByThread` figures of
 * `node dist/bench/e2e.js --profile-run`). The profile's sample times are wall-clock intervals (a descheduled
 * thread's wait, or a writer blocked in fsync, lands on the function it was in), so each thread's shares are
 * applied to that thread's OS CPU figure to give microseconds of CPU per record.
 *
 * Phases (a sample is classified by its stack, leaf to root, then by the time window it falls in):
 *   start-up       before the first claim: module loading, config, mappings, login
 *   claim/hash     src/intake, src/app/scan (claim rename, hashing, readiness)
 *   parse          src/parse, csv-parse, iconv-lite
 *   map            src/map, src/app/map-file (mapping functions, toNewRecord, payload hash)
 *   journal: mapped records   src/journal code called while mapping (addRecords inserts, its transaction)
 *   send loop      src/push (pipeline, senders, refs, sequencing, send window)
 *   client         src/wms (client, auth, retry, JSON), split out: undici, zod validation
 *   settle/group commit   src/journal/group-commit, sqlite-writer (main side), and journal calls in the send window
 *   finish/report  src/app/finish-file, src/outbox, src/i18n, after the last send
 *   GC / runtime   garbage collector and (program) samples are given to the window they fall in
 */
import { existsSync, readFileSync } from 'node:fs';
import { SourceMap } from 'node:module';
import { fileURLToPath } from 'node:url';

const args = process.argv.slice(2);
const opt = (name, dflt) => {
  const i = args.indexOf(name);
  if (i < 0) return dflt;
  const v = args[i + 1];
  args.splice(i, 2);
  return v;
};
const records = Number(opt('--records', '0'));
const mainCpuS = Number(opt('--main-cpu-s', '0'));
const writerCpuS = Number(opt('--writer-cpu-s', '0'));
const topN = Number(opt('--top', '25'));
const [mainFile, writerFile] = args;
if (!mainFile) {
  process.stderr.write('usage: cpuprofile-summary.mjs MAIN.cpuprofile [WRITER.cpuprofile] [--records N] [--cpu-s S] [--top 25]\n');
  process.exit(2);
}

function load(file) {
  const p = JSON.parse(readFileSync(file, 'utf8'));
  const byId = new Map(p.nodes.map((n) => [n.id, n]));
  const parent = new Map();
  for (const n of p.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
  return { p, byId, parent };
}

const short = (url) =>
  url
    .replace(/^file:\/\//, '')
    .replace(/^.*?\/node_modules\//, 'node_modules/')
    .replace(/^.*?\/dist\//, 'dist/');
const pkgOf = (url) => {
  const m = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(url);
  return m ? m[1] : undefined;
};
const srcOf = (url) => {
  const m = /dist\/src\/(.+)\.js$/.exec(url);
  return m ? m[1] : undefined;
};

/** `dist/src/x.js` line/column (0-based) -> `src/x.ts:line` through the build's source map, when there is one */
const maps = new Map();
function sourceLine(url, line, column) {
  if (!/\/dist\/src\/.+\.js$/.test(url)) return undefined;
  let map = maps.get(url);
  if (map === undefined) {
    const file = `${url.startsWith('file:') ? fileURLToPath(url) : url}.map`;
    map = existsSync(file) ? new SourceMap(JSON.parse(readFileSync(file, 'utf8'))) : null;
    maps.set(url, map);
  }
  const e = map?.findEntry(line, Math.max(0, column));
  if (!e || e.originalSource === undefined) return undefined;
  return `${e.originalSource.replace(/^(\.\.\/)+/, '')}:${e.originalLine + 1}`;
}

/** category of one frame, or undefined when it does not decide (node internals, shared helpers) */
function frameCategory(url) {
  const pkg = pkgOf(url);
  if (pkg === 'undici') return 'client: undici';
  if (pkg === 'zod') return 'client: zod validation';
  if (pkg === 'csv-parse' || pkg === 'iconv-lite') return 'parse';
  if (pkg === 'better-sqlite3') return 'journal';
  if (pkg === 'p-limit' || pkg === 'yocto-queue') return 'send loop';
  if (pkg === 'exceljs' || pkg === 'jszip' || pkg === 'archiver' || pkg === 'zip-stream') return 'finish/report';
  if (pkg === 'yaml' || pkg === 'pino' || pkg === 'chokidar' || pkg === 'pg') return undefined;
  const src = srcOf(url);
  if (!src) return undefined;
  if (src.startsWith('wms/')) return 'client';
  if (src.startsWith('push/')) return 'send loop';
  if (src === 'journal/group-commit' || src === 'journal/sqlite-writer') return 'settle/group commit';
  if (src.startsWith('journal/')) return 'journal';
  if (src.startsWith('parse/')) return 'parse';
  if (src.startsWith('map/') || src === 'app/map-file') return 'map';
  if (src.startsWith('intake/') || src === 'app/scan') return 'claim/hash';
  if (src === 'app/finish-file' || src.startsWith('outbox/')) return 'finish/report';
  if (src.startsWith('config/') || src.startsWith('cli/') || src === 'app/context') return 'start-up';
  return undefined; // app/run, shared/, i18n/: decided by the caller or the window
}

function analyse(file) {
  const { p, byId, parent } = load(file);
  let t = p.startTime;
  const samples = [];
  for (let i = 0; i < p.samples.length; i++) {
    t += p.timeDeltas[i] ?? 0;
    samples.push({ id: p.samples[i], t, dt: p.timeDeltas[i + 1] ?? 0 });
  }
  // the windows: first parse/map sample, first and last send-loop sample
  const stackCats = new Map();
  const catOf = (id) => {
    if (stackCats.has(id)) return stackCats.get(id);
    const cats = [];
    for (let n = id; n !== undefined; n = parent.get(n)) {
      const c = frameCategory(byId.get(n).callFrame.url);
      if (c) cats.push(c);
    }
    // the leaf-most deciding frame, except: undici/zod under the client stay themselves; journal under
    // map-file is the mapped records' insert; journal under push is the send loop's reads
    let c = cats[0];
    if (c === 'journal') c = cats.includes('map') ? 'journal: mapped records' : cats.includes('send loop') ? 'settle/group commit' : 'journal';
    if (c === 'client: zod validation' && !cats.includes('client')) c = cats.find((x) => x !== 'client: zod validation') ?? c;
    stackCats.set(id, c);
    return c;
  };
  let firstMap = Infinity;
  let firstSend = Infinity;
  let lastSend = -Infinity;
  let firstClaim = Infinity;
  for (const s of samples) {
    const c = catOf(s.id);
    if ((c === 'parse' || c === 'map') && s.t < firstMap) firstMap = s.t;
    if (c === 'claim/hash' && s.t < firstClaim) firstClaim = s.t;
    if (c === 'send loop') {
      if (s.t < firstSend) firstSend = s.t;
      lastSend = s.t;
    }
  }
  const startEnd = Math.min(firstClaim, firstMap);
  const windowOf = (t) => (t < startEnd ? 'start-up' : t < firstMap ? 'claim/hash' : t < firstSend ? 'map window' : t <= lastSend ? 'send window' : 'finish/report');
  const phases = new Map();
  const self = new Map();
  const files = new Map();
  let idle = 0;
  let busy = 0;
  for (const s of samples) {
    const n = byId.get(s.id);
    const cf = n.callFrame;
    if (cf.functionName === '(idle)') {
      idle += s.dt;
      continue;
    }
    busy += s.dt;
    let c = catOf(s.id);
    const w = windowOf(s.t);
    const other = (win) => (win === 'map window' ? 'map window: other (run.ts, runtime, GC)' : win === 'send window' ? 'send window: other (node net/http, runtime, GC)' : win);
    if (!c || c === 'journal') {
      c = w === 'map window' ? (c === 'journal' ? 'journal: mapped records' : other(w)) : w === 'send window' ? (c === 'journal' ? 'settle/group commit' : other(w)) : w;
    }
    if (c === 'start-up' && w !== 'start-up' && srcOf(cf.url) === undefined) c = other(w);
    phases.set(c, (phases.get(c) ?? 0) + s.dt);
    const where = cf.url ? sourceLine(cf.url, cf.lineNumber, cf.columnNumber) ?? `${short(cf.url)}:${cf.lineNumber + 1}` : '(native)';
    const key = `${cf.functionName || '(anonymous)'}  ${where}`;
    self.set(key, (self.get(key) ?? 0) + s.dt);
    const fk = pkgOf(cf.url) ? `npm:${pkgOf(cf.url)}` : cf.url ? short(cf.url) : cf.functionName;
    files.set(fk, (files.get(fk) ?? 0) + s.dt);
  }
  return {
    phases,
    self,
    files,
    idle,
    busy,
    wall: samples.length ? samples[samples.length - 1].t - samples[0].t : 0,
    windows: { startUpMs: (startEnd - p.startTime) / 1e3, mapMs: (firstSend - firstMap) / 1e3, sendMs: (lastSend - firstSend) / 1e3, afterMs: (p.endTime - lastSend) / 1e3 },
  };
}

const main = analyse(mainFile);
const writer = writerFile ? analyse(writerFile) : undefined;
const totalBusy = main.busy + (writer?.busy ?? 0);
// CPU microseconds per record of `us` sampled on a thread (its share of that thread's busy samples x its OS CPU)
const cpuUs = (us, thread) => {
  const cpu = thread === 'writer' ? writerCpuS : mainCpuS;
  const busy = thread === 'writer' ? writer?.busy ?? 0 : main.busy;
  return cpu > 0 && busy > 0 && records > 0 ? ((us / busy) * cpu * 1e6) / records : NaN;
};
const toUs = (us, thread = 'main') => {
  const v = cpuUs(us, thread);
  return Number.isNaN(v) ? '' : v.toFixed(1);
};
const ms = (us) => (us / 1e3).toFixed(0);
const pct = (us) => ((100 * us) / totalBusy).toFixed(1);

console.log(`main thread: wall ${ms(main.wall)} ms sampled, busy ${ms(main.busy)} ms, idle ${ms(main.idle)} ms`);
console.log(`windows (main thread): start-up ${main.windows.startUpMs.toFixed(0)} ms, map ${main.windows.mapMs.toFixed(0)} ms, send ${main.windows.sendMs.toFixed(0)} ms, after ${main.windows.afterMs.toFixed(0)} ms`);
if (writer) console.log(`writer thread: busy ${ms(writer.busy)} ms, idle ${ms(writer.idle)} ms`);
console.log(`\n| phase | busy ms | share | CPU us/record |\n|---|---:|---:|---:|`);
const rows = [...main.phases].sort((a, b) => b[1] - a[1]);
for (const [k, v] of rows) console.log(`| ${k} | ${ms(v)} | ${pct(v)} % | ${toUs(v)} |`);
if (writer) console.log(`| journal writer thread (group commits: marks, settles, xref) | ${ms(writer.busy)} | ${pct(writer.busy)} % | ${toUs(writer.busy, 'writer')} |`);
const totalUs = cpuUs(main.busy, 'main') + (writer ? cpuUs(writer.busy, 'writer') : 0);
console.log(`| **total (main${writer ? ' + writer' : ''})** | ${ms(totalBusy)} | 100 % | ${Number.isNaN(totalUs) ? '' : totalUs.toFixed(1)} |`);
if (writer) {
  console.log(`\n| writer thread: self by function | busy ms | share of writer | CPU us/record |\n|---|---:|---:|---:|`);
  [...writer.self]
    .sort((a, b) => b[1] - a[1])
    .slice(0, 10)
    .forEach(([k, v]) => console.log(`| \`${k}\` | ${ms(v)} | ${((100 * v) / writer.busy).toFixed(1)} % | ${toUs(v, 'writer')} |`));
}

const merged = new Map(main.self);
if (writer) for (const [k, v] of writer.self) merged.set(`[writer] ${k}`, (merged.get(`[writer] ${k}`) ?? 0) + v);
console.log(`\n| # | self ms | share | us/record | function  file:line |\n|---:|---:|---:|---:|---|`);
[...merged]
  .sort((a, b) => b[1] - a[1])
  .slice(0, topN)
  .forEach(([k, v], i) => console.log(`| ${i + 1} | ${ms(v)} | ${pct(v)} % | ${toUs(v, k.startsWith('[writer]') ? 'writer' : 'main')} | \`${k}\` |`));
console.log(`\n| self by file / package (main thread) | ms | share |\n|---|---:|---:|`);
[...main.files]
  .sort((a, b) => b[1] - a[1])
  .slice(0, topN)
  .forEach(([k, v]) => console.log(`| ${k} | ${ms(v)} | ${pct(v)} % |`));
