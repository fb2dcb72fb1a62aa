/**
 * The run report's data model: what a run did, file by file and resource by resource. Built by the
 * run command from the journal (the journal keeps the truth; the files are views of it) and rendered by
 * src/outbox/report.ts as HTML, CSV and JSON.
 */
import type { RunVerdict } from './verdict.js';

export type Outcome =
  | 'created'
  | 'updated'
  | 'unchanged'
  | 'already-existed'
  | 'deleted'
  | 'no-change'
  | 'rejected'
  | 'failed'
  | 'held'
  | 'in-doubt'
  | 'skipped'
  /** a row no mapping of its file selected (filter): read, not sent (issue 39) */
  | 'not-selected'
  /** a row a mapping's skip rule excluded, with the rule's reason: read, not sent */
  | 'excluded';

/** Every outcome in display order (good news first, then what needs attention). */
export const OUTCOMES = [
  'created',
  'updated',
  'unchanged',
  'already-existed',
  'deleted',
  'no-change',
  'skipped',
  'excluded',
  'not-selected',
  'rejected',
  'failed',
  'held',
  'in-doubt',
] as const satisfies readonly Outcome[];

/** Outcomes that need someone to look at the record (the "N records need attention" figure). */
export const ATTENTION_OUTCOMES = ['rejected', 'failed', 'held', 'in-doubt'] as const satisfies readonly Outcome[];

export type FileReportStatus = 'done' | 'error' | 'duplicate' | 'partial';

export interface FileSummary {
  channel: string;
  /** the file name as dropped */
  name: string;
  status: FileReportStatus;
  mapping: string | null;
  target: string | null;
  rows: number;
  outcomes: Partial<Record<Outcome, number>>;
  /** result CSV: relative to the outbox folder (or absolute) */
  resultFile?: string;
  /** rejects file: relative to the outbox folder (or absolute) */
  rejectsFile?: string;
  /** where the original went (archive or error folder) */
  archivedTo?: string;
  error?: string;
  durationMs?: number;
  /** records of the file an earlier run settled (a resumed file): not counted in `outcomes` (this run's) */
  earlier?: number;
  /** rows read and not sent (not selected by any mapping, excluded by a skip rule), by reason, with their lines */
  unsent?: UnsentRowsSummary[];
}

/** One group of rows a file did not send: what (not selected / excluded), why, how many, which lines. */
export interface UnsentRowsSummary {
  outcome: 'not-selected' | 'excluded';
  mapping?: string;
  reason?: string;
  count: number;
  /** "3, 7-9, 12" */
  lines: string;
}

export interface AttentionItem {
  file: string;
  line: number;
  target: string;
  key: string;
  outcome: Outcome;
  /** the English message (logs, machines, fallback) */
  reason: string;
  /** the reason as a stable code and parameters, rendered in the outbox locale */
  code?: string;
  params?: Record<string, string | number>;
  /** the source row as the ERP wrote it (cells of a delimited/fixed-width row, or the line's text) */
  original?: string[];
}

export interface RunSummary {
  runId: string;
  command: string;
  dryRun: boolean;
  /** ISO 8601 instants */
  startedAt: string;
  finishedAt: string;
  durationMs: number;
  exitCode: number;
  /** the run's outcome, decided once (verdict.ts): the exit code, the status, the first screen and the log read it */
  verdict?: RunVerdict;
  host: string;
  version: string;
  /** this run's WMS calls; meanLatencyMs = mean time from request written to answer read (absent: no answer) */
  wms: { url: string; sandbox: boolean; requests: number; retries: number; refreshes: number; failures: number; meanLatencyMs?: number };
  totals: Record<Outcome, number> & { files: number; records: number };
  files: FileSummary[];
  resources: Array<{ target: string; outcomes: Partial<Record<Outcome, number>> }>;
  /** ranked, most frequent first (the report sorts again to be safe) */
  errorReasons: Array<{
    reason: string;
    count: number;
    example?: { file: string; line: number };
    /** stable code and parameters of the first record of the group (rendered in the outbox locale) */
    code?: string;
    params?: Record<string, string | number>;
    outcome?: Outcome;
  }>;
  /** cumulative settled records over time; atMs is relative to startedAt */
  timeline: Array<{ atMs: number; settled: number }>;
  /** held / in-doubt / failed (and rejected) records, capped by the producer */
  attention: AttentionItem[];
  webhooks?: Array<{ kind: string; count: number; linked: number }>;
  /** records of this run or earlier ones that wait for a person (held, in doubt, failed) */
  openRecords?: number;
  /**
   * The WMS was unavailable during the run (filled by the run; issue 18): how many records wait for the next
   * run, since when, and the English cause. The report shows it as one line.
   */
  outage?: { waiting: number; since?: string; cause?: string; code?: string };
  /** inbox entries not taken this run (left where they are), with why */
  skipped?: Array<{ channel: string; name: string; reason: string; kind?: string }>;
  /**
   * The WMS was unavailable (no answer, timeouts, 5xx) during the run: `since` is the first failure (ISO),
   * `waitingRecords` the records not sent for it (pending, or held waiting for one of them), sent by the
   * next run; `waitingFiles` files not read yet because a WMS lookup got no answer. Exit code 75.
   */
  wmsUnavailable?: { since: string; waitingRecords: number; waitingFiles: number; lastError: string };
  /**
   * Records this instance sent for files other instances own (a shared journal: docs/SCALING.md, "Record batches").
   * They are counted in the owner's report and result file, not in this run's totals.
   */
  helped?: { records: number; files: HelpedFile[] };
}

/** A file another instance owns that this run sent records of (RunSummary.helped). */
export interface HelpedFile {
  name: string;
  channel: string;
  /** the instance that owns the file (claimed, mapped and finishes it) */
  owner: string;
  records: number;
}

/** A zero for every outcome: a starting point for producers that count. */
export function emptyTotals(): RunSummary['totals'] {
  return {
    created: 0,
    updated: 0,
    unchanged: 0,
    'already-existed': 0,
    deleted: 0,
    'no-change': 0,
    rejected: 0,
    failed: 0,
    held: 0,
    'in-doubt': 0,
    'not-selected': 0,
    excluded: 0,
    skipped: 0,
    files: 0,
    records: 0,
  };
}
