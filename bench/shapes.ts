/**
 * Export shapes beyond the flat CSV (issue 39): wmsbridge's parse + map against the raw speed of the library
 * that reads the same bytes, on the same generated file, in the same run. Ratios, not absolute rates: the
 * machine is shared and noisy.
 *
 * - multi-record: a Sankhya-like orders file (';', Windows-1252, no header; C header lines of 20 cells, I item
 *   lines of 9, L lot lines of 5, a '#' comment), mapped to PickingList documents with headerRecord / itemRecord /
 *   lotRecord. Baseline: csv-parse with relax_column_count and comments on the decoded stream (rows as arrays).
 * - xlsx: a workbook of products (12 columns) written by exceljs, read through wmsbridge's streaming xlsx input and
 *   the products mapping. Baseline: exceljs's own streaming WorkbookReader iterating the same rows.
 * - nested-json: an orders > items > lots JSON document (itemPath crossing the orders array), mapped to
 *   PickingList documents with group.by a document path and explode. Baseline: JSON.parse and a walk that counts
 *   the items.
 *
 * Each phase runs in its own child process, so its peak RSS (maxRSS) and CPU are its own. CPU per record is user +
 * system time of the child divided by the records (lines, rows or items) read.
 *
 * Usage: `benchShapes({ orders: 20_000 })`, or `node dist/bench/shapes.js [orders]`.
 */
