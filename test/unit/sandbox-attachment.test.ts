import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { startSandbox, sandboxCall, sandboxToken, type Sandbox } from '../helpers/sandbox.js';
import { makeTempDir } from '../helpers/tmp.js';
import { multipartBoundary, parseMultipart } from '../../src/sandbox/multipart.js';
import { AttachmentRecord } from '../../src/wms/schemas.js';
import { encodeMultipart } from '../../src/wms/multipart.js';

let sb: Sandbox;
let token: string;
let pickingListId: string;
let tmp: { dir: string; cleanup: () => Promise<void> };

before(async () => {
  tmp = await makeTempDir('wmsbridge-sandbox-attach-');
  sb = await startSandbox({ seed: 'attach-tests' });
  token = (await sandboxToken(sb)).token;
  const c = sb.state.collections;
  const r = await sandboxCall(sb, 'POST', '/open/v1/pickinglist', {
    token,
    body: {
      companyID: c.Company[0]!.id,
      branchID: c.Branch[0]!.id,
      warehouseID: c.Warehouse[0]!.id,
      ownerID: c.Owners[0]!.id,
      order: 'PED-ATT',
      codeERP: '0d0c0b0a-0000-5000-8000-00000000a77a',
      status: 1,
      pickingItens: [{ productID: c.Product[0]!.id, quantity: 1, status: 1 }],
    },
  });
  assert.equal(r.status, 200);
  pickingListId = r.json.data.id;
});
after(async () => {
  await sb.close();
  await tmp.cleanup();
});

/** Builds a multipart body by hand (binary-safe), the way a client would send it. */
function multipart(parts: Array<{ name: string; value: string | Buffer; filename?: string; type?: string }>): { body: Buffer; contentType: string } {
  const boundary = '----wmsbridgeTestBoundary7MA4YWxkTrZu0gW';
  const chunks: Buffer[] = [];
  for (const p of parts) {
    let head = `--${boundary}\r\nContent-Disposition: form-data; name="${p.name}"`;
    if (p.filename !== undefined) head += `; filename="${p.filename}"`;
    head += '\r\n';
    if (p.type) head += `Content-Type: ${p.type}\r\n`;
    chunks.push(Buffer.from(`${head}\r\n`), Buffer.isBuffer(p.value) ? p.value : Buffer.from(p.value), Buffer.from('\r\n'));
  }
  chunks.push(Buffer.from(`--${boundary}--\r\n`));
  return { body: Buffer.concat(chunks), contentType: `multipart/form-data; boundary=${boundary}` };
}

async function upload(parts: Parameters<typeof multipart>[0]) {
  const m = multipart(parts);
  return sandboxCall(sb, 'POST', '/wms/v1/pickinglist/attachment', { token, rawBody: m.body, headers: { 'content-type': m.contentType } });
}

describe('multipart parser', () => {
  test('binary-safe: a part containing CRLF and the boundary prefix survives intact', () => {
    const data = Buffer.from([0x00, 0x0d, 0x0a, 0x2d, 0x2d, 0xff, 0x0d, 0x0a, 0x2d, 0x2d, 0x2d, 0x2d, 0x57]);
    const m = multipart([
      { name: 'file', value: data, filename: 'b.bin', type: 'application/octet-stream' },
      { name: 'UserFileName', value: 'nota fiscal.pdf' },
    ]);
    const parts = parseMultipart(m.body, multipartBoundary(m.contentType)!);
    assert.equal(parts.length, 2);
    assert.deepEqual(parts[0]!.data, data);
    assert.equal(parts[0]!.filename, 'b.bin');
    assert.equal(parts[1]!.data.toString(), 'nota fiscal.pdf');
    assert.equal(multipartBoundary('multipart/form-data; boundary="a b"'), 'a b');
    assert.equal(multipartBoundary('application/json'), null);
    assert.throws(() => parseMultipart(Buffer.from('--x\r\nContent-Disposition: form-data; name="a"\r\n\r\nvalue'), 'x'), /not closed/);
  });
});

