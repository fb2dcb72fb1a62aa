/**
 * JSON (a document holding an array of items; not streaming, bounded by maxBytes) and JSON Lines
 * (one object per line; streamed, a bad line is an error item). Items are flattened to slash paths
 * like XML items (see flatten.ts).
 */
import { InputError, errorMessage } from '../shared/errors.js';
import { jsonTooDeep, MAX_NESTING } from './depth.js';
import { flatten, flattenInto } from './flatten.js';
import type { JsonlOptions, JsonOptions } from './options.js';
import { decodeWhole, readLines, type SourceStats } from './text-source.js';
import { ParseIssueCode, type ParseFacts, type ParsedItem } from './types.js';
import { readBounded } from './xml.js';

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/**
 * Start lines of the elements of the arrays found at `path` (object keys from the top level, crossing
 * arrays; [] for a top-level array), in document order, by a scan that tracks strings, nesting and the
 * current key. Returns [] when the path is not an array (the caller has already checked it is).
 */
export function locateArrayElements(text: string, path: string[]): number[] {
  const lines: number[] = [];
  // stack of containers: for objects, the current key; for arrays, the marker
  const stack: Array<{ type: 'object'; key: string | undefined } | { type: 'array'; target: boolean; expectValue: boolean }> = [];
  let line = 1;
  const currentPath = (): string[] => {
    const p: string[] = [];
    for (const s of stack) {
      if (s.type === 'object') {
        if (s.key === undefined) return ['\u0000'];
        p.push(s.key);
      } // an array is transparent: itemPath may cross arrays ("pedidos/itens": the items of every order)
    }
    return p;
  };
  const samePath = (a: string[], b: string[]): boolean => a.length === b.length && a.every((x, i) => x === b[i]);
  const n = text.length;
  const valueStarts = (): void => {
    const top = stack[stack.length - 1];
    if (top && top.type === 'array' && top.target && top.expectValue) {
      lines.push(line);
      top.expectValue = false;
    }
  };
  for (let i = 0; i < n; i++) {
    const c = text.charCodeAt(i);
    if (c === 10) {
      line++;
      continue;
    }
    if (c === 32 || c === 9 || c === 13) continue;
    if (c === 34) {
      // string (JSON.parse has accepted the document: escapes are well-formed)
      let j = i + 1;
      for (; j < n; j++) {
        const d = text.charCodeAt(j);
        if (d === 92) {
          j++;
          continue;
        }
        if (d === 34) break;
      }
      const top = stack[stack.length - 1];
      // is it a key? look ahead for ':'
      let k = j + 1;
      while (k < n && /\s/.test(text[k]!)) k++;
      if (top && top.type === 'object' && text[k] === ':') {
        top.key = JSON.parse(text.slice(i, j + 1)) as string;
      } else {
        valueStarts();
      }
      i = j;
      continue;
    }
    if (c === 123 || c === 91) {
      valueStarts();
      if (c === 123) stack.push({ type: 'object', key: undefined });
      else {
        // an array inside an array of items is an item, not more items (the walk in itemArrays agrees)
        const target = samePath(currentPath(), path) && !stack.some((s) => s.type === 'array' && s.target);
        stack.push({ type: 'array', target, expectValue: true });
      }
      continue;
    }
    if (c === 125 || c === 93) {
      stack.pop();
      continue;
    }
    if (c === 44) {
      const top = stack[stack.length - 1];
      if (top && top.type === 'array') top.expectValue = true;
      else if (top && top.type === 'object') top.key = undefined;
      continue;
    }
    if (c === 58) continue;
    // a scalar value start (number, true, false, null)
    valueStarts();
    while (i + 1 < n && !/[\s,\]}]/.test(text[i + 1]!)) i++;
  }
  return lines;
}

export async function* parseJson(path: string, o: JsonOptions, facts: ParseFacts, stats: SourceStats): AsyncGenerator<ParsedItem> {
  const buf = await readBounded(path, o.maxBytes, 'JSON', stats);
  const text = decodeWhole(path, buf, o.encoding, 'JSON', stats);
  const deep = jsonTooDeep(text);
  if (deep) {
    throw new InputError(`${path}:${deep.line}: JSON nests deeper than ${MAX_NESTING} arrays/objects at line ${deep.line}: refused (not an export)`, {
      details: { file: path, line: deep.line },
    });
  }
  let doc: unknown;
  try {
    doc = JSON.parse(text);
  } catch (err) {
    throw new InputError(`${path}: JSON is not valid: ${errorMessage(err)}`, { cause: err, details: { file: path } });
  }
  const paths = Array.isArray(o.itemPath) ? o.itemPath : [o.itemPath];
  facts.itemPath = paths.map((p) => p ?? '').join(', ');
  for (const itemPath of paths) yield* itemsAt(path, text, doc, itemPath);
}

