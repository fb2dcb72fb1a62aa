/**
 * Check digits of Brazilian tax numbers and GTIN barcodes, and name-based UUIDs (v5). Pure helpers,
 * used by the transforms and by the sample-data generator of the tests.
 */
import { uuid5 as uuid5Of } from '../shared/uuid.js';

/** True when `digits` (exactly 14 digits) is a CNPJ with valid check digits (all-equal digits refused). */
export function isValidCnpj(digits: string): boolean {
  if (digits.length !== 14) return false;
  let allSame = true;
  for (let i = 0; i < 14; i++) {
    const c = digits.charCodeAt(i);
    if (c < 48 || c > 57) return false;
    if (c !== digits.charCodeAt(0)) allSame = false;
  }
  if (allSame) return false;
  return cnpjCheckDigits(digits.slice(0, 12)) === digits.slice(12);
}

/** The two check digits of a 12-digit CNPJ base. */
export function cnpjCheckDigits(base12: string): string {
  const w1 = [5, 4, 3, 2, 9, 8, 7, 6, 5, 4, 3, 2];
  const w2 = [6, 5, 4, 3, 2, 9, 8, 7, 6, 5, 4, 3, 2];
  const digit = (s: string, w: number[]): number => {
    let sum = 0;
    for (let i = 0; i < w.length; i++) sum += (s.charCodeAt(i) - 48) * (w[i] ?? 0);
    const r = sum % 11;
    return r < 2 ? 0 : 11 - r;
  };
  const d1 = digit(base12, w1);
  const d2 = digit(base12 + String(d1), w2);
  return `${d1}${d2}`;
}

/** True when `digits` is a GTIN-8/12/13/14 with a valid check digit. */
export function isValidGtin(digits: string): boolean {
  const n = digits.length;
  if (n !== 8 && n !== 12 && n !== 13 && n !== 14) return false;
  for (let i = 0; i < n; i++) {
    const c = digits.charCodeAt(i);
    if (c < 48 || c > 57) return false;
  }
  return gtinCheckDigit(digits.slice(0, n - 1)) === digits.charCodeAt(n - 1) - 48;
}

/** The check digit of a GTIN body (everything but the last digit). */
export function gtinCheckDigit(body: string): number {
  let sum = 0;
  // weights 3,1,3,1... from the rightmost digit of the body
  for (let i = body.length - 1, w = 3; i >= 0; i--, w = w === 3 ? 1 : 3) sum += (body.charCodeAt(i) - 48) * w;
  return (10 - (sum % 10)) % 10;
}

/**
 * The fixed namespace of wmsbridge's name-based UUIDs (decision D-CODEERP, docs/MAPPINGS.md):
 * uuid5(URL namespace, "https://wmsbridge.dev/ns/codeERP"). Changing it changes every derived codeERP.
 */
export const WMSBRIDGE_UUID_NAMESPACE = '62fa461d-b48e-5207-aba3-6d593f0bae60';

/** RFC 4122 name-based UUID, version 5 (SHA-1), of `name` (UTF-8) in `namespace` (default: ERP keys). */
export function uuid5(name: string, namespace: string = WMSBRIDGE_UUID_NAMESPACE): string {
  return uuid5Of(name, namespace);
}
