/**
 * Lookups that do not depend on the WMS making the same choices as wmsbridge (issue 14): identifier-aware
 * matching, the cross-reference's identifying fields, Owners from the Owners list, and messages that say
 * what was tried. Real SQLite journal, real sandboxes in the dialects concerned.
 */
import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { makeTempDir } from '../helpers/tmp.js';
import { startSandbox, type Sandbox } from '../helpers/sandbox.js';
import { createSqliteJournal } from '../../src/journal/sqlite.js';
import type { Journal } from '../../src/journal/types.js';
import { createRefResolver, identifyingFields } from '../../src/push/refs.js';
import { createReferenceCache } from '../../src/push/reference-cache.js';
import { findOwner } from '../../src/push/owners.js';
import { createStaticReferenceCache } from '../../src/map/static-refs.js';
import { matchKey, sameIdentifier } from '../../src/map/identifiers.js';
import { createWmsClient } from '../../src/wms/client.js';
import type { WmsClient } from '../../src/wms/client-types.js';

let tmp: { dir: string; cleanup: () => Promise<void> };
let journal: Journal;
const sandboxes: Sandbox[] = [];
const clients: WmsClient[] = [];

before(async () => {
  tmp = await makeTempDir('wmsbridge-lookups-');
  journal = await createSqliteJournal({ path: join(tmp.dir, 'journal.db') });
});
after(async () => {
  for (const c of clients) await c.close();
  for (const s of sandboxes) await s.close();
  await journal.close();
  await tmp.cleanup();
});

async function clientFor(dialect: string): Promise<{ sb: Sandbox; client: WmsClient }> {
  const sb = await startSandbox({ seed: 'lookups', dialect });
  sandboxes.push(sb);
  const client = createWmsClient({ baseUrl: sb.url, accessKeyID: sb.accessKeyID, secretKey: sb.secretKey });
  clients.push(client);
  return { sb, client };
}

const ref = (resource: string, value: string, by?: string) => ({ f: { $ref: { resource, value, ...(by ? { by } : {}) } } }) as Record<string, unknown>;

describe('identifier-aware matching', () => {
  test('CNPJ/CPF, EAN/GTIN, CEP and NCM compare by digits; codes and names trimmed and case-insensitive', () => {
    assert.ok(sameIdentifier('cnpj', '11.222.333/0002-62', '11222333000262'));
    assert.ok(sameIdentifier('cnpj', '01.222.333/0002-62', '1222333000262'), 'a leading zero lost in a spreadsheet');
    assert.ok(!sameIdentifier('cnpj', '11.222.333/0002-62', '11222333000181'));
    assert.ok(sameIdentifier('barCode', '07891234567895', '7891234567895'), 'GTIN-14 with a leading zero = EAN-13');
    assert.ok(sameIdentifier('postalCode', '01310-100', '1310100'));
    assert.ok(sameIdentifier('ncm', '1905.90.20', '19059020'));
    assert.ok(sameIdentifier('codeERP', ' cd-sp01 ', 'CD-SP01'));
    assert.ok(!sameIdentifier('codeERP', '0001', '1'), 'codes are not numbers: leading zeros count');
    assert.notEqual(matchKey('cnpj', 'abc'), matchKey('cnpj', ''), 'a value without digits never matches an empty one');
  });

  test('a read-only lookup by cnpj finds a branch the WMS answers masked', () => {
    const cache = createStaticReferenceCache({ Branch: [{ id: 'b2', name: 'Filial', cnpj: '11.222.333/0002-62' }] });
    assert.equal(cache.find('Branch', 'cnpj', '11222333000262'), 'b2');
    assert.equal(cache.find('Branch', 'CNPJ', ' 11.222.333/0002-62 '), 'b2');
    assert.equal(cache.find('Branch', 'cnpj', '11222333000181'), undefined);
  });

  test('against the masked-CNPJ dialect: Branch by the 14 digits of an NF-e', async () => {
    const { sb, client } = await clientFor('cnpjFormat=masked');
    const cache = createReferenceCache(client);
    await cache.load(['Branch']);
    const digits = String(sb.state.collections.Branch[1]!['cnpj']);
    assert.match(digits, /^\d{14}$/);
    assert.equal(cache.find('Branch', 'cnpj', digits), sb.state.collections.Branch[1]!.id);
  });
});

