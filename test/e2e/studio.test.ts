/**
 * `wmsbridge studio`: its security rules, each on the real server over 127.0.0.1 (token, Host, Origin, paths,
 * bind address), and its API (files, grid, draft, preview of an edit, save then check).
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, request } from 'node:http';
import { copyFile, mkdir, readdir, readFile, symlink, writeFile } from 'node:fs/promises';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { makeTempDir } from '../helpers/tmp.js';
import { PROJECT_ROOT, spawnCli, runCli } from '../helpers/cli.js';
import { startStudio, type Studio } from '../../src/studio/server.js';
import { openStudio } from '../../src/app/studio.js';
import { generateMappingJsonSchema } from '../../src/map/json-schema.js';

const SAMPLE = join(PROJECT_ROOT, 'test', 'fixtures', 'infer', 'SB1_PRODUTOS_20241105.csv');

interface Answer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: string;
}

/** One HTTP request with the headers given as they are (Host included), to 127.0.0.1:port. */
function http(port: number, path: string, o: { method?: string; headers?: Record<string, string>; body?: string } = {}): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, path, method: o.method ?? 'GET', headers: { host: `127.0.0.1:${port}`, ...o.headers } }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (d: string) => (body += d));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body }));
    });
    req.on('error', reject);
    if (o.body !== undefined) req.write(o.body);
    req.end();
  });
}

let dir: string;
let cleanup: () => Promise<void>;
let ws: { inbox: string; mappings: string; config: string; outside: string };
let studio: Studio;
const auth = () => ({ 'x-studio-token': studio.token });
const post = (path: string, body: unknown, headers: Record<string, string> = {}) =>
  http(studio.port, path, { method: 'POST', headers: { ...auth(), 'content-type': 'application/json', ...headers }, body: JSON.stringify(body) });

before(async () => {
  ({ dir, cleanup } = await makeTempDir('wmsbridge-studio-'));
  ws = { inbox: join(dir, 'inbox'), mappings: join(dir, 'mappings'), config: join(dir, 'wmsbridge.config.yaml'), outside: join(dir, 'outside') };
  await mkdir(join(ws.inbox, 'cadastros'), { recursive: true });
  await mkdir(ws.mappings, { recursive: true });
  await mkdir(ws.outside, { recursive: true });
  await copyFile(SAMPLE, join(ws.inbox, 'cadastros', 'SB1_PRODUTOS_20241105.csv'));
  await writeFile(join(dir, 'secret.txt'), 'not for the studio\n');
  await writeFile(
    ws.config,
    `inboxDir: ${ws.inbox}\noutboxDir: ${join(dir, 'outbox')}\nstateDir: ${join(dir, 'state')}\nmappingsDir: ${ws.mappings}\nwms:\n  url: sandbox\n`,
  );
  studio = await openStudio({ path: ws.inbox, configFile: ws.config });
});
after(async () => {
  await studio?.close();
  await cleanup();
});

// ---- security -----------------------------------------------------------------------------------------------

test('the studio binds 127.0.0.1 by default', () => {
  const a = studio.server.address();
  assert.ok(a && typeof a === 'object');
  assert.equal(a.address, '127.0.0.1');
  assert.match(studio.openUrl, /^http:\/\/127\.0\.0\.1:\d+\/\?token=[A-Za-z0-9_-]{43}$/);
});

test('a non-loopback --host is refused (exit 2), and the CLI prints a URL on 127.0.0.1 with a token', async () => {
  const refused = await runCli(['studio', ws.inbox, '--host', '0.0.0.0', '--config', ws.config], { timeoutMs: 60_000 });
  assert.equal(refused.code, 2, refused.stderr);
  assert.match(refused.stderr, /loopback/);
  const child = spawnCli(['studio', ws.inbox, '--config', ws.config]);
  try {
    const url = await new Promise<string>((resolve, reject) => {
      let out = '';
      child.stdout!.on('data', (d: Buffer) => {
        out += d.toString();
        const m = /http:\/\/\S+/.exec(out);
        if (m) resolve(m[0]);
      });
      child.on('close', (code) => reject(new Error(`studio exited ${code} before printing its URL`)));
    });
    const u = new URL(url);
    assert.equal(u.hostname, '127.0.0.1');
    const token = u.searchParams.get('token')!;
    assert.ok(token.length >= 32);
    const files = await http(Number(u.port), '/api/files', { headers: { host: u.host, 'x-studio-token': token } });
    assert.equal(files.status, 200);
    assert.equal((await http(Number(u.port), '/api/files', { headers: { host: u.host } })).status, 401);
  } finally {
    child.kill('SIGTERM');
    await new Promise((r) => child.once('close', r));
  }
});

