/** `wmsbridge preview` and `wmsbridge schema`, run as the real CLI (child process). */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { once } from 'node:events';
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { ChildProcess } from 'node:child_process';
import { PROJECT_ROOT, runCli, spawnCli } from '../helpers/cli.js';
import { makeTempDir } from '../helpers/tmp.js';
import { generateMappingJsonSchema } from '../../src/map/json-schema.js';

const mappingPath = (n: string) => join(PROJECT_ROOT, 'mappings', n);
const inboxPath = (p: string) => join(PROJECT_ROOT, 'inbox', p);

let dir = '';
let cleanup: () => Promise<void> = async () => {};
before(async () => ({ dir, cleanup } = await makeTempDir('wmsbridge-map-preview-')));
after(() => cleanup());

describe('wmsbridge preview', () => {
  test('a clean file: readable table, symbolic lookups, exit 0', async () => {
    const r = await runCli(['preview', mappingPath('produtos.yaml'), inboxPath('cadastros/PRODUTOS_20241105.csv')], { timeoutMs: 60_000 });
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /^Product create key=000101 \(line 2\) by produtos$/m);
    assert.match(r.stdout, /logisticsProfileID +<lookup LogisticsProfile mnemonic=PADRAO>/);
    assert.match(r.stdout, /categoryID +<ref Category MERC>/);
    assert.match(r.stderr, /preview produtos \(Product\): 33 row\(s\) read, 31 record\(s\), 0 reject\(s\), 2 not selected, 0 excluded/);
  });

  test('--json --limit: one JSON object per line', async () => {
    const r = await runCli(['preview', mappingPath('pedidos.yaml'), inboxPath('pedidos/PEDIDOS_20241105_1700.csv'), '--json', '--limit', '2'], {
      timeoutMs: 60_000,
    });
    assert.equal(r.code, 0, r.stderr);
    const lines = r.stdout
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as Record<string, unknown>);
    assert.equal(lines.length, 2);
    assert.equal(lines[0]?.['kind'], 'record');
    assert.equal(lines[0]?.['key'], '100231|001');
    const payload = lines[0]?.['payload'] as Record<string, unknown>;
    assert.equal(payload['warehouseID'], '<lookup Warehouse codeERP=CD-SP01>');
    assert.equal(payload['ownerID'], '<ref Owners code=001>');
    assert.equal((payload['pickingItens'] as unknown[]).length, 4);
    assert.match(r.stderr, /stopped at --limit 2/);
  });

  test('rejects are listed with their reasons; exit 1', async () => {
    const data = join(dir, 'PRODUTOS_bad.csv');
    await writeFile(
      data,
      'codigo;descricao;categoria;familia;unidade;ean;ncm;peso_bruto;marca;perfil_logistico;ativo\n' +
        '000900;TESTE;MERC;GRAOS;UN;7891234009006;10063021;12,3,4;X;;S\n' +
        '000901;TESTE 2;MERC;GRAOS;UN;7891234009012;10063021;1,5;X;;S\n',
    );
    const r = await runCli(['preview', mappingPath('produtos.yaml'), data], { timeoutMs: 60_000 });
    assert.equal(r.code, 1, r.stderr);
    assert.match(r.stdout, /^REJECT line 2 key=000900 by produtos$/m);
    assert.match(r.stdout, /invalid_number: line 2: field weight: '12,3,4' is not a number \(decimal ',' thousands '\.'\)/);
    assert.match(r.stdout, /invalid_ean: line 2: field barCode: '7891234009006' has a wrong GTIN\/EAN check digit/);
    assert.match(r.stdout, /^Product create key=000901/m);
    const j = await runCli(['preview', mappingPath('produtos.yaml'), data, '--json'], { timeoutMs: 60_000 });
    const rej = j.stdout
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { kind: string; issues?: Array<{ field: string }> })
      .find((x) => x.kind === 'reject');
    assert.deepEqual(
      rej?.issues?.map((i) => i.field),
      ['barCode', 'weight'],
    );
  });

  test('a mapping error exits 2 naming the file and the path inside', async () => {
    const bad = join(dir, 'bad.yaml');
    const text = (await readFile(mappingPath('categorias.yaml'), 'utf8')).replace('name: { col: descricao', 'nome: { col: descricao');
    await writeFile(bad, text);
    const r = await runCli(['preview', bad, inboxPath('cadastros/CATEGORIAS_20241105.csv')], { timeoutMs: 60_000 });
    assert.equal(r.code, 2);
    assert.match(r.stderr, /E_MAPPING: .*bad\.yaml: fields\.nome: Category has no field 'nome' \(did you mean 'name'\?\)/);
    const usage = await runCli(['preview', bad], { timeoutMs: 60_000 });
    assert.equal(usage.code, 2);
    assert.match(usage.stderr, /expected <mapping-file>... <data-file>/);
  });

  describe('with a WMS (the sandbox): read-only lookups resolved', () => {
    let sandbox: ChildProcess | undefined;
    let info: { url: string; accessKeyID: string; secretKey: string } | undefined;
    before(async () => {
      sandbox = spawnCli(['sandbox', '--port', '0']);
      let buf = '';
      const deadline = setTimeout(() => sandbox?.kill('SIGKILL'), 30_000);
      for await (const chunk of sandbox.stdout as AsyncIterable<Buffer>) {
        buf += chunk.toString();
        const nl = buf.indexOf('\n');
        if (nl >= 0) {
          info = JSON.parse(buf.slice(0, nl)) as typeof info;
          break;
        }
      }
      clearTimeout(deadline);
      assert.ok(info, 'the sandbox printed its address');
    });
    after(async () => {
      if (sandbox && sandbox.exitCode === null) {
        sandbox.kill('SIGTERM');
        await once(sandbox, 'close');
      }
    });

    test('lookups print WMS ids; an unknown status rejects at map time', async () => {
      const data = join(dir, 'BLOQUEIOS_x.csv');
      await writeFile(data, 'cd;produto;lote;situacao;motivo\nCD-SP01;000210;L1;Quarentena;x\nCD-SP01;000210;L1;Bloquado;typo\n');
      const r = await runCli(
        ['preview', mappingPath('bloqueios.yaml'), data, '--json', '--wms-url', info?.url ?? '', '--access-key-id', info?.accessKeyID ?? ''],
        {
          timeoutMs: 60_000,
          env: { ...process.env, WMS_SECRET_KEY: info?.secretKey ?? '' },
        },
      );
      assert.equal(r.code, 1, r.stderr);
      const out = r.stdout
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l) as { kind: string; payload?: Record<string, unknown>; issues?: Array<{ code: string; message: string }> });
      assert.match(String(out[0]?.payload?.['warehouseId']), /^[0-9a-f]{8}-[0-9a-f]{4}-/);
      assert.match(String(out[0]?.payload?.['materialStatusId']), /^[0-9a-f]{8}-[0-9a-f]{4}-/);
      assert.equal(out[1]?.kind, 'reject');
      assert.equal(out[1]?.issues?.[0]?.code, 'lookup_not_found');
      assert.equal(out[1]?.issues?.[0]?.message, "line 3: field materialStatusId: MaterialStatus with name 'Bloquado' not found");
      assert.doesNotMatch(r.stdout + r.stderr, new RegExp(info?.secretKey ?? 'never'), 'the secret is never printed');
    });

    test("the config file's WMS resolves the lookups too (--config)", async () => {
      const data = join(dir, 'BLOQUEIOS_cfg.csv');
      await writeFile(data, 'cd;produto;lote;situacao;motivo\nCD-SP01;000210;L1;Quarentena;x\n');
      const cfg = join(dir, 'preview-config.json');
      await writeFile(cfg, JSON.stringify({ wms: { url: info?.url ?? '', accessKeyId: info?.accessKeyID ?? '', secretKeyEnv: 'PREVIEW_SECRET' } }));
      const env: NodeJS.ProcessEnv = { ...process.env, PREVIEW_SECRET: info?.secretKey ?? '' };
      delete env['WMS_URL'];
      delete env['WMS_ACCESS_KEY_ID'];
      delete env['WMS_SECRET_KEY'];
      const r = await runCli(['preview', mappingPath('bloqueios.yaml'), data, '--json', '--config', cfg], { timeoutMs: 60_000, env });
      assert.equal(r.code, 0, r.stderr);
      const out = JSON.parse(r.stdout.trim().split('\n')[0]!) as { payload?: Record<string, unknown> };
      assert.match(String(out.payload?.['warehouseId']), /^[0-9a-f]{8}-[0-9a-f]{4}-/, 'resolved against the configured WMS, not printed as <lookup>');
    });
  });
});

