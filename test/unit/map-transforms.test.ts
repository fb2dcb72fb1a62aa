import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { compileTransform, RowFail, TransformSpecError, wallToUtc, zoneOffsetFn } from '../../src/map/transforms.js';
import { cnpjCheckDigits, gtinCheckDigit, isValidCnpj, isValidGtin, uuid5, WMSBRIDGE_UUID_NAMESPACE } from '../../src/map/checks.js';
import type { TransformSpec } from '../../src/map/model.js';

const opts = { timeZone: 'America/Sao_Paulo' };
const t = (spec: unknown) => compileTransform(spec as TransformSpec, opts);
function fails(spec: unknown, value: unknown, code: string, message?: RegExp): void {
  assert.throws(
    () => t(spec)(value),
    (err: unknown) => {
      assert.ok(err instanceof RowFail, `expected RowFail, got ${String(err)}`);
      assert.equal(err.code, code);
      if (message) assert.match(err.message, message);
      return true;
    },
  );
}

describe('text transforms', () => {
  test('trim, upper, lower', () => {
    assert.equal(t('trim')('  a b  '), 'a b');
    assert.equal(t('upper')('ação'), 'AÇÃO');
    assert.equal(t('lower')('ÁGUA'), 'água');
  });
  test('title keeps Portuguese particles lower case except the first word', () => {
    assert.equal(t('title')('HIGIENE E LIMPEZA'), 'Higiene e Limpeza');
    assert.equal(t('title')('DE VOLTA DOS QUE FORAM'), 'De Volta dos Que Foram');
    assert.equal(t('title')('frios  e embutidos'), 'Frios  e Embutidos');
  });
  test('padStart, stripZeros, digitsOnly, substring, truncate, replace', () => {
    assert.equal(t({ padStart: { length: 6, char: '0' } })('123'), '000123');
    assert.equal(t({ padStart: { length: 2, char: '0' } })('12345'), '12345');
    assert.equal(t('stripZeros')('000120'), '120');
    assert.equal(t('stripZeros')('0000'), '0');
    assert.equal(t('stripZeros')('A001'), 'A001');
    assert.equal(t('digitsOnly')('12.345.678/0001-95'), '12345678000195');
    assert.equal(t({ substring: { start: 2, length: 3 } })('ABCDEFG'), 'CDE');
    assert.equal(t({ substring: { start: 4 } })('NFe123'), '23');
    assert.equal(t({ truncate: { length: 4 } })('ABCDEFG'), 'ABCD');
    assert.equal(t({ replace: { pattern: '^NFe', with: '', flags: 'g' } })('NFe3524'), '3524');
    assert.equal(t({ replace: { pattern: '(\\d+)-(\\d+)', with: '$2/$1', flags: 'g' } })('10-20 30-40'), '20/10 40/30');
  });
  test('a bad regular expression is a compile-time error', () => {
    assert.throws(() => t({ replace: { pattern: '([a-', with: '', flags: 'g' } }), TransformSpecError);
  });
});

describe('number and integer', () => {
  test('Brazilian decimals by default', () => {
    const n = t('number');
    assert.equal(n('1.234,56'), 1234.56);
    assert.equal(n('1234,5'), 1234.5);
    assert.equal(n('0,050'), 0.05);
    assert.equal(n('-12,50'), -12.5);
    assert.equal(n('12,50-'), -12.5);
    assert.equal(n(' 7 '), 7);
    assert.equal(n(',5'), 0.5);
    assert.equal(n(3.5), 3.5);
  });
  test("decimal '.' has no thousands separator by default; explicit separators work", () => {
    assert.equal(t({ number: { decimal: '.' } })('2490.0000000'), 2490);
    fails({ number: { decimal: '.' } }, '1,234.5', 'invalid_number', /decimal '\.' thousands none/);
    assert.equal(t({ number: { decimal: '.', thousands: ',' } })('1,234.5'), 1234.5);
    assert.equal(t({ number: { decimal: ',', thousands: '' } })('1234,5'), 1234.5);
    fails({ number: { decimal: ',', thousands: '' } }, '1.234,5', 'invalid_number');
  });
  test('scale reads implied decimals of digits-only values', () => {
    const s = t({ number: { decimal: ',', thousands: '', scale: 3 } });
    assert.equal(s('000000000412000'), 412);
    assert.equal(s('000000000087350'), 87.35);
    assert.equal(s('5'), 0.005);
    assert.equal(s('1,5'), 1.5, 'an explicit decimal part wins over the scale');
  });
  test('rejects garbage with the separators in the message', () => {
    fails('number', '12,3,4', 'invalid_number', /^'12,3,4' is not a number \(decimal ',' thousands '\.'\)$/);
    fails('number', 'abc', 'invalid_number', /'abc' is not a number/);
    fails('number', '1.23,4', 'invalid_number');
    fails('number', '-', 'invalid_number');
    fails('number', '-5-', 'invalid_number');
    fails('number', '12.34', 'invalid_number', /decimal ','/);
  });
  test('integer', () => {
    assert.equal(t('integer')('0012'), 12);
    assert.equal(t('integer')('-3'), -3);
    assert.equal(t({ integer: { thousands: '.' } })('1.200'), 1200);
    fails('integer', '1,5', 'invalid_integer', /'1,5' is not an integer/);
    fails('integer', 'doze', 'invalid_integer');
    fails('integer', 2.5, 'invalid_integer');
    fails('integer', '99999999999999999999', 'invalid_integer', /too large/);
  });
});

