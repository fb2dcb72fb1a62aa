import { test, describe, after } from 'node:test';
import assert from 'node:assert/strict';
import { startSandbox, sandboxCall, sandboxToken, type Sandbox } from '../helpers/sandbox.js';
import { DIALECT_PRESETS, dialectMatrix, formatDialect, parseDialect } from '../../src/sandbox/dialect.js';

const open: Sandbox[] = [];
after(() => Promise.all(open.map((s) => s.close())));

async function sandboxWith(dialect: string): Promise<{ sb: Sandbox; call: (m: 'GET' | 'POST', p: string, body?: unknown) => ReturnType<typeof sandboxCall> }> {
  const sb = await startSandbox({ seed: 'dialect-tests', dialect });
  open.push(sb);
  const { token } = await sandboxToken(sb);
  return { sb, call: (m, p, body) => sandboxCall(sb, m, p, { token, body }) };
}

describe('parseDialect', () => {
  test('presets, overrides and objects', () => {
    assert.deepEqual(parseDialect(undefined), DIALECT_PRESETS['default']);
    assert.deepEqual(parseDialect('alt'), DIALECT_PRESETS['alt']);
    assert.deepEqual(parseDialect('alt,duplicates=accept'), { ...DIALECT_PRESETS['alt'], duplicates: 'accept' });
    assert.deepEqual(parseDialect('pagingBase=0, cnpjFormat=masked'), { ...DIALECT_PRESETS['default'], pagingBase: 0, cnpjFormat: 'masked' });
    assert.deepEqual(parseDialect({ preset: 'alt', pickingListTypeRequired: false }), { ...DIALECT_PRESETS['alt'], pickingListTypeRequired: false });
    assert.equal(parseDialect('pickingListTypeRequired=true').pickingListTypeRequired, true);
  });
  test('unknown preset, knob or value is a ConfigError naming what is allowed', () => {
    assert.throws(() => parseDialect('weird'), /unknown preset "weird" \(presets: default, alt\)/);
    assert.throws(() => parseDialect('pageBase=0'), /unknown knob "pageBase"/);
    assert.throws(() => parseDialect('pagingBase=2'), /pagingBase must be one of 1, 0/);
    assert.throws(() => parseDialect('pagingBase=0,alt'), /preset name may only come first/);
  });
  test('formatDialect names the matrix entries', () => {
    const names = dialectMatrix().map((m) => formatDialect(m.dialect));
    assert.deepEqual(
      names,
      dialectMatrix().map((m) => m.name),
    );
  });
});

describe('the default dialect is the historical behaviour', () => {
  test('1-based pages, digits CNPJs, UTC dates, duplicates accepted, PickingList type optional', async () => {
    const { sb, call } = await sandboxWith('default');
    const p1 = await call('GET', '/open/v1/warehouse?PagingIndex=1&PagingLimit=2');
    assert.equal(p1.json.pagingIndex, 1);
    assert.equal(p1.json.data.length, 2);
    assert.equal((await call('GET', '/open/v1/warehouse?PagingIndex=0')).status, 400);
    assert.match((await call('GET', '/open/v1/company')).json.data[0].cnpj, /^\d{14}$/);
    assert.match((await call('GET', '/open/v1/Stock?PagingLimit=1')).json.data[0].manufacturingDate, /Z$/);
    assert.equal((await call('GET', '/open/v1/Owners/codeerp/001')).status, 200);
    const cat = { name: 'Dup', codeERP: 'DUP-1', status: 1 };
    assert.equal((await call('POST', '/open/v1/category', cat)).status, 200);
    assert.equal((await call('POST', '/open/v1/category', cat)).status, 200);
    assert.equal(sb.state.creations['Category']!['DUP-1'], 2);
  });
});

