/**
 * The configuration model: one file (wmsbridge.config.yaml or .json), validated with zod. Every option
 * has a default that runs against the embedded sandbox, so an empty file (or none) works.
 * Secrets never live in the file: only the NAME of an environment variable or a file path holding them.
 */
import { z } from 'zod';
import { CsvFormatSchema } from '../shared/csv-format.js';
import { parseSchedule } from '../shared/schedule.js';

/** How long the journal keeps settled files (both stores). */
const RetainDays = z
  .number()
  .int()
  .min(0)
  .optional()
  .describe(
    '(default 90) settled files (done, error, duplicate) last updated longer ago than this are removed from the journal with their records and raw text, and so are webhook events received longer ago and already written to the outbox; 0 keeps everything',
  );

const Duration = z.number().int().nonnegative();
/** a period something waits between two polls or attempts: 0 would spin (refused here, not at run time) */
const Interval = z.number().int().min(1);

export const ReadinessSchema = z
  .discriminatedUnion('mode', [
    z.strictObject({
      mode: z.literal('stable').describe('ready when size and mtime stay unchanged across `checks` polls'),
      /** @default 3 */
      checks: z.number().int().min(1).default(3).describe('polls that must see the same size and mtime'),
      /** @default 2000 */
      intervalMs: Interval.default(2000).describe(
        'time between polls (the window is checks x intervalMs: longer than the longest pause of the ERP while writing)',
      ),
      /** @default 60000 */
      emptyFileGraceMs: Duration.default(60_000).describe('a 0-byte file waits this long, then goes to the error folder'),
    }),
    z.strictObject({
      mode: z.literal('marker').describe('ready when a marker file exists beside it (NAME.done) or a batch trigger appears'),
      /** @default ['.done'] */
      suffixes: z.array(z.string().min(1)).default(['.done']).describe('marker suffixes: PEDIDOS_0001.csv.done'),
      /** @default [] */
      batchTriggers: z.array(z.string().min(1)).default([]).describe('batch trigger file names (e.g. LOTE.OK): every file present when one appears is ready'),
      /** @default 1000 */
      intervalMs: Interval.default(1000).describe('how often the folder is listed while waiting for a marker'),
    }),
    z.strictObject({
      mode: z.literal('rename').describe('the ERP writes a temp name (*.tmp, *.part) and renames: temp names are ignored, one stability check'),
      /** @default 1000 */
      intervalMs: Interval.default(1000).describe('time between the listing and its one stability check'),
      /** @default 60000 */
      emptyFileGraceMs: Duration.default(60_000).describe('a 0-byte file waits this long, then goes to the error folder'),
    }),
  ])
  .describe('how wmsbridge decides a dropped file is completely written');

