import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { mkdir, open, readdir, readFile, rename, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { makeTempDir } from '../helpers/tmp.js';
import { createInboxWatcher, type InboxWatcher, type ChannelWatchSpec } from '../../src/intake/watcher.js';
import { claimFile, dayFolder } from '../../src/intake/claim.js';
import type { ReadyFile } from '../../src/intake/types.js';
import { silentLogger } from '../../src/shared/logger.js';

const logger = silentLogger();

/**
 * An ERP writing slowly: `chunks` writes `everyMs` apart. `firstChunk` resolves once the first chunk is on disk (the
 * file present, half-written); `done` with the time the file was complete.
 */
function slowWrite(path: string, chunks: number, everyMs: number): { firstChunk: Promise<void>; done: Promise<{ completeAt: number; size: number }> } {
  let wrote!: () => void;
  const firstChunk = new Promise<void>((r) => (wrote = r));
  const done = (async () => {
    const fh = await open(path, 'w');
    let size = 0;
    try {
      for (let i = 0; i < chunks; i++) {
        const line = `${i};${'x'.repeat(100)}\n`;
        await fh.write(line);
        size += line.length;
        if (i === 0) wrote();
        if (i < chunks - 1) await new Promise((r) => setTimeout(r, everyMs)); // the ERP's pace, not a wait for a condition
      }
    } finally {
      await fh.close();
    }
    return { completeAt: Date.now(), size };
  })();
  return { firstChunk, done };
}

/** Resolves with the first 'ready-file' matching, or rejects after timeoutMs. */
function nextReady(w: InboxWatcher, match: (f: ReadyFile) => boolean, timeoutMs = 15_000): Promise<ReadyFile & { at: number }> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      w.off('ready-file', on);
      reject(new Error(`no ready-file within ${timeoutMs} ms`));
    }, timeoutMs);
    const on = (f: ReadyFile): void => {
      if (!match(f)) return;
      clearTimeout(timer);
      w.off('ready-file', on);
      resolve({ ...f, at: Date.now() });
    };
    w.on('ready-file', on);
  });
}

