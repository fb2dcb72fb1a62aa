/**
 * The physical-line reader every text format shares: open the file as a stream, refuse binary
 * content (a NUL byte in the first 8 KB), strip a UTF-8 BOM, decode with iconv-lite (never
 * TextDecoder: on Node 20 it maps cp1252 0x80-0x9F to C1 controls, see NOTES-node20.md) and split
 * lines on CRLF, LF or a lone CR, remembering which terminator each line had so a row can be written
 * back byte-faithfully. Memory is bounded by one chunk plus the longest accepted line: a line longer
 * than `maxLineLength` is reported as `tooLong` and its characters are discarded as they stream by.
 */
import { createReadStream } from 'node:fs';
import iconv from 'iconv-lite';
import { InputError, errorMessage } from '../shared/errors.js';
import type { Encoding } from './options.js';

import type { RowIssue } from '../shared/errors.js';

export type Eol = '' | '\n' | '\r\n' | '\r';

export interface PhysicalLine {
  /** 1-based physical line number */
  line: number;
  /** the line without its terminator ('' when tooLong) */
  text: string;
  /** the terminator that ended it ('' for a last line without one) */
  eol: Eol;
  /** set when the line was longer than maxLineLength: its length in characters (text is then '') */
  tooLong?: number;
}

/** Mutable counters the reader updates while it streams (bytes read, first line terminator). */
export interface SourceStats {
  bytes: number;
  newline?: '\r\n' | '\n' | '\r';
  /** the encoding the file was decoded with: the one its byte order mark names, else the option */
  encoding?: Encoding;
  /** the file starts with a byte order mark (stripped; the rejects writer writes it back) */
  bom?: boolean;
}

export const BINARY_SNIFF_BYTES = 8192;
const UTF8_BOM = [0xef, 0xbb, 0xbf] as const;

/** iconv-lite's name of an encoding option. */
export function iconvName(encoding: Encoding): string {
  switch (encoding) {
    case 'utf-8':
      return 'utf8';
    case 'windows-1252':
      return 'win1252';
    case 'iso-8859-1':
      return 'latin1';
    case 'utf-16le':
      return 'utf16le';
    case 'utf-16be':
      return 'utf16be';
  }
}

/** UTF-16 text holds NUL bytes (every ASCII character): the binary check does not apply to it. */
export function isUtf16(encoding: Encoding): boolean {
  return encoding === 'utf-16le' || encoding === 'utf-16be';
}

/**
 * The byte order mark at the head of a file, if any: its encoding and length. A BOM wins over the
 * declared encoding (Excel's "Unicode text" is UTF-16LE with FF FE, whatever the mapping says).
 */
export function bomOf(head: Buffer): { encoding: Encoding; length: number } | undefined {
  if (hasUtf8Bom(head)) return { encoding: 'utf-8', length: 3 };
  if (head.length >= 2 && head[0] === 0xff && head[1] === 0xfe) return { encoding: 'utf-16le', length: 2 };
  if (head.length >= 2 && head[0] === 0xfe && head[1] === 0xff) return { encoding: 'utf-16be', length: 2 };
  return undefined;
}

/** The byte order mark of an encoding, as written back at the head of a rejects file. */
export function bomBytes(encoding: Encoding): Buffer {
  if (encoding === 'utf-16le') return Buffer.from([0xff, 0xfe]);
  if (encoding === 'utf-16be') return Buffer.from([0xfe, 0xff]);
  return Buffer.from(UTF8_BOM);
}

/**
 * Decodes a whole buffer (XML, JSON documents): a BOM names the encoding (and is dropped), else the
 * declared one; binary content (a NUL byte in the first 8 KB) is refused unless the text is UTF-16.
 */
export function decodeWhole(path: string, buf: Buffer, declared: Encoding, what: string, stats?: SourceStats): string {
  const bom = bomOf(buf);
  const encoding = bom?.encoding ?? declared;
  if (!isUtf16(encoding)) assertNotBinary(path, buf, what);
  if (stats) {
    stats.encoding = encoding;
    if (bom) stats.bom = true;
  }
  return iconv.decode(bom ? buf.subarray(bom.length) : buf, iconvName(encoding), { stripBOM: false });
}

/** Throws InputError when the head of a file holds a NUL byte (a binary file, or UTF-16 text). */
export function assertNotBinary(path: string, head: Buffer, what: string): void {
  const n = Math.min(head.length, BINARY_SNIFF_BYTES);
  const at = head.subarray(0, n).indexOf(0);
  if (at !== -1) {
    throw new InputError(
      `${path} looks binary (NUL byte at offset ${at} in the first 8 KB); expected ${what} text (UTF-16 text needs its byte order mark, or source.encoding utf-16le)`,
      {
        details: { file: path, offset: at },
      },
    );
  }
}

export function hasUtf8Bom(buf: Buffer): boolean {
  return buf.length >= 3 && buf[0] === UTF8_BOM[0] && buf[1] === UTF8_BOM[1] && buf[2] === UTF8_BOM[2];
}