describe('POST /wms/v1/pickinglist/attachment', () => {
  test('a real PDF file is attached and its record answered', async () => {
    const file = join(tmp.dir, 'danfe.pdf');
    const pdf = Buffer.concat([Buffer.from('%PDF-1.4\n'), Buffer.alloc(4096, 0xab), Buffer.from('\r\n--\r\n%%EOF\n')]);
    await writeFile(file, pdf);
    const content = await readFile(file);
    const r = await upload([
      { name: 'file', value: content, filename: 'danfe.pdf', type: 'application/pdf' },
      { name: 'PickingListID', value: pickingListId },
      { name: 'UserFileName', value: 'DANFE pedido PED-ATT' },
      { name: 'IsPrintCheckout', value: 'true' },
    ]);
    assert.equal(r.status, 200, JSON.stringify(r.json));
    assert.equal(r.json.message, 'The request has succeeded');
    const rec = AttachmentRecord.parse(r.json.data);
    assert.equal(rec.pickingListID, pickingListId);
    assert.equal(rec.fileSize, content.length);
    assert.equal(rec.fileType, 'pdf');
    assert.equal(rec.fileName, 'DANFE pedido PED-ATT');
    assert.equal(rec.isPrintCheckout, true);
    assert.match(rec.registrationDate!, /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/);
    assert.equal(sb.state.collections.Attachment.length, 1);
  });

  test("a body encoded by undici's FormData (what the client sends) is accepted: file name, type and bytes", async () => {
    const content = Buffer.concat([Buffer.from('%PDF-1.4\n'), Buffer.alloc(1000, 0xcd), Buffer.from('\r\n------formdata-undici-0\r\n%%EOF\n')]);
    const m = await encodeMultipart([
      { name: 'file', content, fileName: 'etiqueta "A".pdf', contentType: 'application/pdf' },
      { name: 'PickingListID', value: pickingListId },
      { name: 'UserFileName', value: 'Etiqueta nº 7' },
      { name: 'IsPrintCheckout', value: 'false' },
    ]);
    const r = await sandboxCall(sb, 'POST', '/wms/v1/pickinglist/attachment', { token, rawBody: m.body, headers: { 'content-type': m.contentType } });
    assert.equal(r.status, 200, JSON.stringify(r.json));
    const rec = AttachmentRecord.parse(r.json.data);
    assert.equal(rec.fileSize, content.length);
    assert.equal(rec.fileType, 'pdf');
    assert.equal(rec.fileName, 'Etiqueta nº 7');
    assert.equal(rec.isPrintCheckout, false);
  });

  test('missing parts, unknown parts and a bad PickingListID are named (400)', async () => {
    const r = await upload([
      { name: 'PickingListID', value: '99999999-9999-4999-8999-999999999999' },
      { name: 'Extra', value: 'x' },
      { name: 'IsPrintCheckout', value: 'yes' },
    ]);
    assert.equal(r.status, 400);
    for (const f of [
      'file: required',
      'UserFileName: required',
      'Extra: unknown field',
      'PickingListID: PickingList',
      'IsPrintCheckout: must be true or false',
    ]) {
      assert.ok(r.json.error.includes(f), `${f} in ${r.json.error}`);
    }
  });

  test('a type outside pdf, png, jpg, txt, csv, xml, zpl is 415', async () => {
    const r = await upload([
      { name: 'file', value: 'MZ\x90\x00', filename: 'tool.exe', type: 'application/octet-stream' },
      { name: 'PickingListID', value: pickingListId },
      { name: 'UserFileName', value: 'tool' },
    ]);
    assert.equal(r.status, 415);
    assert.equal(r.json.code, 415);
    assert.match(r.json.error, /"exe" not allowed/);
    const zpl = await upload([
      { name: 'file', value: '^XA^FO50,50^FDHello^FS^XZ', filename: 'label.ZPL' },
      { name: 'PickingListID', value: pickingListId },
      { name: 'UserFileName', value: 'etiqueta' },
    ]);
    assert.equal(zpl.status, 200);
    assert.equal(zpl.json.data.fileType, 'zpl');
  });

  test('a file over 10 MB is 413 and nothing is stored', async () => {
    const before = sb.state.collections.Attachment.length;
    const r = await upload([
      { name: 'file', value: Buffer.alloc(10 * 1024 * 1024 + 1, 0x41), filename: 'big.txt', type: 'text/plain' },
      { name: 'PickingListID', value: pickingListId },
      { name: 'UserFileName', value: 'big' },
    ]);
    assert.equal(r.status, 413);
    assert.equal(r.json.code, 413);
    assert.equal(sb.state.collections.Attachment.length, before);
  });

  test('a body far over the limit is refused unread with 413 and the connection closed', async () => {
    const r = await upload([
      { name: 'file', value: Buffer.alloc(11 * 1024 * 1024, 0x42), filename: 'huge.csv', type: 'text/csv' },
      { name: 'PickingListID', value: pickingListId },
      { name: 'UserFileName', value: 'huge' },
    ]);
    assert.equal(r.status, 413);
    assert.match(r.json.error, /body: larger than the limit/);
    assert.equal(r.headers['connection'], 'close');
    // the sandbox still answers on a new connection
    assert.equal((await sandboxCall(sb, 'GET', '/open/v1/company', { token })).status, 200);
  });

  test('a JSON body is refused with 415', async () => {
    const r = await sandboxCall(sb, 'POST', '/wms/v1/pickinglist/attachment', { token, body: { PickingListID: pickingListId } });
    assert.equal(r.status, 415);
  });
});
