/**
 * Deterministic seed data: one company with a valid CNPJ, 2 branches, 3 warehouses with
 * sub-warehouses and docks, logistics profiles, material statuses, one owner, units, categories,
 * families, products (valid EAN-13), stock records and inventories (some finished).
 *
 * The data are the tables below; the functions only give them ids (deterministic from the seed), link
 * them, and draw the few random values (CNPJ root, EAN-13 bodies, stock quantities) in a fixed order.
 */
import { cnpjCheckDigits, createRng, deterministicUuid, ean13CheckDigit } from './ids.js';
import { RESOURCES, emptyStats, type Rec, type Resource, type SandboxState, type StockRow } from './state.js';

export const COMPANY_NAME = 'Distribuidora Paulista de Alimentos Ltda';

/** warehouses: code, name, branch (index), sub-warehouses, docks */
const WAREHOUSES = [
  { code: 'CD-SP01', name: 'CD São Paulo', branch: 0, subs: ['Armazém Seco', 'Câmara Fria', 'Área de Avarias'], docks: 3 },
  { code: 'CD-RJ01', name: 'CD Rio de Janeiro', branch: 1, subs: ['Armazém Seco', 'Câmara Fria'], docks: 2 },
  { code: 'CD-MG01', name: 'CD Minas Gerais', branch: 0, subs: ['Armazém Seco', 'Mezanino Fracionados'], docks: 2 },
];

/** logistics profiles: mnemonic, name, input, output, isDefault */
const PROFILES: Array<[string, string, boolean, boolean, boolean]> = [
  ['PADRAO', 'Padrão', false, false, true],
  ['REFRIG', 'Refrigerado (lote e validade)', true, true, false],
  ['FRACION', 'Fracionado', false, true, false],
];

/** material statuses: name, description, allowStore, allowPicking, allowMove, allowShipping, allowInventory */
const MATERIAL_STATUSES: Array<[string, string, boolean, boolean, boolean, boolean, boolean]> = [
  ['Disponível', 'Disponível para todas as operações', true, true, true, true, true],
  ['Bloqueado', 'Bloqueado: não separa nem expede', true, false, false, false, true],
  ['Avariado', 'Avariado: pode ser movido para a área de avarias', true, false, true, false, true],
  ['Quarentena', 'Em quarentena (inspeção de qualidade)', true, false, false, false, true],
  ['Vencido', 'Validade vencida', true, false, true, false, true],
];

/** units of measurement: symbol, name */
const UNITS: Array<[string, string]> = [
  ['UN', 'Unidade'],
  ['CX', 'Caixa'],
  ['KG', 'Quilograma'],
  ['PC', 'Peça'],
];

/** categories: codeERP, name */
const CATEGORIES: Array<[string, string]> = [
  ['CAT-ALIM', 'Alimentos'],
  ['CAT-BEB', 'Bebidas'],
  ['CAT-LIMP', 'Limpeza'],
];

/** families: codeERP, name, category (index) */
const FAMILIES: Array<[string, string, number]> = [
  ['FAM-GRAOS', 'Grãos', 0],
  ['FAM-LATIC', 'Laticínios', 0],
  ['FAM-REFRI', 'Refrigerantes', 1],
  ['FAM-DETERG', 'Detergentes', 2],
];

/** products: code, name, family (index), logistics profile (index), unit, weight, NCM */
const PRODUCTS: Array<[string, string, number, number, string, number, string]> = [
  ['ARROZ-5KG', 'Arroz Tipo 1 5kg', 0, 0, 'UN', 5.0, '10063021'],
  ['FEIJAO-1KG', 'Feijão Carioca 1kg', 0, 0, 'UN', 1.0, '07133319'],
  ['LEITE-UHT-1L', 'Leite UHT Integral 1L', 1, 1, 'CX', 12.4, '04012010'],
  ['QUEIJO-MUS', 'Queijo Muçarela Fatiado', 1, 1, 'KG', 1.0, '04061010'],
  ['REFRI-COLA-2L', 'Refrigerante Cola 2L', 2, 0, 'PC', 2.1, '22021000'],
  ['DETERG-500', 'Detergente Neutro 500ml', 3, 2, 'CX', 12.0, '34022000'],
];

