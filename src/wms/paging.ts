/**
 * Reading a list endpoint page by page: page base auto-detection, never a short read.
 *
 * The page base is the configured one or, with 'auto', found by asking PagingIndex 0 first: refused or
 * answered as page 1 = 1-based, else 0-based, kept for the client's life (a lenient 1-based server that
 * reads 0 as 1 is caught when PagingIndex 0 and 1 answer the same page). A read that collects fewer
 * records than the WMS's own `count` is an E_WMS_PAGING error naming wms.pagingBase, never a short or
 * empty result.
 */
import type { z } from 'zod';
import type { PageOptions } from './client-types.js';
import type { Envelope } from './client-errors.js';
import { formatZodIssues } from '../shared/zod-issues.js';
import type { CallPolicy } from './call-policy.js';
import type { Shapes } from './client-shapes.js';
import { ENDPOINTS, buildPath, PAGING_INDEX, PAGING_LIMIT, type EndpointName } from './endpoints.js';
import { WmsError, WmsErrorCode, formatWmsMessage } from './errors.js';

export type PagingBase = 0 | 1 | 'auto';

export interface Pager {
  /** Every record of a list endpoint, page by page. */
  paged<T extends z.ZodType>(
    name: EndpointName,
    schema: T,
    label: string,
    opts: PageOptions | undefined,
    params?: Record<string, string>,
    jsonBody?: () => unknown,
  ): AsyncGenerator<z.output<T>>;
  /** the page base in use: the configured one, or what the first list read found out ('auto') */
  knownBase(): 0 | 1 | undefined;
}

/** One read's progress through its pages. */
interface Read {
  /** probing: the base is unknown and PagingIndex 0 is being asked to find it */
  probing: boolean;
  /** tentative: 0 was accepted as the first page; a repeat at index 1 means 0 was read as 1 */
  tentative: boolean;
  index: number;
  pageNo: number;
  previous: string | undefined;
  expected: number | undefined;
  collected: number;
}

/** The pager's state for the client's life: what it was told and what it found out about the page base. */
interface Paging {
  core: CallPolicy;
  shapes: Shapes;
  defaultPageSize: number;
  pagingBase: PagingBase;
  knownBase: 0 | 1 | undefined;
  /** 'auto' found 0 because PagingIndex 0 was answered, but no read has yet seen a second page: a lenient
   * 1-based server reading 0 as 1 looks the same until then */
  zeroUnconfirmed: boolean;
}

/** One list read: what it asks for, for its calls and its errors. */
interface ListRead {
  name: EndpointName;
  label: string;
  params: Record<string, string> | undefined;
  opts: PageOptions | undefined;
  /** the body of a list read that takes one (made when the read starts, as the generator runs) */
  jsonBody: (() => unknown) | undefined;
  size: number;
}

function pagingError(p: Paging, name: EndpointName, params: Record<string, string> | undefined, what: string, details?: Record<string, unknown>): WmsError {
  const ep = ENDPOINTS[name];
  const path = buildPath(ep.path, params);
  p.core.counters.failures++;
  return new WmsError(WmsErrorCode.PAGING, formatWmsMessage(ep.method, path, what), { method: ep.method, path, ...(details ? { details } : {}) });
}

function baseSetting(p: Paging): string {
  return p.pagingBase === 'auto' ? `wms.pagingBase auto (found ${String(p.knownBase)})` : `wms.pagingBase ${p.pagingBase}`;
}

/** A failed page read: true when it tells the base (PagingIndex 0 refused: 1-based) and the read goes on. */
function refusedProbe(p: Paging, l: ListRead, r: Read, err: unknown): boolean {
  if (r.probing && err instanceof WmsError && (err.code === WmsErrorCode.VALIDATION || err.httpStatus === 404)) {
    p.core.counters.failures--;
    p.core.log.debug({ op: l.name }, 'wms: PagingIndex 0 refused; pages are 1-based');
    p.knownBase = 1;
    r.probing = false;
    r.index = 1;
    return true;
  }
  if (r.pageNo === 1 && r.index === 0 && p.pagingBase === 0 && err instanceof WmsError && err.code === WmsErrorCode.VALIDATION) {
    throw pagingError(
      p,
      l.name,
      l.params,
      `the WMS refuses PagingIndex 0 (${err.envelopeError ?? err.message}): its pages are 1-based; set wms.pagingBase to auto or 1`,
    );
  }
  return false;
}

/** The first answer to PagingIndex 0 tells the base; true when page 1 must be asked (this answer is not a page). */
function probed(p: Paging, name: EndpointName, r: Read, env: Envelope, data: unknown[]): boolean {
  r.probing = false;
  if (env['pagingIndex'] === 1) {
    // PagingIndex 0 answered as page 1: 1-based (a lenient server clamps 0)
    p.knownBase = 1;
    r.index = 1;
  } else if (data.length === 0 && r.expected !== undefined && r.expected > 0) {
    // nothing before page 1 although records exist: 1-based; ask page 1
    p.knownBase = 1;
    r.index = 1;
    return true;
  } else {
    p.knownBase = 0;
    r.tentative = true;
    p.zeroUnconfirmed = true;
  }
  p.core.log.debug({ op: name, pagingBase: p.knownBase }, 'wms: page base found');
  return false;
}

