/**
 * XML documents with a repeating item element (NF-e det). fast-xml-parser is not streaming (about
 * 16x the file size in memory, NOTES-node20.md), so the file size is capped by `maxBytes` before it
 * is read. A DOCTYPE/ENTITY declaration is refused before parsing (entity expansion, XXE). Values are
 * strings (parseTagValue: false), namespace prefixes are dropped, and the five predefined entities and
 * numeric references are decoded by one non-recursive pass (processEntities: false).
 */
import { readFile, stat } from 'node:fs/promises';
import { InputError, errorMessage } from '../shared/errors.js';
import { MAX_NESTING, xmlTooDeep } from './depth.js';
import { decodeXmlEntities, flattenInto, type Flat } from './flatten.js';
import type { Encoding, XmlOptions } from './options.js';
import { decodeWhole, type SourceStats } from './text-source.js';
import type { ParseFacts, ParsedItem } from './types.js';

const MB = 1024 * 1024;

export function formatMegabytes(bytes: number): string {
  if (bytes < 100 * 1024) return `${bytes} bytes`;
  const mb = bytes / MB;
  if (mb >= 10) return `${Math.round(mb)} MB`;
  return `${Number(mb.toFixed(1))} MB`;
}

/** Reads a whole file for a non-streaming format, refusing it when above maxBytes. */
export async function readBounded(path: string, maxBytes: number, what: string, stats: SourceStats): Promise<Buffer> {
  let size: number;
  try {
    const st = await stat(path);
    if (!st.isFile()) throw new InputError(`cannot read ${path}: not a regular file`, { details: { file: path } });
    size = st.size;
  } catch (err) {
    if (err instanceof InputError) throw err;
    const code = (err as NodeJS.ErrnoException).code;
    throw new InputError(`cannot read ${path}: ${code ?? errorMessage(err)}`, { cause: err, details: { file: path } });
  }
  if (size > maxBytes) {
    throw new InputError(`${path}: file is ${formatMegabytes(size)}, above the ${what} limit of ${formatMegabytes(maxBytes)}`, {
      details: { file: path, bytes: size, maxBytes },
    });
  }
  let buf: Buffer;
  try {
    buf = await readFile(path);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    throw new InputError(`cannot read ${path}: ${code ?? errorMessage(err)}`, { cause: err, details: { file: path } });
  }
  // the file may have grown between stat and read
  if (buf.length > maxBytes) {
    throw new InputError(`${path}: file is ${formatMegabytes(buf.length)}, above the ${what} limit of ${formatMegabytes(maxBytes)}`);
  }
  stats.bytes += buf.length;
  return buf;
}

/** The encoding named by an XML declaration, mapped to a supported one. */
export function declaredXmlEncoding(path: string, head: Buffer): Encoding | undefined {
  const s = head.subarray(0, 200).toString('latin1');
  const m = /^(?:\uFEFF|\u00EF\u00BB\u00BF)?\s*<\?xml[^>]*?\bencoding\s*=\s*["']([^"']+)["']/.exec(s);
  if (!m) return undefined;
  const name = m[1]!.toLowerCase().replace(/_/g, '-');
  if (name === 'utf-8' || name === 'utf8' || name === 'us-ascii' || name === 'ascii') return 'utf-8';
  if (name === 'iso-8859-1' || name === 'latin1' || name === 'latin-1' || name === 'iso8859-1') return 'iso-8859-1';
  if (name === 'windows-1252' || name === 'cp1252') return 'windows-1252';
  throw new InputError(`${path}: XML declares encoding "${m[1]}", which is not supported (utf-8, iso-8859-1, windows-1252)`, {
    details: { file: path },
  });
}

/**
 * Refuses a DOCTYPE or ENTITY declaration in the prolog (before the root element), the vector of
 * entity-expansion bombs and external entities. Only the prolog can hold them in well-formed XML.
 */
export function assertNoDoctype(path: string, text: string): void {
  let i = 0;
  const n = text.length;
  for (;;) {
    const lt = text.indexOf('<', i);
    if (lt === -1 || lt >= n - 1) return;
    if (text.startsWith('<?', lt)) {
      const end = text.indexOf('?>', lt + 2);
      if (end === -1) return;
      i = end + 2;
      continue;
    }
    if (text.startsWith('<!--', lt)) {
      const end = text.indexOf('-->', lt + 4);
      if (end === -1) return;
      i = end + 3;
      continue;
    }
    if (text[lt + 1] === '!') {
      const decl = text.slice(lt + 2, lt + 9).toUpperCase();
      if (decl.startsWith('DOCTYPE') || decl.startsWith('ENTITY')) {
        const line = lineAt(text, lt);
        throw new InputError(`${path}:${line}: XML with DOCTYPE/ENTITY is refused (entity expansion / XXE)`, {
          details: { file: path, line },
        });
      }
    }
    return; // the root element starts: the prolog is over
  }
}

