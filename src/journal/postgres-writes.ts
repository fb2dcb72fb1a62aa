/**
 * How the PostgreSQL store commits a batch of the send loop's writes (markSending, settle, putXref, deleteXref,
 * putXrefFields); the policy (policy.ts) gathers the batches (group-commit.ts).
 *
 * One record's send cycle was four autocommit statements, each a round trip and a WAL flush; profiled over
 * 20,000 sends against a local server, the socket writes alone took 43 % of the run's wall time. Here the
 * writes issued while no batch is committing form the next batch: one transaction on one connection, with
 * each run of same-kind writes applied as ONE set-based statement (unnest of arrays), in the order they were
 * issued. Each caller's promise resolves after the commit, so a 'sending' mark is durable before its request
 * leaves; a write whose record does not exist fails alone (RETURNING tells which), the others commit.
 */
import type { QueryResult, QueryResultRow } from 'pg';
import type { WriteOutcome } from './group-commit.js';
import type { JournalWrite } from './store.js';

/** A query with cleaned parameters; a `name` prepares it once per connection. */
export type Run = <R extends QueryResultRow = QueryResultRow>(sql: string, params?: unknown[], name?: string) => Promise<QueryResult<R>>;

/** The writes this store group-commits (webhook events and their delivery marks are not: see postgres.ts). */
export type PgWrite = Exclude<JournalWrite, { kind: 'addWebhookEvent' | 'markWebhookDelivered' }>;

/**
 * Batches committing at once, each on its own pooled connection. One batch at a time left the send loop waiting on a network store (each
 * batch is several round trips plus the WAL flush); a few in parallel keep the marks ahead of the requests.
 * Writes to the same row in different batches: a later write is issued after the earlier one's promise
 * resolved (the send loop awaits each step), so parallel batches never reorder one record's writes.
 */
export const PG_MAX_BATCHES_IN_FLIGHT = 4;

/** the identity of a write's target row: a run never holds two writes to the same row */
const rowOf = (w: PgWrite): string =>
  w.kind === 'markSending' || w.kind === 'settle'
    ? `r${String(w.recordId).padStart(16, '0')}`
    : w.kind === 'putXrefFields'
      ? `f${w.resource}\u0000${w.key}`
      : `x${w.resource}\u0000${w.key}`;

/**
 * Consecutive writes of one kind to distinct rows: each run is one statement, and runs apply in issue order,
 * so a later write to the same row always lands after an earlier one.
 */
export function splitRuns(batch: readonly PgWrite[]): PgWrite[][] {
  const runs: PgWrite[][] = [];
  let run: PgWrite[] = [];
  let rows = new Set<string>();
  for (const w of batch) {
    const row = rowOf(w);
    if (run.length > 0 && (run[0]!.kind !== w.kind || rows.has(row))) {
      runs.push(run);
      run = [];
      rows = new Set();
    }
    run.push(w);
    rows.add(row);
  }
  if (run.length > 0) runs.push(run);
  return runs;
}

/**
 * Applies one batch in one transaction (`tx`) on the schema `S`: one outcome per write; throws when the
 * transaction failed as a whole. The policy (policy.ts) gathers the batches and names the errors.
 */
