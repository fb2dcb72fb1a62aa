/**
 * `wmsbridge check`, the work: validates the configuration and every mapping before anything is read or sent;
 * with `wms` also authorizes against the WMS (or the embedded sandbox) and reads the reference data the mappings
 * look up. cli/check.ts parses the arguments, prints the notes and problems, and exits.
 */
import { readdir, stat } from 'node:fs/promises';
import { channelSharing, loadMappingsDir, mappingTodos } from '../map/index.js';
import { scheduledPullFromConfig } from '../pull/config.js';
import { parseSchedule } from '../pull/index.js';
import { errorMessage } from '../shared/errors.js';
import { envValue, NO_WMS_CONFIGURED, resolveWmsCredentials, SANDBOX_URL, type ResolvedConfig } from '../config/load.js';
import { withApp } from './with-app.js';

export interface CheckOutcome {
  /** what was found valid, one line each */
  notes: string[];
  /** what is wrong, one line each (exit 2 when any) */
  problems: string[];
}

/** Checks the configuration `config` and its mappings (and, with `wms`, the WMS itself). */
export async function checkSetup(config: ResolvedConfig, options: { wms?: boolean } = {}): Promise<CheckOutcome> {
  const problems: string[] = [];
  const notes: string[] = [];
  notes.push(`config: ${config.file ?? '(no file: defaults)'}`);
  const { mappings, errors } = await loadMappingsDir(config.mappingsDir);
  for (const e of errors) problems.push(e.message);
  for (const m of mappings) {
    const todos = mappingTodos(m.spec);
    if (todos.length) problems.push(`${m.file}: mapping "${m.name}" is not finished: TODO in ${todos.join(', ')} (left by wmsbridge infer; replace each)`);
  }
  notes.push(`mappings: ${mappings.length} valid in ${config.mappingsDir}${errors.length ? `, ${errors.length} invalid` : ''}`);
  if (config.channels.length === 0) problems.push(`no channels: ${config.inboxDir} has no sub-folders and the config declares none`);
  for (const ch of config.channels) {
    try {
      if (!(await stat(ch.dir)).isDirectory()) problems.push(`channel ${ch.name}: ${ch.dir} is not a folder`);
    } catch {
      problems.push(`channel ${ch.name}: folder ${ch.dir} does not exist`);
    }
    const bound = ch.mappings ? mappings.filter((m) => ch.mappings!.includes(m.name)) : mappings.filter((m) => !m.match.channel || m.match.channel === ch.name);
    for (const name of ch.mappings ?? []) if (!mappings.some((m) => m.name === name)) problems.push(`channel ${ch.name}: mapping "${name}" does not exist`);
    if (bound.length === 0) problems.push(`channel ${ch.name}: no mapping is bound to it (set match.channel: ${ch.name} in a mapping)`);
    notes.push(`channel ${ch.name}: ${ch.dir} (${ch.readiness.mode}), mappings: ${bound.map((m) => m.name).join(', ') || 'none'}`);
    // which mappings take which file patterns, and files several of them would take (the files there now too)
    const sharing = channelSharing(ch.name, bound, await fileNames(ch.dir));
    notes.push(...sharing.notes);
    problems.push(...sharing.problems);
  }
  const names = new Set<string>();
  for (const p of config.pulls) {
    if (names.has(p.name)) problems.push(`pulls: duplicate name "${p.name}"`);
    names.add(p.name);
    try {
      scheduledPullFromConfig(p);
      parseSchedule(p.schedule);
    } catch (err) {
      problems.push(`pulls: "${p.name}": ${errorMessage(err)}`);
    }
  }
  if (config.webhooks.enabled && config.webhooks.secretEnv && !envValue(config.webhooks.secretEnv)) {
    problems.push(`webhooks.secretEnv: the environment variable ${config.webhooks.secretEnv} is not set`);
  }
  // what `run` stops on before reading anything (exit 2): no WMS configured, or credentials it cannot read
  checkWmsConfigured(config, notes, problems);
  if (options.wms && problems.length === 0) {
    try {
      await withApp(
        config,
        'check --wms',
        async (ctx) => {
          await ctx.client.authorize();
          const resources = new Set(mappings.flatMap((m) => m.referenceNeeds.map((r) => r.resource)));
          await ctx.refCache.load(resources);
          notes.push(`wms: ${ctx.wmsUrl}${ctx.sandbox ? ' (embedded sandbox)' : ''}: authorized; reference data ${JSON.stringify(ctx.refCache.sizes())}`);
        },
        // the check reads the WMS; it neither needs nor records anything in the journal
        { lock: false, memoryJournal: true },
      );
    } catch (err) {
      problems.push(`wms: ${errorMessage(err)}`);
    }
  }
  return { notes, problems };
}

/** No WMS configured is the problem `run` and `watch` stop on (exit 2); the embedded sandbox only when asked for. */
function checkWmsConfigured(config: ResolvedConfig, notes: string[], problems: string[]): void {
  if (!config.wms.url) {
    problems.push(`wms: ${NO_WMS_CONFIGURED} (\`wmsbridge run\` stops here with exit 2)`);
    return;
  }
  if (config.wms.url === SANDBOX_URL) {
    notes.push('wms: the embedded sandbox (as asked: --sandbox or wms.url: sandbox); nothing reaches a real WMS');
    return;
  }
  try {
    const creds = resolveWmsCredentials(config);
    notes.push(`wms: ${creds?.url ?? config.wms.url}`);
  } catch (err) {
    problems.push(`wms: ${errorMessage(err)}`);
  }
}

/** The names of the files in a channel folder now (none when it cannot be read). */
async function fileNames(dir: string): Promise<string[]> {
  try {
    return (await readdir(dir, { withFileTypes: true })).filter((d) => d.isFile() && !d.name.startsWith('.')).map((d) => d.name);
  } catch {
    return [];
  }
}
