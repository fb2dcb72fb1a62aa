/**
 * A small, binary-safe multipart/form-data parser (RFC 7578) for the attachment endpoint: the whole
 * body is already in memory (bounded by the size limit), parts are located by their boundary.
 */
export interface MultipartPart {
  name: string;
  filename?: string;
  contentType?: string;
  data: Buffer;
}

export class MultipartError extends Error {
  override name = 'MultipartError';
}

/** The boundary parameter of a multipart/form-data Content-Type, or null when it is not one. */
export function multipartBoundary(contentType: string | undefined): string | null {
  if (!contentType) return null;
  const [type, ...params] = splitParams(contentType);
  if (type?.toLowerCase() !== 'multipart/form-data') return null;
  for (const p of params) {
    const eq = p.indexOf('=');
    if (eq < 0) continue;
    if (p.slice(0, eq).trim().toLowerCase() === 'boundary') {
      const b = unquote(p.slice(eq + 1).trim());
      return b.length > 0 && b.length <= 70 ? b : null;
    }
  }
  return null;
}

function splitParams(header: string): string[] {
  const out: string[] = [];
  let cur = '';
  let quoted = false;
  for (let i = 0; i < header.length; i++) {
    const ch = header[i]!;
    if (ch === '"' && header[i - 1] !== '\\') quoted = !quoted;
    if (ch === ';' && !quoted) {
      out.push(cur.trim());
      cur = '';
    } else cur += ch;
  }
  out.push(cur.trim());
  return out;
}

function unquote(v: string): string {
  if (v.length >= 2 && v.startsWith('"') && v.endsWith('"')) return v.slice(1, -1).replace(/\\(.)/g, '$1');
  return v;
}

const CRLF = Buffer.from('\r\n');
const HEADER_END = Buffer.from('\r\n\r\n');

export function parseMultipart(body: Buffer, boundary: string): MultipartPart[] {
  const delim = Buffer.from(`--${boundary}`);
  const parts: MultipartPart[] = [];
  let pos = body.indexOf(delim);
  if (pos < 0) throw new MultipartError('no multipart boundary found in the body');
  for (;;) {
    pos += delim.length;
    if (body[pos] === 0x2d && body[pos + 1] === 0x2d) return parts; // closing delimiter "--"
    // transport padding (spaces/tabs) may follow a delimiter before its CRLF
    while (body[pos] === 0x20 || body[pos] === 0x09) pos++;
    if (!body.subarray(pos, pos + 2).equals(CRLF)) throw new MultipartError('malformed multipart delimiter line');
    pos += 2;
    const headerEnd = body.indexOf(HEADER_END, pos);
    if (headerEnd < 0) throw new MultipartError('multipart part without a header end');
    const headers = parsePartHeaders(body.subarray(pos, headerEnd).toString('utf8'));
    const dataStart = headerEnd + 4;
    const next = body.indexOf(Buffer.concat([CRLF, delim]), dataStart);
    if (next < 0) throw new MultipartError('multipart body is not closed by its boundary');
    const disposition = headers.get('content-disposition');
    if (!disposition) throw new MultipartError('multipart part without Content-Disposition');
    const [kind, ...params] = splitParams(disposition);
    if (kind?.toLowerCase() !== 'form-data') throw new MultipartError('multipart part is not form-data');
    let name: string | undefined;
    let filename: string | undefined;
    for (const p of params) {
      const eq = p.indexOf('=');
      if (eq < 0) continue;
      const key = p.slice(0, eq).trim().toLowerCase();
      const value = p.slice(eq + 1).trim();
      if (key === 'name') name = unquote(value);
      else if (key === 'filename' && filename === undefined) filename = unquote(value);
      else if (key === 'filename*') {
        // RFC 5987: charset''percent-encoded
        const m = /^[^']*'[^']*'(.*)$/.exec(value);
        if (m) {
          try {
            filename = decodeURIComponent(m[1]!);
          } catch {
            throw new MultipartError('invalid filename* parameter');
          }
        }
      }
    }
    if (name === undefined) throw new MultipartError('multipart part without a name');
    const part: MultipartPart = { name, data: body.subarray(dataStart, next) };
    if (filename !== undefined) part.filename = filename;
    const ct = headers.get('content-type');
    if (ct !== undefined) part.contentType = ct;
    parts.push(part);
    pos = next + 2;
  }
}

function parsePartHeaders(text: string): Map<string, string> {
  const m = new Map<string, string>();
  for (const line of text.split('\r\n')) {
    if (line === '') continue;
    const colon = line.indexOf(':');
    if (colon <= 0) throw new MultipartError(`malformed multipart header "${line.slice(0, 40)}"`);
    m.set(line.slice(0, colon).trim().toLowerCase(), line.slice(colon + 1).trim());
  }
  return m;
}
