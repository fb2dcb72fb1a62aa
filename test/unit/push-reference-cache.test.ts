import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createReferenceCache } from '../../src/push/reference-cache.js';
import { startSandbox } from '../helpers/sandbox.js';
import { createWmsClient } from '../../src/wms/client.js';

test('reference cache: reads each resource once, finds by any field case- and space-insensitively, findAll for where-lookups', async () => {
  const sb = await startSandbox();
  const client = createWmsClient({ baseUrl: sb.url, accessKeyID: sb.accessKeyID, secretKey: sb.secretKey });
  try {
    const cache = createReferenceCache(client);
    assert.equal(cache.has('Warehouse'), false);
    await cache.load(['Warehouse', 'Dock', 'Warehouse']);
    const before = client.stats().requests;
    await cache.load(['Warehouse']);
    assert.equal(client.stats().requests, before, 'loaded once');
    const wh = cache.find('Warehouse', 'codeERP', ' cd-sp01 ');
    assert.ok(wh, 'warehouse CD-SP01 found whatever the case and spaces');
    const docks = cache.findAll!('Dock', 'name', 'DOCA 01');
    assert.ok(docks.length >= 2, 'a dock name exists in several warehouses');
    assert.ok(docks.some((d) => d['warehouseID'] === wh));
    assert.equal(cache.find('Warehouse', 'codeERP', 'NOPE'), undefined);
    cache.refresh('Warehouse', [{ id: '00000000-0000-4000-8000-000000000001', codeERP: 'X1' }]);
    assert.equal(cache.find('Warehouse', 'codeERP', 'x1'), '00000000-0000-4000-8000-000000000001');
    assert.equal(cache.find('Warehouse', 'codeERP', 'CD-SP01'), undefined, 'a refresh replaces the resource');
  } finally {
    await client.close();
    await sb.close();
  }
});
