/**
 * Mapping files and seed facts the end-to-end tests (and bench/chaos.ts) share: one copy of each, so a
 * change to the mapping language or to the sandbox's seed is made once.
 */
import { sandboxCall, type Sandbox } from './sandbox.js';

/** A Category mapping for `codigo;nome` files. */
export function categoryMapping(o: { channel: string; files: string }): string {
  return `name: cat
match: { channel: ${o.channel}, files: "${o.files}" }
source: { format: delimited, delimiter: ';', encoding: utf-8 }
target: Category
fields:
  codeERP: { col: codigo }
  name: { col: nome }
`;
}

/** A Family mapping for `codigo;nome;categoria` files: each family refers to its category by code. */
export function familyMapping(o: { channel: string; files: string }): string {
  return `name: fam
match: { channel: ${o.channel}, files: "${o.files}" }
source: { format: delimited, delimiter: ';', encoding: utf-8 }
target: Family
fields:
  codeERP: { col: codigo }
  name: { col: nome }
  categoryID: { ref: Category, from: categoria }
`;
}

/** A Provider mapping for `codigo;cnpj;nome` files. */
export function providerMapping(o: { channel: string; files: string }): string {
  return `name: prov
match: { channel: ${o.channel}, files: "${o.files}" }
source: { format: delimited, delimiter: ';', encoding: utf-8 }
target: Provider
fields:
  codeERP: { col: codigo }
  cnpj: { col: cnpj }
  socialName: { col: nome }
`;
}

/**
 * A PickingList mapping for `pedido;produto;qtd` files (one list per order, one item per line), its header
 * looked up in the sandbox's seed (company, branch, warehouse CD-SP01, owner '001'). With `productId` the
 * item's product is that constant and the `produto` column is not read.
 */
export function pickingListMapping(o: { channel: string; files: string; productId?: string }): string {
  const product = o.productId ? `{ const: '${o.productId}' }` : '{ col: produto }';
  return `name: ped
match: { channel: ${o.channel}, files: "${o.files}" }
source: { format: delimited, delimiter: ';', encoding: utf-8 }
target: PickingList
group: { by: { col: pedido }, items: pickingItens, itemFields: { productID: ${product}, quantity: { col: qtd, transforms: [number] } } }
fields:
  order: { col: pedido }
  codeERP: { template: 'PickingList:{pedido}', transforms: [uuid5] }
  companyID: { lookup: Company, by: name, from: { const: Distribuidora Paulista de Alimentos Ltda } }
  branchID: { lookup: Branch, by: name, from: { const: Matriz São Paulo } }
  warehouseID: { lookup: Warehouse, by: codeERP, from: { const: CD-SP01 } }
  ownerID: { lookup: Owners, by: code, from: { const: '001' } }
`;
}

/** The id of a product the sandbox is seeded with (for order items). */
export async function seededProductId(sb: Pick<Sandbox, 'url'>): Promise<string> {
  const products = (await sandboxCall(sb, 'GET', '/__sandbox/state?resource=Product')).json;
  const list = Array.isArray(products) ? products : (products.Product ?? products.data);
  return list[0].id as string;
}
