/**
 * Content hashes shared by mapping (a record's payload hash, written with it) and sending (the
 * cross-reference's "same payload already delivered" check).
 */
import { createHash } from 'node:crypto';

export function sha256(s: string): string {
  return createHash('sha256').update(s).digest('hex');
}

/** Canonical JSON (sorted keys) so equal payloads hash equally whatever the key order. */
export function canonicalJson(v: unknown): string {
  if (Array.isArray(v)) return `[${v.map(canonicalJson).join(',')}]`;
  if (v !== null && typeof v === 'object') {
    return `{${Object.keys(v)
      .sort()
      .map((k) => `${JSON.stringify(k)}:${canonicalJson((v as Record<string, unknown>)[k])}`)
      .join(',')}}`;
  }
  return JSON.stringify(v) ?? 'null';
}

export function payloadHash(payload: unknown): string {
  return sha256(canonicalJson(payload));
}
