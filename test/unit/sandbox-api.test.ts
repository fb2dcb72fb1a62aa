import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startSandbox, sandboxCall, sandboxToken, type Sandbox } from '../helpers/sandbox.js';
import { cnpjCheckDigits, cnpjProblem } from '../../src/sandbox/ids.js';
import { ProductRecord, PickingListRecord, PurchaseOrderRecord, StockRecord, listEnvelope, singleEnvelope } from '../../src/wms/schemas.js';

let sb: Sandbox;
let token: string;
const ids = {} as Record<string, string>;

function validCnpj(base12: string): string {
  return base12 + cnpjCheckDigits(base12);
}

before(async () => {
  sb = await startSandbox({ seed: 'api-tests' });
  token = (await sandboxToken(sb)).token;
  const c = sb.state.collections;
  ids['company'] = c.Company[0]!.id;
  ids['branch'] = c.Branch[0]!.id;
  ids['warehouse'] = c.Warehouse[0]!.id;
  ids['dock'] = c.Dock[0]!.id;
  ids['owner'] = c.Owners[0]!.id;
  ids['category'] = c.Category[0]!.id;
  ids['family'] = c.Family[0]!.id;
  ids['profile'] = c.LogisticsProfile[0]!.id;
  ids['product'] = c.Product[0]!.id;
  ids['blocked'] = c.MaterialStatus.find((m) => m['name'] === 'Bloqueado')!.id;
  ids['available'] = c.MaterialStatus.find((m) => m['name'] === 'Disponível')!.id;
});
after(() => sb.close());

const call = (method: 'GET' | 'POST' | 'PUT' | 'DELETE', path: string, body?: unknown) => sandboxCall(sb, method, path, { token, body });

describe('seed data', () => {
  test('company has a valid CNPJ and the expected reference data exists', async () => {
    const r = await call('GET', '/open/v1/company');
    assert.equal(r.status, 200);
    assert.equal(r.json.data[0].name, 'Distribuidora Paulista de Alimentos Ltda');
    assert.equal(cnpjProblem(r.json.data[0].cnpj), null);
    const wh = await call('GET', '/open/v1/warehouse');
    assert.deepEqual(
      wh.json.data.map((w: { codeERP: string }) => w.codeERP),
      ['CD-SP01', 'CD-RJ01', 'CD-MG01'],
    );
    const lp = await call('GET', '/open/v1/logisticsprofile');
    assert.equal(lp.json.data.filter((p: { isDefault: boolean }) => p.isDefault).length, 1);
    const ms = await call('GET', '/open/v1/MaterialStatus');
    assert.deepEqual(
      ms.json.data.map((m: { name: string }) => m.name),
      ['Disponível', 'Bloqueado', 'Avariado', 'Quarentena', 'Vencido'],
    );
    const fin = await call('GET', '/open/v1/Inventory/finished');
    assert.ok(fin.json.count >= 1 && fin.json.count < (await call('GET', '/open/v1/Inventory')).json.count);
  });

  test('same seed gives the same ids, another seed other ids', async () => {
    const again = await startSandbox({ seed: 'api-tests' });
    const other = await startSandbox({ seed: 'other' });
    try {
      assert.equal(again.state.collections.Company[0]!.id, ids['company']);
      assert.notEqual(other.state.collections.Company[0]!.id, ids['company']);
      assert.equal(again.accessKeyID, sb.accessKeyID);
    } finally {
      await again.close();
      await other.close();
    }
  });

  test('CNPJ check digits: a known valid number passes, a changed digit fails', () => {
    assert.equal(cnpjProblem('11.222.333/0001-81'), null);
    assert.equal(cnpjProblem('11222333000181'), null);
    assert.match(cnpjProblem('11222333000182')!, /check digits/);
    assert.match(cnpjProblem('11111111111111')!, /repeated/);
    assert.match(cnpjProblem('1122233300018')!, /14 digits/);
  });
});

