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

export function createPager(core: CallPolicy, shapes: Shapes, defaultPageSize: number, pagingBase: PagingBase): Pager {
  const { counters, log } = core;
  let knownBase: 0 | 1 | undefined = pagingBase === 'auto' ? undefined : pagingBase;
  /** 'auto' found 0 because PagingIndex 0 was answered, but no read has yet seen a second page: a lenient
   * 1-based server reading 0 as 1 looks the same until then */
  let zeroUnconfirmed = false;

  const pagingError = (name: EndpointName, params: Record<string, string> | undefined, what: string, details?: Record<string, unknown>): WmsError => {
    const ep = ENDPOINTS[name];
    const path = buildPath(ep.path, params);
    counters.failures++;
    return new WmsError(WmsErrorCode.PAGING, formatWmsMessage(ep.method, path, what), { method: ep.method, path, ...(details ? { details } : {}) });
  };
  const baseSetting = (): string => (pagingBase === 'auto' ? `wms.pagingBase auto (found ${String(knownBase)})` : `wms.pagingBase ${pagingBase}`);

  /** A failed page read: true when it tells the base (PagingIndex 0 refused: 1-based) and the read goes on. */
  const refusedProbe = (name: EndpointName, params: Record<string, string> | undefined, r: Read, err: unknown): boolean => {
    if (r.probing && err instanceof WmsError && (err.code === WmsErrorCode.VALIDATION || err.httpStatus === 404)) {
      counters.failures--;
      log.debug({ op: name }, 'wms: PagingIndex 0 refused; pages are 1-based');
      knownBase = 1;
      r.probing = false;
      r.index = 1;
      return true;
    }
    if (r.pageNo === 1 && r.index === 0 && pagingBase === 0 && err instanceof WmsError && err.code === WmsErrorCode.VALIDATION) {
      throw pagingError(
        name,
        params,
        `the WMS refuses PagingIndex 0 (${err.envelopeError ?? err.message}): its pages are 1-based; set wms.pagingBase to auto or 1`,
      );
    }
    return false;
  };

  /** The first answer to PagingIndex 0 tells the base; true when page 1 must be asked (this answer is not a page). */
  const probed = (name: EndpointName, r: Read, env: Envelope, data: unknown[]): boolean => {
    r.probing = false;
    if (env['pagingIndex'] === 1) {
      // PagingIndex 0 answered as page 1: 1-based (a lenient server clamps 0)
      knownBase = 1;
      r.index = 1;
    } else if (data.length === 0 && r.expected !== undefined && r.expected > 0) {
      // nothing before page 1 although records exist: 1-based; ask page 1
      knownBase = 1;
      r.index = 1;
      return true;
    } else {
      knownBase = 0;
      r.tentative = true;
      zeroUnconfirmed = true;
    }
    log.debug({ op: name, pagingBase: knownBase }, 'wms: page base found');
    return false;
  };

  /** A page equal to the previous one: on the second page of a tentative 0 base, the base is 1 (true: ask again). */
  const repeated = (name: EndpointName, params: Record<string, string> | undefined, label: string, r: Read): boolean => {
    if (r.tentative && r.pageNo === 2) {
      // PagingIndex 0 and 1 answer the same page: a 1-based server reading 0 as 1
      knownBase = 1;
      r.tentative = false;
      zeroUnconfirmed = false;
      log.debug({ op: name }, 'wms: PagingIndex 0 and 1 answer the same page; pages are 1-based');
      r.index++;
      return true;
    }
    counters.failures++;
    throw shapes.responseError(name, params, `a list of ${label}`, `page ${r.index} repeats the previous page (server ignores ${PAGING_INDEX}?)`, {
      page: r.index,
    });
  };

  async function* paged<T extends z.ZodType>(
    name: EndpointName,
    schema: T,
    label: string,
    opts: PageOptions | undefined,
    params?: Record<string, string>,
    jsonBody?: () => unknown,
  ): AsyncGenerator<z.output<T>> {
    const json = jsonBody ? jsonBody() : undefined;
    const size = opts?.pageSize ?? defaultPageSize;
    const r: Read = {
      probing: knownBase === undefined,
      tentative: knownBase === 0 && zeroUnconfirmed,
      index: knownBase ?? 0,
      pageNo: 1,
      previous: undefined,
      expected: undefined,
      collected: 0,
    };
    const finish = (): void => {
      if (r.expected !== undefined && r.collected < r.expected) {
        throw pagingError(
          name,
          params,
          `read ${r.collected} of the ${r.expected} ${label} records the WMS counts (first PagingIndex ${String(knownBase ?? r.index)}, ${baseSetting()}): the WMS numbers its pages differently or ignores PagingIndex; check wms.pagingBase (auto, 0 or 1), or run \`wmsbridge doctor\``,
          { collected: r.collected, count: r.expected, pagingBase: pagingBase, detectedBase: knownBase },
        );
      }
    };
    for (; ; r.pageNo++) {
      let env: Envelope;
      try {
        env = await core.call({
          name,
          ...(params ? { params } : {}),
          query: { ...(opts?.query ?? {}), [PAGING_INDEX]: r.index, [PAGING_LIMIT]: size },
          ...(json !== undefined ? { json } : {}),
          signal: opts?.signal,
        });
      } catch (err) {
        if (refusedProbe(name, params, r, err)) {
          r.pageNo--;
          continue;
        }
        throw err;
      }
      const data = env['data'] ?? [];
      if (!Array.isArray(data)) {
        counters.failures++;
        throw shapes.responseError(name, params, `a list of ${label}`, 'data is not an array', { page: r.index });
      }
      if (r.pageNo === 1 && typeof env['count'] === 'number' && Number.isFinite(env['count'])) r.expected = env['count'] as number;
      if (r.probing && probed(name, r, env, data)) {
        r.pageNo--;
        continue;
      }
      if (data.length === 0) return finish();
      const fingerprint = `${data.length}|${JSON.stringify(data[0])}|${JSON.stringify(data[data.length - 1])}`;
      if (fingerprint === r.previous && repeated(name, params, label, r)) {
        r.pageNo--;
        continue;
      }
      r.previous = fingerprint;
      const items: Array<z.output<T>> = new Array(data.length);
      for (let i = 0; i < data.length; i++) {
        const parsed = schema.safeParse(data[i]);
        if (!parsed.success) {
          counters.failures++;
          throw shapes.responseError(name, params, label, `page ${r.index}, data[${i}]: ${formatZodIssues(parsed.error)}`, { page: r.index });
        }
        items[i] = parsed.data;
      }
      r.collected += items.length;
      for (const item of items) yield item;
      const totalPages = typeof env['totalPages'] === 'number' ? (env['totalPages'] as number) : undefined;
      if (totalPages !== undefined) {
        if (r.pageNo >= totalPages) return finish();
      } else if (data.length < size) {
        return finish();
      }
      if (r.pageNo >= 2 && r.tentative) {
        r.tentative = false;
        zeroUnconfirmed = false; // a second, different page: 0-based for sure
      }
      r.index++;
    }
  }

  return { paged, knownBase: () => knownBase };
}
