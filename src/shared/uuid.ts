import { createHash } from 'node:crypto';

/**
 * Name-based UUID version 5 (RFC 9562 §5.5: SHA-1 of namespace + name). Deterministic: the same name always
 * gives the same UUID, which is how documents get a stable Guid codeERP across reruns (map/checks.ts fixes
 * the namespace for ERP keys) and a resumed stock sync keeps its session id.
 */
export function uuid5(name: string, namespace: string): string {
  const hash = createHash('sha1')
    .update(Buffer.from(namespace.replace(/-/g, ''), 'hex'))
    .update(name, 'utf8')
    .digest();
  hash[6] = ((hash[6] ?? 0) & 0x0f) | 0x50;
  hash[8] = ((hash[8] ?? 0) & 0x3f) | 0x80;
  const h = hash.subarray(0, 16).toString('hex');
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20, 32)}`;
}

/** namespace of stock sync session ids derived from a file (fixed: a resumed session must keep its id) */
export const STOCK_SYNC_NAMESPACE = 'b4a7e9d2-3c1f-5e8a-8b6d-2f4c6e8a0b1d';
