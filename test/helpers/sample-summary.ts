/**
 * A realistic RunSummary for demos, docs screenshots and tests of the report (no I/O). With
 * `hostile: true` file names, keys and messages carry markup, quotes and formula starters, as a
 * careless or malicious ERP export would.
 */
import { emptyTotals, OUTCOMES, type Outcome, type RunSummary } from '../../src/outbox/types.js';

export interface SampleSummaryOptions {
  hostile?: boolean;
  /** @default '2025-07-29T14:56:56.035Z' */
  startedAt?: string;
  /** @default '20250729-145656-a1b2' */
  runId?: string;
  /** 'rejects' (default): a night with rejects, held and failed records; 'clean': everything delivered; 'outage': the WMS went away mid-run */
  scenario?: 'rejects' | 'clean' | 'outage';
}

export function sampleRunSummary(options: SampleSummaryOptions = {}): RunSummary {
  const base = rejectsNight(options);
  if (options.scenario === 'clean') return cleanNight(base);
  if (options.scenario === 'outage') return outageNight(base);
  return base;
}

function retotal(s: RunSummary): RunSummary {
  const totals = emptyTotals();
  for (const f of s.files) for (const o of OUTCOMES) totals[o] += f.outcomes[o] ?? 0;
  totals.files = s.files.length;
  totals.records = OUTCOMES.reduce((n, o) => n + totals[o], 0);
  const byTarget = new Map<string, Partial<Record<Outcome, number>>>();
  for (const f of s.files) {
    if (!f.target) continue;
    const acc = byTarget.get(f.target) ?? {};
    for (const o of OUTCOMES) if (f.outcomes[o]) acc[o] = (acc[o] ?? 0) + (f.outcomes[o] ?? 0);
    byTarget.set(f.target, acc);
  }
  return { ...s, totals, resources: [...byTarget].map(([target, outcomes]) => ({ target, outcomes })) };
}

function cleanNight(s: RunSummary): RunSummary {
  const files = s.files
    .filter((f) => f.status !== 'error' && f.status !== 'duplicate')
    .map((f) => {
      const { rejectsFile: _r, ...rest } = f;
      void _r;
      const total = Object.values(f.outcomes).reduce((n, v) => n + (v ?? 0), 0);
      return { ...rest, status: 'done' as const, outcomes: { created: Math.round(total * 0.7), updated: total - Math.round(total * 0.7) } };
    });
  return retotal({ ...s, exitCode: 0, files, errorReasons: [], attention: [], wms: { ...s.wms, retries: 0, failures: 0 } });
}

function outageNight(s: RunSummary): RunSummary {
  const files = s.files
    .filter((f) => f.status !== 'duplicate' && f.status !== 'error')
    .map((f, i) => {
      const total = Object.values(f.outcomes).reduce((n, v) => n + (v ?? 0), 0);
      const sent = i === 0 ? Math.round(total * 0.4) : i === 1 ? total : 0;
      const failed = i === 0 ? 6 : i === 3 ? 4 : 0;
      const { rejectsFile: _r, ...rest } = f;
      void _r;
      return {
        ...rest,
        status: sent === total ? ('done' as const) : ('partial' as const),
        outcomes: { created: sent, failed, skipped: total - sent - failed },
      };
    });
  const net = (code: string, count: number, line: number, params: Record<string, string | number> = {}): RunSummary['errorReasons'][number] => ({
    reason: `failed: ${code}`,
    count,
    example: { file: files[0]!.name, line },
    outcome: 'failed',
    code,
    params,
  });
  const out = retotal({
    ...s,
    exitCode: 75,
    files,
    errorReasons: [
      net('E_WMS_NETWORK', 4, 751, { network: 'ECONNREFUSED' }),
      net('E_WMS_TIMEOUT', 2, 760),
      net('E_WMS_HTTP', 2, 744, { status: 502 }),
      net('E_WMS_HTTP', 1, 748, { status: 503 }),
      net('E_WMS_HTTP', 1, 749, { status: 504 }),
    ],
    attention: [],
    wms: { ...s.wms, retries: 61, failures: 10 },
  });
  const waiting = out.totals.skipped + out.totals.failed;
  return {
    ...out,
    outage: {
      waiting,
      since: new Date(new Date(s.startedAt).getTime() + 38_000).toISOString(),
      code: 'E_WMS_NETWORK',
      cause: 'the WMS could not be reached (ECONNREFUSED)',
    },
  };
}

