/**
 * `wmsbridge doctor`: probes a WMS for the choices the interface leaves open and says what it found and
 * which config lines to use. Raw HTTP (undici), so what is observed is what the WMS answers: status codes,
 * the Date header, Retry-After, envelopes. Reads only, unless `probeWrites` (then: two creates of one
 * harmless Category, and one PickingList refused for nonexistent ids).
 *
 * Findings map one to one onto the sandbox dialect knobs (src/sandbox/dialect.ts), so the WMS can be
 * reproduced locally with `wmsbridge sandbox --dialect <found>`.
 */
import { randomUUID } from 'node:crypto';
import { Agent, request, type Dispatcher } from 'undici';
import { ENDPOINTS, PAGING_INDEX, PAGING_LIMIT, buildPath, type EndpointName } from '../wms/endpoints.js';
import { DEFAULT_USER_AGENT } from '../shared/version.js';
import { errorMessage } from '../shared/errors.js';
import type { DateTimesMode } from '../wms/datetimes.js';

export interface DoctorTarget {
  url: string;
  accessKeyID: string;
  secretKey: string;
  userAgent?: string;
  tls?: { rejectUnauthorized?: boolean; ca?: string };
  timeoutMs?: number;
}

/** What the current configuration says, to compare the findings with. */
export interface DoctorConfigView {
  pagingBase: 0 | 1 | 'auto';
  dateTimes: DateTimesMode;
  requestsPerSecond: number;
}

export type Knob<T> = { value: T; how: string } | { value: null; how: string };

export interface DoctorReport {
  url: string;
  login: { ok: boolean; ms: number | null; error?: string; tokenTtlSeconds: number | null; clockSkewSeconds: number | null };
  pagingBase: Knob<0 | 1>;
  cnpjFormat: Knob<'digits' | 'masked'>;
  ownersCodeerpMatches: Knob<'code' | 'codeERP'>;
  dateTimes: Knob<'utc' | 'local'>;
  pickingListTypeRequired: Knob<boolean>;
  duplicates: Knob<'accept' | 'refuse'>;
  counts: Record<string, number | string>;
  latencyMs: { median: number; max: number; samples: number } | null;
  rateLimit: { answered429: number; retryAfter: string | null; requests: number };
  /** the sandbox dialect that behaves like this WMS (unprobed knobs at their default) */
  dialect: string;
  configLines: string[];
  problems: string[];
  notes: string[];
}

interface Answer {
  status: number;
  json: Record<string, unknown> | null;
  headers: Record<string, string | string[] | undefined>;
  ms: number;
}

const CNPJ_MASKED = /^\d{2}\.\d{3}\.\d{3}\/\d{4}-\d{2}$/;
const UTC_OR_OFFSET = /(?:Z|[+-]\d{2}:?\d{2})$/;
const NAIVE_DT = /^\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}/;

type CallOptions = { params?: Record<string, string>; query?: Record<string, string | number>; body?: unknown };

/** Raw calls to the WMS as it answers them (counted, 429s noted in the report), with the token once logged in. */
interface Probe {
  call(name: EndpointName, o?: CallOptions): Promise<Answer>;
  token: string;
  readonly base: string;
}

const dataOf = (a: Answer): unknown[] => (a.json && Array.isArray(a.json['data']) ? (a.json['data'] as unknown[]) : []);
const recs = (a: Answer): Array<Record<string, unknown>> => dataOf(a).filter((x): x is Record<string, unknown> => !!x && typeof x === 'object');

function emptyReport(base: string): DoctorReport {
  return {
    url: base,
    login: { ok: false, ms: null, tokenTtlSeconds: null, clockSkewSeconds: null },
    pagingBase: { value: null, how: 'not probed' },
    cnpjFormat: { value: null, how: 'not probed' },
    ownersCodeerpMatches: { value: null, how: 'not probed' },
    dateTimes: { value: null, how: 'not probed' },
    pickingListTypeRequired: { value: null, how: 'not probed: needs --probe-writes' },
    duplicates: { value: null, how: 'not probed: needs --probe-writes' },
    counts: {},
    latencyMs: null,
    rateLimit: { answered429: 0, retryAfter: null, requests: 0 },
    dialect: 'default',
    configLines: [],
    problems: [],
    notes: [],
  };
}

