/**
 * How the PostgreSQL store commits a batch of the send loop's writes (markSending, settle, putXref, deleteXref,
 * putXrefFields); the policy (policy.ts) gathers the batches (group-commit.ts).
 *
 * One record's send cycle was four autocommit statements, each a round trip and a WAL flush; profiled over
 * 20,000 sends against a local server, the socket writes alone took 43 % of the run's wall time. Here the
 * writes issued while no batch is committing form the next batch, applied by ONE statement (the function
 * apply_writes, migration 5): each run of same-kind writes is one set-based statement inside it, in the order
 * the writes were issued. Each caller's promise resolves after the commit, so a 'sending' mark is durable before
 * its request leaves; a write whose record does not exist fails alone (the function returns the ids it matched),
 * the others commit.
 */
import type { QueryResult, QueryResultRow } from 'pg';
import type { WriteOutcome } from './group-commit.js';
import type { JournalWrite } from './store.js';

/** A query with cleaned parameters; a `name` prepares it once per connection. */
export type Run = <R extends QueryResultRow = QueryResultRow>(sql: string, params?: unknown[], name?: string) => Promise<QueryResult<R>>;

/** The writes this store group-commits (webhook events and their delivery marks are not: see postgres.ts). */
export type PgWrite = Exclude<JournalWrite, { kind: 'addWebhookEvent' | 'markWebhookDelivered' }>;

/**
 * The send loop's batches commit one at a time, in the order they were issued (Journal.queuedWritesInOrder): a
 * record then gives its send-window place back as soon as its settle is issued, and the next record's 'sending'
 * mark joins the same batch (push/record.ts afterSent). With 4 batches in parallel (until 2026-11-27) a later
 * batch could commit first, so the place waited for the settle's commit and the mark took a commit of its own:
 * 1.4 to 1.65 statements a record at concurrency 8. One at a time: 0.63 a record; 3 instances on one file at
 * 20 ms, concurrency 8: 551-618 -> 710-723 records/s; one instance at concurrency 32: 1.09 x faster, 13 % less
 * CPU (farm-bench, 4 alternated pairs); one instance at concurrency 8: unchanged (latency-bound).
 */
export const PG_MAX_BATCHES_IN_FLIGHT = 1;
/**
 * Webhook events' batches committing at once, each on its own pooled connection: each answer waits for its own
 * event's commit, and events have no order to keep.
 */
export const PG_MAX_EVENT_BATCHES_IN_FLIGHT = 4;

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
 * The server-side half (migration 5, postgres.ts): applies the runs of one batch in order, in the one
 * transaction of the statement that calls it, and returns the ids of the records its record writes matched.
 * One call is one round trip: the batch used to be BEGIN, a statement per run and COMMIT, each a round trip;
 * at 20 ms and concurrency 8 a batch holds one record's writes, so the statements, not the rows, were the
 * cost (profiled: socket writes 25 % of the process, the server 2.2 ms of CPU per record).
 * Every statement in it finds its rows through an index (a record by id, an xref or its fields by resource and
 * key); the planner, which guesses 100 rows for a jsonb_to_recordset, chose a hash join over the whole
 * xref_field table for one record's fields (server CPU per record x 4 on 8,000 records): the function runs
 * with scans and hash or merge joins off, so each write is a nested loop over the index, whatever the table's size.
 */
