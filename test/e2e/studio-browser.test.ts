/**
 * The studio in a real browser (Chromium from the OS packages, driven by playwright-core, which downloads no
 * browser): open a sample, accept infer's draft, fix a field in the editor, see the records change, save, and
 * `wmsbridge check` (the CLI, as a child process) passes.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { copyFile, mkdir, readFile, writeFile } from 'node:fs/promises';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { makeTempDir } from '../helpers/tmp.js';
import { PROJECT_ROOT, runCli } from '../helpers/cli.js';
import { openStudio } from '../../src/app/studio.js';
import type { Studio } from '../../src/studio/server.js';

const CHROMIUM = process.env['CHROMIUM'] ?? '/usr/bin/chromium';
const skip = existsSync(CHROMIUM) ? false : `${CHROMIUM} not installed: the studio is not tested in a browser (apt-get install -y chromium)`;
const SAMPLE = join(PROJECT_ROOT, 'test', 'fixtures', 'infer', 'SB1_PRODUTOS_20241105.csv');

let dir: string;
let cleanup: () => Promise<void>;
let config: string;
let studio: Studio;

before(async () => {
  ({ dir, cleanup } = await makeTempDir('wmsbridge-studio-browser-'));
  await mkdir(join(dir, 'inbox', 'cadastros'), { recursive: true });
  await mkdir(join(dir, 'mappings'));
  await copyFile(SAMPLE, join(dir, 'inbox', 'cadastros', 'SB1_PRODUTOS_20241105.csv'));
  config = join(dir, 'wmsbridge.config.yaml');
  await writeFile(
    config,
    `inboxDir: ${join(dir, 'inbox')}\noutboxDir: ${join(dir, 'outbox')}\nstateDir: ${join(dir, 'state')}\nmappingsDir: ${join(dir, 'mappings')}\nwms:\n  url: sandbox\n`,
  );
  if (!skip) studio = await openStudio({ path: join(dir, 'inbox'), configFile: config });
});
after(async () => {
  await studio?.close();
  await cleanup();
});

test('open a sample, accept the draft, fix a field, see the records change, save, check passes', { skip, timeout: 120_000 }, async () => {
  const { chromium } = await import('playwright-core');
  const browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox', '--disable-gpu'] });
  try {
    const page = await browser.newPage({ viewport: { width: 1600, height: 1000 } });
    const errors: string[] = [];
    page.on('pageerror', (e) => errors.push(e.message));
    // the page may reach the studio only: any other request fails the test
    const outside: string[] = [];
    page.on('request', (r) => {
      if (!r.url().startsWith(studio.url)) outside.push(r.url());
    });
    await page.goto(studio.openUrl);
    assert.equal(page.url(), studio.url, 'the token left the address bar');
    // the file list and infer's draft (pt-BR by default)
    await page.locator('[data-testid=file-state]', { hasText: 'sem mapeamento' }).waitFor();
    await page.locator('[data-testid=mapping-info]', { hasText: 'Rascunho proposto pelo infer' }).waitFor();
    // the preview's line says what it found once it is done ("Pré-visualizando…" until then): wait for it, not time
    await page.locator('[data-testid=stats]', { hasText: /TODO.*fields\.familyID/ }).waitFor();
    await page.locator('[data-testid=record]').first().waitFor();
    assert.equal(await page.locator('[data-testid=record]').count(), 19);
    assert.ok((await page.locator('.cm-todo-line').count()) >= 1, 'the TODO line is highlighted');
    assert.match((await page.locator('[data-testid=stats]').textContent()) ?? '', /TODO.*fields\.familyID/);
    assert.match((await page.locator('[data-testid=record]').first().textContent()) ?? '', /familyID<ref Family TODO>/);
    // the grid: infer's type on the column header; a blocked row is a row no mapping selects
    await page.locator('[data-testid=grid] th', { hasText: 'B1_CODBAR' }).waitFor();
    assert.match((await page.locator('[data-testid=grid] th', { hasText: 'B1_CODBAR' }).textContent()) ?? '', /gtin 100%/);
    assert.equal(await page.locator('[data-testid=grid] tr.unsent').count(), 1);

    // fix the field in the editor: select the TODO constant and type over it (real key events)
    const at = await page.evaluate(() => {
      const v = (globalThis as unknown as { studioEditor: { state: { doc: { toString(): string } } } }).studioEditor;
      const text = v.state.doc.toString();
      return text.indexOf('{ const: TODO }') + '{ const: '.length;
    });
    assert.ok(at > 20);
    await page.locator('.cm-content').click();
    await page.evaluate((from) => {
      const v = (globalThis as unknown as { studioEditor: { dispatch(tr: unknown): void } }).studioEditor;
      v.dispatch({ selection: { anchor: from, head: from + 4 } });
    }, at);
    await page.keyboard.type('GERAL');
    await page.locator('[data-testid=record]', { hasText: '<ref Family GERAL>' }).first().waitFor({ timeout: 15_000 });
    assert.equal(await page.locator('.cm-todo-line').count(), 0, 'no TODO left to highlight');
    // the stats line follows the same preview: waited for (a failure times out naming what it shows)
    await page
      .waitForFunction(
        () =>
          !(
            (globalThis as unknown as { document: { querySelector(s: string): { textContent: string | null } | null } }).document.querySelector(
              '[data-testid=stats]',
            )?.textContent ?? 'TODO'
          ).includes('TODO'),
        undefined,
        { timeout: 15_000 },
      )
      .catch(async () => assert.fail(`the stats line still names a TODO: ${await page.locator('[data-testid=stats]').textContent()}`));

    // a record shows its source line and columns; a cell shows the fields it feeds
    await page.locator('[data-testid=record]').first().click();
    assert.equal(await page.locator('[data-testid=grid] tr.hl').getAttribute('data-line'), '2');
    assert.ok((await page.locator('[data-testid=grid] tr.hl td.hl-col[data-col=B1_CODBAR]').count()) === 1);
    await page.locator('[data-testid=grid] tr[data-line="3"] td[data-col=B1_COD]').click();
    assert.deepEqual((await page.locator('[data-testid=fed-field]').allTextContents()).sort(), ['code', 'codeERP']);

    // save, then check's result
    await page.locator('[data-testid=save]').click();
    await page.waitForFunction(
      () => (globalThis as unknown as { document: { body: { dataset: Record<string, string | undefined> } } }).document.body.dataset['saved'] !== undefined,
      undefined,
      { timeout: 60_000 },
    );
    const checkText = (await page.locator('[data-testid=check]').textContent()) ?? '';
    assert.equal(
      await page.evaluate(
        () => (globalThis as unknown as { document: { body: { dataset: Record<string, string | undefined> } } }).document.body.dataset['saved'],
      ),
      '0',
      checkText,
    );
    assert.match(checkText, /check: configuração e mapeamentos válidos/);
    await page.locator('[data-testid=file-state]', { hasText: 'mapeado' }).waitFor();
    assert.deepEqual(errors, []);
    assert.deepEqual(outside, []);
  } finally {
    await browser.close();
  }
  const saved = await readFile(join(dir, 'mappings', 'sb1-produtos.yaml'), 'utf8');
  assert.match(saved, /familyID: \{ ref: Family, from: \{ const: GERAL \} \}/);
  const check = await runCli(['check', '--config', config], { timeoutMs: 60_000 });
  assert.equal(check.code, 0, check.stderr + check.stdout);
});
