/**
 * One record through the send window: references, schema, read-back of a record left in doubt, the
 * cross-reference's "already delivered", the request, and what its answer means (decide.ts). The pusher
 * (pipeline.ts) gives it the run's shared services (PushRun) and calls `process` for each record.
 */
import type { RecordResult, RecordRow, SettleXref, RecordQueue, CrossReference, MetaStore } from '../journal/types.js';
import type { Logger } from '../shared/logger.js';
import type { WmsClient, WriteHooks } from '../wms/client-types.js';
import type { WmsError } from '../wms/errors.js';
import { ENDPOINTS } from '../wms/endpoints.js';
import { TARGET_INFO } from '../wms/targets.js';
import { PushReason, type Reason } from '../shared/reason.js';
import { identifyingFields, type RefResolver, type RunFailures } from './refs.js';
import { findExisting, readBack, send, withWriteHooks, type SendContext, type SendInput, type SendOutput } from './senders.js';
import {
  decideAfterReadBack,
  decideBeforeSend,
  decideOnError,
  decideReadBackFailed,
  describeError,
  idInMessage,
  isWmsUnavailable,
  type ErrorAction,
  type InDoubtPolicy,
  type ReadBack,
} from './decide.js';

/** What every record of a push shares: the journal, the client, the run's failures, the request slots. */
export interface PushRun {
  journal: RecordQueue & CrossReference & MetaStore;
  client: WmsClient;
  logger: Logger;
  resolver: RefResolver;
  failures: RunFailures;
  /** settles a record (journal, failures of the run, sequencing, onSettled); `xref`: written with it (Journal.settle) */
  settle(row: RecordRow, result: RecordResult, xref?: SettleXref): Promise<void>;
  /** a record marked sending that was not sent after all: back to pending (the attempt stays counted) */
  unmark(row: RecordRow, why: string): Promise<void>;
  /** the WMS did not take the record: it stays pending (requeued if it was marked) and its dependants wait */
  waitForWms(row: RecordRow, err: WmsError, marked: boolean): Promise<void>;
  /** a request slot (channel limit, then the global one); refused once the run is stopping for good */
  requestSlot<T>(row: RecordRow, fn: () => Promise<T>): Promise<T>;
  /** the channel's in-doubt rule for this record */
  inDoubtPolicy(row: RecordRow): InDoubtPolicy;
  /** the channel's inbox folder (attachments are read from inside it only) */
  inboxDirOf(row: RecordRow): string;
  /** true once nothing more may be taken (aborted, credentials refused, circuit open) */
  stopping(): boolean;
  /** credentials refused: no record can be sent any more */
  stopRun(message: string, cause: unknown): void;
  /** the error the run stopped with, once stopRun was called */
  readonly fatal: unknown;
  /**
   * A dependency is not settled yet (another instance is sending it): true when the record was put aside
   * to be tried again after the tier, false when this was the last try (the caller holds it).
   */
  defer(row: RecordRow): boolean;
  /** how long a deferred record waits for its dependency, for its message */
  dependencyWaitMs: number;
}

/** the reason of a failed reference (refs.ts) */
export function refReason(r: { code: string; field: string; resource?: string; value?: string }): Reason {
  return { code: r.code, params: { field: r.field, ...(r.resource ? { resource: r.resource } : {}), ...(r.value !== undefined ? { value: r.value } : {}) } };
}

/** The schema check of a resolved payload: null when it passes, else the rejection. */
export function schemaRejection(issues: ReadonlyArray<{ path: PropertyKey[]; message: string }>): RecordResult {
  const path = (i: { path: PropertyKey[] }): string => i.path.map(String).join('.') || '(record)';
  return {
    status: 'rejected',
    outcome: 'rejected',
    error: issues.map((i) => `${path(i)}: ${i.message}`).join('; '),
    reason: { code: PushReason.SCHEMA, params: { field: issues.map(path).join(', ') } },
  };
}

/** What a read-back of a send in doubt could check for this target, in words (the held record's message). */
export function inDoubtChecked(target: RecordRow['target'], payload: Record<string, unknown>): string {
  const info = TARGET_INFO[target];
  if (info.lookup?.read === 'stock-index')
    return 'its code is not in the Stock list (GET /open/v1/Stock), and a product without stock cannot be read: the interface has no product read';
  switch (info.readBack) {
    case null:
      return `the interface has no read of a ${info.label}: nothing the WMS can be asked`;
    case 'codeERP':
    case 'codeERP+productID':
      return typeof payload['codeERP'] === 'string' && payload['codeERP'] ? 'read back by codeERP: not conclusive' : 'no codeERP to read it back by';
    default:
      return `read back (${info.readBack}): not conclusive`;
  }
}

