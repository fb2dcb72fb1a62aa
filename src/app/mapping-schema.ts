/** The JSON Schema of mapping files, generated from the zod model (`wmsbridge schema`, schemas/mapping.schema.json). */
import { generateMappingJsonSchema } from '../map/json-schema.js';

export function mappingJsonSchema(): ReturnType<typeof generateMappingJsonSchema> {
  return generateMappingJsonSchema();
}
