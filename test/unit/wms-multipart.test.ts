import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { encodeMultipart } from '../../src/wms/multipart.js';
import { multipartBoundary, parseMultipart } from '../../src/sandbox/multipart.js';

/** A small independent parser (RFC 7578) to check what encodeMultipart produced. */
function parse(body: Buffer, contentType: string): Array<{ headers: string; content: Buffer }> {
  const m = /boundary=(.+)$/.exec(contentType);
  assert.ok(m, 'content type carries a boundary');
  const delim = Buffer.from(`--${m[1]}`);
  const parts: Array<{ headers: string; content: Buffer }> = [];
  let pos = body.indexOf(delim);
  assert.equal(pos, 0, 'body starts with the first delimiter');
  for (;;) {
    const after = pos + delim.length;
    if (body.subarray(after, after + 2).toString() === '--') break;
    const headEnd = body.indexOf('\r\n\r\n', after);
    const headers = body.subarray(after + 2, headEnd).toString('utf8');
    const next = body.indexOf(Buffer.concat([Buffer.from('\r\n'), delim]), headEnd + 4);
    assert.ok(next > 0, 'part is terminated');
    parts.push({ headers, content: body.subarray(headEnd + 4, next) });
    pos = next + 2;
  }
  assert.equal(body.subarray(body.length - 2).toString(), '\r\n');
  return parts;
}

describe('encodeMultipart (undici FormData)', () => {
  test('file and fields, binary-safe', async () => {
    const bin = Buffer.concat([randomBytes(4096), Buffer.from('\r\n--\r\n\0\xff'), randomBytes(100)]);
    const { body, contentType, boundary } = await encodeMultipart([
      { name: 'file', content: bin, fileName: 'etiqueta.pdf', contentType: 'application/pdf' },
      { name: 'PickingListID', value: '3f2504e0-4f89-41d3-9a0c-0305e82c3301' },
      { name: 'UserFileName', value: 'Nota fiscal nº 123' },
      { name: 'IsPrintCheckout', value: 'true' },
    ]);
    assert.equal(contentType, `multipart/form-data; boundary=${boundary}`);
    assert.match(boundary, /^[-\w]{10,70}$/);
    const parts = parse(body, contentType);
    assert.equal(parts.length, 4);
    assert.match(parts[0]!.headers, /Content-Disposition: form-data; name="file"; filename="etiqueta.pdf"/);
    assert.match(parts[0]!.headers, /Content-Type: application\/pdf/);
    assert.ok(parts[0]!.content.equals(bin), 'file bytes intact');
    assert.equal(parts[1]!.content.toString(), '3f2504e0-4f89-41d3-9a0c-0305e82c3301');
    assert.equal(parts[2]!.content.toString('utf8'), 'Nota fiscal nº 123');
    assert.match(parts[3]!.headers, /name="IsPrintCheckout"/);
  });

  test('boundaries are random', async () => {
    const a = await encodeMultipart([{ name: 'a', value: '1' }]);
    const b = await encodeMultipart([{ name: 'a', value: '1' }]);
    assert.notEqual(a.boundary, b.boundary);
  });

  test('quotes and line breaks in names are escaped', async () => {
    const { body, contentType } = await encodeMultipart([{ name: 'file', content: Buffer.from('x'), fileName: 'a"b\r\nc.txt' }]);
    const parts = parse(body, contentType);
    assert.match(parts[0]!.headers, /filename="a%22b%0D%0Ac.txt"/);
    assert.match(parts[0]!.headers, /Content-Type: application\/octet-stream/);
  });

  test('empty file', async () => {
    const { body, contentType } = await encodeMultipart([{ name: 'file', content: Buffer.alloc(0), fileName: 'empty.txt', contentType: 'text/plain' }]);
    const parts = parse(body, contentType);
    assert.equal(parts[0]!.content.length, 0);
  });

  test("the sandbox's parser reads what undici sends: names, file name, type and bytes", async () => {
    const bin = Buffer.concat([randomBytes(2048), Buffer.from('\r\n------formdata-undici-0\r\n'), randomBytes(64)]);
    const { body, contentType } = await encodeMultipart([
      { name: 'file', content: bin, fileName: 'DANFE 123.pdf', contentType: 'application/pdf' },
      { name: 'PickingListID', value: '3f2504e0-4f89-41d3-9a0c-0305e82c3301' },
      { name: 'UserFileName', value: 'Nota fiscal nº 123' },
    ]);
    const boundary = multipartBoundary(contentType);
    assert.ok(boundary, `the sandbox finds the boundary in ${contentType}`);
    const parts = parseMultipart(body, boundary);
    assert.deepEqual(
      parts.map((p) => [p.name, p.filename, p.contentType]),
      [
        ['file', 'DANFE 123.pdf', 'application/pdf'],
        ['PickingListID', undefined, undefined],
        ['UserFileName', undefined, undefined],
      ],
    );
    assert.ok(parts[0]!.data.equals(bin), 'file bytes intact');
    assert.equal(parts[2]!.data.toString('utf8'), 'Nota fiscal nº 123');
  });
});
