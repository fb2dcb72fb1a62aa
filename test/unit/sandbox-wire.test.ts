/**
 * The sandbox's test-only wire log (GET /__sandbox/wire), its reset-after-only fault and its count of requests
 * outside the interface (stats.outsideInterface): what bench/chaos.ts scenario f measures a client by.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { connect } from 'node:net';
import { startSandbox, sandboxCall, sandboxToken, type Sandbox } from '../helpers/sandbox.js';
import type { WireEntry } from '../../src/sandbox/wire-log.js';

let sb: Sandbox;
let token: string;

before(async () => {
  sb = await startSandbox();
  token = (await sandboxToken(sb)).token;
});

after(async () => {
  await sb?.close();
});

/** GET /__sandbox/wire entry, as the sandbox's wire log states it */
type Entry = WireEntry;

async function wire(since = 0): Promise<{ now: number; entries: Entry[] }> {
  return (await sandboxCall(sb, 'GET', `/__sandbox/wire?since=${since}`)).json;
}

const category = (code: string) => ({ codeERP: code, name: `Categoria ${code}`, status: 1 });

test('an answered request: when it arrived and when its answer left; a reset after applying: applied, no answer', async () => {
  const before = (await wire()).entries.at(-1)?.seq ?? 0;
  const ok = await sandboxCall(sb, 'POST', '/open/v1/category', { token, body: category('W1') });
  assert.equal(ok.status, 200);
  sb.setFaults({ resetAfterRate: 1 });
  try {
    await assert.rejects(sandboxCall(sb, 'POST', '/open/v1/category', { token, body: category('W2') }));
  } finally {
    sb.setFaults({ resetAfterRate: 0 });
  }
  const entries = (await wire(before)).entries.filter((e) => e.path === '/open/v1/category');
  assert.equal(entries.length, 2);
  const [a, b] = entries as [Entry, Entry];
  assert.equal(a.fate, 'answered');
  assert.equal(a.status, 200);
  assert.deepEqual(a.body, category('W1'));
  assert.ok(a.endedAt !== null && a.endedAt >= a.arrivedAt);
  assert.equal(b.fate, 'reset-after');
  const counts = (await sandboxCall(sb, 'GET', '/__sandbox/counts')).json;
  assert.equal(counts.creations.Category.W2, 1, 'applied before the reset');
  assert.equal(counts.stats.faults.resetAfter, 1);
});

test('a request still being handled is open; one whose answer the client never read is unread', async () => {
  sb.setFaults({ latencyMs: 300 });
  const before = (await wire()).entries.at(-1)?.seq ?? 0;
  const body = JSON.stringify(category('W3'));
  const socket = connect(new URL(sb.url).port as unknown as number, '127.0.0.1');
  try {
    await new Promise<void>((r) => socket.once('connect', () => r()));
    socket.pause(); // the answer stays unread in the socket
    socket.write(
      `POST /open/v1/category HTTP/1.1\r\nHost: x\r\nUser-Agent: wire-test\r\nAccept: application/json\r\nAuthorization: Bearer ${token}\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`,
    );
    let w = await wire(before);
    for (let i = 0; i < 50 && !w.entries.some((e) => e.path === '/open/v1/category'); i++) w = await wire(before);
    const open = w.entries.find((e) => e.path === '/open/v1/category')!;
    assert.equal(open.fate, 'open', 'arrived, not answered yet (300 ms latency)');
    assert.ok(open.arrivedAt <= w.now);
    // answered; the client dies with the answer unread: its kernel resets the connection
    for (let i = 0; i < 100 && (await wire(before)).entries.find((e) => e.seq === open.seq)!.fate === 'open'; i++) await new Promise((r) => setTimeout(r, 20));
    socket.resetAndDestroy();
    let done: Entry | undefined;
    for (let i = 0; i < 100; i++) {
      done = (await wire(before)).entries.find((e) => e.seq === open.seq);
      if (done?.unread) break;
      await new Promise((r) => setTimeout(r, 20));
    }
    assert.equal(done?.fate, 'answered');
    assert.equal(done?.status, 200);
    assert.equal(done?.unread, true, 'the answer was never read');
  } finally {
    sb.setFaults({ latencyMs: 0 });
    socket.destroy();
  }
});

test('requests outside the interface are refused and counted: an unknown route, a wrong method, an undefined query parameter', async () => {
  const of = async () => (await sandboxCall(sb, 'GET', '/__sandbox/counts')).json.stats.outsideInterface as { count: number; last: string[] };
  const start = (await of()).count;
  assert.equal((await sandboxCall(sb, 'GET', '/open/v1/Stock?PagingIndex=1&PagingLimit=10', { token })).status, 200);
  assert.equal((await of()).count, start, 'paging is defined');
  assert.equal((await sandboxCall(sb, 'GET', '/open/v1/Stock?productCode=X', { token })).status, 400);
  assert.equal((await sandboxCall(sb, 'GET', '/open/v1/nothing-here', { token })).status, 404);
  assert.equal((await sandboxCall(sb, 'DELETE', '/open/v1/category', { token })).status, 405);
  const o = await of();
  assert.equal(o.count, start + 3);
  assert.match(o.last.join('\n'), /GET \/open\/v1\/Stock\?productCode=X: 400/);
});