describe('alternative choices', () => {
  test('pagingBase=0: PagingIndex 0 is the first page, page 1 of a 3-record list is empty', async () => {
    const { call } = await sandboxWith('pagingBase=0');
    const first = await call('GET', '/open/v1/warehouse');
    assert.equal(first.json.pagingIndex, 0);
    assert.equal(first.json.data.length, 3);
    const p1 = await call('GET', '/open/v1/warehouse?PagingIndex=1');
    assert.equal(p1.status, 200);
    assert.deepEqual(p1.json.data, []);
    assert.equal(p1.json.count, 3);
    const s0 = await call('GET', '/open/v1/Stock?PagingIndex=0&PagingLimit=5');
    const s1 = await call('GET', '/open/v1/Stock?PagingIndex=1&PagingLimit=5');
    assert.equal(s0.json.data.length, 5);
    assert.notDeepEqual(s0.json.data[0], s1.json.data[0]);
  });

  test('cnpjFormat=masked: every CNPJ answered masked, state keeps what was sent', async () => {
    const { sb, call } = await sandboxWith('cnpjFormat=masked');
    assert.match((await call('GET', '/open/v1/company')).json.data[0].cnpj, /^\d{2}\.\d{3}\.\d{3}\/\d{4}-\d{2}$/);
    assert.match((await call('GET', '/open/v1/branch')).json.data[1].cnpj, /^\d{2}\.\d{3}\.\d{3}\/0002-\d{2}$/);
    const r = await call('POST', '/open/v1/Provider', { socialName: 'P', cnpj: '11222333000181', codeERP: 'PV1' });
    assert.equal(r.status, 200, JSON.stringify(r.json));
    assert.equal(r.json.data.cnpj, '11.222.333/0001-81');
    assert.equal((await call('GET', '/open/v1/Provider/erp/PV1')).json.data.cnpj, '11.222.333/0001-81');
    assert.equal(sb.state.collections.Provider.at(-1)!['cnpj'], '11222333000181');
  });

  test('ownersCodeerpMatches=codeERP: Owners/codeerp/{code} matches codeERP only', async () => {
    const { call } = await sandboxWith('ownersCodeerpMatches=codeERP');
    const list = await call('GET', '/open/v1/Owners');
    assert.equal(list.json.data[0].code, '001');
    assert.notEqual(list.json.data[0].codeERP, '001');
    assert.equal((await call('GET', '/open/v1/Owners/codeerp/001')).status, 404);
    const byErp = await call('GET', `/open/v1/Owners/codeerp/${encodeURIComponent(list.json.data[0].codeERP)}`);
    assert.equal(byErp.status, 200);
    assert.equal(byErp.json.data.id, list.json.data[0].id);
  });

  test('pickingListTypeRequired: a PickingList without type and separationType is refused naming both', async () => {
    const { sb, call } = await sandboxWith('pickingListTypeRequired=true');
    const c = sb.state.collections;
    const body = {
      companyID: c.Company[0]!.id,
      branchID: c.Branch[0]!.id,
      warehouseID: c.Warehouse[0]!.id,
      ownerID: c.Owners[0]!.id,
      order: 'PED-1',
      codeERP: '6f1c8f3e-8d1a-5b7c-9e2f-0a1b2c3d4e5f',
      status: 1,
      finishCallBack: false,
      pickingItens: [{ productID: c.Product[0]!.id, quantity: 1, status: 1 }],
    };
    const r = await call('POST', '/open/v1/pickinglist', body);
    assert.equal(r.status, 400);
    assert.match(r.json.error, /type: required/);
    assert.match(r.json.error, /separationType: required/);
    const ok = await call('POST', '/open/v1/pickinglist', { ...body, type: 0, separationType: 0 });
    assert.equal(ok.status, 200, JSON.stringify(ok.json));
  });

  test('dateTimes=local: answers local wall time without offset; offset-less input is local time', async () => {
    const { sb, call } = await sandboxWith('dateTimes=local');
    const stored = sb.state.stock[0]!.manufacturingDate!; // e.g. 2026-02-10T00:00:00Z
    const s = await call('GET', '/open/v1/Stock?PagingLimit=1');
    const shown: string = s.json.data[0].manufacturingDate;
    assert.doesNotMatch(shown, /Z|[+-]\d\d:?\d\d$/);
    assert.equal(Date.parse(`${shown}-03:00`), Date.parse(stored));
    const c = sb.state.collections;
    const po = await call('POST', '/open/v1/purchaseorder', {
      companyID: c.Company[0]!.id,
      branchID: c.Branch[0]!.id,
      warehouseID: c.Warehouse[0]!.id,
      providerID: (await call('POST', '/open/v1/Provider', { socialName: 'P', cnpj: '11222333000181' })).json.data.id,
      ownersID: c.Owners[0]!.id,
      nf: '123',
      codeERP: '6f1c8f3e-8d1a-5b7c-9e2f-0a1b2c3d4e5f',
      registrationDate: '2026-03-01T10:00:00',
      status: 1,
      finishCallBack: false,
      purchaseOrderItens: [{ productID: c.Product[0]!.id, quantity: 1, status: 1 }],
    });
    assert.equal(po.status, 200, JSON.stringify(po.json));
    assert.equal(po.json.data.registrationDate, '2026-03-01T10:00:00');
    assert.equal(c.PurchaseOrder.at(-1)!['registrationDate'], '2026-03-01T13:00:00.000Z');
  });

  test('duplicates=refuse: 409 naming the natural key and the existing id, data {id}', async () => {
    const { sb, call } = await sandboxWith('duplicates=refuse');
    const first = await call('POST', '/open/v1/unitmeasurement', { name: 'Caixa 12', symbol: 'C12', codeERP: '007750', status: 1 });
    assert.equal(first.status, 200);
    const again = await call('POST', '/open/v1/unitmeasurement', { name: 'Caixa 12', symbol: 'C12', codeERP: '007750', status: 1 });
    assert.equal(again.status, 409);
    assert.equal(again.json.code, 409);
    assert.equal(again.json.error, `duplicate UnitMeasurement: codeERP=007750 already exists (id ${first.json.data.id})`);
    assert.deepEqual(again.json.data, { id: first.json.data.id });
    // seed records count as existing too: a second product with a seed product's code
    const seedProduct = sb.state.collections.Product[0]!;
    const p = await call('POST', '/open/v1/product', {
      code: seedProduct['code'],
      name: 'x',
      categoryID: seedProduct['categoryID'],
      familyID: seedProduct['familyID'],
      logisticsProfileID: seedProduct['logisticsProfileID'],
      unitmeasurement: seedProduct['unitmeasurement'],
      status: 1,
    });
    assert.equal(p.status, 409);
    assert.match(p.json.error, new RegExp(`^duplicate Product: code=${String(seedProduct['code'])} already exists \\(id ${seedProduct.id}\\)$`));
    assert.equal(sb.state.creations['UnitMeasurement']!['007750'], 1);
  });
});

