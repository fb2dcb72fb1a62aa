/**
 * `wmsbridge studio`, composed: the configured mappings folder, read-only lookups against an embedded sandbox
 * (started on the first lookup, closed with the studio: the page never reaches the configured WMS), `check` of
 * the whole configuration (the CLI itself, as a child process, so the page shows exactly what the terminal
 * would), "try it" (studio-try.ts: a throw-away sandbox), the mapping JSON schema, and the server (src/studio).
 */
import { spawn } from 'node:child_process';
import { existsSync, statSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { packageRoot } from '../shared/package-root.js';
import { loadConfig, processEnv } from '../config/load.js';
import { generateMappingJsonSchema } from '../map/json-schema.js';
import type { ReferenceCache } from '../map/types.js';
import { ConfigError } from '../shared/errors.js';
import { startStudio, type Studio, type StudioLang } from '../studio/server.js';
import { loadReferences } from './preview-command.js';
import { trySample } from './studio-try.js';

export interface StudioRequest {
  /** the sample file or folder: the only data the studio reads */
  path: string;
  port?: number;
  host?: string;
  lang?: StudioLang;
  /** --config, --mappings: where mappings are saved (the configuration's mappings folder) */
  configFile?: string;
  mappingsDir?: string;
}

/** `wmsbridge <command>` with the studio's configuration, as a child process: its exit code and its output. */
function runCommand(command: 'check' | 'doctor', configFile: string | undefined, extra: string[]): Promise<{ code: number; output: string }> {
  const bin = join(packageRoot(), 'bin', 'wmsbridge.mjs');
  const args = [bin, command, ...(configFile ? ['--config', configFile] : []), ...extra];
  return new Promise((resolveRun) => {
    const child = spawn(process.execPath, args, { stdio: ['ignore', 'pipe', 'pipe'], env: { ...processEnv(), WMSBRIDGE_LOG_PRETTY: '0' } });
    let output = '';
    child.stdout.on('data', (d: Buffer) => (output += d.toString()));
    child.stderr.on('data', (d: Buffer) => (output += d.toString()));
    child.on('error', (err) => resolveRun({ code: 2, output: `${output}${err.message}\n` }));
    child.on('close', (code) => resolveRun({ code: code ?? 2, output }));
  });
}

/** Reference data for lookups from one embedded sandbox, loaded once per set of resources. */
function sandboxReferences(): { references: (resources: string[]) => Promise<ReferenceCache>; close: () => Promise<void> } {
  let sandbox: Promise<{ url: string; accessKeyID: string; secretKey: string; close: () => Promise<void> }> | undefined;
  const caches = new Map<string, Promise<ReferenceCache>>();
  const load = async (resources: string[]): Promise<ReferenceCache> => {
    const { createSandbox } = await import('../sandbox/index.js');
    sandbox ??= createSandbox({ port: 0, host: '127.0.0.1' });
    const sb = await sandbox;
    return loadReferences(sb.url, sb.accessKeyID, sb.secretKey, resources);
  };
  return {
    references: (resources) => {
      const k = [...resources].sort().join(',');
      let hit = caches.get(k);
      if (!hit) {
        hit = load(resources);
        hit.catch(() => caches.delete(k));
        caches.set(k, hit);
      }
      return hit;
    },
    close: async () => {
      if (sandbox) await (await sandbox).close();
    },
  };
}

/** Starts the studio on the given sample file or folder; close() stops it and its sandbox. */
export async function openStudio(r: StudioRequest): Promise<Studio> {
  if (!existsSync(r.path)) throw new ConfigError(`studio: ${r.path} does not exist (give a sample file or a folder of them)`);
  const st = statSync(r.path);
  if (!st.isFile() && !st.isDirectory()) throw new ConfigError(`studio: ${r.path} is neither a file nor a folder`);
  const config = await loadConfig({ ...(r.configFile ? { file: r.configFile } : {}), overrides: r.mappingsDir ? { mappingsDir: r.mappingsDir } : {} });
  const mappingsDir = resolve(config.mappingsDir);
  const refs = sandboxReferences();
  const studio = await startStudio({
    root: resolve(r.path),
    mappingsDir,
    references: refs.references,
    check: () => runCommand('check', config.file ?? undefined, ['--mappings', mappingsDir]),
    // the configured WMS (its environment too, as the operator's runs read it): doctor's probes only read
    doctor: () => runCommand('doctor', config.file ?? undefined, []),
    schema: generateMappingJsonSchema,
    tryIt: (sample, name, text) => trySample(join(packageRoot(), 'bin', 'wmsbridge.mjs'), sample, name, text),
    ...(r.port !== undefined ? { port: r.port } : {}),
    ...(r.host !== undefined ? { host: r.host } : {}),
    ...(r.lang !== undefined ? { lang: r.lang } : {}),
  }).catch(async (err: unknown) => {
    await refs.close();
    throw err;
  });
  const close = studio.close;
  studio.close = async () => {
    await close();
    await refs.close();
  };
  return studio;
}
