/**
 * `wmsbridge sandbox`, the work: the local sandbox WMS served until SIGTERM/SIGINT. When ready it prints EXACTLY
 * ONE JSON line to stdout, {"url":...,"accessKeyID":...,"secretKey":...}; logs go to stderr. cli/sandbox.ts parses
 * the options.
 */
import { ConfigError } from '../shared/errors.js';
import { createSandbox, formatDialect, type SandboxOptions } from '../sandbox/index.js';
import type { CommandIo } from './with-app.js';

export { parseDialect, type SandboxOptions } from '../sandbox/index.js';

/** Serves the sandbox with `options` until a signal; resolves to the exit code. */
export async function serveSandbox(options: SandboxOptions, io: CommandIo): Promise<number> {
  let sb;
  try {
    sb = await createSandbox(options);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'EADDRINUSE' || code === 'EACCES' || code === 'EADDRNOTAVAIL') {
      throw new ConfigError(`cannot listen on ${options.host ?? '127.0.0.1'}:${options.port ?? 0} (${code})`, { cause: err });
    }
    throw err;
  }
  io.stdout.write(`${JSON.stringify({ url: sb.url, accessKeyID: sb.accessKeyID, secretKey: sb.secretKey })}\n`);
  options.logger?.info({ url: sb.url, dialect: formatDialect(sb.dialect) }, 'sandbox ready');

  const signal = await new Promise<NodeJS.Signals>((resolve) => {
    const on = (s: NodeJS.Signals): void => {
      process.off('SIGTERM', on);
      process.off('SIGINT', on);
      resolve(s);
    };
    process.on('SIGTERM', on);
    process.on('SIGINT', on);
  });
  options.logger?.info({ signal }, 'sandbox stopping');
  await sb.close();
  return 0;
}
