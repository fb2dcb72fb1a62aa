/**
 * What ERP column names mean for the WMS targets: TOTVS Protheus field names of the product (SB1),
 * customer (SA1), supplier (SA2), carrier (SA4), order (SC5 header, SC6 items) and stock (SB2 balance,
 * SB8 lot balance) tables, and the Portuguese words other ERPs and hand-made exports use. Names are
 * compared normalised: lower case, accents removed, non-alphanumerics as '_'.
 */
import type { Target } from '../wms/targets.js';
import type { ValueKind } from './types.js';
import { ERP_NAMES } from './erp-names.js';

export type FieldKind =
  'code' | 'text' | 'number' | 'integer' | 'date' | 'datetime' | 'cnpj' | 'document' | 'ean' | 'ncm' | 'cep' | 'uf' | 'boolean' | 'ref' | 'lookup' | 'map';

export interface FieldDef {
  field: string;
  kind: FieldKind;
  /** normalised column names that mean this field (Protheus names and Portuguese words) */
  names: string[];
  /** a document item field (group.itemFields) */
  item?: boolean;
  /** ref: the resource wmsbridge sends; lookup: resource and `by` field */
  ref?: string;
  lookup?: { resource: string; by: string };
  /** no column of its own: read the column of this other field (codeERP = code) */
  sameAs?: string;
  /** value kinds a column may have for this field; others make the column unlikely */
  types?: ValueKind[];
  /** a column of one of these kinds fits even without a known name (score 0.55) */
  byType?: ValueKind[];
  /** map transform for small code sets */
  map?: Record<string, number>;
  /** `default` written with a lookup (LogisticsProfile: PADRAO) */
  default?: string;
  /** the field is required by the WMS: without a column, a placeholder with a TODO is written */
  placeholder?: { expr: unknown; todo: string };
  /** the first 'code' column of an unnamed (fixed-width) layout is this field */
  firstCode?: boolean;
}

export interface TargetDef {
  target: Target;
  /** file-name words (normalised) pointing at this target */
  fileWords: string[];
  /** Protheus column prefixes of the tables exported for it */
  prefixes: string[];
  channel: string;
  /** documents: the items field and the header field that keys a document */
  document?: { items: 'pickingItens' | 'purchaseOrderItens'; key: string };
  fields: FieldDef[];
}

const TEXT: ValueKind[] = ['text', 'code', 'uf', 'flag', 'integer', 'empty'];
const CODE: ValueKind[] = ['code', 'integer', 'text', 'gtin', 'empty', 'cnpj', 'ncm', 'cep', 'uf'];
const NUM: ValueKind[] = ['decimal', 'integer', 'implied', 'code', 'empty'];

const todoConst = (v: string) => ({ const: v });

const ADDRESS = (p: string): FieldDef[] => [
  { field: 'postalCode', kind: 'cep', names: ['cep', 'codigo_postal', `${p}_cep`], types: ['cep', 'code', 'integer', 'empty'], byType: ['cep'] },
  { field: 'address', kind: 'text', names: ['logradouro', 'endereco', 'end', 'rua', `${p}_end`], types: TEXT },
  { field: 'number', kind: 'text', names: ['numero', 'num', 'nro', 'numero_endereco', `${p}_nr_end`, `${p}_numero`], types: TEXT },
  { field: 'complement', kind: 'text', names: ['complemento', 'compl', `${p}_complem`], types: TEXT },
  { field: 'district', kind: 'text', names: ['bairro', `${p}_bairro`], types: TEXT },
  { field: 'city', kind: 'text', names: ['cidade', 'municipio', 'mun', `${p}_mun`], types: TEXT },
  { field: 'state', kind: 'uf', names: ['uf', 'estado', 'est', `${p}_est`], types: ['uf', 'empty'], byType: ['uf'] },
  { field: 'phone', kind: 'text', names: ['telefone', 'fone', 'tel', `${p}_tel`], types: TEXT },
  { field: 'contact', kind: 'text', names: ['contato', `${p}_contato`], types: TEXT },
];

