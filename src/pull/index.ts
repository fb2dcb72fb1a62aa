/**
 * Pulling from the WMS into outbox exports. See docs/PULL.md.
 */
export { PULL_KINDS, PULL_FORMATS, isPullKind } from './types.js';
export type { PullKind, PullFormat, PullRequest, PullDeps, PullResult, RefCacheRefresher } from './types.js';
export { runPull, validatePullRequest, exportFileName, freeFileName, inventoryExportedKey, PULL_REF_RESOURCE } from './run.js';
export { runDuePulls, resolveSchedules, pullLastKey, pullFailedKey } from './due.js';
export type { ScheduledPull, RunDuePullsDeps, DuePullResult } from './due.js';
export { parseSchedule, nextRun, isDue, SCHEDULE_GRAMMAR } from '../shared/schedule.js';
export type { Schedule, ScheduleOptions } from '../shared/schedule.js';
export { COLUMN_SETS, inventoryRows, subWarehouseRow, pickRow } from './columns.js';
export type { ColumnSet, Row } from './columns.js';
export { scheduledPullFromConfig, type PullConfigEntry } from './config.js';