/** A page equal to the previous one: on the second page of a tentative 0 base, the base is 1 (true: ask again). */
function repeated(p: Paging, l: ListRead, r: Read): boolean {
  if (r.tentative && r.pageNo === 2) {
    // PagingIndex 0 and 1 answer the same page: a 1-based server reading 0 as 1
    p.knownBase = 1;
    r.tentative = false;
    p.zeroUnconfirmed = false;
    p.core.log.debug({ op: l.name }, 'wms: PagingIndex 0 and 1 answer the same page; pages are 1-based');
    r.index++;
    return true;
  }
  p.core.counters.failures++;
  throw p.shapes.responseError(l.name, l.params, `a list of ${l.label}`, `page ${r.index} repeats the previous page (server ignores ${PAGING_INDEX}?)`, {
    page: r.index,
  });
}

/** The end of a read: an E_WMS_PAGING error when it collected fewer records than the WMS counts. */
function finishRead(p: Paging, l: ListRead, r: Read): void {
  if (r.expected !== undefined && r.collected < r.expected) {
    throw pagingError(
      p,
      l.name,
      l.params,
      `read ${r.collected} of the ${r.expected} ${l.label} records the WMS counts (first PagingIndex ${String(p.knownBase ?? r.index)}, ${baseSetting(p)}): the WMS numbers its pages differently or ignores PagingIndex; check wms.pagingBase (auto, 0 or 1), or run \`wmsbridge doctor\``,
      { collected: r.collected, count: r.expected, pagingBase: p.pagingBase, detectedBase: p.knownBase },
    );
  }
}

/** The page at `r.index`: its envelope, or undefined when a refused probe told the base (ask again). */
async function askPage(p: Paging, l: ListRead, r: Read, json: unknown): Promise<Envelope | undefined> {
  try {
    return await p.core.call({
      name: l.name,
      ...(l.params ? { params: l.params } : {}),
      query: { ...(l.opts?.query ?? {}), [PAGING_INDEX]: r.index, [PAGING_LIMIT]: l.size },
      ...(json !== undefined ? { json } : {}),
      signal: l.opts?.signal,
    });
  } catch (err) {
    if (refusedProbe(p, l, r, err)) return undefined;
    throw err;
  }
}

/** A page's records, each checked against the schema (E_WMS_RESPONSE naming the page and the index). */
function pageItems<T extends z.ZodType>(p: Paging, l: ListRead, r: Read, schema: T, data: unknown[]): Array<z.output<T>> {
  const items: Array<z.output<T>> = new Array(data.length);
  for (let i = 0; i < data.length; i++) {
    const parsed = schema.safeParse(data[i]);
    if (!parsed.success) {
      p.core.counters.failures++;
      throw p.shapes.responseError(l.name, l.params, l.label, `page ${r.index}, data[${i}]: ${formatZodIssues(parsed.error)}`, { page: r.index });
    }
    items[i] = parsed.data;
  }
  return items;
}

/** After a page's records: true when it was the last page (totalPages, or a short page when the WMS gives none). */
function lastPage(p: Paging, l: ListRead, r: Read, env: Envelope, received: number): boolean {
  const totalPages = typeof env['totalPages'] === 'number' ? (env['totalPages'] as number) : undefined;
  if (totalPages !== undefined ? r.pageNo >= totalPages : received < l.size) return true;
  if (r.pageNo >= 2 && r.tentative) {
    r.tentative = false;
    p.zeroUnconfirmed = false; // a second, different page: 0-based for sure
  }
  r.index++;
  return false;
}

async function* paged<T extends z.ZodType>(p: Paging, l: ListRead, schema: T): AsyncGenerator<z.output<T>> {
  const json = l.jsonBody ? l.jsonBody() : undefined;
  const r: Read = {
    probing: p.knownBase === undefined,
    tentative: p.knownBase === 0 && p.zeroUnconfirmed,
    index: p.knownBase ?? 0,
    pageNo: 1,
    previous: undefined,
    expected: undefined,
    collected: 0,
  };
  for (; ; r.pageNo++) {
    const env = await askPage(p, l, r, json);
    if (env === undefined) {
      r.pageNo--;
      continue;
    }
    const data = env['data'] ?? [];
    if (!Array.isArray(data)) {
      p.core.counters.failures++;
      throw p.shapes.responseError(l.name, l.params, `a list of ${l.label}`, 'data is not an array', { page: r.index });
    }
    if (r.pageNo === 1 && typeof env['count'] === 'number' && Number.isFinite(env['count'])) r.expected = env['count'] as number;
    if (r.probing && probed(p, l.name, r, env, data)) {
      r.pageNo--;
      continue;
    }
    if (data.length === 0) return finishRead(p, l, r);
    const fingerprint = `${data.length}|${JSON.stringify(data[0])}|${JSON.stringify(data[data.length - 1])}`;
    if (fingerprint === r.previous && repeated(p, l, r)) {
      r.pageNo--;
      continue;
    }
    r.previous = fingerprint;
    const items = pageItems(p, l, r, schema, data);
    r.collected += items.length;
    for (const item of items) yield item;
    if (lastPage(p, l, r, env, data.length)) return finishRead(p, l, r);
  }
}

export function createPager(core: CallPolicy, shapes: Shapes, defaultPageSize: number, pagingBase: PagingBase): Pager {
  const p: Paging = { core, shapes, defaultPageSize, pagingBase, knownBase: pagingBase === 'auto' ? undefined : pagingBase, zeroUnconfirmed: false };
  return {
    paged<T extends z.ZodType>(
      name: EndpointName,
      schema: T,
      label: string,
      opts: PageOptions | undefined,
      params?: Record<string, string>,
      jsonBody?: () => unknown,
    ): AsyncGenerator<z.output<T>> {
      return paged(p, { name, label, params, opts, jsonBody, size: opts?.pageSize ?? defaultPageSize }, schema);
    },
    knownBase: () => p.knownBase,
  };
}
