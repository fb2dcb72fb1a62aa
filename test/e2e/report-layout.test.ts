/**
 * The run report laid out by a real browser (headless Chromium from the Debian packages) at a laptop's
 * 1366 px: the page has no horizontal scroll, no table hides columns behind a scroll (the resources table
 * with every outcome had four columns clipped), and no chart label falls outside its chart (a long reason
 * read "ecusados" when its first letter was cut at the chart's left edge).
 *
 * The page has no script of its own; the test serves a copy with a measuring script appended and reads
 * what it wrote from Chromium's --dump-dom. Skipped, with the reason, where Chromium is not installed.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { makeTempDir } from '../helpers/tmp.js';
import { writeRunReport } from '../../src/outbox/report.js';
import { sampleRunSummary } from '../helpers/sample-summary.js';
import { OUTCOMES, type Outcome, type RunSummary } from '../../src/outbox/types.js';
import { writeOrdersView, type OrderLine } from '../../src/outbox/orders.js';

const CHROMIUM = process.env['CHROMIUM'] ?? '/usr/bin/chromium';
const skip = existsSync(CHROMIUM) ? false : `${CHROMIUM} not installed: the report's layout at 1366 px not measured (apt-get install -y chromium)`;

let dir: string;
let cleanup: () => Promise<void>;
before(async () => ({ dir, cleanup } = await makeTempDir()));
after(async () => cleanup());

interface Measure {
  innerWidth: number;
  scrollWidth: number;
  /** the part of the page above the fold (first screen) wider than the window */
  firstScreenOverflow: string[];
  tables: Array<{ heading: string; scrollWidth: number; clientWidth: number }>;
  /** chart texts drawn outside their SVG's viewBox */
  outside: string[];
}

const MEASURE = `<script>
(function () {
  var d = document.documentElement, w = window.innerWidth, h = window.innerHeight;
  var firstScreen = [].filter.call(document.querySelectorAll('body *'), function (e) {
    var r = e.getBoundingClientRect();
    return r.top < h && r.width > 0 && (r.right > w + 0.5 || r.left < -0.5);
  }).map(function (e) { return e.tagName + '.' + e.className; });
  var tables = [].map.call(document.querySelectorAll('.tbl'), function (t) {
    var p = t.previousElementSibling;
    while (p && p.tagName !== 'H2') p = p.previousElementSibling;
    return { heading: p ? p.textContent : '', scrollWidth: t.scrollWidth, clientWidth: t.clientWidth };
  });
  var outside = [];
  [].forEach.call(document.querySelectorAll('svg.chart'), function (svg) {
    var vb = svg.viewBox.baseVal;
    [].forEach.call(svg.querySelectorAll('text'), function (t) {
      var b = t.getBBox();
      if (b.x < vb.x - 0.5 || b.x + b.width > vb.x + vb.width + 0.5) outside.push(t.textContent + ' [' + Math.round(b.x) + '..' + Math.round(b.x + b.width) + ']');
    });
  });
  var pre = document.createElement('pre');
  pre.id = 'measure';
  pre.textContent = JSON.stringify({ innerWidth: w, scrollWidth: d.scrollWidth, firstScreenOverflow: firstScreen, tables: tables, outside: outside });
  document.body.appendChild(pre);
})();
</script>`;

/** Opens the page in headless Chromium at width x height and returns what the measuring script found. */
async function measure(html: string, width: number, height: number): Promise<Measure> {
  const page = join(dir, `measure-${width}.html`);
  await writeFile(page, (await readFile(html, 'utf8')).replace('</body>', `${MEASURE}</body>`));
  const profile = await mkdtemp(join(tmpdir(), 'wmsbridge-chromium-'));
  try {
    const args = [
      '--headless',
      '--no-sandbox',
      '--disable-gpu',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
    ];
    args.push('--hide-scrollbars', `--user-data-dir=${profile}`, `--window-size=${width},${height}`, '--dump-dom', pathToFileURL(page).href);
    const { code, out, err } = await new Promise<{ code: number | null; out: string; err: string }>((resolve, reject) => {
      const child = spawn(CHROMIUM, args, { stdio: ['ignore', 'pipe', 'pipe'] });
      let out = '';
      let err = '';
      child.stdout.on('data', (d: Buffer) => (out += d.toString()));
      child.stderr.on('data', (d: Buffer) => (err = (err + d.toString()).slice(-4000)));
      child.on('error', reject);
      child.on('close', (c) => resolve({ code: c, out, err }));
    });
    const m = /<pre id="measure">(.*?)<\/pre>/s.exec(out);
    assert.ok(m, `chromium exited ${code} without the measurement: ${err}`);
    return JSON.parse(
      m[1]!
        .replace(/&quot;/g, '"')
        .replace(/&lt;/g, '<')
        .replace(/&gt;/g, '>')
        .replace(/&amp;/g, '&'),
    ) as Measure;
  } finally {
    await rm(profile, { recursive: true, force: true });
  }
}

