import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFile, writeFile, mkdir, readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { z } from 'zod';
import { parse as parseYaml } from 'yaml';
import { makeTempDir } from '../helpers/tmp.js';
import { PROJECT_ROOT } from '../helpers/cli.js';
import { loadMappingFile, loadMappingsDir, parseMapping } from '../../src/map/load.js';
import { generateMappingJsonSchema } from '../../src/map/json-schema.js';
import { ErrorCode, MappingError } from '../../src/shared/errors.js';

let dir = '';
let cleanup: () => Promise<void> = async () => {};
before(async () => ({ dir, cleanup } = await makeTempDir('wmsbridge-map-load-')));
after(() => cleanup());

const HEAD = `name: produtos
match: { files: 'PRODUTOS_*.csv' }
source: { format: delimited, header: false, columns: [codigo, nome, peso, cat, fam] }
target: Product
`;
const GOOD_FIELDS = `fields:
  code: codigo
  name: nome
  categoryID: { ref: Category, from: cat }
  familyID: { ref: Family, from: fam }
  logisticsProfileID: { lookup: LogisticsProfile, by: mnemonic, from: { const: PADRAO } }
  unitmeasurement: { const: UN }
`;

async function loadError(name: string, text: string): Promise<MappingError> {
  const path = join(dir, name);
  await writeFile(path, text);
  try {
    await loadMappingFile(path);
  } catch (err) {
    assert.ok(err instanceof MappingError, String(err));
    assert.equal(err.code, ErrorCode.MAPPING);
    return err;
  }
  assert.fail(`${name} loaded without error`);
}

