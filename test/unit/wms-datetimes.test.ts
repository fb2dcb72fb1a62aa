import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { formatDateTime, withDateTimes } from '../../src/wms/datetimes.js';
import { createWmsClient } from '../../src/wms/client.js';
import { startSandbox, type Sandbox } from '../helpers/sandbox.js';

const sandboxes: Sandbox[] = [];
after(() => Promise.all(sandboxes.map((s) => s.close())));

test('wms.dateTimes: utc as mapped, local-offset and local in the WMS time zone', () => {
  const z = '2026-03-01T13:00:00.000Z';
  assert.equal(formatDateTime(z, 'utc', 'America/Sao_Paulo'), z);
  assert.equal(formatDateTime(z, 'local-offset', 'America/Sao_Paulo'), '2026-03-01T10:00:00-03:00');
  assert.equal(formatDateTime(z, 'local', 'America/Sao_Paulo'), '2026-03-01T10:00:00');
  assert.equal(formatDateTime('2026-07-01T12:00:00Z', 'local-offset', 'Europe/Lisbon'), '2026-07-01T13:00:00+01:00', 'summer time of the zone');
  assert.equal(formatDateTime('2026-03-01', 'local', 'America/Sao_Paulo'), '2026-03-01', 'a bare date is a date');
  assert.equal(formatDateTime('2026-03-01T10:00:00-03:00', 'local', 'America/Sao_Paulo'), '2026-03-01T10:00:00-03:00', 'an offset is kept');
  const body = { registrationDate: z, items: [{ expirationDate: '2027-01-10T03:00:00Z', lotNumber: 'L1' }] };
  assert.deepEqual(withDateTimes(body, 'local', 'America/Sao_Paulo'), {
    registrationDate: '2026-03-01T10:00:00',
    items: [{ expirationDate: '2027-01-10T00:00:00', lotNumber: 'L1' }],
  });
  assert.equal(body.registrationDate, z, 'the input is not changed');
});

test('against a WMS that reads DateTimes as local time: the same instant arrives', async () => {
  const sb = await startSandbox({ seed: 'datetimes', dialect: 'dateTimes=local' });
  sandboxes.push(sb);
  const c = sb.state.collections;
  for (const mode of ['local', 'local-offset'] as const) {
    const client = createWmsClient({ baseUrl: sb.url, accessKeyID: sb.accessKeyID, secretKey: sb.secretKey, dateTimes: mode });
    try {
      const provider = await client.createProvider({ socialName: 'P', cnpj: '11222333000181', codeERP: `P-${mode}` });
      await client.createPurchaseOrder({
        companyID: c.Company[0]!.id,
        branchID: c.Branch[0]!.id,
        warehouseID: c.Warehouse[0]!.id,
        providerID: provider!.id,
        ownersID: c.Owners[0]!.id,
        nf: `NF-${mode}`,
        codeERP: '6f1c8f3e-8d1a-5b7c-9e2f-0a1b2c3d4e5f',
        registrationDate: '2026-03-01T13:00:00.000Z',
        status: 1,
        finishCallBack: false,
        purchaseOrderItens: [{ productID: c.Product[0]!.id, quantity: 1, status: 1 }],
      } as never);
    } finally {
      await client.close();
    }
    const stored = String(c.PurchaseOrder.at(-1)!['registrationDate']);
    assert.equal(Date.parse(stored), Date.parse('2026-03-01T13:00:00.000Z'), `${mode}: stored ${stored}`);
  }
});

test('an unknown wms time zone is a configuration error', () => {
  assert.throws(
    () => createWmsClient({ baseUrl: 'http://127.0.0.1:1', accessKeyID: 'a', secretKey: 'b', dateTimes: 'local', timeZone: 'Mars/Base' }),
    /timeZone "Mars\/Base" is not an IANA time zone/,
  );
});
