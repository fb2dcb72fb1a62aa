/**
 * Flattening of tree-shaped items (XML elements as parsed by fast-xml-parser, JSON objects) into the
 * flat `fields: Record<string, string>` of a RawRow. The scheme (docs/PARSERS.md, "Path scheme"):
 *
 * - nested values: slash paths, `prod/cProd`, `prod/rastro/nLote`
 * - XML attributes: `@name` on their element's path, `@nItem`, `prod/@attr`; an element's own text
 *   (when it also has attributes) on the element's path
 * - arrays (a repeated XML child, a `repeat` path, a JSON array): indexed paths from 0,
 *   `prod/rastro[0]/nLote`, `prod/rastro[1]/nLote`, AND the array itself as a JSON text on the bare
 *   path, `prod/rastro` = `[{"nLote":"L1","qLote":"2"},{"nLote":"L2","qLote":"1"}]`, each element a
 *   flat object with paths relative to it (an array of plain values is a JSON array of strings)
 * - values are strings, never numbers: leading zeros stay (`NCM` "07031019")
 * - an empty element is '' ; JSON null is '' ; JSON true/false/numbers are their JSON text
 */

export type Flat = Record<string, string>;

/** fast-xml-parser's key of an element's text when it also has attributes. */
export const TEXT_KEY = '#text';
/** fast-xml-parser's key of CDATA sections (cdataPropName): literal text, never entity-decoded. */
export const CDATA_KEY = '#cdata';

function join(prefix: string, key: string): string {
  return prefix === '' ? key : `${prefix}/${key}`;
}

function scalar(v: unknown): string {
  if (v === null || v === undefined) return '';
  if (typeof v === 'string') return v;
  if (typeof v === 'number' || typeof v === 'boolean' || typeof v === 'bigint') return String(v);
  return JSON.stringify(v);
}

function isPlainObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/**
 * Adds the flat fields of `value` at `prefix` to `out`. `decode` is applied to every string value
 * (XML: the predefined entities).
 */
export function flattenInto(out: Flat, prefix: string, value: unknown, decode?: (s: string) => string): void {
  if (Array.isArray(value)) {
    const elements: unknown[] = [];
    value.forEach((el, i) => {
      flattenInto(out, `${prefix}[${i}]`, el, decode);
      if (isPlainObject(el)) {
        const sub: Flat = {};
        flattenInto(sub, '', el, decode);
        elements.push(sub);
      } else {
        elements.push(decode && typeof el === 'string' ? decode(el) : scalar(el));
      }
    });
    if (prefix !== '') out[prefix] = JSON.stringify(elements);
    return;
  }
  if (isPlainObject(value)) {
    for (const [k, v] of Object.entries(value)) {
      if (k === TEXT_KEY || k === CDATA_KEY) {
        const key = prefix === '' ? TEXT_KEY : prefix;
        const text = k === CDATA_KEY ? (Array.isArray(v) ? v.map(scalar).join('') : scalar(v)) : decode ? decode(scalar(v)) : scalar(v);
        // text and CDATA of one element are joined (text first: their interleaving is not kept)
        out[key] = key in out ? (k === CDATA_KEY ? out[key] + text : text + out[key]) : text;
        continue;
      }
      flattenInto(out, join(prefix, k), v, decode);
    }
    // An XML element with only attributes, or an empty JSON object, still has a path.
    if (prefix !== '' && !(prefix in out) && !(TEXT_KEY in value) && !(CDATA_KEY in value)) {
      const onlyAttrs = Object.keys(value).every((k) => k.startsWith('@'));
      if (onlyAttrs) out[prefix] = '';
    }
    return;
  }
  if (prefix === '') return;
  const s = scalar(value);
  out[prefix] = decode && typeof value === 'string' ? decode(s) : s;
}

export function flatten(value: unknown, prefix = '', decode?: (s: string) => string): Flat {
  const out: Flat = {};
  flattenInto(out, prefix, value, decode);
  return out;
}

const PREDEFINED: Record<string, string> = { lt: '<', gt: '>', amp: '&', quot: '"', apos: "'" };

/**
 * Decodes XML's five predefined entities and numeric character references in one pass (no recursion,
 * so no expansion). Custom entities cannot exist: a DOCTYPE is refused before parsing. An unknown
 * reference is left as written.
 */
export function decodeXmlEntities(s: string): string {
  if (s.indexOf('&') === -1) return s;
  return s.replace(/&(#x[0-9a-fA-F]+|#[0-9]+|[a-zA-Z]+);/g, (whole, ref: string) => {
    if (ref.startsWith('#x') || ref.startsWith('#X')) return safeCodePoint(parseInt(ref.slice(2), 16), whole);
    if (ref.startsWith('#')) return safeCodePoint(parseInt(ref.slice(1), 10), whole);
    return PREDEFINED[ref] ?? whole;
  });
}

function safeCodePoint(cp: number, whole: string): string {
  if (!Number.isFinite(cp) || cp < 0 || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff)) return whole;
  return String.fromCodePoint(cp);
}
