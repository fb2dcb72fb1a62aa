/**
 * The declarative mapping language: load mapping files (YAML/JSON), compile them once, map parsed
 * rows to WMS records, documents and rejects. See docs/MAPPINGS.md.
 */
export { loadMappingFile, loadMappingsDir, parseMapping, parseMappingText, type MappingIssue } from './load.js';
export { compileMapping, defaultOp, sourceColumnsOf, globToRegExp, keyText, LookupPlaceholder, PLACEHOLDER_UUID, type CompiledMapping } from './compile.js';
export { generateMappingJsonSchema, MAPPING_SCHEMA_ID } from './json-schema.js';
export { MappingSchema, READ_ONLY_RESOURCES, SENDABLE_RESOURCES, LOOKUP_BY, type MappingSpec, type MappingInput } from './model.js';
export { createStaticReferenceCache, type StaticReferenceData } from './static-refs.js';
export { mappingTodos } from './todos.js';
export { channelSharing, composeMappings, declaredShared, sharingProblem } from './multi.js';
export { linesText, UnsentTally, type UnsentGroup, type UnsentRows } from './unsent.js';
export { previewFile, type PreviewOptions, type PreviewResult } from './preview.js';
export { uuid5, isValidCnpj, isValidGtin, cnpjCheckDigits, gtinCheckDigit, WMSBRIDGE_UUID_NAMESPACE } from './checks.js';
export * from './types.js';