const OWNER_PLACEHOLDER = {
  expr: { lookup: 'Owners', by: 'code', from: todoConst('TODO') },
  todo: "the owner (depositante) code in the WMS, e.g. '001'",
};

export const TARGETS_DICT: TargetDef[] = [
  {
    target: 'Product',
    fileWords: ['produto', 'produtos', 'sb1', 'item', 'itens', 'mercadoria', 'mercadorias', 'material', 'materiais', 'sku'],
    prefixes: ['b1'],
    channel: 'cadastros',
    fields: [
      {
        field: 'code',
        kind: 'code',
        names: ['codigo', 'cod', 'b1_cod', 'cod_produto', 'codigo_produto', 'produto', 'sku', 'cod_item'],
        types: CODE,
        firstCode: true,
      },
      { field: 'codeERP', kind: 'code', names: [], sameAs: 'code' },
      { field: 'name', kind: 'text', names: ['descricao', 'desc', 'b1_desc', 'nome', 'descricao_produto', 'desc_produto'], types: TEXT },
      {
        field: 'categoryID',
        kind: 'ref',
        ref: 'Category',
        names: ['categoria', 'grupo', 'b1_grupo', 'cod_categoria', 'grupo_produto'],
        types: CODE,
        placeholder: {
          expr: { ref: 'Category', from: todoConst('TODO') },
          todo: 'no category column: the category of every product (a constant such as GERAL, sent first, or a column)',
        },
      },
      {
        field: 'familyID',
        kind: 'ref',
        ref: 'Family',
        names: ['familia', 'subgrupo', 'b1_xfamil', 'b1_familia', 'cod_familia', 'linha'],
        types: CODE,
        placeholder: {
          expr: { ref: 'Family', from: todoConst('TODO') },
          todo: 'no family column: the family of every product (a constant such as GERAL, sent first, or a column)',
        },
      },
      {
        field: 'logisticsProfileID',
        kind: 'lookup',
        lookup: { resource: 'LogisticsProfile', by: 'mnemonic' },
        names: ['perfil_logistico', 'perfil', 'perfil_log'],
        types: CODE,
        default: 'PADRAO',
        placeholder: {
          expr: { lookup: 'LogisticsProfile', by: 'mnemonic', from: todoConst('PADRAO') },
          todo: 'no logistics profile column: every product gets the profile PADRAO (its mnemonic in the WMS)',
        },
      },
      {
        field: 'unitmeasurement',
        kind: 'code',
        names: ['unidade', 'um', 'b1_um', 'unid', 'unidade_medida', 'und'],
        types: CODE,
        placeholder: { expr: todoConst('TODO'), todo: "no unit column: the unit of every product (e.g. 'UN')" },
      },
      {
        field: 'ncm',
        kind: 'ncm',
        names: ['ncm', 'b1_posipi', 'posipi', 'pos_ipi', 'classificacao_fiscal', 'cod_ncm'],
        types: ['ncm', 'code', 'integer', 'empty'],
        byType: ['ncm'],
      },
      {
        field: 'barCode',
        kind: 'ean',
        names: ['ean', 'codbar', 'b1_codbar', 'gtin', 'cod_barras', 'codigo_barras', 'ean13', 'cod_ean', 'codigo_ean'],
        types: ['gtin', 'code', 'integer', 'empty'],
        byType: ['gtin'],
      },
      { field: 'weight', kind: 'number', names: ['peso_bruto', 'b1_pesbru', 'peso', 'pesbru', 'b1_peso', 'peso_liquido', 'peso_kg'], types: NUM },
      { field: 'brand', kind: 'text', names: ['marca', 'b1_xmarca', 'b1_marca', 'fabricante', 'b1_fabric'], types: TEXT },
      { field: 'description', kind: 'text', names: ['observacao', 'obs', 'b1_especif', 'descricao_completa', 'descricao_detalhada'], types: TEXT },
    ],
  },
  {
    target: 'Provider',
    fileWords: ['fornecedor', 'fornecedores', 'sa2', 'fornec', 'provider', 'providers'],
    prefixes: ['a2'],
    channel: 'cadastros',
    fields: [
      {
        field: 'cnpj',
        kind: 'cnpj',
        names: ['cnpj', 'cgc', 'a2_cgc', 'cnpj_cpf', 'cpf_cnpj', 'cnpj_fornecedor'],
        types: ['cnpj', 'cpf', 'code', 'integer'],
        byType: ['cnpj'],
      },
      { field: 'codeERP', kind: 'cnpj', names: [], sameAs: 'cnpj' },
      { field: 'socialName', kind: 'text', names: ['razao_social', 'nome', 'a2_nome', 'razao', 'nome_fornecedor', 'fornecedor'], types: TEXT },
      { field: 'fantasyName', kind: 'text', names: ['nome_fantasia', 'fantasia', 'a2_nreduz', 'nreduz', 'nome_reduzido'], types: TEXT },
      { field: 'mnemonic', kind: 'code', names: ['codigo', 'cod', 'a2_cod', 'cod_fornecedor', 'codigo_fornecedor'], types: CODE, firstCode: true },
      ...ADDRESS('a2'),
      { field: 'description', kind: 'text', names: ['observacao', 'obs', 'descricao'], types: TEXT },
    ],
  },
  {
    target: 'ShippingCompany',
    fileWords: ['transportadora', 'transportadoras', 'sa4', 'transp', 'transportador', 'carrier', 'carriers'],
    prefixes: ['a4'],
    channel: 'cadastros',
    fields: [
      { field: 'codeERP', kind: 'code', names: ['codigo', 'cod', 'a4_cod', 'cod_transportadora', 'transportadora'], types: CODE, firstCode: true },
      { field: 'cnpj', kind: 'cnpj', names: ['cnpj', 'cgc', 'a4_cgc', 'cnpj_cpf'], types: ['cnpj', 'cpf', 'code', 'integer'], byType: ['cnpj'] },
      { field: 'name', kind: 'text', names: ['razao_social', 'nome', 'a4_nome', 'razao'], types: TEXT },
      { field: 'fantasyName', kind: 'text', names: ['nome_fantasia', 'fantasia', 'a4_nreduz', 'nreduz'], types: TEXT },
      ...ADDRESS('a4'),
      { field: 'description', kind: 'text', names: ['observacao', 'obs', 'descricao'], types: TEXT },
    ],
  },
  {
    target: 'UnitMeasurement',
    fileWords: ['unidade', 'unidades', 'sah', 'um', 'unidades_medida', 'medida', 'medidas'],
    prefixes: ['ah'],
    channel: 'cadastros',
    fields: [
      { field: 'symbol', kind: 'code', names: ['sigla', 'simbolo', 'unidade', 'um', 'ah_unimed', 'unimed', 'codigo', 'cod'], types: CODE, firstCode: true },
      { field: 'codeERP', kind: 'code', names: [], sameAs: 'symbol' },
      { field: 'name', kind: 'text', names: ['descricao', 'nome', 'ah_descpo', 'desc'], types: TEXT },
      { field: 'description', kind: 'text', names: ['observacao', 'obs'], types: TEXT },
    ],
  },
  {
    target: 'Category',
    fileWords: ['categoria', 'categorias', 'grupo', 'grupos', 'sbm'],
    prefixes: ['bm'],
    channel: 'cadastros',
    fields: [
      { field: 'codeERP', kind: 'code', names: ['codigo', 'cod', 'bm_grupo', 'grupo', 'categoria'], types: CODE, firstCode: true },
      { field: 'name', kind: 'text', names: ['descricao', 'nome', 'bm_desc', 'desc'], types: TEXT },
      { field: 'description', kind: 'text', names: ['observacao', 'obs'], types: TEXT },
    ],
  },
  {
    target: 'Family',
    fileWords: ['familia', 'familias', 'subgrupo', 'subgrupos'],
    prefixes: [],
    channel: 'cadastros',
    fields: [
      { field: 'codeERP', kind: 'code', names: ['codigo', 'cod', 'familia'], types: CODE, firstCode: true },
      { field: 'name', kind: 'text', names: ['descricao', 'nome', 'desc'], types: TEXT },
      {
        field: 'categoryID',
        kind: 'ref',
        ref: 'Category',
        names: ['categoria', 'grupo', 'cod_categoria'],
        types: CODE,
        placeholder: { expr: { ref: 'Category', from: todoConst('TODO') }, todo: 'no category column: the category of every family (a constant, or a column)' },
      },
      { field: 'description', kind: 'text', names: ['observacao', 'obs'], types: TEXT },
    ],
  },
  {
    target: 'Owners',
    fileWords: ['depositante', 'depositantes', 'owner', 'owners', 'cliente_armazem'],
    prefixes: [],
    channel: 'cadastros',
    fields: [
      { field: 'code', kind: 'code', names: ['codigo', 'cod', 'depositante'], types: CODE, firstCode: true },
      { field: 'codeERP', kind: 'code', names: [], sameAs: 'code' },
      { field: 'name', kind: 'text', names: ['nome', 'razao_social', 'descricao'], types: TEXT },
      {
        field: 'companyID',
        kind: 'lookup',
        lookup: { resource: 'Company', by: 'name' },
        names: ['empresa', 'companhia', 'nome_empresa'],
        types: TEXT,
        placeholder: { expr: { lookup: 'Company', by: 'name', from: todoConst('TODO') }, todo: 'the name of the company as the WMS knows it' },
      },
    ],
  },
  {
    target: 'ConversionFactor',
    fileWords: ['fator', 'fatores', 'conversao', 'conversoes', 'embalagem', 'embalagens', 'sb5'],
    prefixes: [],
    channel: 'cadastros',
    fields: [
      { field: 'codeERP', kind: 'code', names: ['codigo', 'cod'], types: CODE, firstCode: true },
      { field: 'productID', kind: 'ref', ref: 'Product', names: ['produto', 'cod_produto', 'codigo_produto', 'b1_cod'], types: CODE },
      {
        field: 'unitMeasurementInputID',
        kind: 'lookup',
        lookup: { resource: 'UnitMeasurement', by: 'symbol' },
        names: ['unidade_embalagem', 'um_embalagem', 'b1_segum', 'segum', 'unidade_entrada', 'embalagem'],
        types: CODE,
      },
      {
        field: 'unitMeasurementInputCount',
        kind: 'integer',
        names: ['quantidade', 'fator', 'b1_conv', 'conv', 'qtd', 'qtde', 'qtd_embalagem'],
        types: ['integer', 'code'],
      },
      {
        field: 'unitMeasurementOutputID',
        kind: 'lookup',
        lookup: { resource: 'UnitMeasurement', by: 'symbol' },
        names: ['unidade_base', 'um_base', 'b1_um', 'unidade_saida', 'unidade'],
        types: CODE,
      },
      {
        field: 'ean',
        kind: 'ean',
        names: ['dun14', 'dun', 'ean', 'gtin', 'ean14', 'cod_barras'],
        types: ['gtin', 'code', 'integer', 'empty'],
        byType: ['gtin'],
      },
      { field: 'description', kind: 'text', names: ['descricao', 'obs', 'observacao'], types: TEXT },
    ],
  },
  {
    target: 'PickingList',
    fileWords: ['pedido', 'pedidos', 'sc5', 'sc6', 'venda', 'vendas', 'separacao', 'expedicao', 'picking'],
    prefixes: ['c5', 'c6', 'a1'],
    channel: 'pedidos',
    document: { items: 'pickingItens', key: 'order' },
    fields: [
      {
        field: 'order',
        kind: 'code',
        firstCode: true,
        names: ['pedido', 'c5_num', 'num_pedido', 'numero_pedido', 'nr_pedido', 'c6_num', 'pedido_venda', 'num'],
        types: CODE,
      },
      {
        field: 'registrationDate',
        kind: 'datetime',
        names: ['emissao', 'c5_emissao', 'data_emissao', 'dt_emissao', 'data_pedido', 'data'],
        types: ['date', 'datetime', 'empty'],
        byType: ['datetime', 'date'],
      },
      {
        field: 'pickingDate',
        kind: 'date',
        names: ['data_separacao', 'data_entrega', 'c5_fecent', 'c6_entreg', 'entrega', 'dt_entrega', 'previsao_entrega'],
        types: ['date', 'datetime', 'empty'],
      },
      { field: 'clientName', kind: 'text', names: ['cliente', 'nome_cliente', 'a1_nome', 'razao_social', 'destinatario', 'nome'], types: TEXT },
      {
        field: 'document',
        kind: 'document',
        names: ['cnpj_cliente', 'cpf_cnpj', 'a1_cgc', 'cnpj', 'cpf', 'cgc', 'documento', 'cnpj_cpf'],
        types: ['cnpj', 'cpf', 'code', 'integer'],
        byType: ['cnpj', 'cpf'],
      },
      { field: 'street', kind: 'text', names: ['logradouro', 'endereco', 'a1_end', 'rua', 'end'], types: TEXT },
      { field: 'number', kind: 'text', names: ['numero', 'nro', 'a1_nr_end', 'numero_endereco'], types: TEXT },
      { field: 'complement', kind: 'text', names: ['complemento', 'a1_complem', 'compl'], types: TEXT },
      { field: 'district', kind: 'text', names: ['bairro', 'a1_bairro'], types: TEXT },
      { field: 'city', kind: 'text', names: ['cidade', 'municipio', 'a1_mun', 'mun'], types: TEXT },
      { field: 'state', kind: 'uf', names: ['uf', 'estado', 'a1_est', 'est'], types: ['uf', 'empty'], byType: ['uf'] },
      {
        field: 'warehouseID',
        kind: 'lookup',
        lookup: { resource: 'Warehouse', by: 'codeERP' },
        names: ['cd', 'deposito', 'armazem', 'c6_local', 'local', 'centro_distribuicao', 'almoxarifado'],
        types: CODE,
        placeholder: {
          expr: { lookup: 'Warehouse', by: 'codeERP', from: todoConst('TODO') },
          todo: 'the warehouse codeERP in the WMS (no warehouse column found)',
        },
      },
      {
        field: 'shippingCompanyID',
        kind: 'lookup',
        lookup: { resource: 'ShippingCompany', by: 'codeERP' },
        names: ['transportadora', 'c5_transp', 'transp', 'cod_transportadora'],
        types: CODE,
      },
      {
        field: 'priority',
        kind: 'map',
        names: ['prioridade', 'c5_xprior', 'urgencia'],
        types: CODE,
        map: { BAIXA: 0, NORMAL: 1, ALTA: 2, URGENTE: 3, B: 0, N: 1, A: 2, U: 3 },
      },
      {
        field: 'shippingType',
        kind: 'map',
        names: ['frete', 'tipo_frete', 'c5_tpfrete', 'tpfrete', 'modalidade_frete'],
        types: CODE,
        map: { CIF: 0, FOB: 1, C: 0, F: 1 },
      },
      {
        field: 'productID',
        item: true,
        kind: 'ref',
        ref: 'Product',
        firstCode: true,
        names: ['produto', 'c6_produto', 'cod_produto', 'codigo_produto', 'sku', 'item_produto'],
        types: CODE,
      },
      { field: 'quantity', item: true, kind: 'number', names: ['quantidade', 'c6_qtdven', 'qtd', 'qtde', 'qtdven', 'quant', 'qtd_pedida'], types: NUM },
      {
        field: 'saleValue',
        item: true,
        kind: 'number',
        names: ['preco_unitario', 'c6_prcven', 'preco', 'valor_unitario', 'prcven', 'vl_unitario'],
        types: NUM,
      },
      { field: 'lotNumber', item: true, kind: 'text', names: ['lote', 'c6_lotectl', 'lotectl', 'numero_lote'], types: TEXT },
      { field: 'aux01', item: true, kind: 'text', names: ['item', 'c6_item', 'seq', 'sequencia', 'linha'], types: CODE },
    ],
  },
  {
    target: 'StockSync',
    fileWords: ['estoque', 'estoques', 'saldo', 'saldos', 'posicao', 'sb2', 'sb8', 'inventario', 'stock'],
    prefixes: ['b2', 'b8'],
    channel: 'estoque',
    fields: [
      {
        field: 'productId',
        kind: 'ref',
        ref: 'Product',
        names: ['produto', 'b2_cod', 'b8_produto', 'cod_produto', 'codigo', 'codigo_produto', 'cod'],
        types: CODE,
        firstCode: true,
      },
      {
        field: 'quantity',
        kind: 'number',
        names: ['quantidade', 'saldo', 'b2_qatu', 'b8_saldo', 'qatu', 'qtd', 'qtde', 'estoque', 'saldo_atual'],
        types: NUM,
        byType: ['implied'],
      },
      {
        field: 'ownerId',
        kind: 'lookup',
        lookup: { resource: 'Owners', by: 'code' },
        names: ['depositante', 'owner', 'cod_depositante', 'proprietario'],
        types: CODE,
        placeholder: OWNER_PLACEHOLDER,
      },
    ],
  },
  {
    target: 'StockLock',
    fileWords: ['bloqueio', 'bloqueios', 'bloqueado', 'bloqueados', 'lock'],
    prefixes: [],
    channel: 'estoque',
    fields: [
      {
        field: 'warehouseId',
        kind: 'lookup',
        lookup: { resource: 'Warehouse', by: 'codeERP' },
        names: ['cd', 'deposito', 'armazem', 'local', 'b2_local'],
        types: CODE,
        placeholder: { expr: { lookup: 'Warehouse', by: 'codeERP', from: todoConst('TODO') }, todo: 'the warehouse codeERP' },
      },
      {
        field: 'materialStatusId',
        kind: 'lookup',
        lookup: { resource: 'MaterialStatus', by: 'name' },
        names: ['situacao', 'status', 'motivo_bloqueio', 'situacao_destino'],
        types: TEXT,
        placeholder: { expr: { lookup: 'MaterialStatus', by: 'name', from: todoConst('Bloqueado') }, todo: 'the material status name in the WMS' },
      },
      { field: 'productId', kind: 'ref', ref: 'Product', names: ['produto', 'cod_produto', 'codigo', 'b8_produto'], types: CODE },
      {
        field: 'ownerId',
        kind: 'lookup',
        lookup: { resource: 'Owners', by: 'code' },
        names: ['depositante', 'owner'],
        types: CODE,
        placeholder: OWNER_PLACEHOLDER,
      },
      { field: 'lotNumber', kind: 'text', names: ['lote', 'b8_lotectl', 'lotectl'], types: TEXT },
    ],
  },
  {
    target: 'StockUnlock',
    fileWords: ['desbloqueio', 'desbloqueios', 'liberacao', 'liberacoes', 'unlock'],
    prefixes: [],
    channel: 'estoque',
    fields: [
      {
        field: 'warehouseId',
        kind: 'lookup',
        lookup: { resource: 'Warehouse', by: 'codeERP' },
        names: ['cd', 'deposito', 'armazem', 'local'],
        types: CODE,
        placeholder: { expr: { lookup: 'Warehouse', by: 'codeERP', from: todoConst('TODO') }, todo: 'the warehouse codeERP' },
      },
      {
        field: 'materialStatusId',
        kind: 'lookup',
        lookup: { resource: 'MaterialStatus', by: 'name' },
        names: ['situacao_destino', 'situacao', 'status', 'status_destino'],
        types: TEXT,
        placeholder: { expr: { lookup: 'MaterialStatus', by: 'name', from: todoConst('Disponível') }, todo: 'the released material status name in the WMS' },
      },
      { field: 'productId', kind: 'ref', ref: 'Product', names: ['produto', 'cod_produto', 'codigo'], types: CODE },
      {
        field: 'ownerId',
        kind: 'lookup',
        lookup: { resource: 'Owners', by: 'code' },
        names: ['depositante', 'owner'],
        types: CODE,
        placeholder: OWNER_PLACEHOLDER,
      },
      { field: 'lotNumber', kind: 'text', names: ['lote', 'lotectl'], types: TEXT },
    ],
  },
  {
    target: 'PickingListAttachment',
    fileWords: ['anexo', 'anexos', 'attachment', 'attachments'],
    prefixes: [],
    channel: 'pedidos',
    fields: [
      { field: 'UserFileName', kind: 'text', names: ['descricao', 'nome_arquivo', 'titulo', 'nome'], types: TEXT },
      {
        field: 'IsPrintCheckout',
        kind: 'boolean',
        names: ['imprimir_no_checkout', 'imprimir', 'imprime', 'print'],
        types: ['flag', 'empty'],
        byType: ['flag'],
      },
    ],
  },
];

