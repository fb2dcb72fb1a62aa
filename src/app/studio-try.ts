/**
 * The studio's "try it": the sample's records sent to a throw-away embedded sandbox WMS, each answer shown. A
 * temporary workspace (the sample in its channel, the mapping being edited, `wms.url: sandbox`), one
 * `wmsbridge run` of it as a child process (the same pipeline as a night), its result file read back, the
 * workspace removed. The configured WMS is never involved.
 */
import { spawn } from 'node:child_process';
import { copyFile, mkdir, mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { openParser } from '../parse/index.js';
import { processEnv } from '../config/load.js';

export interface TryAnswer {
  /** the run's exit code (0 delivered, 1 data attention, 2 config, 75 WMS unavailable) */
  code: number;
  /** what the run printed */
  output: string;
  /** one row per record or rejected row: line, target, key, outcome, wms_id, error, reason */
  results: Array<Record<string, string>>;
}

async function resultRows(outbox: string): Promise<Array<Record<string, string>>> {
  const files: string[] = [];
  const walk = async (d: string): Promise<void> => {
    for (const e of await readdir(d, { withFileTypes: true }).catch(() => [])) {
      if (e.isDirectory()) await walk(join(d, e.name));
      else if (e.name.endsWith('.result.csv')) files.push(join(d, e.name));
    }
  };
  await walk(outbox);
  const rows: Array<Record<string, string>> = [];
  for (const f of files.sort())
    for await (const item of openParser(f, { format: 'delimited', delimiter: ';' })) if (item.kind === 'row') rows.push(item.row.fields);
  return rows;
}

/** The child's environment without any WMS or configuration of the operator's: the throw-away sandbox only. */
function throwAwayEnv(): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { WMSBRIDGE_LOG_PRETTY: '0' };
  for (const [k, v] of Object.entries(processEnv())) if (!/^(WMS_|WMSBRIDGE_)/.test(k)) env[k] = v;
  return env;
}

/** Runs the sample through `mappingText` against a throw-away embedded sandbox. */
export async function trySample(bin: string, sample: { path: string; channel: string }, mappingName: string, mappingText: string): Promise<TryAnswer> {
  const dir = await mkdtemp(join(tmpdir(), 'wmsbridge-studio-try-'));
  try {
    const channel = sample.channel || 'studio';
    await mkdir(join(dir, 'inbox', channel), { recursive: true });
    await mkdir(join(dir, 'mappings'));
    await copyFile(sample.path, join(dir, 'inbox', channel, basename(sample.path)));
    await writeFile(join(dir, 'mappings', mappingName), mappingText);
    const config = join(dir, 'wmsbridge.config.yaml');
    const q = (p: string) => JSON.stringify(p);
    await writeFile(
      config,
      `inboxDir: ${q(join(dir, 'inbox'))}\noutboxDir: ${q(join(dir, 'outbox'))}\nstateDir: ${q(join(dir, 'state'))}\nmappingsDir: ${q(join(dir, 'mappings'))}\nwms:\n  url: sandbox\n`,
    );
    const { code, output } = await new Promise<{ code: number; output: string }>((resolveRun) => {
      const child = spawn(process.execPath, [bin, 'run', '--config', config], {
        cwd: dir,
        stdio: ['ignore', 'pipe', 'pipe'],
        env: throwAwayEnv(),
      });
      let out = '';
      child.stdout.on('data', (d: Buffer) => (out += d.toString()));
      child.stderr.on('data', (d: Buffer) => (out += d.toString()));
      child.on('error', (err) => resolveRun({ code: 2, output: `${out}${err.message}\n` }));
      child.on('close', (c) => resolveRun({ code: c ?? 2, output: out }));
    });
    return { code, output: output.slice(-20_000), results: await resultRows(join(dir, 'outbox')) };
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}
