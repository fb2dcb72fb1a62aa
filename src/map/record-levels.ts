/**
 * The record types a multi-record mapping groups (header, item, lot, context) checked against the source's layout
 * at load time, so `check` names a misspelt type before any file arrives.
 */
import type { ParseOptions } from '../parse/options.js';
import { problem, type CompileCtx } from './evaluation.js';
import type { MappingSpec } from './model.js';

/** The record types a source declares, or undefined when it is not a multi-record file. */
export function recordTypesOf(source: ParseOptions): Set<string> | undefined {
  if (source.format === 'fixed-width') return new Set(source.records.map((r) => r.type));
  if (source.format === 'delimited' && source.records) return new Set(source.records.map((r) => r.type));
  return undefined;
}

const list = (v: string | string[] | undefined): string[] => (v === undefined ? [] : typeof v === 'string' ? [v] : v);

/** The levels of a multi-record group as sets, each type declared by the layout and at one level only. */
export function recordLevels(
  cc: CompileCtx,
  group: NonNullable<MappingSpec['group']>,
  types: Set<string> | undefined,
): { itemRecords: Set<string>; lotRecords: Set<string> | undefined; contextRecords: Set<string> | undefined } {
  const levels: Array<[string, string[]]> = [
    ['headerRecord', list(group.headerRecord)],
    ['itemRecord', list(group.itemRecord)],
    ['lotRecord', list(group.lotRecord)],
    ['contextRecords', group.contextRecords ?? []],
  ];
  const levelOf = new Map<string, string>();
  for (const [key, names] of levels) {
    for (const t of names) {
      if (types && !types.has(t)) problem(cc, ['group', key], `'${t}' is not a record type of source.records (${[...types].join(', ')})`);
      const other = levelOf.get(t);
      if (other !== undefined) problem(cc, ['group', key], `record type '${t}' is already the ${other}: a record type has one level`);
      else levelOf.set(t, key);
    }
  }
  const lots = list(group.lotRecord);
  return {
    itemRecords: new Set(list(group.itemRecord)),
    lotRecords: lots.length ? new Set(lots) : undefined,
    contextRecords: group.contextRecords ? new Set(group.contextRecords) : undefined,
  };
}
