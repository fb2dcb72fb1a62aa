import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { readdir, readFile } from 'node:fs/promises';
import { dirname, join, resolve } from 'node:path';
import { makeTempDir } from '../helpers/tmp.js';
import { escapeHtml, formatReportDate, relativeHref, renderReportHtml, statusInWords, stripCredentials, writeRunReport } from '../../src/outbox/report.js';
import { sampleRunSummary } from '../helpers/sample-summary.js';
import { emptyTotals, type RunSummary } from '../../src/outbox/types.js';
import { createI18n } from '../../src/i18n/index.js';

let dir: string;
let cleanup: () => Promise<void>;
before(async () => ({ dir, cleanup } = await makeTempDir()));
after(async () => cleanup());

describe('run report', () => {
  test('hostile strings are escaped everywhere; credentials never appear', () => {
    const s = sampleRunSummary({ hostile: true });
    const html = renderReportHtml(s, join(dir, 'reports', 'x'), dir, { timeZone: 'UTC', locale: 'en' });
    assert.ok(!html.includes('<script'), 'no script element');
    assert.ok(!html.includes('<img'), 'no injected img');
    assert.ok(!html.includes('<b>bold'), 'no injected markup');
    assert.ok(html.includes('&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;&#39;&quot;&amp;'));
    assert.ok(!html.includes('s3cret'), 'password stripped');
    assert.ok(!html.includes('token=abc'), 'token stripped');
    // every href is relative (no scheme, no leading slash)
    const hrefs = [...html.matchAll(/href="([^"]*)"/g)].map((m) => m[1]!);
    assert.ok(hrefs.length >= 5, `found ${hrefs.length} links`);
    for (const h of hrefs) assert.match(h, /^(\.\.\/\.\.\/(results|rejects|error)\/[^:]+|report\.xlsx)$/, h);
    // no script needed: the page carries none
    assert.ok(!/<script/i.test(html));
  });

  test('charts, legend, status in words, dates with the zone name', () => {
    const s = sampleRunSummary();
    const html = renderReportHtml(s, join(dir, 'reports', 'x'), dir, { timeZone: 'America/Sao_Paulo', locale: 'en' });
    assert.equal((html.match(/<svg /g) ?? []).length, 3);
    assert.ok(html.includes('class="legend"'));
    assert.ok(html.includes('25 records need attention, 1 file failed'));
    assert.ok(html.includes('29/07/2025 11:56:56 America/Sao_Paulo'));
    assert.ok(html.includes('Webhooks received'));
    assert.equal(formatReportDate('2025-07-29T14:56:56Z', 'UTC'), '29/07/2025 14:56:56 UTC');
  });

  test('status in words', () => {
    const base = sampleRunSummary();
    const ok: RunSummary = { ...base, exitCode: 0, totals: { ...emptyTotals(), created: 3, records: 3, files: 1 }, files: base.files.slice(1, 2) };
    const en = createI18n('en', 'UTC');
    assert.deepEqual(statusInWords(ok, en), { text: 'All delivered', tone: 'ok' });
    assert.equal(statusInWords({ ...ok, dryRun: true }, en).text, 'Dry run: all records valid, nothing was sent');
    assert.equal(statusInWords({ ...ok, totals: { ...ok.totals, held: 1 } }, en).text, '1 record needs attention');
    assert.equal(statusInWords({ ...ok, exitCode: 2 }, en).tone, 'bad');
    // pt-BR is the default
    assert.deepEqual(statusInWords(ok), { text: 'Tudo entregue', tone: 'ok' });
    assert.equal(statusInWords({ ...ok, totals: { ...ok.totals, held: 1 } }).text, '1 registro precisa de atenção');
    assert.equal(statusInWords({ ...ok, totals: { ...ok.totals, held: 2 } }).text, '2 registros precisam de atenção');
  });

  test('relative links and helpers', () => {
    assert.equal(relativeHref('/o/reports/r1', '/o', 'results/a b#?.csv'), '../../results/a%20b%23%3F.csv');
    assert.equal(relativeHref('/o/reports', '/o', 'results/x.csv'), '../results/x.csv');
    assert.equal(relativeHref('/o/reports', '/o', 'javascript:alert(1)'), '../javascript%3Aalert(1)');
    assert.equal(escapeHtml(`<a href='x'>&"`), '&lt;a href=&#39;x&#39;&gt;&amp;&quot;');
    assert.equal(stripCredentials('https://u:p@h.example/x?token=1&a=2'), 'https://h.example/x?token=REDACTED&a=2');
  });

  test('writeRunReport writes html, csv, json and latest.html atomically', async () => {
    const outbox = join(dir, 'outbox');
    const s = sampleRunSummary({ hostile: true });
    const p = await writeRunReport(outbox, s, { timeZone: 'UTC', locale: 'en' });
    assert.equal(p.dir, join(outbox, 'reports', '2025-07-29_145656-20250729-145656-a1b2'));
    for (const f of [p.html, p.csv, p.json, p.latest]) assert.ok(existsSync(f), f);
    const names = (await readdir(p.dir)).sort();
    assert.deepEqual(names, [
      'attention.csv',
      'files.csv',
      'reasons.csv',
      'report.html',
      'report.xlsx',
      'resources.csv',
      'summary.csv',
      'summary.json',
      'unsent.csv',
    ]);
    assert.deepEqual(
      (await readdir(join(outbox, 'reports'))).filter((n) => n.startsWith('.')),
      [],
      'no temp files left',
    );
    assert.deepEqual(JSON.parse(await readFile(p.json, 'utf8')), s);
    const csv = (await readFile(p.csv, 'utf8')).replace(/^\uFEFF/, '');
    assert.match(csv, /^metric;value\r\n/);
    assert.match(csv, /\r\nrecords;1478\r\n/);
    assert.match(csv, /\r\nstarted_at;29\/07\/2025 14:56:56\r\n/);
    const files = await readFile(join(p.dir, 'files.csv'), 'utf8');
    assert.ok(files.includes(`"saldo-estoque.csv=HYPERLINK(""http://evil"")"`), 'hostile name quoted');
    const att = await readFile(join(p.dir, 'attention.csv'), 'utf8');
    assert.ok(att.includes(`;"'=cmd|' /C calc'!A0";`) || att.includes(`;'=cmd|' /C calc'!A0;`), 'formula key neutralised');
    // latest.html links resolve from reports/
    const latest = await readFile(p.latest, 'utf8');
    const href = /href="(\.\.\/results\/[^"]+)"/.exec(latest)![1]!;
    assert.equal(resolve(dirname(p.latest), decodeURIComponent(href)).startsWith(join(outbox, 'results')), true);
    // ... and its workbook link points into the run's folder
    const xlsx = /href="([^"]+report\.xlsx)"/.exec(latest)![1]!;
    assert.equal(resolve(dirname(p.latest), decodeURIComponent(xlsx)), p.xlsx);
  });

  test('a rebuilt older report does not replace latest.html', async () => {
    const outbox = join(dir, 'outbox2');
    await writeRunReport(outbox, sampleRunSummary({ runId: 'new', startedAt: '2025-08-01T10:00:00Z' }), { timeZone: 'UTC', locale: 'en' });
    await writeRunReport(outbox, sampleRunSummary({ runId: 'old', startedAt: '2025-07-01T10:00:00Z' }), { timeZone: 'UTC', locale: 'en' });
    const latest = await readFile(join(outbox, 'reports', 'latest.html'), 'utf8');
    assert.ok(latest.includes('<title>wmsbridge run new</title>'));
  });
});