export function createRecordSender(run: PushRun): { process(row: RecordRow, releaseWindow?: () => void): Promise<void> } {
  const sender = new RecordSender(run);
  return { process: (row, releaseWindow) => sender.process(row, releaseWindow) };
}

class RecordSender {
  constructor(private readonly run: PushRun) {}

  private ctxOf(row: RecordRow): SendContext {
    return { client: this.run.client, journal: this.run.journal, inboxDir: this.run.inboxDirOf(row) };
  }

  /** References and schema: the input to send, or nothing when the record was settled or put aside. */
  private async prepare(row: RecordRow): Promise<SendInput | null> {
    let resolved: Awaited<ReturnType<RefResolver['resolve']>>;
    try {
      resolved = await this.run.resolver.resolve(row.payload);
    } catch (err) {
      // a reference read from the WMS got no answer: the record stays pending
      if (!isWmsUnavailable(err)) throw err;
      await this.run.waitForWms(row, err as WmsError, false);
      return null;
    }
    if (!resolved.ok) {
      if (resolved.status === 'deferred') {
        if (this.run.defer(row)) return null;
        const waited = Math.round(this.run.dependencyWaitMs / 1000);
        await this.run.settle(row, {
          status: 'held',
          outcome: 'held',
          error: `${resolved.field}: ${resolved.message}; still not settled after ${waited} s`,
          reason: refReason(resolved),
        });
        return null;
      }
      const error = resolved.code === 'dependency_waiting' ? resolved.message : `${resolved.field}: ${resolved.message}`;
      await this.run.settle(row, { status: resolved.status, outcome: resolved.status === 'held' ? 'held' : 'rejected', error, reason: refReason(resolved) });
      return null;
    }
    const checked = TARGET_INFO[row.target].schema.safeParse(resolved.payload);
    if (!checked.success) {
      await this.run.settle(row, schemaRejection(checked.error.issues));
      return null;
    }
    return { target: row.target, key: row.key, payload: checked.data as Record<string, unknown>, attachmentPath: row.attachmentPath };
  }

  /**
   * The read-back of a send in doubt: the target's rule (senders.ts readBack), and for a target read through the
   * Stock index (a product: the interface has no product read), its code in the run's Stock index: found, it was delivered.
   */
  private async readBackInDoubt(row: RecordRow, input: SendInput): Promise<ReadBack> {
    const rb = await this.run.requestSlot(row, () => readBack(input, this.ctxOf(row)));
    if (rb !== null) return rb;
    const id = await this.idInStockIndex(row, input);
    return id ? { outcome: 'created', wmsId: id, note: 'settled by read-back after an in-doubt send (its code is in the Stock list)' } : null;
  }

  /** The WMS id of a record whose target is read through the run's Stock index (its lookup rule), by its code. */
  private async idInStockIndex(row: RecordRow, input: SendInput): Promise<string | undefined> {
    const lookup = TARGET_INFO[row.target].lookup;
    if (lookup?.read !== 'stock-index') return undefined;
    const code = String(input.payload[lookup.by] ?? '');
    return code ? await this.run.requestSlot(row, () => this.run.resolver.productIdByCode(code)) : undefined;
  }

  /** A record found in doubt at start-up: read back where the interface can. true = settled. */
  private async settleInDoubt(row: RecordRow, input: SendInput): Promise<boolean> {
    let rb: ReadBack;
    try {
      rb = await this.readBackInDoubt(row, input);
    } catch (err) {
      // the WMS did not answer the read-back: still in doubt, the next run reads back again
      await this.run.settle(row, decideReadBackFailed(err));
      return true;
    }
    const next = decideAfterReadBack(rb, this.run.inDoubtPolicy(row), { crash: true, checked: inDoubtChecked(row.target, input.payload) });
    if (next.act === 'delivered') await this.afterSent(row, next.out);
    else if (next.act === 'settle') await this.run.settle(row, next.result);
    return next.act !== 'send';
  }