/** The sample night with every outcome present on its resources (the widest resources table there is) and a long reason. */
function widestNight(): RunSummary {
  const s = sampleRunSummary();
  // every record outcome (rows not sent, not-selected and excluded, have a section of their own, not resource columns)
  const all = Object.fromEntries(OUTCOMES.filter((o) => o !== 'not-selected' && o !== 'excluded').map((o, i) => [o, 1000 + i])) as Record<Outcome, number>;
  const reason = {
    reason: 'rejected: a long reason',
    code: 'invalid_number',
    params: { field: 'quantidade_embalagem_secundaria_do_produto', value: '12,5 caixas de papelão ondulado' },
    outcome: 'rejected' as Outcome,
    count: 7,
  };
  return { ...s, resources: [...s.resources, { target: 'ConversionFactor', outcomes: all }], errorReasons: [...s.errorReasons, reason] };
}

test('at 1366 px the report has no horizontal scroll, every table shows all its columns and no chart label is cut', { skip, timeout: 90_000 }, async () => {
  const paths = await writeRunReport(join(dir, 'outbox'), widestNight(), { timeZone: 'UTC' });
  const m = await measure(paths.html, 1366, 768);
  assert.equal(m.innerWidth, 1366);
  assert.ok(m.scrollWidth <= m.innerWidth, `the page scrolls sideways: ${m.scrollWidth} px wide in a ${m.innerWidth} px window`);
  assert.deepEqual(m.firstScreenOverflow, [], 'elements of the first screen wider than the window');
  assert.ok(
    m.tables.some((t) => /Recursos/.test(t.heading)),
    JSON.stringify(m.tables),
  );
  assert.deepEqual(m.outside, [], 'chart texts outside their chart');
  for (const t of m.tables)
    assert.ok(t.scrollWidth <= t.clientWidth + 1, `table under "${t.heading}" is clipped: ${t.scrollWidth} px of content in ${t.clientWidth} px`);
});

test('at 1366 px the orders follow-up (pedidos.html) fits the window', { skip, timeout: 90_000 }, async () => {
  const at = (min: number): string => new Date(Date.UTC(2026, 10, 27, 12, min)).toISOString();
  const lines: OrderLine[] = Array.from({ length: 12 }, (_, i) => ({
    kind: i % 3 === 2 ? 'purchase' : 'picking',
    order: String(100232 + i),
    partner: i % 3 === 2 ? '12.345.678/0001-95' : 'Supermercado Irmãos Albuquerque de Oliveira Comércio de Alimentos Ltda',
    key: `${100232 + i}|001`,
    wmsId: `0b6a1c1e-1111-4a4a-8a8a-0000000000${String(i).padStart(2, '0')}`,
    file: 'PEDIDOS_VENDA_FILIAL_SAO_BERNARDO_DO_CAMPO_20261127_235959_lote_0007.csv',
    sentAt: at(i),
    separatingAt: at(i + 1),
    packedAt: at(i + 2),
    shippedAt: at(i + 3),
    receivedAt: i % 3 === 2 ? at(i + 4) : null,
    status: i % 3 === 2 ? '3' : '2',
    updatedAt: at(i + 4),
  }));
  const p = await writeOrdersView(join(dir, 'outbox'), lines, '2026-11-27', { timeZone: 'America/Sao_Paulo' });
  const m = await measure(p.html, 1366, 768);
  assert.ok(m.scrollWidth <= m.innerWidth, `pedidos.html scrolls sideways: ${m.scrollWidth} px wide in a ${m.innerWidth} px window`);
});
