/**
 * The shared journal: PostgreSQL (pg 8), for several wmsbridge instances working one set of channels.
 *
 * - This module is the store: SQL and transactions; the rules are policy.ts's, the same as for
 *   src/journal/sqlite.ts (the contract suite test/contract/journal.test.ts runs against both). Every table lives in one schema (option `schema`, default 'wmsbridge').
 * - Schema versioned in `<schema>.schema_version`; MIGRATIONS are applied in order in one transaction
 *   that holds pg_advisory_xact_lock(hash('migrate', schema)), so instances starting together do not
 *   race (the second waits, then sees the schema up to date).
 * - Times are the SERVER's clock (now()): leases compare against one clock whatever the instances'
 *   clocks say. They come out as ISO strings (ms precision), as in the SQLite store.
 * - payload, source and raw are `json`, not jsonb: json keeps the text as written (the key order of a
 *   payload, and of the `fields` rows journaled before 2026-11-27 kept, is the mapping's) and accepts the
 *   \u0000 escape (jsonb refuses it: a NUL-padded field would fail the whole batch). No method
 *   queries inside them, so jsonb's indexing would buy nothing.
 * - Atomicity across instances: addFile serialises same-content adds on an advisory lock keyed by the
 *   sha256 (so exactly one of two racing copies is 'claimed'); acquireFileLease is one conditional
 *   UPDATE; webhook dedup is INSERT ... ON CONFLICT DO NOTHING RETURNING; compareAndSetMeta is one
 *   conditional statement; tryLeaderLock is pg_try_advisory_lock on a dedicated connection.
 * - Messages name `postgres://host[:port]/db`, never the user or the password.
 */
import pg from 'pg';
import type { QueryConfig, ClientConfig } from 'pg';
import { createHash } from 'node:crypto';
import { isBridgeError, errorMessage } from '../shared/errors.js';
import { JournalError } from './errors.js';
import { createPgBatchCommit, PG_MAX_BATCHES_IN_FLIGHT, PG_MAX_EVENT_BATCHES_IN_FLIGHT, withoutNul, type Run } from './postgres-writes.js';
import {
  linkedRecordId,
  recordColumns,
  recordSelectList,
  toFileRow,
  toRecordRow,
  toWebhook,
  toWebhookStored,
  toXref,
  type FileDbRow,
  type RecordDbRow,
  type WebhookDbRow,
  type WebhookLinkDbRow,
  type XrefDbRow,
} from './rows.js';
import { createJournal } from './policy.js';
import { migrationsOf } from './migrations.js';
import type { WriteOutcome } from './group-commit.js';
import type { FileInsert, JournalStore, JournalWrite, NewWebhookEvent, PruneRule, StoreLeaderLock, StoreRecordQuery } from './store.js';
import type { FileRow, FileStatus, Journal, NewRecord, RecordRow, RecordStatus, WebhookEventRow, WebhookEventStored, XrefEntry } from './types.js';
import type { RefResource, Target } from '../wms/targets.js';

const { Pool, Client } = pg;

/** records inserted by one process before it first analyzes the records table (PostgresStore.analyzeRecords) */
export const PG_ANALYZE_FIRST_AT = 5_000;
/** the columns of records the journal's queries select on: the planner's statistics (the JSON texts need none) */
const PG_ANALYZED_RECORD_COLUMNS = 'id, file_id, status, target, key, claim_owner, claim_until, wms_id';

/**
 * A page's cross-reference entries, one primary-key lookup per key. With `key = ANY($2)` the planner read the
 * resource's whole range and filtered it by the keys while the table had no statistics (a fresh schema's
 * cross-reference grows from nothing during a run and autovacuum analyzes it late; without statistics the planner
 * guesses that 0.5 % of the rows hold the resource): 7.9 ms a read at 20,000 entries instead of ~0.2 ms, a third
 * of the server's time in a 20,000-category run. A LATERAL subquery with a LIMIT is not flattened into a join, so
 * each key is its own index lookup whatever the statistics say (test/unit/postgres-plans.test.ts). The keys must be
 * distinct (getXrefs makes them so): a key given twice would be answered twice.
 */
export const pgGetXrefsSql = (S: string): string =>
  `SELECT x.* FROM unnest($2::text[]) AS k(key) CROSS JOIN LATERAL (SELECT * FROM ${S}.xref WHERE resource = $1 AND key = k.key LIMIT 1) x`;

export interface PostgresJournalOptions {
  /** connection URL: postgres://user@host:port/db (a password in it works, but prefer `password`) */
  url: string;
  /** password, kept out of the URL (and out of every message) */
  password?: string;
  /**
   * schema holding the tables (created if missing): one schema per wmsbridge cluster
   * @default 'wmsbridge'
   */
  schema?: string;
  /**
   * connections in the pool (leader locks use their own connections, outside the pool)
   * @default 10
   */
  poolSize?: number;
  /**
   * how long to wait for a connection (ms)
   * @default 10000
   */
  connectTimeoutMs?: number;
}

const sqlList = (values: readonly string[]): string => values.map((v) => `'${v}'`).join(', ');

/** Records per INSERT statement in addRecords (a batch larger than this is several statements, one transaction). */
const INSERT_CHUNK = 5000;
/** records deleted a transaction by retention's prune (a few hundred ms of the server's time each) */
export const PG_PRUNE_SLICE = 10_000;

/**
 * PostgreSQL's migrations (migrations.ts, the plan both stores share), applied in order; `S` is replaced by the quoted
 * schema name. Index i brings the schema from version i to version i + 1.
 */
