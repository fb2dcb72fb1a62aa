/**
 * The studio's HTTP server (node:http): the page and its bundled assets (dist/studio-web, built by
 * scripts/build-studio.mjs with esbuild: no network needed to load it), and the JSON API of api.ts. Every request
 * passes security.ts's admit() first: Host, Origin, token.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { existsSync } from 'node:fs';
import { mkdir, readFile } from 'node:fs/promises';
import { basename, join } from 'node:path';
import { packageRoot } from '../shared/package-root.js';
import { errorMessage, MappingError } from '../shared/errors.js';
import { draftFor, fileById, listFiles, previewText, sampleGrid, saveMapping, type StudioDeps } from './api.js';
import { sampleItemsCache } from './items-cache.js';
import { admit, allowedHosts, isLoopbackHost, mappingPath, newToken, PathRefused, tokenCookie } from './security.js';
import { parseMappingText } from '../map/load.js';

export type StudioLang = 'pt-BR' | 'en';

export interface StudioOptions extends StudioDeps {
  host?: string;
  port?: number;
  lang?: StudioLang;
  /** the token (tests); else a random one */
  token?: string;
}

export interface Studio {
  url: string;
  /** the URL to open once: it carries the token */
  openUrl: string;
  token: string;
  port: number;
  host: string;
  server: Server;
  close(): Promise<void>;
}

const MAX_BODY = 4 * 1024 * 1024;

const HEADERS = {
  'cache-control': 'no-store',
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'no-referrer',
  'x-frame-options': 'DENY',
  // CodeMirror writes its styles into <style> elements: style-src needs 'unsafe-inline'; scripts are ours only
  'content-security-policy':
    "default-src 'none'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'",
};

/** dist/studio-web, found from this module (dist/src/studio or src/studio under tsx). */
export function assetsDir(): string {
  return join(packageRoot(), 'dist', 'studio-web');
}

function send(res: ServerResponse, status: number, type: string, body: string | Buffer, extra: Record<string, string> = {}): void {
  res.writeHead(status, { ...HEADERS, 'content-type': type, ...extra });
  res.end(body);
}

function json(res: ServerResponse, status: number, body: unknown): void {
  send(res, status, 'application/json; charset=utf-8', JSON.stringify(body));
}

async function readJson(req: IncomingMessage): Promise<Record<string, unknown>> {
  if (!/^application\/json\b/i.test(req.headers['content-type'] ?? '')) throw new HttpError(415, 'expected Content-Type: application/json');
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const c of req) {
    size += (c as Buffer).length;
    if (size > MAX_BODY) throw new HttpError(413, 'request body over 4 MB');
    chunks.push(c as Buffer);
  }
  try {
    const v = JSON.parse(Buffer.concat(chunks).toString('utf8')) as unknown;
    if (v && typeof v === 'object' && !Array.isArray(v)) return v as Record<string, unknown>;
  } catch {
    // below
  }
  throw new HttpError(400, 'the body is not a JSON object');
}

class HttpError extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

const page = (lang: StudioLang) => `<!doctype html>
<html lang="${lang}">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>wmsbridge studio</title>
<link rel="stylesheet" href="/assets/studio.css">
</head>
<body data-lang="${lang}">
<div id="app"></div>
<script src="/assets/studio.js"></script>
</body>
</html>
`;

const ASSETS: Record<string, string> = {
  '/assets/studio.js': 'text/javascript; charset=utf-8',
  '/assets/studio.css': 'text/css; charset=utf-8',
};