  /**
   * Prepares, sends and settles one record (inside the send window; the request inside a request slot).
   * `releaseWindow` gives the record's window place back before the settle has committed (see afterSent).
   */
  async process(row: RecordRow, releaseWindow?: () => void): Promise<void> {
    if (this.run.stopping()) return;
    const input = await this.prepare(row);
    if (!input) return;
    if (row.status === 'in_doubt' && (await this.settleInDoubt(row, input))) return;
    const info = TARGET_INFO[row.target];
    if (info.xref) {
      const before = decideBeforeSend(row, await this.run.journal.getXref(info.xref, row.key), info.label);
      if (before.act === 'settle') {
        await this.run.settle(row, before.result);
        return;
      }
    }
    await this.sendOnce(row, input, releaseWindow);
  }

  /**
   * The request. A record that resolves itself when in doubt (read back, or resent) is marked ahead,
   * while the request slots are busy, and settled after its slot is released. One held when in doubt
   * (documents by default) needs a person after a crash: it is marked per attempt, by the client, once the
   * attempt is past the Retry-After gate, its slot and any retry's delay, right before the request is written,
   * and the mark is cleared when an answer proves nothing was applied (issue 41: writeHooks); it is settled
   * before its slot is released. A kill then leaves in doubt only records whose request may have been written.
   */
  private async sendOnce(row: RecordRow, input: SendInput, releaseWindow?: () => void): Promise<void> {
    const markAhead = this.run.inDoubtPolicy(row) !== 'hold';
    let marked = false;
    const mark = async (): Promise<void> => {
      await this.run.journal.markSending(row.id);
      marked = true;
    };
    let out: SendOutput | undefined;
    let sendError: { err: unknown; action: ErrorAction } | null = null;
    const ctx = markAhead
      ? this.ctxOf(row)
      : {
          ...this.ctxOf(row),
          client: withWriteHooks(
            this.run.client,
            this.writeHooks(
              row,
              mark,
              () => marked,
              (m) => (marked = m),
            ),
          ),
        };
    try {
      if (markAhead) await mark();
      await this.run.requestSlot(row, async () => {
        try {
          out = await send(input, ctx);
        } catch (err) {
          const action = decideOnError(row, err, { stage: 'send' }, ENDPOINTS.authorize.path);
          // refused credentials stop the run before the next slot is given (the settle comes after the slot)
          if (action.act === 'settle' && action.stopRun) this.run.stopRun(action.stopRun, err);
          sendError = { err, action };
          return;
        }
        if (!markAhead) await this.afterSent(row, out);
      });
    } catch (err) {
      // the slot was refused (the run is stopping) or the journal failed
      if (err !== this.run.fatal) throw err;
      // nothing was sent: the record stays pending (marked ahead: back to pending, the attempt counted)
      if (marked) await this.run.unmark(row, 'not sent: the run stopped (the WMS refused authentication)');
      return;
    }
    if (sendError) {
      const { err, action } = sendError as { err: unknown; action: ErrorAction };
      if (action.act === 'read-back') await this.afterMaybeApplied(row, input, err);
      else await this.apply(row, input, err, action);
      return;
    }
    if (markAhead && out) await this.afterSent(row, out, releaseWindow);
  }

  /** The per-attempt mark of a record held when in doubt: `sending` right before a write, back to pending when nothing was applied. */
  private writeHooks(row: RecordRow, mark: () => Promise<void>, isMarked: () => boolean, setMarked: (m: boolean) => void): WriteHooks {
    return {
      beforeWrite: mark,
      notApplied: async (why) => {
        if (!isMarked()) return;
        setMarked(false);
        await this.run.unmark(row, `not applied: ${why}`);
      },
    };
  }

  /**
   * `releaseWindow`: when the journal commits its writes in issue order, the record's window place is given
   * back as soon as its writes are issued, before they commit: the next record's 'sending' mark is issued after
   * them, so it commits with them or after them, and the journal never holds more records marked but not
   * settled than the window (a record that waited for its settle's commit too made each record wait for two
   * commits in its turn, and halved the records each commit served).
   */
  private async afterSent(row: RecordRow, out: SendOutput, releaseWindow?: () => void): Promise<void> {
    const info = TARGET_INFO[row.target];
    // the record is settled and its WMS id cross-referenced in one write (one transaction); with every
    // identifying field, so a lookup by symbol, cnpj, code... finds what wmsbridge created (issue 14)
    const xref: SettleXref | undefined =
      info.xref && out.wmsId
        ? { resource: info.xref, key: row.key, wmsId: out.wmsId, payloadHash: row.payloadHash, fields: identifyingFields(info.xref, row.payload) }
        : undefined;
    // issued together, so they share one commit (the journal groups the writes of a turn)
    const writes: Promise<void>[] = [];
    // a delete unlinks the record it removed
    if (info.send.kind === 'delete') writes.push(this.run.journal.deleteXref(info.send.unlinks, row.key));
    writes.push(this.run.settle(row, { status: 'sent', outcome: out.outcome, wmsId: out.wmsId, error: out.note ?? null }, xref));
    if (releaseWindow && this.run.journal.queuedWritesInOrder) releaseWindow();
    await Promise.all(writes);
  }

