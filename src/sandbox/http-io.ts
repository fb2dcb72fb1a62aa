/** The sandbox's HTTP plumbing: writing a Reply, reading a request body within a limit. */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Reply } from './http-util.js';

export const JSON_BODY_LIMIT = 16 * 1024 * 1024;
export const MULTIPART_BODY_LIMIT = 10 * 1024 * 1024 + 256 * 1024;
/** Past this, an oversized body is not even drained: the connection is closed. */
const DRAIN_LIMIT = 64 * 1024 * 1024;

export function send(res: ServerResponse, reply: Reply): void {
  const body = JSON.stringify(reply.body);
  const headers: Record<string, string | number> = {
    'content-type': 'application/json; charset=utf-8',
    'content-length': Buffer.byteLength(body),
    ...(reply.headers ?? {}),
  };
  res.writeHead(reply.status, headers);
  res.end(body);
}

/**
 * Reads the body up to `limit`. A declared Content-Length over the limit resolves 'too-large' unread;
 * a chunked body past the limit is drained (up to DRAIN_LIMIT, then the socket is destroyed).
 */
export function readBody(req: IncomingMessage, limit: number): Promise<Buffer | 'too-large' | 'aborted'> {
  return new Promise((resolve) => {
    const declared = Number(req.headers['content-length'] ?? NaN);
    if (Number.isFinite(declared) && declared > limit) {
      // refused unread: the answer carries Connection: close, so the unread body dies with the socket
      resolve('too-large');
      return;
    }
    const chunks: Buffer[] = [];
    let size = 0;
    let tooLarge = false;
    req.on('data', (c: Buffer) => {
      size += c.length;
      if (size > DRAIN_LIMIT) {
        req.socket.destroy();
        return;
      }
      if (size > limit) {
        tooLarge = true;
        chunks.length = 0;
      } else if (!tooLarge) chunks.push(c);
    });
    req.on('end', () => resolve(tooLarge ? 'too-large' : chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks)));
    req.on('error', () => resolve('aborted'));
    req.on('close', () => {
      if (!req.complete) resolve('aborted');
    });
  });
}