export async function runDoctor(
  target: DoctorTarget,
  config: DoctorConfigView,
  opts: { probeWrites?: boolean; now?: () => number } = {},
): Promise<DoctorReport> {
  const now = opts.now ?? Date.now;
  const base = target.url.replace(/\/+$/, '');
  const report = emptyReport(base);
  const probe = createProbe(target, base, report);
  try {
    if (!(await probeLogin(probe, target, report, now))) return finishReport(report, config);
    const pb = await probePagingBase(probe, report);
    const got = await probeReferenceCounts(probe, report, pb);
    await probeIdentifiers(probe, report, got);
    await probeDateTimes(probe, report, pb);
    // round-trip latency
    const samples: number[] = [];
    for (let i = 0; i < 5; i++) samples.push((await probe.call('listCompanies', { query: { [PAGING_INDEX]: pb, [PAGING_LIMIT]: 1 } })).ms);
    samples.sort((x, y) => x - y);
    report.latencyMs = { median: Math.round(samples[2]!), max: Math.round(samples[4]!), samples: samples.length };
    if (opts.probeWrites) await probeWrites(probe, report);
  } catch (err) {
    report.problems.push(`probe failed: ${errorMessage(err)}`);
  }
  return finishReport(report, config);
}

function createProbe(target: DoctorTarget, base: string, report: DoctorReport): Probe {
  const ua = target.userAgent ?? DEFAULT_USER_AGENT;
  const dispatcher: Dispatcher | undefined =
    target.tls && (target.tls.ca || target.tls.rejectUnauthorized === false)
      ? new Agent({ connect: { ...(target.tls.ca ? { ca: target.tls.ca } : {}), rejectUnauthorized: target.tls.rejectUnauthorized ?? true } })
      : undefined;
  const probe: Probe = {
    token: '',
    base,
    async call(name, o = {}) {
      const token = probe.token;
      const ep = ENDPOINTS[name];
      const qs = o.query ? `?${new URLSearchParams(Object.entries(o.query).map(([k, v]): [string, string] => [k, String(v)])).toString()}` : '';
      const headers: Record<string, string> = { 'user-agent': ua, accept: 'application/json' };
      if (token) headers['authorization'] = `Bearer ${token}`;
      if (o.body !== undefined) headers['content-type'] = 'application/json';
      const t0 = performance.now();
      report.rateLimit.requests++;
      const res = await request(`${base}${buildPath(ep.path, o.params)}${qs}`, {
        method: ep.method,
        headers,
        ...(o.body !== undefined ? { body: JSON.stringify(o.body) } : {}),
        ...(dispatcher ? { dispatcher } : {}),
        headersTimeout: target.timeoutMs ?? 30_000,
        bodyTimeout: target.timeoutMs ?? 30_000,
      });
      const text = await res.body.text();
      const ms = performance.now() - t0;
      if (res.statusCode === 429) {
        report.rateLimit.answered429++;
        const ra = res.headers['retry-after'];
        report.rateLimit.retryAfter = typeof ra === 'string' ? ra : null;
      }
      let json: Record<string, unknown> | null = null;
      try {
        const v: unknown = text ? JSON.parse(text) : null;
        json = v && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : null;
      } catch {
        json = null;
      }
      return { status: res.statusCode, json, headers: res.headers, ms };
    },
  };
  return probe;
}

/** Logs in; the clock skew from the Date header, the token's lifetime. False: no login (the report says why). */
async function probeLogin(probe: Probe, target: DoctorTarget, report: DoctorReport, now: () => number): Promise<boolean> {
  const base = probe.base;
  const t0 = now();
  let a: Answer;
  try {
    a = await probe.call('authorize', { body: { accessKeyID: target.accessKeyID, secretKey: target.secretKey } });
  } catch (err) {
    report.login.error = `cannot reach ${base}: ${errorMessage(err)}`;
    report.problems.push(`login: ${report.login.error}`);
    return false;
  }
  report.login.ms = Math.round(a.ms);
  const data = a.json?.['data'] as Record<string, unknown> | undefined;
  if (a.status !== 200 || typeof data?.['token'] !== 'string') {
    report.login.error = `POST /open/v1/authorize answered ${a.status}${a.json?.['error'] ? `: ${String(a.json['error'])}` : ''}`;
    report.problems.push(`login: ${report.login.error} (check wms.accessKeyId and the secret key)`);
    return false;
  }
  report.login.ok = true;
  probe.token = data['token'] as string;
  const dateHeader = a.headers['date'];
  if (typeof dateHeader === 'string' && Number.isFinite(Date.parse(dateHeader))) {
    // the Date header has a resolution of one second: skews under 2 s are noise
    const skew = (Date.parse(dateHeader) - (t0 + now()) / 2) / 1000;
    report.login.clockSkewSeconds = Math.abs(skew) < 2 ? 0 : Math.round(skew);
  }
  report.login.tokenTtlSeconds = jwtTtlSeconds(probe.token, now());
  if (report.login.clockSkewSeconds !== null && Math.abs(report.login.clockSkewSeconds) > 30) {
    const ttl = report.login.tokenTtlSeconds;
    report.problems.push(
      `clock: this machine and the WMS differ by ${report.login.clockSkewSeconds} s${ttl !== null ? ` (token lifetime ${ttl} s)` : ''}: token expiry and DateTimes are judged on wrong clocks; set up NTP`,
    );
  }
  return true;
}

