import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdir, readdir, readFile, rename, stat, writeFile } from 'node:fs/promises';
import { basename, join } from 'node:path';
import { makeTempDir } from '../helpers/tmp.js';
import {
  archiveFile,
  claimFile,
  dayFolder,
  listClaimedLeftovers,
  moveToError,
  resolveChannelFolders,
  type ClaimedFile,
  type IntakeFs,
} from '../../src/intake/claim.js';
import type { ReadyFile } from '../../src/intake/types.js';

const sha = (s: string | Buffer): string => createHash('sha256').update(s).digest('hex');
const errno = (code: string): NodeJS.ErrnoException => Object.assign(new Error(`${code}: simulated`), { code });

async function drop(dir: string, name: string, content: string | Buffer, markers: string[] = []): Promise<ReadyFile> {
  await mkdir(dir, { recursive: true });
  await writeFile(join(dir, name), content);
  for (const m of markers) await writeFile(join(dir, m), '');
  const st = await stat(join(dir, name));
  return { channel: basename(dir), dir, path: join(dir, name), name, size: st.size, mtimeMs: st.mtimeMs, markers: markers.map((m) => join(dir, m)) };
}

describe('claim', () => {
  let tmp: { dir: string; cleanup: () => Promise<void> };
  before(async () => {
    tmp = await makeTempDir('wmsbridge-claim-');
  });
  after(async () => {
    await tmp.cleanup();
  });

  test('moves the original into <inbox>/.wmsbridge/work with a timestamp prefix, hashed', async () => {
    const inbox = join(tmp.dir, 'c1', 'produtos');
    const content = 'codigo;nome\n1;Arroz\n';
    const ready = await drop(inbox, 'produtos.csv', content);
    const now = new Date('2026-11-22T01:02:03.456Z');
    const c = await claimFile(ready, { now: () => now });
    assert.ok(c);
    assert.equal(c.workPath, join(inbox, '.wmsbridge', 'work', '20261122T010203456Z-produtos.csv'));
    assert.equal(existsSync(ready.path), false, 'the original was moved, not copied');
    assert.equal(await readFile(c.workPath, 'utf8'), content);
    assert.equal(c.sha256, sha(content));
    assert.equal(c.size, Buffer.byteLength(content));
    assert.equal(c.name, 'produtos.csv');
    assert.equal(c.channel, 'produtos');
    assert.equal(c.originalPath, ready.path);
    assert.equal(c.claimedAt, now.toISOString());
    assert.deepEqual(c.folders, resolveChannelFolders(inbox));
  });

  test('race: two concurrent claimers, exactly one wins (20 rounds)', async () => {
    const inbox = join(tmp.dir, 'race', 'pedidos');
    for (let round = 0; round < 20; round++) {
      const ready = await drop(inbox, `p${round}.csv`, `round ${round}\n`);
      const results = await Promise.all([claimFile(ready), claimFile(ready)]);
      const winners = results.filter((r): r is ClaimedFile => r !== null);
      assert.equal(winners.length, 1, `round ${round}`);
      assert.equal(await readFile(winners[0]!.workPath, 'utf8'), `round ${round}\n`);
    }
    assert.equal((await readdir(join(inbox, '.wmsbridge', 'work'))).length, 20, 'no duplicate copies in work');
  });

  test('EXDEV: copy + fsync + verify + unlink of the source', async () => {
    const inbox = join(tmp.dir, 'exdev', 'notas');
    const content = Buffer.alloc(300_000, 7);
    const ready = await drop(inbox, 'nf.xml', content, ['nf.xml.done']);
    let exdevs = 0;
    const fs: Partial<IntakeFs> = {
      rename: async (from, to) => {
        // only the first cross-folder move fails; the copy's own same-folder rename works
        if (!basename(from).startsWith('.') && exdevs++ < 2) throw errno('EXDEV');
        await rename(from, to);
      },
    };
    const c = await claimFile(ready, { fs });
    assert.ok(c);
    assert.equal(exdevs >= 1, true);
    assert.equal(existsSync(ready.path), false, 'source removed after the verified copy');
    assert.equal(c.sha256, sha(content));
    assert.deepEqual(await readFile(c.workPath), content);
    assert.equal(c.markers.length, 1);
    assert.equal(existsSync(join(inbox, 'nf.xml.done')), false, 'the marker moved along');
    const leftovers = (await readdir(join(inbox, '.wmsbridge', 'work'))).filter((n) => n.startsWith('.'));
    assert.deepEqual(leftovers, [], 'no temp file left');
  });

  test('EXDEV race: the claimer whose unlink fails with ENOENT drops its copy', async () => {
    const inbox = join(tmp.dir, 'exdev-race', 'c');
    const ready = await drop(inbox, 'a.csv', 'x\n');
    const fs: Partial<IntakeFs> = {
      rename: async (from, to) => {
        if (!basename(from).startsWith('.')) throw errno('EXDEV');
        await rename(from, to);
      },
      unlink: async () => {
        throw errno('ENOENT');
      },
    };
    assert.equal(await claimFile(ready, { fs }), null);
    assert.deepEqual(await readdir(join(inbox, '.wmsbridge', 'work')), []);
    assert.equal(existsSync(ready.path), true, 'the source is untouched');
  });

  test('EBUSY: retried with backoff, then left for the next scan; succeeds when it frees up', async () => {
    const inbox = join(tmp.dir, 'busy', 'c');
    const ready = await drop(inbox, 'a.csv', 'x\n');
    let calls = 0;
    const alwaysBusy: Partial<IntakeFs> = {
      rename: async () => {
        calls++;
        throw errno('EBUSY');
      },
    };
    let gone = 0;
    assert.equal(await claimFile(ready, { fs: alwaysBusy, busyRetries: 2, busyBaseDelayMs: 5, onGone: () => gone++ }), null);
    assert.equal(calls, 3);
    assert.equal(gone, 0, 'busy is not gone: nobody else claimed it');
    assert.equal(existsSync(ready.path), true);
    let n = 0;
    const busyTwice: Partial<IntakeFs> = {
      rename: async (from, to) => {
        if (n++ < 2) throw errno(n === 1 ? 'EPERM' : 'EACCES');
        await rename(from, to);
      },
    };
    const c = await claimFile(ready, { fs: busyTwice, busyRetries: 3, busyBaseDelayMs: 5 });
    assert.ok(c);
    assert.equal(existsSync(c.workPath), true);
  });

  test('a file already gone (another instance claimed it) -> null', async () => {
    const inbox = join(tmp.dir, 'gone', 'c');
    const ready = await drop(inbox, 'a.csv', 'x\n');
    await rename(ready.path, join(inbox, 'elsewhere'));
    let gone = 0;
    assert.equal(await claimFile(ready, { onGone: () => gone++ }), null);
    assert.equal(gone, 1, 'the caller is told the file is gone (a run then waits to help with it)');
  });

  test('archiveFile: <archive>/YYYY-MM-DD/<name>, markers along, collisions suffixed', async () => {
    const inbox = join(tmp.dir, 'arch', 'c');
    const date = new Date(2026, 10, 22, 12, 0, 0);
    const paths: string[] = [];
    for (const body of ['one\n', 'two\n', 'three\n']) {
      const c = await claimFile(await drop(inbox, 'pedidos.csv', body, ['pedidos.csv.done']));
      assert.ok(c);
      paths.push(await archiveFile(c, date));
    }
    const day = join(inbox, '.wmsbridge', 'archive', dayFolder(date));
    assert.deepEqual(paths, [join(day, 'pedidos.csv'), join(day, 'pedidos-2.csv'), join(day, 'pedidos-3.csv')]);
    assert.equal(await readFile(paths[0]!, 'utf8'), 'one\n');
    assert.equal(await readFile(paths[2]!, 'utf8'), 'three\n');
    assert.deepEqual((await readdir(day)).sort(), [
      'pedidos-2.csv',
      'pedidos-2.csv.done',
      'pedidos-3.csv',
      'pedidos-3.csv.done',
      'pedidos.csv',
      'pedidos.csv.done',
    ]);
    assert.deepEqual(await readdir(join(inbox, '.wmsbridge', 'work')), [], 'work folder emptied');
  });

  test('moveToError writes <name>.reason.txt: what, when, which run, how to retry', async () => {
    const inbox = join(tmp.dir, 'err', 'estoque');
    const c = await claimFile(await drop(inbox, 'saldo.txt', 'garbage'));
    assert.ok(c);
    const date = new Date('2026-11-22T10:00:00.000Z');
    const { path, reasonPath } = await moveToError(c, 'line 1: unknown record type "ga"', { runId: 'run-42', date });
    assert.equal(path, join(inbox, '.wmsbridge', 'error', dayFolder(date), 'saldo.txt'));
    assert.equal(reasonPath, `${path}.reason.txt`);
    assert.equal(await readFile(path, 'utf8'), 'garbage');
    const reason = await readFile(reasonPath, 'utf8');
    assert.match(reason, /line 1: unknown record type "ga"/);
    assert.match(reason, /2026-11-22T10:00:00\.000Z/);
    assert.match(reason, /run-42/);
    assert.match(reason, /fix the file and drop it again into inbox\/estoque/);
    assert.match(reason, new RegExp(c.sha256));
  });

  test('configurable folders override the defaults', async () => {
    const inbox = join(tmp.dir, 'over', 'c');
    const work = join(tmp.dir, 'over-work');
    const c = await claimFile(await drop(inbox, 'a.csv', 'x'), { workDir: work, archiveDir: join(tmp.dir, 'over-arch') });
    assert.ok(c);
    assert.equal(basename(c.workPath).endsWith('-a.csv'), true);
    assert.equal(c.workPath.startsWith(work), true);
    const archived = await archiveFile(c, new Date());
    assert.equal(archived.startsWith(join(tmp.dir, 'over-arch')), true);
  });

  test('listClaimedLeftovers finds what an interrupted run left in work, with markers', async () => {
    const inbox = join(tmp.dir, 'left', 'produtos');
    assert.deepEqual(await listClaimedLeftovers(join(inbox, '.wmsbridge', 'work')), []);
    const a = await claimFile(await drop(inbox, 'a.csv', 'aaa', ['a.csv.done']), { now: () => new Date('2026-11-22T00:00:01.000Z') });
    const b = await claimFile(await drop(inbox, 'b.csv', 'bbb'), { now: () => new Date('2026-11-22T00:00:02.000Z') });
    assert.ok(a && b);
    const left = await listClaimedLeftovers(join(inbox, '.wmsbridge', 'work'));
    assert.deepEqual(
      left.map((l) => [l.name, l.channel, l.sha256, l.markers.length, l.claimedAt, l.originalPath]),
      [
        ['a.csv', 'produtos', sha('aaa'), 1, '2026-11-22T00:00:01.000Z', join(inbox, 'a.csv')],
        ['b.csv', 'produtos', sha('bbb'), 0, '2026-11-22T00:00:02.000Z', join(inbox, 'b.csv')],
      ],
    );
    assert.deepEqual(left[0]?.folders, resolveChannelFolders(inbox));
  });
});

