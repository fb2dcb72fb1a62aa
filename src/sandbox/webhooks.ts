/**
 * Webhook emitter: POSTs {eventId, kind, occurredAt, data} to <webhookUrl>/webhooks/<kind> with
 * Content-Type application/json, User-Agent wms-sandbox, X-Wms-Event and X-Wms-Event-Id. A non-2xx
 * answer or a network error is resent (same eventId) after each of retryDelaysMs, at most 3 resends.
 */
import { randomUUID } from 'node:crypto';
import { request } from 'undici';
import type { Logger } from '../shared/logger.js';

export const WEBHOOK_KINDS = ['receipt', 'receipt-status', 'shipping', 'order-status', 'packing', 'stock'] as const;
export type WebhookKind = (typeof WEBHOOK_KINDS)[number];

export interface WebhookAttempt {
  at: string;
  status?: number;
  error?: string;
  durationMs: number;
}
export interface WebhookDelivery {
  eventId: string;
  kind: WebhookKind;
  url: string;
  payload: { eventId: string; kind: WebhookKind; occurredAt: string; data: unknown };
  attempts: WebhookAttempt[];
  /** 'pending' while attempts remain, then 'delivered' or 'failed' */
  state: 'pending' | 'delivered' | 'failed';
}

export interface WebhookEmitter {
  emit(kind: WebhookKind, data: unknown): WebhookDelivery | null;
  deliveries(): WebhookDelivery[];
  close(): Promise<void>;
}

const MAX_RESENDS = 3;
const ATTEMPT_TIMEOUT_MS = 5_000;

export function createWebhookEmitter(options: { url?: string; retryDelaysMs: number[]; logger: Logger }): WebhookEmitter {
  const log = options.logger;
  const list: WebhookDelivery[] = [];
  const timers = new Set<NodeJS.Timeout>();
  const inflight = new Set<Promise<void>>();
  let closed = false;
  const base = options.url?.replace(/\/+$/, '');

  async function attempt(d: WebhookDelivery): Promise<void> {
    const started = Date.now();
    const rec: WebhookAttempt = { at: new Date(started).toISOString(), durationMs: 0 };
    try {
      const res = await request(d.url, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          'user-agent': 'wms-sandbox',
          'x-wms-event': d.kind,
          'x-wms-event-id': d.eventId,
        },
        body: JSON.stringify(d.payload),
        headersTimeout: ATTEMPT_TIMEOUT_MS,
        bodyTimeout: ATTEMPT_TIMEOUT_MS,
      });
      await res.body.dump();
      rec.status = res.statusCode;
    } catch (err) {
      rec.error = err instanceof Error ? err.message : String(err);
    }
    rec.durationMs = Date.now() - started;
    d.attempts.push(rec);
    const ok = rec.status !== undefined && rec.status >= 200 && rec.status < 300;
    if (ok) {
      d.state = 'delivered';
      log.debug({ kind: d.kind, eventId: d.eventId, attempt: d.attempts.length }, 'webhook delivered');
      return;
    }
    const resends = d.attempts.length - 1;
    if (resends >= MAX_RESENDS || closed) {
      d.state = 'failed';
      log.warn({ kind: d.kind, eventId: d.eventId, attempt: d.attempts.length, status: rec.status }, 'webhook not delivered, giving up');
      return;
    }
    const delays = options.retryDelaysMs;
    const delay = delays[Math.min(resends, delays.length - 1)] ?? 1000;
    log.debug({ kind: d.kind, eventId: d.eventId, attempt: d.attempts.length, status: rec.status, delay }, 'webhook failed, will resend');
    const t = setTimeout(() => {
      timers.delete(t);
      run(d);
    }, delay);
    timers.add(t);
  }

  function run(d: WebhookDelivery): void {
    if (closed) {
      d.state = 'failed';
      return;
    }
    const p = attempt(d).finally(() => inflight.delete(p));
    inflight.add(p);
  }

  return {
    emit(kind, data) {
      if (!base || closed) return null;
      const eventId = randomUUID();
      const d: WebhookDelivery = {
        eventId,
        kind,
        url: `${base}/webhooks/${kind}`,
        payload: { eventId, kind, occurredAt: new Date().toISOString(), data },
        attempts: [],
        state: 'pending',
      };
      list.push(d);
      run(d);
      return d;
    },
    deliveries: () => list,
    async close() {
      closed = true;
      for (const t of timers) clearTimeout(t);
      timers.clear();
      await Promise.allSettled([...inflight]);
      // resends that were waiting for their timer will never happen
      for (const d of list) if (d.state === 'pending') d.state = 'failed';
    },
  };
}
