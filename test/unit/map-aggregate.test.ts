/**
 * `aggregate` (src/map/aggregate.ts): the records of one key added up into one; fields that disagree, a rejected row
 * of the key, and a mapping that cannot add up (check) are refused with messages naming lines and fields; without
 * `aggregate` a StockSync file refuses a product repeated in its session.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mapping, row, run } from '../fixtures/map/util.js';

const stock = (extra: Record<string, unknown> = {}, fields: Record<string, unknown> = {}) =>
  mapping({
    target: 'StockSync',
    aggregate: { sum: ['quantity'] },
    fields: {
      productId: { ref: 'Product', from: 'produto' },
      ownerId: { lookup: 'Owners', by: 'code', from: 'dono' },
      quantity: { col: 'qtd', transforms: ['number'] },
      ...fields,
    },
    ...extra,
  });
const lot = (produto: string, qtd: string, l: number, dono = '001') => row({ produto, qtd, dono }, l);

describe('aggregate: one record per key', () => {
  test('sums per key (no float noise), keeps every row, first line to last', async () => {
    const r = await run(stock(), [lot('A', '0,1', 2), lot('B', '5', 3), lot('A', '0,2', 4), lot('A', '1', 5), lot('A', '2', 6, '002')]);
    assert.equal(r.rejects.length, 0);
    assert.deepEqual(
      r.records.map((x) => [x.key, x.payload['quantity'], x.source, x.raw.map((w) => w.line)]),
      [
        ['A|001', 1.3, { line: 2, lineEnd: 5 }, [2, 4, 5]],
        ['B|001', 5, { line: 3 }, [3]],
        ['A|002', 2, { line: 6 }, [6]],
      ],
    );
  });

  test('a rejected row of a key rejects the key whole; other keys go on', async () => {
    const r = await run(stock(), [lot('A', '1', 2), lot('A', 'abc', 3), lot('B', '5', 4)]);
    assert.deepEqual(
      r.records.map((x) => x.key),
      ['B|001'],
    );
    assert.equal(r.rejects.length, 2);
    const whole = r.rejects.find((j) => j.source.line === 2)!;
    assert.match(whole.issues[0]!.message, /line 3 of key 'A\|001' was rejected: the rows of this key are not added up without it/);
  });

  test('another field that differs rejects the key naming field and lines', async () => {
    const m = mapping({
      target: 'ConversionFactor',
      key: 'codigo',
      aggregate: { sum: ['unitMeasurementInputCount'] },
      fields: {
        codeERP: 'codigo',
        productID: { ref: 'Product', from: 'produto' },
        unitMeasurementInputID: { ref: 'UnitMeasurement', from: { const: 'CX' } },
        unitMeasurementInputCount: { col: 'n', transforms: ['integer'] },
        unitMeasurementOutputID: { ref: 'UnitMeasurement', from: { const: 'UN' } },
      },
    });
    const r = await run(m, [row({ codigo: 'F1', produto: 'P1', n: '2' }, 2), row({ codigo: 'F1', produto: 'P2', n: '3' }, 3)]);
    assert.equal(r.records.length, 0);
    assert.match(r.rejects[0]!.issues[0]!.message, /line 3: field productID: .*differs from .* on line 2 \(rows of key 'F1' are added up/);
  });

  test('check: a sum field the mapping does not give, or that is not a number', () => {
    assert.throws(
      () => stock({ aggregate: { sum: ['qty'] } }),
      (e: unknown) => e instanceof Error && /aggregate\.sum\[0\]: 'qty' is not a field of this mapping/.test(e.message),
    );
    assert.throws(
      () => stock({ aggregate: { sum: ['productId'] } }),
      (e: unknown) => e instanceof Error && /aggregate\.sum\[0\]: 'productId' is not a number in StockSync/.test(e.message),
    );
  });
});

describe('StockSync without aggregate: a product once per session', () => {
  test('the second row of a key is a reject naming both lines; other targets are left alone', async () => {
    const r = await run(stock({ aggregate: undefined }), [lot('A', '1', 2), lot('B', '5', 3), lot('A', '2', 4)]);
    assert.deepEqual(
      r.records.map((x) => [x.key, x.payload['quantity']]),
      [
        ['A|001', 1],
        ['B|001', 5],
      ],
    );
    assert.equal(r.rejects.length, 1);
    assert.equal(r.rejects[0]!.issues[0]!.code, 'duplicate_key');
    assert.match(r.rejects[0]!.issues[0]!.message, /^line 4: key 'A\|001' appears again \(first on line 2\)/);
  });
});
