/**
 * The configuration reference, generated from the zod model (descriptions and defaults live there and
 * nowhere else): docs/CONFIG.md and schemas/config.schema.json are written from it by
 * `node scripts/gen-config-doc.mjs`, and a test fails when they are out of date.
 */
import { z } from 'zod';
import { ConfigSchema } from './schema.js';

type JsonSchema = {
  type?: string | string[];
  description?: string;
  default?: unknown;
  properties?: Record<string, JsonSchema>;
  items?: JsonSchema;
  oneOf?: JsonSchema[];
  anyOf?: JsonSchema[];
  enum?: unknown[];
  const?: unknown;
  minimum?: number;
  maximum?: number;
  pattern?: string;
};

export function configJsonSchema(): Record<string, unknown> {
  return {
    $id: 'https://wmsbridge.local/schemas/config.schema.json',
    title: 'wmsbridge configuration (wmsbridge.config.yaml)',
    ...(z.toJSONSchema(ConfigSchema, { io: 'input', unrepresentable: 'any' }) as Record<string, unknown>),
  };
}

function typeText(s: JsonSchema): string {
  if (s.const !== undefined) return JSON.stringify(s.const);
  if (s.enum) return s.enum.map((e) => JSON.stringify(e).replace(/\|/g, '\\|')).join(' \\| ');
  const alts = s.oneOf ?? s.anyOf;
  if (alts) {
    const tags = alts.map((a) => Object.entries(a.properties ?? {}).find(([, p]) => p.const !== undefined)).filter((t) => t !== undefined);
    if (tags.length === alts.length) return `one of: ${tags.map(([k, p]) => `${k}=${String(p.const)}`).join(', ')}`;
    return alts.map(typeText).join(' \\| ');
  }
  if (s.type === 'array') return `list of ${s.items ? typeText(s.items) : 'values'}`;
  if (s.type === 'integer' || s.type === 'number') {
    const lo = s.minimum !== undefined && s.minimum > -1e15 ? s.minimum : undefined;
    const hi = s.maximum !== undefined && s.maximum < 1e15 ? s.maximum : undefined;
    return `${s.type}${lo !== undefined || hi !== undefined ? ` (${lo ?? ''}..${hi ?? ''})` : ''}`;
  }
  return Array.isArray(s.type) ? s.type.join(' \\| ') : (s.type ?? 'object');
}

function rows(prefix: string, s: JsonSchema, out: string[]): void {
  for (const [key, child] of Object.entries(s.properties ?? {})) {
    const path = prefix ? `${prefix}.${key}` : key;
    const def =
      child.default !== undefined && (typeof child.default !== 'object' || Array.isArray(child.default))
        ? `\`${JSON.stringify(child.default).replace(/\|/g, '\\|')}\``
        : '';
    const desc = (child.description ?? '').replace(/\|/g, '\\|');
    const alts = child.oneOf ?? child.anyOf;
    const isObj = child.properties !== undefined;
    out.push(`| \`${path}\` | ${isObj ? 'object' : typeText(child)} | ${def} | ${desc} |`);
    if (isObj) rows(path, child, out);
    if (child.type === 'array' && child.items?.properties) rows(`${path}[]`, child.items, out);
    if (alts) {
      for (const alt of alts) {
        const tag = Object.entries(alt.properties ?? {}).find(([, p]) => p.const !== undefined);
        if (alt.properties && tag) rows(`${path}(${tag[0]}=${String(tag[1].const)})`, alt, out);
      }
    }
  }
}

export function configReferenceMarkdown(): string {
  const schema = configJsonSchema() as JsonSchema;
  const out = [
    '# Configuration reference',
    '',
    'Generated from `src/config/schema.ts` by `node scripts/gen-config-doc.mjs` (a test fails when this file is out of',
    'date). The file is `wmsbridge.config.yaml` (or `.yml`, `.json`) in the working folder, or `--config FILE`, or',
    '`$WMSBRIDGE_CONFIG`. Precedence: defaults < file < environment (`WMS_URL`, `WMS_ACCESS_KEY_ID`, `WMSBRIDGE_STATE_DIR`,',
    '`WMSBRIDGE_LOG_LEVEL`) < command-line flags. Relative paths are relative to the config file. Secrets are never',
    'in the file: `wms.secretKeyEnv` and `webhooks.secretEnv` name environment variables. Editors validate the file',
    'with `schemas/config.schema.json` (`# yaml-language-server: $schema=schemas/config.schema.json`).',
    '',
    '| key | type | default | meaning |',
    '|---|---|---|---|',
  ];
  rows('', schema, out);
  return `${out.join('\n')}\n`;
}