describe('dates', () => {
  test('date-only formats give YYYY-MM-DD without time zone shifts', () => {
    assert.equal(t('date')('05/11/2024'), '2024-11-05');
    assert.equal(t({ date: { format: 'yyyyMMdd', output: 'auto' } })('20240229'), '2024-02-29');
    assert.equal(t({ date: { format: 'ddMMyy', output: 'auto' } })('311224'), '2024-12-31');
    assert.equal(t({ date: { format: 'yyyy-MM-dd', output: 'auto' } })('2025-02-25'), '2025-02-25');
  });
  test('date-times are local time of the zone, output as ISO 8601 UTC', () => {
    assert.equal(t({ date: { format: 'dd/MM/yyyy HH:mm', output: 'auto' } })('05/11/2024 08:12'), '2024-11-05T11:12:00.000Z');
    assert.equal(t({ date: { format: 'dd/MM/yyyy HH:mm:ss', output: 'auto', timeZone: 'UTC' } })('05/11/2024 08:12:09'), '2024-11-05T08:12:09.000Z');
    assert.equal(t({ date: { format: 'dd/MM/yyyy HH:mm', output: 'auto', timeZone: 'Europe/Lisbon' } })('01/07/2024 12:00'), '2024-07-01T11:00:00.000Z');
    // São Paulo still had daylight saving time in January 2018 (UTC-2)
    assert.equal(t({ date: { format: 'dd/MM/yyyy HH:mm', output: 'auto' } })('15/01/2018 10:00'), '2018-01-15T12:00:00.000Z');
    assert.equal(t({ date: { format: 'dd/MM/yyyy', output: 'datetime' } })('05/11/2024'), '2024-11-05T03:00:00.000Z');
    assert.equal(t({ date: { format: 'dd/MM/yyyy HH:mm', output: 'date' } })('05/11/2024 23:59'), '2024-11-05');
  });
  test("'iso' honours the offset of the value", () => {
    const iso = t({ date: { format: 'iso', output: 'auto' } });
    assert.equal(iso('2018-08-16T16:28:18-03:00'), '2018-08-16T19:28:18.000Z');
    assert.equal(iso('2024-11-05T10:00:00Z'), '2024-11-05T10:00:00.000Z');
    assert.equal(iso('2024-11-05'), '2024-11-05');
    assert.equal(iso('2024-11-05T10:00:00'), '2024-11-05T13:00:00.000Z', 'no offset: the time zone of the mapping');
    fails({ date: { format: 'iso', output: 'auto' } }, '05/11/2024', 'invalid_date', /ISO 8601/);
  });
  test('impossible and malformed dates are rejected', () => {
    fails('date', '31/02/2024', 'invalid_date', /'31\/02\/2024' is not a valid date \(dd\/MM\/yyyy\)/);
    fails('date', '29/02/2023', 'invalid_date');
    fails('date', '00/01/2024', 'invalid_date');
    fails('date', '5/11/2024', 'invalid_date', /format dd\/MM\/yyyy/);
    fails('date', '05-11-2024', 'invalid_date');
    fails('date', 'aa/bb/cccc', 'invalid_date');
    fails({ date: { format: 'dd/MM/yyyy HH:mm', output: 'auto' } }, '05/11/2024 24:00', 'invalid_date');
  });
  test('bad formats and zones are compile-time errors', () => {
    assert.throws(() => t({ date: { format: 'dd/MM', output: 'auto' } }), /needs yyyy/);
    assert.throws(() => t({ date: { format: 'dd/MM/yyyy', output: 'auto', timeZone: 'Mars/Olympus' } }), /unknown time zone 'Mars\/Olympus'/);
  });
  test('wallToUtc across a DST gap and an offset function', () => {
    const off = zoneOffsetFn('America/Sao_Paulo');
    assert.equal(off(Date.UTC(2024, 10, 5, 12)), -3 * 3600_000);
    assert.equal(new Date(wallToUtc(Date.UTC(2024, 10, 5, 8, 12), off)).toISOString(), '2024-11-05T11:12:00.000Z');
  });
});

