import { test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { createSqliteJournal } from '../../src/journal/sqlite.js';
import { webhooksSinceLastReport } from '../../src/app/run.js';
import { makeTempDir } from '../helpers/tmp.js';

test('the run report counts the webhooks received since the previous report, and those linked to a record sent', async () => {
  const t = await makeTempDir();
  const journal = await createSqliteJournal({ path: join(t.dir, 'journal.db') });
  try {
    const file = await journal.addFile({ channel: 'pedidos', name: 'PED_1.csv', path: '/x', size: 1, sha256: 'a', runId: 'r' });
    await journal.addRecords(file.id, [{ target: 'PickingList', op: 'create', key: '1', source: { line: 2 }, mapping: 'm', payload: {}, payloadHash: 'h' }]);
    const [rec] = await journal.listRecords({ fileIds: [file.id] });
    await journal.addWebhookEvent({ dedupKey: 'e1', kind: 'order-status', body: '{}', recordId: rec!.id });
    await journal.addWebhookEvent({ dedupKey: 'e2', kind: 'order-status', body: '{}' });
    await journal.addWebhookEvent({ dedupKey: 'e3', kind: 'stock', body: '{}' });
    const first = await webhooksSinceLastReport(journal);
    assert.deepEqual(
      first.sort((a, b) => a.kind.localeCompare(b.kind)),
      [
        { kind: 'order-status', count: 2, linked: 1 },
        { kind: 'stock', count: 1, linked: 0 },
      ],
    );
    assert.deepEqual(await webhooksSinceLastReport(journal), [], 'a second report shows only what arrived since');
    await journal.addWebhookEvent({ dedupKey: 'e4', kind: 'packing', body: '{}' });
    assert.deepEqual(await webhooksSinceLastReport(journal), [{ kind: 'packing', count: 1, linked: 0 }]);
  } finally {
    await journal.close();
    await t.cleanup();
  }
});
