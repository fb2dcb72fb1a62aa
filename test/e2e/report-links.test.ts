/**
 * The report links the rejects file actually written: for an XML (or JSON) document that is the listing of
 * reasons `<name>-rejects-<run>.errors.txt` (a document cannot be split back), not a `.xml` that does not exist.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { mkdir, readdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { makeTempDir } from '../helpers/tmp.js';
import { runCli } from '../helpers/cli.js';
import { startSandbox, type Sandbox } from '../helpers/sandbox.js';

let sb: Sandbox;
let tmp: { dir: string; cleanup: () => Promise<void> };

before(async () => {
  sb = await startSandbox();
  tmp = await makeTempDir('wmsbridge-report-links-');
});

after(async () => {
  await sb?.close();
  await tmp?.cleanup();
});

test('an XML file with a rejected item: the report and summary point at the .errors.txt written', { timeout: 60_000 }, async () => {
  const d = tmp.dir;
  await mkdir(join(d, 'inbox', 'xml'), { recursive: true });
  await mkdir(join(d, 'mappings'));
  await writeFile(
    join(d, 'mappings', 'xml.yaml'),
    'name: xml\nmatch: { channel: xml, files: "*.xml" }\nsource: { format: xml, itemPath: cats/cat }\ntarget: Category\nfields:\n  codeERP: { path: codigo }\n  name: { path: nome }\n',
  );
  await writeFile(
    join(d, 'inbox', 'xml', 'CATS.xml'),
    '<?xml version="1.0"?>\n<cats>\n<cat><codigo>X1</codigo><nome>Um</nome></cat>\n<cat><codigo></codigo><nome>Sem codigo</nome></cat>\n</cats>\n',
  );
  await writeFile(
    join(d, 'wmsbridge.config.json'),
    JSON.stringify({
      inboxDir: 'inbox',
      outboxDir: 'outbox',
      mappingsDir: 'mappings',
      stateDir: 'state',
      channels: [{ name: 'xml', readiness: { mode: 'stable', checks: 1, intervalMs: 10 } }],
      wms: { url: sb.url, accessKeyId: sb.accessKeyID },
    }),
  );
  const res = await runCli(['run', '--config', join(d, 'wmsbridge.config.json')], {
    env: { WMS_SECRET_KEY: sb.secretKey, WMSBRIDGE_LOG_LEVEL: 'warn' },
    timeoutMs: 50_000,
  });
  assert.equal(res.code, 1, res.stdout);
  const reports = (await readdir(join(d, 'outbox', 'reports'), { recursive: true })).map(String).filter((f) => f.endsWith('.json'));
  assert.ok(reports.length >= 1, 'a JSON report');
  const summary = JSON.parse(await readFile(join(d, 'outbox', 'reports', reports[0]!), 'utf8'));
  const file = summary.files.find((f: { name: string }) => f.name === 'CATS.xml');
  assert.ok(file?.rejectsFile, JSON.stringify(file));
  assert.match(file.rejectsFile, /CATS-rejects-.*\.errors\.txt$/);
  assert.ok(existsSync(join(d, 'outbox', file.rejectsFile)), `the linked file exists: ${file.rejectsFile}`);
});
