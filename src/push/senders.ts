/**
 * One send function per target: the request(s) that deliver a resolved payload, and what came of it.
 * Upserts where the interface allows (Provider, ShippingCompany by codeERP; ConversionFactor by the id in
 * the cross-reference); Owners are looked up by code first (there is no update for owners).
 */
import { createHash } from 'node:crypto';
import { readFile, realpath, stat } from 'node:fs/promises';
import { isWmsError } from '../wms/errors.js';
import { basename, extname, isAbsolute, relative, resolve, sep } from 'node:path';
import type { RecordOutcome } from '../journal/types.js';
import type { Journal } from '../journal/types.js';
import type { WmsClient } from '../wms/client-types.js';
import type * as S from '../wms/schemas.js';
import type { Target } from '../wms/targets.js';
import { findOwner, rememberOwner } from './owners.js';
import { sameIdentifier } from '../map/identifiers.js';

export interface SendContext {
  client: WmsClient;
  journal: Journal;
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
  if (!p || p.includes('\0')) throw new SendRefused('attachment path is empty or invalid', 'file');
  if (isAbsolute(p) || /^[a-zA-Z]:[\\/]/.test(p) || p.startsWith('\\\\')) throw new SendRefused(`attachment path '${p}' is absolute: only files inside the inbox are attached`, 'file');
  const root = await realpath(inboxDir);
  const candidate = resolve(root, p.replace(/\\/g, '/'));
  const rel = relative(root, candidate);
  if (rel.startsWith('..') || isAbsolute(rel)) throw new SendRefused(`attachment path '${p}' escapes the inbox folder: refused`, 'file');
  let real: string;
  try {
    real = await realpath(candidate);
  } catch {
    throw new SendRefused(`attachment file '${p}' not found in the inbox folder`, 'file');
  }
  if (real !== root && !real.startsWith(root + sep)) throw new SendRefused(`attachment path '${p}' resolves outside the inbox folder (symlink): refused`, 'file');
  const st = await stat(real);
  if (!st.isFile()) throw new SendRefused(`attachment '${p}' is not a file`, 'file');
  // a hard link has other names, possibly outside the inbox (a link to /etc/shadow): refused like a symlink
  if (st.nlink > 1) throw new SendRefused(`attachment '${p}' is a hard link (${st.nlink} names for the same data, possibly outside the inbox): refused; copy the file in instead`, 'file');
  return real;
}

/** The journal meta key remembering that a file (by content) was attached to a picking list. */
export function attachmentMemoKey(pickingListId: string, content: Buffer): string {
  return `attachment:${pickingListId.toLowerCase()}:${createHash('sha256').update(content).digest('hex')}`;
}

/** Targets the interface can only create (POST, single envelope with the record): one call each. */
const CREATE_ONLY: Partial<Record<Target, (client: WmsClient, payload: Record<string, unknown>) => Promise<{ id: string }>>> = {
  UnitMeasurement: (c, p) => c.createUnitMeasurement(p as S.UnitMeasurementCreate),
  Category: (c, p) => c.createCategory(p as S.CategoryCreate),
  Family: (c, p) => c.createFamily(p as S.FamilyCreate),
  Product: (c, p) => c.createProduct(p as S.ProductCreate),
  PurchaseOrder: (c, p) => c.createPurchaseOrder(p as S.PurchaseOrderCreate),
  PickingList: (c, p) => c.createPickingList(p as S.PickingListCreate),
};