export const ChannelSchema = z.strictObject({
  name: z
    .string()
    .regex(/^[A-Za-z0-9_.-]+$/, 'letters, digits, _ . - only')
    .describe('channel name; mappings match on it'),
  /** @default '<inboxDir>/<name>' */
  dir: z.string().optional().describe('inbox folder of the channel (default: <inboxDir>/<name>)'),
  readiness: ReadinessSchema.default({ mode: 'stable', checks: 3, intervalMs: 2000, emptyFileGraceMs: 60_000 }),
  /** @default ['*'] */
  patterns: z.array(z.string()).optional().describe('file name globs to take (case-insensitive); default every file'),
  /** @default ['*.tmp','*.part','~*','.*'] */
  ignore: z.array(z.string()).optional().describe('file name globs never taken'),
  /** @default all mappings whose match.channel is this channel */
  mappings: z.array(z.string()).optional().describe('mapping names bound to this channel (default: every mapping whose match.channel is the channel name)'),
  /** @default global sending.concurrency */
  concurrency: z.number().int().min(1).max(256).optional().describe('max concurrent sends for this channel'),
  inDoubt: z
    .strictObject({
      masterData: z.enum(['resend', 'hold']).default('resend').describe('units, categories, families, products, stock operations: send again (at-least-once)'),
      documents: z.enum(['resend', 'hold']).default('hold').describe('purchase orders, picking lists, attachments: hold for a person (`wmsbridge resolve`)'),
    })
    .default({ masterData: 'resend', documents: 'hold' })
    .describe('what to do with a send whose outcome is unknown and cannot be read back'),
  /** @default 500 */
  stockSyncChunkSize: z.number().int().min(1).max(100_000).default(500).describe('products per stock sync chunk'),
  /** @default 'warning' */
  noChange: z
    .enum(['warning', 'attention'])
    .default('warning')
    .describe(
      "a stock lock/unlock the WMS applied to nothing (stocksLocked 0: already in that status, or nothing matched) is outcome no-change: 'warning' lists it with the reason; 'attention' also makes the run exit 1 (for ERPs where a lot typo must stop the night)",
    ),
  /** @default by target: 'process' for stock locks, unlocks and syncs, 'skip' for everything else */
  duplicates: z
    .enum(['skip', 'process'])
    .optional()
    .describe(
      "a file with the same content as one already delivered: 'skip' (archived, said in the summary, exit 0) or 'process' (sent again: operations files). Default: process for stock lock/unlock/sync files, skip for master data and documents. " +
        'Duplicates are detected by content across every channel and file name: the same file dropped into two channels is a duplicate in the second. ' +
        'To send one table to several targets, drop it once: every mapping whose pattern matches it applies (docs/MAPPINGS.md, "One file, several mappings")',
    ),
});
export type ChannelConfig = z.infer<typeof ChannelSchema>;

/** CSV format of outbox files: the outbox's own schema (src/outbox/csv.ts). */
export const CsvFormatConfig = CsvFormatSchema;

export const WmsConfigSchema = z.strictObject({
  /** @default '' (embedded sandbox) */
  url: z
    .string()
    .default('')
    .describe('base URL of the WMS, or `sandbox` for the embedded sandbox; empty: every command but demo and sandbox stops (exit 2) asking for one'),
  accessKeyId: z.string().optional().describe('access key id (not a secret); or env WMS_ACCESS_KEY_ID'),
  /** @default 'WMS_SECRET_KEY' */
  secretKeyEnv: z.string().default('WMS_SECRET_KEY').describe('NAME of the environment variable holding the secret key'),
  secretKeyFile: z.string().optional().describe('file holding the secret key (e.g. a systemd credential)'),
  userAgent: z.string().optional().describe('User-Agent sent on every call (mandatory for the WMS firewall)'),
  /** @default 16 */
  connections: z.number().int().min(1).max(512).default(16).describe('HTTP connections / requests in flight'),
  /** @default 0 (unlimited) */
  requestsPerSecond: z.number().nonnegative().default(0).describe('client-side rate limit; 0 = unlimited'),
  /** @default 30000 */
  timeoutMs: Interval.default(30_000).describe('per attempt: headers and body'),
  /** @default 5 */
  retries: z
    .number()
    .int()
    .min(0)
    .max(20)
    .default(5)
    .describe('retries of a failed call (network, timeout, 429, 5xx; never a validation error; a POST only when it provably did not take effect)'),
  /** @default { failures: 5, cooldownMs: 30000 } */
  circuitBreaker: z
    .strictObject({
      failures: z
        .number()
        .int()
        .min(1)
        .max(1000)
        .default(5)
        .describe('consecutive connection failures (refused, reset, timeout) after which no request is sent'),
      cooldownMs: Interval.default(30_000).describe('then one probe request after this long: an answer closes the circuit'),
    })
    .default({ failures: 5, cooldownMs: 30_000 })
    .describe("stop sending while the WMS does not answer, instead of burning every record's retries (what was not sent waits, exit 75)"),
  /** @default 100 */
  pageSize: z.number().int().min(1).max(10_000).default(100).describe('PagingLimit asked of list endpoints'),
  /** @default 'auto' */
  pagingBase: z
    .union([z.literal('auto'), z.literal(0), z.literal(1)])
    .default('auto')
    .describe(
      "PagingIndex of the first page; auto: found from the WMS's answer to PagingIndex 0 (a read short of the WMS's count is an error, never a short result)",
    ),
  /** @default 'utc' */
  dateTimes: z
    .enum(['utc', 'local-offset', 'local'])
    .default('utc')
    .describe('DateTimes sent: utc (…Z), local-offset (wall time of wms.timeZone with its offset, …-03:00) or local (wall time, no offset)'),
  /** @default 'America/Sao_Paulo' */
  timeZone: z.string().default('America/Sao_Paulo').describe('IANA time zone of the WMS, for dateTimes local / local-offset'),
  tls: z
    .strictObject({
      rejectUnauthorized: z.boolean().default(true).describe('verify the WMS certificate (keep true)'),
      caFile: z.string().optional().describe('PEM file of a private CA'),
    })
    .default({ rejectUnauthorized: true }),
});