describe('the cross-reference keeps every identifying field', () => {
  test('a unit created with codeERP 002 is found by its symbol; a provider by its CNPJ, masked or not', async () => {
    const resolver = createRefResolver({ journal, client: null, refCache: createReferenceCache(null), failures: new Map() });
    const unit = { name: 'Caixa', symbol: 'CX', codeERP: '002', status: 1 };
    await journal.putXref('UnitMeasurement', '002', 'unit-002', 'h');
    await journal.putXrefFields('UnitMeasurement', '002', identifyingFields('UnitMeasurement', unit));
    const r = await resolver.resolve(ref('UnitMeasurement', 'cx', 'symbol'));
    assert.deepEqual(r, { ok: true, payload: { f: 'unit-002' } });
    await journal.putXref('Provider', 'FO-1', 'prov-1', 'h');
    await journal.putXrefFields('Provider', 'FO-1', identifyingFields('Provider', { socialName: 'F', cnpj: '11222333000181', codeERP: 'FO-1' }));
    assert.deepEqual(await resolver.resolve(ref('Provider', '11.222.333/0001-81', 'cnpj')), { ok: true, payload: { f: 'prov-1' } });
  });

  test('not found: the message says exactly what was tried', async () => {
    const resolver = createRefResolver({ journal, client: null, refCache: createReferenceCache(null), failures: new Map() });
    const r = await resolver.resolve(ref('UnitMeasurement', 'ZZ', 'symbol'));
    assert.equal(r.ok, false);
    assert.equal(
      (r as { message: string }).message,
      "UnitMeasurement with symbol 'ZZ' not found: not created by wmsbridge (cross-reference by key and by symbol, trimmed, case-insensitive); the interface has no read of UnitMeasurement by symbol",
    );
    const p = await resolver.resolve(ref('Provider', '99.999.999/0001-91', 'cnpj'));
    assert.match(
      (p as { message: string }).message,
      /cross-reference by key and by cnpj, by its digits \(masked or not\)\); the interface has no read of Provider by cnpj$/,
    );
  });
});

describe('Owners from the Owners list', () => {
  test('by code and by codeERP, whatever GET /Owners/codeerp/{code} matches', async () => {
    for (const dialect of ['default', 'ownersCodeerpMatches=codeERP']) {
      const { sb, client } = await clientFor(dialect);
      const seedOwner = sb.state.collections.Owners[0]!;
      assert.equal((await findOwner(client, 'code', '001'))?.id, seedOwner.id, dialect);
      assert.equal((await findOwner(client, 'codeERP', String(seedOwner['codeERP'])))?.id, seedOwner.id, dialect);
      assert.equal(await findOwner(client, 'code', '999'), null, dialect);
      const resolver = createRefResolver({ journal, client, refCache: createReferenceCache(client), failures: new Map() });
      assert.deepEqual(await resolver.resolve(ref('Owners', ' 001 ', 'code')), { ok: true, payload: { f: seedOwner.id } }, dialect);
      const miss = await resolver.resolve(ref('Owners', '777', 'code'));
      assert.match((miss as { message: string }).message, /not in the WMS \(searched the Owners list by code\)$/, dialect);
    }
  });

  test('the list is read once per client', async () => {
    const { client } = await clientFor('default');
    await findOwner(client, 'code', '001');
    const before = client.stats().requests;
    for (let i = 0; i < 5; i++) await findOwner(client, 'code', '001');
    assert.equal(client.stats().requests, before);
  });
});

describe('products wmsbridge did not create, through their stock', () => {
  for (const dialect of ['default', 'pagingBase=0'])
    test(`${dialect}: ref Product by code resolves through the Stock list paged with no filter, once per run; unknown or stockless: says so`, async () => {
      const { sb, client } = await clientFor(dialect);
      const resolver = createRefResolver({ journal, client, refCache: createReferenceCache(client), failures: new Map() });
      const seed = sb.state.collections.Product;
      const withStock = seed.find((p) => sb.state.stock.some((s) => s.productId === p.id))!;
      assert.deepEqual(await resolver.resolve(ref('Product', ` ${String(withStock['code'])} `)), { ok: true, payload: { f: withStock.id } });
      assert.deepEqual(await resolver.resolve(ref('Product', String(withStock['code']), 'code')), { ok: true, payload: { f: withStock.id } });
      const before = client.stats().requests;
      await resolver.resolve(ref('Product', String(withStock['code']), 'code'));
      assert.equal(client.stats().requests, before, 'cached for the run');
      const miss = await resolver.resolve(ref('Product', 'NOPE-1', 'code'));
      assert.equal(miss.ok, false);
      assert.match(
        (miss as { message: string }).message,
        /not in the WMS \(read the Stock list \(GET \/open\/v1\/Stock, paged, no filter: the interface defines none\) by productCode: a product unknown to the WMS, or without stock, cannot be resolved through the interface/,
      );
      // the whole list was read for the miss: a second miss reads nothing more (once per run)
      const afterMiss = client.stats().requests;
      assert.equal((await resolver.resolve(ref('Product', 'NOPE-2', 'code'))).ok, false);
      assert.equal(client.stats().requests, afterMiss);
    });
});