function lineAt(text: string, index: number): number {
  let line = 1;
  let p = text.indexOf('\n');
  while (p !== -1 && p < index) {
    line++;
    p = text.indexOf('\n', p + 1);
  }
  return line;
}

const localName = (qname: string): string => {
  const c = qname.indexOf(':');
  return c === -1 ? qname : qname.slice(c + 1);
};

/**
 * Start and end lines of every element whose path of local names (from the root) is `segs`, in
 * document order. A light tag scanner: skips comments, CDATA, PIs and declarations; handles quoted
 * attribute values holding '>'.
 */
export function locateElements(text: string, segs: string[]): Array<{ line: number; lineEnd: number }> {
  const out: Array<{ line: number; lineEnd: number }> = [];
  const stack: string[] = [];
  let line = 1;
  let counted = 0;
  const lineOf = (idx: number): number => {
    let p = text.indexOf('\n', counted);
    while (p !== -1 && p < idx) {
      line++;
      p = text.indexOf('\n', p + 1);
    }
    counted = idx;
    return line;
  };
  const depth = segs.length;
  let open: { line: number; lineEnd: number } | undefined;
  const tagRe = /<([A-Za-z_][\w.:-]*)(?:\s+[^\s=/>]+\s*=\s*(?:"[^"]*"|'[^']*'))*\s*(\/?)>/y;
  let i = 0;
  for (;;) {
    const lt = text.indexOf('<', i);
    if (lt === -1) break;
    if (text.startsWith('<!--', lt)) {
      const e = text.indexOf('-->', lt + 4);
      i = e === -1 ? text.length : e + 3;
      continue;
    }
    if (text.startsWith('<![CDATA[', lt)) {
      const e = text.indexOf(']]>', lt + 9);
      i = e === -1 ? text.length : e + 3;
      continue;
    }
    if (text.startsWith('<?', lt)) {
      const e = text.indexOf('?>', lt + 2);
      i = e === -1 ? text.length : e + 2;
      continue;
    }
    if (text[lt + 1] === '!') {
      const e = text.indexOf('>', lt + 2);
      i = e === -1 ? text.length : e + 1;
      continue;
    }
    if (text[lt + 1] === '/') {
      const e = text.indexOf('>', lt + 2);
      if (stack.length === depth && open) {
        open.lineEnd = lineOf(lt);
        open = undefined;
      }
      stack.pop();
      i = e === -1 ? text.length : e + 1;
      continue;
    }
    tagRe.lastIndex = lt;
    const m = tagRe.exec(text);
    if (!m) {
      i = lt + 1;
      continue;
    }
    stack.push(localName(m[1]!));
    if (stack.length === depth && stack.every((s, k) => s === segs[k])) {
      const l = lineOf(lt);
      const loc = { line: l, lineEnd: l };
      out.push(loc);
      if (m[2] !== '/') open = loc;
    }
    if (m[2] === '/') stack.pop();
    i = lt + m[0].length;
  }
  return out;
}

interface Found {
  item: unknown;
  /** element path with 1-based indexes on repeated steps: nfeProc/NFe/infNFe/det[3] */
  element: string;
  /** the document-level fields (ancestors along the item path, the item array excluded) */
  doc: Flat;
}

function asList(v: unknown): unknown[] {
  return Array.isArray(v) ? v : [v];
}

/**
 * Walks `segs` (local names, the first being the root element) through the parsed document and
 * returns every item with its document-level fields. `docFrom` is the number of leading segments
 * left out of document-level paths (1 when the optional root is present and dropped).
 */
function collect(root: Record<string, unknown>, segs: string[], docFrom: number): Found[] | undefined {
  if (!(segs[0]! in root)) return undefined;
  const found: Found[] = [];
  let exists = false;
  const docCache = new Map<unknown, Flat>();
  // chain[k] = the instance of segs[k-1] (chain[0] = the parsed top-level object)
  const visit = (node: unknown, k: number, chain: unknown[], element: string): void => {
    if (typeof node !== 'object' || node === null || !(segs[k]! in (node as Record<string, unknown>))) return;
    const value = (node as Record<string, unknown>)[segs[k]!];
    const list = asList(value);
    const repeated = Array.isArray(value);
    if (k === segs.length - 1) {
      exists = true;
      const parent = chain[chain.length - 1];
      let doc = docCache.get(parent);
      if (doc === undefined) {
        doc = docFields(chain, segs, docFrom);
        docCache.set(parent, doc);
      }
      list.forEach((item, i) => {
        found.push({ item, element: `${element}${segs[k]}${repeated || list.length > 1 ? `[${i + 1}]` : ''}`, doc: doc! });
      });
      return;
    }
    list.forEach((child, i) => {
      visit(child, k + 1, [...chain, child], `${element}${segs[k]}${repeated ? `[${i + 1}]` : ''}/`);
    });
  };
  visit(root, 0, [root], '');
  return exists ? found : undefined;
}

/** Flattens the ancestors of the items: along the item path only the instance holding the item. */
function docFields(chain: unknown[], segs: string[], docFrom: number): Flat {
  const out: Flat = {};
  const last = segs.length - 1;
  const walk = (k: number, prefix: string): void => {
    // chain[k] is the node holding segs[k]
    const node = chain[k] as Record<string, unknown>;
    for (const [key, v] of Object.entries(node)) {
      if (key === segs[k]) {
        if (k === last) continue; // the items themselves are not document fields
        const here = k >= docFrom ? `${prefix}/${key}` : prefix;
        walk(k + 1, here);
        continue;
      }
      const path = `${prefix}/${key}`;
      flattenInto(out, path, v, decodeXmlEntities);
    }
  };
  walk(0, '');
  return out;
}

export async function* parseXml(path: string, o: XmlOptions, facts: ParseFacts, stats: SourceStats): AsyncGenerator<ParsedItem> {
  const buf = await readBounded(path, o.maxBytes, 'XML', stats);
  const encoding = o.encoding ?? declaredXmlEncoding(path, buf) ?? 'utf-8';
  const text = decodeWhole(path, buf, encoding, 'XML', stats);
  assertNoDoctype(path, text);
  const deep = xmlTooDeep(text);
  if (deep) {
    throw new InputError(`${path}:${deep.line}: XML nests deeper than ${MAX_NESTING} elements at line ${deep.line}: refused (not an export)`, {
      details: { file: path, line: deep.line },
    });
  }
  // loaded with the first XML file: a run without one does not pay for the parser's modules at start-up
  const { XMLParser, XMLValidator } = await import('fast-xml-parser');
  const valid = XMLValidator.validate(text, { allowBooleanAttributes: false });
  if (valid !== true) {
    throw new InputError(`${path}:${valid.err.line}: XML is not well-formed: ${valid.err.msg} (column ${valid.err.col})`, {
      details: { file: path, line: valid.err.line, column: valid.err.col, code: valid.err.code },
    });
  }
  const alternatives = (Array.isArray(o.itemPath) ? o.itemPath : [o.itemPath]).map((p) => p.split('/'));
  const candidates: Array<{ segs: string[]; docFrom: number }> = [];
  for (const segs of alternatives) {
    candidates.push({ segs, docFrom: o.rootOptional ? 1 : 0 });
    if (o.rootOptional && segs.length > 1) candidates.push({ segs: segs.slice(1), docFrom: 0 });
  }
  const arrayPaths = new Set<string>();
  for (const c of candidates) {
    const base = c.segs.join('.');
    arrayPaths.add(base);
    for (const r of o.repeat) arrayPaths.add(`${base}.${r.split('/').join('.')}`);
  }
  const parser = new XMLParser({
    ignoreAttributes: false,
    attributeNamePrefix: '@',
    textNodeName: '#text',
    cdataPropName: '#cdata',
    parseTagValue: false,
    parseAttributeValue: false,
    processEntities: false,
    htmlEntities: false,
    removeNSPrefix: true,
    trimValues: true,
    ignoreDeclaration: true,
    ignorePiTags: true,
    commentPropName: false,
    jPath: true,
    isArray: (_name: string, jpath: unknown, _leaf: boolean, isAttribute: boolean) =>
      !isAttribute && typeof jpath === 'string' && arrayPaths.has(jpath.split('.').map(localName).join('.')),
  });
  let doc: Record<string, unknown>;
  try {
    doc = parser.parse(text) as Record<string, unknown>;
  } catch (err) {
    throw new InputError(`${path}: XML cannot be parsed: ${errorMessage(err)}`, { cause: err, details: { file: path } });
  }
  let chosen: { segs: string[]; found: Found[] } | undefined;
  for (const c of candidates) {
    const found = collect(doc, c.segs, c.docFrom);
    if (found !== undefined) {
      chosen = { segs: c.segs, found };
      break;
    }
  }
  if (chosen === undefined) {
    const tried = candidates.map((c) => c.segs.join('/')).join(', ');
    const roots = Object.keys(doc).join(', ') || 'none';
    throw new InputError(`${path}: no item element at ${tried} (the document root is ${roots})`, { details: { file: path } });
  }
  const lines = locateElements(text, chosen.segs);
  facts.itemPath = chosen.segs.join('/');
  for (let i = 0; i < chosen.found.length; i++) {
    const f = chosen.found[i]!;
    const fields: Flat = {};
    if (typeof f.item === 'object' && f.item !== null) flattenInto(fields, '', f.item, decodeXmlEntities);
    else fields['#text'] = decodeXmlEntities(String(f.item ?? ''));
    Object.assign(fields, f.doc);
    const loc = lines[i];
    const line = loc?.line ?? 1;
    const row = {
      line,
      ...(loc && loc.lineEnd !== loc.line ? { lineEnd: loc.lineEnd } : {}),
      fields,
      recordType: f.element,
    };
    yield { kind: 'row', row };
  }
}