function openError(path: string, err: unknown): InputError {
  const code = (err as NodeJS.ErrnoException | undefined)?.code;
  return new InputError(`cannot read ${path}: ${code ?? errorMessage(err)}`, { cause: err, details: { file: path } });
}

/**
 * Streams the decoded text of a file in chunks, after the BOM detection (a BOM names the encoding and is
 * stripped: `stats.encoding`, `stats.bom`) and the binary check (not for UTF-16).
 * `stats.bytes` counts raw bytes read (BOM included).
 */
export async function* readDecodedChunks(path: string, encoding: Encoding, stats: SourceStats, what: string): AsyncGenerator<string> {
  const stream = createReadStream(path, { highWaterMark: 64 * 1024 });
  let decoder: ReturnType<typeof iconv.getDecoder> | undefined;
  const prepareHead = (head: Buffer): Buffer => {
    const bom = bomOf(head);
    const effective = bom?.encoding ?? encoding;
    stats.encoding = effective;
    if (bom) stats.bom = true;
    if (!isUtf16(effective)) assertNotBinary(path, head, what);
    decoder = iconv.getDecoder(iconvName(effective), { stripBOM: false });
    return bom ? head.subarray(bom.length) : head;
  };
  let head: Buffer | undefined = Buffer.alloc(0);
  try {
    for await (const raw of stream as AsyncIterable<Buffer>) {
      stats.bytes += raw.length;
      let chunk = raw;
      if (head !== undefined) {
        head = head.length === 0 ? raw : Buffer.concat([head, raw]);
        if (head.length < BINARY_SNIFF_BYTES) continue;
        chunk = prepareHead(head);
        head = undefined;
      }
      const text = decoder!.write(chunk);
      if (text.length > 0) yield text;
    }
  } catch (err) {
    if (err instanceof InputError) throw err;
    throw openError(path, err);
  } finally {
    stream.destroy();
  }
  if (head !== undefined && head.length > 0) {
    const chunk = prepareHead(head); // sets the decoder
    const text = decoder!.write(chunk);
    if (text.length > 0) yield text;
  }
  const rest = decoder?.end();
  if (rest !== undefined && rest.length > 0) yield rest;
}

/**
 * Splits a decoded stream into physical lines. CRLF, LF and a lone CR each end a line; a file ending
 * with a terminator has no extra empty last line.
 */
export async function* readLines(
  path: string,
  options: { encoding: Encoding; maxLineLength: number },
  stats: SourceStats,
  what = 'a',
): AsyncGenerator<PhysicalLine> {
  const max = options.maxLineLength;
  let carry = '';
  let line = 1;
  /** length of the line being skipped because it is too long; -1 when not skipping */
  let skipping = -1;
  const re = /\r\n|\n|\r/g;
  for await (const chunk of readDecodedChunks(path, options.encoding, stats, what)) {
    let s = carry.length > 0 ? carry + chunk : chunk;
    carry = '';
    re.lastIndex = 0;
    let from = 0;
    let m: RegExpExecArray | null;
    while ((m = re.exec(s)) !== null) {
      // A CR at the very end of the chunk may be the first half of a CRLF: wait for the next chunk.
      if (m[0] === '\r' && m.index === s.length - 1) break;
      const eol = m[0] as Eol;
      if (stats.newline === undefined) stats.newline = eol as '\r\n' | '\n' | '\r';
      const len = m.index - from;
      if (skipping >= 0) {
        yield { line, text: '', eol, tooLong: skipping + len };
        skipping = -1;
      } else if (len > max) {
        yield { line, text: '', eol, tooLong: len };
      } else {
        yield { line, text: s.slice(from, m.index), eol };
      }
      line++;
      from = m.index + eol.length;
    }
    const rest = s.slice(from);
    s = '';
    if (skipping >= 0) {
      // keep a possible trailing CR so CRLF across chunks is still one terminator
      if (rest.endsWith('\r')) {
        skipping += rest.length - 1;
        carry = '\r';
      } else {
        skipping += rest.length;
      }
    } else if (rest.length > max + 1) {
      skipping = rest.endsWith('\r') ? rest.length - 1 : rest.length;
      carry = rest.endsWith('\r') ? '\r' : '';
    } else {
      carry = rest;
    }
  }
  if (skipping >= 0) {
    const tail = carry === '\r' ? 1 : 0;
    yield { line, text: '', eol: tail ? '\r' : '', tooLong: skipping };
    return;
  }
  if (carry.length > 0) {
    if (carry.endsWith('\r')) {
      const text = carry.slice(0, -1);
      if (stats.newline === undefined) stats.newline = '\r';
      if (text.length > max) yield { line, text: '', eol: '\r', tooLong: text.length };
      else yield { line, text, eol: '\r' };
    } else if (carry.length > max) {
      yield { line, text: '', eol: '', tooLong: carry.length };
    } else {
      yield { line, text: carry, eol: '' };
    }
  }
}

