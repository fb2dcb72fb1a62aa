/**
 * `wmsbridge watch`: the daemon. Processes files as they arrive, runs scheduled pulls, serves the webhook
 * receiver and /healthz + /metrics when configured. SIGTERM/SIGINT: finishes requests in flight, leaves
 * the rest pending in the journal (resumed at the next start) and exits 0.
 */
import type { CliIo } from './types.js';
import { COMMON_HELP, loadConfigFromFlags, loadMappingsOrThrow, parseCommandArgs, withApp } from './common.js';
import { startWatch } from '../app/watch.js';

const HELP = `usage: wmsbridge watch [options]

Runs as a daemon (systemd, a container, a Windows service wrapper). Stop it with SIGTERM or Ctrl-C.
  --metrics-port N      serve /healthz and /metrics on 127.0.0.1:N (config: watch.metricsPort)
  --polling             poll the inbox (SMB/NFS/CIFS shares; config: watch.usePolling)
${COMMON_HELP}`;

export default async function watch(args: string[], io: CliIo): Promise<number> {
  const { values } = parseCommandArgs(args, { 'metrics-port': { type: 'string' }, polling: { type: 'boolean' } });
  if (values.help) {
    io.stdout.write(`${HELP}\n`);
    return 0;
  }
  const config = await loadConfigFromFlags(values);
  if (values['metrics-port'] !== undefined) config.watch.metricsPort = Number(values['metrics-port']);
  if (values.polling) config.watch.usePolling = true;
  const mappings = await loadMappingsOrThrow(config);
  return withApp(config, 'watch', async (ctx, logger) => {
    const handle = await startWatch(ctx, mappings);
    const onSignal = (sig: NodeJS.Signals) => {
      logger.info({ signal: sig }, 'signal received');
      handle.stop(sig);
    };
    process.on('SIGTERM', onSignal);
    process.on('SIGINT', onSignal);
    io.stderr.write(`wmsbridge watch: watching ${config.channels.map((c) => c.name).join(', ')}${handle.metricsUrl ? `; metrics ${handle.metricsUrl}/metrics` : ''}${handle.webhooksUrl ? `; webhooks ${handle.webhooksUrl}` : ''}\n`);
    await handle.done;
    process.off('SIGTERM', onSignal);
    process.off('SIGINT', onSignal);
    return 0;
  }, { wmsChanged: values['wms-changed'] === true });
}
