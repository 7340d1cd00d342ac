/**
 * Table output for terminals (`-o table`, `-o wide`): kubectl-style columns
 * without borders, sized to the terminal. When the natural widths do not fit,
 * the flexible (free-text) columns are shortened with `…` first, then the
 * widest ones, so ids and states stay readable on a narrow terminal.
 *
 * Loaded only when a table is printed: cli-table3 is not on the start path
 * of scripts, which get plain output.
 */
import Table from 'cli-table3';
import { sanitize } from './sanitize.js';
import { displayWidth } from './width.js';
import { cellStyle, cellText, visibleColumns, type Column } from './columns.js';
import type { Palette } from './colour.js';

export { displayWidth };

const GAP = 2;
/** Room for an age on every page of a stream (`23h59m ago`, `in 10d23h`). */
const AGE_WIDTH = 10;
const MIN_COL = 6;

export interface TableOptions {
  /** Terminal width in columns; undefined means unlimited. */
  width?: number;
  wide?: boolean;
  palette: Palette;
  /** Fixed widths (from an earlier page of the same stream) so pages line up. */
  colWidths?: number[];
  /** Print the header row (false for the second and later pages of a stream). */
  header?: boolean;
  /** Headers of the columns left out (from an earlier page of the same stream, with `colWidths`). */
  dropped?: readonly string[];
  /** Show `ageWhenNarrow` columns as ages (from an earlier page of the same stream, with `colWidths`). */
  ages?: boolean;
  /** Epoch ms the ages count from (default: now). */
  now?: number;
}

export type Shrink = 'first' | 'normal' | 'last' | 'never';

/**
 * Column widths that fit `width`: shrink the free-text columns first, then the
 * widest others, then those marked `last` (error codes), never below MIN_COL,
 * and never the ones marked `never` (job ids must stay whole to be copied).
 */
export function fitWidths(natural: number[], shrink: Array<Shrink | boolean>, width: number | undefined, floors?: readonly number[]): number[] {
  const widths = [...natural];
  if (width === undefined) return widths;
  const floor = (i: number) => Math.max(MIN_COL, floors?.[i] ?? 0);
  const mode = (i: number): Shrink => (shrink[i] === true ? 'first' : shrink[i] === false ? 'normal' : (shrink[i] as Shrink) ?? 'normal');
  const total = () => widths.reduce((a, b) => a + b, 0) + GAP * (widths.length - 1);
  while (total() > width) {
    let pick = -1;
    for (const allowed of [['first'], ['first', 'normal'], ['first', 'normal', 'last']]) {
      for (let i = 0; i < widths.length; i++) {
        if (widths[i]! <= floor(i) || !allowed.includes(mode(i))) continue;
        if (pick === -1 || widths[i]! > widths[pick]!) pick = i;
      }
      if (pick !== -1) break;
    }
    if (pick === -1) break; // cannot shrink further: let the terminal wrap
    widths[pick] = Math.max(floor(pick), widths[pick]! - Math.max(1, total() - width));
  }
  return widths;
}

export interface RenderedTable {
  text: string;
  colWidths: number[];
  /** Headers of the columns left out to fit the terminal (pass back with `colWidths` for the next page). */
  dropped: string[];
  /** Whether times were shown as ages to fit the terminal (pass back with `colWidths` for the next page). */
  ages: boolean;
}

/** The narrowest a column can be with its header whole (a kept-whole column: all of it). */
function headerFloor<T>(c: Column<T>, natural: number): number {
  return c.keepWhole ? natural : Math.min(natural, Math.max(MIN_COL, displayWidth(c.header)));
}

const span = (widths: readonly number[]) => widths.reduce((a, b) => a + b, 0) + GAP * Math.max(0, widths.length - 1);

