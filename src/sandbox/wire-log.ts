/**
 * The wire log (test-only, GET /__sandbox/wire): every changing API request as it went over the wire, with when
 * the sandbox read it and when its answer left (or its connection was destroyed), so a test can tell which
 * requests were really on the wire at a given moment, e.g. a client's `kill -9`: arrived, and not answered yet;
 * or answered, but the connection then died with an error (a reset: the client's kernel still held the answer
 * unread when the process died). Nothing of this is part of the WMS interface.
 */
import type { ServerResponse } from 'node:http';
import type { Socket } from 'node:net';

/** the entries kept for GET /__sandbox/wire */
const WIRE_KEPT = 20_000;

export interface WireEntry {
  seq: number;
  method: string;
  path: string;
  /** the JSON body when small (up to 4 KB), else null */
  body: unknown;
  /** when the sandbox read the request (performance.now() ms, the sandbox's clock) */
  arrivedAt: number;
  /** when its answer was handed to the socket, or its connection destroyed (a fault, or gone before the answer) */
  endedAt: number | null;
  /**
   * 'open' until then; 'answered'; 'reset-before' / 'reset-after' (an injected reset, before or after applying);
   * 'gone' (the connection closed before the answer was written)
   */
  fate: 'open' | 'answered' | 'reset-before' | 'reset-after' | 'gone';
  status: number | null;
  /** answered, and then the connection died with an error before another request came on it: the answer was not read */
  unread: boolean;
}

export interface WireLog {
  /** a changing API request was read (call before its body is read) */
  begin(socket: Socket, res: ServerResponse, method: string, path: string, arrivedAt: number): WireEntry;
  /** any API request on the socket: the answer before it was read by the client */
  request(socket: Socket): void;
  /** its body, once read */
  body(e: WireEntry, body: Buffer | 'too-large'): void;
  /** an injected reset: its connection is destroyed now */
  reset(e: WireEntry, fate: 'reset-before' | 'reset-after', status: number | null): void;
  /** its answer is written now (the status; `finish` records when it left) */
  answer(e: WireEntry, status: number): void;
  /** the entries after `since` (a seq), oldest first */
  since(seq: number): WireEntry[];
  clear(): void;
}

function parseSmall(body: Buffer | 'too-large'): unknown {
  if (body === 'too-large' || body.length === 0 || body.length > 4096 || body[0] !== 0x7b) return null;
  try {
    return JSON.parse(body.toString('utf8'));
  } catch {
    return null;
  }
}

export function createWireLog(): WireLog {
  let entries: WireEntry[] = [];
  let seq = 0;
  /** per connection: its last changing request, until another request comes on it */
  const last = new WeakMap<Socket, WireEntry | null>();
  const watched = new WeakSet<Socket>();
  const watch = (socket: Socket): void => {
    if (watched.has(socket)) return;
    watched.add(socket);
    let errored = false;
    socket.on('error', () => (errored = true));
    socket.once('close', (hadError) => {
      const e = last.get(socket);
      if (e && e.fate === 'answered' && (hadError || errored)) e.unread = true;
    });
  };
  return {
    begin(socket, res, method, path, arrivedAt) {
      watch(socket);
      const e: WireEntry = { seq: ++seq, method, path, body: null, arrivedAt, endedAt: null, fate: 'open', status: null, unread: false };
      last.set(socket, e);
      res.once('finish', () => {
        if (e.fate !== 'open') return;
        e.fate = 'answered';
        e.endedAt = performance.now();
      });
      res.once('close', () => {
        if (e.fate !== 'open') return;
        e.fate = 'gone';
        e.endedAt = performance.now();
      });
      entries.push(e);
      if (entries.length > WIRE_KEPT * 1.25) entries = entries.slice(-WIRE_KEPT);
      return e;
    },
    request(socket) {
      watch(socket);
      last.set(socket, null);
    },
    body(e, body) {
      e.body = parseSmall(body);
    },
    reset(e, fate, status) {
      e.fate = fate;
      e.status = status;
      e.endedAt = performance.now();
    },
    answer(e, status) {
      e.status = status;
    },
    since: (s) => entries.filter((e) => e.seq > s),
    clear() {
      entries = [];
    },
  };
}
