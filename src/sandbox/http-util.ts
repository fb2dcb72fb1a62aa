/** Envelopes, status texts and paging of the sandbox answers. */
export const MSG_OK = 'The request has succeeded';

export const STATUS_TEXT: Readonly<Record<number, string>> = {
  400: 'Validation failed',
  401: 'Unauthorized',
  403: 'Forbidden',
  404: 'Not found',
  405: 'Method not allowed',
  406: 'Not acceptable',
  409: 'Conflict',
  413: 'Payload too large',
  415: 'Unsupported media type',
  429: 'Too many requests',
  500: 'Internal server error',
};

export interface Reply {
  status: number;
  body: unknown;
  headers?: Record<string, string>;
}

export function ok(data: unknown): Reply {
  return { status: 200, body: { code: 200, message: MSG_OK, data, error: '' } };
}

export function fail(status: number, error: string, data: unknown = null, headers?: Record<string, string>): Reply {
  const r: Reply = { status, body: { code: status, message: STATUS_TEXT[status] ?? 'Error', data, error } };
  if (headers) r.headers = headers;
  return r;
}

export interface Paging {
  index: number;
  limit: number;
  /** PagingIndex of the first page (the dialect's pagingBase): 1 by default, 0 in a 0-based dialect */
  base: 0 | 1;
}

export const DEFAULT_PAGE_SIZE = 100;

/** PagingIndex (`base`-based, default `base`) and PagingLimit (default 100, clamped to max) from the query. */
/** The only query parameters the interface defines (the page of a list: ../shared/wms-interface.md). */
const PAGING_PARAMETERS: readonly string[] = ['PagingIndex', 'PagingLimit'];

/**
 * The sandbox is a strict WMS: a query parameter the interface does not define is refused with 400, on
 * every endpoint (a list takes PagingIndex and PagingLimit, nothing else does), so a client that sends one
 * (a filter the document does not give: issue 41) fails its tests instead of working only here.
 */
export function unknownQueryParameters(query: URLSearchParams | null, list: boolean): Reply | undefined {
  if (!query) return undefined;
  const unknown = [...new Set(query.keys())].filter((k) => !list || !PAGING_PARAMETERS.includes(k));
  if (unknown.length === 0) return undefined;
  const allowed = list ? `only ${PAGING_PARAMETERS.join(' and ')}` : 'none';
  return fail(400, `unknown query parameter${unknown.length > 1 ? 's' : ''} ${unknown.join(', ')}: the interface defines ${allowed} on this endpoint`);
}

export function parsePaging(query: URLSearchParams | null, maxPageSize: number, base: 0 | 1 = 1): Paging | Reply {
  let index: number = base;
  let limit = DEFAULT_PAGE_SIZE;
  const problems: string[] = [];
  if (query) {
    // a case variant would be silently ignored and the client would read page 1 forever: refuse it
    for (const name of query.keys()) {
      const lower = name.toLowerCase();
      if ((lower === 'pagingindex' && name !== 'PagingIndex') || (lower === 'paginglimit' && name !== 'PagingLimit')) {
        problems.push(`${name}: unknown query parameter (the spelling is ${lower === 'pagingindex' ? 'PagingIndex' : 'PagingLimit'})`);
      }
    }
  }
  const pi = query?.get('PagingIndex');
  const pl = query?.get('PagingLimit');
  if (pi !== null && pi !== undefined) {
    if (!/^\d+$/.test(pi) || Number(pi) < base) problems.push(`PagingIndex: must be an integer >= ${base} (the first page is ${base})`);
    else index = Number(pi);
  }
  if (pl !== null && pl !== undefined) {
    if (!/^\d+$/.test(pl) || Number(pl) < 1) problems.push('PagingLimit: must be an integer >= 1');
    else limit = Math.min(Number(pl), maxPageSize);
  }
  if (problems.length) return fail(400, problems.join('; '));
  return { index, limit: Math.min(limit, maxPageSize), base };
}

export function listReply(total: number, paging: Paging, data: unknown[]): Reply {
  return {
    status: 200,
    body: {
      code: 200,
      message: MSG_OK,
      count: total,
      totalPages: Math.ceil(total / paging.limit),
      pagingLimit: paging.limit,
      pagingIndex: paging.index,
      data,
      error: '',
    },
  };
}

/** Offset of the first record of the page. */
export function pageStart(paging: Paging): number {
  return (paging.index - paging.base) * paging.limit;
}

export function pageOf<T>(all: readonly T[], paging: Paging): Reply {
  const start = pageStart(paging);
  return listReply(all.length, paging, start >= all.length ? [] : all.slice(start, start + paging.limit));
}
