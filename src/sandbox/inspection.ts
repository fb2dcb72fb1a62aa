/**
 * The inspection API under /__sandbox/ (tests and operators' scripts read it): the state, the counts and
 * duplicates, the changing requests in the order they were applied, faults, stock knobs, webhook
 * deliveries, events that drive webhooks, and a reset to the seed data. Every route and answer is part of
 * the sandbox's contract (docs/SANDBOX.md).
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { z } from 'zod';
import type { ApiContext } from './api.js';
import { runEvent } from './events.js';
import { FaultsBody, type Faults } from './faults.js';
import { JSON_BODY_LIMIT, readBody, send } from './http-io.js';
import { RESOURCES, type Resource, type SandboxState } from './state.js';
import { stockTotal } from './stock.js';
import { formatProblems, zodProblems } from './validate.js';
import type { WebhookEmitter } from './webhooks.js';
import { createWireLog, type WireLog } from './wire-log.js';

/** the changing requests kept for GET /__sandbox/arrivals */
const ARRIVALS_KEPT = 20_000;

export interface InspectionDeps {
  state(): SandboxState;
  ctx: ApiContext;
  faults: Faults;
  hooks: WebhookEmitter;
  /** back to the seed data */
  reset(): void;
}

export interface Inspection {
  handle(req: IncomingMessage, res: ServerResponse, method: string, path: string, query: URLSearchParams | null): Promise<void>;
  /** a changing API request, once applied */
  recordArrival(method: string, path: string, status: number, body: Buffer | 'too-large'): void;
  /** API requests being handled at once (arrival to answer written or connection gone) */
  readonly concurrency: { current: number; peak: number };
  /** the changing API requests as they went over the wire (GET /__sandbox/wire) */
  readonly wire: WireLog;
}

type Answer = [status: number, data: unknown];
type InspectionRoute = (query: URLSearchParams | null, body: unknown) => Answer;

const StockCount = z.strictObject({ count: z.number().int().min(0).max(50_000_000) });
const StockQuantity = z
  .strictObject({ productCode: z.string().min(1).optional(), productId: z.string().min(1).optional(), quantity: z.number().min(0) })
  .refine((b) => b.productCode !== undefined || b.productId !== undefined, 'productCode or productId is required');

function stateOf(state: SandboxState, resource: string | null | undefined): Answer {
  if (!resource) return [200, state];
  if (resource === 'Stock') return [200, { stored: state.stock, synthetic: { ...state.synthetic } }];
  if (resource === 'SyncSession') return [200, state.syncSessions];
  if ((RESOURCES as readonly string[]).includes(resource)) return [200, state.collections[resource as Resource]];
  return [404, { ok: false, error: `unknown resource "${resource}" (${[...RESOURCES, 'Stock', 'SyncSession'].join(', ')})` }];
}

function counts(state: SandboxState, concurrency: { current: number; peak: number }): unknown {
  const records: Record<string, number> = {};
  for (const r of RESOURCES) records[r] = state.collections[r].length;
  records['Stock'] = stockTotal(state);
  const duplicates: Record<string, string[]> = {};
  for (const [res, byKey] of Object.entries(state.creations)) {
    const d = Object.entries(byKey)
      .filter(([, n]) => n > 1)
      .map(([k]) => k);
    if (d.length) duplicates[res] = d;
  }
  return {
    records,
    creations: state.creations,
    duplicates,
    updates: state.updates,
    deletes: state.deletes,
    stats: state.stats,
    concurrency: { ...concurrency },
  };
}

/**
 * Sets a product's stored stock (first record; the product's other records of the owner become 0), as if
 * someone had counted and adjusted it in the warehouse: reconciliation tests use it.
 */
function setStockQuantity(ctx: ApiContext, body: unknown): Answer {
  const r = StockQuantity.safeParse(body ?? {});
  if (!r.success) return [400, { ok: false, error: formatProblems(zodProblems(r.error)) }];
  const { productId, productCode, quantity } = r.data;
  const rows = ctx.state.stock.filter((row) => (productId ? row.productId.toLowerCase() === productId.toLowerCase() : row.productCode === productCode));
  if (rows.length === 0) return [404, { ok: false, error: `no stored stock for product ${productId ?? productCode}` }];
  rows.forEach((row, i) => (row.quantity = i === 0 ? quantity : 0));
  ctx.changed();
  return [200, { ok: true, records: rows.length }];
}

