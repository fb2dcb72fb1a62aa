/**
 * The parsed items of the sample being edited, kept between previews: an edit of the mapping re-maps the rows
 * without reading and decoding the file again. One entry (the last file and source options read in full), keyed
 * by the path, its size and modification time, and the resolved source options: a changed file or `source:`
 * is read again.
 */
import { stat } from 'node:fs/promises';
import { openParser, type ParsedItem, type ParseOptions } from '../parse/index.js';

/** items kept at most (a larger sample is read again on each preview) */
const MAX_ITEMS = 200_000;

export function sampleItemsCache(): (path: string, source: ParseOptions) => AsyncIterable<ParsedItem> {
  let kept: { key: string; items: ParsedItem[] } | undefined;
  return async function* items(path, source) {
    const st = await stat(path);
    const key = JSON.stringify([path, st.size, st.mtimeMs, source]);
    if (kept?.key === key) {
      yield* kept.items;
      return;
    }
    const read: ParsedItem[] = [];
    for await (const item of openParser(path, source)) {
      if (read.length <= MAX_ITEMS) read.push(item);
      yield item;
    }
    // reached only when the caller read the file to its end
    if (read.length <= MAX_ITEMS) kept = { key, items: read };
  };
}
