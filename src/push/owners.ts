/**
 * Owners resolved from the Owners list, by `code` or `codeERP`, whichever the mapping names.
 *
 * `GET /Owners/codeerp/{code}` is documented as "code: ERP code of the owner": one WMS matches it against
 * `code`, another against `codeERP` only. The list (few records) is read once per client and kept; a miss
 * reads it again at most every REREAD_MS (an owner created meanwhile by someone else). Only when the WMS
 * cannot list owners is the codeerp endpoint used, and its answer is accepted only where the record's
 * field agrees with the value asked (so a codeERP match is never taken for a code match).
 */
import type { WmsClient } from '../wms/client-types.js';
import type * as S from '../wms/schemas.js';
import { WmsError, WmsErrorCode } from '../wms/errors.js';
import { sameIdentifier } from '../map/identifiers.js';

export type OwnerField = 'code' | 'codeERP';

const REREAD_MS = 30_000;

interface OwnerDirectory {
  records: S.OwnerRecord[] | null;
  readAt: number;
  /** the WMS cannot list owners (404/405 on GET /Owners): the codeerp endpoint is all there is */
  noList: boolean;
  reading: Promise<void> | null;
}

const directories = new WeakMap<WmsClient, OwnerDirectory>();

function directoryOf(client: WmsClient): OwnerDirectory {
  let d = directories.get(client);
  if (!d) directories.set(client, (d = { records: null, readAt: 0, noList: false, reading: null }));
  return d;
}

async function readList(client: WmsClient, d: OwnerDirectory): Promise<void> {
  d.reading ??= (async () => {
    try {
      const out: S.OwnerRecord[] = [];
      for await (const o of client.listOwners()) out.push(o);
      d.records = out;
      d.readAt = Date.now();
    } catch (err) {
      if (err instanceof WmsError && err.code === WmsErrorCode.HTTP && (err.httpStatus === 404 || err.httpStatus === 405)) {
        d.noList = true;
        return;
      }
      throw err;
    } finally {
      d.reading = null;
    }
  })();
  return d.reading;
}

/** Normalises a mapping's `by` for owners: 'code' or 'codeERP' (case-insensitive), else null. */
export function ownerField(by: string | undefined): OwnerField | null {
  const b = (by ?? 'code').toLowerCase();
  return b === 'code' ? 'code' : b === 'codeerp' ? 'codeERP' : null;
}

/**
 * The owner whose `field` is `value` (trimmed, case-insensitive), or null. `fresh`: a miss in the cached
 * list reads it again whatever its age (after a send whose answer did not carry the record).
 */
export async function findOwner(client: WmsClient, field: OwnerField, value: string, opts: { fresh?: boolean } = {}): Promise<S.OwnerRecord | null> {
  const d = directoryOf(client);
  const pick = (): S.OwnerRecord | null => d.records?.find((o) => typeof o[field] === 'string' && sameIdentifier(field, o[field], value)) ?? null;
  if (!d.noList) {
    if (d.records === null) await readList(client, d);
    let hit = pick();
    if (!hit && !d.noList && (opts.fresh === true || Date.now() - d.readAt > REREAD_MS)) {
      await readList(client, d);
      hit = pick();
    }
    if (hit || !d.noList) return hit;
  }
  const r = await client.getOwnerByCode(value);
  return r && typeof r[field] === 'string' && sameIdentifier(field, r[field], value) ? r : null;
}

/** Records an owner wmsbridge just created, so the next lookup finds it without reading the list again. */
export function rememberOwner(client: WmsClient, owner: S.OwnerRecord): void {
  const d = directoryOf(client);
  if (d.records && !d.records.some((o) => o.id === owner.id)) d.records.push(owner);
}
