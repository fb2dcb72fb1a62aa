/**
 * `wmsbridge demo`, the work: the sample inbox copied to <stateDir>/demo/inbox and run end to end against the
 * embedded sandbox with a fresh journal, what was done printed to io.stdout. cli/demo.ts parses the arguments.
 */
import { cp, rm, mkdir } from 'node:fs/promises';
import { dirname, join, relative } from 'node:path';
import { discoverChannels, SANDBOX_URL, type ResolvedConfig } from '../config/load.js';
import { createI18n } from '../i18n/index.js';
import { runOnce } from './run.js';
import { scanReadyFiles } from './scan.js';
import { loadMappingsOrThrow, withApp, type CommandIo } from './with-app.js';

/** Runs the demo on `config` (its inbox holds the samples); resolves to the run's exit code. */
export async function runDemo(config: ResolvedConfig, io: CommandIo): Promise<number> {
  const mappings = await loadMappingsOrThrow(config);
  const sampleInbox = config.inboxDir;
  const demoDir = join(config.stateDir, 'demo');
  await rm(demoDir, { recursive: true, force: true });
  await mkdir(demoDir, { recursive: true });
  const inbox = join(demoDir, 'inbox');
  // copy the samples, leaving wmsbridge's own working folders behind
  await cp(sampleInbox, inbox, { recursive: true, filter: (src) => !src.includes('.wmsbridge') });
  config.inboxDir = inbox;
  // the journal beside the copied inbox, not above it: wmsbridge refuses an inbox inside its state folder
  const demoState = join(demoDir, 'state');
  config.stateDir = demoState;
  config.journal = { kind: 'sqlite', synchronous: 'FULL' };
  config.sandbox = { ...config.sandbox, stateFile: join(demoState, 'sandbox-state.json') };
  config.channels = config.channelsDiscovered
    ? await discoverChannels(inbox)
    : config.channels.map((c) => ({ ...c, dir: join(inbox, relative(sampleInbox, c.dir)) }));
  const rel = (p: string) => relative(process.cwd(), p) || '.';
  config.wms.url = SANDBOX_URL; // the demo is the one command (with `sandbox`) that uses the embedded sandbox unasked
  return withApp(config, 'demo', async (ctx, logger) => {
    io.stdout.write(
      `wmsbridge demo\n  WMS      ${ctx.wmsUrl} (embedded sandbox)\n  inbox    ${rel(sampleInbox)} copied to ${rel(inbox)} (your inbox is not touched)\n  mappings ${rel(config.mappingsDir)} (${mappings.length})\n  channels ${config.channels.map((c) => c.name).join(', ')}\n\n`,
    );
    const ready = await scanReadyFiles(config, { logger, maxWaitMs: 10_000 });
    // the samples are complete already: no need to wait for the stability checks' full period
    const result = await runOnce(ctx, { command: 'demo', ready, mappings, progress: process.stderr.isTTY === true });
    const s = result.summary;
    // what a person reads: in the outbox locale, like the report
    const i18n = createI18n(config.outbox.locale, config.outbox.timeZone);
    for (const f of s.files) {
      const outs = Object.entries(f.outcomes)
        .filter(([, n]) => n)
        .map(([o, n]) => `${i18n.num(n ?? 0)} ${i18n.outcome(o).toLowerCase()}`)
        .join(', ');
      const status = i18n.has(`fileStatus.${f.status}`) ? i18n.t(`fileStatus.${f.status}`) : f.status;
      io.stdout.write(`  ${status.padEnd(9)} ${`${f.channel}/${f.name}`.padEnd(44)} ${outs || f.error || ''}\n`);
    }
    io.stdout.write(`\n  ${result.line}\n`);
    if (result.report) {
      io.stdout.write(
        `\n  report   ${rel(result.report.html)}\n  excel    ${rel(join(dirname(result.report.html), 'report.xlsx'))}\n  figures  ${rel(result.report.csv)}\n  results  ${rel(join(config.outboxDir, 'results'))}/\n`,
      );
      if (s.files.some((f) => f.rejectsFile)) io.stdout.write(`  rejects  ${rel(join(config.outboxDir, 'rejects'))}/\n`);
    }
    // commands that work from here as written: this very CLI (no `npx wmsbridge`: outside an install it fetches a
    // package of that name), and `run` against the sandbox (without a WMS configured it stops with exit 2)
    const self = `node ${rel(process.argv[1] ?? 'bin/wmsbridge.mjs')}`;
    io.stdout.write(
      `\n  next: \`${self} status --state-dir ${rel(demoState)}\`, or drop files into ${rel(sampleInbox)}/<channel> and run \`${self} run --sandbox\` (with your WMS: set wms.url, then \`${self} check\`)\n`,
    );
    return result.exitCode;
  });
}
