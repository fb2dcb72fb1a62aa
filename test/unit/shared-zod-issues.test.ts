import { test } from 'node:test';
import assert from 'node:assert/strict';
import { z } from 'zod';
import { formatZodIssues } from '../../src/shared/zod-issues.js';

const schema = z.object({ channels: z.array(z.object({ mode: z.enum(['stable', 'marker']) })), a: z.string(), b: z.number(), c: z.boolean() });
const bad = schema.safeParse({ channels: [{ mode: 'stable' }, { mode: 'x' }], a: 1, b: 'x', c: 'y' });

test('the WMS client form: the first three issues inline, dotted indexes, then how many more', () => {
  assert.equal(bad.success, false);
  const text = formatZodIssues(bad.error!);
  const parts = text.split('; ');
  assert.equal(parts.length, 4);
  assert.match(parts[0]!, /^channels\.1\.mode: /);
  assert.match(parts[1]!, /^a: /);
  assert.equal(parts[3], '(+1 more)');
});

test('the configuration form: every issue on its own line, naming the file, bracketed indexes', () => {
  const text = formatZodIssues(bad.error!, { file: 'wmsbridge.config.yaml', max: Infinity, layout: 'lines', index: 'brackets' });
  const lines = text.split('\n');
  assert.equal(lines.length, 4);
  assert.match(lines[0]!, /^wmsbridge\.config\.yaml: channels\[1\]\.mode: /);
  assert.match(lines[3]!, /^wmsbridge\.config\.yaml: c: /);
});

test('an issue at the root says so', () => {
  const r = z.string().safeParse(1);
  assert.match(formatZodIssues(r.error!), /^\(root\): /);
});
