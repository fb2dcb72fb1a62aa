/**
 * A run's outcome, decided once (issue 42): the exit code, the log's summary line, the report's status badge and
 * first screen and the workbook's summary all read the RunVerdict the run stores in its summary, so no surface
 * can say "all delivered" where another says "interrupted, 16 not sent yet".
 *
 * The kinds, most telling first: `config` (credentials refused: exit 2), `interrupted` (SIGINT/SIGTERM: 130/143;
 * what was not sent stays pending and goes with the next run), `outage` (the WMS was unavailable and work waits:
 * 75), `attention` (data or a file needs a person: 1), `delivered` (0), `nothing` (0: no file, no record).
 */

export type VerdictKind = 'config' | 'interrupted' | 'outage' | 'attention' | 'delivered' | 'nothing';

export interface RunVerdict {
  kind: VerdictKind;
  exitCode: number;
  /** the signal that stopped the run (interrupted) */
  signal?: string;
  /** records of the journal not sent yet (pending): they go with the next run (interrupted, outage) */
  notSent?: number;
  /** files taken but not read to their end (claimed): the next run reads them (interrupted) */
  unreadFiles?: number;
}

/** exit codes of a run stopped by a signal, by the signal's name (the abort reason) */
export const INTERRUPT_EXIT_CODES: Record<string, number> = { SIGINT: 130, SIGTERM: 143 };

/** What decides a run's outcome (see runVerdict). */
export interface ExitFacts {
  /** records of this run that need attention (rejected, failed, held, in doubt) */
  attention: number;
  /** records left for a person by this run or an earlier one (held, in doubt, failed; not those waiting for the WMS) */
  open: number;
  /** inbox entries that may be data but were refused (symlink, hard link, FIFO, a name not UTF-8) */
  refusedData: number;
  /** files in error, and problems found (a mapping that did not load, a file that could not be finished) */
  fileErrors: number;
  problems: number;
  /** a channel with noChange: attention got a no-change outcome */
  noChangeAttention: boolean;
  /** the WMS was unavailable and work is waiting for the next run */
  outage: boolean;
  /** the credentials were refused */
  fatal: boolean;
  /** configuration problems found before the run (a mapping that did not load: its files stay in the inbox) */
  configProblems?: number;
  /** the signal that stopped the run (SIGINT, SIGTERM), if any */
  interruptedBy?: string | undefined;
  /** records not sent yet when the run ended (pending in the journal) */
  notSent?: number;
  /** files left claimed, not read to their end */
  unreadFiles?: number;
  /** the run settled or found nothing: no file, no record */
  empty?: boolean;
}

/**
 * The operations contract: 0 delivered; 1 data needs attention; 2 credentials refused, or a mapping that did not
 * load; 75 the WMS was
 * unavailable and work waits for the next run (says more than 1 for a run that could not finish); 130/143
 * interrupted by SIGINT/SIGTERM.
 */
export function runVerdict(f: ExitFacts): RunVerdict {
  const counts = { ...(f.notSent !== undefined ? { notSent: f.notSent } : {}), ...(f.unreadFiles ? { unreadFiles: f.unreadFiles } : {}) };
  if (f.fatal) return { kind: 'config', exitCode: 2 };
  // a stop by a signal; an abort without a signal's name (a help session that yields to a batch) is not an interruption
  const interrupted = f.interruptedBy ? INTERRUPT_EXIT_CODES[f.interruptedBy] : undefined;
  if (interrupted) return { kind: 'interrupted', exitCode: interrupted, signal: f.interruptedBy!, ...counts };
  if (f.outage) return { kind: 'outage', exitCode: 75, ...counts };
  if ((f.configProblems ?? 0) > 0) return { kind: 'config', exitCode: 2 };
  if (f.attention > 0 || f.open > 0 || f.refusedData > 0 || f.fileErrors > 0 || f.problems > 0 || f.noChangeAttention) return { kind: 'attention', exitCode: 1 };
  return { kind: f.empty ? 'nothing' : 'delivered', exitCode: 0 };
}

export function exitCodeOf(f: ExitFacts): number {
  return runVerdict(f).exitCode;
}

/** The verdict after the run's exit code was raised (a report that could not be written: 1; a mapping that did not load: 2). */
export function withExitCode(v: RunVerdict, exitCode: number): RunVerdict {
  if (exitCode === v.exitCode || v.kind === 'interrupted' || v.kind === 'config' || v.kind === 'outage') return v;
  return { kind: exitCode === 2 ? 'config' : 'attention', exitCode };
}
