/**
 * The bad-input corpus (test/fixtures/bad/, see its README.md) dropped into a real inbox with mappings made
 * for it, against a real sandbox. For EACH input: a clear error in the outbox (result/rejects file, or the
 * reason file in the error folder) and in the logs, naming the file (and the line and field where it
 * applies); the original kept byte-identical (sha256) in the archive or error folder; the rejects file
 * re-droppable (same format: dropped again it is read by the same mapping); and the process keeps running
 * (exit 1, never a crash; exit 2 only for configuration or mapping errors, which `check` names).
 * Also property-based tests (fast-check, bounded) of the transforms and of the delimited parser.
 */
import { test, before, after, describe } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { mkdir, readdir, readFile, symlink, writeFile, copyFile, rm } from 'node:fs/promises';
import { existsSync } from 'node:fs';
import { basename, extname, join } from 'node:path';
import fc from 'fast-check';
import { makeTempDir, walkFiles as walk } from '../helpers/tmp.js';
import { runCli, PROJECT_ROOT, type CliResult } from '../helpers/cli.js';
import { startSandbox, sandboxCall, type Sandbox } from '../helpers/sandbox.js';
import { compileTransform, RowFail } from '../../src/map/transforms.js';
import { openParser } from '../../src/parse/index.js';
import { InputError, ConfigError } from '../../src/shared/errors.js';

const BAD = join(PROJECT_ROOT, 'test', 'fixtures', 'bad');
const CHANNELS = ['cat', 'cp', 'xml', 'ped', 'jsonl', 'fixed', 'anx'] as const;

let sb: Sandbox;
let tmp: { dir: string; cleanup: () => Promise<void> };
let first: CliResult;
let second: CliResult;
/** sha256 of every dropped input, by channel/name */
const dropped = new Map<string, string>();
/** the rejects files of the first run, re-dropped for the second run: channel/name -> number of data rows */
const redropped = new Map<string, number>();
let categories: Array<{ codeERP: string; name: string }> = [];

const sha = (b: Buffer): string => createHash('sha256').update(b).digest('hex');
const env = (): Record<string, string> => ({ WMS_SECRET_KEY: sb.secretKey, WMSBRIDGE_LOG_LEVEL: 'info' });
const cfg = (): string[] => ['--config', join(tmp.dir, 'wmsbridge.config.json')];

async function drop(channel: string, name: string, data: Buffer): Promise<void> {
  await writeFile(join(tmp.dir, 'inbox', channel, name), data);
  dropped.set(`${channel}/${name}`, sha(data));
}

/** Where the original of channel/name went: archive or error folder (byte-identical copy expected). */
async function kept(channel: string, name: string): Promise<{ where: 'archive' | 'error' | 'inbox'; path: string } | undefined> {
  const base = join(tmp.dir, 'inbox', channel);
  for (const where of ['archive', 'error'] as const) {
    for (const p of await walk(join(base, '.wmsbridge', where))) if (basename(p) === name) return { where, path: p };
  }
  if (existsSync(join(base, name))) return { where: 'inbox', path: join(base, name) };
  return undefined;
}

async function outboxFile(kind: 'results' | 'rejects', channel: string, name: string): Promise<string | undefined> {
  const stem = name.slice(0, name.length - extname(name).length);
  const files = await walk(join(tmp.dir, 'outbox', kind, channel));
  const hit = files.find((p) => {
    const b = basename(p);
    return kind === 'results' ? b.startsWith(`${stem}.`) && b.endsWith('.result.csv') : b.startsWith(`${stem}-rejects-`) && !b.endsWith('.errors.txt');
  });
  return hit;
}

async function readText(p: string): Promise<string> {
  return (await readFile(p)).toString('utf8');
}

/** A long name, accents, spaces, ';', a leading '-', '..' and a leading '=' (formula in every CSV cell naming it). */
const HOSTILE = ['CAT com espaço e ação.csv', 'CAT_a;b.csv', '-CAT_leading_dash.csv', 'CAT_..dots...csv', `CAT_${'x'.repeat(200)}.csv`, '=HYPERLINK(1)CAT.csv'];