/** Whether PagingIndex counts from 0 or 1, from the lists' answers to PagingIndex 0 and 1. */
async function probePagingBase(probe: Probe, report: DoctorReport): Promise<0 | 1> {
  const call = probe.call;
  const listsToProbe: EndpointName[] = ['listWarehouses', 'listMaterialStatuses', 'listCompanies', 'listBranches', 'listOwners'];
  for (const name of listsToProbe) {
    const z = await call(name, { query: { [PAGING_INDEX]: 0, [PAGING_LIMIT]: 1 } });
    if (z.status === 400 || z.status === 422) {
      report.pagingBase = { value: 1, how: `PagingIndex 0 refused (${z.status}) on ${ENDPOINTS[name].path}` };
      break;
    }
    if (z.status !== 200) continue;
    const count = typeof z.json?.['count'] === 'number' ? (z.json['count'] as number) : null;
    if (z.json?.['pagingIndex'] === 1) {
      report.pagingBase = { value: 1, how: `PagingIndex 0 answered as page 1 on ${ENDPOINTS[name].path}` };
      break;
    }
    if (dataOf(z).length === 0) {
      if (count !== null && count > 0) {
        report.pagingBase = { value: 1, how: `PagingIndex 0 answered no records although count is ${count} on ${ENDPOINTS[name].path}` };
        break;
      }
      continue; // an empty list tells nothing
    }
    const one = await call(name, { query: { [PAGING_INDEX]: 1, [PAGING_LIMIT]: 1 } });
    const same = JSON.stringify(dataOf(one)[0]) === JSON.stringify(dataOf(z)[0]);
    report.pagingBase = same
      ? { value: 1, how: `PagingIndex 0 and 1 answer the same page on ${ENDPOINTS[name].path}` }
      : { value: 0, how: `PagingIndex 0 answers the first page and 1 the second on ${ENDPOINTS[name].path}` };
    break;
  }
  if (report.pagingBase.value === null) report.problems.push('paging: no list answered records, the page base cannot be told (are the reference data empty?)');
  return report.pagingBase.value ?? 1;
}

/** every record of a list, checked against the WMS's count (a string: why not) */
async function readAll(probe: Probe, pb: number, name: EndpointName, params?: Record<string, string>): Promise<Array<Record<string, unknown>> | string> {
  const call = probe.call;
  const out: Array<Record<string, unknown>> = [];
  let expected: number | null = null;
  for (let page = 0; page < 1000; page++) {
    const r = await call(name, { ...(params ? { params } : {}), query: { [PAGING_INDEX]: pb + page, [PAGING_LIMIT]: 100 } });
    if (r.status !== 200) return `${r.status}${r.json?.['error'] ? ` ${String(r.json['error'])}` : ''}`;
    if (page === 0 && typeof r.json?.['count'] === 'number') expected = r.json['count'] as number;
    const d = recs(r);
    out.push(...d);
    const tp = typeof r.json?.['totalPages'] === 'number' ? (r.json['totalPages'] as number) : null;
    if (d.length === 0 || (tp !== null && page + 1 >= tp) || (tp === null && d.length < 100)) break;
  }
  if (expected !== null && out.length < expected) return `read ${out.length} of ${expected} records with PagingIndex from ${pb}`;
  return out;
}

