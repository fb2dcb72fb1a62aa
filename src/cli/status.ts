/**
 * `wmsbridge status`: what the journal knows: files by status, records by status, and the records that
 * need a person (held, in doubt, failed). Read-only: works while `watch` runs.
 */
import type { CliIo } from './types.js';
import { loadConfigFromFlags, withApp } from './common.js';
import { APP_OPTIONS, commandHelp, defineCommand, parseCommand } from './options.js';
import type { FileRow, RecordRow, RecordStatus } from '../app/with-app.js';
import { retention } from '../app/retention.js';

export const STATUS_COMMAND = defineCommand({
  name: 'status',
  usage: '[--json] [--limit N] [options]',
  description: 'Shows files by status, records by status, and the held, in-doubt and failed records with their reasons.',
  common: [...APP_OPTIONS, 'json'],
  commonHelp: { json: 'print it as one JSON object' },
  options: { limit: { type: 'string', arg: 'N', help: 'records needing attention listed (default 50)' } },
});

const RECORD_STATUSES: RecordStatus[] = ['pending', 'sending', 'sent', 'rejected', 'failed', 'held', 'in_doubt'];

export default async function status(args: string[], io: CliIo): Promise<number> {
  const { values } = parseCommand(STATUS_COMMAND, args);
  if (values.help) {
    io.stdout.write(commandHelp(STATUS_COMMAND));
    return 0;
  }
  const limit = values.limit ? Number(values.limit) : 50;
  const config = await loadConfigFromFlags(values);
  return withApp(
    config,
    'status',
    async (ctx) => {
      // counted, not listed: a journal keeps 90 days of files; only those the output names are read
      const byStatus = Object.fromEntries(Object.entries(await ctx.journal.countFiles()).filter(([, n]) => n > 0));
      const counts = await ctx.journal.countRecords({});
      const attention = await ctx.journal.listRecords({ statuses: ['held', 'in_doubt', 'failed'], limit });
      const inWork = await ctx.journal.listFiles({ statuses: ['claimed', 'mapped'] });
      const errors = (await ctx.journal.listFiles({ statuses: ['error'] })).slice(-limit);
      const fileById = new Map<number, FileRow>([...inWork, ...errors].map((f) => [f.id, f]));
      for (const id of new Set(attention.map((r) => r.fileId))) {
        if (fileById.has(id)) continue;
        const f = await ctx.journal.getFile(id);
        if (f) fileById.set(id, f);
      }
      if (values.json) {
        io.stdout.write(
          `${JSON.stringify({ journal: ctx.journal.location, retention: retention(config), files: byStatus, records: counts, attention: attention.map((r) => ({ id: r.id, file: fileById.get(r.fileId)?.name, line: r.source.line, target: r.target, key: r.key, status: r.status, error: r.error })) }, null, 2)}\n`,
        );
        return 0;
      }
      const out: string[] = [];
      out.push(`journal: ${ctx.journal.location}`);
      const keep = retention(config);
      const days = (n: number) => (n > 0 ? `${n} days` : 'forever');
      out.push(
        `keeps:   journal rows of settled files ${days(keep.journalDays)} (journal.retainDays), outbox results/reports and archive ${days(keep.outboxDays)} (outbox.retainDays)`,
      );
      out.push(
        `files:   ${
          Object.entries(byStatus)
            .map(([k, v]) => `${v} ${k}`)
            .join(', ') || 'none'
        }`,
      );
      out.push(
        `records: ${
          RECORD_STATUSES.filter((s) => counts[s])
            .map((s) => `${counts[s]} ${s.replace('_', '-')}`)
            .join(', ') || 'none'
        }`,
      );
      if (inWork.length) {
        out.push('', 'files in progress (resumed by the next run):');
        for (const f of inWork) out.push(`  ${f.channel}/${f.name}  ${f.status}  ${f.path}`);
      }
      if (errors.length) {
        out.push('', 'files in error (fix and drop again):');
        for (const f of errors) out.push(`  ${f.channel}/${f.name}  ${f.error ?? ''}\n    -> ${f.path}`);
      }
      if (attention.length) {
        out.push('', `records needing attention (first ${attention.length}; resolve with \`wmsbridge resolve\`):`);
        for (const r of attention)
          out.push(
            `  #${r.id} ${r.status.replace('_', '-')}  ${fileById.get(r.fileId)?.name ?? '?'}:${r.source.line}  ${r.target} ${r.key}\n      ${r.error ?? ''}`,
          );
      }
      io.stdout.write(`${out.join('\n')}\n`);
      return 0;
    },
    { offline: true, lock: false },
  );
}

export type { RecordRow };
