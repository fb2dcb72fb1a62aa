import { test, describe, before, after, beforeEach } from 'node:test';
import assert from 'node:assert/strict';
import { startSandbox, sandboxCall, sandboxToken, type Sandbox } from '../helpers/sandbox.js';

let sb: Sandbox;
let token: string;
before(async () => {
  sb = await startSandbox({ seed: 'fault-tests' });
  token = (await sandboxToken(sb)).token;
});
after(() => sb.close());
beforeEach(() => sb.setFaults({ failRate: 0, rate429: 0, resetRate: 0, latencyMs: 0 }));

const counts = async () => (await sandboxCall(sb, 'GET', '/__sandbox/counts')).json;
const category = (codeERP: string) => ({ name: `Cat ${codeERP}`, codeERP, status: 1 });

describe('fault injection', () => {
  test('failRate 1: every call is HTTP 500 envelope 500, and nothing changes', async () => {
    sb.setFaults({ failRate: 1 });
    const before = sb.state.collections.Category.length;
    const r = await sandboxCall(sb, 'POST', '/open/v1/category', { token, body: category('F500') });
    assert.equal(r.status, 500);
    assert.deepEqual({ code: r.json.code, error: r.json.error }, { code: 500, error: 'internal error (injected)' });
    assert.equal((await sandboxCall(sb, 'GET', '/open/v1/company', { token })).status, 500);
    assert.equal(sb.state.collections.Category.length, before);
    const c = await counts(); // the inspection API is never faulted
    assert.equal(c.creations.Category?.['F500'], undefined);
    assert.ok(c.stats.faults.failRate >= 2);
  });

  test('rate429 1: 429 with Retry-After 1 and no state change', async () => {
    sb.setFaults({ rate429: 1 });
    const r = await sandboxCall(sb, 'POST', '/open/v1/category', { token, body: category('F429') });
    assert.equal(r.status, 429);
    assert.equal(r.headers['retry-after'], '1');
    assert.equal(r.json.code, 429);
    assert.equal(sb.state.collections.Category.filter((c) => c['codeERP'] === 'F429').length, 0);
  });

  test('resetRate 1: resets before and after applying, both counted; the after-reset did apply', async () => {
    const c0 = (await counts()).stats.faults;
    sb.setFaults({ resetRate: 1 });
    await assert.rejects(sandboxCall(sb, 'GET', '/open/v1/company', { token }), 'a GET is reset before it is answered');
    const outcomes: string[] = [];
    for (const code of ['R1', 'R2', 'R3', 'R4']) {
      await assert.rejects(sandboxCall(sb, 'POST', '/open/v1/category', { token, body: category(code) }));
      outcomes.push(sb.state.collections.Category.some((c) => c['codeERP'] === code) ? 'applied' : 'not applied');
    }
    sb.setFaults({ resetRate: 0 });
    // half of the state-changing resets happen after applying: the client cannot tell them apart
    assert.deepEqual(outcomes.slice().sort(), ['applied', 'applied', 'not applied', 'not applied']);
    const c1 = (await counts()).stats.faults;
    assert.equal(c1.resetBefore - c0.resetBefore, 3);
    assert.equal(c1.resetAfter - c0.resetAfter, 2);
    const creations = (await counts()).creations.Category;
    assert.equal(Object.keys(creations).filter((k) => k.startsWith('R')).length, 2);
  });

  test('faults can be set through POST /__sandbox/faults, invalid values refused', async () => {
    const r = await sandboxCall(sb, 'POST', '/__sandbox/faults', { body: { failRate: 1 } });
    assert.equal(r.status, 200);
    assert.equal((await sandboxCall(sb, 'GET', '/open/v1/company', { token })).status, 500);
    const bad = await sandboxCall(sb, 'POST', '/__sandbox/faults', { body: { failRate: 3, other: 1 } });
    assert.equal(bad.status, 400);
    assert.match(bad.json.error, /failRate/);
    assert.match(bad.json.error, /other: unknown field/);
    await sandboxCall(sb, 'POST', '/__sandbox/faults', { body: { failRate: 0 } });
    assert.equal((await sandboxCall(sb, 'GET', '/open/v1/company', { token })).status, 200);
  });

  test('fractional rates fault roughly that share of requests (deterministic RNG)', async () => {
    sb.setFaults({ failRate: 0.5 });
    let failed = 0;
    for (let i = 0; i < 60; i++) if ((await sandboxCall(sb, 'GET', '/open/v1/company', { token })).status === 500) failed++;
    assert.ok(failed > 10 && failed < 50, `failed ${failed} of 60`);
  });

  test('reset drives the state back to the seed; requests counted', async () => {
    await sandboxCall(sb, 'POST', '/open/v1/category', { token, body: category('BEFORE-RESET') });
    const c = await counts();
    assert.ok(c.stats.requests > 0);
    assert.equal((await sandboxCall(sb, 'POST', '/__sandbox/reset')).status, 200);
    assert.equal(
      sb.state.collections.Category.some((x) => x['codeERP'] === 'BEFORE-RESET'),
      false,
    );
    assert.deepEqual((await counts()).creations, {});
    assert.equal((await sandboxCall(sb, 'GET', '/open/v1/company', { token })).status, 200, 'tokens survive a reset');
  });
});
