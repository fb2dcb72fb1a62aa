/**
 * PostgreSQL for tests: the local server (127.0.0.1:5432, trust auth, database `test`), one fresh
 * schema per test file, dropped in after().
 *
 * CI must run the PostgreSQL tests: when the server is unreachable they FAIL with a message saying
 * how to start it. Developers without PostgreSQL set WMSBRIDGE_SKIP_POSTGRES=1 to skip them (a
 * visible skip reason is printed). WMSBRIDGE_TEST_PG_URL points the tests at another server.
 */
import pg from 'pg';
import { randomBytes } from 'node:crypto';

export const PG_TEST_URL = process.env['WMSBRIDGE_TEST_PG_URL'] ?? 'postgres://postgres@127.0.0.1:5432/test';

export const PG_START_HINT =
  'start it with: pg_ctlcluster --skip-systemctl-redirect $(ls /etc/postgresql) main start ' +
  '(or set WMSBRIDGE_TEST_PG_URL to another server; WMSBRIDGE_SKIP_POSTGRES=1 skips these tests on a machine without PostgreSQL)';

/** The skip reason when WMSBRIDGE_SKIP_POSTGRES=1 (printed once), else false. */
export function postgresSkipReason(): string | false {
  if (process.env['WMSBRIDGE_SKIP_POSTGRES'] !== '1') return false;
  const reason = 'PostgreSQL tests SKIPPED: WMSBRIDGE_SKIP_POSTGRES=1 (CI must run them)';
  console.log(reason);
  return reason;
}

async function admin<T>(fn: (c: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: PG_TEST_URL, connectionTimeoutMillis: 5000 });
  client.on('error', () => {});
  try {
    await client.connect();
  } catch (err) {
    throw new Error(`PostgreSQL is not reachable at ${PG_TEST_URL.replace(/:[^:@/]*@/, ':***@')}: ${(err as Error).message}; ${PG_START_HINT}`, { cause: err });
  }
  try {
    return await fn(client);
  } finally {
    await client.end().catch(() => {});
  }
}

/** Throws (with how to start the server) when PostgreSQL cannot be reached. */
export async function assertPostgresReachable(): Promise<void> {
  await admin(async (c) => {
    await c.query('SELECT 1');
  });
}

/** A schema name no other test run uses (not created: the journal creates it at open). */
export function freshSchemaName(label: string): string {
  return `wmsbridge_test_${label.replace(/[^a-z0-9_]/g, '_')}_${process.pid}_${randomBytes(4).toString('hex')}`;
}

/** Drops a test schema and everything in it. */
export async function dropSchema(schema: string): Promise<void> {
  if (!/^wmsbridge_test_[a-z0-9_]+$/.test(schema)) throw new Error(`dropSchema: refusing to drop ${schema}: not a test schema`);
  await admin(async (c) => {
    await c.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
  });
}

/** Runs one query as the test superuser (to inspect tables, kill sessions...). */
export async function pgQuery<R extends pg.QueryResultRow = pg.QueryResultRow>(sql: string, params: unknown[] = []): Promise<R[]> {
  return admin(async (c) => (await c.query<R>(sql, params)).rows);
}