export function createPgBatchCommit(opts: {
  /** runs fn in one transaction on one connection */
  tx: <T>(fn: (run: Run) => Promise<T>) => Promise<T>;
  /** the quoted schema */
  S: string;
}): (batch: JournalWrite[]) => Promise<WriteOutcome[]> {
  const { S } = opts;

  /**
   * Applies one run; returns the record ids (for record writes) that matched a row. A run's rows are distinct,
   * so it is applied in row order: batches committing in parallel then lock shared rows (two records with one
   * ERP key) in the same order and cannot deadlock.
   */
  async function applyRun(run: Run, unordered: PgWrite[]): Promise<Set<number> | null> {
    const ws = [...unordered].sort((a, b) => (rowOf(a) < rowOf(b) ? -1 : rowOf(a) > rowOf(b) ? 1 : 0));
    const first = ws[0]!;
    if (first.kind === 'markSending') {
      const ids = ws.map((w) => (w as Extract<PgWrite, { kind: 'markSending' }>).recordId);
      const r = await run<{ id: number }>(
        `UPDATE ${S}.records SET status = 'sending', attempts = attempts + 1, updated_at = now() WHERE id = ANY($1::bigint[]) RETURNING id`,
        [ids],
        'batchMarkSending',
      );
      return new Set(r.rows.map((x) => Number(x.id)));
    }
    if (first.kind === 'settle') {
      const s = ws as Array<Extract<PgWrite, { kind: 'settle' }>>;
      const r = await run<{ id: number }>(
        `UPDATE ${S}.records AS r
            SET status = v.status, outcome = v.outcome, error = v.error, reason = v.reason, updated_at = now(),
                wms_id = CASE WHEN v.keep_wms_id THEN r.wms_id ELSE v.wms_id END
           FROM unnest($1::bigint[], $2::text[], $3::text[], $4::text[], $5::text[], $6::boolean[], $7::text[])
                AS v(id, status, outcome, error, wms_id, keep_wms_id, reason)
          WHERE r.id = v.id
          RETURNING r.id`,
        [
          s.map((w) => w.recordId),
          s.map((w) => w.result.status),
          s.map((w) => w.result.outcome),
          s.map((w) => w.result.error ?? null),
          s.map((w) => w.result.wmsId ?? null),
          s.map((w) => w.result.wmsId === undefined),
          s.map((w) => (w.result.reason ? JSON.stringify(w.result.reason) : null)),
        ],
        'batchSettle',
      );
      return new Set(r.rows.map((x) => Number(x.id)));
    }
    if (first.kind === 'putXref') {
      const p = ws as Array<Extract<PgWrite, { kind: 'putXref' }>>;
      await run(
        `INSERT INTO ${S}.xref (resource, key, wms_id, payload_hash, updated_at)
         SELECT v.resource, v.key, v.wms_id, v.payload_hash, now()
           FROM unnest($1::text[], $2::text[], $3::text[], $4::text[]) AS v(resource, key, wms_id, payload_hash)
         ON CONFLICT (resource, key) DO UPDATE SET wms_id = excluded.wms_id, payload_hash = excluded.payload_hash, updated_at = excluded.updated_at`,
        [p.map((w) => w.resource), p.map((w) => w.key), p.map((w) => w.wmsId), p.map((w) => w.payloadHash)],
        'batchPutXref',
      );
      return null;
    }
    if (first.kind === 'putXrefFields') {
      const f = ws as Array<Extract<PgWrite, { kind: 'putXrefFields' }>>;
      await run(
        `DELETE FROM ${S}.xref_field AS x USING unnest($1::text[], $2::text[]) AS v(resource, key) WHERE x.resource = v.resource AND x.key = v.key`,
        [f.map((w) => w.resource), f.map((w) => w.key)],
        'batchDeleteXrefFields',
      );
      const rows = f.flatMap((w) => w.fields.map(([field, value]) => [w.resource, field, value, w.key] as const));
      if (rows.length) {
        await run(
          `INSERT INTO ${S}.xref_field (resource, field, value, key, updated_at)
           SELECT v.resource, v.field, v.value, v.key, now() FROM unnest($1::text[], $2::text[], $3::text[], $4::text[]) AS v(resource, field, value, key)
           ON CONFLICT (resource, field, value, key) DO UPDATE SET updated_at = excluded.updated_at`,
          [rows.map((r) => r[0]), rows.map((r) => r[1]), rows.map((r) => r[2]), rows.map((r) => r[3])],
          'batchPutXrefFields',
        );
      }
      return null;
    }
    const d = ws as Array<Extract<PgWrite, { kind: 'deleteXref' }>>;
    await run(
      `DELETE FROM ${S}.xref AS x USING unnest($1::text[], $2::text[]) AS v(resource, key) WHERE x.resource = v.resource AND x.key = v.key`,
      [d.map((w) => w.resource), d.map((w) => w.key)],
      'batchDeleteXref',
    );
    return null;
  }

  return async (all: JournalWrite[]): Promise<WriteOutcome[]> => {
    const batch = all.map((w) => {
      if (w.kind === 'addWebhookEvent' || w.kind === 'markWebhookDelivered') throw new Error(`${w.kind} is not group-committed on PostgreSQL`);
      return w;
    });
    const missing = new Set<number>(); // indexes into batch
    await opts.tx(async (run) => {
      let i = 0;
      for (const ws of splitRuns(batch)) {
        const first = i;
        i += ws.length;
        const matched = await applyRun(run, ws);
        if (matched) ws.forEach((w, k) => !matched.has((w as { recordId: number }).recordId) && missing.add(first + k));
      }
    });
    return batch.map((w, i) =>
      missing.has(i) ? { ok: false, error: new Error(`record ${(w as { recordId: number }).recordId} not found`) } : { ok: true, value: undefined },
    );
  };
}
