/**
 * The configuration model: one file (wmsbridge.config.yaml or .json), validated with zod. Every option
 * has a default that runs against the embedded sandbox, so an empty file (or none) works.
 * Secrets never live in the file: only the NAME of an environment variable or a file path holding them.
 */
import { z } from 'zod';
import { CsvFormatSchema } from '../outbox/csv.js';

const Duration = z.number().int().nonnegative();

export const ReadinessSchema = z
  .discriminatedUnion('mode', [
    z.strictObject({
      mode: z.literal('stable').describe('ready when size and mtime stay unchanged across `checks` polls'),
      /** @default 3 */
      checks: z.number().int().min(1).default(3).describe('polls that must see the same size and mtime'),
      /** @default 1000 */
      intervalMs: Duration.default(1000).describe('time between polls'),
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
      intervalMs: Duration.default(1000),
    }),
    z.strictObject({
      mode: z.literal('rename').describe('the ERP writes a temp name (*.tmp, *.part) and renames: temp names are ignored, one stability check'),
      /** @default 1000 */
      intervalMs: Duration.default(1000),
      /** @default 60000 */
      emptyFileGraceMs: Duration.default(60_000),
    }),
  ])
  .describe('how wmsbridge decides a dropped file is completely written');

export const ChannelSchema = z.strictObject({
  name: z.string().regex(/^[A-Za-z0-9_.-]+$/, 'letters, digits, _ . - only').describe('channel name; mappings match on it'),
  /** @default '<inboxDir>/<name>' */
  dir: z.string().optional().describe('inbox folder of the channel (default: <inboxDir>/<name>)'),
  readiness: ReadinessSchema.default({ mode: 'stable', checks: 3, intervalMs: 1000, emptyFileGraceMs: 60_000 }),
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
      masterData: z.enum(['resend', 'hold']).default('resend'),
      documents: z.enum(['resend', 'hold']).default('hold'),
    })
    .default({ masterData: 'resend', documents: 'hold' })
    .describe('what to do with a send whose outcome is unknown and cannot be read back'),
  /** @default 500 */
  stockSyncChunkSize: z.number().int().min(1).max(100_000).default(500).describe('products per stock sync chunk'),
});
export type ChannelConfig = z.infer<typeof ChannelSchema>;

/** CSV format of outbox files: the outbox's own schema (src/outbox/csv.ts). */
export const CsvFormatConfig = CsvFormatSchema;

export const WmsConfigSchema = z.strictObject({
  /** @default '' (embedded sandbox) */
  url: z.string().default('').describe('base URL of the WMS; empty runs against the embedded sandbox'),
  accessKeyId: z.string().optional().describe('access key id (not a secret); or env WMS_ACCESS_KEY_ID'),
  /** @default 'WMS_SECRET_KEY' */
  secretKeyEnv: z.string().default('WMS_SECRET_KEY').describe('NAME of the environment variable holding the secret key'),
  secretKeyFile: z.string().optional().describe('file holding the secret key (e.g. a systemd credential)'),
  userAgent: z.string().optional().describe('User-Agent sent on every call (mandatory for the WMS firewall)'),
  /** @default 16 */
  connections: z.number().int().min(1).max(512).default(16).describe('HTTP connections / requests in flight'),
  /** @default 0 (unlimited) */
  requestsPerSecond: z.number().nonnegative().default(0),
  /** @default 30000 */
  timeoutMs: Duration.default(30_000),
  /** @default 5 */
  retries: z.number().int().min(0).max(20).default(5),
  /** @default 100 */
  pageSize: z.number().int().min(1).max(10_000).default(100),
  /** @default 1 */
  pagingBase: z.union([z.literal(0), z.literal(1)]).default(1),
  tls: z
    .strictObject({ rejectUnauthorized: z.boolean().default(true), caFile: z.string().optional() })
    .default({ rejectUnauthorized: true }),
});

