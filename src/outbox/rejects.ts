/**
 * The rejects writer: rejected rows written back in the ORIGINAL format and encoding, so the analyst
 * fixes the file and drops it again.
 *
 * - delimited: same delimiter, quoting and encoding, the original header plus one last column
 *   `wmsbridge_error` with the reasons, the source's line terminator. A row is written from its raw
 *   text when known (byte-faithful: original quoting kept), else from its cells (quoted as needed).
 *   A row shorter than the header is padded with empty cells so the reason lands in its column.
 * - fixed-width: each original line as it was (a reason column would break the positions), plus a
 *   sidecar `<name>.errors.txt` listing `line N: reasons`.
 * - jsonl: each original line, plus the sidecar listing.
 * - xml / json: the sidecar listing only (one document cannot be split back faithfully).
 *
 * Files are written to a temp file in the same folder and renamed on close (rename is atomic only
 * within one filesystem, hence the same folder). No rejects: no file.
 */
import { closeSync, fsyncSync, openSync, renameSync, rmSync, writeSync } from 'node:fs';
import { basename, dirname, extname, join } from 'node:path';
import { randomBytes } from 'node:crypto';
import iconv from 'iconv-lite';
import type { ParseOptions, ParseOptionsInput } from '../parse/options.js';
import { ParseOptionsSchema } from '../parse/options.js';
import { bomBytes, iconvName } from '../parse/text-source.js';
import { REJECT_REASON_COLUMN } from '../parse/types.js';
import { createI18n, type I18n } from '../i18n/index.js';
import { createXlsxRejectsWriter } from './rejects-xlsx.js';
import { DEFAULT_OUTBOX_FILE_MODE } from './atomic.js';

export interface RejectItem {
  line: number;
  lineEnd?: number;
  /** the raw text of the row as read (without its final line terminator) */
  text?: string;
  /** the row's cells (delimited) */
  cells?: string[];
  /**
   * the line's original bytes, when its text could not be decoded (invalid_encoding): written as they
   * were, so fixing source.encoding and dropping the rejects file again recovers the accents
   */
  bytes?: Buffer;
  /** xml/json: the element path, for the listing */
  recordType?: string;
  /** the reasons, one line, in the outbox's language (e.g. "linha 12: o valor da coluna peso_bruto não é um número") */
  reasons: string;
}

export type RejectsWriterOptions = (ParseOptions | ParseOptionsInput) & {
  /** the language of the listing's "line N" (outbox.locale; the reasons come rendered) @default en */
  i18n?: I18n;
  /** delimited with a header: the header cells as read (ParseFacts.header) */
  headerCells?: string[];
  /** the line terminator of the source (ParseFacts.newline) @default "\n" */
  newline?: '\r\n' | '\n' | '\r';
  /** the source started with a byte order mark (ParseFacts.bom): the rejects file starts with the same one */
  bom?: boolean;
  /** xlsx: the sheet read and every sheet of the workbook (ParseFacts.sheet, .sheets) */
  sheetName?: string;
  sheetNames?: string[];
  /** mode of the rejects file, its listing and the workbook (outbox.fileMode). @default DEFAULT_OUTBOX_FILE_MODE */
  fileMode?: number;
};

export interface RejectsWriter {
  write(item: RejectItem): void;
  /** renames the temp files into place; `path`/`sidecar` are set for the files written */
  close(): Promise<{ count: number; path?: string; sidecar?: string }>;
  /** drops the temp files (on a failure of the run) */
  abort(): void;
}

export interface CsvFormat {
  delimiter: string;
  quote: string | false;
  escape?: string | undefined;
}

