/**
 * The studio's door: a random token on every request, the Host header of this server only (DNS rebinding), the
 * Origin of this server only (cross-site requests), loopback addresses only, and the paths it may read and write.
 */
import { randomBytes, timingSafeEqual } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import { basename, dirname, resolve, sep } from 'node:path';

export const TOKEN_COOKIE = 'wmsbridge_studio';
export const TOKEN_HEADER = 'x-studio-token';

/** 32 random bytes, URL-safe: printed once in the URL, then kept by the page in an HttpOnly cookie. */
export function newToken(): string {
  return randomBytes(32).toString('base64url');
}

/** The addresses the studio binds: loopback only (the token travels in clear HTTP). */
export function isLoopbackHost(host: string): boolean {
  return host === 'localhost' || host === '::1' || /^127(\.\d{1,3}){3}$/.test(host);
}

function sameToken(given: string | undefined, token: string): boolean {
  if (given === undefined) return false;
  const a = Buffer.from(given);
  const b = Buffer.from(token);
  return a.length === b.length && timingSafeEqual(a, b);
}

function cookieValue(req: IncomingMessage, name: string): string | undefined {
  const header = req.headers.cookie;
  if (!header) return undefined;
  for (const part of header.split(';')) {
    const i = part.indexOf('=');
    if (i > 0 && part.slice(0, i).trim() === name) return part.slice(i + 1).trim();
  }
  return undefined;
}

export type Verdict = { ok: true; viaQuery: boolean } | { ok: false; status: number; reason: string };

/** The Host names this server answers to: its own address and port, as 127.0.0.1, localhost or [::1]. */
export function allowedHosts(bindHost: string, port: number): Set<string> {
  const names = new Set([`127.0.0.1:${port}`, `localhost:${port}`, `[::1]:${port}`]);
  names.add(bindHost.includes(':') ? `[${bindHost}]:${port}` : `${bindHost}:${port}`);
  return names;
}

/**
 * Every request, before anything else: Host (421 for a name this server does not have: a DNS-rebinding page),
 * Origin and Sec-Fetch-Site (403 cross-site), then the token (401 none, 403 wrong), from the query of the first
 * page load, the cookie, or the header.
 */
export function admit(req: IncomingMessage, url: URL, hosts: Set<string>, token: string): Verdict {
  const host = (req.headers.host ?? '').toLowerCase();
  if (!hosts.has(host)) return { ok: false, status: 421, reason: `Host '${host}' is not this studio's (127.0.0.1 or localhost with its port)` };
  const origin = req.headers.origin;
  if (origin !== undefined && origin !== `http://${host}`) return { ok: false, status: 403, reason: `cross-site request from Origin '${origin}' refused` };
  if (req.headers['sec-fetch-site'] === 'cross-site') return { ok: false, status: 403, reason: 'cross-site request refused' };
  const q = url.searchParams.get('token') ?? undefined;
  const header = req.headers[TOKEN_HEADER];
  const given = q ?? (typeof header === 'string' ? header : undefined) ?? cookieValue(req, TOKEN_COOKIE);
  if (given === undefined) return { ok: false, status: 401, reason: 'the studio token is missing: open the URL the studio printed' };
  if (!sameToken(given, token)) return { ok: false, status: 403, reason: 'wrong studio token: open the URL the studio printed' };
  return { ok: true, viaQuery: q !== undefined };
}

export function tokenCookie(token: string): string {
  return `${TOKEN_COOKIE}=${token}; HttpOnly; SameSite=Strict; Path=/`;
}

/** The name a mapping is saved under: one file name, .yaml/.yml/.json, no folder, no hidden file. */
export const MAPPING_FILE_NAME = /^[A-Za-z0-9][A-Za-z0-9_.-]{0,120}\.(ya?ml|json)$/;

/**
 * The path a mapping named `name` is written to: directly inside `mappingsDir`, or an Error saying why not
 * (a folder in the name, `..`, another extension, an absolute path).
 */
export function mappingPath(mappingsDir: string, name: unknown): string {
  if (typeof name !== 'string' || !MAPPING_FILE_NAME.test(name) || name.includes('..') || basename(name) !== name) {
    throw new PathRefused(
      `${typeof name === 'string' ? `'${name}'` : `a ${typeof name}`} is not a mapping file name (letters, digits, _ . -, ending .yaml, .yml or .json; no folder)`,
    );
  }
  const dir = resolve(mappingsDir);
  const path = resolve(dir, name);
  if (dirname(path) !== dir || !path.startsWith(dir + sep)) throw new PathRefused(`'${name}' is outside the mappings folder`);
  return path;
}

export class PathRefused extends Error {}
