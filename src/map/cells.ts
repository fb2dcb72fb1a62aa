/**
 * Spreadsheet cells in messages: a value the mapping refuses in an xlsx row is named by its cell ("sheet
 * Produtos, cell D7"), as the analyst finds it in Excel. The expression that read a column marks the RowFail
 * with that column (withColumn); Issues.add turns it into the cell with the row's sheet (RawRow.sheet).
 */
import type { ExprSpec } from './model.js';
import type { Eval } from './evaluation.js';
import { RowFail } from './transforms.js';
import type { RawRow } from '../parse/types.js';

/** The column an expression reads directly (`name`, `{col: name}`, or a ref/lookup/table `from` one), if any. */
export function columnOf(spec: ExprSpec): string | number | undefined {
  if (typeof spec === 'string') return spec;
  const s = spec as Record<string, unknown>;
  if (typeof s['col'] === 'string' || typeof s['col'] === 'number') return s['col'];
  if (s['from'] !== undefined && ('ref' in s || 'lookup' in s || 'table' in s)) return columnOf(s['from'] as ExprSpec);
  return undefined;
}

/** The expression, its RowFails marked with the column it read (unless an inner expression marked them first). */
export function withColumn(e: Eval, column: string | number): Eval {
  return (row, st) => {
    try {
      return e(row, st);
    } catch (err) {
      if (err instanceof RowFail && err.column === undefined) err.column = column;
      throw err;
    }
  };
}

/** The cell of a RowFail of a spreadsheet row ({ sheet: "Produtos", cell: "D7" }), else undefined. */
export function cellOf(row: RawRow | undefined, err: RowFail): { sheet: string; cell: string } | undefined {
  const sheet = row?.sheet;
  if (sheet === undefined || err.column === undefined) return undefined;
  const letter = typeof err.column === 'number' ? columnLetterOf(err.column + 1) : sheet.letters[err.column];
  return letter === undefined ? undefined : { sheet: sheet.name, cell: `${letter}${row!.line}` };
}

function columnLetterOf(n: number): string {
  let s = '';
  for (let x = n; x > 0; x = Math.floor((x - 1) / 26)) s = String.fromCharCode(65 + ((x - 1) % 26)) + s;
  return s;
}
