/**
 * Deterministic ids and numbers from a seed, and Brazilian check digits (CNPJ, GTIN/EAN-13).
 */
import { createHash } from 'node:crypto';

/** A UUID (version 5 layout) derived from seed and name: the same inputs always give the same id. */
export function deterministicUuid(seed: string, name: string): string {
  const h = createHash('sha1').update(`wms-sandbox:${seed}:${name}`).digest();
  h[6] = (h[6]! & 0x0f) | 0x50;
  h[8] = (h[8]! & 0x3f) | 0x80;
  const x = h.subarray(0, 16).toString('hex');
  return `${x.slice(0, 8)}-${x.slice(8, 12)}-${x.slice(12, 16)}-${x.slice(16, 20)}-${x.slice(20, 32)}`;
}

/** mulberry32: small, fast, deterministic PRNG returning floats in [0, 1). */
export function createRng(seed: string): () => number {
  let a = createHash('sha1').update(`rng:${seed}`).digest().readUInt32LE(0);
  return () => {
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** Both CNPJ check digits for 12 base digits. */
export function cnpjCheckDigits(base12: string): string {
  const calc = (digits: string, weights: number[]): number => {
    let sum = 0;
    for (let i = 0; i < digits.length; i++) sum += Number(digits[i]) * weights[i]!;
    const r = sum % 11;
    return r < 2 ? 0 : 11 - r;
  };
  const d1 = calc(base12, [5, 4, 3, 2, 9, 8, 7, 6, 5, 4, 3, 2]);
  const d2 = calc(base12 + String(d1), [6, 5, 4, 3, 2, 9, 8, 7, 6, 5, 4, 3, 2]);
  return `${d1}${d2}`;
}

/**
 * Why a CNPJ is refused, or null when it is valid. Accepts 14 digits or the formatted
 * "12.345.678/0001-95"; refuses other shapes, repeated digits and wrong check digits.
 */
export function cnpjProblem(value: string): string | null {
  const v = value.trim();
  let digits: string;
  if (/^\d{14}$/.test(v)) digits = v;
  else if (/^\d{2}\.\d{3}\.\d{3}\/\d{4}-\d{2}$/.test(v)) digits = v.replace(/\D/g, '');
  else return 'must be a CNPJ of 14 digits (or formatted 00.000.000/0000-00)';
  if (/^(\d)\1{13}$/.test(digits)) return 'invalid CNPJ (repeated digits)';
  if (cnpjCheckDigits(digits.slice(0, 12)) !== digits.slice(12)) return 'invalid CNPJ check digits';
  return null;
}

/** GTIN/EAN-13 check digit for 12 digits. */
export function ean13CheckDigit(base12: string): string {
  let sum = 0;
  for (let i = 0; i < 12; i++) sum += Number(base12[i]) * (i % 2 === 0 ? 1 : 3);
  return String((10 - (sum % 10)) % 10);
}