/** The reference data counted (and kept, to inspect their identifiers). */
async function probeReferenceCounts(probe: Probe, report: DoctorReport, pb: number): Promise<Record<string, Array<Record<string, unknown>>>> {
  const lists: Record<string, EndpointName> = {
    Company: 'listCompanies',
    Branch: 'listBranches',
    Warehouse: 'listWarehouses',
    Dock: 'listDocks',
    LogisticsProfile: 'listLogisticsProfiles',
    MaterialStatus: 'listMaterialStatuses',
    Owners: 'listOwners',
  };
  const got: Record<string, Array<Record<string, unknown>>> = {};
  for (const [resource, name] of Object.entries(lists)) {
    const r = await readAll(probe, pb, name);
    if (typeof r === 'string') {
      report.counts[resource] = `error: ${r}`;
      report.problems.push(`${resource}: ${ENDPOINTS[name].path}: ${r}`);
    } else {
      got[resource] = r;
      report.counts[resource] = r.length;
    }
  }
  for (const r of ['Company', 'Branch', 'Warehouse', 'MaterialStatus', 'LogisticsProfile']) {
    if (report.counts[r] === 0) report.problems.push(`${r}: the WMS lists none; documents need them (lookups would reject every row)`);
  }
  return got;
}

/** CNPJ format, and what GET /Owners/codeerp/{code} matches. */
async function probeIdentifiers(probe: Probe, report: DoctorReport, got: Record<string, Array<Record<string, unknown>>>): Promise<void> {
  const call = probe.call;
  const cnpjs = [...(got['Company'] ?? []), ...(got['Branch'] ?? [])]
    .map((r) => r['cnpj'])
    .filter((v): v is string => typeof v === 'string' && v.trim() !== '');
  if (cnpjs.length) {
    const masked = cnpjs.filter((c) => CNPJ_MASKED.test(c.trim())).length;
    report.cnpjFormat =
      masked > 0
        ? { value: 'masked', how: `${masked} of ${cnpjs.length} CNPJs answered masked (e.g. ${cnpjs.find((c) => CNPJ_MASKED.test(c.trim()))!})` }
        : { value: 'digits', how: `${cnpjs.length} CNPJs answered as digits (e.g. ${cnpjs[0]!})` };
  } else report.cnpjFormat = { value: null, how: 'no Company or Branch has a CNPJ' };

  // ------------------------------------------------------------------ Owners/codeerp semantics
  const owners = got['Owners'] ?? [];
  const distinct = owners.find((o) => typeof o['code'] === 'string' && typeof o['codeERP'] === 'string' && o['code'] !== o['codeERP']);
  if (owners.length === 0) report.ownersCodeerpMatches = { value: null, how: 'no owners listed' };
  else if (!distinct)
    report.ownersCodeerpMatches = { value: null, how: 'every owner has code = codeERP: the endpoint semantics cannot be told (and do not matter here)' };
  else {
    const byCode = await call('getOwnerByCode', { params: { code: String(distinct['code']) } });
    const found = byCode.status === 200 && (byCode.json?.['data'] as Record<string, unknown> | null)?.['id'] === distinct['id'];
    report.ownersCodeerpMatches = found
      ? { value: 'code', how: `GET /Owners/codeerp/${String(distinct['code'])} (its code) finds owner ${String(distinct['id'])}` }
      : { value: 'codeERP', how: `GET /Owners/codeerp/${String(distinct['code'])} (its code) answers ${byCode.status}: the endpoint matches codeERP` };
  }
}

/** DateTimes with or without a zone, from stock (else inventories). */
async function probeDateTimes(probe: Probe, report: DoctorReport, pb: number): Promise<void> {
  const call = probe.call;
  const stock = await call('listStock', { query: { [PAGING_INDEX]: pb, [PAGING_LIMIT]: 20 } });
  let dates = recs(stock)
    .flatMap((r) => [r['manufacturingDate'], r['expirationDate']])
    .filter((v): v is string => typeof v === 'string' && NAIVE_DT.test(v));
  if (dates.length === 0) {
    const inv = await call('listInventories', { query: { [PAGING_INDEX]: pb, [PAGING_LIMIT]: 5 } });
    dates = recs(inv)
      .flatMap((r) => [r['startDate'], r['endDate']])
      .filter((v): v is string => typeof v === 'string' && NAIVE_DT.test(v));
  }
  if (dates.length) {
    const zoned = dates.filter((d) => UTC_OR_OFFSET.test(d)).length;
    report.dateTimes =
      zoned === dates.length
        ? { value: 'utc', how: `${dates.length} DateTimes answered with a zone (e.g. ${dates[0]!})` }
        : {
            value: 'local',
            how: `${dates.length - zoned} of ${dates.length} DateTimes answered without a zone (e.g. ${dates.find((d) => !UTC_OR_OFFSET.test(d))!}): local time`,
          };
  } else report.dateTimes = { value: null, how: 'no Stock or Inventory DateTime to look at' };
}

