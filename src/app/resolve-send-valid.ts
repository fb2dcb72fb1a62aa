/**
 * `wmsbridge resolve --send-valid`: a person decides that a stock sync held because some of its rows were
 * rejected is sent without them. The decision is shown first (the file, its rejected rows, how many valid rows the
 * session would carry, and what the WMS may do with the products left out), taken only with --yes, and journaled
 * with the file (FILE_META.sendValid: who and when); push/stock-sync.ts then sends the valid rows.
 */
import { userInfo } from 'node:os';
import type { AppContext } from './context.js';
import type { RecordRow } from '../journal/types.js';
import { FILE_META } from '../journal/policy.js';
import { PushReason, reasonOfRecord } from '../shared/reason.js';
import type { CommandIo } from './with-app.js';
import { sentAsSession } from '../wms/targets.js';

/** Held stock sync rows: held because other rows of their file were rejected. */
export function heldSyncRows(rows: readonly RecordRow[]): RecordRow[] {
  return rows.filter((r) => sentAsSession(r.target) && r.status === 'held' && reasonOfRecord(r)?.code === PushReason.STOCK_SYNC_NOT_SENT);
}

function operator(): string {
  try {
    return userInfo().username;
  } catch {
    return 'unknown';
  }
}

/**
 * Shows the decision for each file of `chosen` and, with `yes`, journals it. Returns the rows to requeue and send
 * (none without --yes, or when no chosen row is a held stock sync row).
 */
export async function decideSendValid(ctx: AppContext, chosen: readonly RecordRow[], yes: boolean, io: CommandIo): Promise<RecordRow[]> {
  const held = heldSyncRows(chosen);
  if (held.length === 0) {
    io.stderr.write('--send-valid: none of these records is a stock sync held for rejected rows (see --list)\n');
    return [];
  }
  const byFile = new Map<number, RecordRow[]>();
  for (const r of held) byFile.set(r.fileId, [...(byFile.get(r.fileId) ?? []), r]);
  for (const [fileId, rows] of byFile) {
    const file = await ctx.journal.getFile(fileId);
    const rejected = await ctx.journal.listRecords({ fileIds: [fileId], statuses: ['rejected'], withoutRaw: true });
    const lines = rejected.map((r) => r.source.line).slice(0, 20);
    io.stdout.write(
      `stock sync ${file?.name ?? `#${fileId}`} (file #${fileId}): ${rejected.length} row(s) rejected (line(s) ${lines.join(', ')}${rejected.length > lines.length ? ', ...' : ''}), ` +
        `${rows.length} valid row(s) held.\n  Sent without the rejected rows, the session leaves their products out: the interface does not say what a WMS does ` +
        `with the stock of a product missing from a session (it may zero it).\n`,
    );
    if (yes)
      await ctx.journal.setMeta(
        FILE_META.sendValid(fileId),
        JSON.stringify({ by: `operator ${operator()} (resolve --send-valid)`, at: new Date().toISOString() }),
      );
  }
  if (!yes) {
    io.stdout.write('nothing sent: add --yes to send these stock syncs without their rejected rows\n');
    return [];
  }
  return held;
}
