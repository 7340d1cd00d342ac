/**
 * Plain output, the default when stdout is not a terminal: one record per
 * line, tab-separated, no header, times in ISO-8601, for `cut`, `awk` and
 * `while read`. Every cell is sanitised, so a tab or newline inside data
 * becomes a visible `\t` / `\n` and can never forge a column or a row.
 */
import { sanitize } from './sanitize.js';
import { cellText, type Column } from './columns.js';

export function renderPlainRow<T>(columns: readonly Column<T>[], row: T): string {
  return columns.map((c) => sanitize(cellText(c.get(row), 'plain'))).join('\t') + '\n';
}

export function renderPlain<T>(columns: readonly Column<T>[], rows: readonly T[]): string {
  let out = '';
  for (const row of rows) out += renderPlainRow(columns, row);
  return out;
}
