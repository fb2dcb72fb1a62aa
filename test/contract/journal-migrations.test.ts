/**
 * One migration plan for both stores (src/journal/migrations.ts): each store's ladder is the plan's steps it has SQL
 * for, and a journal at any earlier version of it upgrades to the schema a fresh journal gets. Checked from the first
 * step (a journal as the first wmsbridge left it, with a row in it) and from every later version, in SQLite and in
 * PostgreSQL (127.0.0.1:5432, see test/helpers/postgres.ts).
 */
import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { makeTempDir } from '../helpers/tmp.js';
import { MIGRATION_PLAN, migrationsOf } from '../../src/journal/migrations.js';
import { createSqliteJournal, MIGRATIONS, SCHEMA_VERSION } from '../../src/journal/sqlite.js';
import { createPostgresJournal, PG_MIGRATIONS, PG_SCHEMA_VERSION } from '../../src/journal/postgres.js';
import { assertPostgresReachable, dropSchema, freshSchemaName, PG_TEST_URL, pgQuery, postgresSkipReason } from '../helpers/postgres.js';

test('the plan is both ladders: each store runs the steps it has SQL for, in the plan order, and no step is empty', () => {
  assert.deepEqual(MIGRATIONS, migrationsOf('sqlite'));
  assert.deepEqual(PG_MIGRATIONS, migrationsOf('postgres'));
  assert.equal(SCHEMA_VERSION, MIGRATION_PLAN.filter((s) => s.sqlite !== undefined).length);
  assert.equal(PG_SCHEMA_VERSION, MIGRATION_PLAN.filter((s) => s.postgres !== undefined).length);
  for (const [i, step] of MIGRATION_PLAN.entries()) assert.ok(step.sqlite !== undefined || step.postgres !== undefined, `step ${i + 1} has SQL`);
  // the versions journals already carry: SQLite 7 and PostgreSQL 7 when the ladders were merged; a new step adds to both
  assert.ok(SCHEMA_VERSION >= 7 && PG_SCHEMA_VERSION >= 7);
});

// ---- SQLite ---------------------------------------------------------------------------------------
/** every table, index and column of a SQLite journal, as text to compare */
function sqliteSchema(path: string): string[] {
  const db = new Database(path, { readonly: true });
  try {
    const objects = db.prepare("SELECT type, name, tbl_name AS tbl, sql FROM sqlite_master WHERE name NOT LIKE 'sqlite_%' ORDER BY type, name").all() as Array<{
      type: string;
      name: string;
      tbl: string;
      sql: string | null;
    }>;
    const out: string[] = [];
    for (const o of objects) {
      out.push(`${o.type} ${o.name} on ${o.tbl}`);
      if (o.type === 'index') out.push(`  ${(o.sql ?? '').replace(/\s+/g, ' ')}`);
      if (o.type === 'table') {
        const cols = db.prepare(`SELECT name, type, "notnull" AS nn, dflt_value AS d, pk FROM pragma_table_info(?) ORDER BY name`).all(o.name);
        for (const c of cols) out.push(`  ${JSON.stringify(c)}`);
      }
    }
    return out;
  } finally {
    db.close();
  }
}

describe('sqlite: every earlier version upgrades to the fresh schema', () => {
  let tmp: { dir: string; cleanup: () => Promise<void> };
  before(async () => {
    tmp = await makeTempDir('wmsbridge-migrations-');
  });
  after(async () => {
    await tmp.cleanup();
  });

  test('upgrades from each version, data kept', async () => {
    const fresh = join(tmp.dir, 'fresh', 'journal.db');
    await (await createSqliteJournal({ path: fresh })).close();
    const expected = sqliteSchema(fresh);
    assert.ok(expected.some((l) => l.startsWith('index records_by_link_wms_id')));
    for (let from = 1; from < SCHEMA_VERSION; from++) {
      const dir = join(tmp.dir, `v${from}`);
      mkdirSync(dir);
      const path = join(dir, 'journal.db');
      const db = new Database(path);
      db.exec('CREATE TABLE schema_version (version INTEGER NOT NULL, applied_at TEXT NOT NULL)');
      for (let v = 0; v < from; v++) {
        db.exec(MIGRATIONS[v]!);
        db.prepare('INSERT INTO schema_version VALUES (?, ?)').run(v + 1, new Date().toISOString());
      }
      db.prepare("INSERT INTO meta VALUES ('kept', ?)").run(`from ${from}`);
      db.close();
      const j = await createSqliteJournal({ path });
      assert.equal(await j.getMeta('kept'), `from ${from}`);
      await j.close();
      assert.deepEqual(sqliteSchema(path), expected, `from version ${from}`);
    }
  });
});