describe('firewall and negotiation', () => {
  test('missing or empty User-Agent: 403 on every call, including authorize', async () => {
    for (const [method, path] of [
      ['POST', '/open/v1/authorize'],
      ['GET', '/open/v1/company'],
    ] as const) {
      for (const ua of ['', undefined]) {
        const { request } = await import('undici');
        const headers: Record<string, string> = { 'content-type': 'application/json' };
        if (ua !== undefined) headers['user-agent'] = ua;
        const res = await request(`${sb.url}${path}`, { method, headers, body: method === 'POST' ? '{}' : undefined });
        const json = (await res.body.json()) as { code: number; error: string };
        assert.equal(res.statusCode, 403, `${method} ${path} ua=${String(ua)}`);
        assert.equal(json.code, 403);
        assert.equal(json.error, 'User-Agent header is required');
      }
    }
  });

  test('Accept text/html only: 406; */* and missing: fine', async () => {
    assert.equal((await sandboxCall(sb, 'GET', '/open/v1/company', { token, headers: { accept: 'text/html' } })).status, 406);
    assert.equal((await sandboxCall(sb, 'GET', '/open/v1/company', { token, headers: { accept: 'text/html, */*;q=0.1' } })).status, 200);
  });

  test('unknown route 404, wrong method 405 with Allow, wrong path casing 404', async () => {
    const r = await call('GET', '/open/v1/nothing');
    assert.equal(r.status, 404);
    assert.equal(r.json.code, 404);
    const m = await call('DELETE', '/open/v1/product');
    assert.equal(m.status, 405);
    assert.match(String(m.headers['allow']), /POST/);
    assert.equal((await call('GET', '/open/v1/Company')).status, 404);
  });

  test('a call without a token is 401 invalid token', async () => {
    const r = await sandboxCall(sb, 'GET', '/open/v1/company');
    assert.equal(r.status, 401);
    assert.equal(r.json.error, 'invalid token');
    const bad = await sandboxCall(sb, 'GET', '/open/v1/company', { token: 'nope' });
    assert.equal(bad.json.error, 'invalid token');
  });
});

describe('paging', () => {
  test('1-based pages, last page partial, beyond the end empty, limit clamped, bad values refused', async () => {
    // 16 seeded stock rows: pages of 5 -> 5, 5, 5, 1
    const total = (await call('GET', '/open/v1/Stock')).json.count as number;
    assert.equal(total, sb.state.stock.length);
    assert.ok(total > 10);
    const limit = 5;
    const pages = Math.ceil(total / limit);
    const seen: string[] = [];
    for (let i = 1; i <= pages; i++) {
      const r = await call('GET', `/open/v1/Stock?PagingIndex=${i}&PagingLimit=${limit}`);
      assert.equal(r.json.pagingIndex, i);
      assert.equal(r.json.pagingLimit, limit);
      assert.equal(r.json.totalPages, pages);
      assert.equal(r.json.count, total);
      assert.equal(r.json.data.length, i < pages ? limit : total - limit * (pages - 1));
      for (const row of r.json.data) seen.push(`${row.productId}|${row.lotNumber}|${row.warehouseId}`);
    }
    assert.ok(total % limit !== 0, 'the last page is partial');
    assert.equal(new Set(seen).size, total);
    const beyond = await call('GET', `/open/v1/Stock?PagingIndex=${pages + 1}&PagingLimit=${limit}`);
    assert.equal(beyond.status, 200);
    assert.deepEqual(beyond.json.data, []);
    const clamped = await call('GET', '/open/v1/warehouse?PagingLimit=100000');
    assert.equal(clamped.json.pagingLimit, 500);
    const def = await call('GET', '/open/v1/warehouse');
    assert.equal(def.json.pagingLimit, 100);
    assert.equal(def.json.pagingIndex, 1);
    for (const q of ['PagingIndex=0', 'PagingIndex=-1', 'PagingLimit=0', 'PagingIndex=abc', 'pagingIndex=2', 'paginglimit=5']) {
      const r = await call('GET', `/open/v1/Dock?${q}`);
      assert.equal(r.status, 400, q);
      assert.match(r.json.error, /Paging(Index|Limit)/);
    }
  });

  test('a strict WMS: a query parameter the interface does not define is refused with 400 on every endpoint (issue 41)', async () => {
    const code = String(sb.state.collections.Product[0]!['code']);
    for (const path of [
      `/open/v1/Stock?productCode=${code}`,
      '/open/v1/Stock?PagingIndex=1&productCode=X&ownerId=Y',
      '/open/v1/Provider/erp/X?codeERP=X',
      '/open/v1/Owners/codeerp/001?PagingIndex=1',
      '/open/v1/company?filter=1',
    ]) {
      const r = await call('GET', path);
      assert.equal(r.status, 400, path);
      assert.match(r.json.error, /unknown query parameters? .*: the interface defines (only PagingIndex and PagingLimit|none) on this endpoint/, path);
    }
    const post = await call('POST', '/open/v1/category?dryRun=1', { name: 'x', status: 1 });
    assert.equal(post.status, 400);
    assert.equal((await call('GET', '/open/v1/Stock?PagingIndex=1&PagingLimit=2')).status, 200);
  });

  test('list envelopes parse with the list schemas; stock rows with StockRecord', async () => {
    const r = await call('GET', '/open/v1/Stock?PagingLimit=3');
    const env = listEnvelope(StockRecord).parse(r.json);
    assert.equal(env.data.length, 3);
  });

  test('synthetic stock: a million records page without storing them', async () => {
    sb.seedStock(1_000_000);
    try {
      const stored = sb.state.stock.length;
      const r = await call('GET', '/open/v1/Stock?PagingIndex=2000&PagingLimit=500');
      assert.equal(r.json.count, 1_000_000 + stored);
      assert.equal(r.json.totalPages, Math.ceil((1_000_000 + stored) / 500));
      assert.equal(r.json.data.length, 500);
      const again = await call('GET', '/open/v1/Stock?PagingIndex=2000&PagingLimit=500');
      assert.deepEqual(again.json.data, r.json.data);
      assert.equal(sb.state.stock.length, stored);
    } finally {
      sb.seedStock(0);
    }
  });
});

