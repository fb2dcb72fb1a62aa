/**
 * Problems found in a mapping file while compiling it: where (path inside the file) and what.
 */
/** A problem in a mapping file found while compiling: where (path inside the file) and what. */
export interface MappingProblem {
  path: Array<string | number>;
  message: string;
}

export class MappingCompileError extends Error {
  constructor(readonly problems: MappingProblem[]) {
    super(problems.map((p) => `${formatPath(p.path)}: ${p.message}`).join('; '));
  }
}

export function formatPath(path: ReadonlyArray<PropertyKey>): string {
  let out = '';
  for (const seg of path) {
    if (typeof seg === 'number') out += `[${seg}]`;
    else out += out === '' ? String(seg) : `.${String(seg)}`;
  }
  return out === '' ? '(top level)' : out;
}
