/**
 * A mapping's declared skips (`skip: [{when, reason}]`): rows it selects but must not send, compiled to
 * predicates; and the checks of the other keys of that block (`sharesFilesWith`, `onRejected`). See
 * docs/MAPPINGS.md, "Rows that must not be sent".
 */
import { problem, type CompileCtx, type Cond } from './evaluation.js';
import { compileFilter } from './conditions.js';
import type { ConditionSpec, MappingSpec } from './model.js';
import { sentAsSession } from '../wms/targets.js';

export function compileSkips(cc: CompileCtx, spec: MappingSpec): Array<{ when: Cond; reason: string }> {
  if (spec.onRejected !== undefined && !sentAsSession(spec.target))
    problem(cc, ['onRejected'], `onRejected decides what a stock sync with rejected rows sends; ${spec.target} records are sent one by one`);
  (spec.sharesFilesWith ?? []).forEach((n, i) => {
    if (n === spec.name) problem(cc, ['sharesFilesWith', i], 'a mapping does not share files with itself: name the other mappings that read the same files');
  });
  const rules = spec.skip ?? [];
  if (rules.length > 0 && spec.group) {
    problem(cc, ['skip'], 'skip excludes rows of flat records; a document mapping (group) selects its rows with filter');
    return [];
  }
  return rules.map((r, i) => ({ when: compileFilter(cc, r.when as ConditionSpec | ConditionSpec[], ['skip', i, 'when']), reason: r.reason }));
}