/** The request body: JSON on a POST, undefined when empty; an answer when it cannot be read. */
async function inspectionBody(req: IncomingMessage, method: string): Promise<{ body: unknown } | Answer | 'aborted'> {
  const raw = await readBody(req, JSON_BODY_LIMIT);
  if (raw === 'aborted') return raw;
  if (raw === 'too-large') return [413, { ok: false, error: `body: larger than the limit of ${JSON_BODY_LIMIT} bytes` }];
  if (method !== 'POST' || raw.length === 0) return { body: undefined };
  try {
    return { body: JSON.parse(raw.toString('utf8')) as unknown };
  } catch {
    return [400, { ok: false, error: 'body: invalid JSON' }];
  }
}

export function createInspection(deps: InspectionDeps): Inspection {
  const { ctx, faults, hooks } = deps;
  const concurrency = { current: 0, peak: 0 };
  const wire = createWireLog();
  /**
   * The changing requests in the order the sandbox applied them (handlers apply synchronously, so this is
   * the order of their effects), with the JSON body when small: a test checks the order a client keeps.
   * Bounded to the last ARRIVALS_KEPT; GET /__sandbox/arrivals?path=<prefix>.
   */
  let arrivals: Array<{ seq: number; method: string; path: string; status: number; body: unknown }> = [];
  let arrivalSeq = 0;

  const routes: Record<string, InspectionRoute> = {
    'GET /__sandbox/state': (q) => stateOf(deps.state(), q?.get('resource')),
    'GET /__sandbox/counts': () => [200, counts(deps.state(), concurrency)],
    'GET /__sandbox/arrivals': (q) => {
      const prefix = q?.get('path') ?? '';
      return [200, arrivals.filter((a) => a.path.startsWith(prefix))];
    },
    'GET /__sandbox/retry-after': () => [200, faults.windows()],
    // the changing API requests after seq `since`, with when each arrived and when its answer left (wire-log.ts);
    // `now` is the sandbox's clock (performance.now() ms) the times are on
    'GET /__sandbox/wire': (q) => [200, { now: performance.now(), entries: wire.since(Number(q?.get('since') ?? 0) || 0) }],
    'POST /__sandbox/reset': () => {
      deps.reset();
      faults.clearWindows();
      wire.clear();
      concurrency.peak = concurrency.current;
      arrivals = [];
      return [200, { ok: true }];
    },
    'GET /__sandbox/faults': () => [200, faults.settings],
    'POST /__sandbox/faults': (_q, body) => {
      const r = FaultsBody.safeParse(body ?? {});
      if (!r.success) return [400, { ok: false, error: formatProblems(zodProblems(r.error)) }];
      faults.set(r.data);
      return [200, { ok: true, faults: faults.settings }];
    },
    'POST /__sandbox/stock': (_q, body) => {
      const r = StockCount.safeParse(body ?? {});
      if (!r.success) return [400, { ok: false, error: formatProblems(zodProblems(r.error)) }];
      deps.state().synthetic.count = r.data.count;
      ctx.changed();
      return [200, { ok: true, stock: stockTotal(deps.state()) }];
    },
    'POST /__sandbox/stock/quantity': (_q, body) => setStockQuantity(ctx, body),
    'GET /__sandbox/webhooks': () => [200, hooks.deliveries()],
  };

  return {
    concurrency,
    wire,
    recordArrival(method, path, status, body) {
      let parsed: unknown = null;
      if (body !== 'too-large' && body.length > 0 && body.length <= 4096 && body[0] === 0x7b) {
        try {
          parsed = JSON.parse(body.toString('utf8'));
        } catch {
          parsed = null;
        }
      }
      arrivals.push({ seq: ++arrivalSeq, method, path, status, body: parsed });
      if (arrivals.length > ARRIVALS_KEPT * 1.25) arrivals = arrivals.slice(-ARRIVALS_KEPT);
    },
    async handle(req, res, method, path, query) {
      const read = await inspectionBody(req, method);
      if (read === 'aborted') return;
      const answer = (status: number, data: unknown): void =>
        send(res, { status, body: data, ...(status === 413 ? { headers: { connection: 'close' } } : {}) });
      if (Array.isArray(read)) return answer(...read);
      const route = routes[`${method} ${path}`];
      if (route) return answer(...route(query, read.body));
      if (method === 'POST' && path.startsWith('/__sandbox/events/')) {
        const r = runEvent(path.slice('/__sandbox/events/'.length), read.body ?? {}, ctx, hooks);
        return answer(r.status, r.body);
      }
      return answer(404, { ok: false, error: `unknown inspection route ${method} ${path}` });
    },
  };
}
