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
import { createPostgresJournal, pgGetXrefsSql, pgListRecordsSql, PG_ANALYZE_FIRST_AT } from '../../src/journal/postgres.js';
import { RECORD_STATUSES } from '../../src/journal/policy.js';
import type { NewRecord } from '../../src/journal/types.js';

const skip = postgresSkipReason();
const schema = freshSchemaName('plans');
const schemaPages = freshSchemaName('plans_pages');
after(async () => {
  if (!skip) {
    await dropSchema(schema);
    await dropSchema(schemaPages);
  }
});

interface PlanNode {
  'Node Type': string;
  'Actual Rows'?: number;
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

test('a big file journaled on a fresh schema: its pages are read in id order, stopping at the limit (no read of the rest to sort it)', { skip }, async () => {
  const journal = await createPostgresJournal({ url: PG_TEST_URL, schema: schemaPages });
  const c = new pg.Client({ connectionString: PG_TEST_URL });
  await c.connect();
  try {
    const file = await journal.addFile({ channel: 'cadastros', name: 'big.csv', path: '/in/big.csv', size: 1, sha256: 'sha-big', runId: 'run-plans' });
    const total = PG_ANALYZE_FIRST_AT + 1_000;
    const rec = (i: number): NewRecord => ({
      target: 'Category',
      op: 'upsert',
      key: `K${i}`,
      source: { line: i + 2 },
      mapping: 'categorias',
      payload: { codeERP: `K${i}`, name: `Categoria ${i}` },
      payloadHash: `h${i}`,
    });
    // as the mapping hands them over: batches of 1,000
    for (let i = 0; i < total; i += 1_000)
      await journal.addRecords(
        file.id,
        Array.from({ length: Math.min(1_000, total - i) }, (_, k) => rec(i + k)),
      );
    const [first] = await journal.listRecords({ fileIds: [file.id], limit: 1 });
    const limit = 1_000;
    // the finish's page (every status) and the send loop's (pending, in doubt), from a cursor early in the file
    for (const statuses of [[...RECORD_STATUSES], ['pending', 'in_doubt'] as const]) {
      const { text, values } = pgListRecordsSql(`"${schemaPages}"`, {
        fileIds: [file.id],
        statuses: [...statuses],
        afterId: first!.id + 100,
        limit,
        withoutRaw: true,
      });
      const plan = (await c.query<{ 'QUERY PLAN': Array<{ Plan: PlanNode }> }>(`EXPLAIN (ANALYZE, FORMAT JSON) ${text}`, values)).rows[0]!['QUERY PLAN'][0]!
        .Plan;
      const shown = JSON.stringify(plan);
      for (const n of nodesOf(plan).filter((x) => x['Relation Name'] === 'records'))
        assert.ok(
          (n['Actual Rows'] ?? 0) <= 2 * limit,
          `${statuses.join(',')}: ${n['Node Type']} read ${n['Actual Rows']} records for a page of ${limit}: ${shown}`,
        );
    }
  } finally {
    await c.end();
    await journal.close();
  }
});