/** Formats one cell: quoted when it holds the delimiter, the quote, CR or LF (RFC 4180). */
export function formatCell(value: string, f: CsvFormat): string {
  if (f.quote === false) {
    // no quoting in this file: the delimiter and line breaks cannot be represented; replace them
    return value.split(f.delimiter).join(' ').replace(/\r\n|\r|\n/g, ' ');
  }
  const q = f.quote;
  const needs =
    value.includes(f.delimiter) || value.includes(q) || value.includes('\n') || value.includes('\r') || (f.escape !== undefined && f.escape !== q && value.includes(f.escape));
  if (!needs) return value;
  const esc = f.escape ?? q;
  let inner: string;
  if (esc === q) inner = value.split(q).join(q + q);
  else inner = value.split(esc).join(esc + esc).split(q).join(esc + q);
  return q + inner + q;
}

/** Formats a record (no line terminator). The "correct writer" the parser round-trips with. */
export function formatRecord(cells: string[], f: CsvFormat): string {
  return cells.map((c) => formatCell(c, f)).join(f.delimiter);
}

/** formats whose rejects file is the source's text (the others only have the UTF-8 listing) */
const TEXT_REJECTS: ReadonlySet<string> = new Set(['delimited', 'fixed-width', 'jsonl']);

function sidecarPathOf(path: string): string {
  const ext = extname(path);
  const base = ext ? basename(path, ext) : basename(path);
  return join(dirname(path), `${base}.errors.txt`);
}

/** A file written to a temp name, renamed into place on commit. */
class AtomicFile {
  private fd: number | undefined;
  readonly temp: string;
  /** `head`: bytes written first when the file is opened (a byte order mark) */
  constructor(
    readonly path: string,
    private readonly head?: Buffer,
    /** the file's mode (outbox.fileMode; the umask still applies, as for every outbox file) */
    private readonly mode: number = DEFAULT_OUTBOX_FILE_MODE,
  ) {
    this.temp = join(dirname(path), `.${basename(path)}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`);
  }
  write(buf: Buffer): void {
    if (this.fd === undefined) {
      this.fd = openSync(this.temp, 'wx', this.mode);
      if (this.head) this.write(this.head);
    }
    let off = 0;
    while (off < buf.length) off += writeSync(this.fd, buf, off, buf.length - off);
  }
  get opened(): boolean {
    return this.fd !== undefined;
  }
  commit(): void {
    if (this.fd === undefined) return;
    fsyncSync(this.fd);
    closeSync(this.fd);
    this.fd = undefined;
    renameSync(this.temp, this.path);
  }
  abort(): void {
    if (this.fd !== undefined) {
      closeSync(this.fd);
      this.fd = undefined;
    }
    rmSync(this.temp, { force: true });
  }
}

/**
 * One line of the listing (`<name>.errors.txt`): where the row was and why. UTF-8 whatever the source encoding: it is
 * read by people, not re-imported.
 */
function writeListing(side: AtomicFile, i18n: I18n, item: RejectItem, note: string): void {
  const where =
    item.lineEnd !== undefined && item.lineEnd !== item.line
      ? i18n.t('rejects.lines', { line: String(item.line), lineEnd: String(item.lineEnd) })
      : i18n.t('rejects.line', { line: String(item.line) });
  const el = item.recordType ? ` (${item.recordType})` : '';
  // a reason that already starts with this location ("line 1: field ...") is not prefixed twice
  let text = oneLine(item.reasons);
  for (const own of [`line ${item.line}: `, i18n.t('reason.atLine', { line: String(item.line) })]) if (text.startsWith(own)) text = text.slice(own.length);
  side.write(Buffer.from(`${where}${el}: ${text}${note}\n`, 'utf8'));
}

/**
 * A delimited file's rejects: each row as it came (its bytes when kept, else its cells), with the reason as one more
 * column (the header's too). A rejects file dropped again already has the reason column: its cell is replaced, not
 * a second column appended, so a file can go round any number of times.
 */
