/**
 * The building blocks of `wmsbridge infer`, in process: encoding and dialect sniffing, value types, fixed-width
 * boundaries, names. The CLI on the samples is test/e2e/infer.test.ts.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import iconv from 'iconv-lite';
import { guessEncoding, sniffDelimited, fixedBoundaries, sniffFixedWidth } from '../../src/infer/sniff.js';
import { typeColumn, isValidCpf } from '../../src/infer/types.js';
import { namesFromFile } from '../../src/infer/propose.js';
import { nameMatch } from '../../src/infer/dictionary.js';

describe('infer building blocks', () => {
  test('fixed-width titles a little off their columns snap to the data boundaries', () => {
    const text = ' CODIGO  NOME\n000101   ARROZ\n000102   FEIJAO\n000103   MILHO\n'.replace('CODIGO', 'codigo').replace('NOME', 'nome');
    const g = sniffFixedWidth(text);
    assert.equal(g.titleLine, true);
    assert.deepEqual(
      g.records[0]!.fields.map((f) => `${f.name}@${f.start}`),
      ['codigo@1', 'nome@10'],
    );
  });

  test('encoding: UTF-8, Windows-1252 (0x80-0x9F), ISO-8859-1 (undefined cp1252 bytes), BOM, ASCII', () => {
    assert.equal(guessEncoding(Buffer.from('São Paulo;ação\n', 'utf8')).encoding, 'utf-8');
    assert.equal(guessEncoding(iconv.encode('Doca – portão “2”\n', 'win1252')).encoding, 'windows-1252');
    assert.equal(guessEncoding(iconv.encode('São Paulo\n', 'latin1')).encoding, 'windows-1252'); // reads alike
    assert.equal(guessEncoding(Buffer.from([0x41, 0x81, 0xe9, 0x0a])).encoding, 'iso-8859-1');
    assert.equal(guessEncoding(Buffer.from([0xef, 0xbb, 0xbf, 0x41])).bom, true);
    assert.equal(guessEncoding(Buffer.from('abc\n')).ascii, true);
  });

  test('dialect: decimal commas do not make "," the delimiter; quoted commas do not split', () => {
    const semi = 'codigo;peso;preco\n0001;1,250;10,50\n0002;2,5;3,99\n0003;0,75;1.234,00\n';
    assert.equal(sniffDelimited(semi).delimiter, ';');
    const comma = 'cod,nome,end\n1,"A, B",x\n2,"C, D",y\n3,E,z\n';
    const d = sniffDelimited(comma);
    assert.equal(d.delimiter, ',');
    assert.equal(d.columns, 3);
    assert.equal(sniffDelimited('a|b|c\n1|2,5|x\n2|3,5|y\n').delimiter, '|');
    assert.equal(sniffDelimited('a\tb\n1\t2\n').delimiter, '\t');
    assert.equal(sniffDelimited('0001;1,5\n0002;2,5\n').header, false);
    assert.equal(sniffDelimited('codigo;descricao\n1;TUBO 1/2" PVC\n2;CANO 3/4" PVC\n').quote, false);
    assert.equal(sniffDelimited('codigo;descricao\n1;"TUBO; PVC"\n2;CANO\n').quote, '"');
  });

  test('types: CNPJ/CPF and GTIN check digits, NCM, CEP, UF, flags, dates with formats, decimals, codes', () => {
    assert.equal(typeColumn(['12.345.678/0001-95', '23.456.789/0001-95']).kind, 'cnpj');
    assert.notEqual(typeColumn(['12345678000196', '23456789000196']).kind, 'cnpj'); // wrong check digits
    assert.ok(isValidCpf('12345678909'));
    assert.equal(typeColumn(['7891234001016', '7891234001023']).kind, 'gtin');
    assert.notEqual(typeColumn(['7891234001017', '7891234001024']).kind, 'gtin'); // wrong check digits
    assert.equal(typeColumn(['17891234001013']).evidence.includes('DUN-14'), true);
    assert.equal(typeColumn(['10063021', '07133319'], { name: 'B1_POSIPI' }).kind, 'ncm');
    assert.equal(typeColumn(['12020-000', '37500-015']).kind, 'cep');
    assert.equal(typeColumn(['SP', 'MG', 'RJ']).kind, 'uf');
    assert.equal(typeColumn(['S', 'N', 'S']).kind, 'flag');
    assert.deepEqual(
      [
        typeColumn(['05/11/2024 08:12', '06/11/2024 17:00']).format,
        typeColumn(['20241105', '20241231']).format,
        typeColumn(['2024-11-04T15:42:10-03:00']).format,
      ],
      ['dd/MM/yyyy HH:mm', 'yyyyMMdd', 'iso'],
    );
    assert.equal(typeColumn(['31/02/2024', '30/02/2024']).kind !== 'date', true); // impossible dates
    const comma = typeColumn(['1.234,56', '5,050', '0,5']);
    assert.deepEqual([comma.kind, comma.decimal, comma.thousands], ['decimal', ',', '.']);
    const dot = typeColumn(['480.0000', '3.1500000000']);
    assert.deepEqual([dot.kind, dot.decimal], ['decimal', '.']);
    assert.equal(typeColumn(['1,010', '2,020'], { fileDecimal: ',' }).decimal, ',');
    assert.equal(typeColumn(['1.010', '2.020'], { fileDecimal: '.' }).decimal, '.');
    assert.deepEqual([typeColumn(['000101', '000102']).kind, typeColumn(['000101', '000102']).leadingZeros], ['code', true]);
    const implied = typeColumn(['000000000412000', '000000000630000', '000000000188500'], { fixedWidth: true });
    assert.deepEqual([implied.kind, implied.scale], ['implied', 3]);
  });

  test('fixed-width: boundaries at blank columns, digits turning into letters, zero-padded starts; record tags', () => {
    const lines = ['1000101         CD-SP01001000000000412000UN', '1000102         CD-SP01001000000000630000UN', '1000103         CD-SP01001000000000188000KG'];
    assert.deepEqual(
      fixedBoundaries(lines, 1, 43).map((p) => p + 1),
      [2, 17, 24, 27, 42],
    );
    // a date inside a run of digits; a CPF left-aligned in a CNPJ field before a name; a name's longer tail
    const h = [
      'H0123012024110590123456000131SUPERMERCADO BOA ESPERANCA LTDA',
      'H0123022024110512345678909   JOSE CARLOS',
      'H0123032024110681234567000124MERCEARIA SAO JOSE',
    ];
    assert.deepEqual(
      fixedBoundaries(h, 1, 61).map((p) => p + 1),
      [2, 8, 16, 30],
    );
    const g = sniffFixedWidth(`0HEADER 20241105\n${lines.join('\n')}\n9000005\n`);
    assert.equal(g.tagLength, 1);
    assert.deepEqual(
      g.records.map((r) => `${r.tag}:${r.type}`),
      ['0:header', '1:detail', '9:trailer'],
    );
    assert.deepEqual(g.trailer, { type: 'trailer', countField: 'registros', counts: 'all' });
  });

  test('names: mapping name and glob from the file name; Protheus names match their words', () => {
    assert.deepEqual(namesFromFile('PEDIDOS_20241105_1700.csv'), { name: 'pedidos', glob: 'PEDIDOS_*.csv' });
    assert.deepEqual(namesFromFile('SB1_PRODUTOS_20241105.csv'), { name: 'sb1-produtos', glob: 'SB1_PRODUTOS_*.csv' });
    assert.equal(nameMatch('B1_CODBAR', 'b1_codbar'), 1);
    assert.equal(nameMatch('cnpj_cliente', 'cnpj'), 0.6);
    assert.equal(nameMatch('Descrição', 'descricao'), 1);
  });
});
