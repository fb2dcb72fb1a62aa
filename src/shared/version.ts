import { readFileSync } from 'node:fs';

function readVersion(): string {
  for (const rel of ['../../package.json', '../../../package.json']) {
    try {
      const pkg = JSON.parse(readFileSync(new URL(rel, import.meta.url), 'utf8')) as { name?: string; version?: string };
      if (pkg.name === 'wmsbridge' && pkg.version) return pkg.version;
    } catch {
      // try the next location (src/ when run with tsx, dist/src/ when compiled)
    }
  }
  return '0.0.0';
}
export const VERSION = readVersion();
/** Default User-Agent: the spec makes User-Agent mandatory on every call. */
export const DEFAULT_USER_AGENT = `wmsbridge/${VERSION} (node ${process.versions.node})`;
