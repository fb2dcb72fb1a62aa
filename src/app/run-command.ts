/**
 * `wmsbridge run`'s steps before the inbox is touched: the mappings (a mapping that cannot load is its own
 * problem, the others run) and one authorization against the WMS. cli/run.ts parses the arguments, handles the
 * signals and calls app/run.ts runOnce.
 */
import type { ResolvedConfig } from '../config/load.js';
import { loadMappingsDir, type CompiledMapping } from '../map/index.js';
import { ConfigError } from '../shared/errors.js';
import type { Logger } from '../shared/logger.js';
import { isWmsError, WmsErrorCode } from '../wms/errors.js';
import { isWmsUnavailable } from '../push/decide.js';
import type { AppContext } from './context.js';

/**
 * The mappings of a run. A mapping that cannot load is its own error (exit 2 at the end, in `problems`); the others
 * run, and the files only it would claim stay in the inbox. None loads: a ConfigError.
 */
export async function loadRunMappings(config: ResolvedConfig): Promise<{ mappings: CompiledMapping[]; problems: string[] }> {
  const { mappings, errors } = await loadMappingsDir(config.mappingsDir);
  if (errors.length > 0 && mappings.length === 0) {
    throw new ConfigError(`${errors.length} mapping file(s) are invalid:\n${errors.map((e) => `  ${e.message}`).join('\n')}`);
  }
  return { mappings, problems: errors.map((e) => `mapping not loaded, its files stay in the inbox: ${e.message}`) };
}

/**
 * Authorizes once before the inbox is touched. Returns why the credentials were refused (exit 2), or
 * null: authorized, or the WMS did not answer (an outage: the run goes on, sends nothing and exits 75).
 */
export async function refusedCredentials(ctx: AppContext, logger: Logger): Promise<string | null> {
  try {
    await ctx.client.authorize();
    return null;
  } catch (err) {
    if (isWmsError(err) && (err.code === WmsErrorCode.AUTH || !isWmsUnavailable(err))) {
      if (err.code !== WmsErrorCode.AUTH) return `the WMS at ${ctx.wmsUrl} cannot be used: ${err.message}; nothing was claimed`;
      return `the WMS at ${ctx.wmsUrl} refused the credentials (${err.message}); nothing was claimed: fix wms.accessKeyId / $WMS_SECRET_KEY and run again`;
    }
    if (isWmsUnavailable(err)) {
      logger.warn({ err }, 'the WMS does not answer: nothing will be sent this run, files and records wait for the next one');
      return null;
    }
    throw err;
  }
}
