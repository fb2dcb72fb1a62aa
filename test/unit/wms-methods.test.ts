import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createWmsClient } from '../../src/wms/client.js';
import { DELETE_METHODS, GET_METHODS, LIST_METHODS, SEND_METHODS } from '../../src/wms/client-methods.js';
import { ENDPOINTS, type EndpointName } from '../../src/wms/endpoints.js';

describe('the method table generated from the endpoint table', () => {
  test('every endpoint but the two auth calls is a client method, generated or written by hand', async () => {
    const client = createWmsClient({ baseUrl: 'http://127.0.0.1:9', accessKeyID: 'k', secretKey: 'secret' });
    try {
      const generated = new Set<string>([...Object.keys(LIST_METHODS), ...Object.keys(GET_METHODS), ...Object.keys(SEND_METHODS), ...DELETE_METHODS]);
      const byHand = ['searchStock', 'lockStock', 'unlockStock', 'syncStock', 'attachToPickingList'];
      for (const name of Object.keys(ENDPOINTS) as EndpointName[]) {
        if (name === 'authorize' || name === 'refreshToken') continue;
        assert.equal(typeof (client as unknown as Record<string, unknown>)[name], 'function', `${name} is a method`);
        assert.ok(generated.has(name) !== byHand.includes(name), `${name} is either generated or written by hand`);
      }
    } finally {
      await client.close();
    }
  });

  test('a generated method sends its endpoint: method, path with its encoded parameter, paging query', async () => {
    const seen: string[] = [];
    const server = createServer((req, res) => {
      seen.push(`${req.method} ${req.url}`);
      res.setHeader('content-type', 'application/json');
      let answer: unknown = { code: 200, data: null };
      if (req.url === '/open/v1/authorize') answer = { code: 200, data: { token: 't0k3n-abcdef', refreshToken: 'r3fr3sh-abcdef' } };
      else if (req.method === 'GET' && req.url?.startsWith('/open/v1/Provider/erp/')) answer = { code: 404, error: 'not found' };
      else if (req.method === 'GET') answer = { code: 200, data: [], count: 0, totalPages: 0 };
      res.end(JSON.stringify(answer));
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const client = createWmsClient({
      baseUrl: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
      accessKeyID: 'k',
      secretKey: 'secret',
      pagingBase: 1,
      validateRequests: false,
    });
    try {
      assert.equal(await client.getProviderByErp('F/001 ç'), null, '404 is null');
      for await (const _ of client.listDocksOfWarehouse('w 1', { pageSize: 7 })) assert.fail('no records');
      await client.deleteConversionFactor('cf-1');
      assert.equal(
        await client.updateProvider({ id: '3f2504e0-4f89-41d3-9a0c-0305e82c3301', name: 'P', codeERP: 'F-001' } as never),
        null,
        'no record in the answer: null',
      );
      assert.deepEqual(seen, [
        'POST /open/v1/authorize',
        'GET /open/v1/Provider/erp/F%2F001%20%C3%A7',
        'GET /open/v1/Dock/Warehouse/w%201?PagingIndex=1&PagingLimit=7',
        'DELETE /open/v1/ConversionFactor/cf-1',
        'PUT /open/v1/Provider',
      ]);
    } finally {
      await client.close();
      await new Promise<void>((r) => server.close(() => r()));
    }
  });
});