describe('wmsbridge schema', () => {
  test('prints the JSON Schema generated from the model', async () => {
    const r = await runCli(['schema'], { timeoutMs: 60_000 });
    assert.equal(r.code, 0, r.stderr);
    assert.deepEqual(JSON.parse(r.stdout), JSON.parse(JSON.stringify(generateMappingJsonSchema())));
  });
});

describe('wmsbridge preview with several mappings on one file (issue 39)', () => {
  const shapes = (p: string) => join(PROJECT_ROOT, 'test/fixtures/erp-shapes', p);

  test('each record names its mapping; rows no mapping selected and rows a skip rule excludes are listed', async () => {
    const r = await runCli(
      ['preview', shapes('mappings/grupos-categorias.yaml'), shapes('mappings/grupos-familias.yaml'), shapes('inbox/cadastros/TGFGRU_20241105.csv')],
      { timeoutMs: 60_000 },
    );
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /^Category create key=10000 \(line 2\) by grupos-categorias$/m);
    assert.match(r.stdout, /^Family create key=10100 \(line 3\) by grupos-familias$/m);
    assert.match(r.stdout, /categoryID +<ref Category 10000>/);
    assert.match(r.stdout, /^NOT SELECTED 3 row\(s\) by any mapping \(line\(s\) 5, 8-9\)$/m);
    assert.match(r.stderr, /preview grupos-categorias\+grupos-familias \(Category, Family\): 8 row\(s\) read, 5 record\(s\), 0 reject\(s\), 3 not selected/);

    const s = await runCli(['preview', '--json', shapes('mappings/estoque-sap.yaml'), shapes('inbox/estoque/OITW_20241105.csv')], { timeoutMs: 60_000 });
    assert.equal(s.code, 0, s.stderr);
    const lines = s.stdout
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as Record<string, unknown>);
    assert.deepEqual(
      lines.filter((l) => l['kind'] === 'excluded'),
      [
        {
          kind: 'excluded',
          count: 2,
          ranges: [
            [3, 3],
            [5, 5],
          ],
          mapping: 'estoque-sap',
          target: 'StockSync',
          reason: 'negative stock position (the WMS takes none)',
        },
      ],
    );
    assert.equal(lines.filter((l) => l['kind'] === 'record' && l['mapping'] === 'estoque-sap').length, 3);
  });

  test('mappings that did not declare that they share the file: exit 2, naming them and their patterns', async () => {
    const r = await runCli(
      ['preview', shapes('mappings/parceiros-fornecedores.yaml'), shapes('bad-mappings/clientes.yaml'), shapes('inbox/cadastros/PARCEIROS_20241105.csv')],
      { timeoutMs: 60_000 },
    );
    assert.equal(r.code, 2, r.stdout + r.stderr);
    assert.match(r.stderr, /PARCEIROS_20241105\.csv: taken by 2 mappings: parceiros-fornecedores \(PARCEIROS_\*\.csv\); clientes \(PARC\*\.csv\)/);
  });
});