export async function send(input: SendInput, ctx: SendContext): Promise<SendOutput> {
  const { client } = ctx;
  const p = input.payload;
  const create = CREATE_ONLY[input.target];
  if (create) return { outcome: 'created', wmsId: (await create(client, p)).id };
  switch (input.target) {
    case 'Provider':
    case 'ShippingCompany': {
      const codeERP = typeof p['codeERP'] === 'string' && p['codeERP'] ? p['codeERP'] : null;
      const isProvider = input.target === 'Provider';
      const existing = codeERP ? (isProvider ? await client.getProviderByErp(codeERP) : await client.getShippingCompanyByErp(codeERP)) : null;
      if (existing) {
        const body = { ...p, id: existing.id };
        if (isProvider) await client.updateProvider(body as S.ProviderUpdate, { idempotent: true });
        else await client.updateShippingCompany(body as S.ShippingCompanyUpdate, { idempotent: true });
        return { outcome: 'updated', wmsId: existing.id };
      }
      const created = isProvider ? await client.createProvider(p as S.ProviderCreate) : await client.createShippingCompany(p as S.ShippingCompanyCreate);
      let id = created?.id ?? null;
      if (!id && codeERP) id = (isProvider ? await client.getProviderByErp(codeERP) : await client.getShippingCompanyByErp(codeERP))?.id ?? null;
      return { outcome: 'created', wmsId: id };
    }
    case 'Owners': {
      // by code from the Owners list (src/push/owners.ts): GET /Owners/codeerp/{code} may match codeERP only
      const code = String(p['code'] ?? '');
      const existing = code ? await findOwner(client, 'code', code) : null;
      if (existing) return { outcome: 'unchanged', wmsId: existing.id, note: 'owner already exists (the interface has no owner update)' };
      const created = await client.createOwner(p as S.OwnerCreate);
      if (created) rememberOwner(client, created);
      const id = created?.id ?? (await findOwner(client, 'code', code, { fresh: true }))?.id ?? null;
      return { outcome: 'created', wmsId: id };
    }
    case 'ConversionFactor': {
      const known = await ctx.journal.getXref('ConversionFactor', input.key);
      const existing = known ? await client.getConversionFactor(known.wmsId) : null;
      if (existing) {
        await client.updateConversionFactor({ ...(p as S.ConversionFactorCreate), id: existing.id }, { idempotent: true });
        return { outcome: 'updated', wmsId: existing.id };
      }
      const created = await client.createConversionFactor(p as S.ConversionFactorCreate);
      return { outcome: 'created', wmsId: created?.id ?? null };
    }
    case 'ConversionFactorDelete': {
      const id = String(p['id']);
      await client.deleteConversionFactor(id, { idempotent: true });
      return { outcome: 'deleted', wmsId: id };
    }
    case 'StockLock':
    case 'StockUnlock': {
      const r = input.target === 'StockLock' ? await client.lockStock(p as S.StockLockRequest, { idempotent: true }) : await client.unlockStock(p as S.StockLockRequest, { idempotent: true });
      // a valid request that changed nothing (already in that status, or nothing matched): delivered, with the
      // WMS's reason, not refused data (SPEC-NOTES)
      if (r.stocksLocked === 0) return { outcome: 'no-change', wmsId: null, note: `no change: ${r.error || 'the WMS changed no stock record'}` };
      return { outcome: 'updated', wmsId: null, note: `${r.stocksLocked} stock record(s) changed` };
    }
    case 'PickingListAttachment': {
      if (!input.attachmentPath) throw new SendRefused('no attachment file named', 'file');
      const real = await resolveAttachmentPath(ctx.inboxDir, input.attachmentPath);
      const content = await readFile(real);
      const ext = extname(real).toLowerCase();
      const body = p as S.AttachmentRequest;
      // what was attached is remembered (picking list + content hash): the same file for the same picking
      // list is not uploaded again, whatever else changed in the re-exported attachments file
      const memo = attachmentMemoKey(body.PickingListID, content);
      const earlier = await ctx.journal.getMeta(memo);
      if (earlier) return { outcome: 'unchanged', wmsId: body.PickingListID, note: `the same file was attached to this picking list on ${earlier}: not uploaded again` };
      try {
        const r = await client.attachToPickingList({
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
    case 'StockSync':
      throw new Error('StockSync records are sent as sessions by the pipeline, not one by one');
    default:
      throw new Error(`no sender for target ${input.target}`);
  }
}

/**
 * Settles an in-doubt send by reading the WMS, where the interface allows it.
 * Returns the settled output, 'absent' when the read shows the send did not take effect, or null when no
 * read-back exists for this target.
 */
export async function readBack(input: SendInput, ctx: SendContext): Promise<SendOutput | 'absent' | null> {
  const { client } = ctx;
  const p = input.payload;
  switch (input.target) {
    case 'Provider':
    case 'ShippingCompany': {
      const codeERP = typeof p['codeERP'] === 'string' ? p['codeERP'] : '';
      if (!codeERP) return null;
      const r = input.target === 'Provider' ? await client.getProviderByErp(codeERP) : await client.getShippingCompanyByErp(codeERP);
      if (!r) return 'absent';
      // the record exists: an upsert is settled by sending the update again (idempotent PUT)
      return null;
    }
    case 'Owners': {
      const r = await findOwner(client, 'code', String(p['code'] ?? ''), { fresh: true });
      return r ? { outcome: 'created', wmsId: r.id, note: 'settled by read-back after an in-doubt send' } : 'absent';
    }
    case 'ConversionFactor': {
      const codeERP = typeof p['codeERP'] === 'string' ? p['codeERP'] : '';
      if (!codeERP) return null;
      for await (const cf of client.listConversionFactors()) {
        // codes trimmed and case-folded, ids case-insensitive (src/map/identifiers.ts)
        if (typeof cf.codeERP === 'string' && sameIdentifier('codeERP', cf.codeERP, codeERP) && String(cf.productID).toLowerCase() === String(p['productID']).toLowerCase()) return { outcome: 'created', wmsId: cf.id, note: 'settled by read-back after an in-doubt send' };
      }
      return 'absent';
    }
    case 'ConversionFactorDelete': {
      const r = await client.getConversionFactor(String(p['id']));
      return r ? 'absent' : { outcome: 'deleted', wmsId: String(p['id']), note: 'settled by read-back after an in-doubt send' };
    }
    case 'StockLock':
    case 'StockUnlock':
      // setting a material status again is idempotent: resending is safe
      return 'absent';
    default:
      return null;
  }
}