  /** What decide said after a send or a resend (the record was marked: a wait for the WMS requeues it). */
  private async apply(row: RecordRow, input: SendInput, err: unknown, action: Exclude<ErrorAction, { act: 'read-back' }>): Promise<void> {
    switch (action.act) {
      case 'settle':
        await this.run.settle(row, action.result);
        if (action.stopRun) this.run.stopRun(action.stopRun, err);
        return;
      case 'already-existed':
        await this.alreadyExisted(row, input, err as WmsError);
        return;
      case 'wait-for-wms':
        await this.run.waitForWms(row, err as WmsError, true);
        return;
    }
  }

  /** The request may have taken effect: read back, else the channel's policy (resend or hold). */
  private async afterMaybeApplied(row: RecordRow, input: SendInput, err: unknown): Promise<void> {
    let rb: ReadBack = null;
    try {
      rb = await this.readBackInDoubt(row, input);
    } catch {
      rb = null;
    }
    const next = decideAfterReadBack(rb, this.run.inDoubtPolicy(row), { err });
    if (next.act === 'delivered') {
      await this.afterSent(row, next.out);
      return;
    }
    if (next.act === 'settle') {
      await this.run.settle(row, next.result);
      return;
    }
    try {
      await this.afterSent(row, await this.run.requestSlot(row, () => send(input, this.ctxOf(row))));
    } catch (err2) {
      const again = decideOnError(row, err2, { stage: 'resend', readBack: rb === 'absent' ? 'absent' : 'unknown' }, ENDPOINTS.authorize.path);
      if (again.act !== 'read-back') await this.apply(row, input, err2, again);
    }
  }

  /**
   * A create the WMS refused because its natural key exists: evidence of an earlier delivery (an answer lost
   * after the WMS applied it, a crash before the settle), so the record is sent, outcome already-existed, with
   * the WMS id from the answer, else from a read where the interface has one, else delivered without an id.
   */
  private async alreadyExisted(row: RecordRow, input: SendInput, err: WmsError): Promise<void> {
    const info = TARGET_INFO[row.target];
    const id = err.answerId ?? idInMessage(describeError(err)) ?? (await this.idByRead(row, input));
    const why = `the WMS already has it (${describeError(err)})`;
    if (id) {
      await this.afterSent(row, { outcome: 'already-existed', wmsId: id, note: why });
      return;
    }
    await this.run.settle(row, {
      status: 'sent',
      outcome: 'already-existed',
      wmsId: null,
      error: `${why}; its WMS id is unknown (the answer does not carry it and ${info.lookup?.read === 'stock-index' ? 'no stock record names its code (the interface has no product read)' : `the interface has no read for a ${info.label}`}): records that refer to it are held until \`wmsbridge resolve --mark-sent --ids ${row.id} --wms-id <id>\``,
    });
  }

  /** The id of an existing record through a read: read-back, or providers and carriers by codeERP. */
  private async idByRead(row: RecordRow, input: SendInput): Promise<string | undefined> {
    try {
      const rb = await this.run.requestSlot(row, () => readBack(input, this.ctxOf(row)));
      if (rb && rb !== 'absent') return rb.wmsId ?? undefined;
      if (rb === null && TARGET_INFO[row.target].send.kind === 'upsert-by-codeERP') {
        // carriers and providers: by codeERP, the read their send rule uses
        return (await this.run.requestSlot(row, () => findExisting(input, this.ctxOf(row))))?.id;
      }
      // the interface has no product read: a product with stock is found through the run's Stock index
      if (rb === null) return await this.idInStockIndex(row, input);
    } catch {
      return undefined;
    }
    return undefined;
  }
}