function delimitedItemWriter(
  o: Extract<ParseOptions, { format: 'delimited' }>,
  out: { headerCells: string[] | undefined; main: AtomicFile; enc: (s: string) => Buffer; newline: string },
): (item: RejectItem) => void {
  const { headerCells, main, enc, newline } = out;
  const f: CsvFormat = { delimiter: o.delimiter, quote: o.quote, escape: o.escape };
  const header = o.header ? headerCells : o.columns;
  const reasonAt = o.header && headerCells ? headerCells.indexOf(REJECT_REASON_COLUMN) : -1;
  const width = reasonAt >= 0 ? reasonAt : header?.length;
  return (item) => {
    if (!main.opened && o.header && headerCells) {
      main.write(enc(formatRecord(reasonAt >= 0 ? headerCells : [...headerCells, REJECT_REASON_COLUMN], f) + newline));
    }
    if (item.bytes !== undefined) {
      main.write(Buffer.concat([item.bytes, enc(f.delimiter + formatCell(oneLine(item.reasons), f) + newline)]));
      return;
    }
    if (reasonAt >= 0 && item.cells !== undefined) {
      const cells = [...item.cells];
      while (cells.length <= reasonAt) cells.push('');
      cells[reasonAt] = oneLine(item.reasons);
      main.write(enc(formatRecord(cells, f) + newline));
      return;
    }
    let body: string;
    if (item.text !== undefined) body = item.text;
    else if (item.cells !== undefined) body = formatRecord(item.cells, f);
    else body = '';
    const n = item.cells?.length ?? (item.text !== undefined ? undefined : 0);
    const pad = width !== undefined && n !== undefined && n < width ? f.delimiter.repeat(width - n) : '';
    main.write(enc(body + pad + f.delimiter + formatCell(oneLine(item.reasons), f) + newline));
  };
}

export function createRejectsWriter(path: string, original: RejectsWriterOptions): RejectsWriter {
  const { headerCells, newline: nl, i18n = createI18n('en'), bom, sheetName, sheetNames, fileMode, ...rest } = original;
  const o = ParseOptionsSchema.parse(rest);
  // a spreadsheet's rejects are a spreadsheet (rejects-xlsx.ts)
  if (o.format === 'xlsx') return createXlsxRejectsWriter(path, { headerCells, sheetName, sheetNames, fileMode });
  const newline = nl ?? '\n';
  const encoding = 'encoding' in o && o.encoding !== undefined ? o.encoding : 'utf-8';
  const enc = (s: string): Buffer => iconv.encode(s, iconvName(encoding), { addBOM: false });
  // the same byte order mark as the source (Excel's "Unicode text" needs its FF FE to open as such)
  const main = new AtomicFile(path, bom === true && TEXT_REJECTS.has(o.format) ? bomBytes(encoding) : undefined, fileMode);
  const side = new AtomicFile(sidecarPathOf(path), undefined, fileMode);
  let count = 0;
  let closed = false;

  const listing = (item: RejectItem, note = ''): void => writeListing(side, i18n, item, note);
  let writeItem: (item: RejectItem) => void;
  switch (o.format) {
    case 'delimited':
      writeItem = delimitedItemWriter(o, { headerCells, main, enc, newline });
      break;
    case 'fixed-width':
    case 'jsonl':
      writeItem = (item) => {
        if (item.text !== undefined) {
          main.write(enc(item.text + newline));
          listing(item);
        } else {
          listing(item, i18n.t('rejects.notKept'));
        }
      };
      break;
    case 'xml':
    case 'json':
      writeItem = (item) => listing(item);
      break;
  }

  return {
    write(item) {
      if (closed) throw new Error(`rejects writer for ${path} is closed`);
      writeItem(item);
      count++;
    },
    async close() {
      if (closed) throw new Error(`rejects writer for ${path} is closed`);
      closed = true;
      const res: { count: number; path?: string; sidecar?: string } = { count };
      try {
        if (main.opened) {
          main.commit();
          res.path = main.path;
        }
        if (side.opened) {
          side.commit();
          res.sidecar = side.path;
        }
      } catch (err) {
        main.abort();
        side.abort();
        throw err;
      }
      return res;
    },
    abort() {
      closed = true;
      main.abort();
      side.abort();
    },
  };
}

function oneLine(s: string): string {
  return s.replace(/\r\n|\r|\n/g, ' ');
}