export const SandboxConfigSchema = z.strictObject({
  seed: z.union([z.number(), z.string()]).default(1),
  latencyMs: Duration.default(0),
  failRate: z.number().min(0).max(1).default(0),
  rate429: z.number().min(0).max(1).default(0),
  resetRate: z.number().min(0).max(1).default(0),
  tokenTtlSeconds: z.number().int().min(1).default(900),
  stateFile: z.string().optional().describe('keep the sandbox state across runs (default: under stateDir)'),
});

export const PullConfigSchema = z.strictObject({
  name: z.string().min(1),
  what: z.string().min(1).describe('stock, stock-search, inventory, inventory-finished, company, ...'),
  schedule: z.string().min(1).describe("'every 30m', 'every 2h', 'daily 02:00', 'weekdays 06:30'"),
  format: z.enum(['csv', 'jsonl', 'json']).default('csv'),
  csv: CsvFormatConfig.optional(),
  doneFile: z.boolean().default(false),
  filters: z.record(z.string(), z.string()).optional(),
});

export const WebhooksConfigSchema = z.strictObject({
  enabled: z.boolean().default(false),
  host: z.string().default('127.0.0.1'),
  port: z.number().int().min(0).max(65535).default(8787),
  basePath: z.string().default('/webhooks'),
  secretEnv: z.string().optional().describe('NAME of the environment variable holding the shared secret'),
  tls: z.strictObject({ certFile: z.string(), keyFile: z.string() }).optional(),
  maxBodyBytes: z.number().int().min(1024).default(1024 * 1024),
});

export const ConfigSchema = z.strictObject({
  /** @default './inbox' */
  inboxDir: z.string().default('inbox'),
  /** @default './outbox' */
  outboxDir: z.string().default('outbox'),
  /** @default './mappings' */
  mappingsDir: z.string().default('mappings'),
  /** @default './state' */
  stateDir: z.string().default('state'),
  journal: z
    .discriminatedUnion('kind', [
      z.strictObject({ kind: z.literal('sqlite'), path: z.string().optional() }),
      z.strictObject({ kind: z.literal('postgres'), url: z.string(), passwordEnv: z.string().optional() }),
    ])
    .default({ kind: 'sqlite' }),
  /** @default auto: one channel per sub-folder of inboxDir */
  channels: z.array(ChannelSchema).optional().describe('inbox channels; default: every sub-folder of inboxDir is a channel with stable readiness'),
  wms: WmsConfigSchema.default(WmsConfigSchema.parse({})),
  sandbox: SandboxConfigSchema.default(SandboxConfigSchema.parse({})),
  sending: z
    .strictObject({
      /** @default 16 */
      concurrency: z.number().int().min(1).max(512).default(16).describe('records sent concurrently (p-limit)'),
      /** @default 1000 */
      batchSize: z.number().int().min(1).max(100_000).default(1000).describe('records read from the journal per batch'),
    })
    .default({ concurrency: 16, batchSize: 1000 }),
  outbox: z
    .strictObject({ csv: CsvFormatConfig.default(CsvFormatConfig.parse({})), doneFiles: z.boolean().default(false) })
    .default({ csv: CsvFormatConfig.parse({}), doneFiles: false }),
  watch: z
    .strictObject({
      usePolling: z.boolean().default(false).describe('poll instead of OS events: required on SMB/NFS/CIFS shares'),
      pollIntervalMs: Duration.default(2000),
      rescanIntervalMs: Duration.default(60_000),
      batchDelayMs: Duration.default(2000).describe('wait this long after a file is ready to collect files dropped together'),
      metricsPort: z.number().int().min(0).max(65535).optional().describe('serve /healthz and /metrics on 127.0.0.1:PORT'),
      metricsHost: z.string().default('127.0.0.1'),
    })
    .default({ usePolling: false, pollIntervalMs: 2000, rescanIntervalMs: 60_000, batchDelayMs: 2000, metricsHost: '127.0.0.1' }),
  pulls: z.array(PullConfigSchema).default([]),
  webhooks: WebhooksConfigSchema.default(WebhooksConfigSchema.parse({})),
  log: z
    .strictObject({ level: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info') })
    .default({ level: 'info' }),
});

export type ConfigInput = z.input<typeof ConfigSchema>;
export type Config = z.infer<typeof ConfigSchema>;
