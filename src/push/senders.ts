/**
 * One send function per kind of send rule (src/wms/targets/spec.ts): the request(s) that deliver a resolved
 * payload, and what came of it. Upserts where the interface allows (Provider, ShippingCompany by codeERP;
 * ConversionFactor by the id in the cross-reference); Owners are looked up by code first (there is no update
 * for owners). Read-back of an in-doubt send by the target's read-back rule.
 */
import { createHash } from 'node:crypto';
import { readFile, realpath, stat } from 'node:fs/promises';
import { isWmsError } from '../wms/errors.js';
import { basename, extname, isAbsolute, relative, resolve, sep } from 'node:path';
import type { RecordOutcome, CrossReference, MetaStore } from '../journal/types.js';
import type { CallOptions, WmsClient, WriteHooks } from '../wms/client-types.js';
import { ENDPOINTS, type EndpointName } from '../wms/endpoints.js';
import type * as S from '../wms/schemas.js';
import { TARGET_INFO, type RefResource, type SendRule, type Target } from '../wms/targets.js';
import { findOwner, rememberOwner } from './owners.js';
import { sameIdentifier } from '../map/identifiers.js';

export interface SendContext {
  client: WmsClient;
  journal: CrossReference & MetaStore;
  /** the channel's inbox folder: attachments are taken only from inside it */
  inboxDir: string;
}

export interface SendInput {
  target: Target;
  key: string;
  payload: Record<string, unknown>;
  attachmentPath?: string | undefined;
}

export interface SendOutput {
  outcome: Extract<RecordOutcome, 'created' | 'updated' | 'unchanged' | 'already-existed' | 'deleted' | 'no-change'>;
  wmsId: string | null;
  note?: string;
}

/** A send refused before any request (bad attachment path...): the record is rejected. */
export class SendRefused extends Error {
  constructor(
    message: string,
    readonly field?: string,
    /** why, as a stable word the outbox has a sentence for (`reason.refused.<why>`), and the value refused */
    readonly why?: 'invalid' | 'absolute' | 'escapes' | 'not-found' | 'symlink' | 'not-file' | 'hardlink' | 'none',
    readonly value?: string,
  ) {
    super(message);
    this.name = 'SendRefused';
  }
}

const ATTACHMENT_TYPES: Record<string, string> = {
  '.pdf': 'application/pdf',
  '.png': 'image/png',
  '.jpg': 'image/jpeg',
  '.jpeg': 'image/jpeg',
  '.txt': 'text/plain',
  '.csv': 'text/csv',
  '.xml': 'application/xml',
  '.zpl': 'application/octet-stream',
};

/** Resolves an attachment path strictly inside the inbox folder (no .., no absolute, no symlink escape, no hard link). */
export async function resolveAttachmentPath(inboxDir: string, p: string): Promise<string> {
  if (!p || p.includes('\0')) throw new SendRefused('attachment path is empty or invalid', 'file', 'invalid');
  if (isAbsolute(p) || /^[a-zA-Z]:[\\/]/.test(p) || p.startsWith('\\\\'))
    throw new SendRefused(`attachment path '${p}' is absolute: only files inside the inbox are attached`, 'file', 'absolute', p);
  const root = await realpath(inboxDir);
  const candidate = resolve(root, p.replace(/\\/g, '/'));
  const rel = relative(root, candidate);
  if (rel.startsWith('..') || isAbsolute(rel)) throw new SendRefused(`attachment path '${p}' escapes the inbox folder: refused`, 'file', 'escapes', p);
  let real: string;
  try {
    real = await realpath(candidate);
  } catch {
    throw new SendRefused(`attachment file '${p}' not found in the inbox folder`, 'file', 'not-found', p);
  }
  if (real !== root && !real.startsWith(root + sep))
    throw new SendRefused(`attachment path '${p}' resolves outside the inbox folder (symlink): refused`, 'file', 'symlink', p);
  const st = await stat(real);
  if (!st.isFile()) throw new SendRefused(`attachment '${p}' is not a file`, 'file', 'not-file', p);
  // a hard link has other names, possibly outside the inbox (a link to /etc/shadow): refused like a symlink
  if (st.nlink > 1)
    throw new SendRefused(
      `attachment '${p}' is a hard link (${st.nlink} names for the same data, possibly outside the inbox): refused; copy the file in instead`,
      'file',
      'hardlink',
      p,
    );
  return real;
}

/** The journal meta key remembering that a file (by content) was attached to a picking list. */
export function attachmentMemoKey(pickingListId: string, content: Buffer): string {
  return `attachment:${pickingListId.toLowerCase()}:${createHash('sha256').update(content).digest('hex')}`;
}

type Payload = Record<string, unknown>;
type Created = { id: string } | null | undefined;
type SendRuleOf<K extends SendRule['kind']> = Extract<SendRule, { kind: K }>;
/** what a sender gets: the caller's context and the target's cross-reference resource */
interface RuleContext extends SendContext {
  xref: RefResource | null;
}
type Sender<K extends SendRule['kind']> = (rule: SendRuleOf<K>, input: SendInput, ctx: RuleContext) => Promise<SendOutput>;

