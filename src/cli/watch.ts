/**
 * `wmsbridge watch`: the daemon. Processes files as they arrive, runs scheduled pulls, serves the webhook
 * receiver and /healthz + /metrics when configured. SIGTERM/SIGINT: finishes requests in flight, leaves
 * the rest pending in the journal (resumed at the next start) and exits 0.
 */
import type { CliIo } from './types.js';
import { loadConfigFromFlags, loadMappingsOrThrow, notice, withApp } from './common.js';
import { APP_OPTIONS, commandHelp, defineCommand, parseCommand } from './options.js';
import { startWatch } from '../app/watch.js';

export const WATCH_COMMAND = defineCommand({
  name: 'watch',
  usage: '[options]',
  description: 'Runs as a daemon (systemd, a container, a Windows service wrapper). Stop it with SIGTERM or Ctrl-C.',
  common: APP_OPTIONS,
  options: {
    'metrics-port': { type: 'string', arg: 'N', help: 'serve /healthz and /metrics on 127.0.0.1:N (config: watch.metricsPort)' },
    polling: { type: 'boolean', help: 'poll the inbox (SMB/NFS/CIFS shares; config: watch.usePolling)' },
  },
});

export default async function watch(args: string[], io: CliIo): Promise<number> {
  const { values } = parseCommand(WATCH_COMMAND, args);
  if (values.help) {
    io.stdout.write(commandHelp(WATCH_COMMAND));
    return 0;
  }
  // signals are answered from the first moment: a stop asked during start-up ends the daemon as soon as
  // it is up (and a second signal exits at once)
  let stopAsked: NodeJS.Signals | null = null;
  let handle: Awaited<ReturnType<typeof startWatch>> | null = null;
  const onSignal = (sig: NodeJS.Signals): void => {
    if (stopAsked) process.exit(sig === 'SIGTERM' ? 143 : 130);
    stopAsked = sig;
    handle?.stop(sig);
  };
  process.on('SIGTERM', onSignal);
  process.on('SIGINT', onSignal);
  try {
    const config = await loadConfigFromFlags(values);
    if (values['metrics-port'] !== undefined) config.watch.metricsPort = Number(values['metrics-port']);
    if (values.polling) config.watch.usePolling = true;
    const mappings = await loadMappingsOrThrow(config);
    if (stopAsked) return 0;
    return await withApp(
      config,
      'watch',
      async (ctx, logger) => {
        if (stopAsked) return 0;
        const h = await startWatch(ctx, mappings);
        handle = h;
        if (stopAsked) {
          logger.info({ signal: stopAsked }, 'signal received during start-up');
          h.stop(stopAsked);
        }
        notice(
          io,
          `wmsbridge watch: watching ${config.channels.map((c) => c.name).join(', ')}${h.metricsUrl ? `; metrics ${h.metricsUrl}/metrics` : ''}${h.webhooksUrl ? `; webhooks ${h.webhooksUrl}` : ''}`,
        );
        await h.done;
        return 0;
      },
      { wmsChanged: values['wms-changed'] === true },
    );
  } finally {
    process.off('SIGTERM', onSignal);
    process.off('SIGINT', onSignal);
  }
}