describe('reads by id and code', () => {
  test('found: single envelope; not found: 404 with the resource and key named; bad id: 400', async () => {
    const ok = await call('GET', `/open/v1/MaterialStatus/${ids['blocked']}`);
    assert.equal(ok.status, 200);
    assert.equal(ok.json.data.name, 'Bloqueado');
    const missing = '0f0e0d0c-0b0a-4000-8000-000000000001';
    const nf = await call('GET', `/open/v1/Provider/${missing}`);
    assert.equal(nf.status, 404);
    assert.equal(nf.json.code, 404);
    assert.equal(nf.json.error, `Provider with id ${missing} not found`);
    assert.equal((await call('GET', '/open/v1/Owners/codeerp/999')).json.error, 'Owners with code 999 not found');
    assert.equal((await call('GET', '/open/v1/Inventory/not-a-guid')).status, 400);
    const docks = await call('GET', `/open/v1/Dock/Warehouse/${ids['warehouse']}`);
    assert.ok(docks.json.data.length >= 2);
    assert.ok(docks.json.data.every((d: { warehouseID: string; name: string }) => d.warehouseID === ids['warehouse'] && /^DOCA \d\d$/.test(d.name)));
    const subs = await call('GET', `/open/v1/SubWarehouse/warehouse/${ids['warehouse']}`);
    assert.ok(subs.json.data.length >= 2);
    assert.equal((await call('GET', `/open/v1/SubWarehouse/warehouse/${missing}`)).status, 404);
  });
});

