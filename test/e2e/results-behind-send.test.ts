/**
 * The result file is written behind the send loop (run-finish.ts finishBehindSend): while records are still being
 * sent its hidden temp file already grows in outbox/results, and the WMS going away mid-run (records in flight put
 * back to pending, the rest never sent, exit 75) still gives the files a single read of the journal after the send
 * writes, byte for byte: nothing taken behind the send changed afterwards.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdir, readdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { makeTempDir } from '../helpers/tmp.js';
import { runCli } from '../helpers/cli.js';
import { startSandbox, sandboxCall, type Sandbox } from '../helpers/sandbox.js';
import { createSqliteJournal } from '../../src/journal/sqlite.js';
import { finishFile } from '../../src/app/finish-file.js';
import { loadMappingFile } from '../../src/map/index.js';
import { categoryMapping } from '../helpers/fixtures.js';

let sb: Sandbox;
let tmp: { dir: string; cleanup: () => Promise<void> };
before(async () => {
  sb = await startSandbox({ seed: 19 });
  tmp = await makeTempDir('wmsbridge-e2e-behind-');
});
after(async () => {
  await sb?.close().catch(() => undefined);
  await tmp?.cleanup();
});

const ROWS = 3000;
/** rows without a name: rejected when mapped, in the rejects file */
const NAMELESS = new Set([10, 1200, 2990]);

test('results are written while records are sent; the WMS gone mid-run still gives the files of one read after the send', { timeout: 120_000 }, async () => {
  const d = tmp.dir;
  await mkdir(join(d, 'inbox', 'cadastros'), { recursive: true });
  await mkdir(join(d, 'mappings'));
  await writeFile(join(d, 'mappings', 'cat.yaml'), categoryMapping({ channel: 'cadastros', files: 'CATEGORIAS_*.csv' }));
  const lines = ['codigo;nome'];
  for (let i = 1; i <= ROWS; i++) lines.push(`BEHIND${i};${NAMELESS.has(i) ? '' : `Categoria ${i}`}`);
  await writeFile(join(d, 'inbox', 'cadastros', 'CATEGORIAS_behind.csv'), `${lines.join('\r\n')}\r\n`);
  await writeFile(
    join(d, 'wmsbridge.config.json'),
    JSON.stringify({
      channels: [{ name: 'cadastros', readiness: { mode: 'stable', checks: 1, intervalMs: 10 } }],
      wms: { url: sb.url, accessKeyId: sb.accessKeyID, retries: 1, circuitBreaker: { failures: 3, cooldownMs: 60_000 } },
      sending: { concurrency: 4 },
    }),
  );
  sb.setFaults({ latencyMs: 4 });
  const resultsDir = join(d, 'outbox', 'results', 'cadastros');
  const created = async (): Promise<number> =>
    Object.keys(((await sandboxCall(sb, 'GET', '/__sandbox/counts')).json as { creations: Record<string, Record<string, number>> }).creations['Category'] ?? {})
      .length;

  const run = runCli(['run', '--config', join(d, 'wmsbridge.config.json')], {
    env: { WMS_SECRET_KEY: sb.secretKey, WMSBRIDGE_LOG_LEVEL: 'warn' },
    timeoutMs: 100_000,
  });
  // watch the results folder while the records are sent; the WMS goes away after half of them
  let seenWhileSending = 0;
  for (let n = 0; n < 1200; n++) {
    const sent = await created();
    const names = await readdir(resultsDir).catch(() => [] as string[]);
    if (names.some((f) => /^\.CATEGORIAS_behind\..*\.result\.csv\..*\.tmp$/.test(f))) seenWhileSending = Math.max(seenWhileSending, sent);
    if (sent >= ROWS / 2) break;
    await new Promise((r) => setTimeout(r, 50)); // sampling interval of the results folder while records are sent
  }
  await sb.close();
  const res = await run;
  assert.equal(res.code, 75, `the WMS went away: try later\n${res.stdout}\n${res.stderr.slice(-2000)}`);
  assert.ok(seenWhileSending > 0, 'the result file was being written while records were still sent');

  // what a single read of the journal after the send writes, for the same file
  const journal = await createSqliteJournal({ path: join(d, 'state', 'journal.db') });
  try {
    const [file] = await journal.listFiles({});
    assert.ok(file);
    const mapping = await loadMappingFile(join(d, 'mappings', 'cat.yaml'));
    const [written] = await readdir(resultsDir);
    assert.ok(written, 'a result file');
    const stamp = /\.(\d{8}-\d{6})\.result\.csv$/.exec(written!)![1]!;
    const now = new Date(`${stamp.slice(0, 4)}-${stamp.slice(4, 6)}-${stamp.slice(6, 8)}T${stamp.slice(9, 11)}:${stamp.slice(11, 13)}:${stamp.slice(13, 15)}Z`);
    const fresh = join(d, 'fresh');
    const figures = await finishFile({ file: file!, mapping, journal, outboxDir: fresh, csv: {}, now });
    assert.equal(figures.records, ROWS);
    assert.ok((figures.outcomes.created ?? 0) >= ROWS / 2 - 10, `half sent: ${JSON.stringify(figures.outcomes)}`);
    assert.ok((figures.outcomes.skipped ?? 0) > 0, `the rest waits for the next run: ${JSON.stringify(figures.outcomes)}`);
    assert.equal(figures.outcomes.rejected, NAMELESS.size);
    for (const sub of ['results', 'rejects']) {
      const names = await readdir(join(d, 'outbox', sub, 'cadastros'));
      assert.deepEqual(names, await readdir(join(fresh, sub, 'cadastros')), `${sub}: the same files, and no temp file left`);
      for (const f of names)
        assert.equal(await readFile(join(d, 'outbox', sub, 'cadastros', f), 'utf8'), await readFile(join(fresh, sub, 'cadastros', f), 'utf8'), `${sub}/${f}`);
    }
  } finally {
    await journal.close();
  }
});
