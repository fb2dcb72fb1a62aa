#!/usr/bin/env node
// Writes docs/CONFIG.md and schemas/config.schema.json from the zod configuration model (after a build).
import { writeFileSync, mkdirSync } from 'node:fs';
const { configReferenceMarkdown, configJsonSchema } = await import('../dist/src/config/reference.js');
mkdirSync('schemas', { recursive: true });
writeFileSync('docs/CONFIG.md', configReferenceMarkdown());
writeFileSync('schemas/config.schema.json', `${JSON.stringify(configJsonSchema(), null, 2)}\n`);
console.log('written: docs/CONFIG.md, schemas/config.schema.json');