before(async () => {
  sb = await startSandbox();
  tmp = await makeTempDir('wmsbridge-bad-');
  const d = tmp.dir;
  for (const ch of CHANNELS) await mkdir(join(d, 'inbox', ch), { recursive: true });
  await mkdir(join(d, 'inbox', 'anx', 'anexos'), { recursive: true });
  await mkdir(join(d, 'mappings'));
  const products = (await sandboxCall(sb, 'GET', '/__sandbox/state?resource=Product')).json as Array<{ id: string }>;
  const productId = products[0]!.id;

  for (const ch of ['cat', 'cp', 'xml', 'jsonl', 'fixed', 'anx'] as const) {
    for (const name of await readdir(join(BAD, ch))) {
      if (name.endsWith('.template')) continue;
      await drop(ch, name, await readFile(join(BAD, ch, name)));
    }
  }
  for (const name of await readdir(join(BAD, 'ped'))) {
    await drop('ped', name, Buffer.from((await readText(join(BAD, 'ped', name))).replaceAll('@PRODUCT@', productId)));
  }
  // generated at run time: a 5 MB single line, hostile names, an attachment symlink pointing outside the inbox
  await drop('cat', 'CAT_5mb_single_line.csv', Buffer.from(`codigo;nome\nL1;${'A'.repeat(5 * 1024 * 1024)}`));
  const tpl = await readText(join(BAD, 'cat', 'good.template'));
  for (const [i, n] of HOSTILE.entries()) await drop('cat', n, Buffer.from(tpl.replace('H@', `H${i}`)));
  await writeFile(join(d, 'outside-secret.txt'), 'outside the inbox\n');
  await symlink(join(d, 'outside-secret.txt'), join(d, 'inbox', 'anx', 'anexos', 'link_out.txt'));

  const m = (name: string, body: string): Promise<void> => writeFile(join(d, 'mappings', `${name}.yaml`), body);
  const catFields = 'fields:\n  codeERP: { col: codigo }\n  name: { col: nome }\n';
  await m(
    'cat',
    `name: cat\nmatch: { channel: cat, files: "*.csv" }\nsource: { format: delimited, delimiter: ';', encoding: utf-8 }\ntarget: Category\n${catFields}`,
  );
  await m(
    'cp',
    `name: cp\nmatch: { channel: cp, files: "*.csv" }\nsource: { format: delimited, delimiter: ';', encoding: windows-1252 }\ntarget: Category\n${catFields}`,
  );
  await m(
    'xml',
    `name: xml\nmatch: { channel: xml, files: "*.xml" }\nsource: { format: xml, itemPath: cats/cat, maxBytes: 8192 }\ntarget: Category\nfields:\n  codeERP: { path: codigo }\n  name: { path: nome }\n`,
  );
  await m(
    'jsonl',
    `name: jsonl\nmatch: { channel: jsonl, files: "*.jsonl" }\nsource: { format: jsonl }\ntarget: Category\nfields:\n  codeERP: { path: codigo }\n  name: { path: nome }\n`,
  );
  await m(
    'fixed',
    `name: fixed
match: { channel: fixed, files: "*.txt" }
source:
  format: fixed-width
  records:
    - { type: header, match: { start: 1, value: '0' }, fields: [{ name: tipo, start: 1, length: 1 }] }
    - { type: detail, match: { start: 1, value: '1' }, fields: [{ name: tipo, start: 1, length: 1 }, { name: codigo, start: 2, length: 5 }, { name: nome, start: 7, length: 30 }] }
    - { type: trailer, match: { start: 1, value: '9' }, fields: [{ name: registros, start: 2, length: 6 }] }
  trailer: { type: trailer, countField: registros, counts: all }
target: Category
filter: { field: tipo, equals: '1' }
fields:
  codeERP: { field: codigo, transforms: [trim] }
  name: { field: nome, transforms: [trim] }
`,
  );
  await m(
    'ped',
    `name: ped
match: { channel: ped, files: "*.csv" }
source: { format: delimited, delimiter: ';', encoding: utf-8 }
target: PickingList
group: { by: { col: pedido }, items: pickingItens, headerMustAgree: true, itemFields: { productID: { col: produto }, quantity: { col: qtd, transforms: [number] } } }
fields:
  order: { col: pedido }
  codeERP: { template: 'PickingList:{pedido}', transforms: [uuid5] }
  clientName: { col: cliente }
  pickingDate: { col: data, transforms: [date] }
  companyID: { lookup: Company, by: name, from: { const: Distribuidora Paulista de Alimentos Ltda } }
  branchID: { lookup: Branch, by: name, from: { const: Matriz São Paulo } }
  warehouseID: { lookup: Warehouse, by: codeERP, from: { col: cd } }
  ownerID: { lookup: Owners, by: code, from: { const: '001' } }
`,
  );
  await m(
    'anx',
    `name: anx\nmatch: { channel: anx, files: "*.csv" }\nsource: { format: delimited, delimiter: ';', encoding: utf-8 }\ntarget: PickingListAttachment\nattachmentPath: { col: arquivo }\nfields:\n  PickingListID: { ref: PickingList, from: { template: '{pedido}|001' } }\n  UserFileName: { col: descricao }\n`,
  );
  await writeFile(
    join(d, 'wmsbridge.config.json'),
    JSON.stringify({
      channels: CHANNELS.map((name) => ({ name, readiness: { mode: 'stable', checks: 1, intervalMs: 10 } })),
      wms: { url: sb.url, accessKeyId: sb.accessKeyID, retries: 1, timeoutMs: 5000 },
    }),
  );

  first = await runCli(['run', ...cfg()], { env: env(), timeoutMs: 90_000 });
  const cats = (await sandboxCall(sb, 'GET', '/__sandbox/state?resource=Category')).json as Array<{ codeERP: string; name: string }>;
  categories = cats;

  // second run: every rejects file of the first run dropped again, as is, into its channel
  for (const ch of CHANNELS) {
    for (const p of await walk(join(d, 'outbox', 'rejects', ch))) {
      if (p.endsWith('.errors.txt')) continue;
      const data = await readFile(p);
      const rows =
        data
          .toString('utf8')
          .split(/\r?\n/)
          .filter((l) => l.length > 0).length - (p.endsWith('.jsonl') ? 0 : 1);
      const name = `REDROP_${basename(p)}`;
      await writeFile(join(d, 'inbox', ch, name), data);
      redropped.set(`${ch}/${name}`, rows);
    }
  }
  second = await runCli(['run', ...cfg()], { env: env(), timeoutMs: 90_000 });
});

