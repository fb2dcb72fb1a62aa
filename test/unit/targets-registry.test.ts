/**
 * The target registry (src/wms/targets/): every target is complete and consistent with the schemas, the
 * endpoint table, the sandbox and the other targets' tiers. A new target that misses a piece fails here.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { z } from 'zod';
import { MAX_TIER, REF_RESOURCES, TARGET_INFO, TARGETS, type RefResource, type Target, type TargetInfo } from '../../src/wms/targets.js';
import { REGISTRY } from '../../src/wms/targets/index.js';
import { ENDPOINTS } from '../../src/wms/endpoints.js';
import { HANDLERS } from '../../src/sandbox/api.js';
import { RESOURCES } from '../../src/sandbox/state.js';
import { defaultOp } from '../../src/map/compile.js';

type Shape = Record<string, z.ZodType>;
const shapeOf = (schema: z.ZodType): Shape | undefined => (schema as unknown as { shape?: Shape }).shape;
/** the element schema of an array field (optional or not) */
function elementOf(s: z.ZodType): z.ZodType | undefined {
  const d = s as unknown as { element?: z.ZodType; unwrap?: () => z.ZodType };
  return d.element ?? (d.unwrap ? elementOf(d.unwrap()) : undefined);
}
/** every field path of a target's payload: top-level, and its items' fields as `items[].field` */
function fieldPaths(info: TargetInfo): string[] {
  const shape = shapeOf(info.schema) ?? {};
  const out = Object.keys(shape);
  if (info.items) {
    const el = elementOf(shape[info.items] as z.ZodType);
    for (const k of Object.keys((el && shapeOf(el)) ?? {})) out.push(`${info.items}[].${k}`);
  }
  return out;
}
/** the resource each target stores its ids under, and the target that sends it */
const senderOf = new Map<RefResource, TargetInfo>();
for (const t of Object.values(TARGET_INFO)) if (t.xref) senderOf.set(t.xref, t);

/**
 * References inside one tier, and what keeps them in order instead of the tier barrier. Keep this list short:
 * a new entry needs a reason the pipeline guarantees.
 */
const SAME_TIER: Record<string, string> = {
  // the factor and its deletion share the sequence scope 'ConversionFactor|<natural key>': source order (checked below)
  'ConversionFactorDelete.id': 'sequence',
  // an owner sent in the same run: the carrier or provider is deferred until the owner settles (push/refs.ts
  // dependency_pending, retried after the tier); see the report of issue 17: a candidate for a tier of its own
  'ShippingCompany.ownerID': 'deferral',
  'Provider.ownerID': 'deferral',
};

test('registry: TARGETS, TARGET_INFO and MAX_TIER are derived from it, one spec per name', () => {
  assert.deepEqual(
    [...TARGETS],
    REGISTRY.map((s) => s.name),
  );
  assert.equal(new Set(TARGETS).size, TARGETS.length);
  for (const t of TARGETS) assert.equal(TARGET_INFO[t].name, t);
  assert.equal(MAX_TIER, Math.max(...REGISTRY.map((s) => s.tier)));
  assert.equal(MAX_TIER, 4);
});

