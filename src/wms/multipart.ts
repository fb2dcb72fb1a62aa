/**
 * multipart/form-data built by hand (RFC 7578): binary-safe (the file part is copied byte for byte),
 * random boundary checked against the content, field names and file names escaped like browsers do
 * (`"` -> %22, CR -> %0D, LF -> %0A).
 */
import { randomBytes } from 'node:crypto';

export type MultipartPart =
  | { name: string; value: string }
  | { name: string; content: Buffer; fileName: string; contentType?: string };

export interface MultipartBody {
  body: Buffer;
  contentType: string;
  boundary: string;
}

function escapeQuoted(s: string): string {
  return s.replace(/"/g, '%22').replace(/\r/g, '%0D').replace(/\n/g, '%0A');
}

export function buildMultipart(parts: readonly MultipartPart[], boundary?: string): MultipartBody {
  for (;;) {
    const b = boundary ?? `----wmsbridge${randomBytes(16).toString('hex')}`;
    const delimiter = Buffer.from(`--${b}`, 'latin1');
    const chunks: Buffer[] = [];
    let clash = false;
    for (const part of parts) {
      let head = `--${b}\r\nContent-Disposition: form-data; name="${escapeQuoted(part.name)}"`;
      let payload: Buffer;
      if ('content' in part) {
        head += `; filename="${escapeQuoted(part.fileName)}"\r\nContent-Type: ${part.contentType ?? 'application/octet-stream'}\r\n\r\n`;
        payload = part.content;
      } else {
        head += '\r\n\r\n';
        payload = Buffer.from(part.value, 'utf8');
      }
      if (payload.indexOf(delimiter) >= 0) clash = true;
      chunks.push(Buffer.from(head, 'utf8'), payload, Buffer.from('\r\n', 'latin1'));
    }
    if (clash) {
      if (boundary !== undefined) throw new Error('multipart boundary occurs in the content');
      continue; // astronomically unlikely with 128 random bits: pick another boundary
    }
    chunks.push(Buffer.from(`--${b}--\r\n`, 'latin1'));
    return { body: Buffer.concat(chunks), contentType: `multipart/form-data; boundary=${b}`, boundary: b };
  }
}
