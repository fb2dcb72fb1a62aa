/**
 * Nesting limits for the tree formats (JSON, JSON Lines, XML). A document nested a million deep makes
 * the recursive steps after parsing (flattening, the XML parser itself) overflow the stack with a message
 * that names nothing; these scans refuse it first, naming the line where the limit is crossed. Both are
 * one linear pass without recursion.
 */

/** Deeper than any export seen (an NF-e is about 8 elements deep); far below the stack's limit. */
export const MAX_NESTING = 100;

/** Where a JSON text first nests deeper than `max` arrays/objects (line from `firstLine`), or null. */
export function jsonTooDeep(text: string, max = MAX_NESTING, firstLine = 1): { line: number; depth: number } | null {
  let depth = 0;
  let line = firstLine;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === 10) line++;
    if (inString) {
      if (c === 92)
        i++; // backslash: skip the escaped character
      else if (c === 34) inString = false;
      continue;
    }
    if (c === 34) inString = true;
    else if (c === 91 || c === 123) {
      if (++depth > max) return { line, depth };
    } else if (c === 93 || c === 125) depth--;
  }
  return null;
}

/** Where an XML text first nests deeper than `max` elements, or null. */
export function xmlTooDeep(text: string, max = MAX_NESTING): { line: number; depth: number } | null {
  let depth = 0;
  let line = 1;
  let counted = 0;
  const lineAt = (idx: number): number => {
    for (let p = text.indexOf('\n', counted); p !== -1 && p < idx; p = text.indexOf('\n', p + 1)) line++;
    counted = idx;
    return line;
  };
  let i = 0;
  for (;;) {
    const lt = text.indexOf('<', i);
    if (lt === -1) return null;
    const skipTo = (end: string, from: number): number => {
      const e = text.indexOf(end, from);
      return e === -1 ? text.length : e + end.length;
    };
    if (text.startsWith('<!--', lt)) i = skipTo('-->', lt + 4);
    else if (text.startsWith('<![CDATA[', lt)) i = skipTo(']]>', lt + 9);
    else if (text.startsWith('<?', lt)) i = skipTo('?>', lt + 2);
    else if (text[lt + 1] === '!') i = skipTo('>', lt + 2);
    else if (text[lt + 1] === '/') {
      depth--;
      i = skipTo('>', lt + 2);
    } else {
      // the end of the start tag, quotes in attribute values respected
      let j = lt + 1;
      let quote = '';
      for (; j < text.length; j++) {
        const ch = text[j]!;
        if (quote) {
          if (ch === quote) quote = '';
        } else if (ch === '"' || ch === "'") quote = ch;
        else if (ch === '>') break;
      }
      if (text[j - 1] !== '/' && ++depth > max) return { line: lineAt(lt), depth };
      i = j + 1;
    }
  }
}