describe('send validation', () => {
  test('unknown fields, missing required fields and wrong types are all named', async () => {
    const r = await call('POST', '/open/v1/category', { name: '', codeERP: 5, status: 2, Name: 'x' });
    assert.equal(r.status, 400);
    assert.deepEqual({ code: r.json.code, message: r.json.message, data: r.json.data }, { code: 400, message: 'Validation failed', data: null });
    for (const f of ['name:', 'codeERP:', 'status:', 'Name: unknown field']) assert.ok(r.json.error.includes(f), `${f} in ${r.json.error}`);
    const missing = await call('POST', '/open/v1/unitmeasurement', { status: 1 });
    assert.match(missing.json.error, /name: required/);
    assert.match(missing.json.error, /symbol: required/);
  });

  test('alias spellings are refused on send (strict)', async () => {
    const r = await call('POST', '/open/v1/family', { name: 'F', categoryId: ids['category'], status: 1 });
    assert.equal(r.status, 400);
    assert.match(r.json.error, /categoryId: unknown field/);
    assert.match(r.json.error, /categoryID: required/);
  });

  test('foreign keys must exist, every one is named', async () => {
    const ghost = '11111111-2222-4333-8444-555555555555';
    const r = await call('POST', '/open/v1/product', {
      code: 'SKU-FK',
      name: 'FK test',
      categoryID: ghost,
      familyID: ghost,
      logisticsProfileID: ghost,
      unitmeasurement: 'XX',
      status: 1,
    });
    assert.equal(r.status, 400);
    for (const f of [
      'categoryID: Category',
      'familyID: Family',
      'logisticsProfileID: LogisticsProfile',
      'unitmeasurement: no UnitMeasurement with symbol XX',
    ]) {
      assert.ok(r.json.error.includes(f), `${f} in ${r.json.error}`);
    }
    const pl = await call('POST', '/open/v1/pickinglist', {
      companyID: ids['company'],
      branchID: ids['branch'],
      warehouseID: ids['warehouse'],
      ownerID: ghost,
      order: 'PED-FK',
      codeERP: ghost,
      status: 1,
      pickingItens: [{ productID: ghost, quantity: 1, status: 1 }],
    });
    assert.equal(pl.status, 400);
    assert.match(pl.json.error, /ownerID: Owners .* does not exist/);
    assert.match(pl.json.error, /pickingItens\[0\]\.productID: Product .* does not exist/);
  });

  test('CNPJ check digits on Provider and ShippingCompany', async () => {
    const bad = await call('POST', '/open/v1/Provider', { socialName: 'P', cnpj: '11222333000182' });
    assert.equal(bad.status, 400);
    assert.match(bad.json.error, /cnpj: invalid CNPJ check digits/);
    const sc = await call('POST', '/open/v1/ShippingCompany', { name: 'T', cnpj: '123', status: 1 });
    assert.match(sc.json.error, /cnpj: must be a CNPJ/);
    const good = await call('POST', '/open/v1/Provider', { socialName: 'Fornecedor SA', cnpj: validCnpj('112223330001'), codeERP: 'F-1' });
    assert.equal(good.status, 200);
    assert.deepEqual(
      { code: good.json.code, message: good.json.message, error: good.json.error },
      { code: 200, message: 'The request has succeeded', error: '' },
    );
    assert.match(good.json.data.id, /^[0-9a-f-]{36}$/);
  });

  test('invalid JSON, non-object body and wrong content type', async () => {
    assert.match(
      (await sandboxCall(sb, 'POST', '/open/v1/category', { token, rawBody: '{bad', headers: { 'content-type': 'application/json' } })).json.error,
      /invalid JSON/,
    );
    assert.match((await call('POST', '/open/v1/category', [1])).json.error, /must be a JSON object/);
    assert.equal((await sandboxCall(sb, 'POST', '/open/v1/category', { token, rawBody: '{}', headers: { 'content-type': 'text/plain' } })).status, 415);
  });
});