for (const t of TARGETS) {
  const info = TARGET_INFO[t];
  test(`registry: ${t} has a schema, a natural key, ops, a sender, a sandbox store and consistent tiers`, () => {
    // schema: an object schema; the natural key names its fields
    const shape = shapeOf(info.schema);
    assert.ok(shape, `${t}: schema is an object schema`);
    assert.ok(info.label.length > 0);
    assert.ok(info.key.parts.length > 0, `${t}: a natural key`);
    for (const alts of info.key.parts) for (const a of alts) assert.ok(a === '' || a in shape, `${t}: key part '${a}' is a field of the schema`);
    assert.ok(info.key.label.length > 0);
    // items: documents have an array of object items
    if (info.items) assert.ok(shapeOf(elementOf(shape[info.items] as z.ZodType) as z.ZodType), `${t}: ${info.items} is an array of objects`);
    // ops
    assert.ok(info.ops.includes(info.defaultOp), `${t}: the default op is allowed`);
    assert.equal(defaultOp(t), info.defaultOp);
    // references: every id field of the payload is declared with its resource, and only those
    const paths = fieldPaths(info);
    for (const p of paths) if (/id$/i.test(p)) assert.ok(p in info.refs, `${t}: id field ${p} is declared in refs`);
    for (const [field, resource] of Object.entries(info.refs)) {
      assert.ok(paths.includes(field), `${t}: refs.${field} is a field of the payload`);
      assert.ok((REF_RESOURCES as readonly string[]).includes(resource), `${t}: refs.${field} -> ${resource} is a resource`);
    }
    if (info.xref) assert.ok((REF_RESOURCES as readonly string[]).includes(info.xref));
    // tiers: what a record refers to is delivered before it (the tier barrier), or ordered by a named mechanism
    assert.ok(Number.isInteger(info.tier) && info.tier >= 0 && info.tier <= MAX_TIER);
    for (const [field, resource] of Object.entries(info.refs)) {
      const dep = senderOf.get(resource);
      if (!dep) continue; // reference data the WMS has (read-only)
      const why = SAME_TIER[`${t}.${field}`];
      if (dep.tier < info.tier) {
        assert.equal(why, undefined, `${t}.${field}: listed as same-tier but ${dep.name} is in a lower tier`);
        continue;
      }
      assert.equal(dep.tier, info.tier, `${t}.${field} refers to ${resource}, sent in a higher tier (${dep.tier} > ${info.tier})`);
      assert.ok(why, `${t}.${field} refers to ${resource}, sent in the same tier ${info.tier}: it must be in a lower tier`);
      if (why === 'sequence')
        assert.deepEqual(
          info.sequence && { scope: info.sequence.scope },
          dep.sequence && { scope: dep.sequence.scope },
          `${t}: same sequence scope as ${dep.name}`,
        );
    }
    // the send rule names client methods of the endpoint table, each served by the sandbox
    const endpoints = Object.entries(info.send)
      .filter(([k]) => k !== 'kind' && k !== 'unlinks')
      .map(([, v]) => v as string);
    assert.ok(endpoints.length > 0, `${t}: the send rule names its endpoints`);
    for (const e of endpoints) {
      assert.ok(e in ENDPOINTS, `${t}: ${e} is in the endpoint table`);
      assert.equal(typeof (HANDLERS as Record<string, unknown>)[e], 'function', `${t}: the sandbox has a handler for ${e}`);
    }
    // read-back rules that need a read from the send rule have it
    if (info.readBack === 'codeERP') assert.equal(info.send.kind, 'upsert-by-codeERP');
    if (info.readBack === 'gone') assert.equal(info.send.kind, 'delete');
    // documents are held when in doubt by default, master data resent
    assert.equal(info.inDoubtPolicy, info.document ? 'hold' : 'resend');
    // the sequence rule reads fields of the payload
    if (info.sequence?.by === 'fields')
      for (const f of [...info.sequence.fields, ...(info.sequence.part ? [info.sequence.part] : [])]) assert.ok(f in shape, `${t}: sequence field ${f}`);
    if (info.sequence?.by === 'refKey') assert.ok(info.sequence.field in shape);
    // the sandbox stores it
    assert.ok(
      (RESOURCES as readonly string[]).includes(info.sandbox) || info.sandbox === 'Stock' || info.sandbox === 'SyncSession',
      `${t}: sandbox store ${info.sandbox}`,
    );
  });
}

test('registry: every resource a $ref can name is a sandbox collection; sendable ones have their target', () => {
  for (const r of REF_RESOURCES) assert.ok((RESOURCES as readonly string[]).includes(r), `${r} is a sandbox collection`);
  const sendable = new Set(REGISTRY.map((s) => s.xref).filter((x): x is RefResource => x !== null));
  for (const r of sendable) assert.equal(TARGET_INFO[senderOf.get(r)!.name as Target].xref, r);
  assert.equal(new Set(RESOURCES).size, RESOURCES.length, 'no collection twice');
});

test("registry: the facts other modules read from a spec name the spec's own fields and resources", () => {
  for (const info of Object.values(TARGET_INFO)) {
    const t = info.name;
    const shape = shapeOf(info.schema) ?? {};
    // a resource wmsbridge sends can be looked up: its lookup fields are payload fields
    if (info.xref) {
      assert.ok(info.lookupBy && info.lookupBy.length > 0, `${t}: lookupBy for its resource ${info.xref}`);
      for (const f of info.lookupBy) assert.ok(f in shape, `${t}: lookupBy ${f} is a field of the payload`);
    }
    if (info.lookup) {
      assert.ok(info.xref, `${t}: a lookup reads its own resource`);
      assert.ok(info.lookupBy?.includes(info.lookup.by), `${t}: lookup by ${info.lookup.by} is one of its lookupBy`);
      if (info.lookup.read === 'get') assert.ok(info.lookup.get in ENDPOINTS, `${t}: ${info.lookup.get} is an endpoint`);
    }
    // the sandbox leaves unchecked only fields the spec declares as references
    for (const f of info.sandboxUnchecked ?? []) assert.ok(f in info.refs, `${t}: sandboxUnchecked ${f} is in refs`);
    // a stock label names the product through the productId reference
    if (info.stockLabel) assert.ok(info.refs['productId'], `${t}: a stock label reads productId as a reference`);
    // an orders report line reads fields of the document
    if (info.order) {
      assert.equal(info.document, true, `${t}: an order is a document`);
      for (const f of [info.order.number, info.order.partnerTaxId, ...(info.order.partnerName ? [info.order.partnerName] : [])])
        assert.ok(f in shape, `${t}: order field ${f} is a field of the payload`);
    }
    // what is processed again when dropped again: the operations files (stock lock, unlock, sync)
    assert.equal(info.duplicates, info.sandbox === 'Stock' || info.sandbox === 'SyncSession' ? 'process' : 'skip', `${t}: duplicates`);
  }
});
