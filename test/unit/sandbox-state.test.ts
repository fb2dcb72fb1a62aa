import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readdirSync } from 'node:fs';
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { startSandbox, sandboxCall, sandboxToken } from '../helpers/sandbox.js';
import { makeTempDir } from '../helpers/tmp.js';

let tmp: { dir: string; cleanup: () => Promise<void> };
before(async () => {
  tmp = await makeTempDir('wmsbridge-sandbox-state-');
});
after(() => tmp.cleanup());

describe('state file', () => {
  test('state survives a restart; ids continue; the save is atomic (no temp file left)', async () => {
    const file = join(tmp.dir, 'state.json');
    const sb1 = await startSandbox({ seed: 'state', stateFile: file });
    const { token } = await sandboxToken(sb1);
    const r = await sandboxCall(sb1, 'POST', '/open/v1/category', { token, body: { name: 'Persistida', codeERP: 'CAT-P', status: 1 } });
    assert.equal(r.status, 200);
    const lock = await sandboxCall(sb1, 'PUT', '/open/v1/Stock/lock', {
      token,
      body: {
        warehouseId: sb1.state.stock[0]!.warehouseId,
        productId: sb1.state.stock[0]!.productId,
        lotNumber: sb1.state.stock[0]!.lotNumber!,
        materialStatusId: sb1.state.collections.MaterialStatus[1]!.id,
      },
    });
    assert.equal(lock.status, 200);
    await sb1.close();
    assert.ok(existsSync(file));
    assert.deepEqual(
      readdirSync(tmp.dir).filter((f) => f.endsWith('.tmp')),
      [],
    );

    const sb2 = await startSandbox({ seed: 'state', stateFile: file });
    try {
      const { token: t2 } = await sandboxToken(sb2);
      const cats = await sandboxCall(sb2, 'GET', '/open/v1/category', { token: t2 });
      assert.equal(cats.status, 405, 'categories have no list endpoint in the interface');
      assert.ok(sb2.state.collections.Category.some((c) => c.id === r.json.data.id && c['codeERP'] === 'CAT-P'));
      assert.equal(sb2.state.stock[0]!.materialStatusName, 'Bloqueado');
      assert.equal(sb2.state.creations['Category']?.['CAT-P'], 1);
      const again = await sandboxCall(sb2, 'POST', '/open/v1/category', { token: t2, body: { name: 'Outra', status: 1 } });
      assert.notEqual(again.json.data.id, r.json.data.id, 'the id sequence continues after a restart');
    } finally {
      await sb2.close();
    }
  });

  test('a state file that cannot be written is refused at start', async () => {
    await assert.rejects(startSandbox({ stateFile: join(tmp.dir, 'no-such-dir', 'state.json') }), /cannot write the state file/);
  });

  test('a file that is not a sandbox state is refused, not overwritten', async () => {
    const file = join(tmp.dir, 'foreign.json');
    await writeFile(file, '{"hello":"world"}');
    await assert.rejects(startSandbox({ stateFile: file }), /not a sandbox state file/);
    assert.equal(await readFile(file, 'utf8'), '{"hello":"world"}');
  });
});
