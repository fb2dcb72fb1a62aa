/**
 * `npx wmsbridge <command>`: dispatches to one module per command (src/cli/<command>.ts), each
 * exporting `default (args, io) => Promise<exit code>`. Errors are mapped to a one-line message and
 * exit code 2 here, in one line (stacks only at debug level or with WMSBRIDGE_DEBUG=1).
 */
import { isBridgeError } from '../shared/errors.js';
import type { CommandModule } from './types.js';
import { nearest } from './options.js';

const COMMANDS: Record<string, { summary: string; load: () => Promise<CommandModule> }> = {
  demo: { summary: 'start the embedded sandbox, run the sample inbox, print where the results are (npm start)', load: () => import('./demo.js') },
  run: {
    summary: 'process everything in the inbox now and exit (cron); exit 0 ok, 1 attention, 2 configuration, 75 WMS unavailable, 130/143 interrupted',
    load: () => import('./run.js'),
  },
  watch: { summary: 'daemon: process files as they arrive, run scheduled pulls, serve webhooks and /metrics', load: () => import('./watch.js') },
  status: { summary: 'show the journal: files by status, held and in-doubt records', load: () => import('./status.js') },
  resolve: { summary: 'resolve held or in-doubt records (resend, mark delivered, or drop)', load: () => import('./resolve.js') },
  check: { summary: 'validate the config and every mapping', load: () => import('./check.js') },
  doctor: { summary: 'probe the WMS (page base, identifier formats, clock, rate limit) and print the config lines to use', load: () => import('./doctor.js') },
  preview: { summary: 'preview <mapping> <file>: print the records a file would produce, and its rejects', load: () => import('./preview.js') },
  pull: { summary: 'pull <what>: export stock, inventories or reference data from the WMS to outbox', load: () => import('./pull.js') },
  pedidos: { summary: 'the orders follow-up: documents sent and what the WMS reported by webhook (outbox/pedidos/<date>)', load: () => import('./pedidos.js') },
  reconcile: {
    summary: 'reconcile stock <erp-stock-file>: compare the ERP stock file with the WMS stock (outbox/reconciliation); exit 1 on differences',
    load: () => import('./reconcile.js'),
  },
  webhooks: { summary: 'serve the webhook receiver alone', load: () => import('./webhooks.js') },
  sandbox: { summary: 'run the local sandbox WMS; prints one JSON line {url,accessKeyID,secretKey} when ready', load: () => import('./sandbox.js') },
  schema: { summary: 'print the JSON Schema of mapping files (for editors)', load: () => import('./schema.js') },
  studio: { summary: 'studio [file|folder]: map an export in a browser: sample, mapping and records side by side, live', load: () => import('./studio.js') },
  infer: { summary: 'infer <sample>: write a commented mapping proposed from one sample export, check and preview it', load: () => import('./infer.js') },
};

function usage(): string {
  const lines = ['usage: wmsbridge <command> [options]', '', 'commands:'];
  for (const [name, c] of Object.entries(COMMANDS)) lines.push(`  ${name.padEnd(10)} ${c.summary}`);
  lines.push('', 'Run `wmsbridge <command> --help` for the options of one command.');
  return lines.join('\n');
}

export async function main(argv: string[]): Promise<number> {
  const [name, ...rest] = argv;
  if (!name || name === '--help' || name === '-h' || name === 'help') {
    process.stdout.write(`${usage()}\n`);
    return name ? 0 : 2;
  }
  if (name === '--version' || name === '-v') {
    const { VERSION } = await import('../shared/version.js');
    process.stdout.write(`${VERSION}\n`);
    return 0;
  }
  const command = COMMANDS[name];
  if (!command) {
    const near = nearest(name, Object.keys(COMMANDS));
    process.stderr.write(`wmsbridge: unknown command "${name}"${near ? `; did you mean "${near}"?` : ''}\n\n${usage()}\n`);
    return 2;
  }
  try {
    const mod = await command.load();
    return await mod.default(rest, { stdout: process.stdout, stderr: process.stderr });
  } catch (err) {
    // one line; the stack only at debug level (--log-level debug|trace, $WMSBRIDGE_LOG_LEVEL, or WMSBRIDGE_DEBUG=1)
    // (config/load.ts is the one reader of the environment; loaded here only on an error, as the commands load it)
    const { envValue } = await import('../config/load.js');
    const debug =
      envValue('WMSBRIDGE_DEBUG') === '1' ||
      /^(debug|trace)$/.test(envValue('WMSBRIDGE_LOG_LEVEL') ?? '') ||
      rest.some((a, i) => /^--log-level=(debug|trace)$/.test(a) || (a === '--log-level' && /^(debug|trace)$/.test(rest[i + 1] ?? '')));
    if (isBridgeError(err)) {
      process.stderr.write(`wmsbridge ${name}: ${err.code}: ${err.message}\n`);
    } else {
      process.stderr.write(`wmsbridge ${name}: unexpected error: ${err instanceof Error ? `${err.name}: ${err.message}` : String(err)}\n`);
    }
    if (debug && err instanceof Error && err.stack) process.stderr.write(`${err.stack}\n`);
    return 2;
  }
}

main(process.argv.slice(2)).then(
  (code) => {
    process.exitCode = code;
  },
  (err: unknown) => {
    process.stderr.write(`wmsbridge: ${String(err)}\n`);
    process.exitCode = 2;
  },
);