describe('config sandbox.dialect', () => {
  test('the embedded sandbox speaks the configured dialect (string or object); a bad one is a ConfigError', async () => {
    const { loadConfig } = await import('../../src/config/load.js');
    const { createAppContext } = await import('../../src/app/context.js');
    const { makeTempDir } = await import('../helpers/tmp.js');
    const { silentLogger } = await import('../../src/shared/logger.js');
    const { writeFile, mkdir } = await import('node:fs/promises');
    const { join } = await import('node:path');
    const t = await makeTempDir();
    try {
      await mkdir(join(t.dir, 'inbox', 'x'), { recursive: true });
      for (const [yaml, want] of [
        ['wms:\n  url: sandbox\nsandbox:\n  dialect: "pagingBase=0,cnpjFormat=masked"\n', 'pagingBase=0,cnpjFormat=masked'],
        [
          'wms:\n  url: sandbox\nsandbox:\n  dialect: { preset: alt, duplicates: accept }\n',
          'pagingBase=0,cnpjFormat=masked,ownersCodeerpMatches=codeERP,pickingListTypeRequired=true,dateTimes=local',
        ],
      ] as const) {
        await writeFile(join(t.dir, 'wmsbridge.config.yaml'), yaml);
        const config = await loadConfig({ cwd: t.dir, env: {} });
        const ctx = await createAppContext(config, { logger: silentLogger(), memoryJournal: true });
        try {
          assert.equal(formatDialect(ctx.sandbox!.dialect), want);
        } finally {
          await ctx.close();
        }
      }
      await writeFile(join(t.dir, 'wmsbridge.config.yaml'), 'wms:\n  url: sandbox\nsandbox:\n  dialect: weird\n');
      const bad = await loadConfig({ cwd: t.dir, env: {} });
      await assert.rejects(createAppContext(bad, { logger: silentLogger(), memoryJournal: true }), /sandbox: dialect: unknown preset "weird"/);
    } finally {
      await t.cleanup();
    }
  });
});
