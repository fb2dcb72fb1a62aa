/**
 * The send decision (src/push/decide.ts), pure: every class of error a send can meet and what the pusher is
 * told to do, the read-back rules, the cross-reference's "already delivered", and the reason codes that
 * replace message text (shared/reason.ts).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { classify, decideAfterReadBack, decideBeforeSend, decideOnError, decideReadBackFailed, inDoubtPolicyFor } from '../../src/push/decide.js';
import { SendRefused } from '../../src/push/senders.js';
import { WmsError, WmsErrorCode } from '../../src/wms/errors.js';
import { hasCode, isHeldOnDependency, isWaitingForWms, PushReason, reasonOfRecord } from '../../src/shared/reason.js';
import { dependencyStateOf, notInOrder } from '../../src/push/pipeline.js';

const AUTH_PATH = '/open/v1/authorize';
const err = (code: (typeof WmsErrorCode)[keyof typeof WmsErrorCode], init: Partial<ConstructorParameters<typeof WmsError>[2]> = {}) =>
  new WmsError(code, `[POST] /open/v1/x: ${init.httpStatus ?? ''} - ${init.envelopeMessage ?? 'boom'}`, { method: 'POST', path: '/open/v1/category', ...init });
const category = { target: 'Category' as const, key: 'BEB' };
const lock = { target: 'StockLock' as const, key: 'W1|P1' };

test('classify: each kind of error, in the order the checks must be made', () => {
  const cases: Array<[unknown, ReturnType<typeof classify>, string]> = [
    [new SendRefused('path outside the inbox', 'attachment'), 'refused', 'a field rule of the sender'],
    [new Error('SQLITE_BUSY'), 'internal', 'not an error of the WMS'],
    [err(WmsErrorCode.AUTH, { httpStatus: 401 }), 'auth', 'credentials'],
    [err(WmsErrorCode.HTTP, { httpStatus: 409 }), 'conflict', '409 on a create'],
    [err(WmsErrorCode.VALIDATION, { httpStatus: 400, envelopeMessage: "Category 'BEB' already exists" }), 'conflict', 'a refusal naming the key as existing'],
    [err(WmsErrorCode.VALIDATION, { httpStatus: 400, envelopeMessage: "Category 'OTHER' already exists" }), 'rejection', 'names another key: the data'],
    [err(WmsErrorCode.VALIDATION, { httpStatus: 400 }), 'rejection', 'the data'],
    [err(WmsErrorCode.HTTP, { httpStatus: 404 }), 'rejection', 'a 4xx'],
    [err(WmsErrorCode.HTTP, { httpStatus: 503 }), 'unavailable', 'a 5xx'],
    [err(WmsErrorCode.RATE_LIMIT, { httpStatus: 429 }), 'unavailable', 'throttled beyond the retries'],
    [err(WmsErrorCode.NETWORK, { networkCode: 'ECONNREFUSED' }), 'unavailable', 'no answer'],
    [err(WmsErrorCode.TIMEOUT, { mayHaveReachedServer: true }), 'maybe-applied', 'answer lost after the request left'],
    [err(WmsErrorCode.NETWORK, { networkCode: 'DEPTH_ZERO_SELF_SIGNED_CERT' }), 'failed', 'a certificate is configuration'],
  ];
  for (const [e, want, why] of cases) assert.equal(classify(category, e), want, why);
  assert.equal(classify(lock, err(WmsErrorCode.HTTP, { httpStatus: 409 })), 'rejection', 'a 409 on a lock is not evidence of a create');
});

test('decideOnError: first send', () => {
  assert.deepEqual(decideOnError(category, err(WmsErrorCode.HTTP, { httpStatus: 409 }), { stage: 'send' }, AUTH_PATH), { act: 'already-existed' });
  assert.deepEqual(decideOnError(category, err(WmsErrorCode.HTTP, { httpStatus: 500 }), { stage: 'send' }, AUTH_PATH), { act: 'wait-for-wms' });
  assert.deepEqual(decideOnError(category, err(WmsErrorCode.TIMEOUT, { mayHaveReachedServer: true }), { stage: 'send' }, AUTH_PATH), { act: 'read-back' });

  const rej = decideOnError(category, err(WmsErrorCode.VALIDATION, { httpStatus: 400, envelopeMessage: 'name: required' }), { stage: 'send' }, AUTH_PATH);
  assert.equal(rej.act, 'settle');
  if (rej.act === 'settle') {
    assert.equal(rej.result.status, 'rejected');
    assert.deepEqual(rej.result.reason, { code: 'E_WMS_VALIDATION', params: { status: 400, message: 'name: required' } });
  }
  const refused = decideOnError(category, new SendRefused('outside the inbox', 'attachmentPath'), { stage: 'send' }, AUTH_PATH);
  assert.ok(refused.act === 'settle' && refused.result.status === 'rejected' && refused.result.reason?.code === PushReason.REFUSED);
  assert.ok(refused.act === 'settle' && refused.result.error === 'attachmentPath: outside the inbox');

  // a 401 on one request fails that record; the credentials refused at authorize (or a 403) stop the run
  const one = decideOnError(category, err(WmsErrorCode.AUTH, { httpStatus: 401 }), { stage: 'send' }, AUTH_PATH);
  assert.ok(one.act === 'settle' && one.result.status === 'failed' && one.stopRun === undefined);
  const all = decideOnError(category, err(WmsErrorCode.AUTH, { httpStatus: 401, path: AUTH_PATH }), { stage: 'send' }, AUTH_PATH);
  assert.ok(all.act === 'settle' && /refused authentication/.test(all.stopRun ?? ''));
  const firewall = decideOnError(category, err(WmsErrorCode.AUTH, { httpStatus: 403 }), { stage: 'send' }, AUTH_PATH);
  assert.ok(firewall.act === 'settle' && firewall.stopRun !== undefined);

  const internal = decideOnError(category, new Error('disk full'), { stage: 'send' }, AUTH_PATH);
  assert.ok(internal.act === 'settle' && internal.result.status === 'failed' && internal.result.reason?.code === 'E_INTERNAL');
});

test('decideOnError: a resend after a read-back', () => {
  const absent = { stage: 'resend' as const, readBack: 'absent' as const };
  const unknown = { stage: 'resend' as const, readBack: 'unknown' as const };
  assert.deepEqual(
    decideOnError(category, err(WmsErrorCode.HTTP, { httpStatus: 409 }), unknown, AUTH_PATH),
    { act: 'already-existed' },
    'the first send took effect',
  );
  assert.deepEqual(
    decideOnError(category, err(WmsErrorCode.HTTP, { httpStatus: 503 }), absent, AUTH_PATH),
    { act: 'wait-for-wms' },
    'known absent: nothing applied',
  );
  const notKnown = decideOnError(category, err(WmsErrorCode.HTTP, { httpStatus: 503 }), unknown, AUTH_PATH);
  assert.ok(notKnown.act === 'settle' && notKnown.result.status === 'failed', 'the first may have taken effect: not a clean "pending"');
  const lost = decideOnError(category, err(WmsErrorCode.TIMEOUT, { mayHaveReachedServer: true }), unknown, AUTH_PATH);
  assert.ok(lost.act === 'settle' && lost.result.status === 'in_doubt');
  const rej = decideOnError(category, err(WmsErrorCode.VALIDATION, { httpStatus: 400 }), absent, AUTH_PATH);
  assert.ok(rej.act === 'settle' && rej.result.status === 'rejected');
  // never asks for a second read-back
  for (const e of [err(WmsErrorCode.TIMEOUT, { mayHaveReachedServer: true }), new Error('x'), err(WmsErrorCode.AUTH, { httpStatus: 401 })]) {
    assert.notEqual(decideOnError(category, e, unknown, AUTH_PATH).act, 'read-back');
  }
});

test('decideAfterReadBack: found = delivered; absent = send; unknown = the channel policy', () => {
  const found = { outcome: 'created' as const, wmsId: 'id-1' };
  const maybe = { err: err(WmsErrorCode.TIMEOUT, { mayHaveReachedServer: true }) };
  assert.deepEqual(decideAfterReadBack(found, 'hold', maybe), { act: 'delivered', out: found });
  assert.deepEqual(decideAfterReadBack('absent', 'hold', maybe), { act: 'send' });
  assert.deepEqual(decideAfterReadBack(null, 'resend', maybe), { act: 'send' });
  const held = decideAfterReadBack(null, 'hold', maybe);
  assert.ok(held.act === 'settle' && held.result.status === 'held' && held.result.outcome === 'in-doubt' && held.result.reason?.code === PushReason.IN_DOUBT);
  const crash = decideAfterReadBack(null, 'hold', { crash: true });
  assert.ok(crash.act === 'settle' && /wmsbridge stopped/.test(crash.result.error ?? ''));
  assert.equal(decideReadBackFailed(err(WmsErrorCode.HTTP, { httpStatus: 503 })).status, 'in_doubt', 'no answer: still in doubt');
  assert.equal(decideReadBackFailed(err(WmsErrorCode.HTTP, { httpStatus: 404 })).reason?.code, PushReason.IN_DOUBT_READBACK_FAILED);
  assert.equal(inDoubtPolicyFor(true, undefined), 'hold', 'documents are held by default');
  assert.equal(inDoubtPolicyFor(false, undefined), 'resend', 'master data is resent by default');
  assert.equal(inDoubtPolicyFor(true, { masterData: 'hold', documents: 'resend' }), 'resend');
});

test('decideBeforeSend: same payload = unchanged; a create with other data = rejected; else send', () => {
  const row = { key: 'BEB', op: 'create' as const, payloadHash: 'h1' };
  const xref = { resource: 'Category' as const, key: 'BEB', wmsId: 'id-1', payloadHash: 'h1', updatedAt: '' };
  assert.deepEqual(decideBeforeSend(row, undefined, 'Category'), { act: 'send' });
  assert.deepEqual(decideBeforeSend(row, xref, 'Category'), { act: 'settle', result: { status: 'sent', outcome: 'unchanged', wmsId: 'id-1' } });
  const other = decideBeforeSend(row, { ...xref, payloadHash: 'h2' }, 'Category');
  assert.ok(other.act === 'settle' && other.result.status === 'rejected' && other.result.reason?.code === PushReason.ALREADY_CREATED);
  assert.deepEqual(decideBeforeSend({ ...row, op: 'upsert' }, { ...xref, payloadHash: 'h2' }, 'Category'), { act: 'send' }, 'an upsert updates');
});

test('reason codes, not message text: waiting for the WMS, held on a dependency, the order kept', () => {
  const waiting = { status: 'held', outcome: 'held', error: 'anything at all', reason: { code: PushReason.DEPENDENCY_WAITING } };
  assert.equal(isWaitingForWms(waiting), true);
  assert.equal(isWaitingForWms({ ...waiting, reason: { code: PushReason.SEQUENCE_WAITING } }), true);
  assert.equal(
    isWaitingForWms({ ...waiting, error: 'waiting for the WMS', reason: { code: PushReason.DEPENDENCY_FAILED } }),
    false,
    'the code decides, not the text',
  );
  assert.equal(isWaitingForWms({ ...waiting, status: 'failed' }), false);
  const dep = {
    status: 'held',
    outcome: 'held',
    error: 'x',
    reason: { code: PushReason.DEPENDENCY_FAILED, params: { resource: 'Category', value: 'BEB', field: 'categoryID' } },
  };
  assert.equal(isHeldOnDependency(dep), true);
  assert.equal(isHeldOnDependency({ ...dep, outcome: 'in-doubt' }), false, 'in doubt waits for a person');
  // journals written before reasons were stored: the old text forms are read in one place
  assert.deepEqual(reasonOfRecord({ error: "categoryID: depends on Category 'BEB', which was not delivered: failed" }), {
    code: PushReason.DEPENDENCY_FAILED,
    params: { resource: 'Category', value: 'BEB' },
  });
  assert.equal(reasonOfRecord({ error: "waiting for Category 'BEB' (categoryID): ..." })?.code, PushReason.DEPENDENCY_WAITING);
  assert.equal(reasonOfRecord({ error: 'name: required' }), undefined);
  assert.equal(hasCode({ code: 'required', params: { codes: 'required,invalid_encoding' } }, 'invalid_encoding'), true);
  assert.equal(hasCode({ code: 'required' }, 'invalid_encoding'), false);

  const seqWait = notInOrder("Bloqueio 'W1|P1' (line 3) failed", true);
  assert.equal(seqWait.status, 'held');
  assert.equal(isWaitingForWms({ ...seqWait, error: seqWait.error ?? null }), true, 'requeued by the next run');
  assert.equal(notInOrder('x', false).reason?.code, PushReason.SEQUENCE_NOT_DELIVERED);

  assert.equal(
    dependencyStateOf({ status: 'held', outcome: 'held', error: null, reason: { code: PushReason.SEQUENCE_WAITING }, wmsId: null })?.kind,
    'waiting-for-wms',
  );
  assert.equal(dependencyStateOf({ status: 'rejected', outcome: 'rejected', error: 'bad', wmsId: null })?.kind, 'not-delivered');
  assert.equal(dependencyStateOf({ status: 'sent', outcome: 'already-existed', error: null, wmsId: null })?.kind, 'exists-without-id');
  assert.equal(dependencyStateOf({ status: 'sent', outcome: 'created', error: null, wmsId: 'x' }), null);
});