describe('sends', () => {
  test('master data chain, records in the Record shape, duplicates allowed and counted', async () => {
    const cat = await call('POST', '/open/v1/category', { name: 'Congelados', codeERP: 'CAT-CONG', status: 1 });
    assert.equal(cat.status, 200);
    const fam = await call('POST', '/open/v1/family', { name: 'Sorvetes', codeERP: 'FAM-SORV', categoryID: cat.json.data.id, status: 1 });
    assert.equal(fam.status, 200);
    const body = {
      code: 'SORV-2L',
      name: 'Sorvete 2L',
      categoryID: cat.json.data.id,
      familyID: fam.json.data.id,
      logisticsProfileID: ids['profile'],
      unitmeasurement: 'UN',
      status: 1,
    };
    const p1 = await call('POST', '/open/v1/product', body);
    const p2 = await call('POST', '/open/v1/product', body);
    assert.equal(p1.status, 200);
    assert.equal(p2.status, 200);
    assert.notEqual(p1.json.data.id, p2.json.data.id);
    ProductRecord.parse(p1.json.data);
    singleEnvelope(ProductRecord).parse(p1.json);
    const counts = (await sandboxCall(sb, 'GET', '/__sandbox/counts')).json;
    assert.equal(counts.creations.Product['SORV-2L'], 2);
    assert.equal(counts.creations.Category['CAT-CONG'], 1);
    assert.deepEqual(counts.duplicates.Product, ['SORV-2L']);
    assert.equal(counts.records.Product, sb.state.collections.Product.length);
  });

  test('picking list response adds ids, pendentQuantity and separateQuantity', async () => {
    const codeERP = 'a1b2c3d4-0000-5000-8000-000000000001';
    const r = await call('POST', '/open/v1/pickinglist', {
      companyID: ids['company'],
      branchID: ids['branch'],
      warehouseID: ids['warehouse'],
      dockID: ids['dock'],
      ownerID: ids['owner'],
      order: 'PED-1001',
      codeERP,
      status: 1,
      pickingItens: [
        { productID: ids['product'], quantity: 3, status: 1 },
        { productID: ids['product'], quantity: 2.5, status: 1, lotNumber: 'L1' },
      ],
    });
    assert.equal(r.status, 200, JSON.stringify(r.json));
    const rec = PickingListRecord.parse(r.json.data);
    assert.equal(rec.pickingStatus, '0');
    assert.equal(typeof r.json.data.description, 'string');
    for (const [i, it] of rec.pickingItens.entries()) {
      assert.match(it.id!, /^[0-9a-f-]{36}$/);
      assert.equal(it.pickingListID, rec.id);
      assert.equal(it.pendentQuantity, [3, 2.5][i]);
      assert.equal(it.separateQuantity, 0);
    }
    const counts = (await sandboxCall(sb, 'GET', '/__sandbox/counts')).json;
    assert.equal(counts.creations.PickingList[`PED-1001|${ids['owner']}`], 1);
  });

  test('purchase order response adds items with received 0 and lotDetails []', async () => {
    const prov = await call('POST', '/open/v1/Provider', { socialName: 'Fornecedor PO', cnpj: validCnpj('998887770001'), codeERP: 'F-PO' });
    const r = await call('POST', '/open/v1/purchaseorder', {
      companyID: ids['company'],
      branchID: ids['branch'],
      warehouseID: ids['warehouse'],
      docksID: ids['dock'],
      nf: '000123',
      codeERP: 'a1b2c3d4-0000-5000-8000-000000000002',
      providerID: prov.json.data.id,
      ownersID: ids['owner'],
      status: 1,
      purchaseOrderItens: [{ productID: ids['product'], quantity: 10, status: 1, materialStatusID: ids['available'] }],
    });
    assert.equal(r.status, 200, JSON.stringify(r.json));
    const rec = PurchaseOrderRecord.parse(r.json.data);
    assert.equal(rec.receiptStatus, '1');
    const it = rec.purchaseOrderItens[0]!;
    assert.equal(it.purchaseOrderID, rec.id);
    assert.equal(it.received, 0);
    assert.deepEqual(it.lotDetails, []);
    const wrongDock = await call('POST', '/open/v1/purchaseorder', { ...r.json.data, id: undefined });
    assert.equal(wrongDock.status, 400, 'a Record body is not a Create body (server fields refused)');
  });

  test('PUT needs an existing id; DELETE answers data null; by-code read finds the latest', async () => {
    const cnpj = validCnpj('443332220001');
    const c1 = await call('POST', '/open/v1/ShippingCompany', { name: 'Transp A', cnpj, codeERP: 'T-1', status: 1 });
    assert.equal(c1.status, 200);
    const upd = await call('PUT', '/open/v1/ShippingCompany', { id: c1.json.data.id, name: 'Transp A2', cnpj, codeERP: 'T-1', status: 1 });
    assert.equal(upd.status, 200);
    assert.equal(upd.json.data.name, 'Transp A2');
    const byErp = await call('GET', '/open/v1/ShippingCompany/erp/T-1');
    assert.equal(byErp.json.data.name, 'Transp A2');
    const ghost = await call('PUT', '/open/v1/ShippingCompany', { id: '22222222-3333-4444-8555-666666666666', name: 'X', cnpj, status: 1 });
    assert.equal(ghost.status, 404);
    assert.match(ghost.json.error, /ShippingCompany with id 22222222-3333-4444-8555-666666666666 not found/);

    const units = sb.state.collections.UnitMeasurement;
    const cf = await call('POST', '/open/v1/ConversionFactor', {
      codeERP: 'CF-1',
      productID: ids['product'],
      unitMeasurementInputID: units[1]!.id,
      unitMeasurementInputCount: 12,
      unitMeasurementOutputID: units[0]!.id,
    });
    assert.equal(cf.status, 200);
    assert.equal((await call('GET', `/open/v1/ConversionFactor/${cf.json.data.id}`)).status, 200);
    const del = await call('DELETE', `/open/v1/ConversionFactor/${cf.json.data.id}`);
    assert.equal(del.status, 200);
    assert.equal(del.json.data, null);
    assert.equal((await call('GET', `/open/v1/ConversionFactor/${cf.json.data.id}`)).status, 404);
    assert.equal((await call('DELETE', `/open/v1/ConversionFactor/${cf.json.data.id}`)).status, 404);
    const counts = (await sandboxCall(sb, 'GET', '/__sandbox/counts')).json;
    assert.equal(counts.updates.ShippingCompany, 1);
    assert.equal(counts.deletes.ConversionFactor, 1);
  });
});

