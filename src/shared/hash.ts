/**
 * Content hashes shared by mapping (a record's payload hash, written with it) and sending (the
 * cross-reference's "same payload already delivered" check).
 */
import { hash } from 'node:crypto';

/**
 * Hex SHA-256 of a string's UTF-8 bytes. The one-shot crypto.hash (Node >= 20.12) builds no Hash object:
 * mapping computes one per record.
 */
export function sha256(s: string): string {
  return hash('sha256', s, 'hex');
}

/** Canonical JSON (sorted keys) so equal payloads hash equally whatever the key order. */
export function canonicalJson(v: unknown): string {
  if (Array.isArray(v)) {
    let out = '[';
    // a hole of a sparse array stays empty, as Array.prototype.map + join wrote it (stored hashes do not change)
    for (let i = 0; i < v.length; i++) out += (i ? ',' : '') + (i in v ? canonicalJson(v[i]) : '');
    return `${out}]`;
  }
  if (v !== null && typeof v === 'object') {
    const keys = Object.keys(v).sort();
    let out = '{';
    for (let i = 0; i < keys.length; i++) out += `${i ? ',' : ''}${JSON.stringify(keys[i])}:${canonicalJson((v as Record<string, unknown>)[keys[i]!])}`;
    return `${out}}`;
  }
  return JSON.stringify(v) ?? 'null';
}

export function payloadHash(payload: unknown): string {
  return sha256(canonicalJson(payload));
}