// ---- PostgreSQL -----------------------------------------------------------------------------------
/** every table's columns and every index of a schema, as text to compare (the schema's name left out) */
async function pgSchemaOf(schema: string): Promise<string[]> {
  const cols = await pgQuery<{ t: string; c: string; ty: string; nn: string; d: string | null }>(
    `SELECT table_name AS t, column_name AS c, data_type AS ty, is_nullable AS nn, column_default AS d
       FROM information_schema.columns WHERE table_schema = $1 ORDER BY table_name, column_name`,
    [schema],
  );
  const indexes = await pgQuery<{ name: string; def: string }>(
    'SELECT indexname AS name, indexdef AS def FROM pg_indexes WHERE schemaname = $1 ORDER BY indexname',
    [schema],
  );
  const functions = await pgQuery<{ name: string; def: string }>(
    `SELECT p.proname AS name, pg_get_functiondef(p.oid) AS def FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace WHERE n.nspname = $1 ORDER BY p.proname`,
    [schema],
  );
  const unnamed = (s: string): string => s.replaceAll(`"${schema}"`, 'S').replaceAll(`${schema}.`, 'S.');
  return [
    ...cols.map((c) => `column ${c.t}.${c.c} ${c.ty} null=${c.nn} default=${c.d === null ? '' : unnamed(c.d)}`),
    ...indexes.map((i) => `index ${i.name}: ${unnamed(i.def)}`),
    ...functions.map((f) => `function ${f.name}: ${unnamed(f.def)}`),
  ];
}

describe('postgres: every earlier version upgrades to the fresh schema', { skip: postgresSkipReason() }, () => {
  const schemas: string[] = [];
  const fresh = (label: string): string => {
    const s = freshSchemaName(label);
    schemas.push(s);
    return s;
  };
  after(async () => {
    for (const s of schemas) await dropSchema(s).catch(() => {});
  });

  test('upgrades from each version, data kept', { timeout: 120_000 }, async () => {
    await assertPostgresReachable();
    const base = fresh('mig_fresh');
    await (await createPostgresJournal({ url: PG_TEST_URL, schema: base })).close();
    const expected = await pgSchemaOf(base);
    assert.ok(expected.some((l) => l.startsWith('index records_by_link_wms_id')));
    assert.ok(
      expected.some((l) => l.startsWith('function ')),
      'the batch-writes function is in the schema',
    );
    for (let from = 1; from < PG_SCHEMA_VERSION; from++) {
      const schema = fresh(`mig_v${from}`);
      const S = `"${schema}"`;
      await pgQuery(`CREATE SCHEMA ${S}`);
      await pgQuery(`CREATE TABLE ${S}.schema_version (version INTEGER NOT NULL, applied_at TIMESTAMPTZ NOT NULL)`);
      for (let v = 0; v < from; v++) {
        await pgQuery(PG_MIGRATIONS[v]!.replace(/\bS\./g, `${S}.`));
        await pgQuery(`INSERT INTO ${S}.schema_version VALUES ($1, now())`, [v + 1]);
      }
      await pgQuery(`INSERT INTO ${S}.meta VALUES ('kept', $1)`, [`from ${from}`]);
      const j = await createPostgresJournal({ url: PG_TEST_URL, schema });
      try {
        assert.equal(await j.getMeta('kept'), `from ${from}`);
      } finally {
        await j.close();
      }
      assert.deepEqual(await pgSchemaOf(schema), expected, `from version ${from}`);
    }
  });
});