test('every request needs the token: none 401, wrong 403 (page, assets, API)', async () => {
  for (const path of ['/', '/assets/studio.js', '/api/files', '/api/schema']) {
    assert.equal((await http(studio.port, path)).status, 401, path);
    assert.equal((await http(studio.port, path, { headers: { 'x-studio-token': 'x'.repeat(43) } })).status, 403, path);
    assert.equal((await http(studio.port, path, { headers: { cookie: `wmsbridge_studio=${'y'.repeat(43)}` } })).status, 403, path);
    assert.equal((await http(studio.port, `${path}${path.includes('?') ? '&' : '?'}token=nope`)).status, 403, path);
  }
  const bad = await post('/api/save', { name: 'x.yaml', text: 'name: x' }, { 'x-studio-token': 'nope' });
  assert.equal(bad.status, 403);
  assert.equal(existsSync(join(ws.mappings, 'x.yaml')), false);
});

test('the URL token sets an HttpOnly SameSite=Strict cookie and leaves the URL; the cookie then opens the page', async () => {
  const first = await http(studio.port, `/?token=${studio.token}`);
  assert.equal(first.status, 303);
  assert.equal(first.headers.location, '/');
  const cookie = String(first.headers['set-cookie']);
  assert.match(cookie, /^wmsbridge_studio=[A-Za-z0-9_-]+; HttpOnly; SameSite=Strict; Path=\//);
  const pageRes = await http(studio.port, '/', { headers: { cookie: cookie.split(';')[0]! } });
  assert.equal(pageRes.status, 200);
  assert.match(pageRes.body, /<script src="\/assets\/studio\.js">/);
  assert.match(String(pageRes.headers['content-security-policy']), /script-src 'self'/);
  const js = await http(studio.port, '/assets/studio.js', { headers: { cookie: cookie.split(';')[0]! } });
  assert.equal(js.status, 200, 'dist/studio-web/studio.js is built by npm run build');
  assert.ok(js.body.length > 100_000, `the bundle holds CodeMirror (${js.body.length} bytes)`);
  assert.doesNotMatch(js.body, /https?:\/\/(cdn|unpkg|esm\.sh)/, 'the page loads nothing from the network');
});

test('a Host that is not this studio is refused (DNS rebinding): 421, even with the token', async () => {
  for (const host of ['evil.example:80', `evil.example:${studio.port}`, `127.0.0.1.nip.io:${studio.port}`, '127.0.0.1', `127.0.0.1:${studio.port + 1}`]) {
    const r = await http(studio.port, '/api/files', { headers: { ...auth(), host } });
    assert.equal(r.status, 421, host);
  }
  assert.equal((await http(studio.port, '/api/files', { headers: { ...auth(), host: `localhost:${studio.port}` } })).status, 200);
});

test('a cross-site Origin is refused (403), the same origin is accepted', async () => {
  const text = 'irrelevant';
  for (const origin of ['http://evil.example', `http://localhost:${studio.port + 1}`, 'null', `https://127.0.0.1:${studio.port}`]) {
    const r = await post('/api/save', { name: 'cross.yaml', text }, { origin });
    assert.equal(r.status, 403, origin);
  }
  const site = await post('/api/save', { name: 'cross.yaml', text }, { 'sec-fetch-site': 'cross-site' });
  assert.equal(site.status, 403);
  assert.equal(existsSync(join(ws.mappings, 'cross.yaml')), false);
  const same = await http(studio.port, '/api/files', { headers: { ...auth(), origin: `http://127.0.0.1:${studio.port}` } });
  assert.equal(same.status, 200);
});

test('save refuses path traversal and any name outside the mappings folder; nothing is written', async () => {
  const valid = await readFile(join(PROJECT_ROOT, 'mappings', 'produtos.yaml'), 'utf8');
  const before = new Set(await readdir(dir));
  for (const name of [
    '../x.yaml',
    '../../etc/x.yaml',
    '/tmp/x.yaml',
    'sub/x.yaml',
    '..\\x.yaml',
    '.hidden.yaml',
    'x.txt',
    'x.yaml/..',
    '',
    'x..yaml',
    'x.yaml\u0000.json',
  ]) {
    const r = await post('/api/save', { name, text: valid });
    assert.equal(r.status, 403, `${JSON.stringify(name)}: ${r.body}`);
  }
  const r = await post('/api/save', { name: { toString: 'x.yaml' }, text: valid });
  assert.equal(r.status, 403);
  assert.deepEqual(new Set(await readdir(dir)), before);
  assert.deepEqual(await readdir(ws.mappings), []);
});

test('save does not write through a symbolic link out of the mappings folder, nor a text that is not a mapping', async () => {
  const valid = await readFile(join(PROJECT_ROOT, 'mappings', 'produtos.yaml'), 'utf8');
  const target = join(ws.outside, 'owned.yaml');
  await writeFile(target, 'original\n');
  await symlink(target, join(ws.mappings, 'link.yaml'));
  try {
    const r = await post('/api/save', { name: 'link.yaml', text: valid });
    assert.equal(r.status, 422, r.body);
    assert.equal(await readFile(target, 'utf8'), 'original\n');
  } finally {
    await (await import('node:fs/promises')).unlink(join(ws.mappings, 'link.yaml'));
  }
  const notMapping = await post('/api/save', { name: 'notes.yaml', text: 'just: a note\n' });
  assert.equal(notMapping.status, 422);
  assert.equal(existsSync(join(ws.mappings, 'notes.yaml')), false);
});

test('the studio reads only the files it was given: another path is 404, never read', async () => {
  for (const file of ['../secret.txt', join(dir, 'secret.txt'), '/etc/passwd', 'cadastros/../../secret.txt']) {
    const r = await post('/api/preview', { file, text: 'name: x' });
    assert.equal(r.status, 404, file);
    assert.doesNotMatch(r.body, /not for the studio/);
    const d = await http(studio.port, `/api/draft?file=${encodeURIComponent(file)}`, { headers: auth() });
    assert.equal(d.status, 404, file);
  }
});

test('a bound studio serves a file given alone, and only it', async () => {
  const alone = await startStudio({ root: SAMPLE, mappingsDir: ws.mappings, schema: () => ({}) });
  try {
    const r = await http(alone.port, '/api/files', { headers: { host: `127.0.0.1:${alone.port}`, 'x-studio-token': alone.token } });
    const files = (JSON.parse(r.body) as { files: Array<{ id: string }> }).files;
    assert.deepEqual(
      files.map((f) => f.id),
      ['SB1_PRODUTOS_20241105.csv'],
    );
  } finally {
    await alone.close();
  }
});

// ---- API ----------------------------------------------------------------------------------------------------

const FILE = 'cadastros/SB1_PRODUTOS_20241105.csv';

test('files: the folder with each file, its mapping and state', async () => {
  const r = await http(studio.port, '/api/files', { headers: auth() });
  assert.equal(r.status, 200);
  const j = JSON.parse(r.body) as { files: Array<{ id: string; state: string; channel: string }> };
  assert.deepEqual(j.files, [{ id: FILE, channel: 'cadastros', state: 'unmapped' }]);
});

test("the grid: decoded as infer sniffs it, each column with infer's type, confidence, evidence and examples", async () => {
  const r = await post('/api/sample', { file: FILE });
  assert.equal(r.status, 200, r.body);
  const g = JSON.parse(r.body) as {
    decodedWith: string;
    encoding: string;
    delimiter: string;
    rows: Array<{ line: number; cells: Record<string, string> }>;
    columns: Record<string, Array<{ name: string; kind: string; confidence: number; evidence: string; examples: string[] }>>;
  };
  assert.equal(g.decodedWith, 'infer');
  assert.equal(g.encoding, 'windows-1252');
  assert.equal(g.delimiter, ';');
  assert.equal(g.rows.length, 20);
  assert.equal(g.rows[1]!.line, 3);
  assert.match(g.rows[1]!.cells['B1_DESC']!, /^FEIJÃO CARIOCA/);
  const ean = g.columns['']!.find((c) => c.name === 'B1_CODBAR')!;
  assert.equal(ean.kind, 'gtin');
  assert.equal(ean.confidence, 1);
  assert.match(ean.evidence, /GTIN/);
  assert.equal(ean.examples[0], '7891234001016');
});

test('draft, preview of an edit, save then check: the records follow the YAML, check passes once the TODO is replaced', async () => {
  const d = JSON.parse((await http(studio.port, `/api/draft?file=${encodeURIComponent(FILE)}`, { headers: auth() })).body) as {
    fileName: string;
    text: string;
    from: string;
  };
  assert.equal(d.from, 'infer');
  assert.equal(d.fileName, 'sb1-produtos.yaml');
  const first = JSON.parse((await post('/api/preview', { file: FILE, text: d.text, fileName: d.fileName })).body) as {
    ok: boolean;
    records: Array<{ key: string; payload: Record<string, unknown>; lines: number[] }>;
    todos: string[];
    todoLines: number[];
    fieldColumns: Record<string, string[]>;
    stats: { records: number; skipped: number };
  };
  assert.equal(first.ok, true);
  assert.equal(first.stats.records, 19);
  assert.equal(first.stats.skipped, 1, 'the blocked product is a row no mapping selects');
  assert.deepEqual(first.todos, ['fields.familyID']);
  assert.ok(first.todoLines.length >= 1);
  assert.deepEqual(first.fieldColumns['barCode'], ['B1_CODBAR']);
  assert.deepEqual(first.records[0]!.lines, [2]);
  // the lookup resolves against the embedded sandbox, as `preview --sandbox` does
  assert.equal(typeof first.records[0]!.payload['logisticsProfileID'], 'string');
  assert.doesNotMatch(String(first.records[0]!.payload['logisticsProfileID']), /<lookup/);

  const fixed = d.text
    .replace('familyID: { ref: Family, from: { const: TODO } }', 'familyID: { ref: Family, from: { const: GERAL } }')
    .replace('name: { col: B1_DESC, transforms: [trim] }', 'name: { col: B1_DESC, transforms: [trim, upper] }');
  assert.notEqual(fixed, d.text);
  const second = JSON.parse((await post('/api/preview', { file: FILE, text: fixed, fileName: d.fileName })).body) as typeof first;
  assert.equal(second.ok, true);
  assert.deepEqual(second.todos, []);
  assert.notDeepEqual(second.records[0]!.payload['familyID'], first.records[0]!.payload['familyID']);
  assert.equal(second.records[0]!.payload['familyID'], '<ref Family GERAL>');

  const broken = JSON.parse(
    (await post('/api/preview', { file: FILE, text: fixed.replace('target: Product', 'target: Produkt'), fileName: d.fileName })).body,
  ) as {
    ok: boolean;
    issues: Array<{ path: string; line?: number }>;
  };
  assert.equal(broken.ok, false);
  assert.equal(broken.issues[0]!.path, 'target');
  assert.ok(broken.issues[0]!.line! > 1);

  // with the TODO left, the save is written but check fails and names it
  const todoSave = JSON.parse((await post('/api/save', { name: d.fileName, text: d.text })).body) as { saved: string; check: { code: number; output: string } };
  assert.equal(todoSave.check.code, 2);
  assert.match(todoSave.check.output, /TODO in fields\.familyID/);
  const saved = JSON.parse((await post('/api/save', { name: d.fileName, text: fixed })).body) as { saved: string; check: { code: number; output: string } };
  assert.equal(saved.saved, join(ws.mappings, 'sb1-produtos.yaml'));
  assert.equal(await readFile(saved.saved, 'utf8'), fixed);
  assert.equal(saved.check.code, 0, saved.check.output);
  assert.match(saved.check.output, /ok: configuration and mappings are valid/);
  assert.deepEqual((await readdir(ws.mappings)).sort(), ['sb1-produtos.yaml'], 'no temporary file left');
  // the folder now shows the file as mapped, and the draft is the saved mapping
  const files = JSON.parse((await http(studio.port, '/api/files', { headers: auth() })).body) as {
    files: Array<{ state: string; mapping?: { file: string } }>;
  };
  assert.equal(files.files[0]!.state, 'mapped');
  assert.equal(files.files[0]!.mapping?.file, 'sb1-produtos.yaml');
  const again = JSON.parse((await http(studio.port, `/api/draft?file=${encodeURIComponent(FILE)}`, { headers: auth() })).body) as {
    from: string;
    text: string;
  };
  assert.equal(again.from, 'mapping');
  assert.equal(again.text, fixed);
});

test('the schema is the mapping JSON schema', async () => {
  const r = await http(studio.port, '/api/schema', { headers: auth() });
  assert.deepEqual(JSON.parse(r.body), generateMappingJsonSchema());
});

test('between edits the sample is kept parsed, and read again when the file or its source options change', async () => {
  const sub = join(dir, 'kept');
  await mkdir(sub);
  const csv = join(sub, 'SB1_PRODUTOS_20241105.csv');
  await copyFile(SAMPLE, csv);
  const s = await startStudio({ root: csv, mappingsDir: ws.mappings, schema: () => ({}) });
  try {
    const call = async (text: string) => {
      const r = await http(s.port, '/api/preview', {
        method: 'POST',
        headers: { host: `127.0.0.1:${s.port}`, 'x-studio-token': s.token, 'content-type': 'application/json' },
        body: JSON.stringify({ file: 'SB1_PRODUTOS_20241105.csv', text }),
      });
      return JSON.parse(r.body) as { ok: boolean; stats: { rows: number; records: number }; records: Array<{ payload: Record<string, unknown> }> };
    };
    const d = JSON.parse(
      (await http(s.port, `/api/draft?file=SB1_PRODUTOS_20241105.csv`, { headers: { host: `127.0.0.1:${s.port}`, 'x-studio-token': s.token } })).body,
    ) as { text: string };
    const text = d.text.replace('{ const: TODO }', '{ const: GERAL }');
    assert.equal((await call(text)).stats.rows, 20);
    assert.equal((await call(`${text}\n# an edit\n`)).stats.rows, 20);
    // the file changes (fewer rows, another size): read again
    const lines = (await readFile(csv, 'latin1')).split('\r\n');
    await writeFile(csv, lines.slice(0, 6).join('\r\n') + '\r\n', 'latin1');
    assert.equal((await call(text)).stats.rows, 5);
    // the source options change (another delimiter): read again with them, the rows no longer have the columns
    const other = await call(text.replace("delimiter: ';'", "delimiter: ','"));
    assert.equal(other.stats.records, 0, JSON.stringify(other.stats));
    assert.equal((await call(text)).stats.records, 5);
  } finally {
    await s.close();
  }
});

test('an XLSX workbook: its sheets as tabs in the grid, and a skeleton to write by hand where infer proposes nothing', async () => {
  const xlsx = join(PROJECT_ROOT, 'test', 'fixtures', 'inputs', 'bling', 'produtos_bling.xlsx');
  const s = await startStudio({ root: xlsx, mappingsDir: ws.mappings, schema: () => ({}) });
  try {
    const headers = { host: `127.0.0.1:${s.port}`, 'x-studio-token': s.token };
    const d = JSON.parse((await http(s.port, '/api/draft?file=produtos_bling.xlsx', { headers })).body) as { from: string; text: string; notes: string[] };
    assert.equal(d.from, 'infer');
    assert.match(d.text, /format: xlsx/);
    assert.match(d.text, /TODO/);
    const grid = async (sheet?: string) =>
      JSON.parse(
        (
          await http(s.port, '/api/sample', {
            method: 'POST',
            headers: { ...headers, 'content-type': 'application/json' },
            body: JSON.stringify({ file: 'produtos_bling.xlsx', text: d.text, ...(sheet ? { sheet } : {}) }),
          })
        ).body,
      ) as { sheets: string[]; sheet: string; rows: unknown[]; columns: Record<string, Array<{ name: string }>> };
    const first = await grid();
    assert.deepEqual(first.sheets, ['Instruções', 'Produtos']);
    const produtos = await grid('Produtos');
    assert.equal(produtos.sheet, 'Produtos');
    assert.ok(produtos.rows.length > 0);
    assert.ok(produtos.columns['']!.length > 3);
  } finally {
    await s.close();
  }
});

test('a multi-record file opens with its mapping: record types with their columns, header and item levels, previewed', async () => {
  const root = join(PROJECT_ROOT, 'test', 'fixtures', 'multi-record', 'sped');
  const s = await startStudio({ root, mappingsDir: join(PROJECT_ROOT, 'test', 'fixtures', 'multi-record', 'mappings'), schema: () => ({}) });
  try {
    const headers = { host: `127.0.0.1:${s.port}`, 'x-studio-token': s.token };
    const files = JSON.parse((await http(s.port, '/api/files', { headers })).body) as {
      files: Array<{ id: string; channel: string; mapping?: { file: string } }>;
    };
    assert.deepEqual(
      files.files.map((f) => [f.id, f.mapping?.file]),
      [['SPED_EFD_200806.txt', 'sped-entradas.yaml']],
    );
    const d = JSON.parse((await http(s.port, '/api/draft?file=SPED_EFD_200806.txt', { headers })).body) as { from: string; text: string };
    assert.equal(d.from, 'mapping');
    const post = (path: string, body: unknown) =>
      http(s.port, path, { method: 'POST', headers: { ...headers, 'content-type': 'application/json' }, body: JSON.stringify(body) });
    const g = JSON.parse((await post('/api/sample', { file: 'SPED_EFD_200806.txt', text: d.text })).body) as {
      decodedWith: string;
      recordTypes: string[];
      rows: Array<{ recordType?: string; level: number }>;
    };
    assert.equal(g.decodedWith, 'mapping');
    assert.ok(g.recordTypes.includes('C100') && g.recordTypes.includes('C170'), g.recordTypes.join(','));
    assert.equal(g.rows.find((r) => r.recordType === 'C100')!.level, 0);
    assert.equal(g.rows.find((r) => r.recordType === 'C170')!.level, 1);
    const p = JSON.parse((await post('/api/preview', { file: 'SPED_EFD_200806.txt', text: d.text, fileName: 'sped-entradas.yaml' })).body) as {
      ok: boolean;
      records: Array<{ recordTypes?: string[]; lines: number[] }>;
    };
    assert.equal(p.ok, true);
    assert.ok(p.records[0]!.recordTypes!.includes('C170'));
    assert.ok(p.records[0]!.lines.length > 1, 'a document names every line it was made of');
  } finally {
    await s.close();
  }
});

test('try it: the sample goes to a throw-away sandbox, each record with its answer; the mappings folder is untouched', async () => {
  const d = JSON.parse((await http(studio.port, `/api/draft?file=${encodeURIComponent(FILE)}`, { headers: auth() })).body) as { text: string };
  const before = await readdir(ws.mappings);
  const refused = await post('/api/try', { file: FILE, name: '../x.yaml', text: d.text });
  assert.equal(refused.status, 403);
  // an operator's WMS in the environment (WMS_URL overrides a config's wms.url) is not where try it sends
  let reached = 0;
  const realWms = createServer((_req, res) => {
    reached++;
    res.writeHead(503).end();
  });
  await new Promise<void>((resolve) => realWms.listen(0, '127.0.0.1', resolve));
  const saved = { url: process.env['WMS_URL'], key: process.env['WMS_ACCESS_KEY_ID'], secret: process.env['WMS_SECRET_KEY'] };
  process.env['WMS_URL'] = `http://127.0.0.1:${(realWms.address() as { port: number }).port}`;
  process.env['WMS_ACCESS_KEY_ID'] = 'operator';
  process.env['WMS_SECRET_KEY'] = 'operator-secret';
  let r: Answer;
  try {
    r = await post('/api/try', { file: FILE, name: 'tried.yaml', text: d.text.replace('{ const: TODO }', '{ const: GERAL }') });
  } finally {
    for (const [k, v] of [
      ['WMS_URL', saved.url],
      ['WMS_ACCESS_KEY_ID', saved.key],
      ['WMS_SECRET_KEY', saved.secret],
    ] as const) {
      if (v === undefined) delete process.env[k];
      else process.env[k] = v;
    }
    await new Promise((resolve) => realWms.close(resolve));
  }
  assert.equal(reached, 0, 'nothing reached the WMS of the environment');
  assert.equal(r.status, 200, r.body);
  const j = JSON.parse(r.body) as { code: number; results: Array<{ line: string; key: string; outcome: string; reason: string }> };
  assert.equal(j.results.length, 20, 'one answer per row: 19 records and the row no mapping selects');
  const first = j.results.find((x) => x.line === '2')!;
  assert.equal(first.key, '000101');
  // the throw-away sandbox holds its seed data only: the product's category is not there, as in a first night
  assert.equal(first.outcome, 'rejected');
  assert.match(first.reason, /B1_GRUPO/);
  assert.equal(j.code, 1);
  assert.deepEqual(await readdir(ws.mappings), before);
});

test("doctor: the configured WMS's read-only probes, as `wmsbridge doctor` prints them; nothing written there", async () => {
  const { startSandbox, sandboxCall } = await import('../helpers/sandbox.js');
  const sb = await startSandbox();
  const config = join(dir, 'doctor.config.yaml');
  await writeFile(join(dir, 'wms.secret'), `${sb.secretKey}\n`);
  await writeFile(
    config,
    `inboxDir: ${ws.inbox}\noutboxDir: ${join(dir, 'outbox')}\nstateDir: ${join(dir, 'state-doctor')}\nmappingsDir: ${ws.mappings}\n` +
      `wms:\n  url: ${sb.url}\n  accessKeyId: ${sb.accessKeyID}\n  secretKeyFile: ${join(dir, 'wms.secret')}\n`,
  );
  const s = await openStudio({ path: ws.inbox, configFile: config });
  try {
    const count = async (resource: string): Promise<number> => {
      const j = (await sandboxCall(sb, 'GET', `/__sandbox/state?resource=${resource}`)).json as unknown;
      return Array.isArray(j) ? j.length : JSON.stringify(j).length;
    };
    const before = await Promise.all(['Product', 'Category', 'Provider'].map(count));
    const headers = { 'x-studio-token': s.token, 'content-type': 'application/json' };
    // a cross-site page cannot make the studio reach the WMS
    const cross = await http(s.port, '/api/doctor', { method: 'POST', headers: { ...headers, origin: 'http://evil.example' }, body: '{}' });
    assert.equal(cross.status, 403);
    const r = await http(s.port, '/api/doctor', { method: 'POST', headers, body: '{}' });
    assert.equal(r.status, 200, r.body);
    const j = JSON.parse(r.body) as { code: number; output: string };
    assert.equal(j.code, 0, j.output);
    assert.match(j.output, new RegExp(sb.url.replace(/[.:/]/g, '\\$&')), 'the report names the configured WMS');
    assert.deepEqual(await Promise.all(['Product', 'Category', 'Provider'].map(count)), before, 'doctor only reads');
  } finally {
    await s.close();
    await sb.close();
  }
});