const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]|\uFFFD/;

/** a UTF-8 lead byte (0xC2-0xDF) read as Windows-1252/ISO-8859-1, followed by a continuation byte */
const MOJIBAKE =
  /[\u00C2-\u00DF][\u0080-\u00BF\u20AC\u201A\u0192\u201E\u2026\u2020\u2021\u02C6\u2030\u0160\u2039\u0152\u017D\u2018\u2019\u201C\u201D\u2022\u2013\u2014\u02DC\u2122\u0161\u203A\u0153\u017E\u0178]/;

/**
 * Text that cannot be what the file meant, so a wrong encoding never reaches the WMS silently:
 * - in a UTF-8 file, U+FFFD (the decoder's replacement for bytes that are not UTF-8: a Windows-1252
 *   export in a UTF-8 channel);
 * - in a Windows-1252 / ISO-8859-1 file, a UTF-8 sequence read byte by byte ("SÃ£o" for "São").
 * Returns the row issue, or undefined when the text is plausible.
 */
export function encodingIssue(text: string, encoding: Encoding): RowIssue | undefined {
  if (encoding === 'windows-1252') {
    // iconv-lite decodes the five bytes windows-1252 leaves undefined to U+FFFD
    const at = text.indexOf('\uFFFD');
    if (at >= 0) {
      return {
        code: 'invalid_encoding',
        message: `a byte windows-1252 does not define (0x81, 0x8D, 0x8F, 0x90 or 0x9D) at column ${at + 1}: not windows-1252 text (is the file UTF-8 or binary?)`,
      };
    }
  }
  if (encoding === 'utf-8') {
    const at = text.indexOf('\uFFFD');
    if (at >= 0) {
      return {
        code: 'invalid_encoding',
        message: `bytes that are not UTF-8 at column ${at + 1}: is the file Windows-1252? (set source.encoding in the mapping)`,
      };
    }
    return undefined;
  }
  if (isUtf16(encoding)) {
    // a lone surrogate (Node's decoder keeps it as is), or an odd last byte (U+FFFD)
    const m = LONE_SURROGATE.exec(text);
    return m ? { code: 'invalid_encoding', message: `bytes that are not ${encoding.toUpperCase()} at column ${m.index + 1}: is the file damaged?` } : undefined;
  }
  const m = MOJIBAKE.exec(text);
  if (m) {
    return {
      code: 'suspect_encoding',
      value: m[0],
      message: `"${m[0]}" at column ${m.index + 1} looks like UTF-8 read as ${encoding}: is the file UTF-8? (set source.encoding in the mapping)`,
    };
  }
  return undefined;
}

/**
 * Characters that are not text in a field: NUL (never allowed), other C0 and C1 controls (a tab inside a
 * field, an escape), and the bidirectional overrides (U+202A-U+202E, U+2066-U+2069: an RLO makes "gpj.exe"
 * show as "exe.jpg"). Line breaks inside a quoted field are text. `allow` lets a mapping accept the
 * controls (never NUL).
 */
/* eslint-disable no-control-regex -- finding control characters is what these expressions are for */
const CONTROL = /[\u0000-\u0008\u000B\u000C\u000E-\u001F\u007F-\u009F\u202A-\u202E\u2066-\u2069]|\t/;
const NUL = /\u0000/;
const CONTROL_BUT_TAB = /[\u0000-\u0008\u000B\u000C\u000E-\u001F\u007F-\u009F\u202A-\u202E\u2066-\u2069]/;
/* eslint-enable no-control-regex */

export function controlName(c: string): string {
  const cp = c.codePointAt(0) ?? 0;
  const names: Record<number, string> = {
    0: 'NUL',
    9: 'tab',
    0x1b: 'escape',
    0x202e: 'right-to-left override',
    0x202d: 'left-to-right override',
    0x2066: 'left-to-right isolate',
    0x2067: 'right-to-left isolate',
  };
  return `U+${cp.toString(16).toUpperCase().padStart(4, '0')}${names[cp] ? ` (${names[cp]})` : ''}`;
}

/** The first field holding a character that is not text, as a row issue naming the field. */
export function controlIssue(values: readonly string[], names: readonly (string | undefined)[], allow: boolean, allowTab = false): RowIssue | undefined {
  const re = allow ? NUL : allowTab ? CONTROL_BUT_TAB : CONTROL;
  for (let i = 0; i < values.length; i++) {
    const v = values[i]!;
    const m = re.exec(v);
    if (!m) continue;
    const field = names[i] ?? String(i + 1);
    return {
      code: 'control_character',
      field,
      message: `field ${field}: ${controlName(m[0])} at position ${m.index + 1}: not text${m[0] === '\u0000' ? '' : ' (set source.allowControlCharacters in the mapping if the ERP means it)'}`,
    };
  }
  return undefined;
}