export const PG_APPLY_WRITES_FUNCTION = `
  CREATE FUNCTION S.apply_writes(runs jsonb) RETURNS bigint[] LANGUAGE plpgsql
  SET enable_seqscan = off SET enable_hashjoin = off SET enable_mergejoin = off
  AS $apply$
  DECLARE
    w jsonb;
    matched bigint[] := '{}';
    hit bigint[];
  BEGIN
    FOR i IN 0 .. jsonb_array_length(runs) - 1 LOOP
      w := runs -> i;
      CASE w ->> 'kind'
        WHEN 'markSending' THEN
          WITH u AS (
            UPDATE S.records SET status = 'sending', attempts = attempts + 1, updated_at = now()
             WHERE id = ANY (ARRAY(SELECT jsonb_array_elements_text(w -> 'ids')::bigint)) RETURNING id)
          SELECT array_agg(id) INTO hit FROM u;
          matched := matched || coalesce(hit, '{}');
        WHEN 'settle' THEN
          WITH u AS (
            UPDATE S.records AS r
               SET status = v.status, outcome = v.outcome, error = v.error, reason = v.reason, updated_at = now(),
                   wms_id = CASE WHEN v.keep_wms_id THEN r.wms_id ELSE v.wms_id END
              FROM jsonb_to_recordset(w -> 'rows')
                   AS v(id bigint, status text, outcome text, error text, wms_id text, keep_wms_id boolean, reason text)
             WHERE r.id = v.id RETURNING r.id)
          SELECT array_agg(id) INTO hit FROM u;
          matched := matched || coalesce(hit, '{}');
        WHEN 'putXref' THEN
          INSERT INTO S.xref (resource, key, wms_id, payload_hash, updated_at)
          SELECT v.resource, v.key, v.wms_id, v.payload_hash, now()
            FROM jsonb_to_recordset(w -> 'rows') AS v(resource text, key text, wms_id text, payload_hash text)
          ON CONFLICT (resource, key) DO UPDATE SET wms_id = excluded.wms_id, payload_hash = excluded.payload_hash, updated_at = excluded.updated_at;
        WHEN 'putXrefFields' THEN
          DELETE FROM S.xref_field AS x USING jsonb_to_recordset(w -> 'rows') AS v(resource text, key text)
           WHERE x.resource = v.resource AND x.key = v.key;
          INSERT INTO S.xref_field (resource, field, value, key, updated_at)
          SELECT v.resource, v.field, v.value, v.key, now()
            FROM jsonb_to_recordset(w -> 'fields') AS v(resource text, field text, value text, key text)
          ON CONFLICT (resource, field, value, key) DO UPDATE SET updated_at = excluded.updated_at;
        WHEN 'deleteXref' THEN
          DELETE FROM S.xref AS x USING jsonb_to_recordset(w -> 'rows') AS v(resource text, key text)
           WHERE x.resource = v.resource AND x.key = v.key;
        ELSE
          RAISE EXCEPTION 'apply_writes: unknown write kind %', w ->> 'kind';
      END CASE;
    END LOOP;
    RETURN matched;
  END
  $apply$;
`;

/**
 * A settle that carries its record's cross-reference (Journal.settle's `xref`) as the writes apply_writes knows, in
 * the order the send loop issued them before they were one write: putXref, putXrefFields (when there are fields),
 * settle. The batch's outcomes stay one per write given: a settle's is its record's (matched or not).
 */
export function expandSettles(batch: readonly PgWrite[]): PgWrite[] {
  const writes: PgWrite[] = [];
  for (const w of batch) {
    if (w.kind === 'settle' && w.xref) {
      const { resource, key, wmsId, payloadHash, fields } = w.xref;
      writes.push({ kind: 'putXref', resource, key, wmsId, payloadHash });
      if (fields.length > 0) writes.push({ kind: 'putXrefFields', resource, key, fields });
      writes.push({ kind: 'settle', recordId: w.recordId, result: w.result });
    } else writes.push(w);
  }
  return writes;
}

/** A run's writes sorted by their row (rowOf computed once per write, not twice per comparison). */
function inRowOrder(run: PgWrite[]): PgWrite[] {
  return run
    .map((w) => [rowOf(w), w] as const)
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    .map(([, w]) => w);
}

