/**
 * Every shipped mapping (mappings/) against its shipped inbox file (inbox/): zero rejects, with a
 * ReferenceCache built from the sandbox seed facts (lookups really resolved, not symbolic).
 */
import { before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { PROJECT_ROOT } from '../helpers/cli.js';
import { loadMappingsDir } from '../../src/map/load.js';
import type { CompiledMapping } from '../../src/map/compile.js';
import { openParser } from '../../src/parse/index.js';
import { isRef } from '../../src/map/types.js';
import { run, seedId, type Collected } from '../fixtures/map/util.js';

const INBOX = join(PROJECT_ROOT, 'inbox');
let mappings: CompiledMapping[] = [];
const results = new Map<string, Collected>();

async function dataFiles(): Promise<Array<{ channel: string; name: string }>> {
  const out: Array<{ channel: string; name: string }> = [];
  for (const channel of await readdir(INBOX)) {
    for (const d of await readdir(join(INBOX, channel), { withFileTypes: true })) if (d.isFile()) out.push({ channel, name: d.name });
  }
  return out;
}

before(async () => {
  const loaded = await loadMappingsDir(join(PROJECT_ROOT, 'mappings'));
  assert.deepEqual(
    loaded.errors.map((e) => e.message),
    [],
  );
  mappings = loaded.mappings;
  for (const f of await dataFiles()) {
    const matching = mappings.filter((m) => m.matches(f.channel, f.name));
    assert.equal(matching.length, 1, `${f.channel}/${f.name} is matched by exactly one mapping (found ${matching.map((m) => m.name).join(', ') || 'none'})`);
    const m = matching[0] as CompiledMapping;
    const r = await run(m, openParser(join(INBOX, f.channel, f.name), m.source), { file: f.name });
    const prev = results.get(m.name);
    if (!prev) results.set(m.name, r);
    else {
      // several files of one mapping (the two NF-e): accumulate
      prev.outputs.push(...r.outputs);
      prev.records.push(...r.records);
      prev.rejects.push(...r.rejects);
      for (const k of ['rows', 'skipped', 'records', 'rejects'] as const) prev.stats[k] += r.stats[k];
    }
  }
});

describe('shipped mappings against the shipped inbox', () => {
  test('every mapping is used and every file maps with zero rejects', () => {
    assert.deepEqual([...results.keys()].sort(), mappings.map((m) => m.name).sort());
    for (const [name, r] of results) {
      assert.deepEqual(
        r.rejects.map((x) => x.issues.map((i) => i.message)),
        [],
        `${name} has rejects`,
      );
      assert.ok(r.records.length > 0, `${name} produced records`);
    }
  });

  test('record counts per file (filters skip, documents group)', () => {
    const counts = Object.fromEntries([...results].map(([k, r]) => [k, [r.stats.rows, r.records.length, r.stats.skipped]]));
    assert.deepEqual(counts, {
      'anexos-pedidos': [2, 2, 0],
      bloqueios: [4, 4, 0],
      categorias: [8, 7, 1],
      depositantes: [2, 2, 0],
      desbloqueios: [2, 2, 0],
      familias: [17, 17, 0],
      'fatores-conversao': [12, 12, 0],
      fornecedores: [8, 8, 0],
      'notas-fiscais': [9, 2, 0], // two NF-e files: 6 + 3 items
      pedidos: [28, 8, 0],
      'posicao-estoque': [33, 31, 2],
      produtos: [33, 31, 2],
      transportadoras: [6, 6, 0],
      unidades: [8, 8, 0],
    });
  });

  test('Windows-1252 accents and cp1252-only characters come through', () => {
    const cats = results.get('categorias')?.records.map((r) => r.payload['name']);
    assert.ok(cats?.includes('Laticínios'));
    assert.ok(cats?.includes('Higiene e Limpeza'));
    const orders = results.get('pedidos')?.records ?? [];
    assert.equal(orders[0]?.raw[0]?.fields['observacao'], 'Entregar pela doca lateral – portão 2');
    const units = results.get('unidades')?.records.map((r) => r.payload['name']);
    assert.ok(units?.includes('Peça') && units.includes('Dúzia'));
  });

  test('products: leading zeros, EAN, weight, profiles resolved from the reference data', () => {
    const p = results.get('produtos')?.records.find((r) => r.key === '000210');
    assert.deepEqual(p?.payload, {
      status: 1,
      code: '000210',
      codeERP: '000210',
      name: 'QUEIJO MUÇARELA FATIADO 150G',
      categoryID: { $ref: { resource: 'Category', value: 'LATIC' } },
      familyID: { $ref: { resource: 'Family', value: 'QUEIJOS' } },
      logisticsProfileID: seedId('lp:REFRIG'),
      unitmeasurement: 'UN',
      barCode: '7891234002105',
      ncm: '04061010',
      weight: 0.16,
      brand: 'Serra da Mantiqueira',
    });
    const plain = results.get('produtos')?.records.find((r) => r.key === '000101');
    assert.equal(plain?.payload['logisticsProfileID'], seedId('lp:PADRAO'), 'empty profile -> default PADRAO');
  });

  test('picking lists: header, dates in UTC, lookups, items', () => {
    const o = results.get('pedidos')?.records.find((r) => r.key === '100233|001');
    const p = o?.payload ?? {};
    assert.equal(p['warehouseID'], seedId('wh:CD-SP01'));
    assert.equal(p['branchID'], seedId('branch:Matriz São Paulo'));
    assert.equal(p['companyID'], seedId('company'));
    assert.equal(p['registrationDate'], '2024-11-05T12:05:00.000Z');
    assert.equal(p['pickingDate'], '2024-11-06');
    assert.equal(p['priority'], 3);
    assert.equal(p['clientAddress'], 'Rua Voluntários da Pátria, 400 - Santana - São Paulo/SP');
    assert.match(String(p['codeERP']), /^[0-9a-f]{8}-[0-9a-f]{4}-5/);
    const items = p['pickingItens'] as Array<Record<string, unknown>>;
    assert.equal(items.length, 5);
    assert.deepEqual(items[0], {
      pickingItemStatus: '0',
      status: 1,
      productID: { $ref: { resource: 'Product', value: '000210' } },
      quantity: 30,
      saleValue: 9.98,
      lotNumber: 'L2410-077',
      aux01: '1',
    });
    const rj = results.get('pedidos')?.records.find((r) => r.key === '100234|001');
    assert.equal(rj?.payload['branchID'], seedId('branch:Filial Rio de Janeiro'));
    const kg = results.get('pedidos')?.records.find((r) => r.key === '100237|001');
    assert.equal((kg?.payload['pickingItens'] as Array<Record<string, unknown>>)[0]?.['quantity'], 12.5);
  });

  test('stock: fixed-width implied decimals, locks by material status', () => {
    const s = results.get('posicao-estoque')?.records;
    assert.equal(s?.find((r) => r.key === '000601|001')?.payload['quantity'], 87.35);
    assert.equal(s?.find((r) => r.key === '000101|001')?.payload['quantity'], 412);
    const lock = results.get('bloqueios')?.records[0];
    assert.equal(lock?.payload['materialStatusId'], seedId('ms:Quarentena'));
    assert.equal(lock?.key, '000210|' + seedId('wh:CD-SP01') + '||' + seedId('ms:Quarentena'));
    assert.equal(lock?.payload['lotNumber'], undefined, 'an empty lot is not sent');
    const unlock = results.get('desbloqueios')?.records[0];
    assert.equal(unlock?.payload['materialStatusId'], seedId('ms:Disponível'));
  });

  test('NF-e: lots exploded, provider by CNPJ, dates', async () => {
    const m = mappings.find((x) => x.name === 'notas-fiscais') as CompiledMapping;
    const file = (await readdir(join(INBOX, 'notas'))).find((f) => f.startsWith('NFe31')) as string;
    const r = await run(m, openParser(join(INBOX, 'notas', file), m.source));
    assert.equal(r.rejects.length, 0);
    const po = r.records[0];
    assert.equal(po?.key, '58213|23456789000195');
    assert.ok(isRef(po?.payload['providerID']));
    const items = po?.payload['purchaseOrderItens'] as Array<Record<string, unknown>>;
    assert.equal(items.length, 8, '6 items, two of them with two lots');
    assert.deepEqual(
      items.map((i) => i['lotNumber']),
      ['L2410-118', 'L2410-119', 'L2410-120', 'L2410-077', 'L2410-081', 'L2410-082', 'L2410-102', '0012E5'],
    );
    assert.deepEqual(
      items.slice(0, 2).map((i) => i['quantity']),
      [240, 240],
    );
    // lot dates are DateTimes in the interface: midnight of that day in the mapping's zone (Brasília), as UTC
    assert.equal(items[7]?.['expirationDate'], '2025-04-15T03:00:00.000Z');
    assert.equal(items[0]?.['aux02'], '04012010');
    assert.equal(po?.payload['description'], 'NF-e 58213 série 1 de LATICÍNIOS SERRA DA MANTIQUEIRA S.A.');
  });

  test('attachments and owners', () => {
    const a = results.get('anexos-pedidos')?.records ?? [];
    assert.deepEqual(
      a.map((r) => [r.attachmentPath, r.payload['IsPrintCheckout']]),
      [
        ['anexos/ETIQUETA_100231.txt', true],
        ['anexos/ROMANEIO_100233.pdf', false],
      ],
    );
    const o = results.get('depositantes')?.records[0];
    assert.deepEqual(o?.payload, { code: '002', codeERP: '002', name: 'Comercial Atacadista Bom Preço Ltda', companyID: seedId('company') });
  });
});
