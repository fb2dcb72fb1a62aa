/**
 * Intake integrity through the CLI (issue 21), against the real sandbox:
 * - a fake root as inbox: only the channel a mapping is bound to is touched; etc/passwd, boot/vmlinuz and a
 *   file no mapping matches stay where they are; symlinks, a hard link, a FIFO, a Latin-1 name and a name
 *   with a newline are refused, each named in the log and the report with why, exit 1; nothing of theirs
 *   reaches the WMS, and no content of a linked file appears in the logs or the outbox;
 * - `run` refuses an inbox that is `/`, a system folder or the state folder (exit 2);
 * - a writer that pauses mid-file (a real child process holding the file open) is not claimed until it
 *   closed it: the WMS gets all 40 rows, never 20.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, execFileSync } from 'node:child_process';
import { existsSync, lstatSync, readdirSync, writeFileSync } from 'node:fs';
import { link, mkdir, readFile, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { makeTempDir, walkFiles as walk } from '../helpers/tmp.js';
import { runCli, type CliResult } from '../helpers/cli.js';
import { startSandbox, sandboxCall, type Sandbox } from '../helpers/sandbox.js';
import { categoryMapping } from '../helpers/fixtures.js';

let sb: Sandbox;
let tmp: { dir: string; cleanup: () => Promise<void> };

const CANARY = 'canary-7e1f-outside-content';

before(async () => {
  sb = await startSandbox({ latencyMs: 0 });
  tmp = await makeTempDir('wmsbridge-intake-integrity-');
});
after(async () => {
  await sb?.close();
  if (process.env.WMSBRIDGE_TEST_KEEP) console.log(`kept ${tmp?.dir}`);
  else await tmp?.cleanup();
});

async function categories(): Promise<string[]> {
  const cats = (await sandboxCall(sb, 'GET', '/__sandbox/state?resource=Category')).json as Array<{ codeERP: string }>;
  return cats.map((c) => c.codeERP);
}

async function setup(name: string, channels?: unknown[]): Promise<{ base: string; args: string[]; env: Record<string, string> }> {
  const base = join(tmp.dir, name);
  await mkdir(join(base, 'mappings'), { recursive: true });
  await writeFile(
    join(base, 'wmsbridge.config.json'),
    JSON.stringify({ ...(channels ? { channels } : {}), wms: { url: sb.url, accessKeyId: sb.accessKeyID, retries: 1 } }),
  );
  const args = [
    '--config',
    join(base, 'wmsbridge.config.json'),
    '--outbox',
    join(base, 'outbox'),
    '--state-dir',
    join(base, 'state'),
    '--mappings',
    join(base, 'mappings'),
  ];
  return { base, args, env: { WMS_SECRET_KEY: sb.secretKey, WMSBRIDGE_LOG_LEVEL: 'info' } };
}

test('a fake root as inbox: only what a mapping claims is touched, links/FIFO/odd names are refused and named', { timeout: 90_000 }, async () => {
  const { base, args, env } = await setup('fakeroot');
  const root = join(base, 'root');
  const cat = join(root, 'cat');
  for (const d of ['etc', 'boot', 'cat']) await mkdir(join(root, d), { recursive: true });
  await mkdir(join(base, 'outside'));
  await writeFile(join(root, 'etc', 'passwd'), `root:x:0:0:${CANARY}:/root:/bin/bash\n`);
  await writeFile(join(root, 'etc', 'hosts'), '127.0.0.1 localhost\n');
  await writeFile(join(root, 'boot', 'vmlinuz'), Buffer.alloc(64, 7));
  await writeFile(join(base, 'outside', 'ext.csv'), `codigo;nome\nEXT1;${CANARY}\n`);
  await writeFile(join(base, 'outside', 'hard.csv'), `codigo;nome\nHARD1;${CANARY}\n`);
  await writeFile(join(base, 'mappings', 'cat.yaml'), categoryMapping({ channel: 'cat', files: '*.csv' }));

  await writeFile(join(cat, 'good.csv'), 'codigo;nome\nGOOD1;Categoria boa\n');
  await writeFile(join(cat, 'notes.txt'), 'not an export\n');
  await symlink(join(base, 'outside', 'ext.csv'), join(cat, 'link.csv'));
  await symlink(join(root, 'etc', 'passwd'), join(cat, 'passwd.csv'));
  await link(join(base, 'outside', 'hard.csv'), join(cat, 'hard.csv'));
  execFileSync('mkfifo', [join(cat, 'fifo.csv')]);
  writeFileSync(Buffer.concat([Buffer.from(`${cat}/S`), Buffer.from([0xe3]), Buffer.from('o.csv')]), `codigo;nome\nLATIN1;${CANARY}\n`);
  await writeFile(join(cat, 'a\nb.csv'), `codigo;nome\nNEWLINE1;${CANARY}\n`);

  const r: CliResult = await runCli(['run', ...args, '--inbox', root], { env, timeoutMs: 60_000 });
  const log = r.stdout + r.stderr;
  assert.equal(r.code, 1, log);

  // nothing outside the channel was moved, and no wmsbridge folder was made there
  for (const p of ['etc/passwd', 'etc/hosts', 'boot/vmlinuz']) assert.ok(existsSync(join(root, p)), `${p} was moved`);
  assert.ok(!existsSync(join(root, 'etc', '.wmsbridge')) && !existsSync(join(root, 'boot', '.wmsbridge')), 'a system folder was treated as a channel');
  // every refused entry is still where it was
  for (const n of ['notes.txt', 'link.csv', 'passwd.csv', 'hard.csv', 'fifo.csv', 'a\nb.csv']) assert.ok(lstatSync(join(cat, n)), `${n} is gone`);
  assert.ok(lstatSync(join(cat, 'link.csv')).isSymbolicLink());
  assert.ok(
    readdirSync(cat, { encoding: 'buffer' }).some((b) => b.includes(0xe3)),
    'the Latin-1 named file is gone',
  );
  assert.ok(!existsSync(join(cat, 'good.csv')), 'the good file was not taken');
  assert.deepEqual((await walk(join(cat, '.wmsbridge', 'error'))).length, 0, 'nothing should go to the error folder');

  // each refusal named in the log with why
  const named: Array<[string, RegExp]> = [
    ['notes.txt', /no mapping matches/],
    ['link.csv', /symbolic link/],
    ['passwd.csv', /symbolic link/],
    ['hard.csv', /hard link/],
    ['fifo.csv', /FIFO/],
    ['S\\\\xe3o.csv', /not UTF-8/],
    ['a\\\\x0ab.csv', /control character/],
  ];
  const lines = log.split('\n');
  for (const [name, why] of named) {
    assert.ok(
      lines.some((l) => l.includes(name) && why.test(l)),
      `no log line names ${name} with ${why}:\n${log}`,
    );
  }
  // ... and in the report
  const summaryPath = (await walk(join(base, 'outbox'))).find((p) => p.endsWith('summary.json'));
  assert.ok(summaryPath, 'no summary.json');
  const summary = JSON.parse(await readFile(summaryPath, 'utf8')) as { skipped?: Array<{ name: string; reason: string }> };
  assert.deepEqual(
    (summary.skipped ?? []).map((s) => s.name).sort(),
    ['S\\xe3o.csv', 'a\\x0ab.csv', 'fifo.csv', 'hard.csv', 'link.csv', 'notes.txt', 'passwd.csv'].sort(),
  );

  // the WMS got the good row only; no content of a refused file in the logs or the outbox
  const codes = await categories();
  assert.ok(codes.includes('GOOD1'));
  for (const c of ['EXT1', 'HARD1', 'LATIN1', 'NEWLINE1']) assert.ok(!codes.includes(c), `${c} was sent`);
  assert.ok(!log.includes(CANARY), 'content of a refused file is in the log');
  for (const p of await walk(join(base, 'outbox'))) assert.ok(!(await readFile(p)).toString('latin1').includes(CANARY), `${p} holds content of a refused file`);
});

test('run refuses an inbox that is /, a system folder or the state folder (exit 2), before touching anything', { timeout: 60_000 }, async () => {
  const { base, args, env } = await setup('refuse');
  // a mapping that matches nothing real: even if the refusal were broken nothing would be claimed
  await writeFile(join(base, 'mappings', 'cat.yaml'), categoryMapping({ channel: 'no-such-channel-zz', files: 'no-such-file-*.zzz' }));
  for (const inbox of ['/', '/etc', join(base, 'state')]) {
    const r = await runCli(['run', '--dry-run', ...args, '--inbox', inbox], { env, timeoutMs: 30_000 });
    assert.equal(r.code, 2, `${inbox}: ${r.stdout}${r.stderr}`);
    assert.match(r.stderr, inbox === join(base, 'state') ? /inboxDir .* is the stateDir folder/ : /a system folder/);
  }
});

test('a writer that pauses mid-file (holding it open) is not claimed half-written', { timeout: 90_000 }, async (t) => {
  const { base, args, env } = await setup('paused', [{ name: 'slow', readiness: { mode: 'stable', checks: 1, intervalMs: 100 } }]);
  const inbox = join(base, 'inbox');
  await mkdir(join(inbox, 'slow'), { recursive: true });
  await writeFile(join(base, 'mappings', 'cat.yaml'), categoryMapping({ channel: 'slow', files: '*.csv' }));
  const file = join(inbox, 'slow', 'PAUSA.csv');
  const rows = (from: number) => Array.from({ length: 20 }, (_, i) => `PAUSA${from + i};Categoria ${from + i}\n`).join('');
  // a real writer: header and 20 rows, then a pause with the file open, 20 more rows. The pause lasts until the test
  // says so on its stdin, after the first run has ended: a pause of a fixed length could end before a run started
  // on a loaded machine had even looked at the file
  const script = `
    const fs = require('node:fs');
    const fd = fs.openSync(process.argv[1], 'w');
    fs.writeSync(fd, 'codigo;nome\\n' + process.argv[2]);
    fs.fsyncSync(fd);
    process.stdout.write('half\\n');
    process.stdin.once('data', () => { fs.writeSync(fd, process.argv[3]); fs.closeSync(fd); process.exit(0); });`;
  const writer = spawn(process.execPath, ['-e', script, file, rows(1), rows(21)], { stdio: ['pipe', 'pipe', 'inherit'] });
  const exited = new Promise<number | null>((res) => writer.on('exit', (c) => res(c)));
  t.after(() => void (writer.exitCode === null && writer.signalCode === null && writer.kill('SIGKILL'))); // a failed assertion leaves it waiting
  await new Promise<void>((res) => writer.stdout!.once('data', () => res()));

  const first = await runCli(['run', ...args, '--inbox', inbox, '--max-wait-ms', '1500'], { env, timeoutMs: 60_000 });
  const log1 = first.stdout + first.stderr;
  assert.ok(existsSync(file), `the file being written was claimed:\n${log1}`);
  assert.match(log1, /PAUSA\.csv.*open for writing by another process \(pid \d+\)|open for writing by another process \(pid \d+\).*PAUSA\.csv/);
  assert.ok(!(await categories()).some((c) => c.startsWith('PAUSA')), 'rows of a half-written file were sent');

  writer.stdin!.end('go\n'); // the writer finishes the file and closes it
  assert.equal(await exited, 0);
  const second = await runCli(['run', ...args, '--inbox', inbox, '--max-wait-ms', '5000'], { env, timeoutMs: 60_000 });
  assert.equal(second.code, 0, second.stdout + second.stderr);
  const sent = (await categories()).filter((c) => c.startsWith('PAUSA'));
  assert.equal(sent.length, 40);
  const archived = (await walk(join(inbox, 'slow', '.wmsbridge', 'archive'))).find((p) => p.endsWith('PAUSA.csv'));
  assert.ok(archived);
  assert.equal((await readFile(archived, 'utf8')).trim().split('\n').length, 41);
});

test(
  "every failure names its file: an alias bomb is its mapping's error (the others run), deep JSON/XML are refused with the line, the file named as dropped",
  { timeout: 90_000 },
  async () => {
    const { base, args, env } = await setup('names');
    const inbox = join(base, 'inbox');
    for (const c of ['cat', 'js', 'xm', 'bomb']) await mkdir(join(inbox, c), { recursive: true });
    await writeFile(join(base, 'mappings', 'cat.yaml'), categoryMapping({ channel: 'cat', files: '*.csv' }));
    await writeFile(
      join(base, 'mappings', 'js.yaml'),
      `name: js\nmatch: { channel: js, files: "*.json" }\nsource: { format: json, itemPath: items }\ntarget: Category\nfields:\n  codeERP: { path: codigo }\n  name: { path: nome }\n`,
    );
    await writeFile(
      join(base, 'mappings', 'xm.yaml'),
      `name: xm\nmatch: { channel: xm, files: "*.xml" }\nsource: { format: xml, itemPath: cats/cat }\ntarget: Category\nfields:\n  codeERP: { path: codigo }\n  name: { path: nome }\n`,
    );
    const lol = ['a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]'];
    for (let i = 1; i < 9; i++)
      lol.push(
        `${String.fromCharCode(97 + i)}: &${String.fromCharCode(97 + i)} [${Array(9)
          .fill(`*${String.fromCharCode(96 + i)}`)
          .join(',')}]`,
      );
    await writeFile(join(base, 'mappings', 'bomb.yaml'), `name: bomb\nmatch: { channel: bomb, files: "*.csv" }\n${lol.join('\n')}\n`);

    await writeFile(join(inbox, 'cat', 'NAMES_OK.csv'), 'codigo;nome\nNAMES1;Categoria\n');
    await writeFile(join(inbox, 'bomb', 'B.csv'), 'codigo;nome\nBOMB1;Categoria\n');
    await writeFile(
      join(inbox, 'js', 'deep.json'),
      `{"items": [\n  {"codigo": "JS1", "nome": "a"},\n  {"codigo": "JS2", "nome": "b", "x": ${'['.repeat(200_000)}${']'.repeat(200_000)}}\n]}\n`,
    );
    await writeFile(
      join(inbox, 'xm', 'deep.xml'),
      `<?xml version="1.0"?>\n<cats>\n<cat><codigo>XM1</codigo><nome>a</nome></cat>\n<cat><codigo>XM2</codigo><nome>b</nome>${'<n>'.repeat(100_000)}${'</n>'.repeat(100_000)}</cat>\n</cats>\n`,
    );

    const r = await runCli(['run', ...args, '--inbox', inbox], { env, timeoutMs: 60_000 });
    const log = r.stdout + r.stderr;
    assert.equal(r.code, 2, log);
    assert.doesNotMatch(log, /Maximum call stack|RangeError| {4}at /, 'a stack overflow or a stack trace reached the output');
    assert.match(log, /bomb\.yaml.*alias/i);
    // the other mappings ran; the bomb's file stayed where it was
    const codes = await categories();
    assert.ok(codes.includes('NAMES1'), log);
    assert.ok(existsSync(join(inbox, 'bomb', 'B.csv')));
    assert.ok(!codes.includes('BOMB1') && !codes.includes('JS1') && !codes.includes('XM1'));
    for (const [ch, name, re] of [
      ['js', 'deep.json', /^problem: +deep\.json:3: JSON nests deeper than 100/m],
      ['xm', 'deep.xml', /^problem: +deep\.xml:4: XML nests deeper than 100/m],
    ] as const) {
      const reason = (await walk(join(inbox, ch, '.wmsbridge', 'error'))).find((p) => p.endsWith(`${name}.reason.txt`));
      assert.ok(reason, `${name} not in the error folder:\n${log}`);
      const text = await readFile(reason, 'utf8');
      assert.match(text, re);
      assert.doesNotMatch(text, /\.wmsbridge[/\\]work/, 'the reason names the work path instead of the file as dropped');
    }
  },
);

test(
  'bytes that are not text: a NUL after the first 8 KB and a tab inside a fixed-width field are row rejects naming line and field',
  { timeout: 90_000 },
  async () => {
    const { base, args, env } = await setup('bytes');
    const inbox = join(base, 'inbox');
    for (const c of ['cat', 'fixed']) await mkdir(join(inbox, c), { recursive: true });
    await writeFile(join(base, 'mappings', 'cat.yaml'), categoryMapping({ channel: 'cat', files: '*.csv' }));
    await writeFile(
      join(base, 'mappings', 'fixed.yaml'),
      `name: fixed
match: { channel: fixed, files: "*.txt" }
source:
  format: fixed-width
  records:
    - { type: detail, match: { start: 1, value: '1' }, fields: [{ name: tipo, start: 1, length: 1 }, { name: codigo, start: 2, length: 5 }, { name: nome, start: 7, length: 30 }] }
target: Category
fields:
  codeERP: { field: codigo, transforms: [trim] }
  name: { field: nome, transforms: [trim] }
`,
    );
    const filler = Array.from({ length: 800 }, (_, i) => `BYTES${i};Categoria ${i}`).join('\n');
    await writeFile(join(inbox, 'cat', 'NUL8K.csv'), `codigo;nome\n${filler}\nNULROW;Nome com\u0000NUL\n`);
    await writeFile(join(inbox, 'fixed', 'TABS.txt'), '1FX1  Categoria boa\n1FX2  Categoria\tcom tab\n');

    const r = await runCli(['run', ...args, '--inbox', inbox], { env, timeoutMs: 60_000 });
    const log = r.stdout + r.stderr;
    assert.equal(r.code, 1, log);
    const codes = await categories();
    assert.ok(codes.includes('BYTES799') && codes.includes('FX1'), 'the clean rows were sent');
    assert.ok(!codes.includes('NULROW') && !codes.includes('FX2'), 'a row with a NUL or a tab was sent');
    const rejects = await walk(join(base, 'outbox', 'rejects'));
    const nul = rejects.find((p) => p.includes('NUL8K'));
    const tab = rejects.find((p) => p.includes('TABS'));
    assert.ok(nul && tab, `rejects files: ${rejects.join(', ')}`);
    assert.match(await readFile(nul, 'latin1'), /linha 802: o valor da coluna nome tem um caractere de controle/);
    assert.match(await readFile(tab, 'utf8'), /linha 2: o valor da coluna nome tem um caractere de controle/);
    // the originals are archived untouched
    assert.ok((await walk(join(inbox, 'cat', '.wmsbridge', 'archive'))).some((p) => p.endsWith('NUL8K.csv')));
  },
);

test(
  'a file written again after its claim is not half-delivered: its records are withdrawn, the file goes to error, exit 1',
  { timeout: 120_000 },
  async () => {
    const { appendFile } = await import('node:fs/promises');
    const { base, args, env } = await setup('changed', [{ name: 'big', readiness: { mode: 'stable', checks: 1, intervalMs: 100 } }]);
    const inbox = join(base, 'inbox');
    await mkdir(join(inbox, 'big'), { recursive: true });
    await writeFile(join(base, 'mappings', 'cat.yaml'), categoryMapping({ channel: 'big', files: '*.csv' }));
    // big enough that mapping it into the journal takes a while after the claim
    const rows = Array.from({ length: 30_000 }, (_, i) => `CHG${i};Categoria ${i}`).join('\n');
    await writeFile(join(inbox, 'big', 'CHANGED.csv'), `codigo;nome\n${rows}\n`);

    const running = runCli(['run', ...args, '--inbox', inbox], { env, timeoutMs: 100_000 });
    // a writer that reopens the file where wmsbridge moved it (same inode) and goes on writing, once the
    // claim is done and mapping has begun (its first records are in the journal)
    const { default: Database } = await import('better-sqlite3');
    const work = join(inbox, 'big', '.wmsbridge', 'work');
    const dbPath = join(base, 'state', 'journal.db');
    let appended = false;
    const deadline = Date.now() + 60_000;
    while (!appended && Date.now() < deadline) {
      const claimed = existsSync(work) ? readdirSync(work).find((n) => n.endsWith('CHANGED.csv')) : undefined;
      let mapping = false;
      if (claimed && existsSync(dbPath)) {
        try {
          const db = new Database(dbPath, { readonly: true, fileMustExist: true });
          mapping = (db.prepare('SELECT COUNT(*) AS n FROM records').get() as { n: number }).n > 0;
          db.close();
        } catch {
          mapping = false; // schema not there yet
        }
      }
      if (claimed && mapping) {
        await appendFile(join(work, claimed), 'CHGLATE;Escrita depois\n');
        appended = true;
      } else await new Promise((r) => setTimeout(r, 5)); // poll interval: the claim and the journal have no push to a watcher
    }
    assert.ok(appended, 'the file was never claimed');
    const r = await running;
    const log = r.stdout + r.stderr;
    assert.equal(r.code, 1, log);
    assert.match(log, /"file":"CHANGED\.csv"[^\n]*"change":"its size went from \d+ to \d+ bytes"[^\n]*file changed after it was claimed/);
    const codes = await categories();
    assert.ok(!codes.some((c) => c.startsWith('CHG')), 'records of a file that changed were sent');
    const reason = (await walk(join(inbox, 'big', '.wmsbridge', 'error'))).find((p) => p.endsWith('CHANGED.csv.reason.txt'));
    assert.ok(reason, log);
    assert.match(await readFile(reason, 'utf8'), /its size went from \d+ to \d+ bytes.*None of its records were sent/);
    // the original (with what the writer added) is kept
    assert.match(await readFile(reason.replace(/\.reason\.txt$/, ''), 'utf8'), /CHGLATE;Escrita depois\n$/);
  },
);

test(
  'one message per problem: an NF-e of 2,000 items with the same bad quantity is one reason, not 2,000 (nor 2,000 squared)',
  { timeout: 90_000 },
  async () => {
    const { PROJECT_ROOT } = await import('../helpers/cli.js');
    const { copyFile } = await import('node:fs/promises');
    const { base, args, env } = await setup('nfe', [{ name: 'notas', readiness: { mode: 'stable', checks: 1, intervalMs: 10 } }]);
    const inbox = join(base, 'inbox');
    await mkdir(join(inbox, 'notas'), { recursive: true });
    await copyFile(join(PROJECT_ROOT, 'mappings', 'notas-fiscais.yaml'), join(base, 'mappings', 'notas-fiscais.yaml'));
    const src = await readFile(join(PROJECT_ROOT, 'inbox', 'notas', 'NFe35241112345678000195550010000077311192837461.xml'), 'utf8');
    const det = /<det [\s\S]*?<\/det>/.exec(src)![0].replace(/<qCom>[^<]*<\/qCom>/, '<qCom>abc</qCom>');
    const dets = Array.from({ length: 2000 }, (_, k) => det.replace(/nItem="\d+"/, `nItem="${k + 1}"`)).join('');
    const doc = (src.slice(0, src.indexOf('<det ')) + dets + src.slice(src.lastIndexOf('</det>') + 6)).replace(/\n/g, '');
    await writeFile(join(inbox, 'notas', 'NFe_2000.xml'), doc);

    const r = await runCli(['run', ...args, '--inbox', inbox], { env, timeoutMs: 60_000 });
    const log = r.stdout + r.stderr;
    assert.equal(r.code, 1, log);
    const listing = (await walk(join(base, 'outbox', 'rejects'))).find((p) => p.endsWith('.errors.txt'));
    assert.ok(listing, log);
    const text = await readFile(listing, 'utf8');
    assert.equal(text.trim().split('\n').length, 1, 'one line for the one rejected document');
    // in the outbox's language, naming the source paths the mapping reads (quantity: qLote, else qCom)
    assert.match(
      text,
      /^linha 1: o valor das colunas prod\/rastro\/qLote, prod\/qCom não é um número \(valor "abc"; campo purchaseOrderItens\[0\]\.quantity no WMS\) \(e mais 1\.999 problemas, em prod\/rastro\/qLote, prod\/qCom\)\n$/,
    );
    assert.doesNotMatch(text, /line 1: line 1:|linha 1: linha 1:/);
    assert.ok(log.length < 20_000, `the log is ${log.length} characters`);
  },
);