function rejectsNight(options: SampleSummaryOptions): RunSummary {
  const hostile = options.hostile ?? false;
  const startedAt = options.startedAt ?? '2025-07-29T14:56:56.035Z';
  const durationMs = 97_420;
  const evil = hostile ? `<script>alert("x")</script>'"&` : '';
  const files: RunSummary['files'] = [
    {
      channel: 'products',
      name: `produtos_20250729.csv${evil}`,
      status: 'partial',
      mapping: 'erp-products',
      target: 'Product',
      rows: 1250,
      outcomes: { created: 912, updated: 301, unchanged: 20, rejected: 14, held: 3 },
      resultFile: `results/result-produtos_20250729.csv${hostile ? '"><img src=x onerror=alert(1)>' : ''}.csv`,
      rejectsFile: 'rejects/produtos_20250729.rejects.csv',
      archivedTo: 'archive/2025-07-29/produtos_20250729.csv',
      durationMs: 41_200,
    },
    {
      channel: 'categories',
      name: 'categorias.csv',
      status: 'done',
      mapping: 'erp-categories',
      target: 'Category',
      rows: 48,
      outcomes: { created: 6, unchanged: 42 },
      resultFile: 'results/result-categorias.csv',
      archivedTo: 'archive/2025-07-29/categorias.csv',
      durationMs: 1_310,
    },
    {
      channel: 'receipts',
      name: 'NFe35250712345678000195550010000123451000123456-procNFe.xml',
      status: 'done',
      mapping: 'nfe-purchase-order',
      target: 'PurchaseOrder',
      rows: 1,
      outcomes: { created: 1 },
      resultFile: 'results/result-NFe35250712345678000195550010000123451000123456-procNFe.csv',
      durationMs: 640,
    },
    {
      channel: 'orders',
      name: 'PEDIDOS 29-07 (manhã).txt',
      status: 'partial',
      mapping: 'erp-picking-fixed-width',
      target: 'PickingList',
      rows: 386,
      outcomes: { created: 171, rejected: 5, failed: 2, 'in-doubt': 1 },
      resultFile: 'results/result-PEDIDOS 29-07 (manhã).csv',
      rejectsFile: 'rejects/PEDIDOS 29-07 (manhã).rejects.txt',
      durationMs: 38_900,
    },
    {
      channel: 'providers',
      name: 'fornecedores.csv',
      status: 'duplicate',
      mapping: null,
      target: null,
      rows: 0,
      outcomes: {},
    },
    {
      channel: 'stock',
      name: `saldo-estoque.csv${hostile ? '=HYPERLINK("http://evil")' : ''}`,
      status: 'error',
      mapping: 'erp-stock',
      target: 'Stock',
      rows: 0,
      outcomes: {},
      error: hostile
        ? `<b>bold</b> "quoted" & 'single': line 1: header does not match the mapping`
        : 'saldo-estoque.csv:1: header does not match the mapping (missing column "lote")',
      archivedTo: 'error/saldo-estoque.csv',
    },
  ];
  const totals = emptyTotals();
  for (const f of files) {
    for (const o of OUTCOMES) totals[o] += f.outcomes[o] ?? 0;
  }
  totals.files = files.length;
  totals.records = OUTCOMES.reduce((n, o) => n + totals[o], 0);
  const byTarget = new Map<string, Partial<Record<Outcome, number>>>();
  for (const f of files) {
    if (!f.target) continue;
    const acc = byTarget.get(f.target) ?? {};
    for (const o of OUTCOMES) if (f.outcomes[o]) acc[o] = (acc[o] ?? 0) + (f.outcomes[o] ?? 0);
    byTarget.set(f.target, acc);
  }
  const timeline: RunSummary['timeline'] = [];
  const settled = totals.records;
  for (let i = 0; i <= 40; i++) {
    const t = (durationMs * i) / 40;
    // a slow start (token, categories first), a steady middle, a tail of retries
    const x = i / 40;
    const frac = x < 0.1 ? x * 0.3 : x < 0.85 ? 0.03 + ((x - 0.1) / 0.75) * 0.93 : 0.96 + ((x - 0.85) / 0.15) * 0.04;
    timeline.push({ atMs: Math.round(t), settled: Math.round(settled * Math.min(1, frac)) });
  }
  const startMs = new Date(startedAt).getTime();
  return {
    runId: options.runId ?? '20250729-145656-a1b2',
    command: 'run',
    dryRun: false,
    startedAt,
    finishedAt: new Date(startMs + durationMs).toISOString(),
    durationMs,
    exitCode: 1,
    host: 'erp-gateway-01',
    version: '0.1.0',
    wms: {
      url: hostile ? 'https://user:s3cret@wms.example.com.br/open/v1?token=abc' : 'https://wms.example.com.br',
      sandbox: false,
      requests: 1620,
      retries: 23,
      refreshes: 2,
      failures: 2,
      meanLatencyMs: 38.6,
    },
    totals,
    files,
    resources: [...byTarget].map(([target, outcomes]) => ({ target, outcomes })),
    errorReasons: [
      {
        reason: 'rejected: categoryID does not exist',
        count: 9,
        example: { file: 'produtos_20250729.csv', line: 118 },
        outcome: 'rejected',
        code: 'lookup_not_found',
        params: { field: 'categoryID', column: 'categoria', resource: 'Category' },
      },
      {
        reason: 'rejected: required field ean is empty',
        count: 5,
        example: { file: 'produtos_20250729.csv', line: 402 },
        outcome: 'rejected',
        code: 'required',
        params: { field: 'ean', column: 'ean' },
      },
      {
        reason: 'rejected: quantity is not a number ("12,5,0")',
        count: 4,
        example: { file: 'PEDIDOS 29-07 (manhã).txt', line: 77 },
        outcome: 'rejected',
        code: 'invalid_number',
        params: { field: 'pickingItens[0].quantity', column: 'qtd' },
      },
      {
        reason: 'held: dependency held: Category ELETRO failed',
        count: 3,
        example: { file: 'produtos_20250729.csv', line: 19 },
        outcome: 'held',
        code: 'dependency_failed',
        params: { field: 'categoryID', column: 'categoria', resource: 'Category' },
      },
      {
        reason: 'failed: WMS 503 after 5 retries',
        count: 2,
        example: { file: 'PEDIDOS 29-07 (manhã).txt', line: 301 },
        outcome: 'failed',
        code: 'E_WMS_HTTP',
        params: { status: 503 },
      },
      hostile
        ? { reason: '<img src=x onerror=alert(2)> "reason"', count: 1 }
        : { reason: 'in-doubt: connection reset while sending; outcome unknown', count: 1, outcome: 'in-doubt', code: 'in_doubt', params: {} },
    ],
    timeline,
    attention: [
      ...(['19', '20', '21'] as const).map((l, i) => ({
        file: 'produtos_20250729.csv',
        line: Number(l),
        target: 'Product',
        key: ['7891000100103', '7891000100110', '7891000100127'][i]!,
        outcome: 'held' as const,
        reason: 'dependency held: Category ELETRO failed',
        code: 'dependency_failed',
        params: { field: 'categoryID', column: 'categoria', resource: 'Category', value: 'ELETRO' },
        original: ['000101', `Produto ${l}`, ['7891000100103', '7891000100110', '7891000100127'][i]!, 'ELETRO', '12,5'],
      })),
      {
        file: 'PEDIDOS 29-07 (manhã).txt',
        line: 301,
        target: 'PickingList',
        key: 'PED-88231',
        outcome: 'failed',
        reason: 'WMS 503 after 5 retries',
        code: 'E_WMS_HTTP',
        params: { status: 503 },
      },
      {
        file: 'PEDIDOS 29-07 (manhã).txt',
        line: 305,
        target: 'PickingList',
        key: 'PED-88232',
        outcome: 'failed',
        reason: 'WMS 503 after 5 retries',
        code: 'E_WMS_HTTP',
        params: { status: 503 },
      },
      {
        file: hostile ? `PEDIDOS<script>x</script>.txt` : 'PEDIDOS 29-07 (manhã).txt',
        line: 344,
        target: 'PickingList',
        key: hostile ? `=cmd|' /C calc'!A0` : 'PED-88240',
        outcome: 'in-doubt',
        reason: 'connection reset while sending; outcome unknown: read back on the next run',
      },
    ],
    webhooks: [
      { kind: 'pickingStatus', count: 164, linked: 160 },
      { kind: 'receiptStatus', count: 12, linked: 12 },
    ],
  };
}