/** --probe-writes: duplicates accepted or refused, PickingList type/separationType required. */
async function probeWrites(probe: Probe, report: DoctorReport): Promise<void> {
  const call = probe.call;
  const code = `WMSBRIDGE-DOCTOR-${randomUUID().slice(0, 8)}`;
  const cat = { name: `wmsbridge doctor probe ${code}`, codeERP: code, description: 'created by wmsbridge doctor --probe-writes', status: 1 };
  const c1 = await call('createCategory', { body: cat });
  if (c1.status !== 200) report.duplicates = { value: null, how: `creating a probe Category answered ${c1.status}` };
  else {
    const c2 = await call('createCategory', { body: cat });
    report.duplicates =
      c2.status === 200
        ? { value: 'accept', how: `a second Category with codeERP ${code} was created (the WMS keeps duplicates)` }
        : { value: 'refuse', how: `a second Category with codeERP ${code} answered ${c2.status}${c2.json?.['error'] ? `: ${String(c2.json['error'])}` : ''}` };
    report.notes.push(`--probe-writes created Category ${code} (a probe record: delete it in the WMS if you like)`);
  }
  // a PickingList the WMS must refuse (nonexistent ids), without type/separationType: is their absence named?
  const nil = '00000000-0000-4000-8000-000000000000';
  const pl = await call('createPickingList', {
    body: {
      companyID: nil,
      branchID: nil,
      warehouseID: nil,
      ownerID: nil,
      order: code,
      codeERP: nil,
      status: 1,
      finishCallBack: false,
      pickingItens: [{ productID: nil, quantity: 1, status: 1 }],
    },
  });
  const err = String(pl.json?.['error'] ?? '');
  if (pl.status === 200) {
    report.pickingListTypeRequired = { value: false, how: 'a PickingList with nonexistent ids was ACCEPTED: this WMS does not check foreign keys' };
    report.problems.push(`probe: the WMS accepted a PickingList for nonexistent ids (order ${code}); remove it there`);
  } else {
    report.pickingListTypeRequired = /\b(type|separationType)\b/.test(err)
      ? { value: true, how: `a PickingList without type/separationType was refused naming them (${pl.status})` }
      : { value: false, how: `a PickingList without type/separationType was refused for other fields only (${pl.status})` };
  }
}

/** Config lines to use, disagreements with the current configuration, the sandbox dialect. */
function finishReport(report: DoctorReport, config: DoctorConfigView): DoctorReport {
  // config lines: what to set, and whether the current configuration disagrees
  const pbv = report.pagingBase.value;
  if (pbv !== null) {
    report.configLines.push(`wms.pagingBase: auto   # found ${pbv}; or pin it: wms.pagingBase: ${pbv}`);
    if (config.pagingBase !== 'auto' && config.pagingBase !== pbv)
      report.problems.push(`wms.pagingBase is ${config.pagingBase} but the WMS numbers pages from ${pbv}: set wms.pagingBase: auto (or ${pbv})`);
  }
  if (report.dateTimes.value === 'local') {
    report.configLines.push(
      'wms.dateTimes: local   # the WMS answers local time without a zone (or local-offset if it takes offsets); wms.timeZone: America/Sao_Paulo',
    );
    if (config.dateTimes === 'utc')
      report.problems.push('wms.dateTimes is utc but the WMS answers local DateTimes: set wms.dateTimes: local (and wms.timeZone)');
  } else if (report.dateTimes.value === 'utc') report.configLines.push('wms.dateTimes: utc');
  if (report.rateLimit.answered429 > 0) {
    report.configLines.push(
      `wms.requestsPerSecond: 5   # the WMS answered 429 ${report.rateLimit.answered429} time(s)${report.rateLimit.retryAfter ? ` (Retry-After ${report.rateLimit.retryAfter})` : ''}`,
    );
    if (config.requestsPerSecond === 0)
      report.problems.push(
        `rate limit: the WMS answered 429 to ${report.rateLimit.answered429} of ${report.rateLimit.requests} requests; set wms.requestsPerSecond`,
      );
  }
  if (report.cnpjFormat.value === 'masked') report.notes.push('CNPJs are masked: lookups and read-backs compare them by digits, nothing to set');
  if (report.ownersCodeerpMatches.value === 'codeERP')
    report.notes.push('Owners/codeerp matches codeERP only: wmsbridge resolves owners from the Owners list by the field the mapping names, nothing to set');
  if (report.pickingListTypeRequired.value === true)
    report.notes.push('PickingList type/separationType are required: wmsbridge sends 0 (Sales, Standard) unless mapped, nothing to set');
  if (report.duplicates.value === 'refuse') report.notes.push('a second create of a natural key is refused (409)');
  const knobs: Array<[string, unknown, unknown]> = [
    ['pagingBase', report.pagingBase.value, 1],
    ['cnpjFormat', report.cnpjFormat.value, 'digits'],
    ['ownersCodeerpMatches', report.ownersCodeerpMatches.value, 'code'],
    ['pickingListTypeRequired', report.pickingListTypeRequired.value, false],
    ['dateTimes', report.dateTimes.value, 'utc'],
    ['duplicates', report.duplicates.value, 'accept'],
  ];
  const diff = knobs.filter(([, v, d]) => v !== null && v !== d).map(([k, v]) => `${k}=${String(v)}`);
  report.dialect = diff.length === 0 ? 'default' : diff.length === knobs.length ? 'alt' : diff.join(',');
  return report;
}

