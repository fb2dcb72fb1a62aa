/**
 * multipart/form-data for the attachment upload, encoded by undici's FormData (the library's boundary,
 * part headers and escaping: `"` -> %22, CR -> %0D, LF -> %0A in names and file names, as browsers do).
 * The body is taken whole into a Buffer (an attachment is at most a few MiB): the transport sends it with
 * its Content-Length, and a retry sends the same bytes again.
 */
import { File } from 'node:buffer';

export type MultipartPart = { name: string; value: string } | { name: string; content: Buffer; fileName: string; contentType?: string };

export interface MultipartBody {
  body: Buffer;
  contentType: string;
  boundary: string;
}

/** undici picks a random boundary without looking at the content: a file holding it is encoded again */
const MAX_ENCODINGS = 8;

export async function encodeMultipart(parts: readonly MultipartPart[]): Promise<MultipartBody> {
  // loaded by the first upload only: undici's main entry (fetch, WebSocket, the cache) costs ~70 ms at every start
  const { FormData, Response } = await import('undici');
  for (let n = 0; n < MAX_ENCODINGS; n++) {
    const form = new FormData();
    for (const part of parts) {
      if ('content' in part) form.append(part.name, new File([part.content], part.fileName, { type: part.contentType ?? 'application/octet-stream' }));
      else form.append(part.name, part.value);
    }
    const encoded = new Response(form);
    const contentType = encoded.headers.get('content-type') ?? '';
    const boundary = /;\s*boundary=(.+)$/.exec(contentType)?.[1];
    if (boundary === undefined) throw new Error(`undici encoded a form without a boundary (${contentType})`);
    const body = Buffer.from(await encoded.arrayBuffer());
    const delimiter = Buffer.from(`--${boundary}`, 'latin1');
    if (parts.some((p) => 'content' in p && p.content.indexOf(delimiter) >= 0)) continue;
    return { body, contentType, boundary };
  }
  throw new Error('multipart boundary occurs in the content');
}