/** A run as apply_writes reads it (JSON): the writes' columns, rows in lock order. */
function runJson(ws: PgWrite[]): Record<string, unknown> {
  const first = ws[0]!;
  switch (first.kind) {
    case 'markSending':
      return { kind: first.kind, ids: ws.map((w) => (w as Extract<PgWrite, { kind: 'markSending' }>).recordId) };
    case 'settle':
      return {
        kind: first.kind,
        rows: (ws as Array<Extract<PgWrite, { kind: 'settle' }>>).map((w) => ({
          id: w.recordId,
          status: w.result.status,
          outcome: w.result.outcome,
          error: w.result.error ?? null,
          wms_id: w.result.wmsId ?? null,
          keep_wms_id: w.result.wmsId === undefined,
          reason: w.result.reason ? JSON.stringify(w.result.reason) : null,
        })),
      };
    case 'putXref':
      return {
        kind: first.kind,
        rows: (ws as Array<Extract<PgWrite, { kind: 'putXref' }>>).map((w) => ({
          resource: w.resource,
          key: w.key,
          wms_id: w.wmsId,
          payload_hash: w.payloadHash,
        })),
      };
    case 'putXrefFields': {
      const f = ws as Array<Extract<PgWrite, { kind: 'putXrefFields' }>>;
      return {
        kind: first.kind,
        rows: f.map((w) => ({ resource: w.resource, key: w.key })),
        fields: f.flatMap((w) => w.fields.map(([field, value]) => ({ resource: w.resource, field, value, key: w.key }))),
      };
    }
    case 'deleteXref':
      return {
        kind: first.kind,
        rows: (ws as Array<Extract<PgWrite, { kind: 'deleteXref' }>>).map((w) => ({ resource: w.resource, key: w.key })),
      };
  }
}

/** NUL is not allowed in PostgreSQL text or jsonb: it becomes U+FFFD (a text parameter needs nothing more). */
export function withoutNul(v: string): string {
  return v.includes('\u0000') ? v.replaceAll('\u0000', '\uFFFD') : v;
}

/**
 * A string for apply_writes' jsonb: without NUL, and a lone UTF-16 surrogate (a message cut inside an emoji), which
 * jsonb refuses, becomes U+FFFD as UTF-8 encoding makes it for a text parameter.
 */
function jsonText(v: string): string {
  const s = withoutNul(v);
  return s.isWellFormed() ? s : s.toWellFormed();
}

/**
 * Applies one batch in one statement (apply_writes on the schema `S`): one outcome per write; throws when the
 * statement failed as a whole (nothing of the batch is applied). The policy (policy.ts) gathers the batches and
 * names the errors.
 */
export function createPgBatchCommit(opts: {
  /** one autocommit statement */
  q: Run;
  /** the quoted schema */
  S: string;
}): (batch: JournalWrite[]) => Promise<WriteOutcome[]> {
  const { q, S } = opts;
  const sql = `SELECT ${S}.apply_writes($1::jsonb) AS matched`;

  return async (all: JournalWrite[]): Promise<WriteOutcome[]> => {
    const batch = all.map((w) => {
      if (w.kind === 'addWebhookEvent' || w.kind === 'markWebhookDelivered') throw new Error(`${w.kind} is not group-committed on PostgreSQL`);
      return w;
    });
    const writes = expandSettles(batch);
    // a run's rows are distinct, so each run is applied in row order: batches committing in parallel then lock
    // shared rows (two records with one ERP key) in the same order and cannot deadlock
    const runs = splitRuns(writes).map((run) => runJson(inRowOrder(run)));
    const json = JSON.stringify(runs, (_k, v: unknown) => (typeof v === 'string' ? jsonText(v) : v));
    const r = await q<{ matched: string[] | null }>(sql, [json], 'applyWrites');
    // a record either exists for the whole statement or not (no write of a batch adds or removes one)
    const matched = new Set((r.rows[0]?.matched ?? []).map(Number));
    return batch.map((w) =>
      (w.kind === 'markSending' || w.kind === 'settle') && !matched.has(w.recordId)
        ? { ok: false, error: new Error(`record ${w.recordId} not found`) }
        : { ok: true, value: undefined },
    );
  };
}
