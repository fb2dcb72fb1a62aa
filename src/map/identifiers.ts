/**
 * Identifier-aware matching: how a lookup value is compared with a field of a WMS record (or of the
 * cross-reference). A WMS may answer a CNPJ masked (`11.222.333/0002-62`) while the NF-e carries its 14
 * digits, an EAN as GTIN-14 with a leading zero, a CEP with a dash: these compare by their digits.
 * docs/MAPPINGS.md "How lookups compare values" lists the rules per field.
 *
 * | kind | fields (any resource, names compared case-insensitively) | compared by |
 * |---|---|---|
 * | tax id | cnpj, cpf, cnpjCpf, document | digits only; 12-13 digits are left-padded to the 14 of a CNPJ (a leading zero lost in a spreadsheet) |
 * | barcode | ean, barCode, gtin, receivingEan | digits only, leading zeros dropped (EAN-13 = GTIN-14 with a leading 0) |
 * | postal code | postalCode, cep | digits only, left-padded to 8 |
 * | fiscal class | ncm | digits only |
 * | anything else (codes, codeERP, symbol, mnemonic, names) | | trimmed, Unicode NFC, case-insensitive |
 *
 * A value of a digits field that holds no digit at all is compared as text, so a wrong value never
 * matches an empty one.
 */

export type IdentifierKind = 'taxId' | 'barcode' | 'postalCode' | 'ncm' | 'text';

const KIND_BY_FIELD: Readonly<Record<string, IdentifierKind>> = {
  cnpj: 'taxId',
  cpf: 'taxId',
  cnpjcpf: 'taxId',
  document: 'taxId',
  ean: 'barcode',
  barcode: 'barcode',
  gtin: 'barcode',
  receivingean: 'barcode',
  postalcode: 'postalCode',
  cep: 'postalCode',
  ncm: 'ncm',
};

/** How values of this field compare. */
export function identifierKind(field: string): IdentifierKind {
  return KIND_BY_FIELD[field.toLowerCase()] ?? 'text';
}

/** Text comparison: trimmed, NFC, lower case (what every lookup did before identifier kinds). */
export function textKey(v: unknown): string {
  return String(v ?? '')
    .trim()
    .normalize('NFC')
    .toLowerCase();
}

/** The form two values of `field` are compared in: equal keys = the same identifier. */
export function matchKey(field: string, value: unknown): string {
  const kind = identifierKind(field);
  if (kind === 'text') return textKey(value);
  const s = String(value ?? '');
  let d = s.replace(/\D/g, '');
  if (d === '') return textKey(value);
  if (kind === 'taxId' && d.length > 11 && d.length < 14) d = d.padStart(14, '0');
  else if (kind === 'barcode') d = d.replace(/^0+(?=\d)/, '');
  else if (kind === 'postalCode' && d.length < 8) d = d.padStart(8, '0');
  return `#${d}`;
}

/** Whether two values of `field` name the same identifier. */
export function sameIdentifier(field: string, a: unknown, b: unknown): boolean {
  return matchKey(field, a) === matchKey(field, b);
}

/** Human text of how a field compares (messages and docs). */
export function comparisonText(field: string): string {
  switch (identifierKind(field)) {
    case 'taxId':
      return 'by its digits (masked or not)';
    case 'barcode':
      return 'by its digits, leading zeros ignored';
    case 'postalCode':
      return 'by its 8 digits';
    case 'ncm':
      return 'by its digits';
    default:
      return 'trimmed, case-insensitive';
  }
}
