import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { mkdir, open, readdir, readFile, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { makeTempDir } from '../helpers/tmp.js';
import { createAtomicWriteStream, isAtomicTempName, nodeFsLayer, writeFileAtomic, type AtomicFsLayer } from '../../src/outbox/atomic.js';
import { createCsvWriter } from '../../src/outbox/csv.js';
import { BridgeError } from '../../src/shared/errors.js';

let root: string;
let cleanup: () => Promise<void>;
before(async () => ({ dir: root, cleanup } = await makeTempDir()));
after(async () => cleanup());
let n = 0;
async function freshDir(): Promise<string> {
  const d = join(root, `d${n++}`);
  await mkdir(d);
  return d;
}

describe('atomic writes', () => {
  test('writeFileAtomic writes the content and an optional done file after it', async () => {
    const d = await freshDir();
    await writeFileAtomic(join(d, 'a.csv'), 'hello', { doneFile: true });
    assert.equal(await readFile(join(d, 'a.csv'), 'utf8'), 'hello');
    assert.match(await readFile(join(d, 'a.csv.done'), 'utf8'), /^a\.csv 5 [0-9a-f]{64}\n$/);
    assert.deepEqual((await readdir(d)).sort(), ['a.csv', 'a.csv.done']);
  });

  test('the temp file is hidden, in the same folder, and nothing is visible before commit', async () => {
    const d = await freshDir();
    const w = createAtomicWriteStream(join(d, 'r.csv'));
    w.stream.write('partial');
    await new Promise((r) => w.stream.write('', r));
    const names = await readdir(d);
    assert.equal(names.length, 1);
    assert.ok(names[0]!.startsWith('.r.csv.'), names[0]);
    assert.ok(isAtomicTempName(names[0]!));
    assert.ok(!existsSync(join(d, 'r.csv')));
    await w.commit();
    assert.deepEqual(await readdir(d), ['r.csv']);
  });

  test('a reader polling the folder never sees a partial file', async () => {
    const d = await freshDir();
    const target = join(d, 'big.csv');
    const rows = 60_000;
    const line = (i: number): string => `${i};${'x'.repeat(40)}\n`;
    const expectedSize = Array.from({ length: rows }, (_, i) => Buffer.byteLength(line(i))).reduce((a, b) => a + b, 0);
    let done = false;
    let polls = 0;
    let sawTemp = false;
    const bad: string[] = [];
    const poller = (async () => {
      while (!done) {
        for (const name of await readdir(d)) {
          if (name === 'big.csv') {
            const s = await stat(target).catch(() => undefined);
            if (s && s.size !== expectedSize) bad.push(`size ${s.size}`);
          } else if (isAtomicTempName(name)) sawTemp = true;
          else bad.push(`unexpected ${name}`);
        }
        polls++;
        await new Promise((r) => setImmediate(r));
      }
    })();
    const w = createAtomicWriteStream(target);
    for (let i = 0; i < rows; i++) {
      if (!w.stream.write(line(i))) await new Promise((r) => w.stream.once('drain', r));
    }
    await w.commit();
    done = true;
    await poller;
    assert.deepEqual(bad, []);
    assert.ok(polls > 10, `poller ran ${polls} times`);
    assert.ok(sawTemp, 'the poller saw the temp file while writing');
    assert.equal((await stat(target)).size, expectedSize);
  });

  test('abort removes the temp file, nothing appears', async () => {
    const d = await freshDir();
    const w = createAtomicWriteStream(join(d, 'x.csv'));
    w.stream.write('data');
    await w.abort();
    await w.abort();
    assert.deepEqual(await readdir(d), []);
  });

  test('ENOSPC from an injected fs layer: temp removed, E_OUTBOX with the operator message', async () => {
    const d = await freshDir();
    const unlinked: string[] = [];
    const fs: AtomicFsLayer = {
      async open(path, flags, mode) {
        const real = await nodeFsLayer.open(path, flags, mode);
        let written = 0;
        return {
          async write(buf, off, len) {
            if (written + len > 1000) throw Object.assign(new Error('ENOSPC: no space left on device, write'), { code: 'ENOSPC' });
            written += len;
            return real.write(buf, off, len);
          },
          sync: () => real.sync(),
          close: () => real.close(),
        };
      },
      rename: nodeFsLayer.rename,
      unlink: async (p) => {
        unlinked.push(p);
        await nodeFsLayer.unlink(p);
      },
    };
    const target = join(d, 'result-produtos.csv');
    const w = createCsvWriter(target, { columns: ['a'] }, { fs });
    for (let i = 0; i < 2000; i++) w.write({ a: `row ${i}` });
    await assert.rejects(w.close(), (err: unknown) => {
      assert.ok(err instanceof BridgeError);
      assert.equal(err.code, 'E_OUTBOX');
      assert.equal(
        err.message,
        `outbox ${d} is full (ENOSPC) writing result-produtos.csv: nothing was lost, the journal keeps the results; free space and run wmsbridge again: files whose results could not be written stay in work/ and are finished by the next run`,
      );
      return true;
    });
    assert.equal(unlinked.length, 1);
    assert.deepEqual(await readdir(d), []);
  });

  test('/dev/full really fails with ENOSPC and is mapped the same way', { skip: !existsSync('/dev/full') && 'no /dev/full on this system' }, async () => {
    const d = await freshDir();
    const fs: AtomicFsLayer = {
      open: async (path, flags, mode) => {
        // the temp file exists (so abort has something to remove) but the bytes go to /dev/full
        await (await open(path, flags, mode)).close();
        return open('/dev/full', 'w');
      },
      rename: nodeFsLayer.rename,
      unlink: nodeFsLayer.unlink,
    };
    await assert.rejects(writeFileAtomic(join(d, 'out.csv'), Buffer.alloc(200_000, 65), {}, { fs }), (err: unknown) => {
      assert.ok(err instanceof BridgeError);
      assert.equal(err.code, 'E_OUTBOX');
      assert.match(err.message, /is full \(ENOSPC\) writing out\.csv: nothing was lost/);
      return true;
    });
    assert.deepEqual(await readdir(d), []);
  });

  test('other errors are E_OUTBOX naming the file (missing folder)', async () => {
    const d = join(root, 'missing', 'deeper');
    await assert.rejects(writeFileAtomic(join(d, 'x.csv'), 'x'), (err: unknown) => {
      assert.ok(err instanceof BridgeError);
      assert.equal(err.code, 'E_OUTBOX');
      assert.match(err.message, /x\.csv failed: ENOENT/);
      return true;
    });
  });
});
