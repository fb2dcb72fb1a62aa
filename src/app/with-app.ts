/**
 * The lock + context lifecycle around a command body, and what every command's body writes to: the composition
 * root's side of cli/common.ts (cli/ parses arguments and calls app/, app/ builds and closes the stages).
 */
import { envLogger, isSharedJournal, type ResolvedConfig } from '../config/load.js';
import { ConfigError } from '../shared/errors.js';
import type { Logger } from '../shared/logger.js';
import { acquireStateLock } from '../journal/state-lock.js';
import { loadMappingsDir, type CompiledMapping } from '../map/index.js';
import { createAppContext, type AppContext, type ContextOptions } from './context.js';

/** Where a command writes what a person reads: stdout for its output, stderr for notices and problems. */
export interface CommandIo {
  stdout: NodeJS.WritableStream;
  stderr: NodeJS.WritableStream;
}

export type { AppContext, CompiledMapping };
/** the journal's rows as commands print them (`wmsbridge status`) */
export type { FileRow, RecordRow, RecordStatus } from '../journal/types.js';

/** Loads every mapping; any mapping error is fatal (exit 2) and names file + path + problem. */
export async function loadMappingsOrThrow(config: ResolvedConfig): Promise<CompiledMapping[]> {
  const { mappings, errors } = await loadMappingsDir(config.mappingsDir);
  if (errors.length > 0) throw new ConfigError(`${errors.length} mapping file(s) are invalid:\n${errors.map((e) => `  ${e.message}`).join('\n')}`);
  return mappings;
}

/**
 * Runs `body` holding the state-folder lock and an app context, and releases both however it ends.
 */
export async function withApp<T>(
  config: ResolvedConfig,
  command: string,
  body: (ctx: AppContext, logger: Logger) => Promise<T>,
  options: ContextOptions & { lock?: boolean } = {},
): Promise<T> {
  const logger = options.logger ?? envLogger({ level: config.log.level });
  // the state lock keeps two processes off one embedded journal; a shared journal (PostgreSQL) is made
  // for several instances, which coordinate through leases in it instead
  const lock = options.lock === false || isSharedJournal(config) ? null : await acquireStateLock(config.stateDir, { command });
  try {
    const ctx = await createAppContext(config, { ...options, logger });
    try {
      return await body(ctx, logger);
    } finally {
      await ctx.close();
    }
  } finally {
    await lock?.release();
  }
}
