/**
 * The streaming workbook writer of exceljs, required by its own path: exceljs's main entry loads ~1,800
 * modules (its reader, CSV, polyfills) in ~1 s at every run's report; the writer alone loads in ~0.3 s.
 * exceljs has no "exports" map, so the path is public in practice; the version is pinned by the lockfile.
 */
declare module 'exceljs/lib/stream/xlsx/workbook-writer.js' {
  import type { stream } from 'exceljs';
  const WorkbookWriter: typeof stream.xlsx.WorkbookWriter;
  export default WorkbookWriter;
}
