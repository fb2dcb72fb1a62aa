import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, utimesSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL, fileURLToPath } from 'node:url';
import { hostname } from 'node:os';
import { makeTempDir } from '../helpers/tmp.js';
import { PROJECT_ROOT } from '../helpers/cli.js';
import { acquireStateLock, LOCK_FILE } from '../../src/journal/state-lock.js';
import { ErrorCode } from '../../src/shared/errors.js';
import type { Logger } from '../../src/shared/logger.js';

const fromTs = fileURLToPath(import.meta.url).endsWith('.ts');
const lockModule = fromTs ? join(PROJECT_ROOT, 'src/journal/state-lock.ts') : join(PROJECT_ROOT, 'dist/src/journal/state-lock.js');

function captureLogger(): { logger: Logger; warnings: string[] } {
  const warnings: string[] = [];
  const logger = { warn: (_o: unknown, msg: string) => warnings.push(msg), info: () => {}, debug: () => {} } as unknown as Logger;
  return { logger, warnings };
}

const isLocked = (re: RegExp) => (e: { code?: string; message: string }) => {
  assert.equal(e.code, ErrorCode.LOCKED);
  assert.match(e.message, re);
  return true;
};

describe('state lock', () => {
  let tmp: { dir: string; cleanup: () => Promise<void> };
  before(async () => {
    tmp = await makeTempDir('wmsbridge-lock-');
  });
  after(async () => {
    await tmp.cleanup();
  });

  test('a second holder is refused with who holds it; release frees it', async () => {
    const state = join(tmp.dir, 'a', 'state');
    const lock = await acquireStateLock(state, { command: 'watch' });
    const content = JSON.parse(readFileSync(join(state, LOCK_FILE), 'utf8')) as { pid: number; host: string; command: string; startedAt: string };
    assert.equal(content.pid, process.pid);
    assert.equal(content.host, hostname());
    assert.equal(content.command, 'watch');
    await assert.rejects(
      acquireStateLock(state, { command: 'run' }),
      isLocked(
        new RegExp(
          `^state folder .*state is in use by \`wmsbridge watch\` \\(pid ${process.pid}, since \\d{4}-\\d\\d-\\d\\dT[^)]*\\); stop it or use another --state-dir$`,
        ),
      ),
    );
    lock.release();
    lock.release(); // idempotent
    assert.equal(existsSync(join(state, LOCK_FILE)), false);
    const again = await acquireStateLock(state, { command: 'run' });
    again.release();
  });

  test('release never removes a lock that is not ours', async () => {
    const state = join(tmp.dir, 'b');
    const lock = await acquireStateLock(state, { command: 'watch' });
    const foreign = { pid: process.pid, host: hostname(), command: 'run', startedAt: new Date().toISOString(), token: 'someone-else' };
    writeFileSync(join(state, LOCK_FILE), JSON.stringify(foreign));
    lock.release();
    assert.equal(existsSync(join(state, LOCK_FILE)), true);
  });

  test('a lock held on another host is refused and names the host', async () => {
    const state = join(tmp.dir, 'c');
    await acquireStateLock(state, { command: 'x' }).then((l) => l.release());
    writeFileSync(
      join(state, LOCK_FILE),
      JSON.stringify({ pid: 1, host: 'other-host.example', command: 'watch', startedAt: '2026-01-01T00:00:00.000Z', token: 't' }),
    );
    await assert.rejects(
      acquireStateLock(state, { command: 'run' }),
      isLocked(/in use by `wmsbridge watch` on host other-host\.example \(pid 1, since 2026-01-01/),
    );
  });

  test('an unreadable lock: refused while fresh, taken over once old', async () => {
    const state = join(tmp.dir, 'd');
    await acquireStateLock(state, { command: 'x' }).then((l) => l.release());
    const path = join(state, LOCK_FILE);
    writeFileSync(path, '{"pid":12');
    await assert.rejects(acquireStateLock(state, { command: 'run' }), isLocked(/being written/));
    const old = new Date(Date.now() - 60_000);
    utimesSync(path, old, old);
    const { logger, warnings } = captureLogger();
    const lock = await acquireStateLock(state, { command: 'run', logger });
    assert.equal(warnings.length, 1);
    assert.match(warnings[0] ?? '', /unreadable/);
    lock.release();
  });

  test('a start killed before its lock appeared leaves only its own file: removed, and the next start takes the lock at once', async () => {
    const state = join(tmp.dir, 'f');
    await acquireStateLock(state, { command: 'x' }).then((l) => l.release());
    // a process that wrote its lock under its own name and was killed before linking it to the lock's name
    const dead = spawnSync(process.execPath, ['-e', '0']).pid!;
    const leftover = join(state, `${LOCK_FILE}.${dead}.0123456789abcdef`);
    const takeoverLeftover = join(state, `${LOCK_FILE}.takeover.${dead}.fedcba9876543210`);
    const info = { pid: dead, host: hostname(), command: 'run', startedAt: 'x', token: '0123456789abcdef' };
    writeFileSync(leftover, JSON.stringify(info));
    writeFileSync(takeoverLeftover, JSON.stringify({ ...info, token: 'fedcba9876543210' }));
    // another host's, on a shared state folder: its pid means nothing here; kept while fresh, removed once old
    const elsewhere = join(state, `${LOCK_FILE}.${dead}.00000000000000bb`);
    const elsewhereOld = join(state, `${LOCK_FILE}.${dead}.00000000000000cc`);
    writeFileSync(elsewhere, JSON.stringify({ ...info, host: 'elsewhere' }));
    writeFileSync(elsewhereOld, '');
    const old = new Date(Date.now() - 60_000);
    utimesSync(elsewhereOld, old, old);
    const { logger, warnings } = captureLogger();
    const lock = await acquireStateLock(state, { command: 'run', logger });
    assert.equal(warnings.length, 0, 'nothing stale to take over: the lock never existed');
    assert.deepEqual(readdirSync(state).sort(), [LOCK_FILE, `${LOCK_FILE}.${dead}.00000000000000bb`], 'the leftovers are gone but a fresh one of another host');
    // the lock appears with its content: never empty, never half written
    const held = JSON.parse(readFileSync(join(state, LOCK_FILE), 'utf8')) as { pid: number; token: string };
    assert.equal(held.pid, process.pid);
    assert.equal(held.token, lock.info.token);
    // a live process's own file is not touched
    const mine = join(state, `${LOCK_FILE}.${process.pid}.00000000000000aa`);
    writeFileSync(mine, '');
    lock.release();
    await acquireStateLock(state, { command: 'run' }).then((l) => l.release());
    assert.equal(existsSync(mine), true);
  });

  test('a lock left by a process killed with SIGKILL is taken over', async () => {
    const state = join(tmp.dir, 'e', 'state');
    const code = [
      'const { acquireStateLock } = await import(process.argv[1]);',
      "await acquireStateLock(process.argv[2], { command: 'watch' });",
      "process.stdout.write('locked\\n');",
      'setInterval(() => {}, 1000);',
    ].join('\n');
    const args = [...(fromTs ? ['--import', 'tsx'] : []), '--input-type=module', '-e', code, pathToFileURL(lockModule).href, state];
    const child = spawn(process.execPath, args, { stdio: ['ignore', 'pipe', 'pipe'] });
    let stderr = '';
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    try {
      await new Promise<void>((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`child did not take the lock in time: ${stderr}`)), 30_000);
        child.stdout.on('data', (d: Buffer) => {
          if (d.toString().includes('locked')) {
            clearTimeout(timer);
            resolve();
          }
        });
        child.on('exit', (c) => {
          clearTimeout(timer);
          reject(new Error(`child exited ${c}: ${stderr}`));
        });
      });
      await assert.rejects(acquireStateLock(state, { command: 'run' }), isLocked(new RegExp(`\`wmsbridge watch\` \\(pid ${child.pid},`)));
    } finally {
      const exited = new Promise((r) => child.once('exit', r));
      child.kill('SIGKILL');
      await exited;
    }
    assert.equal(existsSync(join(state, LOCK_FILE)), true, 'kill -9 leaves the lock behind');
    const { logger, warnings } = captureLogger();
    const lock = await acquireStateLock(state, { command: 'run', logger });
    assert.equal(lock.info.pid, process.pid);
    assert.equal(warnings.length, 1);
    assert.match(warnings[0] ?? '', new RegExp(`taking over a stale lock: pid ${child.pid} \\(\`wmsbridge watch\``));
    lock.release();
  });
});
