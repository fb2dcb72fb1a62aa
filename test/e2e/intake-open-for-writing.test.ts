/**
 * openForWriting (intake/safety.ts): which files another process holds open for writing, read from /proc. Real child
 * processes hold real files; the scan must find the writer, ignore a reader, and give the event loop turns while it
 * walks many descriptors (it reads /proc synchronously, OPEN_SCAN_BATCH at a time).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { makeTempDir } from '../helpers/tmp.js';
import { loopTurnsDuring } from '../helpers/loop.js';
import { OPEN_SCAN_BATCH, openForWriting } from '../../src/intake/safety.js';

const linux = process.platform === 'linux';

/** A child that opens `path` with `flags` (`count` times) and says 'ready' on stdout; killed by `stop`. */
async function holder(path: string, flags: 'r' | 'a', count = 1): Promise<{ child: ChildProcess; stop: () => Promise<void> }> {
  const script = `
    const fs = require('node:fs');
    for (let i = 0; i < Number(process.argv[3]); i++) fs.openSync(process.argv[1], process.argv[2]);
    process.stdout.write('ready\\n');
    setInterval(() => {}, 1000);`;
  const child = spawn(process.execPath, ['-e', script, path, flags, String(count)], { stdio: ['ignore', 'pipe', 'inherit'] });
  await new Promise<void>((resolve, reject) => {
    child.once('error', reject);
    child.once('exit', (code) => reject(new Error(`holder exited ${code}`)));
    child.stdout!.once('data', () => resolve());
  });
  return {
    child,
    stop: async () => {
      const exited = new Promise<void>((r) => child.once('exit', () => r()));
      child.kill('SIGKILL');
      await exited;
    },
  };
}

test('a file held open for writing by another process is reported with its pid; one held for reading is not', { skip: !linux }, async () => {
  const { dir, cleanup } = await makeTempDir('open-for-writing-');
  const written = join(dir, 'ESCRITA.csv');
  const read = join(dir, 'LEITURA.csv');
  const idle = join(dir, 'PARADO.csv');
  for (const f of [written, read, idle]) await writeFile(f, 'codigo;nome\n');
  const writer = await holder(written, 'a');
  const reader = await holder(read, 'r');
  try {
    const open = await openForWriting([written, read, idle]);
    assert.deepEqual([...open.keys()], [written]);
    assert.deepEqual(open.get(written), [writer.child.pid]);
  } finally {
    await writer.stop();
    await reader.stop();
  }
  // the writer gone, nothing holds it
  assert.equal((await openForWriting([written])).size, 0);
  await cleanup();
});

test('the scan gives the event loop turns while it walks many descriptors', { skip: !linux }, async () => {
  const { dir, cleanup } = await makeTempDir('open-for-writing-many-');
  const file = join(dir, 'MUITOS.csv');
  await writeFile(file, 'x\n');
  // a reader holding the file 4 batches' worth of times: the scan walks at least that many descriptors
  const reader = await holder(file, 'r', OPEN_SCAN_BATCH * 4);
  try {
    const { value: open, turns } = await loopTurnsDuring(() => openForWriting([file]));
    assert.equal(open.size, 0, 'read-only descriptors are not writers');
    // one turn at least between each batch of descriptors (a scan that never yields gives none)
    assert.ok(turns >= 3, `the event loop turned ${turns} time(s) during the scan`);
  } finally {
    await reader.stop();
    await cleanup();
  }
});