export const PG_MIGRATIONS: readonly string[] = migrationsOf('postgres');

export const PG_SCHEMA_VERSION = PG_MIGRATIONS.length;

/** A 64-bit advisory-lock key (as a decimal string) for a name: sha256, first 8 bytes, signed. */
export function advisoryKey(...parts: string[]): string {
  return createHash('sha256').update(parts.join('\u0000')).digest().readBigInt64BE(0).toString();
}

/** The advisory-lock key of tryLeaderLock(name) on `schema` (for operators: pg_locks shows it). */
export function leaderLockKey(schema: string, name: string): string {
  return advisoryKey('wmsbridge:leader', schema, name);
}

/** 'postgres://host[:port]/db' for messages: never the user or the password. */
export function describePostgresUrl(url: string): string {
  try {
    const u = new URL(url);
    const db = decodeURIComponent(u.pathname.replace(/^\//, '')) || '(default db)';
    return `postgres://${u.hostname || 'localhost'}${u.port ? `:${u.port}` : ''}/${db}`;
  } catch {
    return 'postgres://(unparseable url)';
  }
}

const SCHEMA_NAME = /^[a-z_][a-z0-9_]{0,62}$/;

// ---- rows ----------------------------------------------------------------------------------------

/** pg parses json columns */
type PgRecordRow = RecordDbRow<unknown>;
const fromPg = (r: PgRecordRow): RecordRow => toRecordRow(r, (v) => v);

/** bigint (int8) as a JS number (ids and counts stay far below 2^53); timestamptz as an ISO string. */
const OID_INT8 = 20;
const OID_TIMESTAMPTZ = 1184;
const parseTimestamptz = pg.types.getTypeParser(OID_TIMESTAMPTZ) as (value: string) => Date;
const typeParsers = {
  getTypeParser: ((oid: number, format?: string) => {
    if (oid === OID_INT8) return (v: string) => Number(v);
    if (oid === OID_TIMESTAMPTZ) return (v: string) => parseTimestamptz(v).toISOString();
    return pg.types.getTypeParser(oid, format as 'text');
  }) as typeof pg.types.getTypeParser,
};

/**
 * PostgreSQL text cannot hold U+0000 (legacy fixed-width exports do pad with NUL): in text columns it
 * is stored as U+FFFD, in lookups too, so a key with a NUL still finds itself. JSON columns keep it
 * (JSON.stringify writes it as the escape \u0000, which the json type accepts; jsonb would not). A lone
 * surrogate needs nothing here: encoding the parameter as UTF-8 makes it U+FFFD.
 */
function cleanParam(v: unknown): unknown {
  if (typeof v === 'string') return withoutNul(v);
  if (Array.isArray(v)) return v.map(cleanParam);
  return v;
}

/** 'ttl ms from now' on the server clock */
const LEASE_EXPR = (param: string): string => `now() + ${param}::bigint * interval '1 millisecond'`;

/** Opens the PostgreSQL journal, creating the schema and applying migrations as needed. */
export async function createPostgresJournal(options: PostgresJournalOptions): Promise<Journal> {
  const location = describePostgresUrl(options.url);
  const schema = options.schema ?? 'wmsbridge';
  if (!SCHEMA_NAME.test(schema)) {
    throw new JournalError(`journal ${location}: schema ${JSON.stringify(schema)} is not a plain lower-case SQL name (a-z, 0-9, _)`);
  }
  const config: ClientConfig = {
    connectionString: options.url,
    connectionTimeoutMillis: options.connectTimeoutMs ?? 10_000,
    application_name: 'wmsbridge',
    types: typeParsers,
  };
  if (options.password !== undefined) config.password = options.password;
  const pool = new Pool({ ...config, max: options.poolSize ?? 10 });
  // an idle client losing its connection must not crash the process; the next query reports it
  pool.on('error', () => {});
  try {
    await migrate(pool, schema, location);
  } catch (err) {
    await pool.end().catch(() => {});
    if (isBridgeError(err)) throw err;
    const hint = /ECONNREFUSED|ENOTFOUND|EHOSTUNREACH|timeout/i.test(errorMessage(err)) ? ' (is PostgreSQL running and reachable?)' : '';
    throw new JournalError(`journal ${location}: cannot open: ${errorMessage(err)}${hint}`, { cause: err });
  }
  return createJournal(new PostgresStore(pool, config, schema, location));
}

async function migrate(pool: pg.Pool, schema: string, location: string): Promise<void> {
  const S = `"${schema}"`;
  const client = await pool.connect();
  try {
    await client.query('BEGIN');
    await client.query('SELECT pg_advisory_xact_lock($1::bigint)', [advisoryKey('wmsbridge:migrate', schema)]);
    // only create a missing schema: a pre-created one needs no CREATE privilege on the database
    const exists = await client.query('SELECT 1 FROM pg_namespace WHERE nspname = $1', [schema]);
    if (exists.rowCount === 0) await client.query(`CREATE SCHEMA ${S}`);
    await client.query(`CREATE TABLE IF NOT EXISTS ${S}.schema_version (version INTEGER NOT NULL, applied_at TIMESTAMPTZ NOT NULL)`);
    const current = (await client.query<{ v: number | null }>(`SELECT MAX(version) AS v FROM ${S}.schema_version`)).rows[0]?.v ?? 0;
    if (current > PG_SCHEMA_VERSION) {
      throw new JournalError(
        `journal ${location}: schema ${schema} is at version ${current}, newer than this wmsbridge supports (${PG_SCHEMA_VERSION}); upgrade wmsbridge or use another schema`,
      );
    }
    for (let v = current; v < PG_SCHEMA_VERSION; v++) {
      await client.query((PG_MIGRATIONS[v] as string).replace(/\bS\./g, `${S}.`));
      await client.query(`INSERT INTO ${S}.schema_version (version, applied_at) VALUES ($1, now())`, [v + 1]);
    }
    await client.query('COMMIT');
  } catch (err) {
    await client.query('ROLLBACK').catch(() => {});
    throw err;
  } finally {
    client.release();
  }
}

/** `status IN (...)` of a fixed list, inlined (the statement text stays one per list). */
const inList = (values: readonly string[]): string => `(${sqlList(values)})`;

/** The PostgreSQL store: SQL and transactions only (policy.ts decides). */
class PostgresStore implements JournalStore {
  /** the send loop's batches commit one at a time, in issue order (postgres-writes.ts) */
  readonly maxBatchesInFlight = PG_MAX_BATCHES_IN_FLIGHT;
  /** webhook events' batches, several at once on pooled connections */
  readonly maxEventBatchesInFlight = PG_MAX_EVENT_BATCHES_IN_FLIGHT;
  /** several instances share the schema */
  readonly sharedByProcesses = true;
  /** one batch at a time: a write never commits before one issued earlier */
  readonly queuedWritesInOrder = true;
  /** webhook events are gathered apart from the send loop's writes: insertWebhookEvents */
  readonly groupCommitsWebhookEvents = false;
  /** dedicated connections holding leader locks, ended at close */
  private readonly leaderClients = new Set<pg.Client>();
  /** records this process inserted, and the count at which it next analyzes the table (analyzeRecords) */
  private inserted = 0;
  private analyzeAt = PG_ANALYZE_FIRST_AT;
  private readonly S: string;
  /** the send loop's writes: one batch, one transaction (postgres-writes.ts) */
  readonly commitWrites: (batch: JournalWrite[]) => Promise<WriteOutcome[]>;

  constructor(
    private readonly pool: pg.Pool,
    private readonly config: ClientConfig,
    private readonly schema: string,
    readonly location: string,
  ) {
    this.S = `"${schema}"`;
    this.commitWrites = createPgBatchCommit({ q: this.q, S: this.S });
  }

  /** a named query is prepared once per connection (the hot ones: parse and plan once, not per call) */
  private queryConfig(sql: string, params: unknown[], name?: string): QueryConfig<unknown[]> {
    return name ? { name: `${name}:${this.schema}`, text: sql, values: params.map(cleanParam) } : { text: sql, values: params.map(cleanParam) };
  }

  private readonly q: Run = (sql, params = [], name) => this.pool.query(this.queryConfig(sql, params, name));

  private async tx<T>(fn: (c: Run) => Promise<T>): Promise<T> {
    const client = await this.pool.connect();
    const run: Run = (sql, params = [], name) => client.query(this.queryConfig(sql, params, name));
    try {
      await client.query('BEGIN');
      const out = await fn(run);
      await client.query('COMMIT');
      return out;
    } catch (err) {
      await client.query('ROLLBACK').catch(() => {});
      throw err;
    } finally {
      client.release();
    }
  }

  // ---- files and leases ------------------------------------------------------------------------

  insertFile(insert: FileInsert): Promise<FileRow> {
    const { S } = this;
    const f = insert.file;
    const leased = insert.leaseTtlMs !== null;
    return this.tx(async (c) => {
      // two instances adding the same content at once: the second waits here, then sees the first
      await c('SELECT pg_advisory_xact_lock($1::bigint)', [advisoryKey('wmsbridge:file', this.schema, f.sha256)]);
      let duplicateOf: number | null = null;
      if (insert.duplicateAmong) {
        const earlier = await c<{ id: number }>(
          `SELECT id FROM ${S}.files WHERE sha256 = $1 AND status IN ${inList(insert.duplicateAmong)} ORDER BY id LIMIT 1`,
          [f.sha256],
        );
        duplicateOf = earlier.rows[0]?.id ?? null;
      }
      const r = await c<FileDbRow>(
        `INSERT INTO ${S}.files (channel, name, path, size, sha256, status, duplicate_of, run_id, owner, lease_until, created_at, updated_at)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, ${leased ? LEASE_EXPR('$10') : 'NULL'}, now(), now())
         RETURNING *`,
        [
          ...[f.channel, f.name, f.path, f.size, f.sha256, insert.statusFor(duplicateOf), duplicateOf, f.runId, f.owner ?? null],
          ...(leased ? [Math.round(insert.leaseTtlMs as number)] : []),
        ],
      );
      return toFileRow(r.rows[0] as FileDbRow);
    });
  }

  async getFile(id: number): Promise<FileRow | undefined> {
    const r = (await this.q<FileDbRow>(`SELECT * FROM ${this.S}.files WHERE id = $1`, [id])).rows[0];
    return r ? toFileRow(r) : undefined;
  }

  async countFilesByStatus(): Promise<Array<{ status: FileStatus; n: number }>> {
    return (await this.q<{ status: FileStatus; n: number }>(`SELECT status, COUNT(*)::int AS n FROM ${this.S}.files GROUP BY status`)).rows;
  }

  async listFiles(query: { statuses?: FileStatus[]; channel?: string; runId?: string }): Promise<FileRow[]> {
    const conds: string[] = [];
    const params: unknown[] = [];
    if (query.statuses) {
      params.push(query.statuses);
      conds.push(`status = ANY($${params.length}::text[])`);
    }
    if (query.channel !== undefined) {
      params.push(query.channel);
      conds.push(`channel = $${params.length}`);
    }
    if (query.runId !== undefined) {
      params.push(query.runId);
      conds.push(`run_id = $${params.length}`);
    }
    const where = conds.length ? `WHERE ${conds.join(' AND ')}` : '';
    return (await this.q<FileDbRow>(`SELECT * FROM ${this.S}.files ${where} ORDER BY id`, params)).rows.map(toFileRow);
  }

  async updateFile(id: number, columns: ReadonlyArray<readonly [string, unknown]>): Promise<boolean> {
    const sets = [...columns.map(([col], i) => `${col} = $${i + 1}`), 'updated_at = now()'];
    const params = [...columns.map(([, v]) => v), id];
    const r = await this.q(`UPDATE ${this.S}.files SET ${sets.join(', ')} WHERE id = $${params.length}`, params);
    return (r.rowCount ?? 0) > 0;
  }

  async takeLease(fileId: number, owner: string, ttlMs: number): Promise<boolean> {
    // concurrent UPDATEs of one row serialise on its row lock; the loser re-checks the WHERE
    // against the winner's row and matches nothing: exactly one wins
    const r = await this.q(
      `UPDATE ${this.S}.files SET owner = $2, lease_until = ${LEASE_EXPR('$3')}, updated_at = now()
       WHERE id = $1 AND (owner IS NULL OR owner = $2 OR lease_until < now())
       RETURNING id`,
      [fileId, owner, Math.round(ttlMs)],
    );
    return r.rowCount === 1;
  }

  async fileExists(fileId: number): Promise<boolean> {
    return (await this.q(`SELECT 1 FROM ${this.S}.files WHERE id = $1`, [fileId])).rowCount !== 0;
  }

  async renewLeases(owner: string, ttlMs: number, statuses: readonly FileStatus[]): Promise<number> {
    const r = await this.q(
      `UPDATE ${this.S}.files SET lease_until = ${LEASE_EXPR('$2')}, updated_at = now() WHERE owner = $1 AND status IN ${inList(statuses)}`,
      [owner, Math.round(ttlMs)],
    );
    return r.rowCount ?? 0;
  }

  async releaseLease(fileId: number, owner: string): Promise<void> {
    await this.q(`UPDATE ${this.S}.files SET owner = NULL, lease_until = NULL, updated_at = now() WHERE id = $1 AND owner = $2`, [fileId, owner]);
  }

  async listLeasable(owner: string, statuses: readonly FileStatus[]): Promise<FileRow[]> {
    const sql = `SELECT * FROM ${this.S}.files WHERE status IN ${inList(statuses)} AND (owner IS NULL OR owner = $1 OR lease_until < now()) ORDER BY id`;
    return (await this.q<FileDbRow>(sql, [owner])).rows.map(toFileRow);
  }

  /**
   * A session-level advisory lock lives as long as its connection: a dedicated client (not the pool,
   * which would hand the session to other queries) held until release or close.
   */
  async tryLeaderLock(name: string): Promise<StoreLeaderLock | null> {
    const client = new Client({ ...this.config, application_name: 'wmsbridge-leader' });
    client.on('error', () => {}); // a dropped connection ends the lock; release() then just closes
    await client.connect();
    const key = leaderLockKey(this.schema, name);
    let granted = false;
    try {
      const r = await client.query<{ ok: boolean }>('SELECT pg_try_advisory_lock($1::bigint) AS ok', [key]);
      granted = r.rows[0]?.ok === true;
    } finally {
      if (!granted) await client.end().catch(() => {});
    }
    if (!granted) return null;
    this.leaderClients.add(client);
    let released = false;
    let lost = false;
    const markLost = (): void => {
      lost = true;
    };
    client.on('error', markLost);
    client.on('end', markLost);
    return {
      isHeld: () => !released && !lost,
      release: async () => {
        if (released) return;
        released = true;
        this.leaderClients.delete(client);
        // ending the session releases the lock even if the unlock itself cannot be sent
        await client.query('SELECT pg_advisory_unlock($1::bigint)', [key]).catch(() => {});
        await client.end().catch(() => {});
      },
    };
  }

  // ---- records ---------------------------------------------------------------------------------

  async countByKey(target: Target, key: string, statuses: readonly RecordStatus[]): Promise<number> {
    const r = await this.q<{ n: number }>(`SELECT COUNT(*) AS n FROM ${this.S}.records WHERE target = $1 AND key = $2 AND status IN ${inList(statuses)}`, [
      target,
      key,
    ]);
    return r.rows[0]?.n ?? 0;
  }

  async insertRecords(fileId: number, records: NewRecord[]): Promise<number> {
    const last = await this.tx(async (c) => {
      let last = 0;
      for (let i = 0; i < records.length; i += INSERT_CHUNK) last = await this.insertChunk(c, fileId, records.slice(i, i + INSERT_CHUNK));
      return last;
    });
    this.inserted += records.length;
    if (this.inserted >= this.analyzeAt) {
      this.analyzeAt = this.inserted * 2;
      await this.analyzeRecords();
    }
    return last;
  }

  /**
   * Statistics for the planner once a big file's records are in, before they are read in pages. A table without
   * statistics (a fresh schema's first big run: autovacuum comes later) makes every record look rare, and the
   * planner read a page of a file (`file_id = $1 AND id > $2 ORDER BY id LIMIT n`) by fetching ALL the file's
   * records after the cursor and sorting them: quadratic in the file (a 60,000-record file's result pages 18 ->
   * 50 ms each, and growing). With statistics it walks an index in id order and stops at the limit. Analyzed at
   * 5,000 records inserted by this process, then each time the count doubles (a few times per run; ANALYZE reads a
   * sample of 30,000 rows: 90 ms on 40,000 records for the columns queries select on, 200 ms for every column, the
   * JSON texts included); SKIP_LOCKED: another instance analyzing it now is enough. A failure only costs speed.
   * Measured, one instance, 60,000 categories at 0 ms: the result pages 50 ms -> out of the slow statements, the
   * four ANALYZEs 0.55 s in all (every column).
   */
  private async analyzeRecords(): Promise<void> {
    await this.pool.query(`ANALYZE (SKIP_LOCKED) ${this.S}.records (${PG_ANALYZED_RECORD_COLUMNS})`).catch(() => undefined);
  }

  /** unnest keeps one statement per chunk whatever its size; ORDER BY ord gives ids in batch order */
  private async insertChunk(c: Run, fileId: number, records: NewRecord[]): Promise<number> {
    const cols: Array<Array<string | null>> = Array.from({ length: 12 }, () => []);
    for (const r of records) recordColumns(r).forEach((v, i) => cols[i]!.push(v));
    const r = await c<{ last: string | number | null }>(
      `WITH ins AS (INSERT INTO ${this.S}.records (file_id, target, op, key, source, mapping, payload, payload_hash, attachment_path, raw, status, error, reason, attempts, updated_at)
       SELECT $1, t.target, t.op, t.key, t.source::json, t.mapping, t.payload::json, t.payload_hash, t.attachment_path, t.raw::json, t.status, t.error, t.reason, 0, now()
       FROM unnest($2::text[], $3::text[], $4::text[], $5::text[], $6::text[], $7::text[], $8::text[], $9::text[], $10::text[], $11::text[], $12::text[], $13::text[])
         WITH ORDINALITY AS t(target, op, key, source, mapping, payload, payload_hash, attachment_path, raw, status, error, reason, ord)
       ORDER BY t.ord
       RETURNING id) SELECT max(id) AS last FROM ins`,
      [fileId, ...cols],
    );
    return Number(r.rows[0]?.last ?? 0);
  }

  deleteUntouchedRecords(fileId: number, untouched: readonly RecordStatus[], afterId: number): Promise<number> {
    return this.tx(async (c) => {
      const touched = await c<{ n: number }>(
        `SELECT COUNT(*) AS n FROM ${this.S}.records WHERE file_id = $1 AND id > $2 AND (status NOT IN ${inList(untouched)} OR attempts > 0)`,
        [fileId, afterId],
      );
      const n = touched.rows[0]?.n ?? 0;
      if (n === 0) await c(`DELETE FROM ${this.S}.records WHERE file_id = $1 AND id > $2`, [fileId, afterId]);
      return n;
    });
  }

  /** the files retention's prune removes (settled, old, nothing waiting) */
  private prunable(rule: PruneRule): string {
    const { S } = this;
    return `SELECT id FROM ${S}.files f WHERE f.updated_at < $1 AND f.status IN ${inList(rule.fileStatuses)}
       AND NOT EXISTS (SELECT 1 FROM ${S}.records r WHERE r.file_id = f.id AND r.status IN ${inList(rule.waitingStatuses)})`;
  }

  async prunableFiles(rule: PruneRule): Promise<number[]> {
    return (await this.q<{ id: string | number }>(this.prunable(rule), [rule.before.toISOString()])).rows.map((r) => Number(r.id));
  }

  readonly pruneSliceRecords = PG_PRUNE_SLICE;

  /** the file row locked (FOR UPDATE) and checked still prunable first: two instances pruning at once take turns on it */
  pruneSlice(rule: PruneRule, id: number): Promise<{ deleted: number; stopped: boolean }> {
    const { S } = this;
    return this.tx(async (c): Promise<{ deleted: number; stopped: boolean }> => {
      if ((await c(`${this.prunable(rule)} AND f.id = $2 FOR UPDATE`, [rule.before.toISOString(), id])).rows.length === 0) return { deleted: 0, stopped: true };
      const slice = (await c<{ id: string | number }>(`SELECT id FROM ${S}.records WHERE file_id = $1 LIMIT $2`, [id, PG_PRUNE_SLICE])).rows.map((r) =>
        Number(r.id),
      );
      await c(`UPDATE ${S}.webhook_events SET record_id = NULL WHERE record_id = ANY($1::bigint[])`, [slice]);
      const deleted = (await c(`DELETE FROM ${S}.records WHERE id = ANY($1::bigint[])`, [slice])).rowCount ?? 0;
      if (deleted < PG_PRUNE_SLICE) {
        await c(`UPDATE ${S}.files SET duplicate_of = NULL WHERE duplicate_of = $1`, [id]);
        await c(`DELETE FROM ${S}.meta WHERE key = ANY($1::text[])`, [rule.metaKeysOf(id)]);
        await c(`DELETE FROM ${S}.files WHERE id = $1`, [id]);
      }
      return { deleted, stopped: false };
    });
  }

  async pruneWebhookEvents(before: Date): Promise<number> {
    const del = await this.q(`DELETE FROM ${this.S}.webhook_events WHERE received_at < $1 AND delivered_at IS NOT NULL`, [before.toISOString()]);
    return del.rowCount ?? 0;
  }

  async listRecords(query: StoreRecordQuery): Promise<RecordRow[]> {
    const { text, values } = pgListRecordsSql(this.S, query);
    return (await this.q<PgRecordRow>(text, values)).rows.map(fromPg);
  }

  async targetsOf(fileIds: number[], statuses: readonly RecordStatus[]): Promise<Target[]> {
    const sql = `SELECT DISTINCT target FROM ${this.S}.records WHERE file_id = ANY($1::bigint[]) AND status = ANY($2::text[])`;
    return (await this.q<{ target: Target }>(sql, [fileIds, [...statuses]], 'targetsOf')).rows.map((r) => r.target);
  }

  async countByStatus(query: StoreRecordQuery): Promise<Array<{ status: RecordStatus; n: number }>> {
    const params: unknown[] = [];
    const where = recordWhere(query, params);
    return (await this.q<{ status: RecordStatus; n: number }>(`SELECT status, COUNT(*) AS n FROM ${this.S}.records ${where} GROUP BY status`, params)).rows;
  }

  async resetRecords(ids: number[], from: readonly RecordStatus[], to: RecordStatus): Promise<number> {
    const r = await this.q(
      `UPDATE ${this.S}.records SET status = $2, outcome = NULL, error = NULL, reason = NULL, updated_at = now()
       WHERE status IN ${inList(from)} AND id = ANY($1::bigint[])`,
      [ids, to],
    );
    return r.rowCount ?? 0;
  }

  async moveStatus(from: RecordStatus, to: RecordStatus, fileIds?: number[]): Promise<number> {
    const sql = `UPDATE ${this.S}.records SET status = $1, claim_owner = NULL, claim_until = NULL, updated_at = now()
       WHERE status = $2 AND (claim_owner IS NULL OR claim_until < now())`;
    const r = fileIds ? await this.q(`${sql} AND file_id = ANY($3::bigint[])`, [to, from, fileIds]) : await this.q(sql, [to, from]);
    return r.rowCount ?? 0;
  }

  async claimRecords(
    fileIds: number[],
    targets: Target[],
    owner: string,
    limit: number,
    ttlMs: number,
    statuses: readonly RecordStatus[],
    afterId: number,
    upTo?: ReadonlyMap<number, number>,
  ): Promise<RecordRow[]> {
    // SKIP LOCKED: a row another claimer has locked in its own statement is passed over, not waited for; a row
    // claimed and committed since this statement's snapshot is re-checked against the WHERE once locked (no longer free).
    // One file per lateral scan: with file_id = ANY(...) the (file, status, id) index cannot hand rows out in id
    // order, so the plan read and sorted every pending record of the file for each claim (quadratic in the file:
    // 1.68 M index entries read for 8,000 records); per file it reads from the cursor and stops at the limit.
    const r = await this.q<PgRecordRow>(
      `WITH c AS (
         SELECT x.id FROM unnest($1::bigint[]) AS f(file_id)
         CROSS JOIN LATERAL (
           SELECT id FROM ${this.S}.records
            WHERE file_id = f.file_id AND status IN ${inList(statuses)} AND id > $6 AND target = ANY($2::text[])
              AND (claim_owner IS NULL OR claim_until < now())${upTo ? ` AND id <= coalesce(($7::jsonb ->> f.file_id::text)::bigint, ${Number.MAX_SAFE_INTEGER})` : ''}
            ORDER BY id LIMIT $4 FOR UPDATE SKIP LOCKED) x
         ORDER BY x.id LIMIT $4)
       UPDATE ${this.S}.records r SET claim_owner = $3, claim_until = ${LEASE_EXPR('$5')} FROM c WHERE r.id = c.id RETURNING ${recordSelectList(true, 'r')}`,
      [[...new Set(fileIds)], targets, owner, limit, Math.round(ttlMs), afterId, ...(upTo ? [JSON.stringify(Object.fromEntries(upTo))] : [])],
      upTo ? 'claimRecordsUpTo' : 'claimRecords',
    );
    return r.rows.map(fromPg).sort((a, b) => a.id - b.id);
  }

  /**
   * SKIP LOCKED: the owner's own group-committed writes (markSending, settle) lock the same rows in their order, a
   * renewal that waited for them while holding others could deadlock with them. A row being written right now is
   * renewed by the next renewal (well within the ttl), or needs none (settled).
   */
  async renewRecordClaims(owner: string, ttlMs: number, statuses: readonly RecordStatus[]): Promise<number> {
    const r = await this.q(
      `WITH c AS (SELECT id FROM ${this.S}.records WHERE claim_owner = $1 AND status IN ${inList(statuses)} FOR UPDATE SKIP LOCKED)
       UPDATE ${this.S}.records r SET claim_until = ${LEASE_EXPR('$2')} FROM c WHERE r.id = c.id`,
      [owner, Math.round(ttlMs)],
    );
    return r.rowCount ?? 0;
  }

  /** SKIP LOCKED as renewRecordClaims: a claim not released now expires */
  async releaseRecordClaims(owner: string, statuses: readonly RecordStatus[], fileIds?: number[]): Promise<number> {
    const files = fileIds ? ' AND file_id = ANY($2::bigint[])' : '';
    const r = await this.q(
      `WITH c AS (SELECT id FROM ${this.S}.records WHERE claim_owner = $1 AND status IN ${inList(statuses)}${files} FOR UPDATE SKIP LOCKED)
       UPDATE ${this.S}.records r SET claim_owner = NULL, claim_until = NULL FROM c WHERE r.id = c.id`,
      fileIds ? [owner, fileIds] : [owner],
    );
    return r.rowCount ?? 0;
  }

  async countClaimedByOthers(fileIds: number[], targets: Target[], owner: string, statuses: readonly RecordStatus[]): Promise<number> {
    const r = await this.q<{ n: string }>(
      `SELECT COUNT(*) AS n FROM ${this.S}.records
       WHERE file_id = ANY($1::bigint[]) AND target = ANY($2::text[]) AND status IN ${inList(statuses)}
         AND claim_owner IS NOT NULL AND claim_owner <> $3 AND claim_until >= now()`,
      [fileIds, targets, owner],
    );
    return Number(r.rows[0]?.n ?? 0);
  }

  async moveExpiredClaims(fileIds: number[], from: RecordStatus, to: RecordStatus): Promise<number> {
    const r = await this.q(
      `UPDATE ${this.S}.records SET status = $2, claim_owner = NULL, claim_until = NULL, updated_at = now()
       WHERE file_id = ANY($1::bigint[]) AND status = $3 AND claim_owner IS NOT NULL AND claim_until < now()`,
      [fileIds, to, from],
    );
    return r.rowCount ?? 0;
  }

  async findLatest(target: Target, key: string, statuses: readonly RecordStatus[], excludeFileId?: number): Promise<RecordRow | undefined> {
    const exclude = excludeFileId !== undefined;
    const r = (
      await this.q<PgRecordRow>(
        `SELECT * FROM ${this.S}.records WHERE target = $1 AND key = $2 AND status IN ${inList(statuses)}${exclude ? ' AND file_id <> $3' : ''}
         ORDER BY id DESC LIMIT 1`,
        exclude ? [target, key, excludeFileId] : [target, key],
      )
    ).rows[0];
    return r ? fromPg(r) : undefined;
  }

  async findRecordByWmsId(wmsId: string): Promise<RecordRow | undefined> {
    const r = (await this.q<PgRecordRow>(`SELECT * FROM ${this.S}.records WHERE id = (${linkedRecordId(`${this.S}.records`, '$1')})`, [wmsId])).rows[0];
    return r ? fromPg(r) : undefined;
  }

  // ---- cross-reference, meta, webhooks ---------------------------------------------------------

  async getXref(resource: RefResource, key: string): Promise<XrefEntry | undefined> {
    const r = (await this.q<XrefDbRow>(`SELECT * FROM ${this.S}.xref WHERE resource = $1 AND key = $2`, [resource, key], 'getXref')).rows[0];
    return r ? toXref(r) : undefined;
  }

  async getXrefs(resource: RefResource, keys: readonly string[]): Promise<XrefEntry[]> {
    const r = await this.q<XrefDbRow>(pgGetXrefsSql(this.S), [resource, [...new Set(keys)]], 'getXrefs');
    return r.rows.map(toXref);
  }

  async xrefKeysByWmsId(resource: RefResource): Promise<Map<string, string>> {
    const r = await this.q<{ wms_id: string; key: string }>(`SELECT wms_id, key FROM ${this.S}.xref WHERE resource = $1`, [resource]);
    return new Map(r.rows.map((x) => [x.wms_id, x.key]));
  }

  async findXrefByField(resource: RefResource, field: string, value: string): Promise<XrefEntry | undefined> {
    const r = (
      await this.q<XrefDbRow>(
        `SELECT x.* FROM ${this.S}.xref_field f JOIN ${this.S}.xref x ON x.resource = f.resource AND x.key = f.key
         WHERE f.resource = $1 AND f.field = $2 AND f.value = $3 ORDER BY f.updated_at DESC, x.updated_at DESC LIMIT 1`,
        [resource, field, value],
      )
    ).rows[0];
    return r ? toXref(r) : undefined;
  }

  async getMeta(key: string): Promise<string | undefined> {
    return (await this.q<{ value: string }>(`SELECT value FROM ${this.S}.meta WHERE key = $1`, [key])).rows[0]?.value;
  }

  async setMeta(key: string, value: string): Promise<void> {
    await this.q(`INSERT INTO ${this.S}.meta (key, value) VALUES ($1, $2) ON CONFLICT (key) DO UPDATE SET value = excluded.value`, [key, value]);
  }

  async compareAndSetMeta(key: string, expected: string | null, value: string): Promise<boolean> {
    const r =
      expected === null
        ? await this.q(`INSERT INTO ${this.S}.meta (key, value) VALUES ($1, $2) ON CONFLICT (key) DO NOTHING`, [key, value])
        : await this.q(`UPDATE ${this.S}.meta SET value = $2 WHERE key = $1 AND value = $3`, [key, value, expected]);
    return r.rowCount === 1;
  }

  /**
   * The webhook events gathered in one turn (policy.ts) as ONE autocommit statement: one round trip and one WAL flush
   * for all of them, apart from the send loop's transactions. Each event's link (sqlite-writes.ts addWebhookEvent) is
   * looked up in the INSERT itself. Rows go in dedup-key order, so two batches holding the same keys (concurrent
   * resends, several instances) take their locks in the same order and cannot deadlock; a key twice in one batch is
   * inserted once, its later copies answered as resends.
   */
  async insertWebhookEvents(events: NewWebhookEvent[]): Promise<WriteOutcome[]> {
    const { S } = this;
    const firstOf = new Map<string, number>();
    events.forEach((e, i) => {
      if (!firstOf.has(e.dedupKey)) firstOf.set(e.dedupKey, i);
    });
    const unique = [...firstOf.values()].map((i) => events[i]!);
    type Row = { id: number; dedup_key: string; record_id: number | null };
    const r = await this.q<Row>(
      `INSERT INTO ${S}.webhook_events (dedup_key, kind, received_at, body, record_id)
       SELECT v.dedup_key, v.kind, now(), v.body,
              COALESCE(v.record_id, (${linkedRecordId(`${S}.records`, 'v.link')}))
         FROM unnest($1::text[], $2::text[], $3::text[], $4::bigint[], $5::text[]) AS v(dedup_key, kind, body, record_id, link)
        ORDER BY v.dedup_key
       ON CONFLICT (dedup_key) DO NOTHING
       RETURNING id, dedup_key, record_id`,
      [
        unique.map((e) => e.dedupKey),
        unique.map((e) => e.kind),
        unique.map((e) => e.body),
        unique.map((e) => e.recordId ?? null),
        unique.map((e) => e.linkWmsId ?? null),
      ],
      'insertWebhookEvents',
    );
    const inserted = new Map(r.rows.map((row) => [row.dedup_key, row]));
    const resent = unique.filter((e) => !inserted.has(e.dedupKey)).map((e) => e.dedupKey);
    // a conflicting insert committed before ON CONFLICT saw it: this later statement's snapshot has it
    const earlier = new Map<string, Row>();
    if (resent.length > 0) {
      const old = await this.q<Row>(
        `SELECT id, dedup_key, record_id FROM ${S}.webhook_events WHERE dedup_key = ANY($1::text[])`,
        [resent],
        'findWebhookEvents',
      );
      for (const row of old.rows) earlier.set(row.dedup_key, row);
    }
    return events.map((e, i): WriteOutcome => {
      const mine = inserted.get(e.dedupKey);
      const row = mine ?? earlier.get(e.dedupKey);
      if (!row) return { ok: false, error: new Error(`event ${e.dedupKey} conflicted but cannot be read back`) };
      return { ok: true, value: toWebhookStored(mine !== undefined && firstOf.get(e.dedupKey) === i, row) };
    });
  }

  /** the link (sqlite-writes.ts addWebhookEvent) is looked up in the INSERT itself: one round trip per event */
  async insertWebhookEvent(event: NewWebhookEvent): Promise<WebhookEventStored> {
    const r = await this.q<WebhookLinkDbRow>(
      `INSERT INTO ${this.S}.webhook_events (dedup_key, kind, received_at, body, record_id)
       VALUES ($1, $2, now(), $3, COALESCE($4::bigint, (${linkedRecordId(`${this.S}.records`, '$5')})))
       ON CONFLICT (dedup_key) DO NOTHING RETURNING id, record_id`,
      [event.dedupKey, event.kind, event.body, event.recordId ?? null, event.linkWmsId ?? null],
    );
    const stored = r.rows[0];
    if (stored) return toWebhookStored(true, stored);
    // the conflicting insert committed before ON CONFLICT saw it: this statement's snapshot has it
    const existing = (await this.q<WebhookLinkDbRow>(`SELECT id, record_id FROM ${this.S}.webhook_events WHERE dedup_key = $1`, [event.dedupKey])).rows[0];
    if (!existing) throw new JournalError(`journal ${this.location}: addWebhookEvent: event ${event.dedupKey} conflicted but cannot be read back`);
    return toWebhookStored(false, existing);
  }

  async listWebhookEvents(query: { undeliveredOnly?: boolean; afterId?: number; limit?: number }): Promise<WebhookEventRow[]> {
    const conds: string[] = [];
    const params: number[] = [];
    if (query.undeliveredOnly) conds.push('delivered_at IS NULL');
    if (query.afterId !== undefined) {
      params.push(query.afterId);
      conds.push(`id > $${params.length}`);
    }
    const where = conds.length ? `WHERE ${conds.join(' AND ')}` : '';
    let limit = '';
    if (query.limit !== undefined) {
      params.push(query.limit);
      limit = ` LIMIT $${params.length}`;
    }
    return (await this.q<WebhookDbRow>(`SELECT * FROM ${this.S}.webhook_events ${where} ORDER BY id${limit}`, params)).rows.map(toWebhook);
  }

  async markWebhookDelivered(ids: number[]): Promise<void> {
    await this.q(`UPDATE ${this.S}.webhook_events SET delivered_at = now() WHERE delivered_at IS NULL AND id = ANY($1::bigint[])`, [ids]);
  }

  async close(): Promise<void> {
    const leaders = [...this.leaderClients];
    this.leaderClients.clear();
    await Promise.all(leaders.map((c) => c.end().catch(() => {})));
    await this.pool.end();
  }
}

/** The statement listRecords runs (a page of records in id order), with its parameters. */
export function pgListRecordsSql(S: string, query: StoreRecordQuery): { text: string; values: unknown[] } {
  const values: unknown[] = [];
  const where = recordWhere(query, values);
  let limit = '';
  if (query.limit !== undefined) {
    values.push(query.limit);
    limit = ` LIMIT $${values.length}`;
  }
  return { text: `SELECT ${recordSelectList(query.withoutRaw)} FROM ${S}.records ${where} ORDER BY id${limit}`, values };
}

/**
 * WHERE for a record query ($1.. from `params`). Lists are not empty. With statistics (analyzeRecords) the planner
 * walks a (file_id|status, id) index in id order and stops at the limit.
 */
function recordWhere(query: StoreRecordQuery, params: unknown[]): string {
  const conds: string[] = [];
  const p = (v: unknown): string => {
    params.push(v);
    return `$${params.length}`;
  };
  const list = (column: string, values: readonly unknown[] | undefined, type: string): void => {
    if (!values) return;
    conds.push(values.length === 1 ? `${column} = ${p(values[0])}` : `${column} = ANY(${p(values)}::${type}[])`);
  };
  list('file_id', query.fileIds, 'bigint');
  list('status', query.statuses, 'text');
  list('target', query.targets, 'text');
  if (query.afterId !== undefined) conds.push(`id > ${p(query.afterId)}`);
  return conds.length ? `WHERE ${conds.join(' AND ')}` : '';
}
