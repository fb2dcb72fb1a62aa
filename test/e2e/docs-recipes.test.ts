/**
 * The README's operating recipes run as written (issue 42): the systemd units are taken out of the README,
 * checked by `systemd-analyze verify` and enabled with `systemctl --root` in a scratch root (the timer without
 * an [Install] section could not be enabled); no recipe runs a bare `npx wmsbridge` (it fetches a package of
 * that name from the public registry where the project is not installed). Skipped, with the reason, where
 * systemd's tools are not installed.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { lstat, mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { makeTempDir } from '../helpers/tmp.js';
import { PROJECT_ROOT } from '../helpers/cli.js';

const ANALYZE = ['/usr/bin/systemd-analyze', '/bin/systemd-analyze'].find((p) => existsSync(p));
const SYSTEMCTL = ['/usr/bin/systemctl', '/bin/systemctl'].find((p) => existsSync(p));
const noAnalyze = ANALYZE ? false : 'systemd-analyze not installed: the README units not verified (apt-get install -y systemd)';
const noSystemctl = SYSTEMCTL ? false : 'systemctl not installed: enabling the README units not tried (apt-get install -y systemd)';

let dir: string;
let cleanup: () => Promise<void>;
let readme: string;
before(async () => {
  ({ dir, cleanup } = await makeTempDir());
  readme = await readFile(join(PROJECT_ROOT, 'README.md'), 'utf8');
});
after(async () => cleanup());

/** The README's "## Nightly operation" section. */
function nightly(): string {
  const start = readme.indexOf('## Nightly operation');
  assert.ok(start >= 0, 'README has a "Nightly operation" section');
  const end = readme.indexOf('\n## ', start + 1);
  return readme.slice(start, end < 0 ? undefined : end);
}

/** The units of the README's systemd block: file name -> text (split on the "# /etc/systemd/system/<name>" lines). */
function readmeUnits(): Map<string, string> {
  const section = nightly();
  const block = /\*\*systemd\*\*[\s\S]*?```ini\n([\s\S]*?)```/.exec(section);
  assert.ok(block, 'the systemd recipe has an ini block');
  const units = new Map<string, string>();
  let name: string | undefined;
  for (const line of block[1]!.split('\n')) {
    const head = /^# \/etc\/systemd\/system\/(\S+)/.exec(line);
    if (head) name = head[1]!;
    else if (name) units.set(name, `${units.get(name) ?? ''}${line}\n`);
  }
  return units;
}

function exec(cmd: string, args: string[]): Promise<{ code: number | null; out: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(cmd, args, { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr.on('data', (d: Buffer) => (out += d.toString()));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, out }));
  });
}

/**
 * Writes the units into `root`/etc/systemd/system. The README's /usr/bin/node and /opt/wmsbridge/bin/wmsbridge.mjs
 * become this machine's node and this checkout's bin (systemd-analyze checks that ExecStart's program exists).
 */
async function writeUnits(root: string): Promise<string[]> {
  const unitDir = join(root, 'etc', 'systemd', 'system');
  await mkdir(unitDir, { recursive: true });
  const paths: string[] = [];
  for (const [name, text] of readmeUnits()) {
    const local = text.replaceAll('/usr/bin/node', process.execPath).replaceAll('/opt/wmsbridge/bin/wmsbridge.mjs', join(PROJECT_ROOT, 'bin', 'wmsbridge.mjs'));
    await writeFile(join(unitDir, name), local);
    paths.push(join(unitDir, name));
  }
  return paths;
}

test('the systemd units: a timer that can be enabled, services that wait for the network and run as their own user', () => {
  const units = readmeUnits();
  assert.deepEqual([...units.keys()].sort(), ['wmsbridge-run.service', 'wmsbridge-run.timer', 'wmsbridge.service']);
  assert.match(units.get('wmsbridge-run.timer')!, /\[Install\]\nWantedBy=timers\.target\n/);
  for (const name of ['wmsbridge.service', 'wmsbridge-run.service']) {
    const u = units.get(name)!;
    assert.match(u, /^Wants=network-online\.target$/m, name);
    assert.match(u, /^After=network-online\.target/m, name);
    assert.match(u, /^User=wmsbridge$/m, name);
    assert.match(u, /^ExecStart=\/usr\/bin\/node \/opt\/wmsbridge\/bin\/wmsbridge\.mjs /m, name);
  }
  assert.ok(existsSync(join(PROJECT_ROOT, 'bin', 'wmsbridge.mjs')), 'the bin the recipes start');
  // the user's rights on the share are explained next to the units
  assert.match(nightly(), /uid=wmsbridge,gid=wmsbridge/);
});

test('no recipe runs a bare `npx wmsbridge`; the Task Scheduler recipe covers the share and the logon', () => {
  const section = nightly();
  // the commands: code blocks and inline commands (`npx wmsbridge` alone is the prose naming what not to do)
  const code = [...section.matchAll(/```[a-z]*\n([\s\S]*?)```/g)].map((m) => m[1]!);
  const inline = [...section.replace(/```[\s\S]*?```/g, '').matchAll(/`([^`\n]+)`/g)].map((m) => m[1]!).filter((c) => c !== 'npx wmsbridge');
  const bare = [...code, ...inline].filter((c) => /\bnpx (?!--no-install\b)wmsbridge\b/.test(c));
  assert.deepEqual(bare, []);
  assert.ok(
    inline.some((c) => c.startsWith('cmd /c') && c.includes('node bin\\wmsbridge.mjs run')),
    'the Task Scheduler command',
  );
  const prose = section.replace(/\s+/g, ' ');
  assert.match(prose, /Run whether user is logged on or not/);
  assert.match(prose, /\\\\erp-server\\exports\\wms/);
  assert.match(prose, /needs \*\*Modify\*\* on the share/);
});

test('systemd-analyze verify accepts the README units as written', { skip: noAnalyze, timeout: 60_000 }, async () => {
  const files = await writeUnits(join(dir, 'verify'));
  const r = await exec(ANALYZE!, ['verify', '--man=no', ...files]);
  assert.equal(r.code, 0, r.out);
  assert.equal(r.out.trim(), '', 'no warning either');
});

test(
  'systemctl enables the README timer and daemon (symlinks in timers.target.wants and multi-user.target.wants)',
  { skip: noSystemctl, timeout: 60_000 },
  async () => {
    const root = join(dir, 'root');
    await writeUnits(root);
    const r = await exec(SYSTEMCTL!, [`--root=${root}`, 'enable', 'wmsbridge-run.timer', 'wmsbridge.service']);
    assert.equal(r.code, 0, r.out);
    assert.doesNotMatch(r.out, /no installation config/);
    for (const link of ['timers.target.wants/wmsbridge-run.timer', 'multi-user.target.wants/wmsbridge.service']) {
      assert.ok((await lstat(join(root, 'etc', 'systemd', 'system', link))).isSymbolicLink(), link);
    }
  },
);