/**
 * Inventories: situation 0 open, 1 counting, 2 finished; type 0 general, 1 rotating (values not shown in
 * the spec: sandbox choice). Finished = endDate set (GET /Inventory/finished). `adj`: the first item was
 * counted one short.
 */
const INVENTORIES = [
  { name: 'Inventário geral 2025', wh: 0, type: 0, situation: 2, start: '2025-12-27T08:00:00Z', end: '2025-12-28T18:00:00Z', acc: 99.2, adj: true },
  { name: 'Rotativo RJ semana 2', wh: 1, type: 1, situation: 2, start: '2026-01-12T08:00:00Z', end: '2026-01-12T12:00:00Z', acc: 100, adj: false },
  { name: 'Rotativo SP semana 40', wh: 0, type: 1, situation: 1, start: '2026-10-01T08:00:00Z', end: null, acc: 0, adj: false },
];

function emptyCollections(): Record<Resource, Rec[]> {
  const c = {} as Record<Resource, Rec[]>;
  for (const r of RESOURCES) c[r] = [];
  return c;
}

/** What the seed functions share: the collections being filled, ids from the seed, the seed's RNG. */
interface Seeding {
  c: Record<Resource, Rec[]>;
  id(name: string): string;
  rng(): number;
  digits(n: number): string;
}

/** Company, branches, warehouses with their sub-warehouses and docks; returns the company. */
function seedOrganisation(s: Seeding): Rec {
  const { c, id } = s;
  const root = `${1 + Math.floor(s.rng() * 9)}${s.digits(7)}`;
  const cnpj = (branch: string): string => {
    const base = `${root}${branch}`;
    return base + cnpjCheckDigits(base);
  };
  const company: Rec = { id: id('company'), name: COMPANY_NAME, cnpj: cnpj('0001'), description: 'Seed company of the sandbox', status: 1 };
  c.Company.push(company);
  const branches: Rec[] = [
    { id: id('branch:1'), companyID: company.id, name: 'Matriz São Paulo', cnpj: cnpj('0001'), description: 'Matriz', status: 1 },
    { id: id('branch:2'), companyID: company.id, name: 'Filial Rio de Janeiro', cnpj: cnpj('0002'), description: 'Filial', status: 1 },
  ];
  c.Branch.push(...branches);
  for (const w of WAREHOUSES) {
    const wh: Rec = {
      id: id(`warehouse:${w.code}`),
      companyID: company.id,
      branchID: branches[w.branch]!.id,
      codeERP: w.code,
      name: w.name,
      description: `Centro de distribuição ${w.code}`,
      status: 1,
    };
    c.Warehouse.push(wh);
    w.subs.forEach((sub, i) =>
      c.SubWarehouse.push({
        id: id(`sub:${w.code}:${i}`),
        warehouseID: wh.id,
        name: sub,
        description: `${sub} (${w.code})`,
        allowGenerateResponsible: i === 0,
        status: 1,
      }),
    );
    for (let d = 1; d <= w.docks; d++) {
      // operation: 0 inbound, 1 outbound, 2 both (values not shown in the spec: sandbox choice)
      c.Dock.push({
        id: id(`dock:${w.code}:${d}`),
        warehouseID: wh.id,
        positionID: null,
        name: `DOCA ${String(d).padStart(2, '0')}`,
        operation: d === 1 ? 0 : d === 2 ? 1 : 2,
        description: `Doca ${d} de ${w.code}`,
      });
    }
  }
  return company;
}

