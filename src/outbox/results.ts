/**
 * The per-file result CSV: one line per record (or rejected row) of a source file, in a stable column
 * order that ERP import jobs and analysts can rely on:
 *   line;line_end;target;key;outcome;wms_id;error;mapping;reason
 * (`error` the English message, for machines and logs; `reason` the same in the outbox's language, naming the
 * source column: what a person reads)
 * Written through createCsvWriter, so it appears atomically on close().
 */
import type { AtomicWriteDeps, AtomicWriteOptions } from './atomic.js';
import { createCsvWriter, type CsvFormatOptions } from './csv.js';
import type { Outcome } from './types.js';

export const RESULT_COLUMNS = ['line', 'line_end', 'target', 'key', 'outcome', 'wms_id', 'error', 'mapping', 'reason'] as const;

export interface ResultEntry {
  /** first source line (1-based) */
  line: number;
  /** last source line, for documents made of several rows */
  lineEnd?: number;
  target: string;
  key: string;
  outcome: Outcome;
  wmsId?: string | null;
  error?: string | null;
  mapping: string;
  /** the reason in the outbox's language (I18n.reason, with the value and the WMS field) */
  reason?: string | null;
}

export interface ResultWriter {
  /** false when the caller should `await drain()` before writing more */
  write(r: ResultEntry): boolean;
  drain(): Promise<void>;
  close(): Promise<{ rows: number; replacedChars: number }>;
  abort(): Promise<void>;
}

/** A result CSV at `path` in the given CSV format (defaults: the Excel pt-BR defaults of csv.ts). */
export function createResultWriter(
  path: string,
  format: CsvFormatOptions = {},
  options: AtomicWriteOptions = {},
  deps: AtomicWriteDeps = {},
): ResultWriter {
  const csv = createCsvWriter(path, { ...options, columns: RESULT_COLUMNS, format }, deps);
  return {
    write(r) {
      return csv.write({
        line: r.line,
        // an empty line_end means a single-line record
        line_end: r.lineEnd !== undefined && r.lineEnd !== r.line ? r.lineEnd : null,
        target: r.target,
        key: r.key,
        outcome: r.outcome,
        wms_id: r.wmsId ?? null,
        error: r.error ?? null,
        mapping: r.mapping,
        reason: r.reason ?? null,
      });
    },
    drain: () => csv.drain(),
    close: () => csv.close(),
    abort: () => csv.abort(),
  };
}