async function api(o: StudioOptions, req: IncomingMessage, res: ServerResponse, url: URL): Promise<void> {
  const route = `${req.method} ${url.pathname}`;
  const sample = async (id: unknown) => {
    const f = await fileById(o, id);
    if (!f) throw new HttpError(404, `${typeof id === 'string' ? `'${id}'` : 'that'} is not one of the studio's files`);
    return f;
  };
  switch (route) {
    case 'GET /api/files':
      return json(res, 200, { root: o.root, mappingsDir: o.mappingsDir, lang: o.lang ?? 'pt-BR', files: await listFiles(o) });
    case 'GET /api/schema':
      return json(res, 200, o.schema());
    case 'GET /api/draft':
      return json(res, 200, await draftFor(o, await sample(url.searchParams.get('file'))));
    case 'POST /api/sample': {
      const b = await readJson(req);
      const f = await sample(b['file']);
      return json(
        res,
        200,
        await sampleGrid(f.path, typeof b['text'] === 'string' ? b['text'] : undefined, typeof b['sheet'] === 'string' ? b['sheet'] : undefined),
      );
    }
    case 'POST /api/preview': {
      const b = await readJson(req);
      if (typeof b['text'] !== 'string') throw new HttpError(400, 'text: the mapping text is missing');
      const f = await sample(b['file']);
      return json(res, 200, await previewText(o, f, b['text'], typeof b['fileName'] === 'string' ? b['fileName'] : undefined));
    }
    case 'POST /api/try': {
      const b = await readJson(req);
      const f = await sample(b['file']);
      if (!o.tryIt) throw new HttpError(404, 'try it is not available here');
      if (typeof b['text'] !== 'string') throw new HttpError(400, 'text: the mapping text is missing');
      // validated first: the name is a mapping file name, the text a mapping (as save requires)
      const name = basename(mappingPath(o.mappingsDir, b['name']));
      parseMappingText(b['text'], name, name.endsWith('.json'));
      return json(res, 200, await o.tryIt(f, name, b['text']));
    }
    case 'POST /api/doctor': {
      // POST (not GET): it reaches the configured WMS, so a cross-site page cannot trigger it (Origin is checked)
      if (!o.doctor) throw new HttpError(404, 'doctor is not available here');
      return json(res, 200, await o.doctor());
    }
    case 'POST /api/save': {
      const b = await readJson(req);
      await mkdir(o.mappingsDir, { recursive: true });
      const saved = await saveMapping(o, b['name'], b['text']);
      const check = o.check ? await o.check() : undefined;
      return json(res, 200, { saved: saved.path, ...(check ? { check } : {}) });
    }
    default:
      throw new HttpError(404, `${route}: no such studio route`);
  }
}

async function handle(o: StudioOptions, hosts: Set<string>, token: string, req: IncomingMessage, res: ServerResponse): Promise<void> {
  const url = new URL(req.url ?? '/', 'http://studio.invalid');
  const v = admit(req, url, hosts, token);
  if (!v.ok) return send(res, v.status, 'text/plain; charset=utf-8', `${v.reason}\n`);
  try {
    if (v.viaQuery && req.method === 'GET' && url.pathname === '/') {
      // the token moves from the URL (history, screen) into an HttpOnly cookie; the page reloads without it
      url.searchParams.delete('token');
      return send(res, 303, 'text/plain; charset=utf-8', '', { 'set-cookie': tokenCookie(token), location: `${url.pathname}${url.search}` });
    }
    if (req.method === 'GET' && url.pathname === '/') return send(res, 200, 'text/html; charset=utf-8', page(o.lang ?? 'pt-BR'));
    const asset = ASSETS[url.pathname];
    if (req.method === 'GET' && asset) {
      const file = join(assetsDir(), url.pathname.slice('/assets/'.length));
      if (!existsSync(file)) return send(res, 500, 'text/plain; charset=utf-8', `${file} is missing: run npm run build\n`);
      return send(res, 200, asset, await readFile(file));
    }
    if (url.pathname.startsWith('/api/')) return await api(o, req, res, url);
    return send(res, 404, 'text/plain; charset=utf-8', 'not found\n');
  } catch (err) {
    if (err instanceof HttpError) return json(res, err.status, { error: err.message });
    if (err instanceof PathRefused) return json(res, 403, { error: err.message });
    if (err instanceof MappingError) return json(res, 422, { error: err.message, issues: (err.details as { issues?: unknown } | undefined)?.issues });
    return json(res, 500, { error: errorMessage(err) });
  }
}

/** Starts the studio on host:port (127.0.0.1 and a free port by default); loopback addresses only. */
export async function startStudio(o: StudioOptions): Promise<Studio> {
  const host = o.host ?? '127.0.0.1';
  if (!isLoopbackHost(host)) throw new PathRefused(`--host ${host}: the studio binds loopback addresses only (127.0.0.1, ::1, localhost)`);
  const token = o.token ?? newToken();
  o = { ...o, items: o.items ?? sampleItemsCache() };
  let hosts = new Set<string>();
  const server = createServer((req, res) => {
    handle(o, hosts, token, req, res).catch((err: unknown) => {
      if (!res.headersSent) json(res, 500, { error: errorMessage(err) });
      else res.destroy();
    });
  });
  await new Promise<void>((resolveListen, reject) => {
    server.once('error', reject);
    server.listen(o.port ?? 0, host, () => resolveListen());
  });
  const addr = server.address();
  const port = addr && typeof addr === 'object' ? addr.port : (o.port ?? 0);
  hosts = allowedHosts(host, port);
  const shown = host === '::1' ? '[::1]' : host;
  const url = `http://${shown}:${port}/`;
  return {
    url,
    openUrl: `${url}?token=${token}`,
    token,
    port,
    host,
    server,
    close: () =>
      new Promise<void>((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
}
