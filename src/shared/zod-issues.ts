/**
 * Zod issues as text for people: the configuration loader (every issue, one a line, each naming the file:
 * `wmsbridge.config.yaml: channels[1].readiness.mode: Invalid input`) and the WMS client (the first few,
 * inline: `data.0.name: Required; (+2 more)`) share this one formatter.
 */
import type { z } from 'zod';

export interface ZodIssueFormat {
  /** put before each issue (`file: path: message`); none by default */
  file?: string;
  /**
   * at most this many issues, then `(+N more)`
   * @default 3
   */
  max?: number;
  /**
   * 'inline': issues separated by `; `; 'lines': one issue a line
   * @default 'inline'
   */
  layout?: 'inline' | 'lines';
  /**
   * how an array index shows in a path: 'dots' (`data.0.name`) or 'brackets' (`channels[1].mode`)
   * @default 'dots'
   */
  index?: 'dots' | 'brackets';
}

/** An issue's path (`(root)` when empty). */
function issuePath(path: ReadonlyArray<PropertyKey>, index: 'dots' | 'brackets'): string {
  if (path.length === 0) return '(root)';
  if (index === 'dots') return path.map(String).join('.');
  return path
    .map((p) => (typeof p === 'number' ? `[${p}]` : String(p)))
    .join('.')
    .replace(/\.\[/g, '[');
}

export function formatZodIssues(error: z.ZodError, format: ZodIssueFormat = {}): string {
  const { file, max = 3, layout = 'inline', index = 'dots' } = format;
  const separator = layout === 'lines' ? '\n' : '; ';
  const prefix = file !== undefined ? `${file}: ` : '';
  const shown = error.issues.slice(0, max).map((i) => `${prefix}${issuePath(i.path, index)}: ${i.message}`);
  const more = error.issues.length > max ? `${separator}(+${error.issues.length - max} more)` : '';
  return shown.join(separator) + more;
}