export const SandboxConfigSchema = z.strictObject({
  seed: z.union([z.number(), z.string()]).default(1).describe('seed of the sandbox data and ids'),
  latencyMs: Duration.default(0).describe('latency added to every sandbox request'),
  failRate: z.number().min(0).max(1).default(0).describe('fraction of requests answered HTTP 500'),
  rate429: z.number().min(0).max(1).default(0).describe('fraction of requests answered 429 with Retry-After'),
  resetRate: z.number().min(0).max(1).default(0).describe('fraction of connections dropped without an answer'),
  tokenTtlSeconds: z.number().int().min(1).default(900).describe('lifetime of the sandbox access tokens'),
  stateFile: z.string().optional().describe('keep the sandbox state across runs (default: under stateDir)'),
  dialect: z
    .union([
      z.string(),
      z.strictObject({
        preset: z.string().optional(),
        pagingBase: z.union([z.literal(0), z.literal(1)]).optional(),
        cnpjFormat: z.enum(['digits', 'masked']).optional(),
        ownersCodeerpMatches: z.enum(['code', 'codeERP']).optional(),
        pickingListTypeRequired: z.boolean().optional(),
        dateTimes: z.enum(['utc', 'local']).optional(),
        duplicates: z.enum(['accept', 'refuse']).optional(),
      }),
    ])
    .optional()
    .describe(
      "the sandbox's choices where the interface leaves them open: a preset (default, alt), 'alt,duplicates=accept' or an object (docs/SANDBOX.md Dialects)",
    ),
});

/**
 * A schedule (src/pull/schedule.ts): a friendly form or a 5-field cron expression. Checked when the config
 * loads, so a bad one is a config error naming the setting (exit 2), not a surprise in the night.
 */
const ScheduleString = (what: string) =>
  z
    .string()
    .min(1)
    .superRefine((s, ctx) => {
      try {
        parseSchedule(s);
      } catch (err) {
        ctx.addIssue({ code: 'custom', message: err instanceof Error ? err.message : String(err) });
      }
    })
    .describe(what);

export const PullConfigSchema = z.strictObject({
  name: z.string().min(1).describe('unique name; its last run is remembered in the journal'),
  what: z.string().min(1).describe('stock, stock-search, inventory, inventory-finished, company, ...'),
  schedule: ScheduleString(
    "'every 30m', 'every 2h', 'daily 02:00', 'weekdays 06:30', or a 5-field cron expression like '30 1 * * *' (zone: the one named after it, else the machine's)",
  ),
  format: z.enum(['csv', 'jsonl', 'json']).default('csv').describe('file format of the export'),
  csv: CsvFormatConfig.optional(),
  doneFile: z.boolean().default(false).describe('write <file>.done after the export'),
  filters: z.record(z.string(), z.string()).optional().describe('stock-search filters (warehouseId, ownerId, productId, lotNumber, ...)'),
});

export const WebhooksConfigSchema = z.strictObject({
  enabled: z.boolean().default(false).describe('serve the webhook receiver inside `watch`'),
  host: z.string().default('127.0.0.1').describe('interface to bind; another than loopback needs secretEnv (or insecure)'),
  insecure: z.boolean().default(false).describe('accept unauthenticated POSTs on a non-loopback host (no secret): only behind a proxy that authenticates'),
  port: z.number().int().min(0).max(65535).default(8787).describe('0 picks a free port'),
  basePath: z.string().default('/webhooks').describe('webhooks arrive at <basePath>/<kind>'),
  secretEnv: z.string().optional().describe('NAME of the environment variable holding the shared secret'),
  tls: z.strictObject({ certFile: z.string(), keyFile: z.string() }).optional().describe('serve HTTPS with these PEM files'),
  maxBodyBytes: z
    .number()
    .int()
    .min(1024)
    .default(1024 * 1024)
    .describe('larger bodies are answered 413'),
});

