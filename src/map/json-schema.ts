/** The JSON Schema of mapping files, generated from the zod model (for editors and `wmsbridge schema`). */
import { z } from 'zod';
import { MappingSchema } from './model.js';

export const MAPPING_SCHEMA_ID = 'https://wmsbridge.dev/schemas/mapping.schema.json';

/** JSON Schema (draft 2020-12) of what a mapping file may contain (defaults optional). */
export function generateMappingJsonSchema(): object {
  const schema = z.toJSONSchema(MappingSchema, { io: 'input', unrepresentable: 'any', target: 'draft-2020-12' }) as Record<string, unknown>;
  return { $id: MAPPING_SCHEMA_ID, title: 'wmsbridge mapping', ...schema };
}
