/** The validation pre-check never accepts what zod refuses (property-based), and accepts valid records. */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { z } from 'zod';
import { TARGET_INFO, TARGETS } from '../../src/wms/targets.js';
import { compileFastCheck } from '../../src/map/fast-check.js';

const UUID = '0b8e3c1a-5d2f-4e7a-9c31-2f6d8b9a1c44';
const value = fc.oneof(
  fc.constantFrom<unknown>(
    UUID,
    'not-a-uuid',
    '',
    '   ',
    'x',
    '0',
    '1',
    'UN',
    '2024-11-05',
    '2024-11-05T11:12:00.000Z',
    '05/11/2024',
    0,
    1,
    2,
    3,
    5,
    -1,
    0.5,
    NaN,
    Infinity,
    true,
    false,
    null,
    undefined,
    {},
    [],
  ),
  fc.string({ maxLength: 6 }),
  fc.double({ noNaN: false }),
);

function shapeOf(schema: z.ZodType): Record<string, z.ZodType> {
  return (schema as unknown as { shape: Record<string, z.ZodType> }).shape;
}

/** Random objects over the schema's keys (some missing, some extra), items arrays for documents. */
function payloadArb(schema: z.ZodType): fc.Arbitrary<Record<string, unknown>> {
  const shape = shapeOf(schema);
  const parts: Record<string, fc.Arbitrary<unknown>> = {};
  for (const [k, s] of Object.entries(shape)) {
    const def = (s as unknown as { _zod: { def: { type: string; element?: z.ZodType } } })._zod.def;
    parts[k] = def.type === 'array' && def.element ? fc.oneof(fc.array(payloadArb(def.element), { maxLength: 3 }), value) : value;
  }
  return fc
    .record(parts, { requiredKeys: [] })
    .chain((o) => fc.boolean().map((extra) => (extra ? { ...o, unexpected: 'x' } : o)))
    .map((o) => Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)));
}

describe('validation pre-check (fast path) against zod', () => {
  for (const target of TARGETS) {
    test(`${target}: fast true implies zod success`, () => {
      const schema = TARGET_INFO[target].schema;
      const fast = compileFastCheck(schema);
      assert.ok(fast, `${target} has a fast path`);
      fc.assert(
        fc.property(payloadArb(schema), (p) => {
          if (fast(p)) assert.equal(schema.safeParse(p).success, true, JSON.stringify(p));
        }),
        { numRuns: 300, seed: 42 },
      );
    });
  }

  test('valid records take the fast path', () => {
    const product = {
      status: 1,
      code: '000101',
      name: 'Arroz',
      categoryID: UUID,
      familyID: UUID,
      logisticsProfileID: UUID,
      unitmeasurement: 'UN',
      weight: 5.05,
    };
    assert.equal(compileFastCheck(TARGET_INFO.Product.schema)?.(product), true);
    assert.equal(compileFastCheck(TARGET_INFO.Product.schema)?.({ ...product, name: '   ' }), false, 'trim then min(1), as zod');
    assert.equal(compileFastCheck(TARGET_INFO.Product.schema)?.({ ...product, weight: -1 }), false);
    const item = { productID: UUID, quantity: 2, status: 1, pickingItemStatus: '0' };
    const pl = {
      companyID: UUID,
      branchID: UUID,
      warehouseID: UUID,
      ownerID: UUID,
      order: '1',
      codeERP: UUID,
      pickingItens: [item],
      pickingStatus: '0',
      status: 1,
      finishCallBack: false,
      priority: 2,
    };
    const fast = compileFastCheck(TARGET_INFO.PickingList.schema);
    assert.equal(fast?.(pl), true);
    assert.equal(fast?.({ ...pl, pickingItens: [] }), false);
    assert.equal(fast?.({ ...pl, priority: 7 }), false);
    assert.equal(fast?.({ ...pl, pickingItens: [{ ...item, quantity: 0 }] }), false);
  });

  test('valid records with one or two values mutated: fast true implies zod success, and both agree often', () => {
    const item = { productID: UUID, quantity: 2, status: 1, pickingItemStatus: '0' };
    const bases: Array<[keyof typeof TARGET_INFO, Record<string, unknown>]> = [
      [
        'Product',
        { status: 1, code: '000101', name: 'Arroz', categoryID: UUID, familyID: UUID, logisticsProfileID: UUID, unitmeasurement: 'UN', weight: 5.05 },
      ],
      ['StockLock', { warehouseId: UUID, materialStatusId: UUID, productId: UUID, lotNumber: 'L1', expirationDate: '2025-01-01' }],
      [
        'PickingList',
        {
          companyID: UUID,
          branchID: UUID,
          warehouseID: UUID,
          ownerID: UUID,
          order: '1',
          codeERP: UUID,
          pickingItens: [item],
          pickingStatus: '0',
          status: 1,
          finishCallBack: false,
        },
      ],
      ['ConversionFactor', { productID: UUID, unitMeasurementInputID: UUID, unitMeasurementInputCount: 6, unitMeasurementOutputID: UUID, codeERP: 'FC1' }],
    ];
    for (const [target, base] of bases) {
      const schema = TARGET_INFO[target].schema;
      const fast = compileFastCheck(schema) as (v: unknown) => boolean;
      const keys = [...Object.keys(shapeOf(schema)), 'unexpected'];
      let accepted = 0;
      fc.assert(
        fc.property(fc.array(fc.tuple(fc.constantFrom(...keys), value), { minLength: 0, maxLength: 2 }), (muts) => {
          const p: Record<string, unknown> = { ...base };
          for (const [k, v] of muts) p[k] = v;
          const z = schema.safeParse(p).success;
          if (fast(p)) {
            accepted++;
            assert.equal(z, true, `${target} ${JSON.stringify(p)}`);
          }
        }),
        { numRuns: 400, seed: 7 },
      );
      assert.ok(accepted > 20, `${target}: the fast path accepted ${accepted} mutated records`);
    }
  });

  test('unknown schema constructs fall back to zod', () => {
    assert.equal(compileFastCheck(z.string().email()), undefined);
    assert.equal(compileFastCheck(z.object({ a: z.string() }).refine(() => true)), undefined);
    assert.equal(compileFastCheck(z.looseObject({ a: z.string() })), undefined);
    assert.equal(compileFastCheck(z.date()), undefined);
  });
});
