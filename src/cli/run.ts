/**
 * `wmsbridge run`: processes everything in the inbox now and exits (the nightly cron job).
 * Exit codes (a contract for operators' scripts): 0 every record delivered; 1 some records were
 * rejected, failed or held, or a file could not be processed (the report says which); 2 configuration
 * or fatal error (nothing was lost: rerun after fixing).
 */
import type { CliIo } from './types.js';
import { loadConfigFromFlags, notice, withApp } from './common.js';
import { APP_OPTIONS, commandHelp, defineCommand, parseCommand } from './options.js';
import { INTERRUPT_EXIT_CODES, runOnce, verdictFields } from '../app/run.js';
import { missingInboxFolders, scanInbox } from '../app/scan.js';
import { runScheduledPulls } from '../app/pulls.js';
import { loadRunMappings, refusedCredentials } from '../app/run-command.js';

export const RUN_COMMAND = defineCommand({
  name: 'run',
  usage: '[options]',
  description: `Processes every complete file in the inbox channels, sends the records to the WMS in dependency order,
writes results, rejects and the run report to the outbox, and exits.`,
  common: APP_OPTIONS,
  options: {
    'dry-run': { type: 'boolean', help: 'map and validate everything, send nothing, move nothing (results in outbox/dry-run)' },
    force: { type: 'boolean', help: 'process files even when the same content was processed before' },
    pulls: { type: 'boolean', help: 'also run the scheduled pulls that are due' },
    'max-wait-ms': { type: 'string', arg: 'N', help: 'how long to wait for files still being written (default: the readiness checks)' },
  },
  footer: `exit codes: 0 all delivered; 1 some records rejected/failed/held or a file in error; 2 configuration, usage or
credentials refused (nothing claimed); 75 the WMS was unavailable (what was not sent waits for the next run);
130/143 interrupted by SIGINT/SIGTERM (results and report written)`,
});

export default async function run(args: string[], io: CliIo): Promise<number> {
  const { values } = parseCommand(RUN_COMMAND, args);
  if (values.help) {
    io.stdout.write(commandHelp(RUN_COMMAND));
    return 0;
  }
  const config = await loadConfigFromFlags(values);
  // a mapping that cannot load is its own error (exit 2 at the end); the others run
  const { mappings, problems: loadProblems } = await loadRunMappings(config);
  const dryRun = values['dry-run'] === true;
  const missing = await missingInboxFolders(config);
  if (missing.length > 0) {
    io.stderr.write(
      `wmsbridge run: inbox folder ${missing.join(', ')} does not exist (share not mounted?): nothing was done; mount it (wmsbridge never creates it) and run again\n`,
    );
    return 2;
  }
  return withApp(
    config,
    dryRun ? 'run --dry-run' : 'run',
    async (ctx, logger) => {
      // authenticate before claiming anything: refused credentials leave every file where it was
      if (!dryRun) {
        const refused = await refusedCredentials(ctx, logger);
        if (refused) {
          io.stderr.write(`wmsbridge run: ${refused}\n`);
          return 2;
        }
      }
      // SIGINT/SIGTERM: stop taking records, let the requests in flight finish and settle, write the results
      // and the report, exit 130/143. A second signal exits at once (the next run recovers the journal)
      const stop = new AbortController();
      const onSignal = (sig: NodeJS.Signals): void => {
        const code = INTERRUPT_EXIT_CODES[sig] ?? 130;
        if (stop.signal.aborted) {
          notice(io, `wmsbridge run: ${sig} again: exiting now (records in flight are recovered by the next run)`, 'warn');
          process.exit(code);
        }
        notice(io, `wmsbridge run: ${sig}: finishing the requests in flight, then writing results and the report (${sig} again to exit now)`, 'warn');
        stop.abort(sig);
      };
      process.on('SIGINT', onSignal);
      process.on('SIGTERM', onSignal);
      try {
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
          signal: stop.signal,
        });
        let code = result.exitCode;
        if (values.pulls && !dryRun && !stop.signal.aborted) {
          const pulls = await runScheduledPulls(ctx, { logger });
          for (const p of pulls.done) io.stdout.write(`pull ${p.name}: ${p.records} record(s) -> ${p.file}\n`);
          for (const p of pulls.failed) notice(io, `pull ${p.name} failed: ${p.error}`, 'error');
          if (pulls.failed.length && code === 0) code = 1;
        }
        logger.info(verdictFields(result, code), result.logLine);
        io.stdout.write(`wmsbridge run: ${result.line} (exit ${code})\n`);
        return code;
      } finally {
        process.off('SIGINT', onSignal);
        process.off('SIGTERM', onSignal);
      }
    },
    { memoryJournal: dryRun, wmsChanged: values['wms-changed'] === true },
  );
}
