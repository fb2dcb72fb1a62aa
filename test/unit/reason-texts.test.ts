/**
 * Every reason code the code base can produce has its text in every outbox locale (issue 42). The codes are
 * read from the registry (src/shared/reason-codes.ts and reason.ts: REASON_CODES), which types RowIssue.code
 * and RowFail's code: a new code cannot be used without being listed there, and this test then refuses it
 * until both catalogs have its text. Rendered, a text shows its values and names the source column.
 */
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { CATALOGS, createI18n, type Locale } from '../../src/i18n/index.js';
import { REASON_CODES, MapReason, ParseIssueCode, PushReason, OtherReason } from '../../src/shared/reason.js';
import { ErrorCode } from '../../src/shared/errors.js';
import { PROJECT_ROOT } from '../helpers/cli.js';

const LOCALES = Object.keys(CATALOGS) as Locale[];
/** every parameter a template may name, with a recognisable value */
const PARAMS = { field: 'weight', column: 'peso_bruto', value: '12,3,4', resource: 'Category', status: 422, refused: 3, message: 'SKU inválido', blocker: 'x' };

describe('reason texts: every code of the registry, in every locale', () => {
  test('the registry holds every family of codes (map, parse, push, errors)', () => {
    for (const family of [MapReason, ParseIssueCode, PushReason, ErrorCode, OtherReason])
      for (const code of Object.values(family)) assert.ok(REASON_CODES.includes(code), `${code} is in REASON_CODES`);
    assert.ok(REASON_CODES.length >= 60, `${REASON_CODES.length} codes`);
  });

  for (const locale of LOCALES) {
    test(`${locale}: a template for every code, rendered without a placeholder left, naming the column`, () => {
      const i18n = createI18n(locale);
      const missing = REASON_CODES.filter((code) => !(`reason.${code}` in CATALOGS[locale]));
      assert.deepEqual(missing, [], `codes without a ${locale} text`);
      for (const code of REASON_CODES) {
        const text = i18n.reason({ code, params: PARAMS }, 'FALLBACK', true);
        assert.notEqual(text, 'FALLBACK', code);
        assert.doesNotMatch(text, /\{\w+\}/, `${code}: ${text}`);
        const template = CATALOGS[locale][`reason.${code}`]!;
        // a template about a value names what the person edits: the column, with the WMS field as a detail
        if (template.includes('{of}')) {
          assert.ok(text.includes('peso_bruto'), `${code} names the column: ${text}`);
          assert.ok(text.includes('12,3,4') && text.includes('weight'), `${code} shows the value and the WMS field as detail: ${text}`);
        }
        assert.doesNotMatch(template, /\{field\}/, `${code}: the WMS field is a detail, not the text (${template})`);
      }
    });
  }

  test('pt-BR is not English: no code renders the same text in both locales', () => {
    const pt = createI18n('pt-BR');
    const en = createI18n('en');
    const same = REASON_CODES.filter((code) => pt.reason({ code, params: PARAMS }) === en.reason({ code, params: PARAMS }));
    assert.deepEqual(same, []);
  });

  test('without a column, a reason names the field; without either, the row', () => {
    const pt = createI18n('pt-BR');
    assert.equal(
      pt.reason({ code: 'invalid_ncm', params: { field: 'ncm', value: '19O59020' } }, '', true),
      'o valor do campo ncm não é um NCM: são 8 dígitos, só números (valor "19O59020")',
    );
    assert.equal(pt.reason({ code: 'required', params: {} }), 'falta o valor da linha, que é obrigatório');
    assert.equal(pt.reason({ code: 'invalid_number', params: { field: 'x', column: 'a, b' } }), 'o valor das colunas a, b não é um número');
  });

  test('every code a src/ file gives RowFail or a parse issue is in the registry (a literal outside the type would be caught here too)', () => {
    const found = new Set<string>();
    const walk = (dir: string): void => {
      for (const e of readdirSync(dir, { withFileTypes: true })) {
        const p = join(dir, e.name);
        if (e.isDirectory()) walk(p);
        else if (p.endsWith('.ts')) for (const m of readFileSync(p, 'utf8').matchAll(/new RowFail\(\s*'([a-z_]+)'/g)) found.add(m[1]!);
      }
    };
    walk(join(PROJECT_ROOT, 'src'));
    assert.ok(found.size >= 10, [...found].join(', '));
    for (const code of found) assert.ok((REASON_CODES as readonly string[]).includes(code), `${code} is in the registry`);
  });
});

describe('the source columns a compiled mapping records for each target field (the shipped mappings)', () => {
  test('fields, document items (any index), a ref, a lookup through a table, the attachment path', async () => {
    const { loadMappingsDir } = await import('../../src/map/load.js');
    const { sourceColumnsOf } = await import('../../src/map/compile.js');
    const loaded = await loadMappingsDir(join(PROJECT_ROOT, 'mappings'));
    const columns = sourceColumnsOf(loaded.mappings);
    assert.equal(columns('produtos', 'weight'), 'peso_bruto');
    assert.equal(columns('produtos', 'ncm'), 'ncm');
    assert.equal(columns('produtos', 'categoryID'), 'categoria', 'a ref: its from');
    assert.equal(columns('produtos', 'logisticsProfileID'), 'perfil_logistico', 'a lookup: its from');
    assert.equal(columns('pedidos', 'pickingItens[12].quantity'), 'quantidade', 'a document item, whatever its index');
    assert.equal(columns('pedidos', 'branchID'), 'cd', 'a lookup of a table of a column');
    assert.equal(columns('pedidos', 'codeERP'), 'pedido', 'a template');
    assert.equal(columns('pedidos', 'companyID'), undefined, 'a constant: no column');
    assert.equal(columns('anexos-pedidos', 'file'), 'arquivo', 'the attachment path (what the send loop names file)');
    assert.equal(columns('nope', 'weight'), undefined);
  });
});