/** The rows of the items at one itemPath (undefined: the top level), in document order. */
function* itemsAt(path: string, text: string, doc: unknown, itemPath: string | undefined): Generator<ParsedItem> {
  const segs = itemPath ? itemPath.split('/') : [];
  const arrays = itemArrays(path, doc, segs, itemPath);
  const lines = locateArrayElements(text, segs);
  let k = 0;
  for (const a of arrays) {
    for (let i = 0; i < a.items.length; i++) {
      const item: unknown = a.items[i];
      const line = lines[k++] ?? 1;
      const where = `${a.where}[${i}]`;
      if (!isObject(item)) {
        yield {
          kind: 'error',
          line,
          text: JSON.stringify(item) ?? '',
          issue: { code: ParseIssueCode.NOT_AN_OBJECT, message: `item ${where} is not an object (${Array.isArray(item) ? 'array' : typeof item})` },
        };
        continue;
      }
      yield { kind: 'row', row: { line, fields: { ...a.document, ...flatten(item) }, recordType: where, text: JSON.stringify(item) } };
    }
  }
}

/** The itemPath of a JSON row's recordType, without indexes: `data[2]/itens[0]` -> `data/itens`, `[3]` -> ''. */
export function jsonItemPathOf(recordType: string | undefined): string {
  return (recordType ?? '').replace(/\[\d+\]/g, '');
}

/** One array of items found at itemPath, with where it is (`pedidos[2]/itens`) and its document fields. */
interface ItemArray {
  items: unknown[];
  where: string;
  /** The fields of the objects on the way down (docs/PARSERS.md, "json": `/pedidos/numero`). */
  document: Record<string, string>;
}

/**
 * The arrays of items at `segs` (object keys, crossing arrays), in document order. Each object on the way
 * gives its OTHER members as document fields, `/` + its path without indexes (`/pedidos/cliente/cnpj`), the
 * fields of the instance that holds the item; arrays of objects among them are left out (other items are
 * never document fields: no quadratic blow-up), arrays of plain values are kept. A missing key or a value
 * that is not an array at the end is an InputError naming the path, as before.
 */
function itemArrays(file: string, doc: unknown, segs: string[], itemPath: string | undefined): ItemArray[] {
  const out: ItemArray[] = [];
  let missing: string | undefined;
  let notArray = false;
  const walk = (node: unknown, depth: number, where: string, document: Record<string, string>): void => {
    if (Array.isArray(node) && depth < segs.length) {
      node.forEach((el, i) => walk(el, depth, `${where}[${i}]`, document));
      return;
    }
    if (depth === segs.length) {
      if (Array.isArray(node)) out.push({ items: node, where, document });
      else notArray = true;
      return;
    }
    const key = segs[depth]!;
    if (!isObject(node) || !(key in node)) {
      missing ??= segs.slice(0, depth + 1).join('/');
      return;
    }
    const prefix = `/${segs.slice(0, depth).join('/')}`;
    const mine: Record<string, string> = { ...document };
    for (const [k, v] of Object.entries(node)) {
      if (k === key || isArrayOfObjects(v)) continue;
      flattenInto(mine, prefix === '/' ? `/${k}` : `${prefix}/${k}`, v);
    }
    walk(node[key], depth + 1, where === '' ? key : `${where}/${key}`, mine);
  };
  walk(doc, 0, '', {});
  if (out.length === 0 && missing !== undefined) {
    throw new InputError(`${file}: no "${missing}" in the JSON document (itemPath ${itemPath})`, { details: { file } });
  }
  if (out.length === 0 && (notArray || segs.length === 0)) {
    throw new InputError(`${file}: ${itemPath ? `"${itemPath}"` : 'the top level'} of the JSON document is not an array of items`, {
      details: { file },
    });
  }
  return out;
}

const isArrayOfObjects = (v: unknown): boolean => Array.isArray(v) && v.some((e) => typeof e === 'object' && e !== null);

export async function* parseJsonl(path: string, o: JsonlOptions, facts: ParseFacts, stats: SourceStats): AsyncGenerator<ParsedItem> {
  for await (const pl of readLines(path, { encoding: o.encoding, maxLineLength: o.maxLineLength }, stats, 'JSON Lines')) {
    if (pl.tooLong !== undefined) {
      yield {
        kind: 'error',
        line: pl.line,
        issue: { code: ParseIssueCode.LINE_TOO_LONG, message: `line is ${pl.tooLong} characters long, above the limit of ${o.maxLineLength}` },
      };
      continue;
    }
    if (pl.text.trim() === '' && o.skipEmptyLines) continue;
    if (jsonTooDeep(pl.text)) {
      yield {
        kind: 'error',
        line: pl.line,
        text: pl.text,
        issue: { code: ParseIssueCode.BAD_JSON, message: `nests deeper than ${MAX_NESTING} arrays/objects: refused` },
      };
      continue;
    }
    let value: unknown;
    try {
      value = JSON.parse(pl.text);
    } catch (err) {
      yield { kind: 'error', line: pl.line, text: pl.text, issue: { code: ParseIssueCode.BAD_JSON, message: `not valid JSON: ${errorMessage(err)}` } };
      continue;
    }
    if (!isObject(value)) {
      yield {
        kind: 'error',
        line: pl.line,
        text: pl.text,
        issue: {
          code: ParseIssueCode.NOT_AN_OBJECT,
          message: `the line holds ${Array.isArray(value) ? 'an array' : typeof value === 'object' ? 'null' : `a ${typeof value}`}, not an object`,
        },
      };
      continue;
    }
    yield { kind: 'row', row: { line: pl.line, fields: flatten(value), text: pl.text } };
  }
  if (stats.newline !== undefined) facts.newline = stats.newline;
}