test('changedSinceClaim: a file written after its claim is caught by size, mtime or sha256', async () => {
  const tmp = await makeTempDir('wmsbridge-claim-changed-');
  try {
    const { appendFile, utimes } = await import('node:fs/promises');
    const { changedSinceClaim } = await import('../../src/intake/claim.js');
    const inbox = join(tmp.dir, 'produtos');
    const c = await claimFile(await drop(inbox, 'p.csv', 'codigo;nome\n1;Arroz\n'));
    assert.ok(c);
    assert.equal(await changedSinceClaim(c), null, 'an untouched file is unchanged');
    // a writer that went on appending into the claimed file (same inode, now in work/)
    await appendFile(c.workPath, '2;Feijao\n');
    assert.match((await changedSinceClaim(c)) ?? '', /size went from 20 to 29 bytes/);
    // same size rewritten, mtime put back: only the hash tells
    const c2 = await claimFile(await drop(inbox, 'q.csv', 'codigo;nome\n1;Arroz\n'));
    assert.ok(c2);
    const st = await stat(c2.workPath);
    await writeFile(c2.workPath, 'codigo;nome\n1;Arroy\n');
    await utimes(c2.workPath, st.atime, st.mtime);
    assert.match((await changedSinceClaim(c2)) ?? '', /content changed/);
  } finally {
    await tmp.cleanup();
  }
});

test('work, archive and error folders are never created under a channel folder that is gone (unmounted share)', async () => {
  const { mkdirUnderShareRoot } = await import('../../src/intake/claim.js');
  const { makeTempDir } = await import('../helpers/tmp.js');
  const { stat: st } = await import('node:fs/promises');
  const { join: j } = await import('node:path');
  const t = await makeTempDir();
  try {
    const gone = j(t.dir, 'share', 'cadastros');
    await assert.rejects(mkdirUnderShareRoot(j(gone, '.wmsbridge', 'archive', '2026-01-01')), /share unmounted\?/);
    await assert.rejects(st(j(t.dir, 'share')), /ENOENT/, 'nothing created');
    const { mkdir: mk } = await import('node:fs/promises');
    await mk(gone, { recursive: true });
    await mkdirUnderShareRoot(j(gone, '.wmsbridge', 'archive', '2026-01-01'));
    assert.ok((await st(j(gone, '.wmsbridge', 'archive', '2026-01-01'))).isDirectory());
  } finally {
    await t.cleanup();
  }
});
