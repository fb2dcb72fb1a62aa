import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync } from 'node:fs';
import { open, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import iconv from 'iconv-lite';
import { makeTempDir } from '../helpers/tmp.js';
import { PROJECT_ROOT, SAMPLES_DIR } from '../helpers/cli.js';
import { collectItems, type ParsedItem, type ParseOptionsInput } from '../../src/parse/index.js';
import { locateElements } from '../../src/parse/xml.js';
import { InputError } from '../../src/shared/errors.js';
import type { RawRow } from '../../src/parse/types.js';

const NFE = { format: 'xml', itemPath: 'nfeProc/NFe/infNFe/det' } as const satisfies ParseOptionsInput;
const FIXTURE = join(PROJECT_ROOT, 'test/fixtures/parse/nfe-lots-prefixed.xml');

let dir: string;
let cleanup: () => Promise<void>;
let n = 0;
before(async () => {
  ({ dir, cleanup } = await makeTempDir('wmsbridge-parse-xml-'));
});
after(async () => cleanup());
async function file(content: string | Buffer): Promise<string> {
  const p = join(dir, `x${n++}.xml`);
  await writeFile(p, content);
  return p;
}
const rows = (items: ParsedItem[]): RawRow[] => items.flatMap((i) => (i.kind === 'row' ? [i.row] : []));

describe('xml: NF-e items', () => {
  test('prefixed namespaces, leading zeros, entities, CDATA, lots (rastro) as indexed paths and JSON', async () => {
    const { items, summary, facts } = await collectItems(FIXTURE, NFE);
    assert.equal(summary.rows, 3);
    assert.equal(facts.itemPath, 'nfeProc/NFe/infNFe/det');
    const [a, b, c] = rows(items);
    assert.equal(a!.fields['prod/cProd'], '00000001');
    assert.equal(a!.fields['prod/NCM'], '07031019');
    assert.equal(a!.fields['prod/cEAN'], '07891234567895');
    assert.equal(a!.fields['@nItem'], '1');
    assert.equal(a!.fields['prod/xProd'], 'CEBOLA <ROXA> "EXTRA" çã');
    assert.equal(a!.fields['prod/rastro[0]/nLote'], '0012E5'); // not 1200000
    assert.equal(a!.fields['prod/rastro[1]/nLote'], '000777');
    assert.equal(a!.fields['prod/rastro[1]/dVal'], '2024-07-31');
    assert.deepEqual(JSON.parse(a!.fields['prod/rastro']!), [
      { nLote: '0012E5', qLote: '4.000', dFab: '2024-01-01', dVal: '2024-06-30' },
      { nLote: '000777', qLote: '6.000', dFab: '2024-01-02', dVal: '2024-07-31' },
    ]);
    // one lot still uses the indexed scheme (rastro is a repeat path)
    assert.equal(b!.fields['prod/rastro[0]/nLote'], 'L-01');
    assert.deepEqual(JSON.parse(b!.fields['prod/rastro']!), [{ nLote: 'L-01', qLote: '1.000' }]);
    assert.equal(b!.fields['prod/xProd'], 'ALHO <GRAUDO>');
    assert.equal(b!.fields.infAdProd, 'obs "a" > b');
    assert.equal(c!.fields['prod/rastro'], undefined);
    assert.equal(c!.fields['prod/NCM'], '09021000');
  });

  test('document-level fields with "/" from the root without the optional nfeProc', async () => {
    const { items } = await collectItems(FIXTURE, NFE);
    const a = rows(items)[0]!;
    assert.equal(a.fields['/NFe/infNFe/ide/nNF'], '0001234');
    assert.equal(a.fields['/NFe/infNFe/ide/serie'], '001');
    assert.equal(a.fields['/NFe/infNFe/emit/CNPJ'], '01234567000190');
    assert.equal(a.fields['/NFe/infNFe/emit/xNome'], 'ALIMENTOS S&A LTDA');
    assert.equal(a.fields['/NFe/infNFe/@Id'], 'NFe35240112345678000190550010000012341000012345');
    assert.equal(a.fields['/NFe/infNFe/total/ICMSTot/vNF'], '123.40');
    assert.equal(a.fields['/protNFe/infProt/nProt'], '135240000012345');
    assert.equal(a.fields['/@versao'], '4.00');
    // other items are not document fields
    assert.equal(
      Object.keys(a.fields).some((k) => k.includes('det')),
      false,
    );
  });

  test('line = the line of the n-th item start tag (comments ignored), lineEnd its end; recordType with index', async () => {
    const { items } = await collectItems(FIXTURE, NFE);
    assert.deepEqual(
      rows(items).map((r) => [r.line, r.lineEnd, r.recordType]),
      [
        [16, 36, 'nfeProc/NFe/infNFe/det[1]'],
        [37, 49, 'nfeProc/NFe/infNFe/det[2]'],
        [50, undefined, 'nfeProc/NFe/infNFe/det[3]'],
      ],
    );
  });

  test('rootOptional: false keeps the root in document paths', async () => {
    const { items } = await collectItems(FIXTURE, { ...NFE, rootOptional: false });
    assert.equal(rows(items)[0]!.fields['/nfeProc/NFe/infNFe/ide/nNF'], '0001234');
  });

  test('an NFe without nfeProc is read with the same itemPath; without rootOptional it is not found', async () => {
    const p = join(SAMPLES_DIR, 'sped-nfe/tests__fixtures__xml__nfce.xml');
    const { items } = await collectItems(p, NFE);
    const r = rows(items);
    assert.equal(r.length, 4);
    assert.equal(r[0]!.recordType, 'NFe/infNFe/det[1]');
    assert.ok(r[0]!.fields['/NFe/infNFe/ide/nNF']);
    await assert.rejects(
      collectItems(p, { ...NFE, rootOptional: false }),
      (e: unknown) => e instanceof InputError && /no item element at nfeProc\/NFe\/infNFe\/det \(the document root is NFe\)/.test(e.message),
    );
  });

  test('a batch with several NFe: each item carries the document fields of its own NFe', async () => {
    const nfe = (nNF: string, items: string) => `<NFe><infNFe Id="N${nNF}"><ide><nNF>${nNF}</nNF></ide>${items}</infNFe></NFe>`;
    const p = await file(
      `<enviNFe xmlns="http://www.portalfiscal.inf.br/nfe"><idLote>7</idLote>\n${nfe('1', '<det nItem="1"><prod><cProd>A</cProd></prod></det>')}\n${nfe('2', '<det nItem="1"><prod><cProd>B</cProd></prod></det><det nItem="2"><prod><cProd>C</cProd></prod></det>')}\n</enviNFe>`,
    );
    const { items } = await collectItems(p, { format: 'xml', itemPath: 'enviNFe/NFe/infNFe/det', rootOptional: false });
    assert.deepEqual(
      rows(items).map((r) => [
        r.line,
        r.recordType,
        r.fields['prod/cProd'],
        r.fields['/enviNFe/NFe/infNFe/ide/nNF'],
        r.fields['/enviNFe/NFe/infNFe/@Id'],
        r.fields['/enviNFe/idLote'],
      ]),
      [
        [2, 'enviNFe/NFe[1]/infNFe/det[1]', 'A', '1', 'N1', '7'],
        [3, 'enviNFe/NFe[2]/infNFe/det[1]', 'B', '2', 'N2', '7'],
        [3, 'enviNFe/NFe[2]/infNFe/det[2]', 'C', '2', 'N2', '7'],
      ],
    );
  });

  test('itemPath alternatives are tried in order', async () => {
    const p = await file('<root><a><item>1</item></a></root>');
    const { items } = await collectItems(p, { format: 'xml', itemPath: ['root/b/item', 'root/a/item'], rootOptional: false });
    assert.deepEqual(
      rows(items).map((r) => [r.recordType, r.fields['#text']]),
      [['root/a/item[1]', '1']],
    );
  });

  test('every NF-e sample parses; values keep leading zeros; lines point at <det', async () => {
    const files = [
      ...readdirSync(join(SAMPLES_DIR, 'nfelib'))
        .filter((f) => f.endsWith('.xml'))
        .map((f) => join(SAMPLES_DIR, 'nfelib', f)),
      ...readdirSync(join(SAMPLES_DIR, 'sped-nfe'))
        .filter((f) => f.endsWith('.xml'))
        .map((f) => join(SAMPLES_DIR, 'sped-nfe', f)),
    ];
    assert.ok(files.length >= 12);
    const ncms: string[] = [];
    for (const f of files) {
      const { items } = await collectItems(f, NFE);
      const r = rows(items);
      assert.ok(r.length >= 1, f);
      const text = (await import('node:fs')).readFileSync(f, 'utf8').split('\n');
      for (const row of r) {
        assert.match(text[row.line - 1]!, /<(?:\w+:)?det[\s>]/, `${f}:${row.line}`);
        assert.equal(typeof row.fields['prod/cProd'], 'string');
        ncms.push(row.fields['prod/NCM']!);
      }
    }
    for (const ncm of ['09021000', '09103000', '08119000']) assert.ok(ncms.includes(ncm), ncm);
  });

  test('the PL_010C example has rastro lots', async () => {
    const { items } = await collectItems(join(SAMPLES_DIR, 'sped-nfe/examples__nfe_v4.00_PL_010C.xml'), NFE);
    const r = rows(items)[0]!;
    assert.equal(r.fields['prod/rastro[0]/nLote'], 'string');
    assert.ok(JSON.parse(r.fields['prod/rastro']!).length >= 1);
  });

  test('a GRANOLA item keeps "&"', async () => {
    const { items } = await collectItems(join(SAMPLES_DIR, 'nfelib/35180834128745000152550010000476861118934859-nfe.xml'), NFE);
    assert.ok(rows(items).some((r) => r.fields['prod/xProd'] === 'GRANOLA MACA & GERGELIM 800G'));
  });

  test('default namespace (xmlns) and a prefixed root both work', async () => {
    const p = await file(
      '<?xml version="1.0"?>\n<NFe xmlns="http://www.portalfiscal.inf.br/nfe"><infNFe><det nItem="1"><prod><NCM>01</NCM></prod></det></infNFe></NFe>',
    );
    const { items } = await collectItems(p, NFE);
    assert.equal(rows(items)[0]!.fields['prod/NCM'], '01');
  });

  test('an element with attributes and text; repeated non-configured children are indexed too', async () => {
    const p = await file('<r><it><v unit="kg">12</v><tag>a</tag><tag>b</tag><e/></it></r>');
    const { items } = await collectItems(p, { format: 'xml', itemPath: 'r/it', rootOptional: false });
    const f = rows(items)[0]!.fields;
    assert.equal(f.v, '12');
    assert.equal(f['v/@unit'], 'kg');
    assert.equal(f['tag[0]'], 'a');
    assert.equal(f['tag[1]'], 'b');
    assert.deepEqual(JSON.parse(f.tag!), ['a', 'b']);
    assert.equal(f.e, '');
  });

  test('CDATA is literal text (no entity decoding), joined with the element text', async () => {
    const p = await file('<r><it><a><![CDATA[x &amp; <y>]]></a><b>t &amp; <![CDATA[&lt;]]></b><c><![CDATA[1]]><![CDATA[2]]></c></it></r>');
    const { items } = await collectItems(p, { format: 'xml', itemPath: 'r/it', rootOptional: false });
    const f = rows(items)[0]!.fields;
    assert.equal(f.a, 'x &amp; <y>');
    assert.equal(f.b, 't &&lt;');
    assert.equal(f.c, '12');
  });

  test('the XML declaration encoding is honoured (ISO-8859-1)', async () => {
    const p = await file(iconv.encode('<?xml version="1.0" encoding="ISO-8859-1"?><r><it>Ação</it></r>', 'latin1'));
    const { items } = await collectItems(p, { format: 'xml', itemPath: 'r/it', rootOptional: false });
    assert.equal(rows(items)[0]!.fields['#text'], 'Ação');
  });
});

describe('xml: refused files', () => {
  test('billion laughs (internal entities) is refused before parsing', async () => {
    const bomb =
      '<?xml version="1.0"?>\n<!DOCTYPE lolz [\n <!ENTITY lol "lol">\n <!ENTITY lol2 "&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;">\n]>\n<lolz><det>&lol2;</det></lolz>';
    await assert.rejects(collectItems(await file(bomb), { format: 'xml', itemPath: 'lolz/det' }), (e: unknown) => {
      assert.ok(e instanceof InputError);
      assert.match(e.message, /:2: XML with DOCTYPE\/ENTITY is refused \(entity expansion \/ XXE\)/);
      return true;
    });
  });

  test('external entity (XXE) is refused, even after comments', async () => {
    const xxe = '<?xml version="1.0"?><!-- c --><!doctype foo [<!ENTITY xxe SYSTEM "file:///etc/passwd">]><foo><det>&xxe;</det></foo>';
    await assert.rejects(collectItems(await file(xxe), { format: 'xml', itemPath: 'foo/det' }), /DOCTYPE\/ENTITY is refused/);
  });

  test('a file above maxBytes is refused with its size and the limit, before reading it', async () => {
    const p = join(dir, 'big.xml');
    const fh = await open(p, 'w');
    await fh.truncate(57 * 1024 * 1024); // sparse: no real 57 MB written
    await fh.close();
    await assert.rejects(collectItems(p, NFE), (e: unknown) => e instanceof InputError && e.message === `${p}: file is 57 MB, above the XML limit of 20 MB`);
    const small = await file('<r><it>1</it></r>');
    await assert.rejects(
      collectItems(small, { format: 'xml', itemPath: 'r/it', maxBytes: 10 }),
      /file is 0 MB, above the XML limit of 0 MB|above the XML limit/,
    );
  });

  test('not well-formed XML is an InputError with the line', async () => {
    const p = await file('<r>\n<it>1</it>\n<it>2</x>\n</r>');
    await assert.rejects(
      collectItems(p, { format: 'xml', itemPath: 'r/it' }),
      (e: unknown) => e instanceof InputError && /:3: XML is not well-formed/.test(e.message),
    );
  });

  test('binary content is refused', async () => {
    await assert.rejects(collectItems(await file(Buffer.from([0x3c, 0x72, 0x00, 0x3e])), NFE), /looks binary/);
  });
});

describe('locateElements', () => {
  test('attributes holding ">" and self-closing items', () => {
    const text = '<r>\n<it a=">"/>\n<x><it/></x>\n<it>\n</it>\n</r>';
    assert.deepEqual(locateElements(text, ['r', 'it']), [
      { line: 2, lineEnd: 2 },
      { line: 4, lineEnd: 5 },
    ]);
  });
});