export function renderTable<T>(allColumns: readonly Column<T>[], rows: readonly T[], opts: TableOptions): RenderedTable {
  let columns = visibleColumns(allColumns, opts.wide ?? false);
  const now = opts.now ?? Date.now();
  let ages = opts.ages ?? false;
  const minOf = (c: Column<T>) => Math.max(c.minWidth ?? 0, ages && c.ageWhenNarrow ? AGE_WIDTH : 0);
  const naturalOf = (c: Column<T>, cells: string[]) => Math.max(displayWidth(c.header), minOf(c), ...cells.map(displayWidth));
  const cellOf = (c: Column<T>, row: T) => sanitize(cellText(c.get(row), 'table', ages && c.ageWhenNarrow && !opts.wide ? now : undefined));
  const textOf = (c: Column<T>) => rows.map((row) => cellOf(c, row));
  let dropped: string[] = [];
  if (opts.dropped !== undefined) {
    dropped = [...opts.dropped];
    columns = columns.filter((c) => !dropped.includes(c.header));
  } else if (opts.width !== undefined && !opts.wide) {
    // Too narrow for every column whole: times that read as well as ages go first (`5m ago`, not
    // `2026-03-01 00:00:00Z`), then columns are left out.
    if (columns.some((c) => c.ageWhenNarrow) && span(columns.map((c) => naturalOf(c, textOf(c)))) > opts.width) ages = true;
    const floorOf = (c: Column<T>) => (c.shrinkLast ? naturalOf(c, textOf(c)) : headerFloor(c, naturalOf(c, textOf(c))));
    // Narrow terminal: leave out the least useful columns until the rest fit with whole headers and
    // whole ids, rather than cut every header to "WORKF…" (`-o wide` shows them all, shortened).
    // (a column that shrinks last counts whole here: the droppable columns go before an error code is cut)
    const floors = new Map(columns.map((c) => [c, floorOf(c)]));
    for (;;) {
      if (span(columns.map((c) => floors.get(c)!)) <= opts.width) break;
      const candidates = columns.filter((c) => c.dropWhenNarrow !== undefined);
      if (candidates.length === 0) break;
      const drop = candidates.reduce((a, b) => (b.dropWhenNarrow! > a.dropWhenNarrow! ? b : a));
      dropped.push(drop.header);
      columns = columns.filter((c) => c !== drop);
    }
  }
  const head = columns.map((c) => c.header.toUpperCase());
  const cells = rows.map((row) => columns.map((c) => cellOf(c, row)));
  const natural = columns.map((c, i) => naturalOf(c, cells.map((r) => r[i]!)));
  // Headers stay whole when the terminal has room for all of them; otherwise the old floor (MIN_COL).
  const floors = columns.map((c, i) => headerFloor(c, natural[i]!));
  const fitHeaders = opts.width !== undefined && span(floors) <= opts.width;
  const colWidths =
    opts.colWidths ?? fitWidths(natural, columns.map((c) => (c.keepWhole ? 'never' : c.flexible ? 'first' : c.shrinkLast ? 'last' : 'normal')), opts.width, fitHeaders ? floors : undefined);
  const table = new Table({
    head: opts.header === false ? [] : head.map((h) => opts.palette.bold(h)),
    // cli-table3 counts padding inside colWidths and truncates content to the rest, so the gap
    // between columns is padding (a truncated cell would otherwise run into its neighbour).
    colWidths: colWidths.map((w) => w + GAP),
    wordWrap: false,
    truncate: '…',
    chars: {
      top: '', 'top-mid': '', 'top-left': '', 'top-right': '',
      bottom: '', 'bottom-mid': '', 'bottom-left': '', 'bottom-right': '',
      left: '', 'left-mid': '', mid: '', 'mid-mid': '',
      right: '', 'right-mid': '', middle: '',
    },
    style: { head: [], border: [], 'padding-left': 0, 'padding-right': GAP, compact: true },
  });
  rows.forEach((row, r) => {
    table.push(
      cells[r]!.map((text, i) => {
        const style = cellStyle(columns[i]!.get(row));
        return style === 'state' ? opts.palette.state(text) : text;
      }),
    );
  });
  // cli-table3 pads the last column; trailing spaces only make copy-paste worse.
  const text = table.length === 0 && opts.header === false ? '' : table.toString().split('\n').map((l) => l.trimEnd()).join('\n') + '\n';
  return { text, colWidths, dropped, ages };
}