after(async () => {
  await sb?.close();
  if (process.env.WMSBRIDGE_TEST_KEEP) console.log(`kept ${tmp?.dir}`);
  else await tmp?.cleanup();
});

interface Expect {
  channel: string;
  file: string;
  /** error: whole file refused (error folder + reason file); rejects: rows refused (rejects file); ok: processed */
  kind: 'error' | 'rejects' | 'ok';
  /** what the error says */
  says?: RegExp;
  /** the line the error names (rejects) */
  line?: number;
  /** the field the error names */
  field?: string;
  /** extra checks */
  also?: () => Promise<void>;
}

const CASES: Expect[] = [
  { channel: 'cat', file: 'CAT_truncated.csv', kind: 'rejects', says: /quote opened at line 3 is never closed/, line: 3 },
  { channel: 'cat', file: 'CAT_png.csv', kind: 'error', says: /looks binary/ },
  {
    channel: 'cat',
    file: 'CAT_utf16.csv',
    // Excel's "Unicode text" (UTF-16LE with its byte order mark): read from the BOM whatever the mapping declares
    kind: 'ok',
    also: async () => {
      assert.equal(categories.find((c) => c.codeERP === 'U1')?.name, 'Categoria São');
    },
  },
  { channel: 'cat', file: 'CAT_broken_quotes.csv', kind: 'rejects', says: /after the closing quote/, line: 3 },
  // the header 'codigo,nome' is one column: the mapped columns do not exist; the whole file is refused saying so
  // (column/delimiter), not every row blamed for a value ("field name is empty")
  { channel: 'cat', file: 'CAT_comma_separated.csv', kind: 'error', says: /column|delimiter/i },
  { channel: 'cat', file: 'CAT_ragged.csv', kind: 'rejects', says: /expected 2 columns, found 1/, line: 3 },
  // the 'header' is blank: the mapped columns do not exist
  { channel: 'cat', file: 'CAT_whitespace.csv', kind: 'error', says: /column/ },
  { channel: 'cat', file: 'CAT_header_only.csv', kind: 'ok' },
  { channel: 'cat', file: 'CAT_nul.csv', kind: 'error', says: /NUL byte/ },
  {
    channel: 'cat',
    file: 'CAT_crlf_mixed.csv',
    kind: 'ok',
    also: async () => {
      for (const code of ['M1', 'M2', 'M3']) {
        const c = categories.find((x) => x.codeERP === code);
        assert.ok(c, `category ${code} delivered`);
        assert.doesNotMatch(c.name, /[\r\n]/, `${code}: no stray CR in ${JSON.stringify(c.name)}`);
      }
    },
  },
  {
    channel: 'cat',
    file: 'CAT_bom_middle.csv',
    // decision (docs/PARSERS.md): a byte-order mark inside a file is an artifact of concatenated exports, not
    // data: it is dropped from the cells and the rows are delivered clean
    kind: 'ok',
    also: async () => {
      const bad = categories.filter((c) => c.name.includes('\uFEFF'));
      assert.deepEqual(
        bad.map((c) => c.codeERP),
        [],
        'a U+FEFF in the middle of a cell must not reach the WMS',
      );
    },
  },
  {
    channel: 'cat',
    file: 'CAT_formula.csv',
    kind: 'rejects',
    line: 3,
    field: 'name',
    also: async () => {
      const result = await outboxFile('results', 'cat', 'CAT_formula.csv');
      assert.ok(result);
      const text = await readText(result);
      for (const cell of text.split(/\r?\n/).flatMap((l) => l.split(';'))) {
        assert.doesNotMatch(cell.replace(/^"/, ''), /^[=+\-@]/, `result cell ${JSON.stringify(cell)} not neutralised`);
      }
      assert.match(text, /'=cmd\|/, 'the formula value is kept, neutralised with a leading quote');
    },
  },
  {
    channel: 'cat',
    file: 'CAT_win1252_in_utf8.csv',
    kind: 'rejects',
    says: /encoding|UTF-8|invalid byte/i,
    line: 2,
    also: async () => {
      const bad = categories.filter((c) => c.name.includes('\uFFFD'));
      assert.deepEqual(
        bad.map((c) => `${c.codeERP}: ${c.name}`),
        [],
        'invalid UTF-8 must not reach the WMS as U+FFFD',
      );
      // the rejects file keeps the original bytes of the refused lines, so fixing source.encoding and dropping
      // it again works (U+FFFD in their place would lose the accents for good)
      const rj = await outboxFile('rejects', 'cat', 'CAT_win1252_in_utf8.csv');
      assert.ok(rj);
      const raw = await readFile(rj);
      assert.ok(raw.includes(Buffer.from([0x53, 0xe3, 0x6f])), 'the rejects file holds the original windows-1252 bytes (S 0xE3 o)');
      assert.ok(!raw.includes(Buffer.from([0xef, 0xbf, 0xbd])), 'no U+FFFD written into the rejects file');
    },
  },
  { channel: 'cat', file: 'CAT_invalid_transform.csv', kind: 'rejects', says: /is empty but required/, line: 3, field: 'name' },
  {
    channel: 'cat',
    file: 'CAT_header_repeated.csv',
    kind: 'rejects',
    says: /repeats the header line/,
    line: 3,
    also: async () => {
      assert.ok(!categories.some((c) => c.codeERP === 'codigo'), 'a repeated header line became a category');
    },
  },
  {
    channel: 'cat',
    file: 'CAT_control_chars.csv',
    kind: 'rejects',
    says: /U\+0009 \(tab\)[\s\S]*U\+202E/,
    line: 3,
    field: 'nome',
    also: async () => {
      assert.ok(!categories.some((c) => /[\t\u202E]/.test(c.name)), 'a tab or an RLO reached the WMS');
      assert.ok(
        categories.some((c) => c.codeERP === 'CC3'),
        'the clean row was sent',
      );
    },
  },
  { channel: 'cat', file: 'CAT_5mb_single_line.csv', kind: 'rejects', says: /above the limit/, line: 2 },
  ...HOSTILE.map((file): Expect => ({ channel: 'cat', file, kind: 'ok' })),
  {
    channel: 'cp',
    file: 'CP_utf8_in_cp1252.csv',
    kind: 'rejects',
    says: /encoding|UTF-8/i,
    line: 2,
    also: async () => {
      // UTF-8 read as windows-1252 turns 'ã' into 'Ã£': an Ã followed by a 0x80-0xBF character is the signature
      const bad = categories.filter((c) => /Ã[\u0080-\u00BF]/.test(c.name));
      assert.deepEqual(
        bad.map((c) => `${c.codeERP}: ${c.name}`),
        [],
        'UTF-8 text in a windows-1252 channel must not reach the WMS as mojibake',
      );
    },
  },
  {
    channel: 'cp',
    file: 'CP_undefined_bytes.csv',
    kind: 'rejects',
    says: /windows-1252 does not define/,
    line: 2,
    also: async () => {
      assert.ok(!categories.some((c) => c.name.includes('\uFFFD')), 'an undefined windows-1252 byte reached the WMS as U+FFFD');
      assert.ok(categories.some((c) => c.codeERP === 'UB2'));
    },
  },
  { channel: 'xml', file: 'CATX_truncated.xml', kind: 'error', says: /not well-formed/ },
  { channel: 'xml', file: 'CATX_billion_laughs.xml', kind: 'error', says: /DOCTYPE\/ENTITY is refused/ },
  {
    channel: 'xml',
    file: 'CATX_xxe.xml',
    kind: 'error',
    says: /DOCTYPE\/ENTITY is refused/,
    also: async () => {
      assert.ok(!categories.some((c) => c.name.includes('root:')), '/etc/passwd content never reaches the WMS');
    },
  },
  { channel: 'xml', file: 'CATX_doctype.xml', kind: 'error', says: /DOCTYPE/ },
  // the message must say how large the file and the limit are: "0 MB above the limit of 0 MB" says nothing
  { channel: 'xml', file: 'CATX_oversized.xml', kind: 'error', says: /above the XML limit of (8192 bytes|8 KB|8\.0 KB|0\.0078 MB)/ },
  { channel: 'ped', file: 'PED_invalid_dates.csv', kind: 'rejects', says: /'31\/02\/2024' is not a valid date/, line: 2, field: 'pickingDate' },
  { channel: 'ped', file: 'PED_invalid_numbers.csv', kind: 'rejects', says: /'12,3,4' is not a number/, line: 2, field: 'quantity' },
  { channel: 'ped', file: 'PED_unknown_codes.csv', kind: 'rejects', says: /Warehouse with codeERP 'CD-XX99' not found/, line: 2, field: 'warehouseID' },
  // the same order line twice doubles the quantity in the WMS: it must be refused (or at least flagged)
  { channel: 'ped', file: 'PED_duplicate_lines.csv', kind: 'rejects', says: /duplicate|repeat|same line/i, line: 3 },
  { channel: 'ped', file: 'PED_header_disagree.csv', kind: 'rejects', says: /differs from 'Cliente A'/, field: 'clientName' },
  {
    channel: 'ped',
    file: 'PED_precision.csv',
    kind: 'rejects',
    says: /significant digits/,
    line: 2,
    field: 'quantity',
    also: async () => {
      const lists = (await sandboxCall(sb, 'GET', '/__sandbox/state?resource=PickingList')).json as Array<{ order?: string }>;
      assert.ok(!lists.some((p) => p.order === '700051'), 'an order with an imprecise quantity was sent');
    },
  },
  { channel: 'ped', file: 'PED_attach_target.csv', kind: 'ok' },
  { channel: 'jsonl', file: 'CATJ_bad_line.jsonl', kind: 'rejects', says: /not valid JSON/, line: 2 },
  { channel: 'fixed', file: 'CATF_wrong_trailer.txt', kind: 'error', says: /trailer count mismatch/ },
  {
    channel: 'anx',
    file: 'ANX_escape.csv',
    kind: 'rejects',
    says: /outside the inbox|refused/,
    line: 2,
    also: async () => {
      const rj = await outboxFile('rejects', 'anx', 'ANX_escape.csv');
      assert.ok(rj);
      const lines = (await readText(rj)).split('\n').filter(Boolean);
      assert.equal(lines.length, 4, 'the three escaping paths are all refused');
      // each in pt-BR, naming the column that holds the path and why
      for (const l of lines.slice(1))
        assert.match(
          l,
          /o valor da coluna arquivo foi recusado antes do envio: o caminho do anexo (sai da pasta de entrada|é absoluto|leva para fora da pasta de entrada \(link simbólico\))/,
          l,
        );
      const sent = (await sandboxCall(sb, 'GET', '/__sandbox/counts')).json.records.PickingListAttachment ?? 0;
      assert.equal(sent, 0, 'no attachment was sent');
    },
  },
];

describe('bad inputs: one wmsbridge run over the whole corpus', () => {
  test('the corpus has >= 30 files, each with a README line', async () => {
    const readme = await readText(join(BAD, 'README.md'));
    const files = (await walk(BAD)).filter((p) => !p.endsWith('README.md') && !p.endsWith('generate.mjs'));
    assert.ok(files.length >= 30, `corpus has ${files.length} files`);
    for (const p of files) assert.ok(readme.includes(basename(p)), `README.md describes ${basename(p)}`);
  });

  test('the run keeps going: exit 1 (not a crash, not 2), a summary on stdout', () => {
    assert.equal(first.signal, null, first.stderr.slice(-2000));
    assert.equal(first.code, 1, `exit ${first.code}: ${first.stderr.slice(-3000)}`);
    assert.match(first.stdout, /wmsbridge run: \d+ arquivo\(s\)/);
    assert.doesNotMatch(first.stderr, /Unhandled|uncaught|"level":60/i);
  });

  test('the report reads in pt-BR, with reasons rendered from the codes the records carry (map time and send time)', async () => {
    const latest = await readText(join(tmp.dir, 'outbox', 'reports', 'latest.html'));
    assert.match(latest, /<html lang="pt-BR">/);
    const reportDir = (await readdir(join(tmp.dir, 'outbox', 'reports'), { withFileTypes: true }))
      .filter((d) => d.isDirectory())
      .map((d) => d.name)
      .sort()[0]!;
    const reasons = (await readText(join(tmp.dir, 'outbox', 'reports', reportDir, 'reasons.csv'))).replace(/^\uFEFF/, '').split('\r\n');
    assert.equal(reasons[0], 'motivo;código;quantidade;exemplo: arquivo;exemplo: linha');
    const row = (file: string): string | undefined => reasons.find((l) => l.includes(`;${file};`));
    // a map-time RowIssue code, and a lookup refused when sending
    assert.match(row('PED_invalid_numbers.csv') ?? '', /^Recusados: o valor da coluna qtd não é um número;invalid_number;/);
    assert.match(row('PED_unknown_codes.csv') ?? '', /^Recusados: o valor da coluna cd não foi encontrado no WMS;lookup_not_found;/);
  });

  test('an empty file is not taken before its grace period and says so in the log; it stays in the inbox untouched', async () => {
    const k = await kept('cat', 'CAT_empty.csv');
    assert.equal(k?.where, 'inbox');
    assert.match(first.stderr, /CAT_empty\.csv[^\n]*empty file/);
  });

  for (const c of CASES) {
    test(`${c.channel}/${c.file}: ${c.kind}${c.says ? ` (${c.says.source})` : ''}`, async () => {
      const orig = dropped.get(`${c.channel}/${c.file}`);
      assert.ok(orig !== undefined, `the test dropped ${c.file}`);
      const k = await kept(c.channel, c.file);
      assert.ok(k, `the original ${c.file} is kept somewhere`);
      assert.equal(k.where, c.kind === 'error' ? 'error' : 'archive', `${c.file} moved to the ${k.where} folder`);
      assert.equal(sha(await readFile(k.path)), orig, `${c.file} kept byte-identical`);
      const logLines = first.stderr.split('\n').filter((l) => l.includes(c.file.length > 60 ? c.file.slice(0, 60) : c.file));
      assert.ok(logLines.length > 0, `the log names ${c.file}`);

      if (c.kind === 'error') {
        const reason = await readText(`${k.path}.reason.txt`);
        assert.ok(reason.includes(c.file), `reason file names ${c.file}`);
        if (c.says) assert.match(reason, c.says, `reason file says why:\n${reason}`);
        if (c.says)
          assert.ok(
            logLines.some((l) => c.says!.test(l)),
            `the log says why for ${c.file}`,
          );
      } else {
        const result = await outboxFile('results', c.channel, c.file);
        assert.ok(result, `a result file exists for ${c.file}`);
      }
      if (c.kind === 'rejects') {
        const rj = await outboxFile('rejects', c.channel, c.file);
        assert.ok(rj, `a rejects file exists for ${c.file}`);
        assert.equal(extname(rj), extname(c.file), 'rejects keep the original format (extension)');
        const errFile = c.channel === 'jsonl' ? rj.replace(/\.jsonl$/, '.errors.txt') : rj;
        const text = await readText(errFile);
        // the rejects file says why in the outbox's language (pt-BR); the result file's error column keeps the
        // English message with its details (positions, counts), which `says` is written against
        const resultText = await readText((await outboxFile('results', c.channel, c.file))!);
        if (c.says) assert.match(`${text}\n${resultText}`, c.says, `rejects and results say why:\n${text.slice(0, 2000)}`);
        assert.match(text, /linha \d+: /, `the rejects file names the line in pt-BR:\n${text.slice(0, 2000)}`);
        if (c.line !== undefined) {
          // the line is named in the message, or in the result file's line column of a rejected record
          const result = await readText((await outboxFile('results', c.channel, c.file))!);
          const inResult = result.split(/\r?\n/).some((l) => l.replace(/^\uFEFF/, '').startsWith(`${c.line};`) && l.includes(';rejected;'));
          assert.ok(
            text.includes(`${c.file}:${c.line}:`) || text.includes(`line ${c.line}`) || text.includes(`linha ${c.line}:`) || inResult,
            `rejects name line ${c.line}:\n${text.slice(0, 2000)}`,
          );
        }
        if (c.field !== undefined)
          assert.ok(
            [`coluna ${c.field}`, `campo ${c.field}`, `field ${c.field}`, `.${c.field}`].some((w) => text.includes(w) || resultText.includes(w)),
            `rejects name field ${c.field}`,
          );
        assert.ok(
          logLines.some((l) => /"rejects":[1-9]/.test(l) || /reject/i.test(l)),
          `the log counts the rejects of ${c.file}`,
        );
      }
      if (c.also) await c.also();
    });
  }

  test('hostile file names: results are written under a safe name and no result cell starts a formula', async () => {
    for (const n of HOSTILE) {
      const r = await outboxFile('results', 'cat', n);
      assert.ok(r, `result for ${n}`);
      assert.ok(r.startsWith(join(tmp.dir, 'outbox', 'results', 'cat')), `result of ${n} stays in the outbox`);
    }
    for (const p of await walk(join(tmp.dir, 'outbox', 'reports'))) {
      if (!p.endsWith('.csv')) continue;
      for (const line of (await readText(p)).split(/\r?\n/)) {
        for (const cell of line.split(';'))
          assert.doesNotMatch(cell.replace(/^\uFEFF?"?/, ''), /^[=+@]/, `${basename(p)} cell ${cell.slice(0, 80)} not neutralised`);
      }
    }
  });

  test('every rejects file dropped again is read by the same mapping (same format) and refused again, row for row', async () => {
    assert.ok(redropped.size >= 10, `re-dropped ${redropped.size} rejects files`);
    assert.ok(second.code === 1, `second run exit ${second.code}: ${second.stderr.slice(-2000)}`);
    for (const [key, rows] of redropped) {
      const [ch, name] = key.split('/') as [string, string];
      const k = await kept(ch, name);
      assert.equal(k?.where, 'archive', `${key} was read (not refused as a whole file): ${k?.where}`);
      const rj = await outboxFile('rejects', ch, name);
      assert.ok(rj, `${key}: refused again into a rejects file`);
      const text = await readText(rj);
      const again = text.split(/\r?\n/).filter((l) => l.length > 0).length - (rj.endsWith('.jsonl') ? 0 : 1);
      assert.equal(again, rows, `${key}: ${rows} row(s) in, ${again} refused again`);
      // the error column is replaced, not appended once more on every round trip
      if (!rj.endsWith('.jsonl'))
        assert.equal(text.split(/\r?\n/)[0]!.split('wmsbridge_error').length - 1, 1, `${key}: one wmsbridge_error column: ${text.split(/\r?\n/)[0]}`);
    }
  });
});

describe('bad configuration and mapping files: check exits 2 naming file and key', () => {
  const cases: Array<{ file: string; kind: 'config' | 'mapping'; key: RegExp }> = [
    { file: 'config-unknown-key.yaml', kind: 'config', key: /sendng/ },
    { file: 'config-wrong-type.yaml', kind: 'config', key: /sending\.concurrency/ },
    { file: 'config-invalid-yaml.yaml', kind: 'config', key: /line \d+|YAML/i },
    { file: 'map-unknown-field.yaml', kind: 'mapping', key: /colour/ },
    { file: 'map-missing-required.yaml', kind: 'mapping', key: /name/ },
    { file: 'map-bad-transform.yaml', kind: 'mapping', key: /transforms|replace|date|format/ },
    { file: 'map-invalid-yaml.yaml', kind: 'mapping', key: /line \d+|YAML/i },
  ];
  for (const c of cases) {
    test(c.file, async () => {
      const dir = await makeTempDir('wmsbridge-badcfg-');
      try {
        await mkdir(join(dir.dir, 'inbox', 'cat'), { recursive: true });
        await mkdir(join(dir.dir, 'mappings'));
        const args = ['check', '--inbox', join(dir.dir, 'inbox'), '--state-dir', join(dir.dir, 'state')];
        if (c.kind === 'config') {
          await copyFile(join(BAD, 'config', c.file), join(dir.dir, c.file));
          await writeFile(
            join(dir.dir, 'mappings', 'ok.yaml'),
            'name: ok\nmatch: { channel: cat, files: "*.csv" }\nsource: { format: delimited }\ntarget: Category\nfields:\n  name: { col: nome }\n',
          );
          args.push('--config', join(dir.dir, c.file), '--mappings', join(dir.dir, 'mappings'));
        } else {
          await copyFile(join(BAD, 'mappings', c.file), join(dir.dir, 'mappings', c.file));
          args.push('--mappings', join(dir.dir, 'mappings'));
        }
        const r = await runCli(args, { env: { WMSBRIDGE_LOG_LEVEL: 'warn' }, timeoutMs: 30_000 });
        const out = r.stdout + r.stderr;
        assert.equal(r.code, 2, `exit ${r.code}: ${out}`);
        assert.ok(out.includes(c.file), `names the file ${c.file}:\n${out}`);
        assert.match(out, c.key, `names the key:\n${out}`);
      } finally {
        await dir.cleanup();
      }
    });
  }
});

describe('properties (fast-check, bounded)', () => {
  const TZ = { timeZone: 'America/Sao_Paulo' };
  const specs: unknown[] = [
    'number',
    'integer',
    'date',
    'boolean',
    'cnpj',
    'ean',
    'json',
    'trim',
    'upper',
    'title',
    'stripZeros',
    'digitsOnly',
    'uuid5',
    { number: { decimal: '.', thousands: ',' } },
    { number: { decimal: ',', thousands: '.', scale: 3 } },
    { date: { format: 'yyyy-MM-dd' } },
    { date: { format: 'iso' } },
    { date: { format: 'dd/MM/yyyy HH:mm' } },
    { map: { values: { A: '1', B: '2' } } },
  ];
  const anyValue = fc.oneof(
    fc.string({ maxLength: 40 }),
    fc.string({ unit: 'binary', maxLength: 40 }),
    fc.stringMatching(/^[0-9.,\- ]{0,20}$/),
    fc.stringMatching(/^[0-9]{1,2}\/[0-9]{1,2}\/[0-9]{2,4}( [0-9]{1,2}:[0-9]{1,2})?$/),
    fc.double({ noDefaultInfinity: true, noNaN: true }),
    fc.integer(),
    fc.boolean(),
    fc.constant(null),
    fc.constant(undefined),
  );

  test('transforms never throw anything but a RowFail: they return a value or a row issue', () => {
    for (const spec of specs) {
      let fn: (v: unknown) => unknown;
      try {
        fn = compileTransform(spec as Parameters<typeof compileTransform>[0], TZ);
      } catch (err) {
        // a spec this test got wrong is a test problem, not a property failure: say so
        throw new Error(`compileTransform(${JSON.stringify(spec)}): ${(err as Error).message}`);
      }
      const run = (): void =>
        fc.assert(
          fc.property(anyValue, (v) => {
            try {
              const out = fn(v);
              if (typeof out === 'number') assert.ok(Number.isFinite(out), `${JSON.stringify(spec)}(${String(v)}) = ${out}`);
            } catch (err) {
              if (!(err instanceof RowFail))
                throw new Error(`${JSON.stringify(spec)}(${JSON.stringify(v)}) threw ${(err as Error)?.constructor?.name}: ${(err as Error)?.message}`);
              assert.ok(err.message.length > 0);
            }
          }),
          { numRuns: 300, seed: 4242, interruptAfterTimeLimit: 4000 },
        );
      try {
        run();
      } catch (err) {
        throw new Error(`transform ${JSON.stringify(spec)}: ${(err as Error).message}`);
      }
    }
  });

  test('the delimited parser over arbitrary bytes: never throws anything but InputError/ConfigError, never hangs', { timeout: 60_000 }, async () => {
    const dir = await makeTempDir('wmsbridge-fc-');
    try {
      let n = 0;
      await fc.assert(
        fc.asyncProperty(
          fc.oneof(
            fc.uint8Array({ maxLength: 600 }),
            fc
              .array(fc.constantFrom('a', ';', '"', '\n', '\r', '\r\n', ' ', 'é', '\u0000', '\uFEFF', 'x;y', '""'), { maxLength: 120 })
              .map((a) => new TextEncoder().encode(a.join(''))),
          ),
          fc.constantFrom('utf-8', 'windows-1252'),
          fc.boolean(),
          async (bytes, encoding, header) => {
            const p = join(dir.dir, `f${n++}.csv`);
            await writeFile(p, bytes);
            const started = Date.now();
            try {
              const parser = openParser(p, { format: 'delimited', delimiter: ';', encoding: encoding as 'utf-8', header, maxLineLength: 200 });
              let items = 0;
              for await (const item of parser) {
                items++;
                assert.ok(item.kind === 'row' || item.kind === 'error');
                assert.ok(items <= bytes.length + 2, 'never more items than bytes');
              }
            } catch (err) {
              if (!(err instanceof InputError) && !(err instanceof ConfigError)) throw err;
            } finally {
              await rm(p, { force: true });
            }
            assert.ok(Date.now() - started < 5000, 'a small file parses in well under 5 s');
          },
        ),
        { numRuns: 250, seed: 777, interruptAfterTimeLimit: 30_000 },
      );
    } finally {
      await dir.cleanup();
    }
  });
});
