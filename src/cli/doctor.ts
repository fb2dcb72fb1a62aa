/**
 * `wmsbridge doctor`: the first command to run against a new customer's WMS. Logs in, probes what the
 * interface leaves open (page base, identifier formats, Owners endpoint semantics, DateTimes), counts the
 * reference data, measures clock skew, round trip and rate limiting, and prints the config lines to use.
 * Same configuration and WMS options as `check --wms`. Exit 0 when nothing is wrong, 2 with problems.
 */
import { readFile } from 'node:fs/promises';
import type { CliIo } from './types.js';
import { loadConfigFromFlags, withApp } from './common.js';
import { APP_OPTIONS, commandHelp, defineCommand, parseCommand } from './options.js';
import { resolveWmsCredentials } from '../config/load.js';
import { formatDoctorReport, runDoctor, type DoctorReport } from '../app/doctor.js';

export const DOCTOR_COMMAND = defineCommand({
  name: 'doctor',
  usage: '[--json] [--probe-writes] [options]',
  description: `Logs in to the WMS (the one \`run\` talks to) and probes the choices the interface leaves open: page base,
CNPJ format, what GET /Owners/codeerp/{code} matches, DateTimes with or without a zone; counts the reference
data; measures clock skew against the token, round-trip latency and whether a rate limit answers. Prints
what it found, the sandbox dialect that behaves the same, and the config lines to use.
Exit 0: nothing wrong; 2: problems (listed), including a configuration that disagrees with the WMS.`,
  common: [...APP_OPTIONS, 'json'],
  commonHelp: { json: 'print the findings as one JSON object' },
  options: {
    'probe-writes': {
      type: 'boolean',
      help: `also probe by writing: creates one harmless Category twice (duplicates accepted or
refused) and sends a PickingList for nonexistent ids that the WMS must refuse (are type
and separationType required). Never against production without need.`,
    },
  },
});

export default async function doctor(args: string[], io: CliIo): Promise<number> {
  const { values } = parseCommand(DOCTOR_COMMAND, args);
  if (values.help) {
    io.stdout.write(commandHelp(DOCTOR_COMMAND));
    return 0;
  }
  const config = await loadConfigFromFlags(values);
  let embedded = false;
  const report: DoctorReport = await withApp(
    config,
    'doctor',
    async (ctx) => {
      embedded = ctx.sandbox !== null;
      const creds = ctx.sandbox
        ? { url: ctx.sandbox.url, accessKeyID: ctx.sandbox.accessKeyID, secretKey: ctx.sandbox.secretKey }
        : resolveWmsCredentials(config)!;
      const ca = config.wms.tls.caFile ? await readFile(config.wms.tls.caFile, 'utf8') : undefined;
      return runDoctor(
        {
          url: creds.url,
          accessKeyID: creds.accessKeyID,
          secretKey: creds.secretKey,
          ...(config.wms.userAgent ? { userAgent: config.wms.userAgent } : {}),
          tls: { rejectUnauthorized: config.wms.tls.rejectUnauthorized, ...(ca ? { ca } : {}) },
          timeoutMs: config.wms.timeoutMs,
        },
        { pagingBase: config.wms.pagingBase, dateTimes: config.wms.dateTimes, requestsPerSecond: config.wms.requestsPerSecond },
        { probeWrites: values['probe-writes'] === true },
      );
    },
    { lock: false, memoryJournal: true },
  );
  if (embedded) report.notes.push('no WMS configured: this probed the embedded sandbox (set wms.url or --wms-url)');
  io.stdout.write(values.json ? `${JSON.stringify(report, null, 2)}\n` : formatDoctorReport(report));
  return report.problems.length ? 2 : 0;
}
