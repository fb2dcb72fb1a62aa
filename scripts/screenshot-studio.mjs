#!/usr/bin/env node
/* global window, document -- in page.evaluate, run by the browser */
// Screenshots of `wmsbridge studio` in pt-BR for docs/MAPPINGS.md, taken with headless Chromium (the OS package,
// driven by playwright-core, which downloads no browser) on a throw-away workspace with a sample of the fixtures.
// Usage: npm run build && node scripts/screenshot-studio.mjs [out-dir] [--chromium /usr/bin/chromium]
// Writes studio-draft.png (infer's draft, its TODO highlighted), studio-record.png (a record clicked: its source
// line and columns in the grid) and studio-save.png (saved, check's result). Exits 2 without Chromium.
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';

const root = fileURLToPath(new URL('..', import.meta.url));
const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: { chromium: { type: 'string', default: process.env.CHROMIUM ?? '/usr/bin/chromium' } },
});
const outDir = resolve(positionals[0] ?? join(root, 'docs', 'img'));
if (!existsSync(values.chromium)) {
  console.error(`screenshot-studio: ${values.chromium} not found (apt-get install -y chromium, or pass --chromium)`);
  process.exit(2);
}
const { openStudio } = await import(pathToFileURL(join(root, 'dist', 'src', 'app', 'studio.js')).href);
const { chromium } = await import('playwright-core');

const dir = mkdtempSync(join(tmpdir(), 'wmsbridge-studio-shots-'));
const inbox = join(dir, 'inbox', 'cadastros');
mkdirSync(inbox, { recursive: true });
mkdirSync(join(dir, 'mappings'));
copyFileSync(join(root, 'test', 'fixtures', 'infer', 'SB1_PRODUTOS_20241105.csv'), join(inbox, 'SB1_PRODUTOS_20241105.csv'));
copyFileSync(join(root, 'test', 'fixtures', 'infer', 'SA4_TRANSPORTADORAS_20241105.csv'), join(inbox, 'SA4_TRANSPORTADORAS_20241105.csv'));
const config = join(dir, 'wmsbridge.config.yaml');
writeFileSync(
  config,
  `inboxDir: ${join(dir, 'inbox')}\nmappingsDir: ${join(dir, 'mappings')}\nstateDir: ${join(dir, 'state')}\noutboxDir: ${join(dir, 'outbox')}\nwms:\n  url: sandbox\n`,
);
const studio = await openStudio({ path: join(dir, 'inbox'), configFile: config, lang: 'pt-BR' });
const browser = await chromium.launch({ executablePath: values.chromium, args: ['--no-sandbox', '--disable-gpu'] });
try {
  const page = await browser.newPage({ viewport: { width: 1600, height: 900 }, locale: 'pt-BR' });
  await page.goto(studio.openUrl);
  await page.locator('[data-testid=file-state]').first().waitFor();
  await page.locator('.files li', { hasText: 'SB1_PRODUTOS' }).click();
  await page.locator('[data-testid=record]').first().waitFor();
  await page.locator('.cm-todo-line').first().scrollIntoViewIfNeeded();
  mkdirSync(outDir, { recursive: true });
  await page.screenshot({ path: join(outDir, 'studio-draft.png') });
  // fix the TODO in the editor, then click a record
  const at = await page.evaluate(() => {
    const text = window.studioEditor.state.doc.toString();
    return text.indexOf('{ const: TODO }') + '{ const: '.length;
  });
  await page.locator('.cm-content').click();
  await page.evaluate((from) => window.studioEditor.dispatch({ selection: { anchor: from, head: from + 4 } }), at);
  await page.keyboard.type('GERAL');
  await page.locator('[data-testid=record]', { hasText: '<ref Family GERAL>' }).first().waitFor();
  await page.locator('[data-testid=record]').nth(2).click();
  await page.locator('[data-testid=grid] tr[data-line="4"] td[data-col=B1_CODBAR]').click();
  await page.locator('[data-testid=record]').nth(2).click();
  await page.screenshot({ path: join(outDir, 'studio-record.png') });
  await page.locator('[data-testid=save]').click();
  await page.waitForFunction(() => document.body.dataset.saved !== undefined, undefined, { timeout: 60_000 });
  await page.screenshot({ path: join(outDir, 'studio-save.png') });
  console.log(`screenshot-studio: ${outDir}/studio-draft.png, studio-record.png, studio-save.png`);
} finally {
  await browser.close();
  await studio.close();
  rmSync(dir, { recursive: true, force: true });
}
