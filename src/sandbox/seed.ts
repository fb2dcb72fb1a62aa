/**
 * Deterministic seed data: one company with a valid CNPJ, 2 branches, 3 warehouses with
 * sub-warehouses and docks, logistics profiles, material statuses, one owner, units, categories,
 * families, products (valid EAN-13), stock records and inventories (some finished).
 */
import { cnpjCheckDigits, createRng, deterministicUuid, ean13CheckDigit } from './ids.js';
import { RESOURCES, emptyStats, type Rec, type Resource, type SandboxState, type StockRow } from './state.js';

export const COMPANY_NAME = 'Distribuidora Paulista de Alimentos Ltda';

function emptyCollections(): Record<Resource, Rec[]> {
  const c = {} as Record<Resource, Rec[]>;
  for (const r of RESOURCES) c[r] = [];
  return c;
}

export function seedState(seedInput: number | string, stockRecords = 0): SandboxState {
  const seed = String(seedInput);
  const rng = createRng(`seed:${seed}`);
  const id = (name: string): string => deterministicUuid(seed, name);
  const digits = (n: number): string => Array.from({ length: n }, () => Math.floor(rng() * 10)).join('');
  const c = emptyCollections();

  const root = `${1 + Math.floor(rng() * 9)}${digits(7)}`;
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
  const whDefs = [
    { code: 'CD-SP01', name: 'CD São Paulo', branch: 0, subs: ['Armazém Seco', 'Câmara Fria', 'Área de Avarias'], docks: 3 },
    { code: 'CD-RJ01', name: 'CD Rio de Janeiro', branch: 1, subs: ['Armazém Seco', 'Câmara Fria'], docks: 2 },
    { code: 'CD-MG01', name: 'CD Minas Gerais', branch: 0, subs: ['Armazém Seco', 'Mezanino Fracionados'], docks: 2 },
  ];
  for (const w of whDefs) {
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
    w.subs.forEach((s, i) =>
      c.SubWarehouse.push({ id: id(`sub:${w.code}:${i}`), warehouseID: wh.id, name: s, description: `${s} (${w.code})`, allowGenerateResponsible: i === 0, status: 1 }),
    );
    for (let d = 1; d <= w.docks; d++) {
      // operation: 0 inbound, 1 outbound, 2 both (values not shown in the spec: sandbox choice)
      c.Dock.push({ id: id(`dock:${w.code}:${d}`), warehouseID: wh.id, positionID: null, name: `DOCA ${String(d).padStart(2, '0')}`, operation: d === 1 ? 0 : d === 2 ? 1 : 2, description: `Doca ${d} de ${w.code}` });
    }
  }
  const profiles: Rec[] = [
    { id: id('lp:PADRAO'), name: 'Padrão', input: false, output: false, mnemonic: 'PADRAO', isDefault: true, status: 1 },
    { id: id('lp:REFRIG'), name: 'Refrigerado (lote e validade)', input: true, output: true, mnemonic: 'REFRIG', isDefault: false, status: 1 },
    { id: id('lp:FRACION'), name: 'Fracionado', input: false, output: true, mnemonic: 'FRACION', isDefault: false, status: 1 },
  ];
  c.LogisticsProfile.push(...profiles);
  const ms = (name: string, description: string, f: [boolean, boolean, boolean, boolean, boolean]): Rec => ({
    id: id(`ms:${name}`),
    name,
    description,
    allowStore: f[0],
    allowPicking: f[1],
    allowMove: f[2],
    allowShipping: f[3],
    allowInventory: f[4],
  });
  const statuses = [
    ms('Disponível', 'Disponível para todas as operações', [true, true, true, true, true]),
    ms('Bloqueado', 'Bloqueado: não separa nem expede', [true, false, false, false, true]),
    ms('Avariado', 'Avariado: pode ser movido para a área de avarias', [true, false, true, false, true]),
    ms('Quarentena', 'Em quarentena (inspeção de qualidade)', [true, false, false, false, true]),
    ms('Vencido', 'Validade vencida', [true, false, true, false, true]),
  ];
  c.MaterialStatus.push(...statuses);
  const owner: Rec = { id: id('owner:001'), companyID: company.id, name: COMPANY_NAME, code: '001', codeERP: '001' };
  c.Owners.push(owner);
  const units: Rec[] = [
    ['UN', 'Unidade'],
    ['CX', 'Caixa'],
    ['KG', 'Quilograma'],
    ['PC', 'Peça'],
  ].map(([symbol, name]) => ({ id: id(`unit:${symbol}`), name: name!, symbol: symbol!, codeERP: symbol!, description: name!, status: 1 }));
  c.UnitMeasurement.push(...units);
  const cats: Rec[] = [
    ['CAT-ALIM', 'Alimentos'],
    ['CAT-BEB', 'Bebidas'],
    ['CAT-LIMP', 'Limpeza'],
  ].map(([code, name]) => ({ id: id(`cat:${code}`), name: name!, codeERP: code!, description: name!, status: 1 }));
  c.Category.push(...cats);
  const fams: Rec[] = [
    ['FAM-GRAOS', 'Grãos', 0],
    ['FAM-LATIC', 'Laticínios', 0],
    ['FAM-REFRI', 'Refrigerantes', 1],
    ['FAM-DETERG', 'Detergentes', 2],
  ].map(([code, name, cat]) => ({ id: id(`fam:${code}`), categoryID: cats[cat as number]!.id, name: name as string, codeERP: code as string, description: name as string, status: 1 }));
  c.Family.push(...fams);
  const prodDefs: Array<[string, string, number, number, string, number]> = [
    ['ARROZ-5KG', 'Arroz Tipo 1 5kg', 0, 0, 'UN', 5.0],
    ['FEIJAO-1KG', 'Feijão Carioca 1kg', 0, 0, 'UN', 1.0],
    ['LEITE-UHT-1L', 'Leite UHT Integral 1L', 1, 1, 'CX', 12.4],
    ['QUEIJO-MUS', 'Queijo Muçarela Fatiado', 1, 1, 'KG', 1.0],
    ['REFRI-COLA-2L', 'Refrigerante Cola 2L', 2, 0, 'PC', 2.1],
    ['DETERG-500', 'Detergente Neutro 500ml', 3, 2, 'CX', 12.0],
  ];
  const prods: Rec[] = prodDefs.map(([code, name, fam, lp, unit, weight], i) => {
    const famRec = fams[fam]!;
    const base = `789${digits(9)}`;
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
      ncm: ['10063021', '07133319', '04012010', '04061010', '22021000', '34022000'][i] ?? null,
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

  const unitBySymbol = new Map(units.map((u) => [u['symbol'] as string, u]));
  const [available, blocked] = statuses;
  const stock: StockRow[] = [];
  const wh = c.Warehouse;
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
    stock.push(row(wh[0]!, `L${2026}${String(i + 1).padStart(3, '0')}A`, 50 + Math.floor(rng() * 450), available!));
    stock.push(row(wh[0]!, `L${2026}${String(i + 1).padStart(3, '0')}B`, 10 + Math.floor(rng() * 90), available!));
    if (i % 2 === 0) stock.push(row(wh[1]!, `L${2026}${String(i + 1).padStart(3, '0')}C`, 20 + Math.floor(rng() * 200), available!));
    if (i === 3) stock.push(row(wh[0]!, `L${2026}${String(i + 1).padStart(3, '0')}X`, 5, blocked!));
  });

  // Inventories: situation 0 open, 1 counting, 2 finished; type 0 general, 1 rotating (values not
  // shown in the spec: sandbox choice). Finished = endDate set (GET /Inventory/finished).
  const invDefs = [
    { name: 'Inventário geral 2025', wh: 0, type: 0, situation: 2, start: '2025-12-27T08:00:00Z', end: '2025-12-28T18:00:00Z', acc: 99.2, adj: true },
    { name: 'Rotativo RJ semana 2', wh: 1, type: 1, situation: 2, start: '2026-01-12T08:00:00Z', end: '2026-01-12T12:00:00Z', acc: 100, adj: false },
    { name: 'Rotativo SP semana 40', wh: 0, type: 1, situation: 1, start: '2026-10-01T08:00:00Z', end: null, acc: 0, adj: false },
  ];
  invDefs.forEach((d, n) => {
    const invId = id(`inventory:${n}`);
    const w = wh[d.wh]!;
    const itens = stock
      .filter((s) => s.warehouseId === w.id)
      .map((s, k) => {
        const counted = d.situation === 2 ? s.quantity - (k === 0 && d.adj ? 1 : 0) : null;
        return {
          id: id(`inventory:${n}:item:${k}`),
          inventoryID: invId,
          positionID: id(`position:${w['codeERP'] as string}:${k}`),
          containerID: null,
          productID: s.productId,
          quantity: s.quantity,
          snapshotQuantity: s.quantity,
          firstCount: counted,
          secondCount: counted,
          thirdCount: null,
          integrationQuantity: counted,
          lotNumber: s.lotNumber,
          manufacturingDate: s.manufacturingDate,
          expirationDate: s.expirationDate,
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

  return {
    version: 1,
    seed,
    nextSeq: 1,
    collections: c,
    stock,
    synthetic: {
      count: stockRecords,
      products: prods.map((p) => {
        const u = unitBySymbol.get(p['unitmeasurement'] as string)!;
        return { id: p.id, code: p['code'] as string, name: p['name'] as string, unitId: u.id, unitName: u['name'] as string };
      }),
      warehouses: wh.map((w) => ({ id: w.id, name: w['name'] as string })),
      owner: { id: owner.id, name: owner['name'] as string },
      status: { id: available!.id, name: available!['name'] as string },
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