// the client methods named by a rule (src/wms/targets/spec.ts types them from WmsClient), called with the payload
const callCreate = (client: WmsClient, method: SendRuleOf<'create'>['create'], body: Payload, opts?: CallOptions): Promise<Created> =>
  client[method](body as never, opts);
const callFind = (client: WmsClient, method: SendRuleOf<'upsert-by-codeERP'>['find'], code: string): Promise<Created> => client[method](code);

/** One send function per kind of send rule (src/wms/targets/spec.ts SendRule). */
const SENDERS: { [K in SendRule['kind']]: Sender<K> } = {
  create: async (rule, input, { client }) => ({ outcome: 'created', wmsId: (await callCreate(client, rule.create, input.payload))?.id ?? null }),
  'upsert-by-codeERP': async (rule, input, { client }) => {
    const p = input.payload;
    const codeERP = typeof p['codeERP'] === 'string' && p['codeERP'] ? p['codeERP'] : null;
    const existing = codeERP ? await callFind(client, rule.find, codeERP) : null;
    if (existing) {
      await callCreate(client, rule.update, { ...p, id: existing.id }, { idempotent: true });
      return { outcome: 'updated', wmsId: existing.id };
    }
    const created = await callCreate(client, rule.create, p);
    let id = created?.id ?? null;
    if (!id && codeERP) id = (await callFind(client, rule.find, codeERP))?.id ?? null;
    return { outcome: 'created', wmsId: id };
  },
  'create-unless-code': async (rule, input, { client }) => {
    // by code from the Owners list (src/push/owners.ts): GET /Owners/codeerp/{code} may match codeERP only
    const p = input.payload;
    const code = String(p['code'] ?? '');
    const existing = code ? await findOwner(client, 'code', code) : null;
    if (existing) return { outcome: 'unchanged', wmsId: existing.id, note: 'owner already exists (the interface has no owner update)' };
    const created = await callCreate(client, rule.create, p);
    if (created) rememberOwner(client, created as S.OwnerRecord);
    const id = created?.id ?? (await findOwner(client, 'code', code, { fresh: true }))?.id ?? null;
    return { outcome: 'created', wmsId: id };
  },
  'upsert-by-xref': async (rule, input, ctx) => {
    const { client } = ctx;
    const known = ctx.xref ? await ctx.journal.getXref(ctx.xref, input.key) : undefined;
    const existing = known ? await callFind(client, rule.get, known.wmsId) : null;
    if (existing) {
      await callCreate(client, rule.update, { ...input.payload, id: existing.id }, { idempotent: true });
      return { outcome: 'updated', wmsId: existing.id };
    }
    const created = await callCreate(client, rule.create, input.payload);
    return { outcome: 'created', wmsId: created?.id ?? null };
  },
  delete: async (rule, input, { client }) => {
    const id = String(input.payload['id']);
    await client[rule.remove](id, { idempotent: true });
    return { outcome: 'deleted', wmsId: id };
  },
  'stock-status': async (rule, input, { client }) => {
    const r = await client[rule.apply](input.payload as S.StockLockRequest, { idempotent: true });
    // a valid request that changed nothing (already in that status, or nothing matched): delivered, with the
    // WMS's reason, not refused data (SPEC-NOTES)
    if (r.stocksLocked === 0) return { outcome: 'no-change', wmsId: null, note: `no change: ${r.error || 'the WMS changed no stock record'}` };
    return { outcome: 'updated', wmsId: null, note: `${r.stocksLocked} stock record(s) changed` };
  },
  attachment: (rule, input, ctx) => sendAttachment(rule, input, ctx),
  session: () => Promise.reject(new Error('StockSync records are sent as sessions by the pipeline, not one by one')),
};

async function sendAttachment(rule: SendRuleOf<'attachment'>, input: SendInput, ctx: SendContext): Promise<SendOutput> {
  if (!input.attachmentPath) throw new SendRefused('no attachment file named', 'file', 'none');
  const real = await resolveAttachmentPath(ctx.inboxDir, input.attachmentPath);
  const content = await readFile(real);
  const ext = extname(real).toLowerCase();
  const body = input.payload as S.AttachmentRequest;
  // what was attached is remembered (picking list + content hash): the same file for the same picking
  // list is not uploaded again, whatever else changed in the re-exported attachments file
  const memo = attachmentMemoKey(body.PickingListID, content);
  const earlier = await ctx.journal.getMeta(memo);
  if (earlier)
    return { outcome: 'unchanged', wmsId: body.PickingListID, note: `the same file was attached to this picking list on ${earlier}: not uploaded again` };
  try {
    const r = await ctx.client[rule.upload]({
      pickingListID: body.PickingListID,
      userFileName: body.UserFileName,
      ...(body.IsPrintCheckout !== undefined ? { isPrintCheckout: body.IsPrintCheckout } : {}),
      content,
      fileName: basename(real),
      contentType: ATTACHMENT_TYPES[ext] ?? 'application/octet-stream',
    });
    await ctx.journal.setMeta(memo, new Date().toISOString());
    return { outcome: 'created', wmsId: r.pickingListID };
  } catch (err) {
    // the WMS says it has this attachment already: the same as attached
    if (isWmsError(err) && (err.httpStatus === 409 || err.envelopeCode === 409)) {
      await ctx.journal.setMeta(memo, new Date().toISOString());
      return { outcome: 'unchanged', wmsId: body.PickingListID, note: `the WMS already has this attachment (${err.message})` };
    }
    throw err;
  }
}

