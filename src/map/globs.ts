/**
 * Which files a mapping takes: case-insensitive file-name globs and the channel.
 */
import { problem, type CompileCtx } from './evaluation.js';

/** Case-insensitive file-name glob: * ? [abc] [!abc] {a,b}. */
export function globToRegExp(glob: string): RegExp {
  let re = '';
  let inBrace = 0;
  for (let i = 0; i < glob.length; i++) {
    const c = glob[i] ?? '';
    if (c === '*') re += '.*';
    else if (c === '?') re += '.';
    else if (c === '[') {
      const end = glob.indexOf(']', i + 1);
      if (end < 0) re += '\\[';
      else {
        let body = glob.slice(i + 1, end);
        if (body.startsWith('!')) body = `^${body.slice(1)}`;
        re += `[${body.replace(/\\/g, '\\\\')}]`;
        i = end;
      }
    } else if (c === '{') {
      inBrace++;
      re += '(?:';
    } else if (c === '}' && inBrace > 0) {
      inBrace--;
      re += ')';
    } else if (c === ',' && inBrace > 0) re += '|';
    else re += c.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&');
  }
  if (inBrace > 0) throw new Error(`unclosed { in '${glob}'`);
  return new RegExp(`^${re}$`, 'i');
}

/** The mapping's `match.files` compiled (a bad glob is a mapping problem). */
export function compileGlobs(cc: CompileCtx, files: readonly string[]): RegExp[] {
  const globs: RegExp[] = [];
  files.forEach((g, i) => {
    try {
      globs.push(globToRegExp(g));
    } catch (err) {
      problem(cc, ['match', 'files', i], (err as Error).message);
    }
  });
  return globs;
}

/** Whether a file of a channel is the mapping's: the channel (if any, case-insensitive), then any glob. */
export function fileMatcher(channel: string | undefined, globs: readonly RegExp[]): (ch: string, fileName: string) => boolean {
  return (ch, fileName) => {
    if (channel !== undefined && ch.toLowerCase() !== channel.toLowerCase()) return false;
    for (const g of globs) if (g.test(fileName)) return true;
    return false;
  };
}
