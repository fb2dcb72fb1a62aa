/**
 * The sandbox's routing over the endpoint table (src/wms/endpoints.ts): literal paths by a map, templated
 * ones (`{id}`) by segment; a path known under another method is a 405 with Allow. Content negotiation
 * (Accept) lives here too.
 */
import { ENDPOINTS, type EndpointName } from '../wms/endpoints.js';

export interface Route {
  name: EndpointName;
  method: string;
  segments: string[];
  anonymous: boolean;
}

function compileRoutes(): { literal: Map<string, Route>; templated: Route[] } {
  const literal = new Map<string, Route>();
  const templated: Route[] = [];
  for (const [name, def] of Object.entries(ENDPOINTS) as Array<[EndpointName, (typeof ENDPOINTS)[EndpointName]]>) {
    const route: Route = { name, method: def.method, segments: def.path.split('/'), anonymous: 'anonymous' in def && def.anonymous === true };
    if (def.path.includes('{')) templated.push(route);
    else literal.set(`${def.method} ${def.path}`, route);
  }
  return { literal, templated };
}
const ROUTES = compileRoutes();

function matchTemplate(route: Route, segs: string[]): Record<string, string> | null {
  if (route.segments.length !== segs.length) return null;
  const params: Record<string, string> = {};
  for (let i = 0; i < segs.length; i++) {
    const t = route.segments[i]!;
    const s = segs[i]!;
    if (t.startsWith('{')) {
      if (s === '') return null;
      try {
        params[t.slice(1, -1)] = decodeURIComponent(s);
      } catch {
        return null;
      }
    } else if (t !== s) return null;
  }
  return params;
}

export type Found = { route: Route; params: Record<string, string> } | { allowed: string[] } | null;

/** Finds the route; `allowed` lists the methods of the path when only the method is wrong. */
export function findRoute(method: string, path: string): Found {
  const lit = ROUTES.literal.get(`${method} ${path}`);
  if (lit) return { route: lit, params: {} };
  const segs = path.split('/');
  for (const r of ROUTES.templated) {
    if (r.method !== method) continue;
    const params = matchTemplate(r, segs);
    if (params) return { route: r, params };
  }
  const allowed = new Set<string>();
  for (const r of [...ROUTES.literal.values(), ...ROUTES.templated]) {
    if (r.method === method) continue;
    if (r.segments.join('/') === path || matchTemplate(r, segs)) allowed.add(r.method);
  }
  return allowed.size ? { allowed: [...allowed] } : null;
}

export function acceptsJson(accept: string | undefined): boolean {
  if (accept === undefined || accept.trim() === '') return true;
  for (const part of accept.split(',')) {
    const t = part.split(';')[0]!.trim().toLowerCase();
    if (t === 'application/json' || t === 'application/*' || t === '*/*' || t.endsWith('+json')) return true;
  }
  return false;
}