describe('stock operations', () => {
  test('lock and unlock count the records they change; nothing to change is 200, stocksLocked 0 and the reason in data.error', async () => {
    const product = sb.state.stock.find((s) => s.warehouseId === ids['warehouse'])!.productId;
    const matching = sb.state.stock.filter((s) => s.warehouseId === ids['warehouse'] && s.productId === product).length;
    assert.ok(matching >= 2);
    const lock = await call('PUT', '/open/v1/Stock/lock', { warehouseId: ids['warehouse'], productId: product, materialStatusId: ids['blocked'] });
    assert.equal(lock.status, 200);
    assert.deepEqual(lock.json.data, { materialStatusId: ids['blocked'], stocksLocked: matching, error: '' });
    const searched = await call('GET', '/open/v1/Stock/search', { warehouseId: ids['warehouse'], productId: product, materialStatusId: ids['blocked'] });
    assert.equal(searched.json.count, matching);
    const lot = sb.state.stock.find((s) => s.warehouseId === ids['warehouse'] && s.productId === product)!.lotNumber!;
    const one = await call('PUT', '/open/v1/Stock/unlock', {
      warehouseId: ids['warehouse'],
      productId: product,
      lotNumber: lot,
      materialStatusId: ids['available'],
    });
    assert.equal(one.json.data.stocksLocked, 1);
    const none = await call('PUT', '/open/v1/Stock/lock', {
      warehouseId: ids['warehouse'],
      productId: product,
      lotNumber: 'NO-SUCH-LOT',
      materialStatusId: ids['blocked'],
    });
    assert.equal(none.status, 200);
    assert.equal(none.json.code, 200);
    assert.equal(none.json.data.stocksLocked, 0);
    assert.match(none.json.data.error, /no available stock record matched the filters/);
    // the same lock again: every matching record is already in that status
    const again = await call('PUT', '/open/v1/Stock/lock', {
      warehouseId: ids['warehouse'],
      productId: product,
      lotNumber: lot,
      materialStatusId: ids['available'],
    });
    assert.equal(again.status, 200);
    assert.equal(again.json.data.stocksLocked, 0);
    assert.match(again.json.data.error, /already in status/);
    const badFk = await call('PUT', '/open/v1/Stock/lock', {
      warehouseId: ids['warehouse'],
      productId: product,
      materialStatusId: '99999999-9999-4999-8999-999999999999',
    });
    assert.equal(badFk.status, 400);
    assert.match(badFk.json.error, /materialStatusId: MaterialStatus/);
  });

  test('Stock/search: body filters on GET, strict filter names, empty body = all', async () => {
    const all = await call('GET', '/open/v1/Stock/search');
    assert.equal(all.json.count, sb.state.stock.length);
    const bad = await call('GET', '/open/v1/Stock/search', { productID: ids['product'] });
    assert.equal(bad.status, 400);
    assert.match(bad.json.error, /productID: unknown field/);
    const byProduct = await call('GET', '/open/v1/Stock/search?PagingLimit=1', { productId: ids['product'] });
    assert.equal(byProduct.json.count, sb.state.stock.filter((s) => s.productId === ids['product']).length);
    assert.equal(byProduct.json.data.length, 1);
  });

  test('sync: applied only on the last chunk; chunk after the last refused; productIds must exist', async () => {
    const session = '5e55a000-0000-4000-8000-000000000001';
    const products = sb.state.collections.Product;
    const before = JSON.stringify(sb.state.stock);
    const c1 = await call('POST', '/open/v1/Stock/gen/sync', {
      sessionId: session,
      ownerId: ids['owner'],
      products: [{ productId: products[0]!.id, quantity: 7 }],
    });
    assert.equal(c1.status, 200);
    assert.deepEqual(c1.json.data, { success: true });
    assert.equal(JSON.stringify(sb.state.stock), before, 'not applied before the last chunk');
    const c2 = await call('POST', '/open/v1/Stock/gen/sync', {
      sessionId: session,
      ownerId: ids['owner'],
      isLastChunk: true,
      products: [{ productId: products[1]!.id, quantity: 4 }],
    });
    assert.equal(c2.status, 200);
    const owned = sb.state.stock.filter((s) => s.ownerId === ids['owner']);
    assert.deepEqual(
      owned.map((s) => [s.productId, s.quantity]),
      [
        [products[0]!.id, 7],
        [products[1]!.id, 4],
      ],
    );
    const late = await call('POST', '/open/v1/Stock/gen/sync', { sessionId: session, ownerId: ids['owner'], products: [] });
    assert.equal(late.status, 409);
    assert.match(late.json.error, /already completed/);
    const bad = await call('POST', '/open/v1/Stock/gen/sync', {
      sessionId: '5e55a000-0000-4000-8000-000000000002',
      ownerId: ids['owner'],
      products: [{ productId: '99999999-9999-4999-8999-999999999999', quantity: 1 }],
    });
    assert.equal(bad.status, 400);
    assert.match(bad.json.error, /products\[0\]\.productId: Product/);
  });
});

