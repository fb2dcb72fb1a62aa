import { createHash } from 'node:crypto';

function parseUuid(u: string): Buffer {
  return Buffer.from(u.replace(/-/g, ''), 'hex');
}

function formatUuid(b: Buffer): string {
  const h = b.toString('hex');
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20, 32)}`;
}

/**
 * Name-based UUID version 5 (RFC 9562 §5.5: SHA-1 of namespace + name). Deterministic: the same ERP key
 * always gives the same UUID, which is how documents get a stable Guid codeERP across reruns.
 */
export function uuidV5(name: string, namespace: string): string {
  const hash = createHash('sha1').update(parseUuid(namespace)).update(name, 'utf8').digest();
  const b = hash.subarray(0, 16);
  b[6] = (b[6]! & 0x0f) | 0x50;
  b[8] = (b[8]! & 0x3f) | 0x80;
  return formatUuid(Buffer.from(b));
}
/** wmsbridge's namespace for ERP keys (documents' codeERP): fixed forever, documented in docs/MAPPINGS.md. */
uuidV5.ERP_NAMESPACE = '6f1c3b0e-8a4d-5b7e-9c2f-1d3e5a7b9c0d';
/** namespace for stock sync session ids derived from a file */
uuidV5.STOCK_SYNC_NAMESPACE = 'b4a7e9d2-3c1f-5e8a-8b6d-2f4c6e8a0b1d';
