/**
 * Column and table names of ERPs other than TOTVS Protheus, from their public data dictionaries, for
 * the dictionary of dictionary.ts (merged into its targets at load). Every entry says where it comes
 * from. Only the ERPs of the corpus's development part are here (Sankhya, SAP Business One, TOTVS RM):
 * the held-out part's ERPs (Datasul, Senior, Tiny, Omie) measure what infer does without a dictionary.
 * Names are normalised like dictionary.ts (lower case, no accents, non-alphanumerics as '_').
 */
import type { Target } from '../wms/targets.js';

export interface ErpNames {
  erp: string;
  /** where the names come from */
  origin: string;
  target: Target;
  /** table names (file-name words) of the target's exports */
  tables?: string[];
  /** target field (items: the item field of a document) -> the column names that mean it */
  fields: Record<string, string[]>;
}

const SANKHYA = 'Sankhya Om data dictionary (TGF* tables), e.g. the TGFPRO extract in github.com/italoogomes/data-hub knowledge/sankhya/tabelas';
const SAP_B1 = 'SAP Business One SDK 10.0, Database Tables Reference (help.sap.com .../SDKHelp/OITM.html, OITB, OCRD, ORDR, RDR1, OITW)';
const RM = 'TOTVS RM data dictionary as published on TDN (TPRD, FCFO, TMOV/TITMMOV, TPRDLOC, TUND)';

export const ERP_NAMES: ErpNames[] = [
  // Sankhya
  {
    erp: 'Sankhya',
    origin: SANKHYA,
    target: 'Product',
    tables: ['tgfpro'],
    fields: {
      code: ['codprod'],
      name: ['descrprod'],
      unitmeasurement: ['codvol'],
      weight: ['pesobruto'],
      categoryID: ['codgrupoprod'],
      barCode: ['referencia'],
    },
  },
  { erp: 'Sankhya', origin: SANKHYA, target: 'Category', tables: ['tgfgru'], fields: { codeERP: ['codgrupoprod'], name: ['descrgrupoprod'] } },
  {
    erp: 'Sankhya',
    origin: SANKHYA,
    target: 'Provider',
    tables: ['tgfpar', 'parceiro', 'parceiros'],
    fields: { mnemonic: ['codparc'], socialName: ['razaosocial'], fantasyName: ['nomeparc'], cnpj: ['cgc_cpf'] },
  },
  {
    erp: 'Sankhya',
    origin: SANKHYA,
    target: 'PickingList',
    tables: ['tgfcab', 'tgfite'],
    fields: {
      order: ['nunota'],
      registrationDate: ['dtneg'],
      clientName: ['nomeparc'],
      document: ['cgc_cpf'],
      productID: ['codprod'],
      quantity: ['qtdneg'],
      saleValue: ['vlrunit'],
      aux01: ['sequencia'],
    },
  },
  { erp: 'Sankhya', origin: SANKHYA, target: 'StockSync', tables: ['tgfest'], fields: { productId: ['codprod'], quantity: ['estoque'] } },
  // SAP Business One
  {
    erp: 'SAP Business One',
    origin: SAP_B1,
    target: 'Product',
    tables: ['oitm', 'items'],
    fields: {
      code: ['itemcode'],
      name: ['itemname'],
      barCode: ['codebars'],
      unitmeasurement: ['invntryuom'],
      categoryID: ['itmsgrpcod'],
      weight: ['sweight1', 'bweight1'],
    },
  },
  { erp: 'SAP Business One', origin: SAP_B1, target: 'Category', tables: ['oitb', 'groups'], fields: { codeERP: ['itmsgrpcod'], name: ['itmsgrpnam'] } },
  {
    erp: 'SAP Business One',
    origin: SAP_B1,
    target: 'Provider',
    tables: ['ocrd', 'partners'],
    fields: {
      mnemonic: ['cardcode'],
      socialName: ['cardname'],
      fantasyName: ['cardfname'],
      cnpj: ['lictradnum'],
      postalCode: ['zipcode'],
      city: ['city'],
      phone: ['phone1'],
    },
  },
  {
    erp: 'SAP Business One',
    origin: SAP_B1,
    target: 'PickingList',
    tables: ['ordr', 'rdr1', 'orders'],
    fields: {
      order: ['docnum'],
      registrationDate: ['docdate'],
      pickingDate: ['docduedate'],
      clientName: ['cardname'],
      document: ['lictradnum'],
      warehouseID: ['whscode'],
      productID: ['itemcode'],
      quantity: ['quantity'],
      saleValue: ['price'],
      aux01: ['linenum'],
    },
  },
  { erp: 'SAP Business One', origin: SAP_B1, target: 'StockSync', tables: ['oitw'], fields: { productId: ['itemcode'], quantity: ['onhand'] } },
  // TOTVS RM
  {
    erp: 'TOTVS RM',
    origin: RM,
    target: 'Product',
    tables: ['tprd'],
    fields: {
      code: ['codigoprd'],
      name: ['nomefantasia'],
      unitmeasurement: ['codundcontrole'],
      weight: ['pesobruto'],
      barCode: ['codbarras'],
      ncm: ['numeroccf'],
    },
  },
  {
    erp: 'TOTVS RM',
    origin: RM,
    target: 'Provider',
    tables: ['fcfo', 'clifor'],
    fields: { mnemonic: ['codcfo'], fantasyName: ['nomefantasia'], cnpj: ['cgccfo'], state: ['codetd'] },
  },
  {
    erp: 'TOTVS RM',
    origin: RM,
    target: 'PickingList',
    tables: ['tmov', 'titmmov'],
    fields: {
      order: ['numeromov'],
      registrationDate: ['dataemissao'],
      document: ['cgccfo'],
      productID: ['codigoprd'],
      saleValue: ['precounitario'],
      aux01: ['nseqitmmov'],
    },
  },
  { erp: 'TOTVS RM', origin: RM, target: 'StockSync', tables: ['tprdloc'], fields: { productId: ['codigoprd'], quantity: ['saldofisico2', 'saldofisico'] } },
  { erp: 'TOTVS RM', origin: RM, target: 'UnitMeasurement', tables: ['tund'], fields: { symbol: ['codund'] } },
];