describe('boolean and map', () => {
  test('boolean words, case-insensitive, with accents', () => {
    const b = t('boolean');
    for (const v of ['S', 'sim', 'Y', '1', 'TRUE']) assert.equal(b(v), true, v);
    for (const v of ['N', 'nao', 'Não', '0', 'false']) assert.equal(b(v), false, v);
    fails('boolean', 'talvez', 'invalid_boolean', /'talvez' is not a yes\/no value/);
    assert.equal(t({ boolean: { true: ['X'], false: ['-'] } })('x'), true);
    fails({ boolean: { true: ['X'], false: ['-'] } }, 'S', 'invalid_boolean');
  });
  test('map: strict by default, default value, pass-through, ignoreCase', () => {
    assert.equal(t({ map: { values: { A: 0, B: 2 }, strict: true, ignoreCase: false } })('B'), 2);
    fails({ map: { values: { A: 0, B: 2 }, strict: true, ignoreCase: false } }, 'C', 'unknown_value', /'C' is not a known value \(known: A, B\)/);
    assert.equal(t({ map: { values: { A: 0 }, default: 9, strict: true, ignoreCase: false } })('Z'), 9);
    assert.equal(t({ map: { values: { A: 0 }, strict: false, ignoreCase: false } })('Z'), 'Z');
    assert.equal(t({ map: { values: { Alta: 2 }, strict: true, ignoreCase: true } })('ALTA'), 2);
  });
});

describe('check digits, uuid5, json', () => {
  test('cnpj: strips the mask, validates both check digits', () => {
    const base = '123456780001';
    const good = base + cnpjCheckDigits(base);
    assert.equal(good, '12345678000195');
    assert.equal(t('cnpj')('12.345.678/0001-95'), '12345678000195');
    fails('cnpj', '12.345.678/0001-96', 'invalid_cnpj', /check digits should be 95/);
    fails('cnpj', '1234567800019', 'invalid_cnpj', /14 digits expected, found 13/);
    fails('cnpj', '11111111111111', 'invalid_cnpj');
    assert.equal(isValidCnpj('75335849000115'), true, 'real CNPJ from an NF-e sample');
  });
  test('ncm: 8 digits, formatting dropped, a letter refused', () => {
    assert.equal(t('ncm')('19059020'), '19059020');
    assert.equal(t('ncm')(' 1905.90.20 '), '19059020');
    assert.equal(t('ncm')('07133319'), '07133319', 'leading zero kept');
    fails('ncm', '19O59020', 'invalid_ncm', /'19O59020' is not an NCM: only digits \(8\), found 'O'/);
    fails('ncm', '1905902', 'invalid_ncm', /8 digits expected, found 7/);
  });

  test('ean: GTIN-8/12/13/14 check digits', () => {
    assert.equal(t('ean')('7891234001016'), '7891234001016');
    assert.equal(gtinCheckDigit('789123400101'), 6);
    assert.equal(isValidGtin('96385074'), true, 'GTIN-8');
    assert.equal(isValidGtin('036000291452'), true, 'GTIN-12 (UPC-A)');
    assert.equal(isValidGtin('17891234001013'), true, 'GTIN-14');
    fails('ean', '7891234001017', 'invalid_ean', /wrong GTIN\/EAN check digit/);
    fails('ean', 'SEM GTIN', 'invalid_ean', /8, 12, 13 or 14 digits/);
    fails('ean', '12345', 'invalid_ean');
  });
  test('uuid5 is RFC 4122 v5, deterministic, with the documented namespace', () => {
    assert.equal(uuid5('www.example.com', '6ba7b810-9dad-11d1-80b4-00c04fd430c8'), '2ed6657d-e927-568b-95e1-2665a8aea6a2');
    assert.equal(uuid5('https://wmsbridge.dev/ns/codeERP', '6ba7b811-9dad-11d1-80b4-00c04fd430c8'), WMSBRIDGE_UUID_NAMESPACE);
    const a = t('uuid5')('PickingList:100231');
    assert.equal(a, t('uuid5')('PickingList:100231'));
    assert.notEqual(a, t('uuid5')('PickingList:100232'));
    assert.match(String(a), /^[0-9a-f]{8}-[0-9a-f]{4}-5[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    assert.notEqual(t({ uuid5: { namespace: '6ba7b810-9dad-11d1-80b4-00c04fd430c8' } })('x'), t('uuid5')('x'));
  });
  test('json parses or rejects', () => {
    assert.deepEqual(t('json')('{"a":[1,2]}'), { a: [1, 2] });
    fails('json', '{a:1}', 'invalid_json', /is not valid JSON/);
  });
});

test('number: more significant digits than a double keeps exactly is a row failure, not a rounded value', () => {
  const num = t({ number: { decimal: ',' } });
  assert.equal(num('999999999999999'), 999999999999999); // 15 digits: exact
  assert.equal(num('1.234.567.890,12345'), 1234567890.12345);
  assert.equal(num('100000000000000000000000'), 1e23); // 1 significant digit
  assert.throws(
    () => num('99999999999999999999999'),
    (e: unknown) => e instanceof RowFail && /23 significant digits.*1e\+23/.test(e.message),
  );
  assert.throws(
    () => num('0,12345678901234567'),
    (e: unknown) => e instanceof RowFail && /17 significant digits/.test(e.message),
  );
});
