/**
 * `wmsbridge resolve`: a person's decision on records the pipeline could not settle by itself.
 *   --list                      held, in-doubt and failed records
 *   --retry  --ids 3,4 | --all  send them again now (in-doubt documents: only after checking the WMS!)
 *   --mark-sent --ids 3 [--wms-id X]   the WMS has it (checked by hand): settle as delivered
 *   --drop   --ids 3 [--reason TEXT]   give up on it: settle as rejected
 *   --send-valid --ids 3 | --all [--yes]  a stock sync held for rejected rows is sent without them
 * The work is app/resolve.ts; this file parses the arguments.
 */
import type { CliIo } from './types.js';
import { loadConfigFromFlags } from './common.js';
import { APP_OPTIONS, commandHelp, defineCommand, parseCommand } from './options.js';
import { ConfigError } from '../shared/errors.js';
import { runResolve, type ResolveAction } from '../app/resolve.js';

export const RESOLVE_COMMAND = defineCommand({
  name: 'resolve',
  usage: '(--list | --retry | --mark-sent | --drop | --send-valid [--yes]) [--ids 1,2,3 | --all] [options]',
  common: APP_OPTIONS,
  options: {
    list: { type: 'boolean', help: 'list held, in-doubt and failed records (default)' },
    retry: { type: 'boolean', help: 'put them back in the queue and send them now' },
    'mark-sent': {
      type: 'boolean',
      help: `settle as delivered (you checked the WMS has it); --wms-id ID stores its id (records
that refer to it are sent by the next run); also takes a record rejected by a conflict`,
    },
    drop: { type: 'boolean', help: 'settle as rejected (given up); --reason TEXT is recorded' },
    ids: { type: 'string', arg: 'LIST', help: 'record ids (from --list or `wmsbridge status`)' },
    all: { type: 'boolean', help: 'every held, in-doubt and failed record' },
    'wms-id': { type: 'string', arg: 'ID', help: 'with --mark-sent: the WMS id of the record' },
    reason: { type: 'string', arg: 'TEXT', help: 'with --drop: why, recorded with the record' },
    'send-valid': {
      type: 'boolean',
      help: `a stock sync held because some of its rows were rejected: send it without them (shows what
would be left out; sends only with --yes; the decision is journaled)`,
    },
    yes: { type: 'boolean', help: 'with --send-valid: confirm the decision' },
  },
});

export default async function resolve(args: string[], io: CliIo): Promise<number> {
  const { values } = parseCommand(RESOLVE_COMMAND, args);
  if (values.help) {
    io.stdout.write(commandHelp(RESOLVE_COMMAND));
    return 0;
  }
  const actions = ['retry', 'mark-sent', 'drop', 'send-valid'].filter((a) => values[a as 'retry'] === true);
  if (actions.length > 1) throw new ConfigError(`choose one of --retry, --mark-sent, --drop, --send-valid (got ${actions.join(', ')})`);
  const action = actions[0] ?? 'list';
  const ids = values.ids ? values.ids.split(',').map((s) => Number(s.trim())) : [];
  if (ids.some((n) => !Number.isInteger(n) || n <= 0)) throw new ConfigError(`--ids: expected record ids like 3,4,5, got "${values.ids}"`);
  if (action !== 'list' && ids.length === 0 && !values.all) throw new ConfigError(`--${action} needs --ids or --all`);
  const config = await loadConfigFromFlags(values);
  return runResolve(
    config,
    {
      action: action as ResolveAction,
      ids,
      all: values.all === true,
      ...(values['wms-id'] !== undefined ? { wmsId: values['wms-id'] } : {}),
      ...(values.reason !== undefined ? { reason: values.reason } : {}),
      yes: values.yes === true,
      wmsChanged: values['wms-changed'] === true,
    },
    io,
  );
}
