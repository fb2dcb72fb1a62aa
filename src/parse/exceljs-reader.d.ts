/**
 * The streaming workbook reader of exceljs, required by its own path (as outbox/exceljs-writer.d.ts does for the
 * writer): exceljs's main entry loads ~1,800 modules in ~1 s. exceljs has no "exports" map, so the path is public in
 * practice; the version is pinned by the lockfile.
 */
declare module 'exceljs/lib/stream/xlsx/workbook-reader.js' {
  import type { stream } from 'exceljs';
  const WorkbookReader: typeof stream.xlsx.WorkbookReader;
  export default WorkbookReader;
}
