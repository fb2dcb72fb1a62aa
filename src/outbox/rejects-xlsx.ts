/**
 * The rejects file of a spreadsheet is a spreadsheet: the rejected rows of the sheet, their cells typed as they
 * were read (an EAN number stays a number, a text cell text, a date a date), under the original header plus the
 * `wmsbridge_error` column, in a sheet of the original name at the original position (the sheets before it are
 * written empty), so the analyst fixes it in Excel and drops it again into the same channel. Its header is on
 * row 1 whatever the source's `headerRow`: the reader takes row 1 as the header of a sheet whose row 1 ends with
 * `wmsbridge_error` (src/parse/xlsx.ts). Rows are held until `close()` (rejects are few); the workbook is written
 * atomically (outbox/xlsx.ts).
 */
import type { TypedCell } from '../parse/xlsx.js';
import { REJECT_REASON_COLUMN } from '../parse/types.js';
import { writeXlsx, type XlsxSheet } from './xlsx.js';
import { modeOption } from './atomic.js';

export interface XlsxRejectsOptions {
  /** the header cells as read (ParseFacts.header) */
  headerCells?: string[] | undefined;
  /** the sheet read and every sheet of the workbook (ParseFacts.sheet, .sheets) */
  sheetName?: string | undefined;
  sheetNames?: string[] | undefined;
  /** mode of the workbook (outbox.fileMode). @default DEFAULT_OUTBOX_FILE_MODE */
  fileMode?: number | undefined;
}

/** What the writer is given of a rejected row (rejects.ts RejectItem; structural, rejects.ts imports this file). */
interface XlsxRejectItem {
  text?: string | undefined;
  cells?: string[] | undefined;
  reasons: string;
}

interface XlsxRejectsWriter {
  write(item: XlsxRejectItem): void;
  close(): Promise<{ count: number; path?: string }>;
  abort(): void;
}

function typedValue(c: TypedCell | undefined): unknown {
  if (c === null || c === undefined) return null;
  if (typeof c === 'object') return new Date(c.d);
  return c;
}

/** The row's typed cells (RawRow.text of an xlsx row), else its cells as text. */
function rowValues(item: XlsxRejectItem): unknown[] {
  if (item.text !== undefined) {
    try {
      const parsed: unknown = JSON.parse(item.text);
      if (Array.isArray(parsed)) return (parsed as TypedCell[]).map(typedValue);
    } catch {
      // not the typed form: the cells below
    }
  }
  return item.cells ?? [];
}

export function createXlsxRejectsWriter(path: string, o: XlsxRejectsOptions): XlsxRejectsWriter {
  const rows: Array<{ values: unknown[]; reasons: string }> = [];
  let closed = false;
  return {
    write(item) {
      if (closed) throw new Error(`rejects writer for ${path} is closed`);
      rows.push({ values: rowValues(item), reasons: item.reasons.replace(/\r\n|\r|\n/g, ' ') });
    },
    async close() {
      if (closed) throw new Error(`rejects writer for ${path} is closed`);
      closed = true;
      if (rows.length === 0) return { count: 0 };
      const header = (o.headerCells ?? []).filter((h) => h !== REJECT_REASON_COLUMN);
      const width = Math.max(header.length, ...rows.map((r) => r.values.length));
      const names = Array.from({ length: width }, (_, i) => header[i] ?? '');
      const columns = [...names, REJECT_REASON_COLUMN].map((h, i) => ({ key: String(i), header: h, type: 'auto' as const }));
      const sheetName = o.sheetName ?? 'rejeitados';
      const before = (o.sheetNames ?? []).slice(0, Math.max(0, (o.sheetNames ?? []).indexOf(sheetName)));
      const sheets: XlsxSheet[] = [
        ...before.map((name) => ({ name, columns: [], rows: [] })),
        {
          name: sheetName,
          columns,
          rows: rows.map((r) => {
            const rec: Record<string, unknown> = {};
            for (let i = 0; i < width; i++) rec[String(i)] = r.values[i] ?? null;
            rec[String(width)] = r.reasons;
            return rec;
          }),
        },
      ];
      // dates were read as wall-clock times in UTC: written back as they were
      await writeXlsx(path, sheets, { timeZone: 'UTC', ...modeOption(o.fileMode) });
      return { count: rows.length, path };
    },
    abort() {
      closed = true;
    },
  };
}
