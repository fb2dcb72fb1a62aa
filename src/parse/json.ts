/**
 * JSON (a document holding an array of items; not streaming, bounded by maxBytes) and JSON Lines
 * (one object per line; streamed, a bad line is an error item). Items are flattened to slash paths
 * like XML items (see flatten.ts).
 */
import { InputError, errorMessage } from '../shared/errors.js';
import { jsonTooDeep, MAX_NESTING } from './depth.js';
import { flatten } from './flatten.js';
import type { JsonlOptions, JsonOptions } from './options.js';
import { decodeWhole, readLines, type SourceStats } from './text-source.js';
import { ParseIssueCode, type ParseFacts, type ParsedItem } from './types.js';
import { readBounded } from './xml.js';

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/**
 * Start lines of the elements of the array found at `path` (object keys from the top level; [] for a
 * top-level array), by a scan that tracks strings, nesting and the current key. Returns [] when the
 * path is not an array (the caller has already checked it is).
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
      } else return ['\u0000']; // items inside arrays are not addressed by itemPath
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
        const target = samePath(currentPath(), path);
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
  const segs = o.itemPath ? o.itemPath.split('/') : [];
  let node: unknown = doc;
  for (const [i, s] of segs.entries()) {
    if (!isObject(node) || !(s in node)) {
      throw new InputError(`${path}: no "${segs.slice(0, i + 1).join('/')}" in the JSON document (itemPath ${o.itemPath})`, {
        details: { file: path },
      });
    }
    node = node[s];
  }
  if (!Array.isArray(node)) {
    throw new InputError(`${path}: ${o.itemPath ? `"${o.itemPath}"` : 'the top level'} of the JSON document is not an array of items`, {
      details: { file: path },
    });
  }
  facts.itemPath = o.itemPath ?? '';
  const lines = locateArrayElements(text, segs);
  for (let i = 0; i < node.length; i++) {
    const item: unknown = node[i];
    const line = lines[i] ?? 1;
    const where = `${o.itemPath ?? ''}[${i}]`;
    if (!isObject(item)) {
      yield {
        kind: 'error',
        line,
        text: JSON.stringify(item) ?? '',
        issue: { code: ParseIssueCode.NOT_AN_OBJECT, message: `item ${where} is not an object (${Array.isArray(item) ? 'array' : typeof item})` },
      };
      continue;
    }
    yield { kind: 'row', row: { line, fields: flatten(item), recordType: where, text: JSON.stringify(item) } };
  }
}

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
