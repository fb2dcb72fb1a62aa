/**
 * Multi-record files end to end (issue 39): a real SPED EFD file, a PROCEDA NOTFIS 3.1 file, a Sankhya-like
 * orders file and a nested JSON orders export (orders > items > lots) (test/fixtures/multi-record/, origins in its README.md) dropped with the master data they refer to,
 * `wmsbridge run` (the CLI as a child process) against a real sandbox: exactly the expected PurchaseOrders and
 * PickingLists arrive, with their items and lots. Then bad input: an item before any header and a record type no
 * layout declares are rejects naming the line and the record type; a NOTFIS trailer whose total disagrees fails
 * the whole file (error folder, reason naming the line, the record type and the field), nothing of it is sent.
 */
import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { copyFile, mkdir, readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import iconv from 'iconv-lite';
import { makeTempDir, walkFiles } from '../helpers/tmp.js';
import { runCli, PROJECT_ROOT, workspaceFlags } from '../helpers/cli.js';
import { startSandbox, sandboxCall, type Sandbox } from '../helpers/sandbox.js';

const FIX = join(PROJECT_ROOT, 'test', 'fixtures', 'multi-record');

let sb: Sandbox;
let tmp: { dir: string; cleanup: () => Promise<void> };

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- sandbox state rows, asserted field by field
async function state(resource: string): Promise<Array<Record<string, any>>> {
  const r = await sandboxCall(sb, 'GET', `/__sandbox/state?resource=${resource}`);
  assert.equal(r.status, 200, `state of ${resource}`);
  const j = r.json;
  return Array.isArray(j) ? j : (j[resource] ?? j.data ?? j.records);
}

async function drop(channel: string, from: string, name = from.split('/').pop() as string): Promise<void> {
  await mkdir(join(tmp.dir, 'inbox', channel), { recursive: true });
  await copyFile(from, join(tmp.dir, 'inbox', channel, name));
}

function run(): ReturnType<typeof runCli> {
  return runCli(['run', ...workspaceFlags(tmp.dir, join(tmp.dir, 'mappings'))], {
    env: { WMS_URL: sb.url, WMS_ACCESS_KEY_ID: sb.accessKeyID, WMS_SECRET_KEY: sb.secretKey, WMSBRIDGE_LOG_LEVEL: 'warn' },
    timeoutMs: 150_000,
  });
}

describe('multi-record files through run (SPED, NOTFIS, Sankhya-like)', () => {
  before(async () => {
    sb = await startSandbox();
    tmp = await makeTempDir('wmsbridge-e2e-multi-record-');
    await mkdir(join(tmp.dir, 'mappings'));
    for (const m of ['categorias', 'familias', 'produtos', 'fornecedores'])
      await copyFile(join(PROJECT_ROOT, 'mappings', `${m}.yaml`), join(tmp.dir, 'mappings', `${m}.yaml`));
    for (const m of await readdir(join(FIX, 'mappings'))) await copyFile(join(FIX, 'mappings', m), join(tmp.dir, 'mappings', m));
    for (const f of ['CATEGORIAS_20241105.csv', 'FAMILIAS_20241105.csv']) await drop('cadastros', join(PROJECT_ROOT, 'inbox', 'cadastros', f));
    for (const f of await readdir(join(FIX, 'cadastros'))) await drop('cadastros', join(FIX, 'cadastros', f));
    await drop('sped', join(FIX, 'sped', 'SPED_EFD_200806.txt'));
    await drop('notfis', join(FIX, 'notfis', 'NOTFIS_VALEVERDE_20241105.txt'));
    await drop('pedidos-snk', join(FIX, 'sankhya', 'PEDIDOS_SNK_20241105.txt'));
    await drop('pedidos-ecom', join(FIX, 'ecom', 'PEDIDOS_ECOM_20241105.json'));
    await drop('cadastros-ecom', join(FIX, 'ecom', 'HIERARQUIA_ECOM_20241105.json'));
  });
  after(async () => {
    await sb?.close();
    await tmp?.cleanup();
  });

  test('exactly the expected documents arrive, with their items and lots', { timeout: 180_000 }, async () => {
    const res = await run();
    assert.equal(res.code, 0, `exit 0 expected\nstdout: ${res.stdout}\nstderr: ${res.stderr.slice(-3000)}`);
    const products = await state('Product');
    const code = (id: string): string => products.find((p) => p['id'] === id)?.['code'] ?? `?${id}`;
    const providers = await state('Provider');
    const provider = (id: string): string => providers.find((p) => p['id'] === id)?.['codeERP'] ?? `?${id}`;
    const items = (doc: Record<string, unknown>, key: string): string[] =>
      (doc[key] as Array<Record<string, unknown>>).map(
        (i) => `${code(i['productID'] as string)} ${String(i['quantity'])}${i['lotNumber'] ? ` ${String(i['lotNumber'])}` : ''}`,
      );

    const pos = await state('PurchaseOrder');
    assert.deepEqual(pos.map((p) => p['nf']).sort(), ['033089', '12345', '12346'], 'one PurchaseOrder per SPED C100 and per NOTFIS 313');
    const sped = pos.find((p) => p['nf'] === '033089')!;
    assert.equal(provider(sped['providerID']), '3147F', 'the C100 participant');
    assert.deepEqual(items(sped, 'purchaseOrderItens'), ['AD42900001 12', 'AD42900001 12'], 'the two C170 lines, decimal comma read');
    assert.match(sped['description'], /ARMSTRONG BRASIL/, 'the 0000 context record read as 0000/NOME');
    const nf1 = pos.find((p) => p['nf'] === '12345')!;
    const nf2 = pos.find((p) => p['nf'] === '12346')!;
    assert.equal(provider(nf1['providerID']), '61234567000117', 'the 311 shipper read as 311/cnpj');
    assert.deepEqual(items(nf1, 'purchaseOrderItens'), ['VV-ARROZ5 20', 'VV-FEIJAO1 10']);
    assert.deepEqual(items(nf2, 'purchaseOrderItens'), ['VV-OLEO900 12', 'VV-ARROZ5 4'], 'the two merchandise occurrences of one 314 line');

    const lists = await state('PickingList');
    assert.deepEqual(lists.map((p) => p['order']).sort(), ['70001', '70002', '90001', '90002']);
    const o1 = lists.find((p) => p['order'] === '70001')!;
    assert.deepEqual(items(o1, 'pickingItens'), ['SNK-1001 10', 'SNK-1002 16 L2411-A', 'SNK-1002 8 L2411-B'], 'an item with two lots is two items');
    assert.equal(o1['clientName'], 'SUPERMERCADO BOA ESPERANÇA LTDA', 'Windows-1252 decoded');
    const o2 = lists.find((p) => p['order'] === '70002')!;
    assert.deepEqual(items(o2, 'pickingItens'), ['SNK-1003 36', 'SNK-1001 5']);

    // nested JSON (itemPath data/itens crosses the orders array): each order's own header fields, lots exploded
    const e1 = lists.find((p) => p['order'] === '90001')!;
    assert.deepEqual(items(e1, 'pickingItens'), ['SNK-1001 4', 'SNK-1002 7 L2411-A', 'SNK-1002 5 L2411-B'], 'an empty lotes is one item');
    assert.equal(e1['clientName'], 'MERCADINHO SÃO JOSÉ LTDA', 'the order read as /data/contato/nome');
    assert.equal(e1['document'], '11222333000181');
    const e2 = lists.find((p) => p['order'] === '90002')!;
    assert.deepEqual(items(e2, 'pickingItens'), ['SNK-1003 24']);
    assert.equal(e2['clientName'], 'EMPÓRIO BOA VISTA EIRELI', "the second order's header, not the first's");

    // one nested JSON file, two levels, two targets: departments -> Categories, their sections -> Families
    const categories = await state('Category');
    const ecomCats = categories.filter((c) => String(c['codeERP']).startsWith('ECOM-'));
    assert.deepEqual(ecomCats.map((c) => `${c['codeERP']} ${c['name']}`).sort(), ['ECOM-LIMP Limpeza', 'ECOM-MERC Mercearia', 'ECOM-PET Pet Shop']);
    const catOf = (id: string): string => categories.find((c) => c['id'] === id)?.['codeERP'] ?? `?${id}`;
    const families = (await state('Family')).filter((f) => String(f['codeERP']).startsWith('ECOM-'));
    assert.deepEqual(
      families.map((f) => `${f['codeERP']} < ${catOf(f['categoryID'])}`).sort(),
      ['ECOM-GRAOS < ECOM-MERC', 'ECOM-OLEOS < ECOM-MERC', 'ECOM-SABAO < ECOM-LIMP'],
      "each section's parent is the department that holds it",
    );
  });

  test('bad input: rejects name the line and record type; a trailer total that disagrees fails the file, nothing sent', { timeout: 180_000 }, async () => {
    const before = (await state('PurchaseOrder')).length;
    await drop('notfis', join(FIX, 'notfis', 'NOTFIS_VALEVERDE_SOMA_ERRADA.txt'));
    await drop('pedidos-snk', join(FIX, 'sankhya', 'PEDIDOS_SNK_RUINS.txt'));
    const res = await run();
    assert.equal(res.code, 1, `exit 1 (data needs attention)\nstdout: ${res.stdout}\nstderr: ${res.stderr.slice(-3000)}`);

    // the NOTFIS file: whole file refused, kept in the error folder with its reason
    const errors = await walkFiles(join(tmp.dir, 'inbox', 'notfis', '.wmsbridge', 'error'));
    const reasonPath = errors.find((p) => p.endsWith('NOTFIS_VALEVERDE_SOMA_ERRADA.txt.reason.txt'));
    assert.ok(reasonPath, `a reason file: ${errors.join(', ')}`);
    const reason = await readFile(reasonPath, 'utf8');
    assert.match(
      reason,
      /NOTFIS_VALEVERDE_SOMA_ERRADA\.txt:10: trailer sum mismatch: the trailer 318 \(valorTotal\) declares 2011\.00, the 313 records .* add up to 2012\.00/,
    );
    assert.equal((await state('PurchaseOrder')).length, before, 'no PurchaseOrder of the refused file');

    // the Sankhya-like file: its rejects file (original format) lists the orphan item and the unknown record
    const rejects = (await walkFiles(join(tmp.dir, 'outbox', 'rejects', 'pedidos-snk'))).filter(
      (p) => p.includes('PEDIDOS_SNK_RUINS') && !p.endsWith('.errors.txt'),
    );
    assert.equal(rejects.length, 1, rejects.join(', '));
    const text = iconv.decode(await readFile(rejects[0]!), 'win1252');
    assert.match(
      text,
      /^I;70001;1;SNK-1001;.*linha 2: a linha do tipo de registro I vem antes de qualquer linha do tipo C, à qual pertenceria/m,
      'the item before any header',
    );
    assert.match(
      text,
      /^Z;70001;.*linha 8: nenhum tipo de registro do mapeamento corresponde à linha \(valor ""Z;70001;/m,
      'the record type no layout declares',
    );
    assert.match(text, /^L;2;L2411-B;8;31\/05\/2025.*/m, 'the whole document held back with the unknown line, lots included');
    assert.doesNotMatch(text, /^C;70002/m, 'the next order is not touched');
  });
});