describe('synthetic stock behaves like stored stock', () => {
  test('search, lock and sync see the derived records', async () => {
    const s2 = await startSandbox({ seed: 'synthetic', stockRecords: 120 });
    try {
      const t = (await sandboxToken(s2)).token;
      const c = s2.state.collections;
      const stored = s2.state.stock.length;
      const product = c.Product[0]!.id;
      const wh = c.Warehouse[2]!.id; // CD-MG01 has no stored stock: every match is synthetic
      const blocked = c.MaterialStatus[1]!.id;
      const found = await sandboxCall(s2, 'GET', '/open/v1/Stock/search', { token: t, body: { warehouseId: wh, productId: product } });
      assert.ok(found.json.count > 0);
      assert.ok(found.json.data.every((r: { warehouseId: string; productId: string }) => r.warehouseId === wh && r.productId === product));
      const lock = await sandboxCall(s2, 'PUT', '/open/v1/Stock/lock', { token: t, body: { warehouseId: wh, productId: product, materialStatusId: blocked } });
      assert.equal(lock.json.data.stocksLocked, found.json.count);
      const nowBlocked = await sandboxCall(s2, 'GET', '/open/v1/Stock/search', { token: t, body: { warehouseId: wh, materialStatusId: blocked } });
      assert.equal(nowBlocked.json.count, found.json.count);
      assert.ok(nowBlocked.json.data.every((r: { materialStatusName: string }) => r.materialStatusName === 'Bloqueado'));
      assert.equal(s2.state.stock.length, stored, 'no synthetic record was materialised');
      const sync = await sandboxCall(s2, 'POST', '/open/v1/Stock/gen/sync', {
        token: t,
        body: {
          sessionId: '5e55a000-0000-4000-8000-0000000000aa',
          ownerId: c.Owners[0]!.id,
          isLastChunk: true,
          products: [{ productId: product, quantity: 3 }],
        },
      });
      assert.equal(sync.status, 200);
      assert.equal((await sandboxCall(s2, 'GET', '/open/v1/Stock', { token: t })).json.count, 1, "the owner's whole position was replaced");
    } finally {
      await s2.close();
    }
  });
});

describe('inspection API', () => {
  test('GET /__sandbox/state: whole state, one collection, unknown resource 404; no auth or User-Agent needed', async () => {
    const { request } = await import('undici');
    const res = await request(`${sb.url}/__sandbox/state?resource=Product`);
    assert.equal(res.statusCode, 200);
    const products = (await res.body.json()) as Array<{ id: string }>;
    assert.deepEqual(
      products.map((p) => p.id),
      sb.state.collections.Product.map((p) => p.id),
    );
    const all = await sandboxCall(sb, 'GET', '/__sandbox/state');
    assert.equal(all.json.collections.Warehouse.length, 3);
    assert.equal(all.json.seed, 'api-tests');
    assert.ok(!JSON.stringify(all.json).includes(sb.secretKey), 'no credential in the state');
    const stock = await sandboxCall(sb, 'GET', '/__sandbox/state?resource=Stock');
    assert.equal(stock.json.stored.length, sb.state.stock.length);
    assert.equal((await sandboxCall(sb, 'GET', '/__sandbox/state?resource=Nope')).status, 404);
    assert.equal((await sandboxCall(sb, 'GET', '/__sandbox/nothing')).status, 404);
  });
});