export const ConfigSchema = z.strictObject({
  /** @default './inbox' */
  inboxDir: z.string().default('inbox').describe('inbox folder: one sub-folder per channel'),
  /** @default './outbox' */
  outboxDir: z.string().default('outbox').describe('outbox folder: results, rejects, reports, exports, webhooks'),
  /** @default './mappings' */
  mappingsDir: z.string().default('mappings').describe('folder of the mapping files (*.yaml, *.yml, *.json)'),
  /** @default './state' */
  stateDir: z.string().default('state').describe('journal.db, the lock, the embedded sandbox state'),
  journal: z
    .discriminatedUnion('kind', [
      z.strictObject({
        kind: z.literal('sqlite').describe('embedded SQLite journal (one instance per state folder)'),
        path: z.string().optional().describe('default <stateDir>/journal.db'),
        synchronous: z
          .enum(['FULL', 'NORMAL'])
          .default('FULL')
          .describe('FULL: every commit survives a power loss; NORMAL: faster, survives a crash of wmsbridge but not of the machine'),
        retainDays: RetainDays,
      }),
      z.strictObject({
        kind: z.literal('postgres').describe('PostgreSQL journal shared by several instances (docs/SCALING.md)'),
        url: z.string().describe('postgres://user@host:5432/db (no password here)'),
        passwordEnv: z.string().optional().describe('NAME of the environment variable holding the password'),
        schema: z
          .string()
          .regex(/^[a-z_][a-z0-9_]*$/, 'lower-case letters, digits and _')
          .default('wmsbridge')
          .describe('schema holding the tables (created when missing)'),
        leaseTtlMs: z
          .number()
          .int()
          .min(1000)
          .default(30_000)
          .describe('a file claimed by an instance that stops renewing for this long is resumed by another'),
        dependencyWaitMs: z.number().int().min(0).default(120_000).describe('how long a record waits for a dependency another instance is still sending'),
        retainDays: RetainDays,
      }),
    ])
    .default({ kind: 'sqlite', synchronous: 'FULL' })
    .describe('where the durable state lives'),
  /** @default auto: one channel per sub-folder of inboxDir */
  channels: z.array(ChannelSchema).optional().describe('inbox channels; default: every sub-folder of inboxDir is a channel with stable readiness'),
  wms: WmsConfigSchema.default(WmsConfigSchema.parse({})).describe('the WMS to talk to'),
  sandbox: SandboxConfigSchema.default(SandboxConfigSchema.parse({})).describe(
    'the embedded sandbox, used when wms.url is `sandbox` (or with --sandbox, and by demo)',
  ),
  sending: z
    .strictObject({
      /** @default 16 */
      concurrency: z
        .number()
        .int()
        .min(1)
        .max(512)
        .default(16)
        .describe('WMS requests in flight at once (p-limit); a quarter more records (at least 2) are prepared meanwhile'),
      /** @default 1000 */
      batchSize: z
        .number()
        .int()
        .min(1)
        .max(100_000)
        .default(1000)
        .describe('records per journal insert while mapping, and queued in memory at most while sending (read in pages of up to 200)'),
      /** @default 33554432 */
      streamFrom: z
        .number()
        .int()
        .min(0)
        .default(32 * 1024 * 1024)
        .describe(
          'files of at least this many bytes are sent while they are still being mapped, batch by batch (0: every file); smaller files are mapped whole, and checked unchanged, before the first record leaves. Stock synchronisations are never streamed (docs/ARCHITECTURE.md, "Streaming")',
        ),
    })
    .default({ concurrency: 16, batchSize: 1000, streamFrom: 32 * 1024 * 1024 })
    .describe('how records are sent'),
  outbox: z
    .strictObject({
      csv: CsvFormatConfig.default(CsvFormatConfig.parse({})).describe('format of every outbox CSV (results, rejects of CSV inputs keep their own format)'),
      doneFiles: z.boolean().default(false).describe('write <file>.done beside each outbox file'),
      fileMode: z
        .string()
        .regex(/^0?[0-7]{3}$/, 'an octal mode like 0640')
        .default('0640')
        .describe('mode of new outbox files (octal; the umask still applies): 0640 owner and group read, 0664 for a share whose group imports and deletes'),
      locale: z
        .enum(['pt-BR', 'en'])
        .default('pt-BR')
        .describe(
          'language of what people read in the outbox: report, CSV/XLSX headers, outcome names, reasons, the summary printed by run (logs stay English)',
        ),
      timeZone: z
        .string()
        .refine((tz) => {
          try {
            new Intl.DateTimeFormat('en', { timeZone: tz });
            return true;
          } catch {
            return false;
          }
        }, 'not an IANA time zone (e.g. America/Sao_Paulo)')
        .default('America/Sao_Paulo')
        .describe('IANA time zone of the dates and times people read in the outbox (report, XLSX; CSVs too unless csv.timeZone says otherwise)'),
      reconcileStock: z
        .boolean()
        .default(false)
        .describe(
          'after each stock file is delivered (run and watch), compare it with the WMS stock: outbox/reconciliation/<date>/stock-<file>.{html,csv,xlsx} (a difference is logged, the exit code does not change)',
        ),
      reconcileSchedule: z
        .strictObject({
          schedule: ScheduleString("'every 2h', 'daily 06:00', 'weekdays 06:30', or a 5-field cron expression like '0 6 * * 1-5' (zone: outbox.timeZone)"),
          dir: z.string().min(1).describe('folder searched (with its sub-folders) for the ERP stock file, e.g. inbox/estoque/.wmsbridge/archive'),
          files: z.string().default('*').describe('file name glob; the newest matching file is reconciled'),
          mapping: z.string().optional().describe('mapping name (default: the stock mapping matching the file)'),
        })
        .optional()
        .describe('reconcile the newest ERP stock file with the WMS on a schedule (watch, run --pulls)'),
      retainDays: z
        .number()
        .int()
        .min(0)
        .optional()
        .describe(
          "(default 90) results and run reports in the outbox, and the day folders of each channel's archive, older than this are deleted; rejects and the error folders are kept (a person must act on them); 0 keeps everything",
        ),
    })
    .default({ csv: CsvFormatConfig.parse({}), doneFiles: false, fileMode: '0640', locale: 'pt-BR', timeZone: 'America/Sao_Paulo', reconcileStock: false })
    .describe('outbox files'),
  watch: z
    .strictObject({
      usePolling: z.boolean().default(false).describe('poll instead of OS events: required on SMB/NFS/CIFS shares'),
      pollIntervalMs: Interval.default(2000).describe('polling interval when usePolling'),
      rescanIntervalMs: Interval.default(60_000).describe('full listing of every channel, whatever the events say'),
      batchDelayMs: Duration.default(2000).describe('wait this long after a file is ready to collect files dropped together'),
      metricsPort: z.number().int().min(0).max(65535).optional().describe('serve /healthz and /metrics on 127.0.0.1:PORT'),
      metricsHost: z.string().default('127.0.0.1').describe('interface for /healthz and /metrics'),
    })
    .default({ usePolling: false, pollIntervalMs: 2000, rescanIntervalMs: 60_000, batchDelayMs: 2000, metricsHost: '127.0.0.1' })
    .describe('the daemon (`wmsbridge watch`)'),
  pulls: z.array(PullConfigSchema).default([]).describe('scheduled exports from the WMS (run by `watch` and `run --pulls`)'),
  webhooks: WebhooksConfigSchema.default(WebhooksConfigSchema.parse({})).describe('the webhook receiver'),
  log: z
    .strictObject({ level: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info') })
    .default({ level: 'info' })
    .describe('logging (JSON lines on stderr; readable on a terminal)'),
});

export type Config = z.infer<typeof ConfigSchema>;