describe('inbox watcher', () => {
  let tmp: { dir: string; cleanup: () => Promise<void> };
  const watchers: InboxWatcher[] = [];
  before(async () => {
    tmp = await makeTempDir('wmsbridge-watch-');
  });
  after(async () => {
    await Promise.all(watchers.map((w) => w.close()));
    await tmp.cleanup();
  });
  async function channelDir(...parts: string[]): Promise<string> {
    const d = join(tmp.dir, ...parts);
    await mkdir(d, { recursive: true });
    return d;
  }
  function make(channels: ChannelWatchSpec[], extra: Partial<Parameters<typeof createInboxWatcher>[0]> = {}): InboxWatcher {
    const w = createInboxWatcher({ channels, ...extra }, { logger });
    watchers.push(w);
    return w;
  }

  test('scanOnce: a file half-written at start-up is reported only once complete', async () => {
    const dir = await channelDir('scan-slow', 'produtos');
    const path = join(dir, 'produtos.csv');
    const writing = slowWrite(path, 8, 200);
    await writing.firstChunk; // the file is present, half-written
    const w = make([{ name: 'produtos', dir, readiness: { mode: 'stable', checks: 3, intervalMs: 150 } }], { maxWaitMs: 10_000 });
    const ready = await w.scanOnce();
    const { completeAt, size } = await writing.done;
    assert.equal(ready.length, 1);
    assert.equal(ready[0]?.size, size, 'the full file');
    assert.ok(Date.now() >= completeAt);
    assert.equal(ready[0]?.channel, 'produtos');
    assert.equal(ready[0]?.path, path);
  });

  test('scan: a file that never settles within maxWaitMs is skipped and reported', async () => {
    const dir = await channelDir('scan-max', 'c');
    const writing = slowWrite(join(dir, 'big.csv'), 10, 100);
    // the first chunk must be on disk: a 0-byte file is reported as empty, not as still being written
    await writing.firstChunk;
    const w = make([{ name: 'c', dir, readiness: { mode: 'stable', checks: 3, intervalMs: 150 } }], { maxWaitMs: 400 });
    const report = await w.scan();
    await writing.done;
    assert.deepEqual(report.ready, []);
    assert.equal(report.waiting.length, 1);
    assert.match(report.waiting[0]?.reason ?? '', /not ready within 400 ms, skipped this run/);
  });

  test('watch: a slowly written file is reported once, only after it is complete (present at start-up too)', async () => {
    const dir = await channelDir('watch-slow', 'pedidos');
    const early = slowWrite(join(dir, 'early.csv'), 6, 200);
    await early.firstChunk; // present, half-written, when the watcher starts
    const w = make([{ name: 'pedidos', dir, readiness: { mode: 'stable', checks: 3, intervalMs: 150 } }], { rescanIntervalMs: 60_000 });
    const seen: ReadyFile[] = [];
    w.on('ready-file', (f) => seen.push(f));
    const earlyReady = nextReady(w, (f) => f.name === 'early.csv');
    await w.start();
    const lateReady = nextReady(w, (f) => f.name === 'late.csv');
    const late = slowWrite(join(dir, 'late.csv'), 6, 200);
    const [e, l, eDone, lDone] = await Promise.all([earlyReady, lateReady, early.done, late.done]);
    assert.equal(e.size, eDone.size);
    assert.ok(e.at >= eDone.completeAt);
    assert.equal(l.size, lDone.size);
    assert.ok(l.at >= lDone.completeAt);
    await w.close();
    assert.equal(seen.filter((f) => f.name === 'early.csv').length, 1, 'reported once');
  });

  test('marker channel waits for <name>.done; the marker is never data', async () => {
    const dir = await channelDir('marker', 'notas');
    await writeFile(join(dir, 'nf1.xml'), '<nfe/>');
    const w = make([{ name: 'notas', dir, readiness: { mode: 'marker' } }]);
    const first = await w.scan();
    assert.deepEqual(first.ready, []);
    assert.match(first.waiting[0]?.reason ?? '', /waiting for marker nf1\.xml\.done/);
    await writeFile(join(dir, 'nf1.xml.done'), '');
    await writeFile(join(dir, 'empty.xml'), '');
    await writeFile(join(dir, 'empty.xml.done'), '');
    const second = await w.scan();
    assert.deepEqual(second.ready.map((f) => [f.name, f.markers.map((m) => m.slice(dir.length + 1))]).sort(), [
      ['empty.xml', ['empty.xml.done']],
      ['nf1.xml', ['nf1.xml.done']],
    ]);
    assert.equal(second.ready.find((f) => f.name === 'empty.xml')?.size, 0, 'an empty file with a marker is processed as empty input');
  });

  test('watch: a marker written later is found by the channel poll even without events or rescans', async () => {
    const dir = await channelDir('marker-watch', 'c');
    await writeFile(join(dir, 'pedido.txt'), 'x');
    const w = make([{ name: 'c', dir, readiness: { mode: 'marker', intervalMs: 100 } }], {
      usePolling: true,
      pollIntervalMs: 600_000,
      rescanIntervalMs: 600_000,
    });
    let early = 0;
    w.on('ready-file', () => early++);
    await w.start();
    assert.equal(early, 0, 'no marker yet');
    const got = nextReady(w, (f) => f.name === 'pedido.txt', 10_000);
    await writeFile(join(dir, 'pedido.txt.done'), '');
    assert.deepEqual((await got).markers, [join(dir, 'pedido.txt.done')]);
  });

  test('batch trigger releases the files present; the trigger is consumed and archived', async () => {
    const dir = await channelDir('batch', 'lote');
    await writeFile(join(dir, 'a.csv'), 'a');
    await writeFile(join(dir, 'b.csv'), 'b');
    const w = make([{ name: 'lote', dir, readiness: { mode: 'marker', batchTriggers: ['LOTE.OK'], intervalMs: 100 } }], { rescanIntervalMs: 60_000 });
    const got: string[] = [];
    w.on('ready-file', (f) => got.push(f.name));
    await w.start();
    assert.equal(got.length, 0, 'nothing released before the trigger');
    const both = Promise.all([nextReady(w, (f) => f.name === 'a.csv'), nextReady(w, (f) => f.name === 'b.csv')]);
    await writeFile(join(dir, 'LOTE.OK'), '');
    const [a] = await both;
    assert.equal(a.trigger, join(dir, 'LOTE.OK'));
    const archived = join(dir, '.wmsbridge', 'archive', dayFolder(new Date()), 'LOTE.OK');
    const deadline = Date.now() + 10_000;
    while (!existsSync(archived) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20)); // poll interval of a wait on the file
    assert.equal(existsSync(archived), true, 'trigger archived');
    assert.equal(existsSync(join(dir, 'LOTE.OK')), false);
    await w.close();
    assert.equal(got.includes('LOTE.OK'), false);
  });

  test('rename channel ignores *.tmp and takes the final name', async () => {
    const dir = await channelDir('rename', 'saldo');
    await writeFile(join(dir, 'saldo.txt.tmp'), 'partial');
    await writeFile(join(dir, '~saldo.txt'), 'lock');
    const w = make([{ name: 'saldo', dir, readiness: { mode: 'rename', intervalMs: 100 } }], { maxWaitMs: 2000 });
    assert.deepEqual(await w.scan(), { ready: [], empty: [], waiting: [], errors: [], refused: [] });
    await rename(join(dir, 'saldo.txt.tmp'), join(dir, 'saldo.txt'));
    const ready = await w.scanOnce();
    assert.deepEqual(
      ready.map((f) => f.name),
      ['saldo.txt'],
    );
  });

  test('0-byte file under stable: waits within the grace, then goes to the error folder with a reason', async () => {
    const dir = await channelDir('empty', 'c');
    await writeFile(join(dir, 'zero.csv'), '');
    const quick = make([{ name: 'c', dir, readiness: { mode: 'stable', checks: 1, intervalMs: 50, emptyFileGraceMs: 60_000 } }]);
    const r1 = await quick.scan();
    assert.deepEqual(r1.ready, []);
    assert.match(r1.waiting[0]?.reason ?? '', /empty file/);
    assert.equal(existsSync(join(dir, 'zero.csv')), true, 'within the grace: left alone');
    const w = make([{ name: 'c', dir, readiness: { mode: 'stable', checks: 1, intervalMs: 50, emptyFileGraceMs: 200 } }], { rescanIntervalMs: 60_000 });
    const empties: string[] = [];
    const emptied = new Promise<void>((res) =>
      w.on('empty-file', (r) => {
        empties.push(r.errorPath ?? '');
        res();
      }),
    );
    await w.start();
    await emptied;
    assert.equal(existsSync(join(dir, 'zero.csv')), false);
    const errDir = join(dir, '.wmsbridge', 'error', dayFolder(new Date()));
    assert.deepEqual((await readdir(errDir)).sort(), ['zero.csv', 'zero.csv.reason.txt']);
    assert.match(await readFile(join(errDir, 'zero.csv.reason.txt'), 'utf8'), /empty file: 0 bytes/);
    assert.equal(empties[0], join(errDir, 'zero.csv'));
  });

  test('usePolling: a new file is picked up by the polling events (no rescan)', async () => {
    const dir = await channelDir('polling', 'c');
    const w = make([{ name: 'c', dir, readiness: { mode: 'stable', checks: 1, intervalMs: 100 } }], {
      usePolling: true,
      pollIntervalMs: 100,
      rescanIntervalMs: 600_000,
    });
    await w.start();
    const got = nextReady(w, (f) => f.name === 'novo.csv', 10_000);
    await writeFile(join(dir, 'novo.csv'), 'data');
    assert.equal((await got).size, 4);
  });

  test('the periodic rescan finds a file created while events were off', async () => {
    const dir = await channelDir('rescan', 'c');
    // polling every 10 minutes: no event will arrive during this test; only the rescan can find the file
    const w = make([{ name: 'c', dir, readiness: { mode: 'stable', checks: 1, intervalMs: 100 } }], {
      usePolling: true,
      pollIntervalMs: 600_000,
      rescanIntervalMs: 300,
    });
    await w.start();
    const got = nextReady(w, (f) => f.name === 'missed.csv', 10_000);
    await writeFile(join(dir, 'missed.csv'), 'data');
    assert.equal((await got).name, 'missed.csv');
  });

  test('a channel folder that is missing (share down) is a warning, and is picked up when it comes back', async () => {
    const base = await channelDir('share');
    const dir = join(base, 'mnt');
    const w = make([{ name: 'share', dir, readiness: { mode: 'stable', checks: 1, intervalMs: 100 } }], {
      usePolling: true,
      pollIntervalMs: 600_000,
      rescanIntervalMs: 200,
    });
    const report = await w.scan();
    assert.equal(report.errors.length, 1);
    assert.match(report.errors[0]?.message ?? '', /ENOENT/);
    await w.start();
    const got = nextReady(w, (f) => f.name === 'back.csv', 10_000);
    await mkdir(dir);
    await writeFile(join(dir, 'back.csv'), 'data');
    assert.equal((await got).channel, 'share');
  });

  test('ready files are re-reported by the rescan while not claimed; claimed ones are not', async () => {
    const dir = await channelDir('rereport', 'c');
    await writeFile(join(dir, 'a.csv'), 'a');
    const w = make([{ name: 'c', dir, readiness: { mode: 'stable', checks: 1, intervalMs: 50 } }], { rescanIntervalMs: 250 });
    let count = 0;
    const twice = new Promise<ReadyFile>((res) =>
      w.on('ready-file', (f) => {
        if (++count === 2) res(f);
      }),
    );
    await w.start();
    const f = await twice;
    const claimed = await claimFile(f);
    assert.ok(claimed);
    assert.equal(await claimFile(f), null, 'a second report of a claimed file loses the claim harmlessly');
  });

  test('patterns, ignore globs, subfolders and the .wmsbridge folder are not data', async () => {
    const dir = await channelDir('filter', 'c');
    await mkdir(join(dir, 'sub'));
    await writeFile(join(dir, 'sub', 'deep.csv'), 'x');
    await writeFile(join(dir, 'a.csv'), 'x');
    await writeFile(join(dir, 'b.xml'), 'x');
    await writeFile(join(dir, 'c.csv.part'), 'x');
    await writeFile(join(dir, '.hidden.csv'), 'x');
    await mkdir(join(dir, '.wmsbridge', 'work'), { recursive: true });
    await writeFile(join(dir, '.wmsbridge', 'work', 'w.csv'), 'x');
    const w = make([{ name: 'c', dir, patterns: ['*.csv'], readiness: { mode: 'stable', checks: 1, intervalMs: 50 } }]);
    assert.deepEqual(
      (await w.scanOnce()).map((f) => f.name),
      ['a.csv'],
    );
  });

  test('a sub-folder is named as not taken, unless the channel reads files from it (its attachments folder)', async () => {
    const dir = await channelDir('attachments', 'p');
    await mkdir(join(dir, 'anexos'));
    await writeFile(join(dir, 'anexos', 'ETIQUETA.txt'), 'x');
    const spec = { name: 'p', dir, readiness: { mode: 'stable' as const, checks: 1, intervalMs: 50 } };
    const plain = await make([spec]).scan();
    assert.deepEqual(
      plain.refused.map((r) => [r.name, r.kind]),
      [['anexos', 'folder']],
    );
    const withAttachments = await make([{ ...spec, readsFolder: (n: string) => n === 'anexos' }]).scan();
    assert.deepEqual(withAttachments.refused, []);
  });
});