describe('mapping errors name the file, the path inside and the problem', () => {
  test('a bad transform option, with its line', async () => {
    const err = await loadError('produtos.yaml', `${HEAD}${GOOD_FIELDS}  weight: { col: peso, transforms: [{ number: { decimal: ';' } }] }\n`);
    assert.match(err.message, /produtos\.yaml: fields\.weight\.transforms\[0\]\.number\.decimal: expected ',' or '\.' \(line 12\)$/);
  });

  test('unknown target field (with a suggestion), undeclared column, wrong source kind, missing required field', async () => {
    const err = await loadError(
      'b.yaml',
      `${HEAD}fields:
  code: codigo
  name: { col: nomee }
  wieght: { col: peso, transforms: [number] }
  familyID: { ref: Family, from: fam }
  logisticsProfileID: { lookup: LogisticsProfile, by: codeERP, from: { const: x } }
  unitmeasurement: { path: un }
`,
    );
    const m = err.message;
    assert.match(m, /b\.yaml: fields\.name\.col: 'nomee' is not declared in source\.columns \(known: codigo, nome, peso, cat, fam\) \(line 7\)/);
    assert.match(m, /b\.yaml: fields\.wieght: Product has no field 'wieght' \(did you mean 'weight'\?\)/);
    assert.match(m, /fields\.logisticsProfileID\.by: LogisticsProfile can be looked up by mnemonic or name or id, not 'codeERP'/);
    assert.match(m, /fields\.unitmeasurement\.path: 'path' reads XML\/JSON files; this source is delimited: use 'col'/);
    assert.match(m, /b\.yaml: fields: Product requires 'categoryID' but the mapping gives no expression for it/);
    const issues = err.details['issues'] as Array<{ path: string }>;
    assert.equal(issues.length, 5);
  });

  test('YAML syntax errors carry line and column', async () => {
    const err = await loadError('c.yaml', `${HEAD}fields:\n  code: codigo\n  name: [nome\n`);
    assert.match(err.message, /c\.yaml: \(yaml\): YAML \w+: .* \(line \d+\)/);
  });

  test('unknown keys, unknown transforms and enum typos', async () => {
    const err = await loadError(
      'd.yaml',
      `name: x
match: { files: '*.csv' }
source: { format: delimited, delimter: ';' }
target: Category
fields:
  codeERP: { col: a, transforms: [trm] }
  name: { col: b, transform: [trim] }
  description: { lookup: Warehose, by: codeERP, from: c }
`,
    );
    assert.match(err.message, /d\.yaml: source: unknown key 'delimter' \(line 3\)/);
    assert.match(err.message, /fields\.codeERP\.transforms\[0\]: unknown transform 'trm'/);
    assert.match(err.message, /fields\.name: unknown key 'transform' \(line 7\)/);
    assert.match(err.message, /fields\.description\.lookup: expected .*'Warehouse'/);
  });

  test('semantic checks: documents need group, op per target, natural keys, attachments, regex, time zone', async () => {
    const cases: Array<[Record<string, unknown>, RegExp]> = [
      [{ target: 'PickingList', fields: { order: 'a' } }, /group: PickingList is a document: add group/],
      [{ target: 'Category', op: 'upsert', fields: { codeERP: 'a', name: 'b' } }, /op: Category accepts op create, not 'upsert'/],
      [{ target: 'Category', fields: { name: 'b' } }, /fields: the natural key of Category is codeERP: map codeERP or set key/],
      [
        { target: 'PickingListAttachment', fields: { PickingListID: { ref: 'PickingList', from: 'a' }, UserFileName: 'b' } },
        /attachmentPath: PickingListAttachment needs attachmentPath/,
      ],
      [{ target: 'Category', filter: { col: 'a', regex: '([' }, fields: { codeERP: 'a', name: 'b' } }, /filter\.regex: invalid regular expression/],
      [{ target: 'Category', timeZone: 'America/Sao_Pablo', fields: { codeERP: 'a', name: 'b' } }, /timeZone: unknown time zone 'America\/Sao_Pablo'/],
      [{ target: 'Category', fields: { codeERP: { template: '{a' }, name: 'b' } }, /fields\.codeERP\.template: unclosed '\{'/],
      [
        { target: 'Category', fields: { codeERP: 'a', name: { col: 'b', transforms: [{ date: { format: 'dd/MM' } }] } } },
        /fields\.name\.transforms\[0\]\.date\.format: date format 'dd\/MM' needs yyyy/,
      ],
      [{ target: 'Category', filter: { col: 'a' }, fields: { codeERP: 'a', name: 'b' } }, /filter: a condition has exactly one test/],
      [{ target: 'Category', source: { format: 'delimited', header: true, columns: ['a', 'b'] }, fields: { codeERP: 'a', name: 'b' } }, /source\.columns: /],
      [{ target: 'Category', group: { by: 'a', items: 'pickingItens', itemFields: {} }, fields: { codeERP: 'a', name: 'b' } }, /group: group makes documents/],
    ];
    for (const [obj, re] of cases) {
      assert.throws(
        () => parseMapping({ name: 'm', match: { files: '*.csv' }, source: { format: 'delimited' }, ...obj }, 'm.yaml'),
        (err: unknown) => {
          assert.ok(err instanceof MappingError);
          assert.match(err.message, re);
          assert.match(err.message, /^m\.yaml: /);
          return true;
        },
      );
    }
  });

  test('JSON mapping files and unreadable files', async () => {
    const path = join(dir, 'cat.json');
    await writeFile(
      path,
      JSON.stringify({
        $schema: '../schemas/mapping.schema.json',
        name: 'cat',
        match: { files: '*.csv' },
        source: { format: 'delimited' },
        target: 'Category',
        fields: { codeERP: 'a', name: 'b' },
      }),
    );
    const m = await loadMappingFile(path);
    assert.equal(m.name, 'cat');
    assert.equal(m.source.format === 'delimited' && m.source.delimiter, ';', 'parser defaults filled in');
    const bad = join(dir, 'bad.json');
    await writeFile(bad, '{"name": ');
    await assert.rejects(loadMappingFile(bad), /bad\.json: \(file\): not valid JSON/);
    await assert.rejects(loadMappingFile(join(dir, 'missing.yaml')), /missing\.yaml: \(file\): cannot read: ENOENT/);
    await assert.rejects(loadMappingFile(join(dir, 'notes.txt')), /ends in \.yaml, \.yml or \.json/);
  });

  test('loadMappingsDir loads the good ones, reports the bad ones and duplicate names', async () => {
    const d = join(dir, 'mappings');
    await mkdir(d);
    const ok = (name: string) => `name: ${name}\nmatch: { files: '*.csv' }\nsource: { format: delimited }\ntarget: Category\nfields: { codeERP: a, name: b }\n`;
    await writeFile(join(d, 'a.yaml'), ok('one'));
    await writeFile(join(d, 'b.yml'), ok('two'));
    await writeFile(join(d, 'c.yaml'), ok('one'));
    await writeFile(join(d, 'd.yaml'), 'name: [');
    await writeFile(join(d, 'README.md'), '# not a mapping');
    const { mappings, errors } = await loadMappingsDir(d);
    assert.deepEqual(
      mappings.map((m) => m.name),
      ['one', 'two'],
    );
    assert.equal(errors.length, 2);
    assert.match(errors[0]?.message ?? '', /c\.yaml: name: mapping name 'one' is already used by .*a\.yaml/);
    assert.match(errors[1]?.message ?? '', /d\.yaml: \(yaml\)/);
    const none = await loadMappingsDir(join(dir, 'nope'));
    assert.match(none.errors[0]?.message ?? '', /cannot read the mappings folder/);
  });
});