/** Logistics profiles, material statuses, the owner, units, categories, families and products. */
function seedCatalog(s: Seeding, company: Rec): { owner: Rec; statuses: Rec[]; units: Rec[]; prods: Rec[] } {
  const { c, id } = s;
  const profiles: Rec[] = PROFILES.map(([mnemonic, name, input, output, isDefault]) => ({
    id: id(`lp:${mnemonic}`),
    name,
    input,
    output,
    mnemonic,
    isDefault,
    status: 1,
  }));
  c.LogisticsProfile.push(...profiles);
  const statuses: Rec[] = MATERIAL_STATUSES.map(([name, description, allowStore, allowPicking, allowMove, allowShipping, allowInventory]) => ({
    id: id(`ms:${name}`),
    name,
    description,
    allowStore,
    allowPicking,
    allowMove,
    allowShipping,
    allowInventory,
  }));
  c.MaterialStatus.push(...statuses);
  const owner: Rec = { id: id('owner:001'), companyID: company.id, name: COMPANY_NAME, code: '001', codeERP: '001' };
  c.Owners.push(owner);
  const units: Rec[] = UNITS.map(([symbol, name]) => ({ id: id(`unit:${symbol}`), name, symbol, codeERP: symbol, description: name, status: 1 }));
  c.UnitMeasurement.push(...units);
  const cats: Rec[] = CATEGORIES.map(([code, name]) => ({ id: id(`cat:${code}`), name, codeERP: code, description: name, status: 1 }));
  c.Category.push(...cats);
  const fams: Rec[] = FAMILIES.map(([code, name, cat]) => ({
    id: id(`fam:${code}`),
    categoryID: cats[cat]!.id,
    name,
    codeERP: code,
    description: name,
    status: 1,
  }));
  c.Family.push(...fams);
  const prods: Rec[] = PRODUCTS.map(([code, name, fam, lp, unit, weight, ncm]) => {
    const famRec = fams[fam]!;
    const base = `789${s.digits(9)}`;
    return {
      id: id(`product:${code}`),
      code,
      codeERP: code,
      name,
      categoryID: famRec['categoryID'] as string,
      familyID: famRec.id,
      logisticsProfileID: profiles[lp]!.id,
      expeditionProfileID: null,
      unitmeasurement: unit,
      ncm,
      barCode: base + ean13CheckDigit(base),
      weight,
      brand: 'Paulista',
      description: name,
      status: 1,
      color: null,
      validity: lp === 1 ? 120 : 365,
    };
  });
  c.Product.push(...prods);
  return { owner, statuses, units, prods };
}

/** Stored stock: two lots per product in the first warehouse, a third in the second for every other product, one blocked lot. */
function seedStock(s: Seeding, owner: Rec, statuses: Rec[], unitBySymbol: Map<string, Rec>, prods: Rec[]): StockRow[] {
  const [available, blocked] = statuses;
  const wh = s.c.Warehouse;
  const stock: StockRow[] = [];
  prods.forEach((p, i) => {
    const u = unitBySymbol.get(p['unitmeasurement'] as string)!;
    const row = (w: Rec, lot: string, qty: number, st: Rec): StockRow => ({
      warehouseId: w.id,
      warehouseName: w['name'] as string,
      ownerId: owner.id,
      ownerName: owner['name'] as string,
      productId: p.id,
      productCode: p['code'] as string,
      productName: p['name'] as string,
      lotNumber: lot,
      manufacturingDate: `2026-0${1 + (i % 6)}-10T00:00:00Z`,
      expirationDate: `2027-0${1 + (i % 6)}-10T00:00:00Z`,
      quantity: qty,
      reserved: 0,
      materialStatusId: st.id,
      materialStatusName: st['name'] as string,
      unitMeasurementId: u.id,
      unitMeasurementName: u['name'] as string,
    });
    const lot = (suffix: string): string => `L${2026}${String(i + 1).padStart(3, '0')}${suffix}`;
    stock.push(row(wh[0]!, lot('A'), 50 + Math.floor(s.rng() * 450), available!));
    stock.push(row(wh[0]!, lot('B'), 10 + Math.floor(s.rng() * 90), available!));
    if (i % 2 === 0) stock.push(row(wh[1]!, lot('C'), 20 + Math.floor(s.rng() * 200), available!));
    if (i === 3) stock.push(row(wh[0]!, lot('X'), 5, blocked!));
  });
  return stock;
}

