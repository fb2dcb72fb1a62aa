/**
 * `wmsbridge run`: processes everything in the inbox now and exits (the nightly cron job).
 * Exit codes (a contract for operators' scripts): 0 every record delivered; 1 some records were
 * rejected, failed or held, or a file could not be processed (the report says which); 2 configuration
 * or fatal error (nothing was lost: rerun after fixing).
 */
import type { CliIo } from './types.js';
import { COMMON_HELP, loadConfigFromFlags, parseCommandArgs, withApp } from './common.js';
import { loadMappingsDir } from '../map/index.js';
import { ConfigError } from '../shared/errors.js';
import { runOnce } from '../app/run.js';
import { scanInbox } from '../app/scan.js';
import { runScheduledPulls } from '../app/pulls.js';

const HELP = `usage: wmsbridge run [options]

Processes every complete file in the inbox channels, sends the records to the WMS in dependency order,
writes results, rejects and the run report to the outbox, and exits.

options:
  --dry-run             map and validate everything, send nothing, move nothing (results in outbox/dry-run)
  --force               process files even when the same content was processed before
  --pulls               also run the scheduled pulls that are due
  --max-wait-ms N       how long to wait for files still being written (default: the readiness checks)
${COMMON_HELP}

exit codes: 0 all delivered, 1 some records rejected/failed/held or a file in error, 2 configuration or fatal error`;

export default async function run(args: string[], io: CliIo): Promise<number> {
  const { values } = parseCommandArgs(args, {
    'dry-run': { type: 'boolean' },
    force: { type: 'boolean' },
    pulls: { type: 'boolean' },
    'max-wait-ms': { type: 'string' },
  });
  if (values.help) {
    io.stdout.write(`${HELP}\n`);
    return 0;
  }
  const config = await loadConfigFromFlags(values);
  // a mapping that cannot load is its own error (exit 2 at the end); the others run, and the files only
  // it would claim stay in the inbox
  const { mappings, errors: mappingErrors } = await loadMappingsDir(config.mappingsDir);
  if (mappingErrors.length > 0 && mappings.length === 0) {
    throw new ConfigError(`${mappingErrors.length} mapping file(s) are invalid:\n${mappingErrors.map((e) => `  ${e.message}`).join('\n')}`);
  }
  const loadProblems = mappingErrors.map((e) => `mapping not loaded, its files stay in the inbox: ${e.message}`);
  const dryRun = values['dry-run'] === true;
  return withApp(
    config,
    dryRun ? 'run --dry-run' : 'run',
    async (ctx, logger) => {
      const maxWait = values['max-wait-ms'] ? Number(values['max-wait-ms']) : undefined;
      const { ready, refused } = await scanInbox(config, { logger, mappings, ...(maxWait !== undefined ? { maxWaitMs: maxWait } : {}) });
      const result = await runOnce(ctx, {
        command: 'run',
        ready,
        refused,
        problems: loadProblems,
        mappings,
        dryRun,
        force: values.force === true,
        progress: process.stderr.isTTY === true,
      });
      let code = result.exitCode;
      if (loadProblems.length > 0 && code < 2) code = 2;
      if (values.pulls && !dryRun) {
        const pulls = await runScheduledPulls(ctx, { logger });
        for (const p of pulls.done) io.stdout.write(`pull ${p.name}: ${p.records} record(s) -> ${p.file}\n`);
        for (const p of pulls.failed) io.stderr.write(`pull ${p.name} failed: ${p.error}\n`);
        if (pulls.failed.length && code === 0) code = 1;
      }
      io.stdout.write(`wmsbridge run: ${result.line} (exit ${code})\n`);
      return code;
    },
    { memoryJournal: dryRun },
  );
}
