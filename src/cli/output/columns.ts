/**
 * Columns describe a record once for every text output mode (table, wide,
 * plain). A cell is a value, not a formatted string: times stay times so the
 * table can show them compactly and plain output can show ISO-8601.
 */
import { formatDuration } from '../../core/duration.js';

export type Cell = string | number | boolean | null | undefined | { time: string | number | null } | { text: string; style?: string };

export interface Column<T> {
  header: string;
  get: (row: T) => Cell;
  /** Shown only with `-o wide`. */
  wide?: boolean;
  /** Untrusted free text that may be shortened first to fit the terminal (messages, names). */
  flexible?: boolean;
  /** Never shortened (job and run ids: a cut id cannot be copied into the next command). */
  keepWhole?: boolean;
  /**
   * Shortened only when nothing else can be (error codes: `PROVIDER_429` and `PROVIDER_5XX` cut
   * to `PROVIDER…` read the same), but not kept whole at any cost like an id.
   */
  shrinkLast?: boolean;
  /**
   * `-o table` only: left out when the terminal is too narrow to show every column with its header
   * whole next to the whole ids — the highest number first. `-o wide` and plain output keep it
   * (plain columns are a contract for scripts).
   */
  dropWhenNarrow?: number;
  /**
   * `-o table` only, for a time column: shown as an age (`5m ago`, `in 2h`) rather than a whole
   * timestamp when the terminal is too narrow for every column (before any is left out): how long
   * an entry has been dead reads at a glance, and the error code next to it keeps its room. Not for
   * a log (`tail`), whose times are the point.
   */
  ageWhenNarrow?: boolean;
  /**
   * At least this wide when the terminal has room: a streamed table (`tail`, `--all`) takes its
   * widths from its first rows, and a later `cancel_requested` or `succeeded` must not be cut to
   * fit a first row's `-`.
   */
  minWidth?: number;
}

export type TextMode = 'table' | 'plain';

/** Cells of a time in a table: `2026-03-01 00:00:00Z`. */
export const TABLE_TIME_WIDTH = '2026-03-01 00:00:00Z'.length;

/**
 * A cell as text (not yet sanitised). `ageFrom` (epoch ms, table only): a time is shown as its age
 * from then, `5m ago`, or `in 2h` for a time still ahead.
 */
export function cellText(cell: Cell, mode: TextMode, ageFrom?: number): string {
  if (cell === null || cell === undefined) return mode === 'table' ? '-' : '';
  if (typeof cell === 'string') return cell;
  if (typeof cell === 'number' || typeof cell === 'boolean') return String(cell);
  if ('time' in cell) {
    if (cell.time === null) return mode === 'table' ? '-' : '';
    const iso = typeof cell.time === 'number' ? new Date(cell.time).toISOString() : cell.time;
    if (ageFrom !== undefined && mode === 'table') {
      const ms = ageFrom - Date.parse(iso);
      if (Number.isFinite(ms)) return ms >= 0 ? `${ageText(ms)} ago` : `in ${ageText(-ms)}`;
    }
    // The table drops milliseconds and the T/Z clutter; plain keeps the exact ISO-8601 value.
    return mode === 'table' ? iso.replace('T', ' ').replace(/\.\d+Z$/, 'Z') : iso;
  }
  return cell.text;
}

/** kubectl-style: whole seconds at least (`0s`, `45s`, `5m`, `1h30m`, `3d`). */
function ageText(ms: number): string {
  return ms < 1000 ? '0s' : formatDuration(ms);
}

export function cellStyle(cell: Cell): string | undefined {
  return cell !== null && typeof cell === 'object' && 'text' in cell ? cell.style : undefined;
}

export function visibleColumns<T>(columns: readonly Column<T>[], wide: boolean): Column<T>[] {
  return columns.filter((c) => wide || !c.wide);
}
