/**
 * Shared-secret check for webhook requests. The interface shows no signing scheme, so the receiver
 * accepts a shared secret in a header or as a path segment. Both sides are hashed with sha256 first
 * so crypto.timingSafeEqual always compares two 32-byte digests: the time taken depends neither on
 * where the strings differ nor on the secret's length.
 */
import crypto from 'node:crypto';

function digest(s: string): Buffer {
  return crypto.createHash('sha256').update(s, 'utf8').digest();
}

/** true when `given` equals `expected`, compared in constant time on their sha256 digests. */
export function verifySecret(given: string, expected: string): boolean {
  // default-import object on purpose: tests observe that timingSafeEqual is what decides
  return crypto.timingSafeEqual(digest(given), digest(expected));
}

/** A pre-hashed secret for the hot path (the expected digest is computed once). */
export function createSecretVerifier(expected: string): (given: string) => boolean {
  const want = digest(expected);
  return (given) => crypto.timingSafeEqual(digest(given), want);
}
