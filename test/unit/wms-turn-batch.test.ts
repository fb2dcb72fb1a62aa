/**
 * The answers of one loop turn are handed on together, after the check phase that follows the turn's poll phase:
 * after every setImmediate queued in the same turn (undici writes a request on a reused socket from such an
 * immediate, GHSA-35p6-xmwp-9g52), so the requests released by the answers go out before the answers are processed.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import { once } from 'node:events';
import diagnostics from 'node:diagnostics_channel';
import { createTurnBatch } from '../../src/wms/turn-batch.js';
import { createTransport } from '../../src/wms/transport.js';

test('answers of one turn are handed on together, after the immediates queued in that turn', async () => {
  const afterTurn = createTurnBatch();
  const order: string[] = [];
  const a = afterTurn().then(() => order.push('answer 1'));
  // queued after the first answer's wait began, in the same turn: a request dispatched while the turn's answers arrive
  setImmediate(() => order.push('request written'));
  const b = afterTurn().then(() => order.push('answer 2'));
  await Promise.all([a, b]);
  assert.deepEqual(order, ['request written', 'answer 1', 'answer 2']);
});

test('a batch handed on does not hold the next turn: a later answer waits for its own turn only', async () => {
  const afterTurn = createTurnBatch();
  await afterTurn();
  const order: string[] = [];
  const c = afterTurn().then(() => order.push('answer 3'));
  setImmediate(() => order.push('request written'));
  await c;
  assert.deepEqual(order, ['request written', 'answer 3']);
});

test('undici writes a request on a reused keep-alive socket from an immediate, not at dispatch', async () => {
  // the premise of the batch: if a later undici writes at dispatch again, this fails and turn-batch.ts can go
  const server: Server = createServer((req, res) => {
    req.resume();
    req.on('end', () => res.end('{}'));
  }).listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as { port: number };
  const transport = createTransport({ origin: `http://127.0.0.1:${port}`, connections: 1, timeoutMs: 5000, maxResponseBytes: 1 << 20 });
  let written = 0;
  const onHeaders = (): void => {
    written++;
  };
  diagnostics.subscribe('undici:client:sendHeaders', onHeaders);
  try {
    await transport.send('POST', '/first', { 'content-type': 'application/json' }, Buffer.from('{}'));
    assert.equal(written, 1);
    // the socket idle for a while (no longer the one an answer just freed): only the validation defers the write
    await new Promise((r) => setTimeout(r, 30)); // socket idleness is time itself: no event says "idle long enough"
    const again = transport.send('POST', '/again', { 'content-type': 'application/json' }, Buffer.from('{}'));
    assert.equal(written, 1, 'not written at dispatch');
    await new Promise((r) => setImmediate(r));
    assert.equal(written, 2, 'written from the check phase');
    await again;
  } finally {
    diagnostics.unsubscribe('undici:client:sendHeaders', onHeaders);
    await transport.close();
    server.close();
  }
});