describe('JSON Schema', () => {
  test('generated from the model, committed, and accepting every shipped mapping', async () => {
    const schema = generateMappingJsonSchema() as Record<string, unknown>;
    assert.equal(schema['$schema'], 'https://json-schema.org/draft/2020-12/schema');
    const committed = JSON.parse(await readFile(join(PROJECT_ROOT, 'schemas/mapping.schema.json'), 'utf8')) as unknown;
    // descriptions may be reworded by the parser owners between regenerations; keys and types may not drift
    const shape = (v: unknown): unknown =>
      Array.isArray(v)
        ? v.map(shape)
        : v !== null && typeof v === 'object'
          ? Object.fromEntries(
              Object.entries(v)
                .filter(([k]) => k !== 'description')
                .map(([k, x]) => [k, shape(x)]),
            )
          : v;
    assert.deepEqual(shape(committed), shape(schema), 'schemas/mapping.schema.json is stale: run `wmsbridge schema > schemas/mapping.schema.json`');
    // validate with a validator built from the JSON Schema itself (not from the zod model)
    const validator = z.fromJSONSchema(schema as Parameters<typeof z.fromJSONSchema>[0]);
    const files = (await readdir(join(PROJECT_ROOT, 'mappings'))).filter((f) => f.endsWith('.yaml'));
    assert.ok(files.length >= 10);
    for (const f of files) {
      const text = await readFile(join(PROJECT_ROOT, 'mappings', f), 'utf8');
      assert.match(text, /^# yaml-language-server: \$schema=\.\.\/schemas\/mapping\.schema\.json/, `${f} references the schema`);
      const r = validator.safeParse(parseYaml(text));
      assert.ok(r.success, `${f}: ${r.success ? '' : JSON.stringify(r.error.issues.slice(0, 2))}`);
    }
    const example = parseYaml(await readFile(join(PROJECT_ROOT, 'mappings/produtos.yaml'), 'utf8')) as Record<string, unknown>;
    assert.equal(validator.safeParse({ ...example, target: 'Produto' }).success, false);
    assert.equal(validator.safeParse({ ...example, fields: { code: { col: 'a', transforms: [{ number: { decimal: ';' } }] } } }).success, false);
    assert.equal(validator.safeParse({ ...example, extra: 1 }).success, false);
  });
});