/** Seconds until a JWT's exp, or null for an opaque token. */
function jwtTtlSeconds(token: string, nowMs: number): number | null {
  const parts = token.split('.');
  if (parts.length !== 3) return null;
  try {
    const payload = JSON.parse(Buffer.from(parts[1]!, 'base64url').toString('utf8')) as { exp?: unknown };
    return typeof payload.exp === 'number' ? Math.round(payload.exp - nowMs / 1000) : null;
  } catch {
    return null;
  }
}

/** The report as text for a terminal (English, for operators). */
export function formatDoctorReport(r: DoctorReport): string {
  const L: string[] = [];
  const knob = (label: string, k: Knob<unknown>): void => {
    L.push(`  ${label.padEnd(26)} ${k.value === null ? '?' : String(k.value)}  (${k.how})`);
  };
  L.push(`wmsbridge doctor: ${r.url}`);
  L.push(
    r.login.ok
      ? `  login                      ok in ${r.login.ms} ms; token lifetime ${r.login.tokenTtlSeconds === null ? 'not stated (opaque token)' : `${r.login.tokenTtlSeconds} s`}; clock skew ${r.login.clockSkewSeconds === null ? 'unknown (no Date header)' : `${r.login.clockSkewSeconds} s`}`
      : `  login                      FAILED: ${r.login.error ?? '?'}`,
  );
  if (r.login.ok) {
    knob('page base', r.pagingBase);
    knob('CNPJ format', r.cnpjFormat);
    knob('Owners/codeerp matches', r.ownersCodeerpMatches);
    knob('DateTimes', r.dateTimes);
    knob('PickingList type required', r.pickingListTypeRequired);
    knob('duplicates', r.duplicates);
    L.push(
      `  reference data             ${Object.entries(r.counts)
        .map(([k, v]) => `${k} ${String(v)}`)
        .join(', ')}`,
    );
    if (r.latencyMs) L.push(`  round trip                 median ${r.latencyMs.median} ms, max ${r.latencyMs.max} ms (${r.latencyMs.samples} reads)`);
    L.push(
      `  rate limit                 ${r.rateLimit.answered429 ? `429 answered ${r.rateLimit.answered429} time(s)${r.rateLimit.retryAfter ? `, Retry-After ${r.rateLimit.retryAfter}` : ''}` : 'none answered'} in ${r.rateLimit.requests} requests`,
    );
    L.push(`  as a sandbox dialect       ${r.dialect}   (wmsbridge sandbox --dialect ${r.dialect})`);
  }
  if (r.notes.length) L.push('', 'notes:', ...r.notes.map((n) => `  - ${n}`));
  if (r.configLines.length) L.push('', 'config lines to use:', ...r.configLines.map((c) => `  ${c}`));
  L.push('', r.problems.length ? `${r.problems.length} problem(s):\n${r.problems.map((p) => `  - ${p}`).join('\n')}` : 'ok: no problems found');
  return `${L.join('\n')}\n`;
}