import { createReadStream, createWriteStream } from 'node:fs';
import { mkdtemp, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { once } from 'node:events';
import iconv from 'iconv-lite';
import { parse as csvParse } from 'csv-parse';
import { runJsonChild, type BenchResult } from './lib.js';
import { openParser } from '../src/parse/index.js';
import { parseMappingText, createStaticReferenceCache } from '../src/map/index.js';

const COMPANY = '11111111-1111-4111-8111-111111111111';
const REFS = {
  Company: [{ id: COMPANY, name: 'Distribuidora Paulista de Alimentos Ltda' }],
  Branch: [{ id: '22222222-2222-4222-8222-222222222222', name: 'Matriz São Paulo', companyID: COMPANY }],
  Warehouse: [{ id: '33333333-3333-4333-8333-333333333333', codeERP: 'CD-SP01' }],
  LogisticsProfile: [{ id: '44444444-4444-4444-8444-444444444444', mnemonic: 'PADRAO' }],
};

const PICKING_HEADER = `  companyID: { lookup: Company, by: name, from: { const: Distribuidora Paulista de Alimentos Ltda } }
  branchID: { lookup: Branch, by: name, from: { const: Matriz São Paulo } }
  ownerID: { lookup: Owners, by: code, from: { const: '001' } }
  country: { const: Brasil }
  type: { const: 0 }
`;

const MULTI_RECORD_MAPPING = `name: bench-sankhya
match: { files: '*.txt' }
source:
  format: delimited
  delimiter: ';'
  encoding: windows-1252
  header: false
  comment: '#'
  records:
    - type: C
      match: { col: 0, value: C }
      columns: [TIPO, NUNOTA, CODEMP, CODPARC, RAZAOSOCIAL, CGC_CPF, DTNEG, DTPREVENT, CODVEND, TIPMOV, CODTIPOPER, CD, PRIORIDADE, LOGRADOURO, NUMERO, BAIRRO, CIDADE, UF, CEP, OBS]
    - type: I
      match: { col: 0, value: I }
      columns: [TIPO, NUNOTA, SEQUENCIA, CODPROD, DESCRPROD, QTDNEG, CODVOL, VLRUNIT, CONTROLE]
    - type: L
      match: { col: 0, value: L }
      columns: [TIPO, SEQUENCIA, LOTE, QTDLOTE, VALIDADE]
target: PickingList
group:
  headerRecord: C
  itemRecord: I
  lotRecord: L
  items: pickingItens
  itemFields:
    productID: { ref: Product, from: { col: I/CODPROD }, transforms: [trim] }
    quantity: { coalesce: [{ col: QTDLOTE }, { col: I/QTDNEG }], transforms: [number] }
    lotNumber: { col: LOTE, transforms: [trim] }
    saleValue: { col: I/VLRUNIT, transforms: [number] }
fields:
  order: { col: NUNOTA, transforms: [trim] }
  codeERP: { template: 'PickingList:SNK:{NUNOTA}', transforms: [uuid5] }
  warehouseID: { lookup: Warehouse, by: codeERP, from: CD }
  registrationDate: { col: DTNEG, transforms: [{ date: { format: dd/MM/yyyy } }] }
  clientName: { col: RAZAOSOCIAL, transforms: [trim] }
  document: { col: CGC_CPF, transforms: [digitsOnly] }
  city: { col: CIDADE }
  state: { col: UF }
${PICKING_HEADER}`;

const XLSX_MAPPING = `name: bench-produtos-xlsx
match: { files: '*.xlsx' }
source: { format: xlsx }
target: Product
fields:
  code: { col: codigo, transforms: [trim] }
  codeERP: { col: codigo }
  name: { col: descricao, transforms: [trim] }
  barCode: { col: ean, transforms: [trim] }
  ncm: { col: ncm, transforms: [digitsOnly] }
  weight: { col: peso, transforms: [number] }
  unitmeasurement: { col: unidade, transforms: [trim, upper] }
  brand: { col: fornecedor }
  categoryID: { ref: Category, from: { const: MERC } }
  familyID: { ref: Family, from: { const: GRAOS } }
  logisticsProfileID: { lookup: LogisticsProfile, by: mnemonic, from: { const: PADRAO } }
`;

const JSON_MAPPING = `name: bench-ecom
match: { files: '*.json' }
source: { format: json, itemPath: data/itens }
target: PickingList
group:
  by: { path: /data/numero }
  items: pickingItens
  explode: lotes
  itemFields:
    productID: { ref: Product, from: { path: codigo }, transforms: [trim] }
    quantity: { coalesce: [{ path: lotes/quantidade }, { path: quantidade }], transforms: [{ number: { decimal: '.' } }] }
    lotNumber: { path: lotes/numero }
    saleValue: { path: valor, transforms: [{ number: { decimal: '.' } }] }
fields:
  order: { path: /data/numero }
  codeERP: { template: 'PickingList:ECOM:{/data/numero}', transforms: [uuid5] }
  warehouseID: { lookup: Warehouse, by: codeERP, from: { path: /data/deposito } }
  registrationDate: { path: /data/data, transforms: [{ date: { format: yyyy-MM-dd } }] }
  clientName: { path: /data/contato/nome }
  document: { path: /data/contato/numeroDocumento, transforms: [digitsOnly] }
${PICKING_HEADER}`;

const PHASE_FLAG = '--wmsbridge-bench-shapes-phase';
const PHASES = ['multi-record-csv-parse', 'multi-record-parse+map', 'xlsx-exceljs', 'xlsx-parse+map', 'nested-json-parse', 'nested-json-parse+map'] as const;
type Phase = (typeof PHASES)[number];

interface PhaseResult {
  phase: Phase;
  /** lines (multi-record), rows (xlsx) or items (JSON) read */
  read: number;
  /** documents or records produced by the mapping (0 for a baseline) */
  records: number;
  ms: number;
  cpuUs: number;
  maxRssMB: number;
}

/** Orders of 4 items; every other item has 2 lots. Returns the number of lines written (comments excluded). */
async function writeMultiRecord(path: string, orders: number): Promise<number> {
  const out = createWriteStream(path);
  let lines = 0;
  let batch = '# exportação de pedidos Sankhya (bench)\r\n';
  for (let o = 0; o < orders; o++) {
    const n = 100000 + o;
    batch += `C;${n};1;${o % 500};SUPERMERCADO SÃO JOÃO ${o % 97} LTDA;11.222.333/0001-81;05/11/2024;06/11/2024;7;P;3200;CD-SP01;NORMAL;RUA DAS FLORES;${o % 900};CENTRO;SÃO PAULO;SP;01001-000;\r\n`;
    lines++;
    for (let i = 1; i <= 4; i++) {
      batch += `I;${n};${i};SNK-${1000 + ((o + i) % 300)};PRODUTO ${i};${i * 3};UN;${(i * 7.35).toFixed(2).replace('.', ',')};\r\n`;
      lines++;
      if (i % 2 === 0) {
        batch += `L;${i};L${o}-A;${i};31/05/2025\r\nL;${i};L${o}-B;${i * 2};30/06/2025\r\n`;
        lines += 2;
      }
    }
    if (batch.length > 256 * 1024) {
      if (!out.write(iconv.encode(batch, 'win1252'))) await once(out, 'drain');
      batch = '';
    }
  }
  out.write(iconv.encode(batch, 'win1252'));
  out.end();
  await once(out, 'finish');
  return lines;
}

async function writeXlsx(path: string, rows: number): Promise<void> {
  const { default: WorkbookWriter } = await import('exceljs/lib/stream/xlsx/workbook-writer.js');
  const wb = new WorkbookWriter({ filename: path, useStyles: false, useSharedStrings: true });
  const ws = wb.addWorksheet('Produtos');
  ws.addRow(['codigo', 'descricao', 'ean', 'ncm', 'unidade', 'preco', 'peso', 'estoque', 'fornecedor', 'cidade', 'obs', 'ativo']).commit();
  for (let i = 0; i < rows; i++) {
    ws.addRow([
      String(i).padStart(8, '0'),
      `Produto ${i % 1000} Maçã`,
      `789${String(i).padStart(10, '0')}`,
      `0${(i % 9) + 1}031019`,
      'UN',
      (i % 1000) / 10,
      (i % 50) / 4,
      i % 500,
      `Fornecedor ${i % 97}`,
      'São Paulo',
      i % 3 === 0 ? 'observação' : '',
      'S',
    ]).commit();
  }
  ws.commit();
  await wb.commit();
}

async function writeNestedJson(path: string, orders: number): Promise<number> {
  const out = createWriteStream(path);
  out.write('{"data":[\n');
  let items = 0;
  for (let o = 0; o < orders; o++) {
    const itens = [1, 2, 3, 4].map((i) => ({
      id: i,
      codigo: `SNK-${1000 + ((o + i) % 300)}`,
      descricao: `PRODUTO ${i}`,
      quantidade: i * 3,
      valor: Number((i * 7.35).toFixed(2)),
      lotes:
        i % 2 === 0
          ? [
              { numero: `L${o}-A`, quantidade: i },
              { numero: `L${o}-B`, quantidade: i * 2 },
            ]
          : [],
    }));
    items += itens.length;
    const order = {
      id: 16400000 + o,
      numero: 90000 + o,
      data: '2024-11-05',
      contato: { nome: `MERCADINHO ${o % 97} LTDA`, numeroDocumento: '11.222.333/0001-81' },
      deposito: 'CD-SP01',
      itens,
      parcelas: [{ id: 1, valor: 100 }],
    };
    if (!out.write(`${o ? ',\n' : ''}${JSON.stringify(order)}`)) await once(out, 'drain');
  }
  out.write('\n]}\n');
  out.end();
  await once(out, 'finish');
  return items;
}

async function mapFile(mappingText: string, file: string): Promise<{ read: number; records: number }> {
  const mapping = parseMappingText(mappingText, 'bench.yaml');
  const refs = createStaticReferenceCache(REFS);
  let records = 0;
  let read = 0;
  const parsed = (async function* () {
    for await (const item of openParser(file, mapping.source)) {
      read++;
      yield item;
    }
  })();
  for await (const out of mapping.mapItems(parsed, { file: 'bench', refs, now: new Date() })) {
    if (out.ok) records++;
    else throw new Error(`unexpected reject at line ${out.reject.source.line}: ${out.reject.issues[0]?.message}`);
  }
  return { read, records };
}

async function runPhase(phase: Phase, file: string): Promise<{ read: number; records: number }> {
  switch (phase) {
    case 'multi-record-csv-parse': {
      const decoded = createReadStream(file, { highWaterMark: 64 * 1024 }).pipe(iconv.decodeStream('win1252'));
      let read = 0;
      for await (const _ of decoded.pipe(csvParse({ delimiter: ';', relax_column_count: true, comment: '#' }))) read++;
      return { read, records: 0 };
    }
    case 'multi-record-parse+map':
      return mapFile(MULTI_RECORD_MAPPING, file);
    case 'xlsx-exceljs': {
      const { default: WorkbookReader } = await import('exceljs/lib/stream/xlsx/workbook-reader.js');
      const reader = new WorkbookReader(createReadStream(file), {
        sharedStrings: 'cache',
        styles: 'cache',
        hyperlinks: 'ignore',
        worksheets: 'emit',
        entries: 'ignore',
      });
      let read = 0;
      for await (const sheet of reader) for await (const _ of sheet) read++;
      return { read: read - 1, records: 0 };
    }
    case 'xlsx-parse+map':
      return mapFile(XLSX_MAPPING, file);
    case 'nested-json-parse': {
      const { readFile } = await import('node:fs/promises');
      const doc = JSON.parse(await readFile(file, 'utf8')) as { data: Array<{ itens: unknown[] }> };
      let read = 0;
      for (const o of doc.data) read += o.itens.length;
      return { read, records: 0 };
    }
    case 'nested-json-parse+map':
      return mapFile(JSON_MAPPING, file);
  }
}

async function childMain(phase: Phase, file: string): Promise<void> {
  const t0 = performance.now();
  const c0 = process.cpuUsage();
  const { read, records } = await runPhase(phase, file);
  const c = process.cpuUsage(c0);
  const res: PhaseResult = { phase, read, records, ms: performance.now() - t0, cpuUs: c.user + c.system, maxRssMB: process.resourceUsage().maxRSS / 1024 };
  process.stdout.write(JSON.stringify(res) + '\n');
}

function spawnPhase(phase: Phase, file: string): Promise<PhaseResult> {
  // keep the loader flags (e.g. --import tsx when run from .ts)
  return runJsonChild<PhaseResult>(process.execPath, [...process.execArgv, fileURLToPath(import.meta.url), PHASE_FLAG, phase, file]);
}

export async function benchShapes(opts: { orders: number }): Promise<BenchResult> {
  const dir = await mkdtemp(join(tmpdir(), 'wmsbridge-bench-shapes-'));
  try {
    const files = {
      mr: join(dir, 'PEDIDOS_SNK.txt'),
      xlsx: join(dir, 'PRODUTOS.xlsx'),
      json: join(dir, 'PEDIDOS_ECOM.json'),
    };
    const lines = await writeMultiRecord(files.mr, opts.orders);
    const xlsxRows = opts.orders * 5;
    await writeXlsx(files.xlsx, xlsxRows);
    const items = await writeNestedJson(files.json, opts.orders);
    const fileOf: Record<Phase, string> = {
      'multi-record-csv-parse': files.mr,
      'multi-record-parse+map': files.mr,
      'xlsx-exceljs': files.xlsx,
      'xlsx-parse+map': files.xlsx,
      'nested-json-parse': files.json,
      'nested-json-parse+map': files.json,
    };
    const expected: Record<Phase, { read: number; records?: number }> = {
      'multi-record-csv-parse': { read: lines },
      'multi-record-parse+map': { read: lines, records: opts.orders },
      'xlsx-exceljs': { read: xlsxRows },
      'xlsx-parse+map': { read: xlsxRows, records: xlsxRows },
      'nested-json-parse': { read: items },
      'nested-json-parse+map': { read: items, records: opts.orders },
    };
    const figures: Record<string, number | string> = {
      orders: opts.orders,
      'multi-record lines': lines,
      'multi-record MB': Number(((await stat(files.mr)).size / 1024 / 1024).toFixed(1)),
      'xlsx rows': xlsxRows,
      'xlsx MB': Number(((await stat(files.xlsx)).size / 1024 / 1024).toFixed(1)),
      'nested-json items': items,
      'nested-json MB': Number(((await stat(files.json)).size / 1024 / 1024).toFixed(1)),
    };
    const results: Partial<Record<Phase, PhaseResult>> = {};
    for (const phase of PHASES) {
      const r = await spawnPhase(phase, fileOf[phase]);
      const want = expected[phase];
      if (r.read !== want.read) throw new Error(`bench phase ${phase} read ${r.read}, expected ${want.read}`);
      if (want.records !== undefined && r.records !== want.records)
        throw new Error(`bench phase ${phase} produced ${r.records} records, expected ${want.records}`);
      results[phase] = r;
      figures[`${phase} read/s`] = Math.round(r.read / (r.ms / 1000));
      figures[`${phase} CPU us/read`] = Number((r.cpuUs / r.read).toFixed(1));
      figures[`${phase} peak RSS MB`] = Number(r.maxRssMB.toFixed(1));
    }
    const ratio = (a: Phase, b: Phase): number => Number((results[b]!.ms / results[a]!.ms).toFixed(2));
    figures['multi-record parse+map / csv-parse'] = ratio('multi-record-parse+map', 'multi-record-csv-parse');
    figures['xlsx parse+map / exceljs reader'] = ratio('xlsx-parse+map', 'xlsx-exceljs');
    figures['nested-json parse+map / JSON.parse'] = ratio('nested-json-parse+map', 'nested-json-parse');
    return {
      name: 'shapes',
      figures,
      notes:
        'Ratios are wmsbridge parse+map speed / the raw library on the same file in the same run (1 = as fast as the ' +
        'library alone). parse+map does much more per line: record types, physical lines and raw text for rejects, ' +
        'grouping into documents with lots, transforms, lookups and the interface schema of every document. The JSON ' +
        'input is not streamed (read whole, bounded by maxBytes), so its peak RSS grows with the file.',
    };
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

const isMain = process.argv[1] !== undefined && fileURLToPath(import.meta.url) === process.argv[1];
if (isMain) {
  if (process.argv[2] === PHASE_FLAG) {
    await childMain(process.argv[3] as Phase, process.argv[4]!);
  } else {
    const res = await benchShapes({ orders: Number(process.argv[2] ?? 20_000) });
    process.stdout.write(JSON.stringify(res, null, 2) + '\n');
  }
}
