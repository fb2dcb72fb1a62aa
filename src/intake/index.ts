/** Intake: which inbox files are complete, claiming them, archive and error moves. */
export * from './types.js';
export * from './readiness.js';
export * from './claim.js';
export * from './watcher.js';
export * from './safety.js';