// the names of other ERPs' dictionaries (erp-names.ts, each with its origin) join the targets' own
for (const e of ERP_NAMES) {
  const def = TARGETS_DICT.find((d) => d.target === e.target);
  if (!def) continue;
  for (const t of e.tables ?? []) if (!def.fileWords.includes(t)) def.fileWords.push(t);
  for (const [field, names] of Object.entries(e.fields)) {
    const f = def.fields.find((x) => x.field === field);
    if (f) for (const n of names) if (!f.names.includes(n)) f.names.push(n);
  }
}

/** Words so common they say little about the target (they count a fifth). */
export const GENERIC_NAMES = new Set([
  'codigo',
  'cod',
  'descricao',
  'desc',
  'nome',
  'observacao',
  'obs',
  'quantidade',
  'qtd',
  'data',
  'item',
  'numero',
  'status',
  'situacao',
  'tipo',
]);

/** Normalised name: lower case, no accents, non-alphanumerics as '_'. */
export function normName(s: string): string {
  return s
    .normalize('NFD')
    .replace(/[\u0300-\u036f]/g, '')
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '_')
    .replace(/^_+|_+$/g, '');
}

/** The last segment of an XML/JSON path, as a column name (prod/cProd -> cprod). */
export function leafName(name: string): string {
  const seg = name.split('/').filter(Boolean);
  return seg[seg.length - 1] ?? name;
}

/** How well a column name means a synonym: 1 exact, 0.8 same words, 0.6 contains it as a word. */
export function nameMatch(column: string, synonym: string): number {
  const c = normName(leafName(column));
  if (c === synonym) return 1;
  const ct = c.split('_').filter(Boolean);
  const st = synonym.split('_').filter(Boolean);
  // Protheus: a name with the table prefix stripped (B1_COD -> cod) is a weaker match of the same word
  const noPrefix = /^[a-z][a-z0-9]_/.test(c) ? c.slice(3) : c;
  if (st.length === 1 && noPrefix === synonym && c !== noPrefix) return 0.7;
  if (st.length > 1 && st.every((t) => ct.includes(t)) && ct.length === st.length) return 0.8;
  if (st.length >= 1 && st.every((t) => ct.includes(t)) && synonym.length >= 3) return 0.6;
  return 0;
}

/** Target words of a file name: PEDIDOS_20241105_1700.csv -> ['pedidos']. */
export function fileNameWords(fileName: string): string[] {
  return normName(fileName.replace(/\.[A-Za-z0-9]+$/, ''))
    .split('_')
    .filter((w) => w && !/^\d+$/.test(w));
}
