import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import iconv from 'iconv-lite';
import { makeTempDir } from '../helpers/tmp.js';
import { readLines, type PhysicalLine, type SourceStats } from '../../src/parse/text-source.js';
import { InputError } from '../../src/shared/errors.js';

let dir: string;
let cleanup: () => Promise<void>;
let n = 0;
before(async () => {
  ({ dir, cleanup } = await makeTempDir('wmsbridge-parse-src-'));
});
after(async () => cleanup());

async function lines(content: Buffer | string, encoding: 'utf-8' | 'windows-1252' | 'iso-8859-1' = 'utf-8', maxLineLength = 1 << 20) {
  const p = join(dir, `t${n++}.txt`);
  await writeFile(p, content);
  const stats: SourceStats = { bytes: 0 };
  const out: PhysicalLine[] = [];
  for await (const l of readLines(p, { encoding, maxLineLength }, stats)) out.push(l);
  return { out, stats };
}

const CHUNK = 64 * 1024;

describe('readLines', () => {
  test('terminators kept per line; no phantom last line', async () => {
    const { out, stats } = await lines('a\r\nb\nc\rd');
    assert.deepEqual(out, [
      { line: 1, text: 'a', eol: '\r\n' },
      { line: 2, text: 'b', eol: '\n' },
      { line: 3, text: 'c', eol: '\r' },
      { line: 4, text: 'd', eol: '' },
    ]);
    assert.equal(stats.newline, '\r\n');
    assert.equal(stats.bytes, 8);
    const { out: o2 } = await lines('a\n');
    assert.equal(o2.length, 1);
  });

  test('a CRLF split across two read chunks is one terminator', async () => {
    const first = 'x'.repeat(CHUNK - 1);
    const { out } = await lines(`${first}\r\nnext\r\n`);
    assert.deepEqual(
      out.map((l) => [l.line, l.text.length, l.eol]),
      [
        [1, CHUNK - 1, '\r\n'],
        [2, 4, '\r\n'],
      ],
    );
  });

  test('a multi-byte UTF-8 character split across chunks decodes whole', async () => {
    const prefix = 'a'.repeat(CHUNK - 1); // 'ç' (2 bytes) straddles the chunk boundary
    const { out } = await lines(`${prefix}ç\nção\n`);
    assert.equal(out[0]!.text, `${prefix}ç`);
    assert.equal(out[1]!.text, 'ção');
  });

  test('windows-1252 vs iso-8859-1 for 0x80-0x9F', async () => {
    const bytes = Buffer.from([0x80, 0x93, 0x94, 0x96, 0x85, 0x0a]);
    assert.equal((await lines(bytes, 'windows-1252')).out[0]!.text, '€“”–…');
    assert.equal((await lines(bytes, 'iso-8859-1')).out[0]!.text, '\u0080\u0093\u0094\u0096\u0085');
    assert.equal((await lines(iconv.encode('Ação é já\n', 'latin1'), 'iso-8859-1')).out[0]!.text, 'Ação é já');
  });

  test('an over-long line is reported with its length and skipped without buffering it', async () => {
    const big = 'y'.repeat(3 * CHUNK + 10);
    const { out } = await lines(`ok\n${big}\r\nafter\n${big}`, 'utf-8', 1000);
    assert.deepEqual(
      out.map((l) => [l.line, l.text, l.tooLong, l.eol]),
      [
        [1, 'ok', undefined, '\n'],
        [2, '', big.length, '\r\n'],
        [3, 'after', undefined, '\n'],
        [4, '', big.length, ''],
      ],
    );
  });

  test('NUL in the first 8 KB is binary; after 8 KB it is not sniffed', async () => {
    await assert.rejects(
      lines(Buffer.from([0x41, 0x00, 0x42])),
      (e: unknown) => e instanceof InputError && /looks binary \(NUL byte at offset 1/.test(e.message),
    );
    // UTF-16LE text without its byte order mark has NULs: refused the same way (with the BOM it is read: parse-unicode)
    await assert.rejects(lines(Buffer.from('abc', 'utf16le')), InputError);
    const late = Buffer.concat([Buffer.from('a'.repeat(9000) + '\n'), Buffer.from([0x00]), Buffer.from('\n')]);
    const { out } = await lines(late);
    assert.equal(out.length, 2);
  });

  test('a file smaller than 8 KB is still sniffed and decoded', async () => {
    const { out } = await lines(Buffer.from([0xef, 0xbb, 0xbf, 0x61, 0x0a]));
    assert.deepEqual(
      out.map((l) => l.text),
      ['a'],
    );
  });

  test('a directory is an InputError', async () => {
    await assert.rejects(
      (async () => {
        for await (const _ of readLines(dir, { encoding: 'utf-8', maxLineLength: 10 }, { bytes: 0 })) void _;
      })(),
      (e: unknown) => e instanceof InputError && /EISDIR/.test(e.message),
    );
  });
});
