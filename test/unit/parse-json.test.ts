import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { open, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { makeTempDir } from '../helpers/tmp.js';
import { collectItems, flatten, jsonItemPathOf, type ParsedItem } from '../../src/parse/index.js';
import { InputError } from '../../src/shared/errors.js';
import type { RawRow } from '../../src/parse/types.js';

let dir: string;
let cleanup: () => Promise<void>;
let n = 0;
before(async () => {
  ({ dir, cleanup } = await makeTempDir('wmsbridge-parse-json-'));
});
after(async () => cleanup());
async function file(content: string | Buffer, ext = 'json'): Promise<string> {
  const p = join(dir, `j${n++}.${ext}`);
  await writeFile(p, content);
  return p;
}
const rows = (items: ParsedItem[]): RawRow[] => items.flatMap((i) => (i.kind === 'row' ? [i.row] : []));
const errors = (items: ParsedItem[]) => items.flatMap((i) => (i.kind === 'error' ? [i] : []));

describe('json', () => {
  test('top-level array; nested objects and arrays flattened; lines of each item', async () => {
    const doc = '[\n  {"sku": "007", "qty": 3, "ok": true, "none": null,\n   "dims": {"w": 1.5}, "lots": [{"n": "A"}, {"n": "B"}]},\n  {"sku": "008"}\n]\n';
    const { items, summary } = await collectItems(await file(doc), { format: 'json' });
    assert.equal(summary.rows, 2);
    const [a, b] = rows(items);
    assert.deepEqual(a!.fields, {
      sku: '007',
      qty: '3',
      ok: 'true',
      none: '',
      'dims/w': '1.5',
      'lots[0]/n': 'A',
      'lots[1]/n': 'B',
      lots: '[{"n":"A"},{"n":"B"}]',
    });
    assert.equal(a!.line, 2);
    assert.equal(b!.line, 4);
    assert.equal(a!.recordType, '[0]');
  });

  test('itemPath to a nested array; lines found past decoy arrays and tricky strings', async () => {
    const doc = '{\n "meta": {"items": ["x"], "s": "]\\"[{"},\n "data": {\n  "items": [\n   {"a": "1"},\n\n   {"a": "2"}, 5\n  ]\n }\n}';
    const { items } = await collectItems(await file(doc), { format: 'json', itemPath: 'data/items' });
    assert.deepEqual(
      rows(items).map((r) => [r.line, r.fields.a, r.recordType]),
      [
        [5, '1', 'data/items[0]'],
        [7, '2', 'data/items[1]'],
      ],
    );
    assert.deepEqual(
      errors(items).map((e) => [e.line, e.issue.code]),
      [[7, 'not_an_object']],
    );
  });

  test("itemPath crossing arrays: the items of every order, each with its own order's fields; lines in document order", async () => {
    const doc = [
      '{"page": 1, "data": [',
      ' {"numero": 1, "cliente": {"nome": "A"}, "tags": ["x"], "parcelas": [{"v": 1}],',
      '  "itens": [{"cod": "P1"}, {"cod": "P2"}]},',
      ' {"numero": 2, "cliente": {"nome": "B"}},',
      ' {"numero": 3, "cliente": {"nome": "C"}, "itens": [',
      '   {"cod": "P3", "lotes": [{"n": "L"}]}, 7]}',
      ']}',
    ].join('\n');
    const { items } = await collectItems(await file(doc), { format: 'json', itemPath: 'data/itens' });
    const got = rows(items);
    assert.deepEqual(
      got.map((r) => [r.line, r.recordType, r.fields['cod'], r.fields['/data/numero'], r.fields['/data/cliente/nome']]),
      [
        [3, 'data[0]/itens[0]', 'P1', '1', 'A'],
        [3, 'data[0]/itens[1]', 'P2', '1', 'A'],
        [6, 'data[2]/itens[0]', 'P3', '3', 'C'],
      ],
    );
    // document fields: every member of the objects on the way down except arrays of objects (other items)
    assert.equal(got[0]!.fields['/page'], '1');
    assert.equal(got[0]!.fields['/data/tags'], '["x"]', 'an array of plain values is kept');
    assert.equal(got[0]!.fields['/data/parcelas'], undefined, 'an array of objects is not a document field');
    assert.equal(got[0]!.fields['/data/itens'], undefined, 'the items are never document fields');
    assert.equal(got[2]!.fields['lotes[0]/n'], 'L');
    assert.deepEqual(
      errors(items).map((e) => [e.line, e.issue.code, e.issue.message]),
      [[6, 'not_an_object', 'item data[2]/itens[1] is not an object (number)']],
    );
    // a path found nowhere is still an InputError naming it
    await assert.rejects(collectItems(await file(doc), { format: 'json', itemPath: 'data/linhas' }), /no "data\/linhas" in the JSON document/);
  });

  test('a list of itemPaths: the items of each level, one level after the other, each row naming its path', async () => {
    const doc = '{"deps": [\n {"c": "D1", "secs": [{"c": "S1"}, {"c": "S2"}]},\n {"c": "D2", "secs": []}\n]}';
    const { items, facts } = await collectItems(await file(doc), { format: 'json', itemPath: ['deps', 'deps/secs'] });
    assert.deepEqual(
      rows(items).map((r) => [r.line, r.recordType, jsonItemPathOf(r.recordType), r.fields['c'], r.fields['/deps/c'] ?? '']),
      [
        [2, 'deps[0]', 'deps', 'D1', ''],
        [3, 'deps[1]', 'deps', 'D2', ''],
        [2, 'deps[0]/secs[0]', 'deps/secs', 'S1', 'D1'],
        [2, 'deps[0]/secs[1]', 'deps/secs', 'S2', 'D1'],
      ],
    );
    assert.equal(facts.itemPath, 'deps, deps/secs');
  });

  test('a top-level array of orders: itemPath names the items of each', async () => {
    const doc = '[\n{"n": 1, "itens": [{"c": "a"}]},\n{"n": 2, "itens": [\n{"c": "b"}, {"c": "c"}]}\n]';
    const { items } = await collectItems(await file(doc), { format: 'json', itemPath: 'itens' });
    assert.deepEqual(
      rows(items).map((r) => [r.line, r.recordType, r.fields['c'], r.fields['/n']]),
      [
        [2, '[0]/itens[0]', 'a', '1'],
        [4, '[1]/itens[0]', 'b', '2'],
        [4, '[1]/itens[1]', 'c', '2'],
      ],
    );
  });

  test('invalid JSON, a missing itemPath, a non-array are InputErrors', async () => {
    await assert.rejects(
      collectItems(await file('[{"a":1},'), { format: 'json' }),
      (e: unknown) => e instanceof InputError && /JSON is not valid/.test(e.message),
    );
    await assert.rejects(collectItems(await file('{"a":{}}'), { format: 'json', itemPath: 'a/b' }), /no "a\/b" in the JSON document/);
    await assert.rejects(collectItems(await file('{"a":1}'), { format: 'json' }), /the top level of the JSON document is not an array/);
  });

  test('maxBytes applies', async () => {
    const p = join(dir, 'big.json');
    const fh = await open(p, 'w');
    await fh.truncate(25 * 1024 * 1024);
    await fh.close();
    await assert.rejects(
      collectItems(p, { format: 'json' }),
      (e: unknown) => e instanceof InputError && /file is 25 MB, above the JSON limit of 20 MB/.test(e.message),
    );
  });
});

describe('jsonl', () => {
  test('one object per line; bad lines are error items and parsing continues', async () => {
    const text = '{"sku":"001","q":1}\r\n\r\n{"sku": bad}\r\n[1,2]\r\n"str"\r\n{"sku":"002","tags":["a","b"]}\r\n';
    const { items, summary, facts } = await collectItems(await file(text, 'jsonl'), { format: 'jsonl' });
    assert.deepEqual(
      rows(items).map((r) => [r.line, r.fields]),
      [
        [1, { sku: '001', q: '1' }],
        [6, { sku: '002', 'tags[0]': 'a', 'tags[1]': 'b', tags: '["a","b"]' }],
      ],
    );
    assert.deepEqual(
      errors(items).map((e) => [e.line, e.issue.code, e.text]),
      [
        [3, 'bad_json', '{"sku": bad}'],
        [4, 'not_an_object', '[1,2]'],
        [5, 'not_an_object', '"str"'],
      ],
    );
    assert.equal(rows(items)[0]!.text, '{"sku":"001","q":1}');
    assert.deepEqual([summary.rows, summary.errors], [2, 3]);
    assert.equal(facts.newline, '\r\n');
  });

  test('line too long', async () => {
    const { items } = await collectItems(await file(`{"a":"${'x'.repeat(200)}"}\n{"a":"1"}\n`, 'jsonl'), { format: 'jsonl', maxLineLength: 100 });
    assert.deepEqual(
      errors(items).map((e) => [e.line, e.issue.code]),
      [[1, 'line_too_long']],
    );
    assert.equal(rows(items)[0]!.line, 2);
  });
});

describe('flatten', () => {
  test('scheme', () => {
    assert.deepEqual(flatten({ a: { b: [{ c: '1' }, 'x'], d: {} } }), {
      'a/b[0]/c': '1',
      'a/b[1]': 'x',
      'a/b': '[{"c":"1"},"x"]',
      'a/d': '',
    });
  });
});