/**
 * The client as one record's send sees it: every call that changes something (an endpoint other than GET)
 * carries `write`, so the record is marked in doubt per attempt, right before its request is written (the
 * reads a send rule makes first mark nothing). Client methods are named after their endpoints.
 */
export function withWriteHooks(client: WmsClient, write: WriteHooks): WmsClient {
  const hooked = Object.create(client) as Record<string, unknown>;
  for (const name of Object.keys(ENDPOINTS) as EndpointName[]) {
    const method = (client as unknown as Record<string, unknown>)[name];
    if (ENDPOINTS[name].method === 'GET' || typeof method !== 'function') continue;
    hooked[name] = (arg: unknown, opts?: CallOptions) => (method as (a: unknown, o: CallOptions) => unknown).call(client, arg, { ...opts, write });
  }
  return hooked as unknown as WmsClient;
}

/** Sends one resolved record the way its target's send rule says (src/wms/targets/). */
export function send(input: SendInput, ctx: SendContext): Promise<SendOutput> {
  const spec = TARGET_INFO[input.target];
  if (!spec) return Promise.reject(new Error(`no sender for target ${String(input.target)}`));
  const sender = SENDERS[spec.send.kind] as Sender<SendRule['kind']>;
  return sender(spec.send, input, { ...ctx, xref: spec.xref });
}

const SETTLED_BY_READ_BACK = 'settled by read-back after an in-doubt send';

/**
 * The record as the WMS has it, found by the natural key its send rule reads by (carriers and providers
 * by codeERP), or null when the interface has no such read for the target.
 */
export async function findExisting(input: SendInput, ctx: SendContext): Promise<{ id: string } | null> {
  const rule = TARGET_INFO[input.target].send;
  if (rule.kind !== 'upsert-by-codeERP') return null;
  const codeERP = typeof input.payload['codeERP'] === 'string' ? input.payload['codeERP'] : '';
  return codeERP ? ((await callFind(ctx.client, rule.find, codeERP)) ?? null) : null;
}

/**
 * Settles an in-doubt send by reading the WMS, the way its target's read-back rule says (src/wms/targets/spec.ts).
 * Returns the settled output, 'absent' when the read shows the send did not take effect (or sending again is
 * harmless), or null when no read-back exists for this target (or the read cannot settle it).
 */
export async function readBack(input: SendInput, ctx: SendContext): Promise<SendOutput | 'absent' | null> {
  const { client } = ctx;
  const p = input.payload;
  const spec = TARGET_INFO[input.target];
  switch (spec.readBack) {
    case 'codeERP': {
      const codeERP = typeof p['codeERP'] === 'string' ? p['codeERP'] : '';
      if (!codeERP) return null;
      if (!(await findExisting(input, ctx))) return 'absent';
      // the record exists: an upsert is settled by sending the update again (idempotent PUT)
      return null;
    }
    case 'code': {
      const r = await findOwner(client, 'code', String(p['code'] ?? ''), { fresh: true });
      return r ? { outcome: 'created', wmsId: r.id, note: SETTLED_BY_READ_BACK } : 'absent';
    }
    case 'codeERP+productID': {
      const codeERP = typeof p['codeERP'] === 'string' ? p['codeERP'] : '';
      if (!codeERP) return null;
      for await (const cf of client.listConversionFactors()) {
        // codes trimmed and case-folded, ids case-insensitive (src/map/identifiers.ts)
        if (
          typeof cf.codeERP === 'string' &&
          sameIdentifier('codeERP', cf.codeERP, codeERP) &&
          String(cf.productID).toLowerCase() === String(p['productID']).toLowerCase()
        )
          return { outcome: 'created', wmsId: cf.id, note: SETTLED_BY_READ_BACK };
      }
      return 'absent';
    }
    case 'gone': {
      if (spec.send.kind !== 'delete') return null;
      const r = await callFind(client, spec.send.get, String(p['id']));
      return r ? 'absent' : { outcome: 'deleted', wmsId: String(p['id']), note: SETTLED_BY_READ_BACK };
    }
    case 'resend':
      // setting a material status again is idempotent: resending is safe
      return 'absent';
    default:
      return null;
  }
}