/** Inventories of the stock of their warehouse (INVENTORIES). */
function seedInventories(s: Seeding, company: Rec, owner: Rec, stock: StockRow[]): void {
  const { c, id } = s;
  INVENTORIES.forEach((d, n) => {
    const invId = id(`inventory:${n}`);
    const w = c.Warehouse[d.wh]!;
    const itens = stock
      .filter((row) => row.warehouseId === w.id)
      .map((row, k) => {
        const counted = d.situation === 2 ? row.quantity - (k === 0 && d.adj ? 1 : 0) : null;
        return {
          id: id(`inventory:${n}:item:${k}`),
          inventoryID: invId,
          positionID: id(`position:${w['codeERP'] as string}:${k}`),
          containerID: null,
          productID: row.productId,
          quantity: row.quantity,
          snapshotQuantity: row.quantity,
          firstCount: counted,
          secondCount: counted,
          thirdCount: null,
          integrationQuantity: counted,
          lotNumber: row.lotNumber,
          manufacturingDate: row.manufacturingDate,
          expirationDate: row.expirationDate,
          situation: d.situation,
          codeAux: `POS-${String(k + 1).padStart(3, '0')}`,
        };
      });
    c.Inventory.push({
      id: invId,
      companyID: company.id,
      branchID: w['branchID'] as string,
      warehouseID: w.id,
      startDate: d.start,
      endDate: d.end,
      name: d.name,
      type: d.type,
      situation: d.situation,
      accuracy: d.acc,
      adjustiment: d.adj,
      ownersID: owner.id,
      itens,
    });
  });
}

export function seedState(seedInput: number | string, stockRecords = 0): SandboxState {
  const seed = String(seedInput);
  const rng = createRng(`seed:${seed}`);
  const s: Seeding = {
    c: emptyCollections(),
    id: (name) => deterministicUuid(seed, name),
    rng,
    digits: (n) => Array.from({ length: n }, () => Math.floor(rng() * 10)).join(''),
  };
  const company = seedOrganisation(s);
  const { owner, statuses, units, prods } = seedCatalog(s, company);
  const unitBySymbol = new Map(units.map((u) => [u['symbol'] as string, u]));
  const stock = seedStock(s, owner, statuses, unitBySymbol, prods);
  seedInventories(s, company, owner, stock);
  const available = statuses[0]!;
  return {
    version: 1,
    seed,
    nextSeq: 1,
    collections: s.c,
    stock,
    synthetic: {
      count: stockRecords,
      products: prods.map((p) => {
        const u = unitBySymbol.get(p['unitmeasurement'] as string)!;
        return { id: p.id, code: p['code'] as string, name: p['name'] as string, unitId: u.id, unitName: u['name'] as string };
      }),
      warehouses: s.c.Warehouse.map((w) => ({ id: w.id, name: w['name'] as string })),
      owner: { id: owner.id, name: owner['name'] as string },
      status: { id: available.id, name: available['name'] as string },
      statusOverrides: {},
    },
    syncSessions: {},
    creations: {},
    updates: {},
    deletes: {},
    stats: emptyStats(),
  };
}

/** Default credentials derived from the seed. */
export function seedCredentials(seed: number | string): { accessKeyID: string; secretKey: string } {
  const s = String(seed);
  return {
    accessKeyID: `sbx-${deterministicUuid(s, 'access-key').slice(0, 8)}`,
    secretKey: deterministicUuid(s, 'secret-key').replace(/-/g, ''),
  };
}
