/**
 * Drives a request handler without a port (like hono's `app.request()`): builds an in-memory request
 * and response and resolves with what the handler answered. A test helper (the webhook handler's tests).
 */
import { Readable, Writable } from 'node:stream';
import type { IncomingMessage, ServerResponse } from 'node:http';

export interface InjectRequest {
  method?: string;
  url: string;
  headers?: Record<string, string>;
  body?: string | Buffer | Array<string | Buffer>;
}

export interface InjectResponse {
  status: number;
  headers: Record<string, string>;
  text: string;
  /** the body parsed as JSON (undefined when it is not JSON) */
  json: unknown;
}

export function injectRequest(handler: (req: IncomingMessage, res: ServerResponse) => void, request: InjectRequest): Promise<InjectResponse> {
  const chunks = request.body === undefined ? [] : Array.isArray(request.body) ? request.body : [request.body];
  const req = Readable.from(
    chunks.map((c) => (typeof c === 'string' ? Buffer.from(c) : c)),
    { objectMode: false },
  ) as unknown as IncomingMessage;
  const headers: Record<string, string> = {};
  for (const [k, v] of Object.entries(request.headers ?? {})) headers[k.toLowerCase()] = v;
  Object.assign(req, { method: request.method ?? 'POST', url: request.url, headers });

  return new Promise((resolve, reject) => {
    const body: Buffer[] = [];
    let status = 200;
    const outHeaders: Record<string, string> = {};
    const res = new Writable({
      write(chunk: Buffer, _enc, cb) {
        body.push(Buffer.from(chunk));
        cb();
      },
    }) as unknown as ServerResponse & Writable;
    let headersSent = false;
    Object.defineProperty(res, 'headersSent', { get: () => headersSent });
    Object.assign(res, {
      writeHead(code: number, hdrs?: Record<string, string>) {
        status = code;
        for (const [k, v] of Object.entries(hdrs ?? {})) outHeaders[k.toLowerCase()] = String(v);
        headersSent = true;
        return res;
      },
      setHeader(k: string, v: string) {
        outHeaders[k.toLowerCase()] = String(v);
        return res;
      },
    });
    res.on('finish', () => {
      const text = Buffer.concat(body).toString('utf8');
      let json: unknown;
      try {
        json = JSON.parse(text);
      } catch {
        json = undefined;
      }
      resolve({ status, headers: outHeaders, text, json });
    });
    res.on('error', reject);
    handler(req, res);
  });
}
