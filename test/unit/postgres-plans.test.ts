/**
 * The PostgreSQL store's page read of cross-reference entries is one index lookup per key, whatever the table's
 * statistics say. The cross-reference grows from nothing during a run and is analyzed late: with `key = ANY($2)`
 * the planner, with no statistics yet (it guesses that 0.5 % of the rows hold the resource), read the resource's
 * whole range and filtered it by the keys (7.9 ms a read at 20,000 entries, a third of the server's time in a 20,000-category run). Checked
 * on the query plans (custom and generic) of a grown table never analyzed, and on what the journal answers.
 */
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import pg from 'pg';
import { dropSchema, freshSchemaName, PG_TEST_URL, postgresSkipReason } from '../helpers/postgres.js';
import { createPostgresJournal, pgGetXrefsSql } from '../../src/journal/postgres.js';

const skip = postgresSkipReason();
const schema = freshSchemaName('plans');
after(async () => {
  if (!skip) await dropSchema(schema);
});

interface PlanNode {
  'Node Type': string;
  'Relation Name'?: string;
  'Index Cond'?: string;
  Filter?: string;
  Plans?: PlanNode[];
}

function nodesOf(plan: PlanNode): PlanNode[] {
  return [plan, ...(plan.Plans ?? []).flatMap(nodesOf)];
}

test('getXrefs reads each key through the primary key on a grown cross-reference the planner has no statistics of', { skip }, async () => {
  const journal = await createPostgresJournal({ url: PG_TEST_URL, schema });
  const S = `"${schema}"`;
  const c = new pg.Client({ connectionString: PG_TEST_URL });
  await c.connect();
  try {
    // the table a run leaves behind, never analyzed (autovacuum had not come to a fresh schema yet: the planner
    // guesses that 0.5 % of the rows hold the resource)
    await c.query(`INSERT INTO ${S}.xref (resource, key, wms_id, payload_hash, updated_at)
                   SELECT 'Category', 'C' || lpad(i::text, 6, '0'), 'w' || i, 'h', now() FROM generate_series(1, 20000) i`);
    const keys = Array.from({ length: 20 }, (_, i) => `C${String(1000 + i * 7).padStart(6, '0')}`);
    const literal = `{${keys.join(',')}}`;
    await c.query(`PREPARE page_read(text, text[]) AS ${pgGetXrefsSql(S)}`);
    for (const mode of ['force_custom_plan', 'force_generic_plan']) {
      await c.query(`SET plan_cache_mode = ${mode}`);
      const plan = (await c.query<{ 'QUERY PLAN': Array<{ Plan: PlanNode }> }>(`EXPLAIN (FORMAT JSON) EXECUTE page_read('Category', '${literal}')`)).rows[0]![
        'QUERY PLAN'
      ][0]!.Plan;
      const onXref = nodesOf(plan).filter((n) => n['Relation Name'] === 'xref');
      const shown = JSON.stringify(plan);
      assert.ok(onXref.length > 0, `${mode}: no node reads xref: ${shown}`);
      for (const n of onXref) {
        assert.match(n['Node Type'], /^Index (Only )?Scan$/, `${mode}: xref read by ${n['Node Type']}: ${shown}`);
        assert.match(n['Index Cond'] ?? '', /\bkey = /, `${mode}: the key is not in the index condition: ${shown}`);
        assert.equal(n.Filter, undefined, `${mode}: rows of xref filtered after the index: ${shown}`);
      }
    }
    // what the journal answers after the read ahead: each key's entry (a key asked twice too), a missing key none
    await journal.prefetchXrefs('Category', [keys[0]!, keys[0]!, keys[1]!, 'C999999']);
    assert.equal((await journal.getXref('Category', keys[0]!))?.wmsId, `w${Number(keys[0]!.slice(1))}`);
    assert.equal((await journal.getXref('Category', keys[1]!))?.wmsId, `w${Number(keys[1]!.slice(1))}`);
    assert.equal(await journal.getXref('Category', 'C999999'), undefined);
  } finally {
    await c.end();
    await journal.close();
  }
});
